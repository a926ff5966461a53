//! Plan resolution (invocation.md §4): a typed lane plus config in, a typed plan or a typed
//! refusal out. Pure and total: no I/O, no panic, whatever the lane holds ([`resolve`] takes a
//! raw body and converts it first).

pub(crate) mod entry;

use gsd_lane_sdk::{HttpPlan, LanePlan, OutputTarget, PlanShape, Probe, SpawnPlan};
use serde_json::Value;

use crate::config::effort::{render_effort, EffortLevel};
use crate::config::{configured, normalize_host, ProjectConfig};
use crate::manifest::lane::{HttpInvoke, Invoke, SpawnInvoke};
use crate::manifest::model::{EffortChannel, ModelDiscovery, OutputChannel, PromptChannel};
use crate::manifest::LaneSpec;

pub use crate::refusal::{Reason, Refusal};

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

fn malformed(detail: impl Into<String>) -> Refusal {
    Refusal::new(Reason::MalformedLane, detail)
}

/// Resolves the plan of a raw `reviewer` body declared by capability `capability_id`: the body
/// is converted to a [`LaneSpec`] (refusing what no plan can be made of), then resolved.
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
    resolve_lane(capability_id, &LaneSpec::from_body(lane)?, config, inputs)
}

/// Resolves the plan of a typed lane declared by capability `capability_id`.
///
/// # Errors
///
/// A [`Refusal`] from the closed reason set, in the check order of §4.1.
pub fn resolve_lane(
    capability_id: &str,
    lane: &LaneSpec,
    config: &ProjectConfig,
    inputs: &PlanInputs,
) -> Result<LanePlan, Refusal> {
    let identity = inputs
        .instance
        .name
        .as_deref()
        .map_or_else(|| lane.slug.clone(), safe_instance_name);
    let paths = Paths::of(&identity, inputs);
    let model = resolve_model(lane, config, &inputs.instance);
    // Outer timeout (upstream #4083): the lane's timeout key in seconds, else the floor; for
    // both transports.
    let timeout_ms = lane.policy.timeout_ms(lane.timeout_floor_ms, config);
    let shape = match &lane.invoke {
        Invoke::Spawn(invoke) => PlanShape::Spawn(spawn_plan(
            invoke, lane, &paths, model, config, inputs, timeout_ms,
        )?),
        Invoke::Http(invoke) => PlanShape::Http(http_plan(invoke, &lane.probe, model, config)?),
    };
    Ok(LanePlan {
        slug: lane.slug.clone(),
        capability_id: capability_id.to_owned(),
        transport: lane.transport(),
        prompt_path: paths.prompt,
        review_path: paths.review,
        err_path: paths.err,
        timeout_ms,
        empty_output: lane.empty_output,
        handler: lane.handler,
        requires_binaries: lane.requires_binaries.clone(),
        probe: lane.probe.clone(),
        shape,
    })
}

/// The files of one identity's invocation.
struct Paths {
    /// The prompt file.
    prompt: String,
    /// The review file.
    review: String,
    /// The stderr sidecar.
    err: String,
}

impl Paths {
    fn of(identity: &str, inputs: &PlanInputs) -> Paths {
        Paths {
            prompt: inputs
                .prompt_file
                .clone()
                .unwrap_or_else(|| join(&inputs.run_dir, "gsd-review-prompt.md")),
            review: join(&inputs.run_dir, &format!("gsd-review-{identity}.md")),
            err: join(&inputs.run_dir, &format!("gsd-review-{identity}.err")),
        }
    }
}

/// The configured model (§3.3), or the instance's `--model`.
fn resolve_model(lane: &LaneSpec, config: &ProjectConfig, instance: &Instance) -> Option<String> {
    let key = lane.model_config_key.as_deref()?;
    match &instance.model {
        Some(model) => configured(Some(&Value::String(model.clone()))),
        None => config.configured_string(key),
    }
}

/// The argv values each placeholder expands to.
struct Expansions {
    model: Vec<String>,
    effort: Vec<String>,
    output: Vec<String>,
    prompt: Vec<String>,
    /// `{{nativeTimeout}}` (upstream #4083): always one element.
    native_timeout: String,
}

impl Expansions {
    /// The elements `arg` stands for: its expansion when a placeholder, else itself.
    fn expand(&self, arg: &str) -> Vec<String> {
        match arg {
            "{{model}}" => self.model.clone(),
            "{{effort}}" => self.effort.clone(),
            "{{output}}" => self.output.clone(),
            "{{prompt}}" => self.prompt.clone(),
            "{{nativeTimeout}}" => vec![self.native_timeout.clone()],
            literal => vec![literal.to_owned()],
        }
    }
}

fn spawn_plan(
    invoke: &SpawnInvoke,
    lane: &LaneSpec,
    paths: &Paths,
    model: Option<String>,
    config: &ProjectConfig,
    inputs: &PlanInputs,
    timeout_ms: u64,
) -> Result<SpawnPlan, Refusal> {
    let binary = invoke.binary.trim();
    if binary.is_empty() {
        return Err(malformed("invoke.binary is missing or blank"));
    }
    let (output_target, output) = output_of(invoke, &paths.review)?;
    let (stdin, prompt) = match invoke.prompt_channel {
        PromptChannel::Stdin => (Some(paths.prompt.clone()), Vec::new()),
        PromptChannel::ArgvFileRef => (None, vec![file_ref_text(&paths.prompt, &inputs.repo_root)]),
        PromptChannel::Argv => (None, vec![paths.prompt.clone()]),
        PromptChannel::None => (None, Vec::new()),
    };
    let expansions = Expansions {
        model: match (&invoke.model_arg, model) {
            (Some(arg), Some(model)) => vec![arg.clone(), model],
            _ => Vec::new(),
        },
        effort: effort_of(invoke, lane, config, inputs),
        output,
        prompt,
        native_timeout: crate::manifest::lane_policy::native_timeout(timeout_ms),
    };
    let mut argv: Vec<String> = invoke
        .args
        .iter()
        .flat_map(|arg| expansions.expand(arg))
        .collect();
    if let (Some(agent), "opencode") = (&inputs.instance.agent, lane.slug.as_str()) {
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

/// Where the review comes from, and what `{{output}}` expands to.
fn output_of(
    invoke: &SpawnInvoke,
    review_path: &str,
) -> Result<(OutputTarget, Vec<String>), Refusal> {
    match invoke.output_channel {
        OutputChannel::FileArg => {
            let arg = invoke
                .output_arg
                .as_ref()
                .ok_or_else(|| malformed("outputChannel is file-arg but outputArg is missing"))?;
            Ok((
                OutputTarget::File(review_path.to_owned()),
                vec![arg.clone(), review_path.to_owned()],
            ))
        }
        OutputChannel::Stdout => Ok((OutputTarget::Stdout, Vec::new())),
    }
}

/// The effort argv `{{effort}}` expands to (`effortChannel: argv` only).
fn effort_of(
    invoke: &SpawnInvoke,
    lane: &LaneSpec,
    config: &ProjectConfig,
    inputs: &PlanInputs,
) -> Vec<String> {
    if invoke.effort_channel != EffortChannel::Argv {
        return Vec::new();
    }
    let argv = match &inputs.effort {
        Some(injected) => injected.clone(),
        None => effort_level(lane, config)
            .map(|level| render_effort(level, &lane.slug))
            .unwrap_or_default(),
    };
    argv.into_iter().filter(|arg| !arg.is_empty()).collect()
}

/// The effort level a spawn lane's argv carries (upstream #4275, §7.3): the configured valid
/// value at its `effortConfigKey`, else its `defaultEffort`, rendered and clamped for its host
/// (`minimal` runs as `low` on codex); `None` when no effort argument goes into argv (no key,
/// `inherit`, `effortChannel` other than `argv`, a host that takes none). No agent's effort
/// settings are consulted. This is the level the stub's `Diagnosis:` line and the recorded
/// model's ` (reasoning=<level>)` suffix name.
pub fn effort_level(lane: &LaneSpec, config: &ProjectConfig) -> Option<EffortLevel> {
    let Invoke::Spawn(invoke) = &lane.invoke else {
        return None;
    };
    if invoke.effort_channel != EffortChannel::Argv {
        return None;
    }
    let (level, _) = lane.policy.effort(config)?;
    let ran = crate::config::effort::rendered_level(EffortLevel::parse(&level)?, &lane.slug)?;
    (!render_effort(ran, &lane.slug).is_empty()).then_some(ran)
}

/// Resolves the destination of an `openai-http` lane (trust.md §6.2): the configured value at
/// `invoke.hostConfigKey` (invocation.md §3.2 "unset" rule), else `invoke.defaultHost` when it is
/// a string, normalized (§6.3). Returns `(hostConfigKey, host)`; an empty host means none.
///
/// This is the one resolver: plans, disclosure and consent all call it, so the host a user is
/// shown is the host stored in the consent record and the host checked on every run.
pub fn resolve_host(invoke: &HttpInvoke, config: &ProjectConfig) -> (String, String) {
    let raw = config
        .configured_string(&invoke.host_config_key)
        .or_else(|| invoke.default_host.clone())
        .unwrap_or_default();
    (invoke.host_config_key.clone(), normalize_host(&raw))
}

fn http_plan(
    invoke: &HttpInvoke,
    probe: &Probe,
    model: Option<String>,
    config: &ProjectConfig,
) -> Result<HttpPlan, Refusal> {
    let (host_config_key, host) = resolve_host(invoke, config);
    if host.is_empty() {
        return Err(malformed(format!(
            "no host: {host_config_key} is unset and there is no defaultHost"
        )));
    }
    let path = invoke.path.as_deref().unwrap_or("/v1/chat/completions");
    let url = chat_url(&host, path)?;
    if let Probe::HttpReachable {
        host_config_key: probe_key,
        ..
    } = probe
    {
        if *probe_key != host_config_key {
            return Err(malformed(format!(
                "probe.hostConfigKey {probe_key:?} differs from invoke.hostConfigKey {host_config_key:?}"
            )));
        }
    }
    Ok(HttpPlan {
        url,
        models_url: (invoke.model_discovery == ModelDiscovery::FirstFromModelsEndpoint)
            .then(|| crate::config::join_lane_path(&host, "/v1/models")),
        host,
        host_config_key,
        model,
        fallback_model: invoke
            .fallback_model
            .clone()
            .unwrap_or_else(|| "local-model".to_owned()),
    })
}

/// `host` + `path`, refused unless it stays on the host's origin.
fn chat_url(host: &str, path: &str) -> Result<String, Refusal> {
    let origin = url::Url::parse(host)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
        .ok_or_else(|| malformed(format!("host {host:?} is not an http or https URL")))?;
    if !path.starts_with('/') {
        return Err(malformed(format!(
            "invoke.path {path:?} does not start with /"
        )));
    }
    let url = crate::config::join_lane_path(host, path);
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
    Ok(url)
}

/// The lane's prompt budget (review-workflow.md §8.1): `None` when the lane has none; the
/// number as written in the config (so `5000` stays an integer on the wire).
pub fn prompt_budget(lane: &LaneSpec, config: &ProjectConfig) -> Option<serde_json::Number> {
    let key = lane.prompt_budget_key.as_deref()?;
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

    /// A lane that keeps `effortChannel: argv` but declares no `effortConfigKey` runs with no
    /// effort argument: no agent's effort settings are consulted (upstream #4275), however the
    /// `effort` object is set.
    #[test]
    #[allow(clippy::expect_used)]
    fn no_effort_key_means_no_effort_whatever_the_agent_settings() {
        let text = include_str!("../../capabilities/claude/capability.json");
        let mut manifest: serde_json::Value = serde_json::from_str(text).expect("claude manifest");
        let body = manifest["reviewer"].as_object_mut().expect("reviewer");
        body.remove("effortConfigKey");
        body.remove("defaultEffort");
        let lane = LaneSpec::from_manifest(&manifest).expect("lane");
        let config = ProjectConfig::from_value(serde_json::json!({"effort": {
            "default": "max",
            "agent_overrides": {"gsd-plan-checker": "xhigh"},
            "routing_tier_defaults": {"light": "minimal"}
        }}));
        let inputs = PlanInputs {
            run_dir: "/run".to_owned(),
            repo_root: "/repo".to_owned(),
            ..PlanInputs::default()
        };
        let plan = resolve_lane("claude", &lane, &config, &inputs).expect("plan");
        assert_eq!(
            plan.spawn().map(|s| s.argv.clone()),
            Some(vec!["-p".to_owned(), "-".to_owned()])
        );
    }
}
