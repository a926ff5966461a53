//! Stage 5 of a review: the results (review-workflow.md §9-§10). The identities run with the
//! progress display (a resumed run runs only those it does not keep), their results merged in
//! run order and written to `gsd-review-lane-results.jsonl`.

use std::collections::BTreeMap;
use std::io::IsTerminal;

use serde_json::json;

use super::captured::Review;
use super::choose::Chosen;
use super::lane_facts;
use super::notice::Notices;
use super::prepared::Prepared;
use super::progress::{self, Ending, Mode, Progress, Row};
use super::request::Request;
use super::resume::Decision;
use super::runner::{self, Done, Event, Job, LaneResult, Shared};
use super::verdicts::Verdicts;
use crate::context::Context;
use crate::error::Failure;
use crate::output::neutralize;
use crate::refusal::Refusal;

/// Every identity's result, in run order.
pub struct Results {
    /// The identities, in run order.
    pub jobs: Vec<Job>,
    /// Their results (kept ones of a resumed run as recorded).
    pub results: Vec<LaneResult>,
    /// Whether SIGINT/SIGTERM ended the run.
    pub interrupted: bool,
    /// How progress was shown (the summary follows it).
    pub mode: Mode,
    /// Each identity's review as read once, streamed, and hashed into the journal (kept ones
    /// of a resumed run: as read and checked against the journaled hash), with its bounded
    /// head; REVIEWS.md shows these.
    pub reviews: BTreeMap<String, Review>,
    /// The sandbox mode the lanes ran under (REVIEWS.md says what applied).
    pub sandbox: crate::sandbox::SandboxMode,
    /// What the review's detection found when lanes ran at once (changes made during the
    /// review, or a partial check), for REVIEWS.md; `None`: nothing to say.
    pub repository_note: Option<String>,
    /// What the review says (the document stage says the rest).
    pub notices: Notices,
}

impl Results {
    /// The review text of `id` REVIEWS.md shows (lossy UTF-8; its head up to a line break when
    /// it is over `review.max_inline_bytes`; empty when there was no review file).
    pub fn review_text(&self, id: &str) -> String {
        self.reviews.get(id).map(Review::shown).unwrap_or_default()
    }
}

/// Runs the identities pre-flight cleared, with progress.
///
/// # Errors
///
/// The results journal cannot be opened.
pub fn run(
    context: &Context,
    request: &Request,
    chosen: &Chosen,
    prepared: &Prepared,
    verdicts: &Verdicts,
) -> Result<Results, Failure> {
    let mode = mode_of(request.args.json);
    let notices = &request.notices;
    let decision = &verdicts.decision;
    let all_jobs = verdicts.jobs.clone();
    let (kept_jobs, jobs) = split_kept(&all_jobs, decision);
    if let Some(past) = &request.past {
        super::continuation::announce(
            notices,
            &past.dir,
            &identity_ids(&kept_jobs),
            &identity_ids(&jobs),
        );
    }
    let rows = jobs
        .iter()
        .map(|job| Row {
            id: job.identity.id.clone(),
            display: lane_facts::display(&job.identity, &job.lane),
            lane: job.identity.cli.clone(),
        })
        .collect();
    let ids: Vec<&str> = chosen
        .selection
        .identities
        .iter()
        .map(|i| i.id.as_str())
        .collect();
    let concurrency = super::parallel::concurrency(request.args.jobs, &request.config);
    if let Some(warning) = &concurrency.warning {
        notices.warn(warning.as_str());
    }
    notices.verbose(concurrency.why.as_str());
    let max_jobs = concurrency.max_jobs;
    let mut display = Progress::new(mode, rows).with_jobs(max_jobs);
    // What was said before the lanes is on the terminal before the banner and the first lane.
    notices.flush();
    display.banner(
        &request.subject.label(),
        &json!({"source": chosen.source.as_str(), "reviewers": ids, "run_dir": prepared.run_dir.path, "jobs": max_jobs}),
    );
    let shared = shared(context, request, prepared, decision)?;
    // One walk of the repository before the lanes and one after (sandbox::detect::session).
    let detection = crate::sandbox::detect::session::Session::begin(
        &prepared.run_dir.path,
        &crate::sandbox::roots::current_with(std::path::Path::new(&shared.repo_root)).repository,
        max_jobs <= 1 || lane_count(&jobs) <= 1,
    );
    let fail_fast = !request.keep_going;
    let (results, interrupted) =
        runner::run_all(jobs.clone(), &shared, max_jobs, fail_fast, |event, jobs| {
            show(notices, &mut display, event, jobs);
        });
    notices.flush();
    display.finish();
    let repository_note = detection
        .finish()
        .and_then(|found| crate::sandbox::policy::review_changes_line(&found).map(|l| (found, l)))
        .map(|(found, line)| {
            if mode == Mode::Json {
                progress::event(&json!({
                    "event": "repository_changed",
                    "during": "review",
                    "changes": found.changes,
                    "partial": found.partial,
                }));
            }
            notices.warn(line.as_str());
            line
        });
    notices.flush();
    let results = merge_kept(&all_jobs, decision, &jobs, results);
    write_results(notices, &prepared.run_dir, &all_jobs, &results);
    let mut reviews = shared.reviews.take();
    for (id, kept) in &decision.kept {
        reviews.insert(id.clone(), kept.review.clone());
    }
    Ok(Results {
        jobs: all_jobs,
        results,
        interrupted,
        mode,
        reviews,
        sandbox: request.sandbox,
        repository_note,
        notices: request.notices.clone(),
    })
}

/// How many lanes `jobs` spans (a lane's identities run one at a time on its own slot).
fn lane_count(jobs: &[Job]) -> usize {
    let mut lanes: Vec<&str> = jobs.iter().map(|job| job.identity.cli.as_str()).collect();
    lanes.sort_unstable();
    lanes.dedup();
    lanes.len()
}

/// Live progress on a terminal, plain lines otherwise, JSON events with `--json`.
fn mode_of(json: bool) -> Mode {
    if json {
        Mode::Json
    } else if std::io::stdout().is_terminal() {
        Mode::Tty
    } else {
        Mode::Plain
    }
}

/// What every lane thread shares.
fn shared(
    context: &Context,
    request: &Request,
    prepared: &Prepared,
    decision: &Decision,
) -> Result<Shared, Failure> {
    let run_dir = &prepared.run_dir;
    let journal = super::journal::Journal::open(run_dir.ledger.as_ref(), &run_dir.path)
        .map_err(|f| prepared.kept(f))?;
    Ok(Shared {
        sandbox: request.sandbox,
        config: request.config.clone(),
        env: context.env.clone(),
        project_root: context.project_root.clone(),
        run_dir: prepared.run_dir.clone(),
        repo_root: super::subject::repo_root(&context.env.cwd),
        lock_dir: context.lock_dir(),
        plan_names: prepared.plan_names.clone(),
        journal: Some(std::sync::Arc::new(journal)),
        prior_attempts: decision.attempts.clone(),
        reviews: std::sync::Arc::new(super::captured::Captured::beside(request.subject.output())),
        budget_inputs: std::sync::Arc::default(),
        notices: request.notices.clone(),
    })
}

/// Shows one runner event: the progress line, a skipped discovered identity, the repository
/// changes a lane made (`--json`). What was said since the last event (a lane's retry, a
/// skipped identity) is printed before the progress line.
fn show(notices: &Notices, display: &mut Progress, event: &Event, jobs: &[Job]) {
    match event {
        Event::Started(index) => {
            notices.flush();
            display.started(*index);
        }
        Event::Finished(index, result) => {
            let job = jobs.get(*index);
            if let (Done::Unavailable(refusal), Some(job)) = (&result.done, job) {
                if !job.explicit {
                    notices.info(format!(
                        "reviewer {} skipped ({}: {})",
                        job.identity.id,
                        refusal.reason,
                        neutralize(&refusal.detail)
                    ));
                }
            }
            notices.flush();
            display.ended(*index, ending_of(result));
            if let (Mode::Json, Some(job)) = (display.mode(), job) {
                if !result.repository_changes.is_empty() {
                    progress::event(&json!({
                        "event": "repository_changed",
                        "identity": job.identity.id,
                        "changes": result.repository_changes,
                    }));
                }
            }
        }
        Event::Interrupted => notices.flush(),
    }
}

/// The progress line's ending of a result.
fn ending_of(result: &LaneResult) -> Ending {
    match &result.done {
        Done::Ran { stubbed: false } => Ending::Review,
        Done::Ran { stubbed: true } => Ending::Stub,
        Done::Budget(refusal) | Done::Unavailable(refusal) => {
            Ending::Skipped(refusal.reason.to_string())
        }
        Done::Cancelled => Ending::Skipped("cancelled".to_owned()),
        Done::Interrupted => Ending::Interrupted,
    }
}

/// Splits the jobs into those a resumed run keeps and those it runs (re-indexed from 0 for
/// the runner, run order kept).
fn split_kept(jobs: &[Job], decision: &Decision) -> (Vec<Job>, Vec<Job>) {
    let (kept, run): (Vec<Job>, Vec<Job>) = jobs
        .iter()
        .cloned()
        .partition(|job| decision.kept.contains_key(&job.identity.id));
    let run = run
        .into_iter()
        .enumerate()
        .map(|(index, job)| Job { index, ..job })
        .collect();
    (kept, run)
}

/// The results of every job in run order: kept ones as recorded, the others as they ran now.
fn merge_kept(
    jobs: &[Job],
    decision: &Decision,
    ran_jobs: &[Job],
    ran: Vec<LaneResult>,
) -> Vec<LaneResult> {
    let mut ran: BTreeMap<String, LaneResult> = ran_jobs
        .iter()
        .map(|job| job.identity.id.clone())
        .zip(ran)
        .collect();
    jobs.iter()
        .map(|job| match decision.kept.get(&job.identity.id) {
            Some(kept) => LaneResult {
                done: Done::Ran { stubbed: false },
                metadata: kept.metadata.clone(),
                started: true,
                retries: 0,
                repository_changes: Vec::new(),
                model: None,
            },
            None => ran.remove(&job.identity.id).unwrap_or(LaneResult {
                done: Done::Interrupted,
                metadata: None,
                started: false,
                retries: 0,
                repository_changes: Vec::new(),
                model: None,
            }),
        })
        .collect()
}

/// `gsd-review-lane-results.jsonl`: one compact object per identity, in run order.
fn write_results(
    notices: &Notices,
    run_dir: &super::rundir::RunDir,
    jobs: &[Job],
    results: &[LaneResult],
) {
    let mut text = String::new();
    for (job, result) in jobs.iter().zip(results) {
        text.push_str(&format!("{}\n", result_line(job, result)));
    }
    if let Err(failure) = run_dir.write("gsd-review-lane-results.jsonl", &text) {
        notices.warn(failure.to_string());
    }
}

/// One identity's line of the results file.
fn result_line(job: &Job, result: &LaneResult) -> serde_json::Value {
    let mut value = json!({"slug": job.lane.slug, "ok": result.ok()});
    let Some(map) = value.as_object_mut() else {
        return value;
    };
    let stubbed = matches!(result.done, Done::Ran { stubbed: true });
    map.insert("stubbed".into(), json!(stubbed));
    let refusal: Option<&Refusal> = match &result.done {
        Done::Budget(r) | Done::Unavailable(r) => Some(r),
        _ => None,
    };
    if let Some(refusal) = refusal {
        map.insert("reason".into(), json!(refusal.reason));
        map.insert("detail".into(), json!(refusal.detail));
    }
    match result.done {
        Done::Interrupted => {
            map.insert(
                "detail".into(),
                json!("interrupted before the lane finished"),
            );
            map.insert("interrupted".into(), json!(true));
        }
        Done::Cancelled => {
            map.insert(
                "detail".into(),
                json!("not started: an explicitly named reviewer failed"),
            );
        }
        _ => {}
    }
    map.insert("identity".into(), json!(job.identity.id));
    super::model_record::result_member(map, result.model.as_ref());
    value
}

/// The identity ids of `jobs`, in run order.
fn identity_ids(jobs: &[Job]) -> Vec<&str> {
    jobs.iter().map(|job| job.identity.id.as_str()).collect()
}
