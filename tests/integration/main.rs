//! Integration tests: the real `gsd-lane` binary in an isolated environment.
//!
//! One module per area (ripgrep style); shared helpers live in `util`,
//! the loopback HTTP server in `http_server`.

#![allow(clippy::expect_used, clippy::panic, missing_docs)]

mod catalogue;
mod corpus;
mod handlers;
mod http_server;
mod overlays;
mod plan;
mod review;
mod robustness;
mod roster;
mod run;
mod sandbox;
mod soak;
mod trust;
mod util;
