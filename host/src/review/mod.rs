//! The multi-lane review run (review-workflow.md): arguments, phase lookup, selection,
//! prompt and run dir, per-lane budgets, pre-flight, the concurrent runner, progress,
//! `REVIEWS.md` and interruption. The command itself is `app::review`.

pub mod args;
pub mod budget;
pub mod interrupt;
pub mod journal;
pub mod nest;
pub mod phase;
pub mod preflight;
pub mod preserve;
pub mod progress;
pub mod prompt;
pub mod record;
pub mod resume;
pub mod reviews_md;
pub mod rundir;
pub mod runner;
pub mod selection;
