//! `gsd-lane review`: the multi-lane review run (review-workflow.md §1-§12).
//!
//! The stages live in `crate::review`, each a function with one job; this command runs them in
//! the order of §1: request → selection → prepared run → pre-flight verdicts → results →
//! document. Every stage that ends the review early says why ([`Exit`]); `Exit::status` is the
//! one place that maps the why to the exit status of §12. What the stages say is collected
//! in one [`Notices`] and printed after each stage (so what is said before the lanes is on
//! the terminal before they start) and before the command returns.

use super::Context;
use crate::error::Failure;
use crate::review::args::ReviewArgs;
use crate::review::exit::Exit;
use crate::review::notice::Notices;
use crate::review::preflight::Probing;
use crate::review::{choose, document, prepared, request, results, verdicts};

/// Runs `review`.
///
/// # Errors
///
/// Usage errors (status 1), phase and I/O errors (status 1); selection and availability
/// errors are printed and returned as status 2.
pub fn run(context: &Context, args: &ReviewArgs) -> Result<u8, Failure> {
    let notices = Notices::for_context(context);
    let ended = review(context, args, &notices);
    // Whatever the stages said before they stopped comes before the error `main` prints.
    notices.flush();
    ended.map(Exit::status)
}

fn review(context: &Context, args: &ReviewArgs, notices: &Notices) -> Result<Exit, Failure> {
    // Each stage's notices are printed as it ends (`run` prints those of a stage that stops).
    let request = match request::resolve(context, args, notices)? {
        Ok(request) => request,
        Err(exit) => return Ok(exit),
    };
    notices.flush();
    // `review.quorum` is checked before any lane runs; `--require-quorum` is this
    // invocation's (a resumed run does not record it).
    let panel = crate::verdict::Panel::for_review(context, &request.config, args.require_quorum)?;
    // Detection and pre-flight may start processes (probes), the runner does: the lane
    // watchdog starts now, alongside.
    crate::sandbox::watchdog::start_early();
    // One egress gate for detection and pre-flight (each warning once); the runner makes its own.
    let egress = context.egress();
    let detecting = Probing::for_review(context, &request, egress.as_ref(), ".".to_owned());
    let mut chosen = match choose::choose(context, &request, &detecting) {
        Ok(chosen) => chosen,
        Err(exit) => return Ok(exit),
    };
    notices.flush();
    let prepared = prepared::prepare(context, &request)?;
    notices.flush();
    let probing = Probing {
        run_dir: prepared.run_dir.as_str(),
        ..detecting
    };
    let checked = match verdicts::preflight(context, &request, &mut chosen, &prepared, &probing)? {
        Ok(checked) => checked,
        Err(exit) => return Ok(exit),
    };
    notices.flush();
    let done = results::run(context, &request, &chosen, &prepared, &checked)?;
    document::finish(
        &request.subject,
        &prepared.run_dir,
        &done,
        checked.not_run,
        &panel,
    )
}
