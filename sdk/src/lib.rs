//! The gsd-lane handler SDK.
//!
//! A *handler* is a first-party module for a reviewer lane whose behaviour the manifest
//! vocabulary cannot express. Handlers implement [`Handler`], are registered by name in the
//! closed list of the `gsd-lane-handlers` crate, and reach the outside world only through the
//! [`Effects`] the host grants, which bound and check every process and request.
//!
//! A complete handler, tested against scripted effects:
//!
//! ```
//! use gsd_lane_sdk::testing::{FakeEffects, FakeProcess};
//! use gsd_lane_sdk::{
//!     Effects, Handler, HandlerError, HandlerName, HandlerOutput, LaneRequest, SpawnRequest,
//!     StdoutSink, Transport,
//! };
//! use std::time::Duration;
//!
//! /// Runs the lane's command and keeps only lines that start with `>`.
//! struct QuoteOnly;
//!
//! impl Handler for QuoteOnly {
//!     fn name(&self) -> HandlerName { HandlerName::new("opencode") }
//!     fn describe(&self) -> &'static str { "keeps quoted lines of the output" }
//!     fn transport(&self) -> Transport { Transport::Spawn }
//!     fn run(&self, fx: &dyn Effects, req: &LaneRequest) -> Result<HandlerOutput, HandlerError> {
//!         let spawn = req.plan.spawn().ok_or_else(|| HandlerError::malformed("not a spawn lane"))?;
//!         let report = fx.spawn(&SpawnRequest::new(
//!             spawn.binary.clone(),
//!             spawn.argv.clone(),
//!             StdoutSink::Memory(1 << 20),
//!             Duration::from_millis(req.plan.timeout_ms),
//!         ));
//!         let quoted: Vec<&str> = report.stdout.lines().filter(|l| l.starts_with('>')).collect();
//!         Ok(HandlerOutput::review(quoted.join("\n"), "stdout"))
//!     }
//! }
//!
//! let fx = FakeEffects::new().process(FakeProcess::prints("noise\n> looks good\n"));
//! let request = gsd_lane_sdk::testing::request_spawn("quote", "quote-cli");
//! let out = QuoteOnly.run(&fx, &request).expect("runs");
//! assert_eq!(out.review, "> looks good");
//! assert_eq!(fx.spawn_calls()[0].program, "quote-cli");
//! ```
//!
//! Public items are a deliberate, short list: adding one is a semver promise to every handler.
//!
//! Cargo features:
//!
//! - `abi` (off by default): the `abi` module, the ABI-stable face of [`Handler`] and [`Effects`]
//!   (abi_stable), so a handler can be built as a `cdylib` and loaded by a host built with its
//!   `dynamic-handlers` feature for one debugging run (`gsd-lane run <slug> --handler-module`).
//!   A build of the default members (`cargo build`, `cargo test`) never compiles abi_stable;
//!   `--workspace` does, because the handler-module crates enable the feature.
//!
//! [`testing`] (the scripted [`testing::FakeEffects`] and [`testing::request_spawn`]) is always
//! available: it is plain code with no dependency, so it needs no feature.

#[cfg(feature = "abi")]
pub mod abi;
mod effects;
mod error;
mod handler;
mod handler_name;
mod outcome;
mod plan;
pub mod testing;
mod version;

pub use effects::{
    spawn_own_invocation, Effects, FileRead, HttpMethod, HttpReport, HttpRequest, LockGuard,
    SpawnError, SpawnReport, SpawnRequest, StdoutSink,
};
pub use error::{HandlerError, HandlerErrorKind};
pub use handler::Handler;
pub use handler_name::HandlerName;
pub use outcome::HandlerOutput;
pub use plan::{
    EmptyOutputPolicy, HttpPlan, LanePlan, LaneRequest, OutputTarget, PlanShape, Probe, SpawnPlan,
    Transport,
};
pub use version::{is_compatible, SDK_VERSION};
