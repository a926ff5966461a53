//! The lanes of a code-review call run through the stages of `review` (`crate::review`), in
//! its `--prompt-file` form: request, detection of the named lanes (a refusal is that lane's
//! outcome, the others still run), selection, prepared run, pre-flight, results and document.
//! Nothing here re-implements a stage; it only turns their results into lane outcomes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::findings;
use super::hygiene::RepoRoot;
use super::outcome::LaneOutcome;
use super::reason::{LaneReason, Rejection, WholeReason};
use super::resume::{self, Call};
use crate::context::Context;
use crate::error::Failure;
use crate::private_fs::{self, WriteMode};
use crate::review::args::ReviewArgs;
use crate::review::choose::{Chosen, Verdicts};
use crate::review::exit::Exit;
use crate::review::notice::Notices;
use crate::review::preflight::{self, Probing};
use crate::review::request::Request;
use crate::review::results::Results;
use crate::review::runner::Done;
use crate::review::selection::{self, Source};
use crate::review::{document, prepared, request, results, verdicts};

/// What the review stages gave back.
#[derive(Default)]
pub struct Ran {
    /// Each lane's outcome, in run order.
    pub lanes: Vec<LaneOutcome>,
    /// How the review ended (`None`: stopped before any lane ran).
    pub exit: Option<Exit>,
    /// Whether the findings file was written.
    pub wrote: bool,
    /// Why the stages stopped early, when they did.
    pub detail: Option<String>,
    /// The findings file (the recorded one when resumed).
    pub out: Option<PathBuf>,
    /// The call a resume continued (its run dir and request, as recorded and checked).
    pub resumed: Option<Call>,
    /// The review run dir when it was kept with lanes left to finish: the call can be resumed.
    pub resumable: Option<PathBuf>,
}

/// A stage's failure as the call's whole-call reason.
fn selection_failed(failure: Failure) -> Rejection {
    Rejection::new(WholeReason::SelectionFailed, failure.message)
}

/// Runs `lanes` through the stages of `review` (its `--prompt-file` form): request,
/// detection of the named lanes (each refusal is that lane's outcome), selection, prepared run,
/// pre-flight, results, document. `run_dir` is the call's run dir; `None` when `args` resumes a
/// recorded call, whose run dir and request are then checked ([`resume::check_call`]) before
/// any lane runs.
///
/// # Errors
///
/// `selection_failed` when a stage fails (an unusable config, a run dir or record that
/// cannot be written, a selection error, a resume the review stages refuse); a resumed call
/// that fails its checks.
pub fn run_lanes(
    context: &Context,
    args: &ReviewArgs,
    root: &RepoRoot,
    run_dir: Option<&Path>,
    notices: &Notices,
) -> Result<Ran, Rejection> {
    // What the stages say is printed as each ends, and whatever is left when they stop.
    let ran = stages(context, args, root, run_dir, notices);
    notices.flush();
    ran
}

/// [`run_lanes`], saying what the stages say through `notices`.
fn stages(
    context: &Context,
    args: &ReviewArgs,
    root: &RepoRoot,
    run_dir: Option<&Path>,
    notices: &Notices,
) -> Result<Ran, Rejection> {
    let request = match request::resolve(context, args, notices).map_err(selection_failed)? {
        Ok(request) => request,
        Err(exit) => {
            return Ok(stopped(
                exit,
                "the request was refused (see the errors above)",
            ))
        }
    };
    let resumed = match (&request.past, run_dir) {
        (Some(past), _) => Some(resume::check_call(
            context,
            request.args.prompt_file.as_deref(),
            &past.dir,
            root,
        )?),
        (None, Some(_)) => None,
        (None, None) => {
            return Err(Rejection::new(
                WholeReason::SelectionFailed,
                "no recorded call to resume",
            ))
        }
    };
    let run_dir = resumed
        .as_ref()
        .map_or_else(|| run_dir.unwrap_or(Path::new(".")), |call| &call.run_dir)
        .to_owned();
    // The findings file: this call's, or the one the resumed call recorded.
    let out = context
        .env
        .cwd
        .join(request.args.out.as_deref().unwrap_or_default());
    let before = fingerprint(&out);
    notices.flush();
    let panel = crate::verdict::Panel::for_review(context, &request.config, args.require_quorum)
        .map_err(selection_failed)?;
    crate::sandbox::watchdog::start_early();
    let egress = context.egress();
    let detecting = Probing::for_review(context, &request, egress.as_ref(), ".".to_owned());
    let (mut lanes, detected) = detect_named(&request, &detecting, &request.args.lanes);
    let Some(mut chosen) = choose_detected(&request, detected)? else {
        return Ok(Ran {
            lanes,
            exit: Some(Exit::ExplicitBlocked),
            out: Some(out),
            resumed,
            ..Ran::default()
        });
    };
    notices.flush();
    let prepared = prepared::prepare(context, &request).map_err(selection_failed)?;
    let probing = Probing {
        run_dir: prepared.run_dir.as_str(),
        ..detecting
    };
    let checked = match verdicts::preflight(context, &request, &mut chosen, &prepared, &probing)
        .map_err(selection_failed)?
    {
        Ok(checked) => checked,
        Err(exit) => {
            let mut ran = stopped(
                exit,
                "pre-flight refused a named lane (see the errors above); nothing was invoked",
            );
            ran.lanes.splice(0..0, lanes);
            ran.out = Some(out);
            ran.resumed = resumed;
            return Ok(ran);
        }
    };
    notices.flush();
    let done =
        results::run(context, &request, &chosen, &prepared, &checked).map_err(selection_failed)?;
    let root = resumed.as_ref().map_or(root, |call| &call.root);
    lanes.extend(lane_outcomes(&done, root, &run_dir));
    if fingerprint(&out) != before {
        let mut ran = tampered(notices, &out, &prepared, lanes);
        ran.resumed = resumed;
        return Ok(ran);
    }
    let exit = document::finish(
        &request.subject,
        &prepared.run_dir,
        &done,
        checked.not_run,
        &panel,
    )
    .map_err(selection_failed)?;
    Ok(Ran {
        lanes,
        exit: Some(exit),
        wrote: !matches!(exit, Exit::ExplicitFailed | Exit::NoneRan),
        out: Some(out),
        resumed,
        resumable: resumable(&prepared, &done, exit),
        ..Ran::default()
    })
}

/// The review run dir when the review kept it with lanes left to finish (as
/// `review::document` decides) and gsd-lane recorded it: the call can be resumed.
fn resumable(prepared: &prepared::Prepared, done: &Results, exit: Exit) -> Option<PathBuf> {
    let unfinished = done
        .results
        .iter()
        .any(|r| !matches!(r.done, Done::Ran { stubbed: false }));
    (prepared.run_dir.ledger.is_some() && (unfinished || exit.status() != 0))
        .then(|| prepared.run_dir.path.clone())
}

/// Detection of each named lane (the same admission and probe as `review`'s): a refusal is that
/// lane's outcome; the verdicts of every named lane, detected or not.
fn detect_named(
    request: &Request,
    detecting: &Probing<'_>,
    slugs: &[String],
) -> (Vec<LaneOutcome>, Verdicts) {
    let mut lanes = Vec::new();
    let mut detected = BTreeMap::new();
    for slug in slugs {
        let Some(lane) = request.registry.lane(slug) else {
            continue;
        };
        let found = preflight::detect(lane, detecting);
        if let Err(refusal) = &found {
            lanes.push(LaneOutcome::failed(
                slug,
                refusal.reason.as_str(),
                refusal.detail.clone(),
            ));
        }
        detected.insert(slug.clone(), found);
    }
    (lanes, detected)
}

/// The explicit selection of the detected lanes (`None`: none was detected).
///
/// # Errors
///
/// `selection_failed` for a selection error (a `review.*` configuration error).
fn choose_detected(request: &Request, detected: Verdicts) -> Result<Option<Chosen>, Rejection> {
    let available: Vec<String> = detected
        .iter()
        .filter(|(_, found)| found.is_ok())
        .map(|(slug, _)| slug.clone())
        .collect();
    if available.is_empty() {
        return Ok(None);
    }
    let all: Vec<String> = request
        .registry
        .lanes
        .iter()
        .map(|l| l.slug.clone())
        .collect();
    let normalized = selection::normalize(&request.config, &all);
    let sel = selection::select(
        Source::ExplicitFlags,
        &available,
        &normalized,
        &all,
        &detected,
    );
    if !sel.errors.is_empty() {
        let errors: Vec<&str> = sel.errors.iter().map(|(_, e)| e.as_str()).collect();
        return Err(Rejection::new(
            WholeReason::SelectionFailed,
            errors.join("; "),
        ));
    }
    Ok(Some(Chosen {
        source: Source::ExplicitFlags,
        selection: sel,
        verdicts: detected,
    }))
}

/// The findings file changed while the lanes ran: it is neither read nor written over.
fn tampered(
    notices: &Notices,
    out: &Path,
    prepared: &prepared::Prepared,
    lanes: Vec<LaneOutcome>,
) -> Ran {
    let detail = format!(
        "the findings file {} was written, replaced or planted while the lanes ran (a lane with write access?); gsd-lane did not write over it or read it; the lanes' reviews are in the run dir",
        out.display()
    );
    notices.error(detail.as_str());
    prepared::say_kept(notices, &prepared.run_dir);
    Ran {
        lanes,
        exit: Some(Exit::NoRealReview),
        out: Some(out.to_owned()),
        detail: Some(detail),
        ..Ran::default()
    }
}

/// The stages stopped before any lane ran.
fn stopped(exit: Exit, detail: &str) -> Ran {
    Ran {
        exit: Some(exit),
        detail: Some(detail.to_owned()),
        ..Ran::default()
    }
}

/// Each identity's outcome: a real review is copied into the run dir
/// (`gsd-code-review-<id>.md`, never following a planted link) and its findings read.
fn lane_outcomes(done: &Results, root: &RepoRoot, run_dir: &Path) -> Vec<LaneOutcome> {
    let mut out = Vec::new();
    for (job, result) in done.jobs.iter().zip(&done.results) {
        let id = &job.identity.id;
        let outcome = match &result.done {
            Done::Ran { stubbed: false } => {
                let text = done.review_text(id);
                let name = format!("gsd-code-review-{}.md", crate::plan::safe_instance_name(id));
                let path = run_dir.join(name);
                match private_fs::write_run_file(&path, text.as_bytes(), WriteMode::Truncate) {
                    Ok(()) => {
                        let read = findings::parse(&text, root);
                        LaneOutcome {
                            slug: id.clone(),
                            ok: true,
                            review_path: Some(path),
                            findings: read.findings,
                            refused_findings: read.refused,
                            ..LaneOutcome::default()
                        }
                    }
                    Err(err) => LaneOutcome::failed(
                        id,
                        LaneReason::InvokeFailed.as_str(),
                        format!(
                            "its review could not be copied to {}: {err}",
                            path.display()
                        ),
                    ),
                }
            }
            Done::Ran { stubbed: true } => LaneOutcome::failed(
                id,
                LaneReason::InvokeFailed.as_str(),
                "the lane produced no review (a diagnostic stub; see the findings file)",
            ),
            Done::Budget(refusal) => LaneOutcome::failed(
                id,
                LaneReason::BudgetExceeded.as_str(),
                refusal.detail.clone(),
            ),
            Done::Unavailable(refusal) => {
                LaneOutcome::failed(id, refusal.reason.as_str(), refusal.detail.clone())
            }
            Done::Cancelled => LaneOutcome::failed(
                id,
                LaneReason::Cancelled.as_str(),
                "not started: another named lane failed first",
            ),
            Done::Interrupted => LaneOutcome::failed(
                id,
                LaneReason::Interrupted.as_str(),
                "the run was interrupted before this lane finished",
            ),
        };
        out.push(outcome);
    }
    out
}

/// What is at `path` now (`None`: nothing): its device, inode, change time, length and whether
/// it is a link. Writing, replacing or planting it changes one of them; the change time cannot
/// be set back from user space.
fn fingerprint(path: &Path) -> Option<(u64, u64, i64, i64, u64, bool)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((
        meta.dev(),
        meta.ino(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.len(),
        meta.file_type().is_symlink(),
    ))
}
