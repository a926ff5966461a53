//! The closed vocabulary of manifest.md §2.5, in canonical member order.

use std::sync::{LazyLock, OnceLock};

use schemars::schema::{Schema, SchemaObject};
use schemars::JsonSchema;

use super::model;

/// The members of one closed vocabulary, read once from its type in [`super::model`].
pub type Members = LazyLock<Vec<&'static str>>;

/// `role`.
pub static ROLE: Members = LazyLock::new(members::<model::Role>);
/// `tier`.
pub static TIER: Members = LazyLock::new(members::<model::Tier>);
/// `reviewer.transport`.
pub static TRANSPORT: Members = LazyLock::new(members::<gsd_lane_sdk::Transport>);
/// `reviewer.probe.kind`.
pub static PROBE_KIND: Members = LazyLock::new(members::<gsd_lane_sdk::Probe>);
/// `reviewer.invoke.promptChannel`.
pub static PROMPT_CHANNEL: Members = LazyLock::new(members::<model::PromptChannel>);
/// `reviewer.invoke.outputChannel`.
pub static OUTPUT_CHANNEL: Members = LazyLock::new(members::<model::OutputChannel>);
/// `reviewer.invoke.effortChannel`.
pub static EFFORT_CHANNEL: Members = LazyLock::new(members::<model::EffortChannel>);
/// `reviewer.invoke.modelDiscovery`.
pub static MODEL_DISCOVERY: Members = LazyLock::new(members::<model::ModelDiscovery>);
/// `reviewer.emptyOutput`.
pub static EMPTY_OUTPUT: Members = LazyLock::new(members::<gsd_lane_sdk::EmptyOutputPolicy>);
/// `reviewer.evidenceClass`.
pub static EVIDENCE_CLASS: Members = LazyLock::new(members::<model::EvidenceClass>);
/// `reviewer.posture` (optional; absent means `read-only`).
pub static POSTURE: Members = LazyLock::new(members::<model::Posture>);
/// `config.<key>.type`.
pub static CONFIG_TYPE: Members = LazyLock::new(members::<model::ConfigType>);

/// The wire names of a vocabulary type, in declaration order, from its JSON Schema: the
/// `enum` of a plain enum, or of each `oneOf` member (documented variants), or the `kind`
/// of each member of an internally tagged enum (the probe).
fn members<T: JsonSchema>() -> Vec<&'static str> {
    let root = schemars::gen::SchemaGenerator::default().into_root_schema_for::<T>();
    let mut schema = root.schema;
    let variants: Vec<SchemaObject> = match schema.subschemas.take().and_then(|sub| sub.one_of) {
        Some(one_of) => one_of.into_iter().map(Schema::into_object).collect(),
        None => vec![schema],
    };
    variants
        .into_iter()
        .flat_map(|variant| {
            let tagged = variant
                .object
                .as_ref()
                .and_then(|object| object.properties.get("kind").cloned())
                .map(Schema::into_object);
            tagged.unwrap_or(variant).enum_values.unwrap_or_default()
        })
        .filter_map(|value| value.as_str().map(|text| &*Box::leak(text.into())))
        .collect()
}

/// `reviewer.handler` (besides `null`): the names of the registered handlers
/// ([`crate::registry::handlers`], the one list), in registry order.
pub fn handler_names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        crate::registry::handlers::names()
            .into_iter()
            .map(gsd_lane_sdk::HandlerName::as_str)
            .collect()
    })
}

/// What `reviewer.handler` accepts, as diagnostics list it: `null`, then [`handler_names`].
pub fn handler_members() -> &'static [&'static str] {
    static MEMBERS: OnceLock<Vec<&'static str>> = OnceLock::new();
    MEMBERS.get_or_init(|| [&["null"], handler_names()].concat())
}

/// The registered handler written as `text` (exact, case-sensitive), or `None`.
pub fn handler(text: &str) -> Option<gsd_lane_sdk::HandlerName> {
    crate::registry::handlers::name(text)
}

/// The known `reviewer` body fields, canonical order (the 13 of manifest.md §2.5, then the
/// optional `rateLimit` declaration of `run::rate_limit`, the optional `posture`, and the three
/// optional fields upstream added after 2026-08 (upstream-since-2026-08.md §1)).
pub const BODY_FIELDS: &[&str] = &[
    "slug",
    "flags",
    "transport",
    "probe",
    "invoke",
    "timeoutFloorMs",
    "emptyOutput",
    "reviewsSection",
    "evidenceClass",
    "requiresBinaries",
    "promptBudgetKey",
    "modelConfigKey",
    "handler",
    "rateLimit",
    "posture",
    "timeoutConfigKey",
    "effortConfigKey",
    "defaultEffort",
];

/// `reviewer.defaultEffort` (upstream #4275): the declarable levels; `inherit` is a config
/// value only, never a lane's default.
pub const DEFAULT_EFFORT: [&str; 6] = ["minimal", "low", "medium", "high", "xhigh", "max"];

/// Known `probe` keys.
pub const PROBE_FIELDS: &[&str] = &[
    "kind",
    "binary",
    "needle",
    "timeoutMs",
    "hostConfigKey",
    "path",
];

/// `invoke` fields only a spawn lane may use.
pub const SPAWN_ONLY: &[&str] = &[
    "binary",
    "args",
    "promptChannel",
    "outputChannel",
    "outputArg",
    "modelArg",
    "env",
];

/// `invoke` fields only an HTTP lane may use.
pub const HTTP_ONLY: &[&str] = &[
    "hostConfigKey",
    "defaultHost",
    "path",
    "modelDiscovery",
    "fallbackModel",
];

/// Keys forbidden on `role: "reviewer"` besides `runtime`.
pub const FEATURE_ONLY: &[&str] = &[
    "skills",
    "agents",
    "steps",
    "contributions",
    "gates",
    "hooks",
    "activationKey",
];

/// The four argv placeholders.
pub const PLACEHOLDERS: &[&str] = &[
    "{{model}}",
    "{{effort}}",
    "{{output}}",
    "{{prompt}}",
    "{{nativeTimeout}}",
];

/// Words that are never valid slugs or config keys.
pub const RESERVED_WORDS: &[&str] = &["__proto__", "constructor", "prototype"];

/// Largest accepted integer (2^53 − 1).
pub const MAX_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Membership test: exact, case-sensitive, strings only.
pub fn is_member(members: &[&str], value: Option<&serde_json::Value>) -> bool {
    value
        .and_then(serde_json::Value::as_str)
        .is_some_and(|text| members.contains(&text))
}

/// True for `^[a-z][a-z0-9-]*$` (capability ids).
pub fn is_id(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// True for `^[a-z0-9][a-z0-9_-]*$` (lane slugs).
pub fn is_slug(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// True for `^--[a-z0-9][a-z0-9-]*$` (lane flags).
pub fn is_flag(text: &str) -> bool {
    text.strip_prefix("--").is_some_and(|rest| {
        let mut chars = rest.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    })
}

/// Reads a JSON number as an integer in `1..=2^53-1` (`1e3` and `1000.0` count as integral).
pub fn positive_integer(value: Option<&serde_json::Value>) -> Option<u64> {
    let number = value?.as_f64()?;
    let integral = number.fract() == 0.0 && (1.0..=MAX_INTEGER).contains(&number);
    // The range check above makes the conversion exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    integral.then_some(number as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn member_lists_come_from_the_model_in_canonical_order() {
        assert_eq!(*ROLE, ["feature", "runtime", "reviewer"]);
        assert_eq!(*TIER, ["core", "standard", "full"]);
        assert_eq!(*TRANSPORT, ["spawn", "openai-http"]);
        assert_eq!(
            *PROBE_KIND,
            ["command-exists", "command-capability", "http-reachable"]
        );
        assert_eq!(*PROMPT_CHANNEL, ["stdin", "argv", "argv-file-ref", "none"]);
        assert_eq!(*OUTPUT_CHANNEL, ["stdout", "file-arg"]);
        assert_eq!(*EFFORT_CHANNEL, ["none", "argv", "env"]);
        assert_eq!(*MODEL_DISCOVERY, ["none", "first-from-models-endpoint"]);
        assert_eq!(*EMPTY_OUTPUT, ["stub-with-stderr", "handler-owned"]);
        assert_eq!(*EVIDENCE_CLASS, ["source-grounded", "diff-only"]);
        assert_eq!(*POSTURE, ["read-only", "writes-repository"]);
        assert_eq!(*CONFIG_TYPE, ["boolean", "string", "number", "enum"]);
    }

    #[test]
    fn grammars() {
        assert!(is_id("lm-studio") && !is_id("lm_studio") && !is_id("4x") && !is_id(""));
        for ok in [
            "gemini",
            "lm_studio",
            "kimi-code",
            "4o-mini",
            "2b-local",
            "gsd-anything",
        ] {
            assert!(is_slug(ok), "{ok}");
        }
        for bad in [
            "Lm-Studio",
            "lm studio",
            "--x",
            "-x",
            "_x",
            "a.b",
            "..",
            "../evil",
            " gemini ",
        ] {
            assert!(!is_slug(bad), "{bad}");
        }
        assert!(
            is_flag("--lm-studio") && !is_flag("--lm_studio") && !is_flag("--") && !is_flag("-a")
        );
    }

    #[test]
    fn integers() {
        assert_eq!(positive_integer(Some(&json!(1000))), Some(1000));
        assert_eq!(positive_integer(Some(&json!(1e3))), Some(1000));
        assert_eq!(positive_integer(Some(&json!(1.5))), None);
        assert_eq!(positive_integer(Some(&json!(0))), None);
        assert_eq!(
            positive_integer(Some(&json!(9_007_199_254_740_992_u64))),
            None
        );
        assert_eq!(positive_integer(Some(&json!("5"))), None);
    }
}
