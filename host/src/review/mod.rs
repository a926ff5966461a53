//! The multi-lane review run (review-workflow.md) as typed stages, each a function with one
//! job: [`request`] → [`choose`] (selection) → [`prepared`] (run dir and inputs) →
//! [`verdicts`] (pre-flight) → [`results`] → [`document`] (REVIEWS.md), with the exit
//! statuses in [`exit`]. The other modules are their parts: arguments, phase lookup, selection
//! rules, prompt and run dir, per-lane budgets, the concurrent runner, progress, `REVIEWS.md`,
//! resume and interruption. What the stages say goes to one collector ([`notice`]) and is
//! printed in one place ([`printer`]). The command itself is `app::review`.

pub(crate) mod args;
pub(crate) mod budget;
pub(crate) mod captured;
pub(crate) mod choose;
pub(crate) mod conflicts_slot;
pub(crate) mod continuation;
pub(crate) mod coverage;
pub(crate) mod diagnostics;
pub(crate) mod document;
pub(crate) mod exit;
pub(crate) mod full_review;
pub(crate) mod interrupt;
pub(crate) mod journal;
pub(crate) mod lane_facts;
pub(crate) mod ledger;
pub(crate) use crate::lane_result::model_record;
pub(crate) mod nest;
pub(crate) mod no_result;
pub(crate) mod notice;
pub(crate) mod parallel;
pub(crate) mod phase;
pub(crate) mod preflight;
pub(crate) mod prepared;
pub(crate) mod preserve;
pub(crate) mod printer;
pub(crate) mod progress;
pub(crate) mod prompt;
pub(crate) mod record;
pub(crate) mod request;
pub(crate) mod results;
pub(crate) mod resume;
pub(crate) mod reviews_md;
pub(crate) mod rundir;
pub(crate) mod runner;
pub(crate) mod selection;
pub(crate) mod spill;
pub(crate) mod subject;
pub(crate) mod verdicts;
