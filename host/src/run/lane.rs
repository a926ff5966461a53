//! The run pipeline of one lane (invocation.md §6): plan, egress check, probe, execute,
//! empty-output policy. A refused lane never writes a review file and never starts its tool.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gsd_lane_sdk::{
    Effects, Handler, HandlerOutput, LanePlan, LaneRequest, OutputTarget, SpawnReport,
    SpawnRequest, StdoutSink, Transport,
};

use super::effects::HostEffects;
use super::gemini_trust;
use super::http::{HttpLimits, Origin};
use super::probe;
use super::review_file::{self, Content};
use super::spawn::{self, ChildEnv, Confinement, SpawnLimits};
use super::tool_identity;
use crate::config::ProjectConfig;
use crate::error::{Context as _, Failure};
use crate::plan::{self, PlanInputs};
use crate::refusal::{Reason, Refusal};
use crate::registry::{Lane, Scope};
use crate::sandbox::confine::ViewProof;
use crate::sandbox::policy::{Before, LaneSandbox};
use crate::sandbox::{Posture, SandboxMode};

/// Decides whether an HTTP lane may send to its resolved destination (trust.md §6).
pub trait EgressCheck: Send + Sync {
    /// `Ok` to proceed; a refusal (`egress_host_changed`) blocks the lane before any byte leaves.
    ///
    /// # Errors
    ///
    /// The blocking refusal.
    fn check(&self, plan: &LanePlan) -> Result<(), Refusal>;
}

/// What the caller supplies besides the lane.
pub struct RunSetup<'a> {
    /// Project configuration.
    pub config: &'a ProjectConfig,
    /// Plan inputs (run dir, repo root, prompt file, instance).
    pub inputs: PlanInputs,
    /// `PATH` for lookups and children.
    pub path_var: Option<std::ffi::OsString>,
    /// Home directory (antigravity files).
    pub home: Option<PathBuf>,
    /// Where handler locks live.
    pub lock_dir: PathBuf,
    /// The egress gate.
    pub egress: &'a dyn EgressCheck,
    /// A handler to use instead of the registered one (`run --handler-module`, debugging only).
    pub handler_override: Option<&'a dyn Handler>,
    /// How spawned processes are kept from changing the repository (`review.sandbox`,
    /// `--sandbox`).
    pub sandbox: SandboxMode,
    /// [`ViewProof::AtSpawn`]: a lane that runs as data and whose probe starts nothing may prove
    /// the read-only view at its own spawn instead of waiting for the once-per-process probe
    /// (`run` and `invoke`, whose one lane would otherwise pay both); [`ViewProof::Probed`]: the
    /// probe decides first (a review, whose lanes share one decision).
    pub view_proof: ViewProof,
}

/// A lane that ran (its review file is a review or a stub).
#[derive(Debug, Clone)]
pub struct Completion {
    /// The resolved plan.
    pub plan: LanePlan,
    /// True when the review file holds a diagnostic stub.
    pub stubbed: bool,
    /// True when that stub is the handler's own (antigravity's), which gets no `Diagnosis:`.
    pub own_stub: bool,
    /// True when the lane was stopped (its bound, its output cap) after printing part of a
    /// review: the review file keeps that text and ends with the incomplete-review notice.
    pub incomplete: bool,
    /// The model this run used, as far as it can be told (upstream #3649, §3).
    pub model: crate::lane_result::model_record::ModelRecord,
    /// The start of a file-output lane's stdout (its banner), for [`Completion::model`].
    pub stdout_head: Option<String>,
    /// The model the handler found in the tool's own records (antigravity's transcript).
    pub handler_model: Option<String>,
    /// What the probe found.
    pub probe: String,
    /// Which source produced the review.
    pub source: Option<String>,
    /// True when stamped as reviewed without repository access.
    pub blind: bool,
    /// Handler notes and warnings.
    pub notes: Vec<String>,
    /// Exit code of the lane's process, when it has one.
    pub exit_code: Option<i32>,
    /// Spawn error code (`ETIMEDOUT`, …), when any.
    pub spawn_error: Option<String>,
    /// Wall time of the execution step.
    pub elapsed: Duration,
    /// Why the review file is a stub, when gsd-lane recognised the cause (gemini's exit 55 for an
    /// untrusted folder → `untrusted_workspace`).
    pub stub_reason: Option<Reason>,
    /// The last exit status and HTTP answer the effects saw (rate-limit classification).
    pub observed: super::effects::Observed,
    /// How the lane's processes were confined (`None` until the lane ran).
    pub sandbox: Option<crate::sandbox::policy::Effective>,
    /// Changes to the repository seen while the lane ran (empty: none, or not checked).
    pub repository_changes: Vec<String>,
}

/// The outcome of one lane run.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The lane could not run; nothing was started and no review file was written.
    Unavailable(Refusal),
    /// The lane ran.
    Completed(Box<Completion>),
}

/// A lane that passed every check that needs no process or connection: trust policy, plan,
/// handler and egress. Probing and execution come next.
pub struct Admitted<'h> {
    /// The resolved plan.
    pub plan: LanePlan,
    /// The handler that will drive it (`None`: the generic spawn path).
    handler: Option<&'h dyn Handler>,
}

/// Checks a lane without starting anything: third-party policy (trust.md §7.5), plan
/// resolution, handler lookup and fit, egress re-verification (trust.md §6).
///
/// # Errors
///
/// The first [`Refusal`], in pipeline order.
pub fn admit<'s>(lane: &Lane, setup: &RunSetup<'s>) -> Result<Admitted<'s>, Refusal> {
    crate::trust::policy::check_lane(lane)?;
    check_posture(lane, setup)?;
    let mut plan = plan::resolve_lane(&lane.capability_id, lane, setup.config, &setup.inputs)?;
    tool_identity::follow_rename(&mut plan, setup.path_var.as_deref());
    admit_plan(plan, setup)
}

/// The checks of a resolved plan: handler lookup and fit, egress re-verification (trust.md §6).
/// The review runner calls it, just before a lane runs, for the plan pre-flight admitted and
/// probed, so a consent or pin store changed since pre-flight still blocks the lane before any
/// byte leaves, while the plan is not resolved again and the lane not probed again.
///
/// # Errors
///
/// The handler's or the egress check's [`Refusal`].
pub fn admit_plan<'s>(plan: LanePlan, setup: &RunSetup<'s>) -> Result<Admitted<'s>, Refusal> {
    let handler = match setup.handler_override {
        Some(handler) => Some(check_fit(handler, &plan)?),
        None => select_handler(&plan)?,
    };
    setup.egress.check(&plan)?;
    Ok(Admitted { plan, handler })
}

/// Probes an admitted lane (bounded; PATH lookups never spawn); returns what was found.
///
/// # Errors
///
/// The probe's [`Refusal`].
pub fn probe_lane(
    lane: &Lane,
    admitted: &Admitted<'_>,
    setup: &RunSetup<'_>,
) -> Result<String, Refusal> {
    let proof = view_proof(&admitted.plan, admitted.handler, setup);
    let effects = effects_for(lane, &admitted.plan, setup, proof);
    let found = probe::check(&admitted.plan, setup.path_var.as_deref(), &effects)
        .map_err(|refusal| tool_identity::explain(&admitted.plan, refusal))?;
    if !gemini_trust::applies(&admitted.plan) {
        return Ok(found);
    }
    // gemini's folder-trust gate: the child's environment and working directory decide.
    let workspace = std::env::current_dir().map_err(|err| {
        Refusal::new(
            Reason::ProbeFailed,
            format!("cannot tell which folder gemini would run in: {err}"),
        )
    })?;
    let lookup = |name: &str| child_var(&effects.env, name);
    let trust = gemini_trust::check(&gemini_trust::Inputs {
        env: &lookup,
        home: setup.home.as_deref(),
        workspace: &workspace,
    })?;
    Ok(format!("{found}; {trust}"))
}

/// A variable of the environment a child gets.
fn child_var(env: &ChildEnv, name: &str) -> Option<String> {
    match env {
        ChildEnv::Inherit => std::env::var(name).ok(),
        ChildEnv::Minimal { vars } => vars
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone()),
    }
}

/// Longest a `--version` query may take (`doctor`).
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);
/// Most bytes of `--version` output kept (`doctor`).
const VERSION_BYTES: usize = 4096;

/// The first line of `<binary> --version` of an admitted spawn lane, run like a probe
/// (bounded in time and size, the same environment and program allow-list); `Ok(None)` for HTTP
/// lanes and when it prints nothing.
///
/// # Errors
///
/// The spawn error (its [`gsd_lane_sdk::SpawnError::code`] is `ETIMEDOUT` past the bound, …)
/// when the query failed: said, never taken for a program without a version.
pub fn version_of(
    lane: &Lane,
    admitted: &Admitted<'_>,
    setup: &RunSetup<'_>,
) -> Result<Option<String>, gsd_lane_sdk::SpawnError> {
    let Some(spawn) = admitted.plan.spawn() else {
        return Ok(None);
    };
    let binary = spawn.binary.clone();
    let effects = effects_for(lane, &admitted.plan, setup, ViewProof::Probed);
    let report = gsd_lane_sdk::Effects::spawn(
        &effects,
        &gsd_lane_sdk::SpawnRequest::new(
            binary,
            vec!["--version".to_owned()],
            gsd_lane_sdk::StdoutSink::Memory(VERSION_BYTES),
            VERSION_TIMEOUT,
        ),
    );
    if let Some(error) = report.error {
        return Err(error);
    }
    let text = if report.stdout.trim().is_empty() {
        report.stderr
    } else {
        report.stdout
    };
    Ok(text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|line| line.chars().take(200).collect()))
}

/// Runs one lane: admit, probe, execute, empty-output policy.
///
/// # Errors
///
/// A [`Failure`] when the review file cannot be written (an I/O error of the command, not a
/// stub).
pub fn run_lane(lane: &Lane, setup: &RunSetup<'_>) -> Result<Outcome, Failure> {
    let admitted = match admit(lane, setup) {
        Ok(admitted) => admitted,
        Err(refusal) => return Ok(Outcome::Unavailable(refusal)),
    };
    crate::timing::mark("lane admitted");
    let probe = match probe_lane(lane, &admitted, setup) {
        Ok(found) => found,
        Err(refusal) => return Ok(Outcome::Unavailable(refusal)),
    };
    crate::timing::mark("lane probed");
    execute(lane, admitted, probe, setup).map(|done| Outcome::Completed(Box::new(done)))
}

/// Executes an admitted, probed lane under its outer bound and writes its review file.
///
/// # Errors
///
/// A [`Failure`] when the review file cannot be written.
pub fn execute(
    lane: &Lane,
    admitted: Admitted<'_>,
    probe: String,
    setup: &RunSetup<'_>,
) -> Result<Completion, Failure> {
    let Admitted { plan, handler } = admitted;
    refuse_planted_entries(&plan)?;
    let proof = view_proof(&plan, handler, setup);
    let mut started = start(lane, &plan, handler, setup, proof)?;
    if started.sandbox.refused_at_spawn() {
        // The lane's spawn could not prove the read-only view and the probe then refused it:
        // nothing of the lane ran. Decided again, it gets the fallback, whose detection walks
        // the repository before the lane starts.
        started.sandbox.clean_up();
        started = start(lane, &plan, handler, setup, ViewProof::Probed)?;
    }
    let Started {
        sandbox,
        effects,
        before,
        at,
        mut completion,
    } = started;
    completion.probe = probe;
    check_citations(lane, &plan, &mut completion)?;
    say_timeout(lane, &plan, &mut completion)?;
    completion.elapsed = at.elapsed();
    completion.observed = effects.observed.take();
    completion.model = model_of(lane, &plan, setup, &completion);
    let found = sandbox.after(before);
    sandbox.clean_up();
    completion.sandbox = Some(sandbox.effective.clone());
    let review_path = Path::new(&plan.review_path);
    crate::sandbox::policy::append_changes_notice(review_path, &found)
        .context(|| format!("writing {}", review_path.display()))?;
    if let Some(line) = crate::sandbox::policy::changes_line(&found.changes) {
        effects.warn(&format!("lane {}: {line}", plan.slug));
    }
    if let Some(partial) = found.partial_sentence() {
        effects.warn(&format!("lane {}: {partial}", plan.slug));
    }
    completion.repository_changes = found.changes;
    append_diagnosis(lane, &plan, setup, &completion)?;
    completion
        .notes
        .extend(effects.warnings.borrow().iter().cloned());
    Ok(completion)
}

/// A lane's execution as far as its process: the sandbox it got, its effects, the "before" walk
/// of its detection, when it started and what it left.
struct Started {
    sandbox: LaneSandbox,
    effects: HostEffects,
    before: Option<Before>,
    at: Instant,
    completion: Completion,
}

/// Decides the lane's sandbox under `proof`, prepares its files, takes the "before" walk when
/// detection runs and runs the lane (its handler, or the generic spawn).
fn start(
    lane: &Lane,
    plan: &LanePlan,
    handler: Option<&dyn Handler>,
    setup: &RunSetup<'_>,
    proof: ViewProof,
) -> Result<Started, Failure> {
    let sandbox = lane_sandbox(lane, plan, setup, proof);
    let mut effects = effects_for(lane, plan, setup, proof);
    // The execution (unlike the probe) gets the private TMPDIR, when there is one.
    effects.confinement = sandbox.confinement.clone();
    if sandbox.output_file_granted() {
        // Landlock grants an existing file only: the tool's output file is made (empty) here.
        if let Some(path) = output_file(plan) {
            crate::private_fs::open_run_file(&path, crate::private_fs::WriteMode::Truncate)
                .map_err(|err| Failure::new(format!("preparing {}: {err}", path.display())))?;
        }
    }
    let before = sandbox.before();
    let at = Instant::now();
    let request = LaneRequest::new(plan.clone(), setup.inputs.repo_root.clone());
    crate::timing::mark("lane's sandbox and files ready");
    let completion = match handler {
        Some(handler) => run_handler(handler, &effects, &request)?,
        None => run_generic_spawn(&effects, plan)?,
    };
    crate::timing::mark("lane's process ended, review file written");
    Ok(Started {
        sandbox,
        effects,
        before,
        at,
        completion,
    })
}

/// Whether `lane` (with a `--handler-module` or not) can prove the read-only view at its own
/// spawn ([`view_proof`], read from the manifest before any plan): `run` then starts no probe
/// early.
pub fn may_prove_view_at_spawn(lane: &Lane, handler_module: bool) -> bool {
    !handler_module
        && lane.effective_handler().is_none()
        && matches!(lane.probe, gsd_lane_sdk::Probe::CommandExists { .. })
}

/// How this lane relies on the read-only view: proven at its own spawn only when the caller
/// allows it, the lane runs as data (a handler's steps before its spawn would run twice if the
/// lane had to be started again) and its probe starts no process (which would need the view
/// decided first); else probed first.
fn view_proof(plan: &LanePlan, handler: Option<&dyn Handler>, setup: &RunSetup<'_>) -> ViewProof {
    let probe_starts_nothing = matches!(plan.probe, gsd_lane_sdk::Probe::CommandExists { .. });
    if setup.view_proof == ViewProof::AtSpawn && handler.is_none() && probe_starts_nothing {
        ViewProof::AtSpawn
    } else {
        ViewProof::Probed
    }
}

/// Most bytes of a file-output lane's stdout kept in memory (the stderr cap, decisions.md
/// row 2); only its start is read, for the banner.
const BANNER_STDOUT_BYTES: usize = 64 << 20;
/// Most bytes of output the banner rule reads (its 40 lines, §3.6).
const BANNER_HEAD_BYTES: usize = 64 << 10;

/// The first [`BANNER_HEAD_BYTES`] of `text`, without a line the cut split (`cut`: the text
/// was already cut, so its last line may be partial).
fn head_of(text: &str, cut: bool) -> String {
    let mut end = text.len().min(BANNER_HEAD_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = text.get(..end).unwrap_or_default();
    if end == text.len() && !cut {
        return head.to_owned();
    }
    head.rfind('\n')
        .map_or(head, |at| head.get(..at).unwrap_or(head))
        .to_owned()
}

/// The model record of a run (upstream #3649, §3.3): its plan, what its HTTP exchanges and
/// its banner showed, and the effort its argv carried.
fn model_of(
    lane: &Lane,
    plan: &LanePlan,
    setup: &RunSetup<'_>,
    completion: &Completion,
) -> crate::lane_result::model_record::ModelRecord {
    let stderr_head =
        crate::private_fs::read_run_file(Path::new(&plan.err_path), BANNER_HEAD_BYTES as u64)
            .ok()
            .flatten()
            .map(|(bytes, more)| head_of(&String::from_utf8_lossy(&bytes), more));
    let seen = crate::lane_result::model_record::Seen {
        served: completion.observed.served_model.clone(),
        requested: completion.observed.requested_model.clone(),
        stdout_head: completion.stdout_head.clone(),
        stderr_head,
        transcript: completion.handler_model.clone(),
    };
    crate::lane_result::model_record::of_run(
        plan,
        lane,
        &seen,
        crate::plan::effort_level(lane, setup.config),
    )
}

/// The citation check (upstream #3436, §2) of a lane that produced a review: every lane not
/// declared exactly `diff-only`, both transports, after the handler's own rewriting (the
/// antigravity blind stamp comes before it; its own stub is a stub and is never checked).
fn check_citations(
    lane: &Lane,
    plan: &LanePlan,
    completion: &mut Completion,
) -> Result<(), Failure> {
    if completion.stubbed || lane.evidence_class == crate::manifest::model::EvidenceClass::DiffOnly
    {
        return Ok(());
    }
    let path = Path::new(&plan.review_path);
    let verdict = super::citation_check::check_file(path)
        .context(|| format!("checking the citations of {}", path.display()))?;
    if verdict == super::citation_check::Verdict::Stamped {
        completion.notes.push(
            "stamped [reviewed-without-source-citations]: the review cites no file:line source"
                .to_owned(),
        );
    }
    Ok(())
}

/// The generic stub's last line, `Diagnosis: …` (upstream #4275, §7.4): the effort the lane
/// ran at and how its last process ended. A handler's own stub (antigravity's) is left as it is.
fn append_diagnosis(
    lane: &Lane,
    plan: &LanePlan,
    setup: &RunSetup<'_>,
    completion: &Completion,
) -> Result<(), Failure> {
    if !completion.stubbed || completion.own_stub {
        return Ok(());
    }
    let subject = match plan.transport {
        Transport::OpenAiHttp => super::diagnosis::Subject::Http,
        Transport::Spawn => super::diagnosis::Subject::Spawn {
            effort: crate::plan::effort_level(lane, setup.config),
            end: completion.observed.last_end.clone(),
        },
    };
    let line = super::diagnosis::line(&plan.slug, &subject);
    let path = Path::new(&plan.review_path);
    crate::private_fs::open_run_file(path, crate::private_fs::WriteMode::Append)
        .and_then(|mut file| std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes()))
        .context(|| format!("writing {}", path.display()))
}

/// A lane stopped by its outer bound: said as a timeout naming the bound and where it is set
/// (a note, and a line in the stub), never left to read as a spawn error.
fn say_timeout(lane: &Lane, plan: &LanePlan, completion: &mut Completion) -> Result<(), Failure> {
    let timed_out = completion.spawn_error.as_deref() == Some("ETIMEDOUT")
        || completion.notes.iter().any(|n| n.contains("ETIMEDOUT"));
    if !timed_out {
        return Ok(());
    }
    let line = timeout_line(plan.timeout_ms, &lane.path);
    if completion.stubbed {
        let review_path = Path::new(&plan.review_path);
        crate::private_fs::open_run_file(review_path, crate::private_fs::WriteMode::Append)
            .and_then(|mut file| {
                std::io::Write::write_all(&mut file, format!("\n> [gsd-lane] {line}\n").as_bytes())
            })
            .map_err(|err| Failure::new(format!("writing {}: {err}", review_path.display())))?;
    }
    completion.notes.push(line);
    Ok(())
}

/// `timed out after 20 s (reviewer.timeoutFloorMs in <manifest>)`.
pub fn timeout_line(timeout_ms: u64, manifest: &Path) -> String {
    let tenths = timeout_ms.saturating_add(50) / 100;
    let seconds = if tenths.is_multiple_of(10) {
        (tenths / 10).to_string()
    } else {
        format!("{}.{}", tenths / 10, tenths % 10)
    };
    format!(
        "timed out after {seconds} s (reviewer.timeoutFloorMs in {})",
        crate::output::neutralize(&manifest.display().to_string())
    )
}

/// Refuses to start a lane when an entry planted in the run dir sits under a name it writes
/// (review file, stderr sidecar, the tool's output file): nothing is started or written.
fn refuse_planted_entries(plan: &LanePlan) -> Result<(), Failure> {
    for path in own_files(plan).iter().filter(|p| !p.as_os_str().is_empty()) {
        crate::private_fs::check_entry(path).map_err(|err| {
            Failure::new(format!(
                "lane {}: {err}; the lane was not started",
                crate::output::neutralize(&plan.slug)
            ))
        })?;
    }
    Ok(())
}

/// The files of a lane run in its run dir: the review file, the stderr sidecar and, for a tool
/// that writes its answer to a file, that file.
fn own_files(plan: &LanePlan) -> Vec<PathBuf> {
    let mut names = vec![
        PathBuf::from(&plan.review_path),
        PathBuf::from(&plan.err_path),
    ];
    if let Some(path) = output_file(plan) {
        names.push(path);
    }
    names
}

/// The file a tool writes its answer to (`outputChannel: file`), if any.
fn output_file(plan: &LanePlan) -> Option<PathBuf> {
    match plan.spawn().map(|s| &s.output_target) {
        Some(OutputTarget::File(path)) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => None,
    }
}

/// The handler a plan needs: declared one, or `openai-compatible` for every HTTP lane.
fn select_handler(plan: &LanePlan) -> Result<Option<&'static dyn Handler>, Refusal> {
    let Some(name) = crate::manifest::lane::driving_handler(plan.handler, plan.transport) else {
        return Ok(None);
    };
    let handler = crate::registry::handlers::lookup(name)
        .map_err(|err| Refusal::new(Reason::UnknownHandler, err.to_string()))?;
    check_fit(handler, plan).map(Some)
}

/// A handler drives one transport; a lane of another is malformed (trust.md weakness 20).
fn check_fit<'h>(handler: &'h dyn Handler, plan: &LanePlan) -> Result<&'h dyn Handler, Refusal> {
    if handler.transport() != plan.transport {
        return Err(Refusal::new(
            Reason::MalformedLane,
            format!(
                "handler {} drives {} lanes, not {}",
                handler.name(),
                handler.transport().as_str(),
                plan.transport.as_str()
            ),
        ));
    }
    Ok(handler)
}

/// The sandbox of a lane's execution: HTTP lanes start no process and are never confined.
fn lane_sandbox(
    lane: &Lane,
    plan: &LanePlan,
    setup: &RunSetup<'_>,
    proof: ViewProof,
) -> LaneSandbox {
    if plan.transport != Transport::Spawn {
        return LaneSandbox::off();
    }
    let posture = lane.posture;
    LaneSandbox::decide(
        setup.sandbox,
        posture,
        repository_writes_allowed(setup.config, &lane.slug),
        Path::new(&setup.inputs.repo_root),
        Path::new(&setup.inputs.run_dir),
        &own_files(plan),
        proof,
    )
}

/// True when `review.allow_repository_writes` lists `slug` (the user's opt-in for a lane that
/// declared `writes-repository`).
pub fn repository_writes_allowed(config: &ProjectConfig, slug: &str) -> bool {
    config
        .get("review.allow_repository_writes")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|slugs| slugs.iter().any(|s| s.as_str() == Some(slug)))
}

/// Refuses a lane that declared `writes-repository` unless the user opted in for it.
fn check_posture(lane: &Lane, setup: &RunSetup<'_>) -> Result<(), Refusal> {
    if lane.posture == Posture::WritesRepository
        && !repository_writes_allowed(setup.config, &lane.slug)
    {
        return Err(Refusal::new(
            Reason::RepositoryWritesNotAllowed,
            format!(
                "lane {} declares reviewer.posture \"writes-repository\"; to let it change the \
                 repository, add \"{}\" to review.allow_repository_writes in .planning/config.json",
                lane.slug, lane.slug
            ),
        ));
    }
    Ok(())
}

/// The environment a lane's child starts with: first-party lanes inherit, third-party lanes get
/// the minimal one; either way the lane's `invoke.env` pairs go on top (upstream #2493,
/// decisions.md row 18). A third-party lane's pairs are in its disclosure signature, so the
/// ones that reach a child are the ones the user consented to.
fn child_env(lane: &Lane) -> ChildEnv {
    let declared = lane
        .spawn()
        .map(|spawn| &spawn.env)
        .filter(|env| !env.is_empty());
    let mut vars = match (lane.scope, declared) {
        (Scope::FirstParty, None) => return ChildEnv::Inherit,
        (Scope::FirstParty, Some(_)) => std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
            .collect(),
        (Scope::Global | Scope::Project, _) => match spawn::minimal_env_from_current() {
            ChildEnv::Minimal { vars } => vars,
            ChildEnv::Inherit => Vec::new(),
        },
    };
    if let Some(pairs) = declared {
        vars.retain(|(name, _)| !pairs.keys().any(|pair| same_var_name(pair, name)));
        vars.extend(pairs.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    ChildEnv::Minimal { vars }
}

/// Whether two variable names name the same variable (Windows looks names up ignoring case).
fn same_var_name(a: &str, b: &str) -> bool {
    if cfg!(windows) {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

fn effects_for(
    lane: &Lane,
    plan: &LanePlan,
    setup: &RunSetup<'_>,
    proof: ViewProof,
) -> HostEffects {
    let mut env = child_env(lane);
    // The child is looked up and started with the same PATH the probe used.
    if let (ChildEnv::Minimal { vars }, Some(path)) = (&mut env, &setup.path_var) {
        vars.retain(|(name, _)| name != "PATH");
        vars.push(("PATH".to_owned(), path.to_string_lossy().into_owned()));
    }
    let mut allowed = Vec::new();
    if let Some(spawn) = plan.spawn() {
        allowed.push(spawn.binary.clone());
    }
    if let gsd_lane_sdk::Probe::CommandCapability { binary, .. } = &plan.probe {
        allowed.push(binary.clone());
    }
    HostEffects {
        allowed_programs: allowed,
        origin: plan.http().and_then(|http| Origin::of(&http.host).ok()),
        env,
        deadline: Instant::now() + Duration::from_millis(plan.timeout_ms),
        home: setup.home.clone(),
        lock_dir: setup.lock_dir.clone(),
        spawn_limits: SpawnLimits::default(),
        http_limits: HttpLimits::default(),
        warnings: RefCell::new(Vec::new()),
        observed: RefCell::default(),
        // Probes run confined too, but without a private TMPDIR (which would be created in
        // the run dir of a lane that may still be refused).
        confinement: Confinement {
            tmpdir: None,
            ..lane_sandbox(lane, plan, setup, proof).confinement
        },
    }
}

fn completion(plan: &LanePlan, report: Option<&SpawnReport>) -> Completion {
    Completion {
        plan: plan.clone(),
        stubbed: false,
        own_stub: false,
        incomplete: false,
        model: crate::lane_result::model_record::ModelRecord::unknown(),
        stdout_head: None,
        handler_model: None,
        probe: String::new(),
        source: None,
        blind: false,
        notes: Vec::new(),
        exit_code: report.and_then(|r| r.exit_code),
        spawn_error: report
            .and_then(|r| r.error.as_ref())
            .map(|e| e.code().to_owned()),
        elapsed: Duration::ZERO,
        stub_reason: None,
        observed: super::effects::Observed::default(),
        sandbox: None,
        repository_changes: Vec::new(),
    }
}

/// A data-only spawn lane: stdout streams straight into the review file (or the tool writes
/// it), then the empty-output policy applies.
fn run_generic_spawn(effects: &HostEffects, plan: &LanePlan) -> Result<Completion, Failure> {
    let Some(spawn) = plan.spawn() else {
        return Err(Failure::new(format!(
            "lane {}: a spawn plan was expected",
            plan.slug
        )));
    };
    let review_path = PathBuf::from(&plan.review_path);
    let stdout = match spawn.output_target {
        OutputTarget::Stdout => StdoutSink::File(review_path.clone()),
        // Kept (with stderr's in-memory cap) for the banner rule of the recorded model.
        OutputTarget::File(_) => StdoutSink::Memory(BANNER_STDOUT_BYTES),
    };
    let report = effects.spawn(
        &SpawnRequest::new(
            spawn.binary.clone(),
            spawn.argv.clone(),
            stdout,
            effects.remaining(),
        )
        .with_stdin(spawn.stdin.as_ref().map(PathBuf::from))
        .with_stderr_path(Some(PathBuf::from(&plan.err_path))),
    );
    let mut done = completion(plan, Some(&report));
    if matches!(spawn.output_target, OutputTarget::File(_)) {
        done.stdout_head = Some(head_of(&report.stdout, false));
    }
    let content = review_file::inspect(&review_path)
        .context(|| format!("reading {}", review_path.display()))?;
    match content {
        Content::Empty => {
            let sidecar = review_file::read_sidecar(Path::new(&plan.err_path));
            let untrusted = gemini_trust::applies(plan)
                && gemini_trust::refused_after_the_fact(report.exit_code, &sidecar);
            if untrusted {
                done.stub_reason = Some(Reason::UntrustedWorkspace);
            }
            write_stub(plan, None, done.stub_reason)?;
            done.stubbed = true;
        }
        Content::Review { .. } => {
            review_file::finish_review_file(&review_path, content)
                .context(|| format!("writing {}", review_path.display()))?;
            // A lane stopped by its bound or its output cap may have printed half a review:
            // say so in the review itself, so it never passes for a finished one.
            if let Some(error) = &report.error {
                review_file::append_incomplete_notice(&review_path, error.code())
                    .context(|| format!("writing {}", review_path.display()))?;
                done.incomplete = true;
            }
            done.source = Some(match spawn.output_target {
                OutputTarget::Stdout => "stdout".to_owned(),
                OutputTarget::File(_) => "output file".to_owned(),
            });
        }
    }
    Ok(done)
}

fn run_handler(
    handler: &dyn Handler,
    effects: &HostEffects,
    request: &LaneRequest,
) -> Result<Completion, Failure> {
    let plan = &request.plan;
    let output: HandlerOutput = handler.run(effects, request).map_err(|err| {
        Failure::new(format!(
            "lane {}: handler {}: {err}",
            plan.slug,
            handler.name()
        ))
    })?;
    let err_path = Path::new(&plan.err_path);
    if plan.transport == Transport::OpenAiHttp {
        crate::private_fs::write_run_file(err_path, b"", crate::private_fs::WriteMode::Truncate)
            .context(|| format!("writing {}", err_path.display()))?;
    }
    let mut done = completion(plan, None);
    done.notes.clone_from(&output.notes);
    done.handler_model.clone_from(&output.model);
    done.blind = output.blind;
    let review_path = Path::new(&plan.review_path);
    if review_file::is_empty_review(&output.review) {
        match &output.own_stub {
            Some(stub) => {
                review_file::write_review(review_path, stub)
                    .context(|| format!("writing {}", review_path.display()))?;
                done.own_stub = true;
            }
            None => write_stub(plan, output.diagnostic.as_deref(), None)?,
        }
        done.stubbed = true;
    } else {
        review_file::write_review(review_path, &output.review)
            .context(|| format!("writing {}", review_path.display()))?;
        done.source = output.source;
    }
    Ok(done)
}

fn write_stub(
    plan: &LanePlan,
    diagnostic: Option<&str>,
    reason: Option<Reason>,
) -> Result<(), Failure> {
    let sidecar = review_file::read_sidecar(Path::new(&plan.err_path));
    let mut stub = review_file::stub_text(&plan.slug, &sidecar, diagnostic);
    if reason == Some(Reason::UntrustedWorkspace) {
        let workspace = std::env::current_dir().unwrap_or_default();
        stub.push_str(&format!(
            "\n> [gsd-lane] {}: gemini refused to run because it does not trust this folder \
             (exit {}); {}.\n",
            Reason::UntrustedWorkspace,
            gemini_trust::UNTRUSTED_EXIT,
            gemini_trust::fix_hint(&workspace)
        ));
    }
    let path = Path::new(&plan.review_path);
    review_file::write_review(path, &stub).context(|| format!("writing {}", path.display()))
}
