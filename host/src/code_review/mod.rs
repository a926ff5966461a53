//! `/gsd:code-review`'s reuse of reviewer lanes (upstream-since-2026-08.md §8, decisions.md
//! row 19), as parts with one job each: the dispatcher's closed sets of reasons ([`reason`]),
//! the input hygiene of the changed-file list, the base and the directories ([`hygiene`]), the
//! bounded metadata-only prompt ([`prompt`]), the `supportsReviewerLanes` trait
//! ([`trait_gate`]), the explicit selection ([`explicit`]), the lanes' findings read as
//! untrusted text ([`findings`]) and the result object ([`outcome`]).
//!
//! The command itself (`app::code_review`) reads the call ([`args`], [`inputs`], [`rundir`]) and
//! runs the selected lanes through the stages of `review` ([`stages`]): the same consent,
//! sandbox, watchdog, run record and verdict, with the stages' stdout sent to stderr
//! ([`redirect`]) so that the call's stdout is its one result. An interrupted or failed call is
//! continued as `review --resume` continues a review ([`resume`]).

pub(crate) mod args;
pub(crate) mod explicit;
pub(crate) mod findings;
pub(crate) mod hygiene;
pub(crate) mod inputs;
pub(crate) mod outcome;
pub(crate) mod prompt;
pub(crate) mod reason;
pub(crate) mod redirect;
pub(crate) mod resume;
pub(crate) mod rundir;
pub(crate) mod stages;
pub(crate) mod trait_gate;
