//! Integration tests: the real `gsd-lane` binary in an isolated environment.
//!
//! One module per area (ripgrep style); shared helpers live in `util`,
//! the loopback HTTP server in `http_server`.

#![allow(clippy::expect_used, clippy::panic, missing_docs)]

mod attack_confine;
mod attack_rundir;
mod attack_stop;
mod attack_text;
mod catalogue;
mod code_review;
mod completions;
mod concurrency;
mod confinement_said;
mod corpus;
mod demo;
mod detect;
mod diagnostics;
mod doctor_jobs;
mod gemini_trust;
mod handlers;
mod http_review;
mod http_server;
mod http_shapes;
mod kimi_code;
mod new_lane;
mod no_spawn;
mod notices;
mod overlays;
mod plan;
mod probe_once;
mod promises;
mod readonly_commands;
mod reference;
mod resume;
mod review;
mod review_upstream;
mod robustness;
mod roster;
mod run;
mod runs_scan;
mod sandbox;
mod screens;
mod shipped_program;
mod soak;
mod stream;
mod terminal;
mod trust;
mod upstream;
mod util;
mod verdict;
mod view;
mod warnings_once;
mod watchdog;
