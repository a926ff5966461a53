//! The multi-lane review run (review-workflow.md) as typed stages, each a function with one
//! job: [`request`] → [`choose`] (selection) → [`prepared`] (run dir and inputs) →
//! [`verdicts`] (pre-flight) → [`results`] → [`document`] (REVIEWS.md), with the exit
//! statuses in [`exit`]. The other modules are their parts: arguments, phase lookup, selection
//! rules, prompt and run dir, per-lane budgets, the concurrent runner, progress, `REVIEWS.md`,
//! resume and interruption. The command itself is `app::review`.

pub mod args;
pub mod budget;
pub mod choose;
pub mod document;
pub mod exit;
pub mod interrupt;
pub mod journal;
pub mod lane_facts;
pub mod nest;
pub mod phase;
pub mod preflight;
pub mod prepared;
pub mod preserve;
pub mod progress;
pub mod prompt;
pub mod record;
pub mod request;
pub mod results;
pub mod resume;
pub mod reviews_md;
pub mod rundir;
pub mod runner;
pub mod selection;
pub mod subject;
pub mod verdicts;
