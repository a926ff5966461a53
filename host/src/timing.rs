//! `GSD_LANE_TRACE_TIMING`: set to anything non-empty, gsd-lane prints on stderr how long each
//! phase of a command took since `main` began (`gsd-lane timing:  1.234 ms  registry loaded`),
//! so that start cost can be measured where it is paid (BENCHMARKS.md, issue 25 item 7). Off,
//! a mark costs one atomic load.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// The environment variable that turns the marks on.
pub const VAR: &str = "GSD_LANE_TRACE_TIMING";

static START: OnceLock<Instant> = OnceLock::new();
static ON: AtomicBool = AtomicBool::new(false);

/// Starts the clock (first thing in `main`) and reads [`VAR`].
pub fn start() {
    START.get_or_init(Instant::now);
    if std::env::var_os(VAR).is_some_and(|value| !value.is_empty()) {
        ON.store(true, Ordering::Relaxed);
    }
}

/// Prints `phase` with the time since [`start`], when [`VAR`] is set.
pub fn mark(phase: &str) {
    if !ON.load(Ordering::Relaxed) {
        return;
    }
    let elapsed = START
        .get()
        .map_or(0.0, |at| at.elapsed().as_secs_f64() * 1000.0);
    crate::output::eprint_line(&format!("gsd-lane timing: {elapsed:8.3} ms  {phase}"));
}
