//! `gsd-lane doctor [slug…] [--json]`: is each lane ready to review here, and if not, the
//! exact command that fixes it.
//!
//! Per lane: its program on PATH (where, and the first line of a bounded `--version`), the
//! probe verdict (an HTTP lane's probe contacts only its verified — approved or pinned —
//! destination, bounded like every probe), the trust state, the readiness checks knowable
//! without the network ([`readiness`]), and one fix per problem. Nothing is reviewed and no
//! prompt is sent. Exit 0 when every selected lane is ready, 1 otherwise, 2 for an unknown slug.

use std::path::Path;

use clap::Args;
use serde::Serialize;

use super::Context;
use crate::error::Failure;
use crate::manifest::diagnostic::Code;
use crate::output::{self, neutralize};
use crate::plan::{Instance, PlanInputs};
use crate::refusal::{Reason, Refusal};
use crate::registry::{Entry, Lane, Registry, Scope};
use crate::run::lane::{self, RunSetup};
use crate::run::path_lookup;
use crate::sandbox::policy::Effective;
use crate::sandbox::SandboxMode;

/// Arguments of `doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Lane slugs to check (default: every discovered lane, active or not).
    #[arg(value_name = "SLUG")]
    pub slugs: Vec<String>,
    /// Machine-readable output: one object per lane.
    #[arg(long)]
    pub json: bool,
    /// At most this many lanes probed at a time (default: as `review`, from the cores and the
    /// open-file limit; 1 is sequential).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
}

/// One problem and the command (or edit) that fixes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What is wrong.
    pub problem: String,
    /// What fixes it.
    pub fix: String,
}

/// Readiness checks that need no network, beyond the probe's own `requiresBinaries` and
/// binary lookups: the place lane-specific checks (gemini's folder trust, …) report into.
/// Each returns the problems it found for `lane` in `project_root`; none yet.
pub fn readiness(lane: &Lane, project_root: &Path) -> Vec<Problem> {
    let _ = (lane, project_root);
    Vec::new()
}

/// The fix for a refusal of an active lane.
fn fix_for(lane: &Lane, refusal: &Refusal) -> String {
    let path = neutralize(&lane.path.display().to_string());
    let binary = lane
        .spawn()
        .map_or(lane.slug.as_str(), |spawn| spawn.binary.as_str())
        .to_owned();
    match refusal.reason {
        Reason::MissingBinary | Reason::MissingRequiredBinary => {
            let missing = refusal
                .detail
                .split(' ')
                .next()
                .filter(|word| !word.is_empty())
                .unwrap_or(&binary);
            format!(
                "install {} so that `command -v {}` finds it on this PATH",
                neutralize(missing),
                neutralize(missing)
            )
        }
        Reason::HostUnreachable => {
            let key = lane
                .http()
                .map_or("the lane's host key", |http| http.host_config_key.as_str());
            format!(
                "start the server, or point {} in .planning/config.json at one that is running",
                neutralize(key)
            )
        }
        Reason::EgressHostChanged => {
            format!("gsd-lane trust rebind-host {}", neutralize(&lane.capability_id))
        }
        Reason::ProbeFailed | Reason::ProbeTimeout => format!(
            "update {} (its probe must pass); `gsd-lane plan --selected {}` shows what is probed",
            neutralize(&binary),
            neutralize(&lane.slug)
        ),
        Reason::UnknownHandler => format!(
            "use a built-in handler ({}) in {path}, or a gsd-lane that has this one",
            crate::manifest::vocab::handler_names().join(", ")
        ),
        Reason::UntrustedWorkspace => format!(
            "run `{}` once in this folder and trust it when it asks, or, for a repository you trust, set GEMINI_CLI_TRUST_WORKSPACE=true for the review",
            neutralize(&binary)
        ),
        Reason::ConsentStoreUnreadable | Reason::EgressStoreUnreadable => {
            "gsd-lane trust repair".to_owned()
        }
        Reason::RepositoryWritesNotAllowed => format!(
            "only if this lane may change the repository: add \"{}\" to review.allow_repository_writes in .planning/config.json",
            neutralize(&lane.slug)
        ),
        _ => format!("gsd-lane validate {path}"),
    }
}

/// The trust state of an active lane, in words.
fn trust_state(lane: &Lane) -> &'static str {
    match lane.scope {
        Scope::FirstParty => "built-in (compiled into gsd-lane)",
        Scope::Global => "global overlay (active in every project; no per-project consent)",
        Scope::Project => "project overlay, approved for this project",
    }
}

/// The scratch run dir the probes of spawn lanes run in, made only when a spawn lane's
/// program is there to probe: with none, doctor creates nothing, even in the temp directory.
///
/// # Errors
///
/// The scratch directory cannot be created.
fn scratch_for(
    targets: &[Target<'_>],
    path_var: Option<&std::ffi::OsStr>,
) -> Result<Option<tempfile::TempDir>, Failure> {
    let probes_a_program = targets.iter().any(|target| match target {
        Target::Active(lane) => lane
            .spawn()
            .is_some_and(|spawn| path_lookup::find_executable(&spawn.binary, path_var).is_some()),
        Target::Inactive(_) => false,
    });
    if !probes_a_program {
        return Ok(None);
    }
    tempfile::Builder::new()
        .prefix("gsd-lane-doctor-")
        .tempdir()
        .map(Some)
        .map_err(|err| Failure::new(format!("creating a scratch run dir: {err}")))
}

/// Checks one active lane.
fn check_lane(context: &Context, lane: &Lane, setup: &RunSetup<'_>, sandbox: &Sandbox) -> Row {
    let mut problems = Vec::new();
    let mut program = None;
    let mut destination = None;
    let probe = match lane::admit(lane, setup) {
        Err(refusal) => Err(refusal),
        Ok(admitted) => {
            if let Some(spawn) = admitted.plan.spawn() {
                let found = path_lookup::find_executable(&spawn.binary, setup.path_var.as_deref());
                // A query that failed (past its bound under load, say) is said, not dropped.
                let version = found
                    .as_ref()
                    .map_or(Ok(None), |_| lane::version_of(lane, &admitted, setup));
                let (version, version_error) = match version {
                    Ok(version) => (version, None),
                    Err(err) => (None, Some(err.code().to_owned())),
                };
                program = Some(Program {
                    binary: spawn.binary.clone(),
                    path: found.map(|p| p.display().to_string()),
                    version,
                    version_error,
                });
            }
            if let Some(http) = admitted.plan.http() {
                destination = Some(http.host.clone());
            }
            lane::probe_lane(lane, &admitted, setup)
        }
    };
    let probe = match probe {
        Ok(verdict) => ProbeRow::passed(verdict),
        Err(refusal) => {
            problems.push(Problem {
                problem: format!("{}: {}", refusal.reason, refusal.detail),
                fix: fix_for(lane, &refusal),
            });
            ProbeRow::refused(ProbeReason::Refused(refusal.reason), refusal.detail)
        }
    };
    problems.extend(readiness(lane, &context.project_root));
    Row {
        slug: lane.slug.clone(),
        id: lane.capability_id.clone(),
        scope: lane.scope,
        source: lane.path.display().to_string(),
        ready: problems.is_empty(),
        program,
        probe,
        trust: trust_state(lane),
        destination,
        settings: crate::plan::entry::setting_rows(lane, setup.config),
        sandbox: sandbox.for_lane(lane, setup.config),
        problems,
    }
}

/// Reports a discovered lane that is not active.
fn check_inactive(entry: &Entry) -> Row {
    let reason = entry.skip.as_ref().map_or("", |s| s.reason.as_str());
    let problems = vec![Problem {
        problem: format!("not active: {reason}"),
        fix: crate::registry::inactive::fix(entry),
    }];
    Row {
        slug: entry.slug.clone().unwrap_or_else(|| entry.id.clone()),
        id: entry.id.clone(),
        scope: entry.scope,
        source: entry.path.display().to_string(),
        ready: false,
        program: None,
        probe: ProbeRow::refused(ProbeReason::Inactive, reason.to_owned()),
        settings: Vec::new(),
        trust: if entry
            .skip
            .as_ref()
            .is_some_and(|s| s.code == Code::LdUnconsented)
        {
            "needs consent"
        } else {
            "not loaded"
        },
        destination: None,
        sandbox: None,
        problems,
    }
}

/// How this machine confines a spawn lane under the configured mode, and why that mechanism:
/// what `review` and `run` will apply (the same decision, [`crate::sandbox::policy`]).
#[derive(Debug, Clone)]
struct Sandbox {
    /// What applies to a lane that does not write the repository.
    effective: Effective,
    /// Why this mechanism and not a stronger one (`None` for the read-only view and for
    /// a mode chosen weaker).
    why: Option<String>,
}

impl Sandbox {
    /// Decided for `mode` (probes the view and Landlock once, as a review would).
    fn decide(mode: SandboxMode) -> Sandbox {
        match mode {
            SandboxMode::Off => Sandbox {
                effective: Effective::Off,
                why: Some("review.sandbox is off in .planning/config.json".to_owned()),
            },
            SandboxMode::Detect => Sandbox {
                effective: Effective::Detected("chosen".to_owned()),
                why: Some("review.sandbox is detect in .planning/config.json".to_owned()),
            },
            SandboxMode::Enforce => {
                let enforcement = crate::sandbox::policy::enforcement();
                let mut why: Vec<String> = enforcement
                    .view_refused
                    .iter()
                    .map(|refused| format!("the read-only view is refused: {refused}"))
                    .collect();
                if enforcement.view_refused.is_some() {
                    why.extend(namespace_settings());
                }
                if let Effective::Enforced(_) = enforcement.effective {
                    why.push(landlock_abi());
                }
                Sandbox {
                    effective: enforcement.effective,
                    why: (!why.is_empty()).then(|| why.join("; ")),
                }
            }
        }
    }

    /// The row's `sandbox` member for `lane` (`None`, `null`, for a lane that starts no
    /// process).
    fn for_lane(&self, lane: &Lane, config: &crate::config::ProjectConfig) -> Option<LaneSandbox> {
        if lane.transport() != gsd_lane_sdk::Transport::Spawn {
            return None;
        }
        if lane.posture == crate::sandbox::Posture::WritesRepository
            && lane::repository_writes_allowed(config, &lane.slug)
        {
            return Some(LaneSandbox {
                applies: Effective::WritesAllowed.report(),
                why: None,
            });
        }
        Some(LaneSandbox {
            applies: self.effective.report(),
            why: Some(self.why.clone()),
        })
    }

    /// The report's `sandbox` line.
    fn line(&self) -> String {
        format!(
            "{}, mechanism {}{}",
            self.effective.describe(),
            self.effective.mechanism(),
            self.why
                .as_ref()
                .map_or(String::new(), |why| format!(" ({why})"))
        )
    }
}

/// The kernel settings that refuse unprivileged user namespaces, as set here (those readable).
fn namespace_settings() -> Vec<String> {
    [
        ("kernel/unprivileged_userns_clone", "0"),
        ("user/max_user_namespaces", "0"),
        ("kernel/apparmor_restrict_unprivileged_userns", "1"),
    ]
    .iter()
    .filter_map(|(name, refusing)| {
        let mut value = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(
                std::fs::File::open(Path::new("/proc/sys").join(name)).ok()?,
                64,
            ),
            &mut value,
        )
        .ok()?;
        let value = value.trim().to_owned();
        (value == *refusing).then(|| format!("{} = {value}", name.replace('/', ".")))
    })
    .collect()
}

/// What the Landlock fallback covers on this kernel.
fn landlock_abi() -> String {
    let support = crate::sandbox::landlock::support();
    let signals = if crate::sandbox::landlock::signals_scoped() {
        "signals scoped (ABI 6 or later)"
    } else {
        "signals not scoped (kernel before Landlock ABI 6)"
    };
    match support {
        crate::sandbox::landlock::Support::Full => format!("Landlock ABI 3 or later, {signals}"),
        other => format!("{}, {signals}", other.describe()),
    }
}

/// One lane's findings: a row of `doctor --json`, and what the report prints.
#[derive(Debug, Serialize)]
struct Row {
    /// The lane's slug (its id when an inactive entry has none).
    slug: String,
    /// The capability id.
    id: String,
    /// Where it was discovered.
    scope: Scope,
    /// Its manifest.
    source: String,
    /// No problem was found.
    ready: bool,
    /// A spawn lane's program (`null` for other lanes and when admission failed).
    program: Option<Program>,
    /// The probe's verdict.
    probe: ProbeRow,
    /// The trust state, in words.
    trust: &'static str,
    /// An HTTP lane's verified destination.
    destination: Option<String>,
    /// The lane's own config keys that have a value.
    settings: Vec<crate::plan::entry::Setting>,
    /// How its processes are confined (`null` for a lane that starts none).
    sandbox: Option<LaneSandbox>,
    /// Every problem found, each with its fix.
    problems: Vec<Problem>,
}

/// A spawn lane's program as found on PATH.
#[derive(Debug, Serialize)]
struct Program {
    /// The program the lane runs.
    binary: String,
    /// Where PATH finds it (`null`: not on PATH).
    path: Option<String>,
    /// The first line of its `--version`.
    version: Option<String>,
    /// The spawn error's code when `--version` failed.
    version_error: Option<String>,
}

/// The probe's verdict: `{"ok": true, "verdict"}` or `{"ok": false, "reason", "detail"}`.
#[derive(Debug, Serialize)]
struct ProbeRow {
    /// The probe passed.
    ok: bool,
    /// What it found, when it passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<String>,
    /// Why it did not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<ProbeReason>,
    /// What exactly, when it did not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

impl ProbeRow {
    /// A probe that passed with `verdict`.
    fn passed(verdict: String) -> ProbeRow {
        ProbeRow {
            ok: true,
            verdict: Some(verdict),
            reason: None,
            detail: None,
        }
    }

    /// A probe that did not pass (or was not run).
    fn refused(reason: ProbeReason, detail: String) -> ProbeRow {
        ProbeRow {
            ok: false,
            verdict: None,
            reason: Some(reason),
            detail: Some(detail),
        }
    }
}

/// Why a row's probe did not pass: an unavailability reason, or an inactive lane.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(untagged)]
enum ProbeReason {
    /// The lane was refused or its probe failed.
    Refused(Reason),
    /// The lane is not active (nothing was probed).
    #[serde(serialize_with = "inactive")]
    Inactive,
}

/// [`ProbeReason::Inactive`] as written: `"inactive"`.
fn inactive<S: serde::Serializer>(serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(ProbeReason::Inactive.as_str())
}

impl ProbeReason {
    /// The reason as written.
    fn as_str(self) -> &'static str {
        match self {
            ProbeReason::Refused(reason) => reason.as_str(),
            ProbeReason::Inactive => "inactive",
        }
    }
}

/// A spawn lane's `sandbox` member: what confines it, and why that mechanism.
#[derive(Debug, Serialize)]
struct LaneSandbox {
    /// The mode, mechanism and detail.
    #[serde(flatten)]
    applies: crate::sandbox::policy::SandboxReport,
    /// Why this mechanism and not a stronger one (`null`: nothing stronger was refused); absent
    /// for a lane allowed to write the repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<Option<String>>,
}

/// The entries `slugs` name (every discovered lane when empty).
fn selected<'r>(registry: &'r Registry, slugs: &[String]) -> Result<Vec<Target<'r>>, Failure> {
    if slugs.is_empty() {
        let mut all: Vec<Target<'r>> = registry.lanes.iter().map(Target::Active).collect();
        all.extend(
            registry
                .entries
                .iter()
                .filter(|e| e.skip.is_some() && e.slug.is_some())
                .map(Target::Inactive),
        );
        return Ok(all);
    }
    slugs
        .iter()
        .map(|slug| {
            if let Some(lane) = registry.lane(slug) {
                Ok(Target::Active(lane))
            } else if let Some(entry) = crate::registry::inactive::by_slug(registry, slug) {
                Ok(Target::Inactive(entry))
            } else if let Some(retired) = crate::registry::retired::by_slug(registry, slug) {
                Err(Failure::usage(retired.explain()))
            } else {
                let hint = crate::registry::inactive::suggest_slug(registry, slug)
                    .map_or(String::new(), |h| format!(" (did you mean {h:?}?)"));
                Err(Failure::usage(format!(
                    "no lane has slug {:?}{hint}; `gsd-lane list` shows every lane",
                    neutralize(slug)
                )))
            }
        })
        .collect()
}

/// A lane to check.
enum Target<'r> {
    Active(&'r Lane),
    Inactive(&'r Entry),
}

/// Runs `doctor`.
///
/// # Errors
///
/// An unknown slug (status 2).
pub fn run(context: &Context, args: &DoctorArgs) -> Result<u8, Failure> {
    let registry = context.registry();
    let targets = selected(&registry, &args.slugs)?;
    let config = context.lane_config(&registry);
    // Read-only: doctor compares destinations with their pins but never records one.
    let egress = context.egress_read_only();
    let scratch = scratch_for(&targets, context.env.path.as_deref())?;
    let setup = RunSetup {
        view_proof: crate::sandbox::confine::ViewProof::Probed,
        config: &config,
        inputs: PlanInputs {
            run_dir: scratch.as_ref().map_or_else(
                || std::env::temp_dir().display().to_string(),
                |dir| dir.path().display().to_string(),
            ),
            repo_root: context.repo_root(None),
            prompt_file: None,
            instance: Instance::default(),
            effort: None,
        },
        path_var: context.env.path.clone(),
        home: context.env.home.clone(),
        lock_dir: context.lock_dir(),
        egress: egress.as_ref(),
        handler_override: None,
        // Probes run as a review would run them: the configured mode (default enforce).
        sandbox: crate::sandbox::policy::run_mode(&config, None)
            .map_err(|err| Failure::new(err.to_string()))?,
    };
    let sandbox = Sandbox::decide(setup.sandbox);
    // Probed as `review` runs lanes: at most its bound at once, each probe bounded in time and
    // output; the rows keep the selection's order.
    let concurrency = crate::review::parallel::concurrency(args.jobs, &config);
    if let Some(warning) = &concurrency.warning {
        output::eprint_line(&format!("warning: {}", neutralize(warning)));
    }
    context.verbose(&concurrency.why.replace("lanes run", "lanes are probed"));
    let rows: Vec<Row> =
        crate::limits::map_bounded(&targets, concurrency.max_jobs, |target| match target {
            Target::Active(lane) => check_lane(context, lane, &setup, &sandbox),
            Target::Inactive(entry) => check_inactive(entry),
        });
    let ready = rows.iter().filter(|r| r.ready).count();
    if args.json {
        output::print_serialized(&rows);
    } else {
        let config_path = context.project_root.join(".planning").join("config.json");
        output::print(&format!(
            "project root {}\nconfig       {} ({})\nsandbox      {}\n\n{}",
            neutralize(&context.project_root.display().to_string()),
            neutralize(&config_path.display().to_string()),
            if config_path.is_file() {
                "present"
            } else {
                "absent"
            },
            crate::textsafe::for_terminal(&sandbox.line()),
            human(&rows, ready)
        ));
    }
    // A config `review` would refuse (decisions.md #13) makes nothing ready, whatever the lanes.
    if let Err(unusable) = context.config_checked() {
        output::eprint_line(&format!(
            "doctor: not ready: `gsd-lane review` refuses this project's config:\n{}",
            unusable.message
        ));
        return Ok(1);
    }
    Ok(if ready == rows.len() { 0 } else { 1 })
}

/// The report for a person: each row's lines, then the count of ready lanes.
fn human(rows: &[Row], ready: usize) -> String {
    let text = crate::textsafe::for_terminal;
    let mut out = String::new();
    for row in rows {
        out.push_str(&format!(
            "{}  {}\n",
            text(&row.slug),
            if row.ready { "ready" } else { "NOT READY" }
        ));
        out.push_str(&format!(
            "  source       {} ({})\n",
            text(&row.source),
            row.scope.as_str()
        ));
        if let Some(program) = &row.program {
            let binary = text(&program.binary);
            match &program.path {
                Some(path) => out.push_str(&format!(
                    "  program      {} at {}{}\n",
                    binary,
                    text(path),
                    match (&program.version, &program.version_error) {
                        (Some(v), _) => format!(" ({})", text(v)),
                        (None, Some(e)) => format!(" (--version failed: {})", text(e)),
                        (None, None) => String::new(),
                    }
                )),
                None => out.push_str(&format!("  program      {binary}: not on PATH\n")),
            }
        }
        if let Some(host) = &row.destination {
            out.push_str(&format!("  destination  {}\n", text(host)));
        }
        for setting in &row.settings {
            out.push_str(&format!(
                "  setting      {} = {} ({})\n",
                text(&setting.key),
                neutralize(&setting.value.to_string()),
                text(&setting.from)
            ));
        }
        let probe = &row.probe;
        if probe.ok {
            out.push_str(&format!(
                "  probe        ok: {}\n",
                text(probe.verdict.as_deref().unwrap_or(""))
            ));
        } else {
            out.push_str(&format!(
                "  probe        {}: {}\n",
                probe.reason.map_or("", ProbeReason::as_str),
                text(probe.detail.as_deref().unwrap_or(""))
            ));
        }
        out.push_str(&format!("  trust        {}\n", text(row.trust)));
        for problem in &row.problems {
            out.push_str(&format!("  fix          {}\n", text(&problem.fix)));
        }
    }
    out.push_str(&format!("{ready} of {} lanes ready\n", rows.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 20 item 10: whatever a row holds, the report has no raw control and no forged line.
    #[test]
    fn the_report_prints_no_raw_control() {
        let hostile = "x\u{1b}]0;pwned\u{7}\r\u{9b}2J\u{202e}\u{200b}\nforged";
        let rows = vec![Row {
            slug: hostile.to_owned(),
            id: hostile.to_owned(),
            scope: Scope::Project,
            source: hostile.to_owned(),
            ready: false,
            program: Some(Program {
                binary: hostile.to_owned(),
                path: Some(hostile.to_owned()),
                version: Some(hostile.to_owned()),
                version_error: None,
            }),
            probe: ProbeRow::refused(
                ProbeReason::Refused(Reason::ProbeFailed),
                hostile.to_owned(),
            ),
            trust: "not loaded",
            destination: Some(hostile.to_owned()),
            settings: Vec::new(),
            sandbox: None,
            problems: vec![Problem {
                problem: hostile.to_owned(),
                fix: hostile.to_owned(),
            }],
        }];
        let text = human(&rows, 0);
        assert!(
            !text
                .chars()
                .any(|c| crate::output::is_unsafe_for_terminal(c) && c != '\n'),
            "{text:?}"
        );
        assert_eq!(text.lines().count(), 8, "{text}");
    }
}
