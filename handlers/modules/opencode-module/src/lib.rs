//! An example compiled handler module: the first-party `opencode` handler as a `cdylib`.
//!
//! Build it and run one lane with it (the host needs its `dynamic-handlers` feature):
//!
//! ```text
//! cargo build -p gsd-lane-opencode-module
//! cargo run -p gsd-lane --features dynamic-handlers -- \
//!     run opencode --handler-module target/debug/libgsd_lane_opencode_module.so
//! ```
//!
//! The whole module is the one line below: a handler crate that already implements
//! [`gsd_lane_sdk::Handler`] needs nothing else to be loadable.

gsd_lane_sdk::export_handler!(gsd_lane_handlers::api::opencode::Opencode);
