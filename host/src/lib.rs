//! gsd-lane: the plugin host for GSD's cross-AI reviewer lanes.
//!
//! The binary is a thin shell over this library so that tests can drive each stage.
//!
//! # Visibility
//!
//! Every module is `pub(crate)`, and inside a module every submodule is private or
//! `pub(crate)`: nothing is public by accident, so rustc reports an item the host no longer
//! uses as dead code. The one public surface is [`api`], a module of re-exports that mirrors
//! the internal paths (`api::plan::resolve` is `plan::resolve`). It holds exactly what the code
//! outside this crate names: the `gsd-lane` binary (`host/src/main.rs`), the integration tests
//! (`tests/integration`), the benches (`host/benches`) and the fuzz targets
//! (`fuzz/fuzz_targets`); each re-export says which of them need it. It is not a stable API for
//! other crates. A new external use adds its re-export there, rather than making a module `pub`.
//! rustc counts whatever [`api`] re-exports, and every public method of a type it re-exports, as
//! used, so it names only what those callers need.

pub mod api;

pub(crate) mod app;
pub(crate) mod cli;
pub(crate) mod clock;
pub(crate) mod code_review;
pub(crate) mod config;
pub(crate) mod context;
#[cfg(feature = "dynamic-handlers")]
pub(crate) mod dynamic;
pub(crate) mod error;
pub(crate) mod fsutil;
#[cfg(unix)]
pub(crate) mod held_dir;
pub(crate) mod jsonpos;
pub(crate) mod lane_result;
#[cfg(test)]
mod layering;
pub(crate) mod limits;
pub(crate) mod manifest;
pub(crate) mod output;
pub(crate) mod plan;
pub(crate) mod private_fs;
pub(crate) mod project;
pub(crate) mod refusal;
pub(crate) mod registry;
pub(crate) mod review;
pub(crate) mod run;
pub(crate) mod sandbox;
pub(crate) mod suggest;
pub(crate) mod textsafe;
pub(crate) mod timing;
pub(crate) mod trust;
pub(crate) mod verdict;
