//! The multi-lane review run (review-workflow.md): arguments, phase lookup, selection,
//! prompt and run dir, per-lane budgets, pre-flight, the concurrent runner, progress,
//! `REVIEWS.md` and interruption. The command itself is `app::review`.

pub(crate) mod args;
pub(crate) mod budget;
mod interrupt;
pub(crate) mod journal;
mod nest;
pub(crate) mod phase;
pub(crate) mod preflight;
pub(crate) mod preserve;
pub(crate) mod progress;
pub(crate) mod prompt;
pub(crate) mod record;
pub(crate) mod resume;
pub(crate) mod reviews_md;
pub(crate) mod rundir;
pub(crate) mod runner;
pub(crate) mod selection;
