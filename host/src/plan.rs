//! Plan resolution (invocation.md §4): a lane body plus config in, a typed plan or a typed
//! refusal out. Pure and total: no I/O, no panic, whatever the body holds.

use std::fmt;

use gsd_lane_sdk::{
    EmptyOutputPolicy, HttpPlan, LanePlan, OutputTarget, PlanShape, Probe, SpawnPlan, Transport,
};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::{configured, effort_argv, normalize_host, ProjectConfig};
use crate::manifest::vocab;

/// The closed set of unavailability reasons (invocation.md §5), sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The trimming step failed for a reason other than size.
    BudgetToolFailed,
    /// The prompt cannot fit the lane's budget.
    BudgetTooSmall,
    /// The consent store exists but cannot be read or decided (trust.md §5.5, fail closed).
    ConsentStoreUnreadable,
    /// The consented destination differs from the resolved one.
    EgressHostChanged,
    /// The destination pin store exists but cannot be read or decided (trust.md §6.9).
    EgressStoreUnreadable,
    /// The HTTP probe failed.
    HostUnreachable,
    /// The lane's body is not usable.
    MalformedLane,
    /// The probe binary is not on PATH.
    MissingBinary,
    /// A `requiresBinaries` entry is not on PATH.
    MissingRequiredBinary,
    /// The probe ran and said no.
    ProbeFailed,
    /// The probe ran out of time.
    ProbeTimeout,
    /// The lane declares `reviewer.posture: "writes-repository"` and the user did not opt in.
    RepositoryWritesNotAllowed,
    /// The handler is not implemented by this build.
    UnknownHandler,
    /// The transport is not recognised.
    UnknownTransport,
    /// The lane's tool refuses to run in this folder until the user trusts it (gemini's
    /// folder-trust gate); gsd-lane never trusts a folder on the user's behalf.
    UntrustedWorkspace,
}

impl Reason {
    /// Every reason, sorted by name.
    pub const ALL: [Reason; 15] = [
        Reason::BudgetToolFailed,
        Reason::BudgetTooSmall,
        Reason::ConsentStoreUnreadable,
        Reason::EgressHostChanged,
        Reason::EgressStoreUnreadable,
        Reason::HostUnreachable,
        Reason::MalformedLane,
        Reason::MissingBinary,
        Reason::MissingRequiredBinary,
        Reason::ProbeFailed,
        Reason::ProbeTimeout,
        Reason::RepositoryWritesNotAllowed,
        Reason::UnknownHandler,
        Reason::UnknownTransport,
        Reason::UntrustedWorkspace,
    ];

    /// The wire name (`malformed_lane`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::BudgetToolFailed => "budget_tool_failed",
            Reason::BudgetTooSmall => "budget_too_small",
            Reason::ConsentStoreUnreadable => "consent_store_unreadable",
            Reason::EgressHostChanged => "egress_host_changed",
            Reason::EgressStoreUnreadable => "egress_store_unreadable",
            Reason::HostUnreachable => "host_unreachable",
            Reason::MalformedLane => "malformed_lane",
            Reason::MissingBinary => "missing_binary",
            Reason::MissingRequiredBinary => "missing_required_binary",
            Reason::ProbeFailed => "probe_failed",
            Reason::ProbeTimeout => "probe_timeout",
            Reason::RepositoryWritesNotAllowed => "repository_writes_not_allowed",
            Reason::UnknownHandler => "unknown_handler",
            Reason::UnknownTransport => "unknown_transport",
            Reason::UntrustedWorkspace => "untrusted_workspace",
        }
    }

    /// Whether the lane is installed but held back by a safety gate (a trust block, or its tool's
    /// own folder-trust gate): said loudly with its fix, never folded into "not detected".
    pub fn is_safety_gate(self) -> bool {
        self.is_egress_block() || self == Reason::UntrustedWorkspace
    }

    /// True for the trust layer's blocks (trust.md §6.6): the lane was stopped before any probe,
    /// DNS lookup or connection because its destination could not be verified.
    pub fn is_egress_block(self) -> bool {
        matches!(
            self,
            Reason::EgressHostChanged
                | Reason::ConsentStoreUnreadable
                | Reason::EgressStoreUnreadable
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a lane cannot run: a reason from the closed set and a free-text detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The reason (tests assert on it).
    pub reason: Reason,
    /// What exactly was wrong.
    pub detail: String,
}

impl Refusal {
    /// Builds a refusal.
    pub fn new(reason: Reason, detail: impl Into<String>) -> Refusal {
        Refusal {
            reason,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.detail)
    }
}

/// A reviewer instance running through a lane (invocation.md §13).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instance {
    /// `--as`: the identity the review is written under.
    pub name: Option<String>,
    /// `--model`: answers the lane's model key instead of the config.
    pub model: Option<String>,
    /// `--agent`: inserted after `run` for the opencode lane.
    pub agent: Option<String>,
}

/// Inputs of one resolution besides the lane and the config.
#[derive(Debug, Clone, Default)]
pub struct PlanInputs {
    /// The run directory.
    pub run_dir: String,
    /// The absolute repository root.
    pub repo_root: String,
    /// `--prompt-file`: replaces the standard prompt path.
    pub prompt_file: Option<String>,
    /// Instance overrides.
    pub instance: Instance,
    /// Effort argv to inject instead of the one derived from config (tests, golden table).
    pub effort: Option<Vec<String>>,
}

/// The §4.5 file-reference instruction.
pub fn file_ref_text(prompt_path: &str, repo_root: &str) -> String {
    format!(
        "Read the file at {prompt_path} in full and carry out the review request it contains. The repository under review is at {repo_root} — resolve every relative file path in the review request against that absolute root. Output only the resulting markdown review. Do not edit any files."
    )
}

/// `<name>` with every character outside `[A-Za-z0-9._-]` replaced by `-`.
pub fn safe_instance_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

fn join(run_dir: &str, file: &str) -> String {
    format!("{}/{file}", run_dir.trim_end_matches('/'))
}

fn text<'v>(object: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    object.get(key).and_then(Value::as_str)
}

fn malformed(detail: impl Into<String>) -> Refusal {
    Refusal::new(Reason::MalformedLane, detail)
}

/// Resolves the plan of the lane declared by capability `capability_id`.
///
/// # Errors
///
/// A [`Refusal`] from the closed reason set, in the check order of §4.1.
pub fn resolve(
    capability_id: &str,
    lane: &Value,
    config: &ProjectConfig,
    inputs: &PlanInputs,
) -> Result<LanePlan, Refusal> {
    let body = lane
        .as_object()
        .ok_or_else(|| malformed("the lane is not a JSON object"))?;
    let slug = text(body, "slug").map(str::trim).unwrap_or("");
    if slug.is_empty() {
        return Err(malformed("slug is missing or empty"));
    }
    if !vocab::is_slug(slug) {
        return Err(malformed(format!(
            "slug {:?} does not match ^[a-z0-9][a-z0-9_-]*$",
            crate::output::neutralize(slug)
        )));
    }
    let handler = match body.get("handler") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) if vocab::HANDLER.contains(&name.as_str()) => Some(name.clone()),
        Some(other) => {
            return Err(Refusal::new(
                Reason::UnknownHandler,
                format!(
                    "handler {} is not one of the built-in modules",
                    crate::manifest::diagnostic::render_value(Some(other))
                ),
            ))
        }
    };
    let transport = match text(body, "transport") {
        Some("openai-http") => Transport::OpenAiHttp,
        Some("spawn") => Transport::Spawn,
        _ => {
            return Err(Refusal::new(
                Reason::UnknownTransport,
                "transport is neither spawn nor openai-http",
            ))
        }
    };
    let identity = inputs
        .instance
        .name
        .as_deref()
        .map_or_else(|| slug.to_owned(), safe_instance_name);
    let prompt_path = inputs
        .prompt_file
        .clone()
        .unwrap_or_else(|| join(&inputs.run_dir, "gsd-review-prompt.md"));
    let model = resolve_model(body, config, &inputs.instance);
    let shape = match transport {
        Transport::Spawn => PlanShape::Spawn(spawn_plan(
            body,
            slug,
            &identity,
            &prompt_path,
            model,
            config,
            inputs,
        )?),
        Transport::OpenAiHttp => PlanShape::Http(http_plan(body, model, config)?),
    };
    Ok(LanePlan {
        slug: slug.to_owned(),
        capability_id: capability_id.to_owned(),
        transport,
        prompt_path,
        review_path: join(&inputs.run_dir, &format!("gsd-review-{identity}.md")),
        err_path: join(&inputs.run_dir, &format!("gsd-review-{identity}.err")),
        timeout_ms: timeout_ms(body.get("timeoutFloorMs")),
        empty_output: if text(body, "emptyOutput") == Some("handler-owned") {
            EmptyOutputPolicy::HandlerOwned
        } else {
            EmptyOutputPolicy::StubWithStderr
        },
        handler,
        requires_binaries: crate::manifest::facts::string_items(body.get("requiresBinaries")),
        probe: probe(body.get("probe")),
        shape,
    })
}

/// `timeoutFloorMs` when a finite number > 0 (capped at 2^53-1), else 900 000.
fn timeout_ms(value: Option<&Value>) -> u64 {
    match value.and_then(Value::as_f64) {
        Some(ms) if ms.is_finite() && ms >= 1.0 => {
            // Bounded above, so the conversion is exact enough and cannot overflow.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let ms = ms.min(vocab::MAX_INTEGER) as u64;
            ms
        }
        _ => 900_000,
    }
}

fn probe(value: Option<&Value>) -> Probe {
    let Some(object) = value.and_then(Value::as_object) else {
        return Probe::Unusable;
    };
    let field = |key: &str| text(object, key).unwrap_or("").to_owned();
    let millis = || vocab::positive_integer(object.get("timeoutMs")).unwrap_or(2_000);
    match text(object, "kind") {
        Some("command-exists") => Probe::CommandExists {
            binary: field("binary"),
        },
        Some("command-capability") => Probe::CommandCapability {
            binary: field("binary"),
            needle: field("needle"),
            timeout_ms: millis(),
        },
        Some("http-reachable") => Probe::HttpReachable {
            host_config_key: field("hostConfigKey"),
            path: field("path"),
            timeout_ms: millis(),
        },
        _ => Probe::Unusable,
    }
}

/// The configured model (§3.3), or the instance's `--model`.
fn resolve_model(
    body: &Map<String, Value>,
    config: &ProjectConfig,
    instance: &Instance,
) -> Option<String> {
    let key = text(body, "modelConfigKey")?;
    match &instance.model {
        Some(model) => configured(Some(&Value::String(model.clone()))),
        None => config.configured_string(key),
    }
}

fn spawn_plan(
    body: &Map<String, Value>,
    slug: &str,
    identity: &str,
    prompt_path: &str,
    model: Option<String>,
    config: &ProjectConfig,
    inputs: &PlanInputs,
) -> Result<SpawnPlan, Refusal> {
    let empty = Map::new();
    let invoke = body
        .get("invoke")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let binary = text(invoke, "binary").map(str::trim).unwrap_or("");
    if binary.is_empty() {
        return Err(malformed("invoke.binary is missing or blank"));
    }
    let review_path = join(&inputs.run_dir, &format!("gsd-review-{identity}.md"));
    let (output_target, output) = if text(invoke, "outputChannel") == Some("file-arg") {
        let arg = text(invoke, "outputArg")
            .filter(|a| !a.is_empty())
            .ok_or_else(|| malformed("outputChannel is file-arg but outputArg is missing"))?;
        (
            OutputTarget::File(review_path.clone()),
            vec![arg.to_owned(), review_path],
        )
    } else {
        (OutputTarget::Stdout, Vec::new())
    };
    let (stdin, prompt) = match text(invoke, "promptChannel") {
        Some("stdin") => (Some(prompt_path.to_owned()), Vec::new()),
        Some("argv-file-ref") => (None, vec![file_ref_text(prompt_path, &inputs.repo_root)]),
        Some("argv") => (None, vec![prompt_path.to_owned()]),
        Some("none") => (None, Vec::new()),
        _ => {
            return Err(malformed(
                "invoke.promptChannel is not stdin, argv, argv-file-ref or none",
            ))
        }
    };
    let model_arg = text(invoke, "modelArg").filter(|a| !a.is_empty());
    let model = match (model_arg, model) {
        (Some(arg), Some(model)) => vec![arg.to_owned(), model],
        _ => Vec::new(),
    };
    let effort = if text(invoke, "effortChannel") == Some("argv") {
        inputs
            .effort
            .clone()
            .unwrap_or_else(|| effort_argv(config, slug))
            .into_iter()
            .filter(|arg| !arg.is_empty())
            .collect()
    } else {
        Vec::new()
    };
    let mut argv = Vec::new();
    for arg in invoke
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        match arg {
            "{{model}}" => argv.extend(model.iter().cloned()),
            "{{effort}}" => argv.extend(effort.iter().cloned()),
            "{{output}}" => argv.extend(output.iter().cloned()),
            "{{prompt}}" => argv.extend(prompt.iter().cloned()),
            literal => argv.push(literal.to_owned()),
        }
    }
    if let (Some(agent), "opencode") = (&inputs.instance.agent, slug) {
        let at = argv.iter().position(|a| a == "run").map_or(0, |i| i + 1);
        argv.splice(at..at, [String::from("--agent"), agent.clone()]);
    }
    Ok(SpawnPlan {
        binary: binary.to_owned(),
        argv,
        stdin,
        output_target,
    })
}

/// Resolves the destination of an `openai-http` lane (trust.md §6.2): the configured value at
/// `invoke.hostConfigKey` (invocation.md §3.2 "unset" rule), else `invoke.defaultHost` when it is
/// a string, normalized (§6.3). Returns `(hostConfigKey, host)`; an empty host means none.
///
/// This is the one resolver: plans, disclosure and consent all call it, so the host a user is
/// shown is the host stored in the consent record and the host checked on every run.
pub fn resolve_host(invoke: &Map<String, Value>, config: &ProjectConfig) -> (String, String) {
    let host_config_key = text(invoke, "hostConfigKey").unwrap_or("").to_owned();
    let raw = config
        .configured_string(&host_config_key)
        .or_else(|| text(invoke, "defaultHost").map(str::to_owned))
        .unwrap_or_default();
    (host_config_key, normalize_host(&raw))
}

fn http_plan(
    body: &Map<String, Value>,
    model: Option<String>,
    config: &ProjectConfig,
) -> Result<HttpPlan, Refusal> {
    let invoke = body
        .get("invoke")
        .and_then(Value::as_object)
        .ok_or_else(|| malformed("invoke is not a JSON object"))?;
    let (host_config_key, host) = resolve_host(invoke, config);
    if host.is_empty() {
        return Err(malformed(format!(
            "no host: {host_config_key} is unset and there is no defaultHost"
        )));
    }
    let origin = url::Url::parse(&host)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
        .ok_or_else(|| malformed(format!("host {host:?} is not an http or https URL")))?;
    let path = text(invoke, "path")
        .filter(|p| !p.is_empty())
        .unwrap_or("/v1/chat/completions");
    if !path.starts_with('/') {
        return Err(malformed(format!(
            "invoke.path {path:?} does not start with /"
        )));
    }
    let url = crate::config::join_lane_path(&host, path);
    let same_origin = url::Url::parse(&url).ok().is_some_and(|joined| {
        joined.scheme() == origin.scheme()
            && joined.host_str() == origin.host_str()
            && joined.port_or_known_default() == origin.port_or_known_default()
            && joined.username().is_empty()
            && joined.password().is_none()
    });
    if !same_origin {
        return Err(malformed(format!(
            "invoke.path {path:?} moves the request away from {host}"
        )));
    }
    if let Some(probe_key) = body
        .get("probe")
        .and_then(|p| p.get("hostConfigKey"))
        .and_then(Value::as_str)
    {
        if probe_key != host_config_key {
            return Err(malformed(format!(
                "probe.hostConfigKey {probe_key:?} differs from invoke.hostConfigKey {host_config_key:?}"
            )));
        }
    }
    Ok(HttpPlan {
        url,
        models_url: (text(invoke, "modelDiscovery") == Some("first-from-models-endpoint"))
            .then(|| crate::config::join_lane_path(&host, "/v1/models")),
        host,
        host_config_key,
        model,
        fallback_model: text(invoke, "fallbackModel")
            .unwrap_or("local-model")
            .to_owned(),
    })
}

/// The lane's prompt budget (review-workflow.md §8.1): `None` when the lane has none; the
/// number as written in the config (so `5000` stays an integer on the wire).
pub fn prompt_budget(lane: &Value, config: &ProjectConfig) -> Option<serde_json::Number> {
    let key = lane.get("promptBudgetKey")?.as_str()?;
    let finite = |value: Option<&Value>| {
        value
            .and_then(Value::as_number)
            .filter(|n| n.as_f64().is_some_and(f64::is_finite))
            .cloned()
    };
    match finite(config.get(key)) {
        Some(own) if own.as_f64() != Some(-1.0) => Some(own),
        _ => finite(config.get("review.max_prompt_tokens")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_the_closed_sorted_set() {
        let names: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(
            names,
            [
                "budget_tool_failed",
                "budget_too_small",
                "consent_store_unreadable",
                "egress_host_changed",
                "egress_store_unreadable",
                "host_unreachable",
                "malformed_lane",
                "missing_binary",
                "missing_required_binary",
                "probe_failed",
                "probe_timeout",
                "repository_writes_not_allowed",
                "unknown_handler",
                "unknown_transport",
                "untrusted_workspace",
            ]
        );
        for reason in Reason::ALL {
            assert_eq!(
                serde_json::to_value(reason).ok(),
                Some(serde_json::Value::String(reason.as_str().to_owned()))
            );
        }
    }
}
