//! The resolved plan of one lane invocation, as a handler sees it.
//!
//! Which of these types are `#[non_exhaustive]`, and why: the plan is built by one producer, the
//! host's plan resolution (released with this SDK), and a handler only reads it. The structs
//! ([`LanePlan`], [`SpawnPlan`], [`HttpPlan`]) stay exhaustive so the host builds them without a
//! constructor per field; they reach compiled modules as JSON, where a new field is additive, and
//! handler tests start from [`crate::testing::request_spawn`]. Enums the host must handle member
//! by member ([`Transport`], [`OutputTarget`], [`Probe`]) stay exhaustive, so a new member fails
//! the host's build where it is not handled. Enums a handler may match on and that may grow with
//! the vocabulary without the handler's involvement ([`EmptyOutputPolicy`], [`PlanShape`]) are
//! `#[non_exhaustive]`. [`LaneRequest`] is `#[non_exhaustive]` with [`LaneRequest::new`].

use serde::{Deserialize, Serialize};

use crate::handler_name::HandlerName;

/// How a lane reaches its reviewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Transport {
    /// A local CLI started with an argument vector.
    #[serde(rename = "spawn")]
    Spawn,
    /// An OpenAI-compatible HTTP server.
    #[serde(rename = "openai-http")]
    OpenAiHttp,
}

impl Transport {
    /// Returns the transport exactly as written in descriptors.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Spawn => "spawn",
            Transport::OpenAiHttp => "openai-http",
        }
    }
}

/// Where the review text of a spawn lane comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OutputTarget {
    /// The child's standard output.
    Stdout,
    /// A file the tool writes, named on its command line.
    File(String),
}

/// What the host does when a review comes back empty.
///
/// `#[non_exhaustive]`: the host applies the policy; a handler that looks at it keeps a
/// catch-all arm for policies added later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "EmptyOutput")
)]
#[non_exhaustive]
pub enum EmptyOutputPolicy {
    /// Replace an empty review with the generic diagnostic stub.
    #[serde(rename = "stub-with-stderr")]
    StubWithStderr,
    /// The lane's handler writes its own diagnostic.
    #[serde(rename = "handler-owned")]
    HandlerOwned,
}

/// The availability check a lane declares, in resolved form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Probe {
    /// The binary is found on `PATH`; nothing is started.
    CommandExists {
        /// Executable name or path.
        binary: String,
    },
    /// `<binary> --help` prints `needle` within `timeoutMs`.
    #[serde(rename_all = "camelCase")]
    CommandCapability {
        /// Executable name or path.
        binary: String,
        /// Plain, case-sensitive substring looked for in stdout + stderr.
        needle: String,
        /// Bound of the help run.
        timeout_ms: u64,
    },
    /// `GET <host><path>` answers 2xx within `timeoutMs`.
    #[serde(rename_all = "camelCase")]
    HttpReachable {
        /// Dotted config key naming the base URL.
        host_config_key: String,
        /// Path appended to the host.
        path: String,
        /// Bound of the request.
        timeout_ms: u64,
    },
    /// A probe that cannot be evaluated (absent, not an object, unknown kind): never available.
    /// Never written in a descriptor, so not part of the schema.
    #[cfg_attr(feature = "schema", schemars(skip))]
    Unusable,
}

/// The spawn-specific part of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpawnPlan {
    /// Program to run (name looked up on `PATH`, or a path).
    pub binary: String,
    /// The fully expanded argument vector (no placeholder survives).
    pub argv: Vec<String>,
    /// File streamed to the child's stdin, or `None` for an empty, closed stdin.
    pub stdin: Option<String>,
    /// Where the review comes from.
    pub output_target: OutputTarget,
}

/// The HTTP-specific part of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpPlan {
    /// Normalized base URL the lane talks to.
    pub host: String,
    /// Config key the host came from.
    pub host_config_key: String,
    /// Chat-completions URL (`host` + path).
    pub url: String,
    /// Model-discovery URL, when discovery is declared.
    pub models_url: Option<String>,
    /// Configured model, if any (otherwise discovery, then the fallback).
    pub model: Option<String>,
    /// Model used when neither config nor discovery yields one.
    pub fallback_model: String,
}

/// The transport-specific part of a plan.
///
/// `#[non_exhaustive]`: it grows with [`Transport`]; a handler drives one transport and reads
/// its part through [`LanePlan::spawn`] or [`LanePlan::http`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum PlanShape {
    /// A spawned CLI.
    Spawn(SpawnPlan),
    /// An HTTP request.
    Http(HttpPlan),
}

/// The pure, fully resolved invocation of one lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LanePlan {
    /// Lane slug (artifact names, results, stub header).
    pub slug: String,
    /// Capability id that declares the lane (consent lookups use it).
    pub capability_id: String,
    /// Declared transport.
    pub transport: Transport,
    /// The prompt file (also set for lanes that consume none).
    pub prompt_path: String,
    /// Where the review is written.
    pub review_path: String,
    /// The stderr sidecar.
    pub err_path: String,
    /// Outer wall-clock bound of one invocation.
    pub timeout_ms: u64,
    /// Empty-output policy as declared.
    pub empty_output: EmptyOutputPolicy,
    /// Declared handler, if any (a registered name).
    pub handler: Option<HandlerName>,
    /// Extra executables that must be on `PATH`.
    pub requires_binaries: Vec<String>,
    /// Availability check.
    pub probe: Probe,
    /// Transport-specific fields.
    #[serde(flatten)]
    pub shape: PlanShape,
}

impl LanePlan {
    /// Returns the spawn part, if this is a spawn lane.
    pub fn spawn(&self) -> Option<&SpawnPlan> {
        match &self.shape {
            PlanShape::Spawn(spawn) => Some(spawn),
            PlanShape::Http(_) => None,
        }
    }

    /// Returns the HTTP part, if this is an HTTP lane.
    pub fn http(&self) -> Option<&HttpPlan> {
        match &self.shape {
            PlanShape::Http(http) => Some(http),
            PlanShape::Spawn(_) => None,
        }
    }
}

/// Everything a handler is told about one invocation.
///
/// `#[non_exhaustive]` (a handler may be told more, e.g. the run directory): the host builds it
/// with [`LaneRequest::new`], a handler test with [`crate::testing::request_spawn`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LaneRequest {
    /// The resolved plan.
    pub plan: LanePlan,
    /// Absolute root of the repository under review.
    pub repo_root: String,
}

impl LaneRequest {
    /// The request to run `plan` against the repository at `repo_root`.
    pub fn new(plan: LanePlan, repo_root: impl Into<String>) -> LaneRequest {
        LaneRequest {
            plan,
            repo_root: repo_root.into(),
        }
    }
}
