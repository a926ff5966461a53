//! The typed lane: a `reviewer` body converted once into the values every later stage uses.
//!
//! The registry converts each manifest the validator accepted ([`LaneSpec::from_manifest`]);
//! plan, trust, run, review, list and disclose read the typed fields and never the JSON again.
//!
//! The conversion is total and lenient in the way plan resolution always was (invocation.md
//! §4.1): it refuses only what no plan can be made of (not an object, a bad slug, a handler
//! outside the registry, an unknown transport, an HTTP `invoke` that is not an object, a spawn
//! `promptChannel` outside the vocabulary) and reads every other field with its documented
//! default. A validated manifest never meets a refusal; the raw entry point of planning
//! ([`crate::plan::resolve`]) and its tests rely on the refusals.

use gsd_lane_sdk::{EmptyOutputPolicy, HandlerName, Probe, Transport};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::facts::string_items;
use super::model::{
    EffortChannel, EvidenceClass, ModelDiscovery, OutputChannel, Posture, PromptChannel,
};
pub use super::model::{HttpInvoke, SpawnInvoke};
use super::probe::ProbeKind;
use super::rate_limit::Rule;
use super::vocab;
use crate::refusal::{Reason, Refusal};

/// `timeoutFloorMs` when a body carries no usable one.
const DEFAULT_TIMEOUT_MS: u64 = 900_000;
/// A probe's `timeoutMs` when a body carries no usable one.
const DEFAULT_PROBE_TIMEOUT_MS: u64 = 2_000;

/// One lane, typed: everything a `reviewer` body declares that gsd-lane acts on.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneSpec {
    /// Lane identity (artifact names, selection, config keys).
    pub slug: String,
    /// Selection flags, canonical first.
    pub flags: Vec<String>,
    /// REVIEWS.md heading (empty only for a raw body that declares none).
    pub section: String,
    /// The registered handler the lane declares, or `None` for a data-only lane.
    pub handler: Option<HandlerName>,
    /// How the lane is invoked; its variant is the transport.
    pub invoke: Invoke,
    /// The availability check.
    pub probe: Probe,
    /// Outer wall-clock bound of one invocation, in milliseconds.
    pub timeout_floor_ms: u64,
    /// What happens to an empty review.
    pub empty_output: EmptyOutputPolicy,
    /// How much the reviewer saw.
    pub evidence_class: EvidenceClass,
    /// Extra executables that must be on `PATH`.
    pub requires_binaries: Vec<String>,
    /// Dotted config key of the lane's prompt-token budget.
    pub prompt_budget_key: Option<String>,
    /// Dotted config key of the model override.
    pub model_config_key: Option<String>,
    /// How the lane's CLI answers when rate-limited, if declared.
    pub rate_limit: Option<Rule>,
    /// What the lane's CLI does to the repository under review.
    pub posture: Posture,
    /// The config keys the capability owns (`config`), in manifest order.
    pub config_keys: Vec<String>,
    /// The declared default of each owned key that has one (`config.<key>.default`), in
    /// manifest order: what the key resolves to when no config sets it (ADR-2782 D9).
    pub config_defaults: Vec<(String, Value)>,
    /// The lane-declared timeout and effort policy (upstream-since-2026-08.md §5, §7).
    pub policy: super::lane_policy::LanePolicy,
}

/// `reviewer.invoke`, by transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invoke {
    /// `transport: "spawn"`.
    Spawn(SpawnInvoke),
    /// `transport: "openai-http"`.
    Http(HttpInvoke),
}

impl HttpInvoke {
    /// Reads an HTTP `invoke` object (the one reader; trust's host resolution uses it too).
    pub fn from_object(invoke: &Map<String, Value>) -> HttpInvoke {
        HttpInvoke {
            host_config_key: text(invoke, "hostConfigKey").unwrap_or("").to_owned(),
            default_host: owned(invoke, "defaultHost"),
            path: owned(invoke, "path").filter(|path| !path.is_empty()),
            model_discovery: member(invoke.get("modelDiscovery")).unwrap_or(ModelDiscovery::None),
            fallback_model: owned(invoke, "fallbackModel"),
            effort_channel: member(invoke.get("effortChannel")).unwrap_or(EffortChannel::None),
        }
    }
}

impl LaneSpec {
    /// The typed lane of a whole manifest (its `reviewer` body and its config keys).
    ///
    /// # Errors
    ///
    /// The body's [`Refusal`] (see the module documentation); never for a validated manifest.
    pub fn from_manifest(manifest: &Value) -> Result<LaneSpec, Refusal> {
        let mut spec = LaneSpec::from_body(manifest.get("reviewer").unwrap_or(&Value::Null))?;
        spec.config_keys = manifest
            .get("config")
            .and_then(Value::as_object)
            .map(|config| config.keys().cloned().collect())
            .unwrap_or_default();
        spec.config_defaults = super::declared::config_defaults(manifest);
        Ok(spec)
    }

    /// The typed lane of a `reviewer` body alone.
    ///
    /// # Errors
    ///
    /// A [`Refusal`] from the closed reason set, in the check order of invocation.md §4.1.
    pub fn from_body(lane: &Value) -> Result<LaneSpec, Refusal> {
        let body = lane
            .as_object()
            .ok_or_else(|| malformed("the lane is not a JSON object"))?;
        let slug = slug(body)?;
        let handler = handler(body.get("handler"))?;
        let invoke = invoke(body)?;
        fits_transport(handler, &invoke)?;
        Ok(LaneSpec {
            slug,
            flags: string_items(body.get("flags")),
            section: text(body, "reviewsSection").unwrap_or("").to_owned(),
            handler,
            invoke,
            probe: probe(body.get("probe")),
            timeout_floor_ms: timeout_ms(body.get("timeoutFloorMs")),
            empty_output: member(body.get("emptyOutput"))
                .unwrap_or(EmptyOutputPolicy::StubWithStderr),
            evidence_class: member(body.get("evidenceClass"))
                .unwrap_or(EvidenceClass::SourceGrounded),
            requires_binaries: string_items(body.get("requiresBinaries")),
            prompt_budget_key: owned(body, "promptBudgetKey"),
            model_config_key: owned(body, "modelConfigKey"),
            rate_limit: Rule::of(lane),
            posture: member(body.get("posture")).unwrap_or_default(),
            config_keys: Vec::new(),
            config_defaults: Vec::new(),
            policy: super::lane_policy::LanePolicy::of(body),
        })
    }

    /// The declared transport.
    pub fn transport(&self) -> Transport {
        match self.invoke {
            Invoke::Spawn(_) => Transport::Spawn,
            Invoke::Http(_) => Transport::OpenAiHttp,
        }
    }

    /// The spawn `invoke`, if this is a spawn lane.
    pub fn spawn(&self) -> Option<&SpawnInvoke> {
        match &self.invoke {
            Invoke::Spawn(spawn) => Some(spawn),
            Invoke::Http(_) => None,
        }
    }

    /// The HTTP `invoke`, if this is an HTTP lane.
    pub fn http(&self) -> Option<&HttpInvoke> {
        match &self.invoke {
            Invoke::Http(http) => Some(http),
            Invoke::Spawn(_) => None,
        }
    }

    /// The handler that drives the lane: the declared one, else `openai-compatible` for an
    /// HTTP lane; `None` for a data-only spawn lane.
    pub fn effective_handler(&self) -> Option<&'static str> {
        driving_handler(self.handler, self.transport())
    }

    /// Whether the lane reads a prompt at all (`promptChannel: none` spawn lanes do not).
    pub fn takes_prompt(&self) -> bool {
        self.spawn()
            .is_none_or(|spawn| spawn.prompt_channel != PromptChannel::None)
    }
}

/// The transport written exactly as `name` (case-sensitive), or `None`.
pub fn transport_named(name: &str) -> Option<Transport> {
    member(Some(&Value::String(name.to_owned())))
}

/// The handler that drives a lane declaring `handler` over `transport`: the declared one, else
/// `openai-compatible` for every HTTP lane; `None` for a data-only spawn lane.
pub fn driving_handler(handler: Option<HandlerName>, transport: Transport) -> Option<&'static str> {
    match (handler, transport) {
        (Some(name), _) => Some(name.as_str()),
        (None, Transport::OpenAiHttp) => Some("openai-compatible"),
        (None, Transport::Spawn) => None,
    }
}

fn malformed(detail: impl Into<String>) -> Refusal {
    Refusal::new(Reason::MalformedLane, detail)
}

fn text<'v>(object: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    object.get(key).and_then(Value::as_str)
}

fn owned(object: &Map<String, Value>, key: &str) -> Option<String> {
    text(object, key).map(str::to_owned)
}

/// A string member of a typed vocabulary (exact, case-sensitive), or `None`.
fn member<T: DeserializeOwned>(value: Option<&Value>) -> Option<T> {
    value
        .filter(|value| value.is_string())
        .and_then(|value| T::deserialize(value).ok())
}

/// The slug, trimmed; empty or outside the grammar is malformed.
fn slug(body: &Map<String, Value>) -> Result<String, Refusal> {
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
    Ok(slug.to_owned())
}

/// `handler`: null or absent, else a registered handler's name.
fn handler(value: Option<&Value>) -> Result<Option<HandlerName>, Refusal> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(name)) if vocab::handler(name).is_some() => Ok(vocab::handler(name)),
        Some(other) => Err(Refusal::new(
            Reason::UnknownHandler,
            format!(
                "handler {} is not one of the built-in modules",
                super::diagnostic::render_value(Some(other))
            ),
        )),
    }
}

/// A declared handler must drive the lane's transport (the rule each handler declares in the
/// registry); anything else is malformed before a plan is made.
fn fits_transport(handler: Option<HandlerName>, invoke: &Invoke) -> Result<(), Refusal> {
    let transport = match invoke {
        Invoke::Spawn(_) => Transport::Spawn,
        Invoke::Http(_) => Transport::OpenAiHttp,
    };
    let Some(name) = handler else {
        return Ok(());
    };
    match crate::registry::handlers::transport_of(name.as_str()) {
        Some(drives) if drives != transport => Err(malformed(format!(
            "handler {} drives {} lanes, not {}",
            name.as_str(),
            drives.as_str(),
            transport.as_str()
        ))),
        _ => Ok(()),
    }
}

/// `invoke`, shaped by `transport`.
fn invoke(body: &Map<String, Value>) -> Result<Invoke, Refusal> {
    let transport = member::<Transport>(body.get("transport")).ok_or_else(|| {
        Refusal::new(
            Reason::UnknownTransport,
            "transport is neither spawn nor openai-http",
        )
    })?;
    let object = body.get("invoke").and_then(Value::as_object);
    match transport {
        Transport::Spawn => spawn_invoke(object.unwrap_or(&Map::new())).map(Invoke::Spawn),
        Transport::OpenAiHttp => object
            .map(|invoke| Invoke::Http(HttpInvoke::from_object(invoke)))
            .ok_or_else(|| malformed("invoke is not a JSON object")),
    }
}

fn spawn_invoke(invoke: &Map<String, Value>) -> Result<SpawnInvoke, Refusal> {
    let prompt_channel = member(invoke.get("promptChannel")).ok_or_else(|| {
        malformed("invoke.promptChannel is not stdin, argv, argv-file-ref or none")
    })?;
    Ok(SpawnInvoke {
        binary: text(invoke, "binary").unwrap_or("").to_owned(),
        args: string_items(invoke.get("args")),
        prompt_channel,
        output_channel: member(invoke.get("outputChannel")).unwrap_or(OutputChannel::Stdout),
        output_arg: owned(invoke, "outputArg").filter(|arg| !arg.is_empty()),
        model_arg: owned(invoke, "modelArg").filter(|arg| !arg.is_empty()),
        effort_channel: member(invoke.get("effortChannel")).unwrap_or(EffortChannel::None),
        env: super::invoke_env::pairs(invoke),
    })
}

/// `timeoutFloorMs` when a finite number ≥ 1 (capped at 2^53-1), else 900 000.
fn timeout_ms(value: Option<&Value>) -> u64 {
    match value.and_then(Value::as_f64) {
        Some(ms) if ms.is_finite() && ms >= 1.0 => {
            // Bounded above, so the conversion is exact enough and cannot overflow.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let ms = ms.min(vocab::MAX_INTEGER) as u64;
            ms
        }
        _ => DEFAULT_TIMEOUT_MS,
    }
}

/// The probe; anything that cannot be evaluated is [`Probe::Unusable`].
fn probe(value: Option<&Value>) -> Probe {
    let Some(object) = value.and_then(Value::as_object) else {
        return Probe::Unusable;
    };
    let field = |key: &str| text(object, key).unwrap_or("").to_owned();
    let millis =
        || vocab::positive_integer(object.get("timeoutMs")).unwrap_or(DEFAULT_PROBE_TIMEOUT_MS);
    let Some(kind) = super::probe::ProbeKind::of_value(object.get("kind")) else {
        return Probe::Unusable;
    };
    match kind {
        ProbeKind::CommandExists => Probe::CommandExists {
            binary: field("binary"),
        },
        ProbeKind::CommandCapability => Probe::CommandCapability {
            binary: field("binary"),
            needle: field("needle"),
            timeout_ms: millis(),
        },
        ProbeKind::HttpReachable => Probe::HttpReachable {
            host_config_key: field("hostConfigKey"),
            path: field("path"),
            timeout_ms: millis(),
        },
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reason(body: Value) -> Option<Reason> {
        LaneSpec::from_body(&body)
            .err()
            .map(|refusal| refusal.reason)
    }

    #[test]
    fn refusals_follow_the_resolution_order() {
        assert_eq!(reason(json!([])), Some(Reason::MalformedLane));
        assert_eq!(reason(json!({"slug": " "})), Some(Reason::MalformedLane));
        assert_eq!(
            reason(json!({"slug": "a", "handler": "frobnicate", "transport": "grpc"})),
            Some(Reason::UnknownHandler)
        );
        assert_eq!(
            reason(json!({"slug": "a", "transport": "grpc"})),
            Some(Reason::UnknownTransport)
        );
        assert_eq!(
            reason(json!({"slug": "a", "transport": "openai-http", "invoke": 3})),
            Some(Reason::MalformedLane)
        );
        assert_eq!(
            reason(json!({"slug": "a", "transport": "spawn", "invoke": {"promptChannel": "x"}})),
            Some(Reason::MalformedLane)
        );
    }

    #[test]
    fn defaults_fill_what_a_raw_body_leaves_out() {
        let spec = LaneSpec::from_body(
            &json!({"slug": " a ", "transport": "spawn", "invoke": {"promptChannel": "none"}}),
        )
        .expect("plannable");
        assert_eq!(spec.slug, "a");
        assert_eq!(spec.timeout_floor_ms, DEFAULT_TIMEOUT_MS);
        assert_eq!(spec.probe, Probe::Unusable);
        assert_eq!(spec.posture, Posture::ReadOnly);
        assert!(!spec.takes_prompt());
        assert_eq!(spec.effective_handler(), None);
    }
}
