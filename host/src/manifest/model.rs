//! Typed model of a capability manifest's lane-relevant parts: the vocabulary's one source.
//!
//! Validation works on the raw JSON value (so it is total and reports every problem); its
//! member lists ([`super::vocab`]), the typed lane ([`super::lane`]) and the JSON Schema
//! (`gsd-lane schema`) all come from these types. The probe, transport and empty-output types
//! are the SDK's (the plan a handler sees carries them); handler names come from the handler
//! registry.

use std::collections::BTreeMap;

use gsd_lane_sdk::{EmptyOutputPolicy as EmptyOutput, Probe, Transport};
use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Metadata, Schema, SchemaObject, SubschemaValidation};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// A capability manifest (`capabilities/<id>/capability.json`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "gsd-lane capability manifest")]
pub struct CapabilityManifest {
    /// Lower-case kebab id; equals the folder name.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9-]*$"))]
    pub id: String,
    /// Role of the capability.
    pub role: Role,
    /// Strict SemVer 2.0.0 version.
    pub version: String,
    /// Display title.
    #[schemars(length(min = 1))]
    pub title: String,
    /// One-sentence description.
    #[schemars(length(min = 1))]
    pub description: String,
    /// Install tier.
    pub tier: Tier,
    /// Capability ids this one depends on (`[]` for none).
    pub requires: Vec<String>,
    /// Host compatibility gate.
    pub engines: Option<Engines>,
    /// The lane declaration.
    pub reviewer: Option<ReviewerBody>,
    /// Config keys this capability owns.
    pub config: Option<BTreeMap<String, ConfigSlice>>,
}

/// `role`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Never a lane.
    Feature,
    /// An install target; may also carry a lane.
    Runtime,
    /// A lane that is not an install target.
    Reviewer,
}

/// `tier`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// Core.
    Core,
    /// Standard.
    Standard,
    /// Full.
    Full,
}

/// `engines`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Engines {
    /// Range of GSD versions this capability supports, e.g. `>=1.8.0`.
    pub gsd: Option<String>,
}

/// The `reviewer` body: one lane.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewerBody {
    /// Lane identity (artifact names, selection, config keys).
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]*$"))]
    pub slug: String,
    /// Selection flags; the first is canonical.
    #[schemars(length(min = 1))]
    pub flags: Vec<Flag>,
    /// How the lane is reached.
    pub transport: Transport,
    /// Availability check.
    pub probe: Probe,
    /// How the lane is invoked (shape selected by `transport`).
    pub invoke: Invoke,
    /// Outer wall-clock bound of one invocation, in milliseconds.
    #[schemars(range(min = 1, max = 9_007_199_254_740_991_u64))]
    pub timeout_floor_ms: u64,
    /// What happens to an empty review.
    pub empty_output: EmptyOutput,
    /// Heading in REVIEWS.md (unique across lanes).
    #[schemars(length(min = 1))]
    pub reviews_section: String,
    /// How much the reviewer saw.
    pub evidence_class: EvidenceClass,
    /// Extra executables that must be on PATH.
    pub requires_binaries: Vec<String>,
    /// Dotted config key of the lane's prompt-token budget, or null (the key is required).
    pub prompt_budget_key: Nullable<String>,
    /// Dotted config key of the model override, or null.
    pub model_config_key: Option<String>,
    /// First-party handler module, or null for a data-only lane (the key is required).
    pub handler: Nullable<HandlerName>,
    /// How the lane's CLI answers when rate-limited or out of quota (optional; retried within
    /// bounds, see `run::rate_limit`).
    #[serde(default)]
    pub rate_limit: Option<RateLimit>,
    /// What the lane's CLI does to the repository under review (absent: `read-only`). A
    /// `writes-repository` lane runs only when the user lists its slug in
    /// `review.allow_repository_writes`.
    #[serde(default)]
    pub posture: Option<Posture>,
    /// Dotted config key whose positive number of seconds overrides `timeoutFloorMs` (both
    /// transports; absent or null: no override).
    #[serde(default)]
    pub timeout_config_key: Option<String>,
    /// Dotted config key holding the lane's review effort level (`minimal` … `max`, `inherit`).
    #[serde(default)]
    pub effort_config_key: Option<String>,
    /// The lane's effort level when the config sets none; needs `effortConfigKey`.
    #[serde(default)]
    pub default_effort: Option<DefaultEffort>,
}

/// `reviewer.defaultEffort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DefaultEffort {
    /// `minimal`.
    Minimal,
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
    /// `xhigh`.
    Xhigh,
    /// `max`.
    Max,
}

/// `reviewer.rateLimit`: an attempt that wrote no review is rate-limited when its exit status
/// is listed (any non-zero status when empty) and its stderr contains a listed plain substring
/// (any stderr when empty). At least one entry overall.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RateLimit {
    /// Exit statuses (1-255).
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub exit_codes: Vec<u8>,
    /// Plain, case-insensitive substrings of stderr (never regular expressions).
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub stderr_patterns: Vec<String>,
}

/// `reviewer.posture`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Posture {
    /// The lane only reads the repository; the sandbox refuses its writes there.
    #[default]
    ReadOnly,
    /// The lane's CLI must change the repository (opt-in per slug).
    WritesRepository,
}

/// A lane flag.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Flag(#[schemars(regex(pattern = r"^--[a-z0-9][a-z0-9-]*$"))] pub String);

/// `reviewer.invoke`: the typed lane's own invoke shapes ([`super::lane`]).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Invoke {
    /// For `transport: "spawn"`.
    Spawn(SpawnInvoke),
    /// For `transport: "openai-http"`.
    Http(HttpInvoke),
}

/// `invoke` of a spawn lane: the document shape (`gsd-lane schema`) and the typed lane's field
/// ([`super::lane`]) are this one type.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpawnInvoke {
    /// Program to run (read as `""` when absent, which the validator refuses).
    #[schemars(length(min = 1))]
    pub binary: String,
    /// Argv template; elements exactly `{{model}}`, `{{effort}}`, `{{output}}`, `{{prompt}}`
    /// expand (non-string entries are dropped when read).
    pub args: Vec<String>,
    /// How the prompt reaches the tool.
    pub prompt_channel: PromptChannel,
    /// Where the review comes from.
    pub output_channel: OutputChannel,
    /// Flag naming the output file (only with `file-arg`; read only when non-empty).
    pub output_arg: Option<String>,
    /// Flag preceding the model, or null (read only when non-empty).
    pub model_arg: Option<String>,
    /// How reasoning effort is delivered.
    pub effort_channel: EffortChannel,
    /// Environment pairs added for this lane's child process only (upstream #2493).
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
}

/// `invoke` of an HTTP lane: the document shape and the typed lane's field, one type.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HttpInvoke {
    /// Config key holding the base URL (read as `""` when absent, which the validator refuses).
    pub host_config_key: String,
    /// Base URL used when the key is unset.
    pub default_host: Option<String>,
    /// Chat-completions path, e.g. `/v1/chat/completions` (read only when non-empty).
    #[schemars(with = "String")]
    pub path: Option<String>,
    /// How the model is chosen when none is configured.
    pub model_discovery: ModelDiscovery,
    /// Model used when neither config nor discovery yields one.
    pub fallback_model: Option<String>,
    /// Must be `none` for HTTP lanes.
    pub effort_channel: EffortChannel,
}

/// `invoke.promptChannel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PromptChannel {
    /// The prompt file on stdin.
    Stdin,
    /// The prompt file path as one argument.
    Argv,
    /// A short instruction naming the prompt file and the repository root.
    ArgvFileRef,
    /// Nothing.
    None,
}

/// `invoke.outputChannel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OutputChannel {
    /// The child's stdout.
    Stdout,
    /// A file named on the command line.
    FileArg,
}

/// `invoke.effortChannel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EffortChannel {
    /// No effort delivery.
    None,
    /// Host-supplied effort argv at `{{effort}}`.
    Argv,
    /// Reserved; has no effect.
    Env,
}

/// `invoke.modelDiscovery`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ModelDiscovery {
    /// Configured model, else the fallback.
    None,
    /// `GET <host>/v1/models` and take `data[0].id`.
    FirstFromModelsEndpoint,
}

/// `reviewer.evidenceClass`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceClass {
    /// Given the source-grounding prompt.
    SourceGrounded,
    /// Saw only a diff; down-weighted in consensus.
    DiffOnly,
}

/// `reviewer.handler`: the name of a registered handler. Its schema lists the handlers of
/// [`crate::registry::handlers`] (the one list), each with its description.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct HandlerName(pub String);

impl JsonSchema for HandlerName {
    fn schema_name() -> String {
        "HandlerName".to_owned()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let members = crate::registry::handlers::registered()
            .iter()
            .map(|handler| {
                Schema::Object(SchemaObject {
                    metadata: Some(Box::new(Metadata {
                        description: Some(handler.describe().to_owned()),
                        ..Metadata::default()
                    })),
                    instance_type: Some(InstanceType::String.into()),
                    enum_values: Some(vec![Value::from(handler.name().as_str())]),
                    ..SchemaObject::default()
                })
            })
            .collect();
        Schema::Object(SchemaObject {
            metadata: Some(Box::new(Metadata {
                description: Some("`reviewer.handler`.".to_owned()),
                ..Metadata::default()
            })),
            subschemas: Some(Box::new(SubschemaValidation {
                one_of: Some(members),
                ..SubschemaValidation::default()
            })),
            ..SchemaObject::default()
        })
    }
}

/// One federated config slice.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ConfigSlice {
    /// Value type.
    #[serde(rename = "type")]
    pub kind: ConfigType,
    /// Default value (required; its type matches `type`).
    pub default: serde_json::Value,
    /// Allowed values (`enum` only).
    pub values: Option<Vec<String>>,
    /// What the key does.
    #[schemars(length(min = 1))]
    pub description: String,
}

/// `config.<key>.type`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ConfigType {
    /// JSON boolean.
    Boolean,
    /// JSON string.
    String,
    /// Finite JSON number.
    Number,
    /// One of `values`.
    Enum,
}

/// A field that must be present but may be `null`: the schema lists it in `required` and
/// allows `null`, and the validator refuses its absence ([`reviewer_field_required`]).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct Nullable<T>(pub Option<T>);

impl<T: JsonSchema> JsonSchema for Nullable<T> {
    fn schema_name() -> String {
        <Option<T>>::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <Option<T>>::json_schema(generator)
    }

    fn is_referenceable() -> bool {
        false
    }
}

/// The `required` list of the `reviewer` body, as the JSON Schema states it.
fn reviewer_required() -> &'static std::collections::BTreeSet<String> {
    static REQUIRED: std::sync::OnceLock<std::collections::BTreeSet<String>> =
        std::sync::OnceLock::new();
    REQUIRED.get_or_init(|| {
        let schema = schemars::schema_for!(ReviewerBody);
        schema
            .schema
            .object
            .map(|object| object.required.into_iter().collect())
            .unwrap_or_default()
    })
}

/// Whether the `reviewer` body must carry `key` (camelCase, as written): the one answer the
/// JSON Schema (`gsd-lane schema`) and the validator share.
pub fn reviewer_field_required(key: &str) -> bool {
    reviewer_required().contains(key)
}

/// The JSON Schema document, pretty-printed.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(CapabilityManifest);
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// The `reviewer` properties of the schema, and the ones it lists as required.
    fn schema_reviewer() -> (Vec<String>, Vec<String>) {
        let schema: Value = serde_json::from_str(&super::schema_json()).expect("schema");
        let body = &schema["definitions"]["ReviewerBody"];
        let properties = body["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .cloned()
            .collect();
        let required = body["required"]
            .as_array()
            .expect("required")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        (properties, required)
    }

    /// Issue 21 item 6: for every `reviewer` field, the schema says "required" exactly when the
    /// validator refuses a manifest without it (a spawn lane and an HTTP lane, both valid).
    #[test]
    fn schema_required_matches_what_the_validator_rejects() {
        let (properties, mut required) = schema_reviewer();
        required.sort();
        assert!(required.contains(&"handler".to_owned()), "{required:?}");
        assert!(
            required.contains(&"promptBudgetKey".to_owned()),
            "{required:?}"
        );
        for text in [
            include_str!("../../../capabilities/claude/capability.json"),
            include_str!("../../../capabilities/ollama/capability.json"),
        ] {
            let manifest: Value = serde_json::from_str(text).expect("manifest");
            let folder = manifest["id"].as_str().map(str::to_owned);
            let clean = super::super::validate::validate_value(&manifest, folder.as_deref());
            assert!(clean.iter().all(|d| !d.is_error()), "{clean:?}");
            let mut rejected: Vec<String> = properties
                .iter()
                .filter(|key| {
                    let mut without = manifest.clone();
                    let removed = without["reviewer"]
                        .as_object_mut()
                        .and_then(|body| body.remove(key.as_str()));
                    // Rejected for the field itself: a dependent field's rule (defaultEffort
                    // needs effortConfigKey) does not make the field required.
                    let own = format!("reviewer.{key}");
                    removed.is_some()
                        && super::super::validate::validate_value(&without, folder.as_deref())
                            .iter()
                            .any(|d| d.is_error() && d.field.to_string() == own)
                })
                .cloned()
                .collect();
            rejected.sort();
            let present: Vec<String> = required
                .iter()
                .filter(|key| manifest["reviewer"].get(key.as_str()).is_some())
                .cloned()
                .collect();
            assert_eq!(rejected, present, "{}", manifest["id"]);
        }
    }
}
