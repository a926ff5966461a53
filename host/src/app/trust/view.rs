//! What a careful user needs to decide about one capability: the disclosure of trust.md §3, the
//! resolved plan with the current config, where the program is, what environment it gets, the
//! destination and its binding, and the trust rules it breaks.

use std::path::{Path, PathBuf};

use gsd_lane_sdk::{HttpPlan, LanePlan, SpawnPlan};
use serde::Serialize;
use serde_json::Value;

use super::super::Context;
use crate::config::ProjectConfig;
use crate::manifest::DeclaredLane;
use crate::manifest::LaneSpec;
use crate::plan::{self, PlanInputs};
use crate::refusal::Reason;
use crate::run::path_lookup;
use crate::trust::consent::{hash, ConsentStore};
use crate::trust::disclosure::{disclose, Disclosure};
use crate::trust::egress::class_of;
use crate::trust::pins::PinStore;
use crate::trust::policy::Violation;
use crate::trust::render::{escape_text, quote_if_needed, summary_lines};
use crate::trust::signature::{disclosure_signature, lane_binding_v2};
use crate::trust::{canonical_root, fingerprint, host_resolver, LaneReading};

/// One capability to disclose.
#[derive(Debug, Clone)]
pub struct Subject {
    /// Capability id (`""` when the manifest has none).
    pub id: String,
    /// `first-party`, `global`, `project` or `file`.
    pub scope: &'static str,
    /// The manifest file (a label for first-party manifests).
    pub path: PathBuf,
    /// `active`, `inactive`, `skipped`, … (`not installed` for `--manifest`).
    pub status: String,
    /// Why it is not active.
    pub reason: Option<String>,
    /// The raw manifest (what the disclosure, its signature and the lane binding read).
    pub manifest: Value,
    /// How the trust layer reads its lane: typed when active, the declared view otherwise.
    pub reading: LaneReading,
}

impl Subject {
    fn install_root(&self) -> Option<&Path> {
        (self.scope != "first-party")
            .then(|| self.path.parent())
            .flatten()
    }
}

/// What the sandbox does not confine, as the disclosure and the consent screens say it under the
/// lane's own `posture` line (which says what it does confine): reading and the network.
pub const SANDBOX_POSTURE: &str =
    "confines writes only (see posture) — the lane can read every file you can and send it anywhere";

/// The environment a spawn lane starts with (trust.md §7.9), as `disclose --json` writes it.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Environment {
    /// A first-party lane: the whole environment.
    Inherited {
        /// What that means.
        detail: &'static str,
    },
    /// A third-party lane: only the listed variables, plus its disclosed `invoke.env` pairs.
    Minimal {
        /// The variables kept.
        variables: &'static [&'static str],
        /// What that means.
        detail: &'static str,
    },
}

/// The environment a lane of `scope` starts with (trust.md §7.9).
fn environment(scope: &str) -> Environment {
    if scope == "first-party" {
        Environment::Inherited {
            detail: "the whole environment of gsd-lane, every credential in it included (first-party CLIs authenticate through it)",
        }
    } else {
        Environment::Minimal {
            variables: &[
                "PATH",
                "HOME",
                "USERPROFILE",
                "LANG",
                "LANGUAGE",
                "LC_*",
                "TMPDIR",
                "TMP",
                "TEMP",
            ],
            detail: "only the listed variables, plus the lane's own invoke.env pairs (its env: line); every credential in your environment is withheld",
        }
    }
}

/// The destination binding of an HTTP lane: what the next run compares against.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Binding {
    /// Nothing binds it (yet).
    None {
        /// Whether a consent record without a host exists (absent without a GSD home).
        #[serde(rename = "legacyRecord", skip_serializing_if = "Option::is_none")]
        legacy_record: Option<bool>,
        /// What that means.
        detail: &'static str,
    },
    /// The store or the pin file cannot be read.
    Damaged {
        /// The damaged file.
        store: PathBuf,
        /// What is wrong.
        detail: String,
        /// How to repair it.
        fix: String,
    },
    /// A consent record binds the host.
    Consent {
        /// The consented host.
        host: String,
        /// Whether it is a local destination.
        local: bool,
        /// Whether the current destination is the consented one.
        matches: bool,
    },
    /// A first-use or approved pin binds the host.
    Pin {
        /// The pinned host.
        host: String,
        /// Whether it is a local destination.
        local: bool,
        /// How the pin came to be.
        source: String,
        /// When.
        #[serde(rename = "pinnedAt")]
        pinned_at: String,
        /// Whether the current destination has the pinned origin.
        matches: bool,
    },
}

impl Binding {
    /// A damaged store or pin file.
    fn damaged(damage: &crate::trust::consent::Damage) -> Binding {
        Binding::Damaged {
            store: damage.path.clone(),
            detail: damage.to_string(),
            fix: damage.fix(),
        }
    }
}

/// The destination binding of an HTTP lane: what the next run compares against.
fn binding(context: &Context, id: &str, current: &str) -> Binding {
    let Some(home) = context.env.gsd_home() else {
        return Binding::None {
            legacy_record: None,
            detail: "no GSD home: destinations cannot be pinned",
        };
    };
    let root = canonical_root(&context.project_root);
    let record = match ConsentStore::new(&home).load() {
        Ok(records) => records.get(&root, id).cloned(),
        Err(damage) => return Binding::damaged(&damage),
    };
    if let Some(host) = record.as_ref().and_then(|r| r.reviewer_host()) {
        return Binding::Consent {
            host: host.to_owned(),
            local: class_of(host) == "local",
            matches: crate::config::normalize_host(host) == crate::config::normalize_host(current),
        };
    }
    match PinStore::new(&home).get(&root, id) {
        Err(damage) => Binding::damaged(&damage),
        Ok(Some(pin)) => Binding::Pin {
            local: class_of(&pin.host) == "local",
            matches: crate::config::origin_of(&pin.host) == crate::config::origin_of(current),
            host: pin.host,
            source: pin.source,
            pinned_at: pin.pinned_at,
        },
        Ok(None) => Binding::None {
            legacy_record: Some(record.is_some()),
            detail: "not pinned yet: the first run pins the destination it uses",
        },
    }
}

/// One capability as `disclose --json` writes it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityView {
    /// Capability id.
    id: String,
    /// `first-party`, `global`, `project` or `file`.
    scope: &'static str,
    /// The manifest file.
    path: String,
    /// `active`, `inactive`, … (`not installed` for `--manifest`).
    status: String,
    /// Why it is not active.
    reason: Option<String>,
    /// The disclosure of trust.md §3, with the resolved host.
    disclosure: Disclosure,
    /// Whether installing it needs consent.
    requires_consent: bool,
    /// The disclosure signature (trust.md §4).
    disclosure_signature: String,
    /// The extended lane binding (trust.md §4.8).
    lane_binding_v2: Option<String>,
    /// The human summary of the disclosure.
    summary: Vec<String>,
    /// The third-party rules it breaks.
    policy: Vec<Violation>,
    /// The bundle's content hash.
    content_hash: Option<String>,
    /// The consent fingerprint.
    fingerprint: String,
    /// What the lane would do now (a capability that declares a lane).
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<LaneRun>,
}

/// The JSON object and the human lines for one capability.
pub fn capability_view(
    context: &Context,
    config: &ProjectConfig,
    subject: &Subject,
) -> (CapabilityView, Vec<String>) {
    let declared = DeclaredLane::of_manifest(&subject.manifest);
    let resolver = host_resolver(declared.as_ref(), config);
    let staged = (subject.scope != "first-party")
        .then(|| subject.path.parent())
        .flatten();
    let disclosure: Disclosure = disclose(&subject.manifest, Some(&resolver), staged);
    let signature = disclosure_signature(&disclose(&subject.manifest, None, None));
    let lines = summary_lines(&disclosure);
    let violations: Vec<Violation> = if subject.scope == "first-party" {
        Vec::new()
    } else {
        // A program may live only in a global install folder (trust.md §7.5).
        let root = subject.install_root().filter(|_| subject.scope == "global");
        subject.reading.violations(root)
    };
    let current_host = subject.reading.host(config).map(|(_, host)| host);
    let content_hash = match subject.install_root() {
        Some(root) => hash::content_hash(root).ok(),
        None => None,
    };
    let fingerprint = fingerprint(
        &signature,
        current_host.as_deref().unwrap_or(""),
        content_hash.as_deref().unwrap_or(""),
    );
    let mut human = vec![format!(
        "{} ({}, {}) {}",
        escape_text(if subject.id.is_empty() {
            "(id?)"
        } else {
            &subject.id
        }),
        subject.scope,
        subject.status,
        escape_text(&subject.path.display().to_string())
    )];
    if let Some(reason) = &subject.reason {
        human.push(format!("  not active: {}", escape_text(reason)));
    }
    human.extend(lines.iter().map(|l| format!("  {l}")));
    let run = disclosure.lane().is_some().then(|| {
        let (run, run_lines) = lane_run(context, config, subject);
        human.extend(run_lines);
        run
    });
    for violation in &violations {
        human.push(format!(
            "  refused for a third-party lane: {} {}",
            violation.field,
            escape_text(&violation.message)
        ));
    }
    human.push(format!("  signature:   {}", escape_text(&signature)));
    human.push(format!("  fingerprint: {fingerprint}"));
    let view = CapabilityView {
        id: subject.id.clone(),
        scope: subject.scope,
        path: subject.path.display().to_string(),
        status: subject.status.clone(),
        reason: subject.reason.clone(),
        requires_consent: disclosure.has_executable,
        disclosure,
        lane_binding_v2: lane_binding_v2(&subject.manifest),
        disclosure_signature: signature,
        summary: lines,
        policy: violations,
        content_hash,
        fingerprint,
        run,
    };
    (view, human)
}

/// What the lane would do now, as `disclose --json` writes it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum LaneRun {
    /// It cannot run as declared.
    Refused {
        /// Always `false`.
        ok: bool,
        /// The refusal's reason.
        reason: Reason,
        /// What is wrong.
        detail: String,
    },
    /// Its plan with the current config.
    Planned(Box<PlannedRun>),
}

/// A lane that resolves: its plan, bounds, model and, by transport, program or destination.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedRun {
    /// Always `true`.
    ok: bool,
    /// The resolved plan.
    plan: LanePlan,
    /// Its wall-clock bound.
    timeout_ms: u64,
    /// Where its model comes from.
    model: String,
    /// A spawn lane's program and environment.
    #[serde(flatten)]
    spawn: Option<SpawnRun>,
    /// An HTTP lane's destination and binding.
    #[serde(flatten)]
    http: Option<HttpRun>,
}

/// What a spawn lane runs with.
#[derive(Debug, Clone, Serialize)]
pub struct SpawnRun {
    /// The program found on `PATH` (`null`: not found here).
    program: Option<String>,
    /// The environment it starts with.
    environment: Environment,
}

/// Where an HTTP lane sends the prompt, and what binds it.
#[derive(Debug, Clone, Serialize)]
pub struct HttpRun {
    /// The destination.
    destination: Destination,
    /// What the next run compares it against.
    binding: Binding,
}

/// An HTTP lane's destination.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Destination {
    /// The resolved host.
    host: String,
    /// Whether it is local.
    local: bool,
    /// The config key naming it.
    host_config_key: String,
    /// Whether the config sets that key.
    configured: bool,
    /// Every request the lane sends.
    requests: Vec<String>,
}

/// What the lane would do now: the plan with the current config, and its bounds.
fn lane_run(
    context: &Context,
    config: &ProjectConfig,
    subject: &Subject,
) -> (LaneRun, Vec<String>) {
    let inputs = PlanInputs {
        run_dir: "<run-dir>".to_owned(),
        repo_root: context.repo_root(None),
        ..PlanInputs::default()
    };
    let mut lines = Vec::new();
    let typed = match &subject.reading {
        LaneReading::Active(lane) => Ok(LaneSpec::clone(lane)),
        LaneReading::Declared(_) => LaneSpec::from_manifest(&subject.manifest),
    };
    // The lane's own declared defaults apply to the keys no config sets (ADR-2782 D9).
    let resolved = typed.and_then(|lane| {
        let own = config
            .clone()
            .with_lane_defaults([(subject.id.as_str(), lane.config_defaults.as_slice())]);
        plan::resolve_lane(&subject.id, &lane, &own, &inputs).map(|plan| (lane, plan, own))
    });
    let (lane, plan, own) = match resolved {
        Ok(resolved) => resolved,
        Err(refusal) => {
            lines.push(format!(
                "  cannot run as declared: {} ({})",
                refusal.reason,
                escape_text(&refusal.detail)
            ));
            let run = LaneRun::Refused {
                ok: false,
                reason: refusal.reason,
                detail: refusal.detail,
            };
            return (run, lines);
        }
    };
    let model_key = lane.model_config_key.as_deref();
    let config = &own;
    let model_line = model_line(model_key, config, &plan);
    lines.push(format!("  model:       {model_line}"));
    let spawn = plan.spawn().map(|spawn| {
        let run = describe_spawn(context, subject.scope, spawn, &mut lines);
        lines.push(format!(
            "  bounds:      killed with its whole process tree after {} s; output capped",
            plan.timeout_ms / 1000
        ));
        lines.push(format!("  sandbox:     {SANDBOX_POSTURE}"));
        run
    });
    let http = plan.http().map(|http_plan| {
        let requests = http_requests(http_plan, &plan.probe);
        describe_http(
            context,
            config,
            &subject.id,
            http_plan,
            requests,
            &mut lines,
        )
    });
    let run = PlannedRun {
        ok: true,
        timeout_ms: plan.timeout_ms,
        plan,
        model: model_line,
        spawn,
        http,
    };
    (LaneRun::Planned(Box::new(run)), lines)
}

/// Where the lane's model comes from with the current config (`model_key` is the lane's
/// `modelConfigKey`).
fn model_line(model_key: Option<&str>, config: &ProjectConfig, plan: &LanePlan) -> String {
    match (model_key, config.configured_string(model_key.unwrap_or(""))) {
        (None, _) => "the lane accepts no model setting".to_owned(),
        (Some(key), Some(model)) => format!(
            "{} from {} ({})",
            quote_if_needed(&model),
            escape_text(key),
            escape_text(&config.origin(key).to_string())
        ),
        (Some(key), None) => match plan.http() {
            Some(http) if http.models_url.is_some() => format!(
                "{} is unset: the first model the server lists, else {}",
                escape_text(key),
                quote_if_needed(&http.fallback_model)
            ),
            Some(http) => format!(
                "{} is unset: {}",
                escape_text(key),
                quote_if_needed(&http.fallback_model)
            ),
            None => format!("{} is unset: the tool's own default", escape_text(key)),
        },
    }
}

/// A spawn lane: the command it runs, where the program is, how prompt and review travel,
/// and the environment it starts with (`scope` is the capability's).
fn describe_spawn(
    context: &Context,
    scope: &str,
    spawn: &SpawnPlan,
    lines: &mut Vec<String>,
) -> SpawnRun {
    let found = path_lookup::find_executable(&spawn.binary, context.env.path.as_deref());
    let all = std::iter::once(&spawn.binary).chain(&spawn.argv);
    let raw: Vec<Value> = spawn.argv.iter().cloned().map(Value::String).collect();
    lines.push(format!(
        "  runs now:    {}",
        crate::output::shell_join(all.map(String::as_str))
    ));
    lines.push(format!(
        "  argv (JSON): {}",
        crate::trust::render::json_argv(&spawn.binary, &raw)
    ));
    lines.push(format!(
        "  program:     {}",
        found.as_ref().map_or_else(
            || format!("{} is not on PATH here", escape_text(&spawn.binary)),
            |p| escape_text(&p.display().to_string())
        )
    ));
    lines.push(format!(
        "  prompt:      {}",
        match &spawn.stdin {
            Some(path) => format!("streamed on stdin from {}", escape_text(path)),
            None =>
                "named on the command line (a file path; plan text never goes in argv)".to_owned(),
        }
    ));
    lines.push(format!(
        "  review:      {}",
        match &spawn.output_target {
            gsd_lane_sdk::OutputTarget::Stdout => "its standard output".to_owned(),
            gsd_lane_sdk::OutputTarget::File(path) =>
                format!("the file it writes ({})", escape_text(path)),
        }
    ));
    let environment = environment(scope);
    lines.push(environment_line(&environment));
    SpawnRun {
        program: found.map(|p| p.display().to_string()),
        environment,
    }
}

/// The `environment:` line of a spawn lane, with the variables it keeps.
fn environment_line(env: &Environment) -> String {
    let (kind, variables, detail): (&str, &[&str], &str) = match env {
        Environment::Inherited { detail } => ("inherited", &[], detail),
        Environment::Minimal { variables, detail } => ("minimal", variables, detail),
    };
    format!(
        "  environment: {kind} — {detail}{}",
        if variables.is_empty() {
            String::new()
        } else {
            format!("\n               listed: {}", variables.join(", "))
        }
    )
}

/// Every request an HTTP lane sends: the review, model discovery, the reachability probe.
fn http_requests(http_plan: &HttpPlan, probe: &gsd_lane_sdk::Probe) -> Vec<String> {
    let mut requests = vec![format!("POST {} (the whole prompt as JSON)", http_plan.url)];
    if let Some(models) = &http_plan.models_url {
        requests.push(format!("GET {models} (model discovery)"));
    }
    if let gsd_lane_sdk::Probe::HttpReachable { path, .. } = probe {
        requests.push(format!("GET {}{path} (reachability probe)", http_plan.host));
    }
    requests
}

/// An HTTP lane: its destination, the requests it sends, and the binding the next run
/// compares against.
fn describe_http(
    context: &Context,
    config: &ProjectConfig,
    id: &str,
    http_plan: &HttpPlan,
    requests: Vec<String>,
    lines: &mut Vec<String>,
) -> HttpRun {
    let class = class_of(&http_plan.host);
    let configured = config
        .configured_string(&http_plan.host_config_key)
        .is_some();
    lines.push(format!(
        "  destination: {} ({class}) from {}{}",
        escape_text(&http_plan.host),
        escape_text(&http_plan.host_config_key),
        if configured {
            ""
        } else {
            " (unset, so the manifest's defaultHost)"
        }
    ));
    for request in &requests {
        lines.push(format!("  request:     {}", escape_text(request)));
    }
    let binding = binding(context, id, &http_plan.host);
    lines.push(format!("  pinned:      {}", describe_binding(&binding)));
    lines.push(
        "  transport:   no redirects followed, no proxy used, response capped at 16 MiB".to_owned(),
    );
    if class == "local" {
        lines.push("  note:        a loopback port can belong to a different program than the one you have in mind".to_owned());
    }
    HttpRun {
        destination: Destination {
            host: http_plan.host.clone(),
            local: class == "local",
            host_config_key: http_plan.host_config_key.clone(),
            configured,
            requests,
        },
        binding,
    }
}

fn describe_binding(binding: &Binding) -> String {
    let (host, matches, by) = match binding {
        Binding::Consent { host, matches, .. } => (host, *matches, "by consent"),
        Binding::Pin { host, matches, .. } => (host, *matches, "on first use"),
        Binding::None { detail, .. } => return (*detail).to_owned(),
        Binding::Damaged { detail, .. } => return detail.clone(),
    };
    let verdict = if matches {
        "matches; runs are allowed"
    } else {
        "DIFFERS: the next run is blocked until you re-approve (gsd-lane trust rebind-host)"
    };
    format!("{} ({}) {by}; {verdict}", escape_text(host), class_of(host))
}

/// The trust rules of an overlay manifest at `dir`, as one message per violation.
/// `dir` is `None` for a project-scope folder, which may hold no program that runs.
pub fn policy_messages(manifest: &Value, dir: Option<&Path>) -> Vec<String> {
    LaneReading::of_manifest(manifest)
        .violations(dir)
        .into_iter()
        .map(|v| v.to_string())
        .collect()
}
