//! The invocation loop (review-workflow.md §9): lanes concurrently, the identities of one lane
//! one at a time in run order, `--jobs` caps how many lanes run at once (FIFO in run order, so
//! `--jobs 1` is the reference's sequential run). Each identity runs on its lane's own thread:
//! one lane's failure or hang never affects another's result, and a lane thread that dies (a
//! panic, which is a bug) leaves its identities reported as not finished, never as clean.
//!
//! The coordinator (the caller's thread) receives [`Event`]s and returns the results in run
//! order; an explicitly named identity ending `ok:false` stops new starts (running lanes
//! finish); SIGINT/SIGTERM kills every live lane process group and, after at most
//! [`INTERRUPT_GRACE`], marks whatever has not finished as interrupted.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::budget::{self, Metadata, Step};
use super::interrupt;
use super::journal::{self, Journal, Line, Status};
use super::preflight::Cleared;
use super::rundir::RunDir;
use super::selection::Identity;
use crate::config::ProjectConfig;
use crate::plan::PlanInputs;
use crate::project::HostEnv;
use crate::refusal::Refusal;
use crate::registry::Lane;
use crate::run::lane::{Outcome, RunSetup};
use crate::run::rate_limit::{self, Retrying};

/// How long after an interruption the coordinator waits for killed lanes to report.
pub const INTERRUPT_GRACE: Duration = Duration::from_millis(700);

/// One identity to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// Position in run order.
    pub index: usize,
    /// The identity.
    pub identity: Identity,
    /// Its lane.
    pub lane: Lane,
    /// Named by an explicit flag.
    pub explicit: bool,
    /// The budget `B` when `> 0`.
    pub budget: Option<i64>,
    /// Its admitted plan and its lane's probe verdict (pre-flight).
    pub cleared: Cleared,
}

/// What every lane thread shares.
#[derive(Debug, Clone)]
pub struct Shared {
    /// How spawned lanes are confined (`review.sandbox`, `--sandbox`).
    pub sandbox: crate::sandbox::SandboxMode,
    /// Project configuration.
    pub config: ProjectConfig,
    /// Environment (PATH, HOME, GSD_HOME).
    pub env: HostEnv,
    /// Project root (consent lookups).
    pub project_root: PathBuf,
    /// The run dir.
    pub run_dir: RunDir,
    /// Repository root.
    pub repo_root: String,
    /// Handler lock directory.
    pub lock_dir: PathBuf,
    /// Plan file names (phase form), `None` in the `--prompt-file` form.
    pub plan_names: Option<Vec<String>>,
    /// The results journal every finished attempt is appended to (`None`: not recorded).
    pub journal: Option<Arc<Journal>>,
    /// Attempts already made per identity by earlier runs of this run dir (resume).
    pub prior_attempts: BTreeMap<String, u32>,
    /// The reviews whose hash each final journal line records, their heads kept (REVIEWS.md
    /// uses them).
    pub reviews: Arc<super::captured::Captured>,
    /// What the budget steps of the review's lanes read once for all of them.
    pub budget_inputs: Arc<budget::Inputs>,
    /// Where the lanes' threads say things (printed at the next event, a retry at once).
    pub notices: super::notice::Notices,
}

/// How one identity ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Done {
    /// It ran: a review or a stub.
    Ran {
        /// True for a diagnostic stub.
        stubbed: bool,
    },
    /// The budget step failed; the notice is the review file.
    Budget(Refusal),
    /// The run pipeline refused it at run time.
    Unavailable(Refusal),
    /// Not started: an explicitly named identity failed first.
    Cancelled,
    /// Interrupted (killed, or never started after SIGINT/SIGTERM).
    Interrupted,
}

/// One identity's result.
#[derive(Debug, Clone)]
pub struct LaneResult {
    /// The ending.
    pub done: Done,
    /// Budget metadata, when written.
    pub metadata: Option<Metadata>,
    /// Whether it started (for interrupted identities).
    pub started: bool,
    /// Rate-limit retries made (run::rate_limit).
    pub retries: u32,
    /// Changes to the repository seen while the lane ran (the sandbox's detection).
    pub repository_changes: Vec<String>,
    /// The model the lane ran with (upstream #3649); `None` when it did not run here.
    pub model: Option<super::model_record::ModelRecord>,
}

impl LaneResult {
    /// `ok` of the run result (ran, stub or not).
    pub fn ok(&self) -> bool {
        matches!(self.done, Done::Ran { .. })
    }
}

/// What lane threads tell the coordinator.
#[derive(Debug)]
pub enum Event {
    /// Identity `index` started.
    Started(usize),
    /// Identity `index` ended.
    Finished(usize, LaneResult),
    /// SIGINT or SIGTERM arrived (lanes already killed).
    Interrupted,
}

/// A FIFO gate: lanes acquire in run order, at most `jobs` at once.
struct Gate {
    state: Mutex<(usize, usize)>, // (next ticket to serve, running)
    wake: Condvar,
    jobs: usize,
}

impl Gate {
    /// Waits for `ticket`'s turn and takes a running slot; `None` when the run stopped
    /// meanwhile.
    fn acquire(&self, ticket: usize, stop: &AtomicBool) -> Option<Slot<'_>> {
        let Ok(mut state) = self.state.lock() else {
            return None;
        };
        loop {
            if stop.load(Ordering::SeqCst) || interrupt::interrupted() {
                // Give up the turn so later tickets are not blocked behind this one.
                if state.0 == ticket {
                    state.0 += 1;
                    self.wake.notify_all();
                }
                return None;
            }
            if state.0 == ticket && state.1 < self.jobs {
                state.0 += 1;
                state.1 += 1;
                self.wake.notify_all();
                return Some(Slot(self));
            }
            match self.wake.wait_timeout(state, Duration::from_millis(50)) {
                Ok((next, _)) => state = next,
                Err(_) => return None,
            }
        }
    }

    fn release(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.1 = state.1.saturating_sub(1);
            self.wake.notify_all();
        }
    }
}

/// A running slot of the [`Gate`], given back when dropped: also when its lane thread unwinds,
/// so a lane that dies never holds the other lanes back.
struct Slot<'g>(&'g Gate);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// Runs every job (`fail_fast`: a named lane that failed leaves the named lanes not yet started,
/// as `review` does; `code-review` runs them all); `on_event` sees each event in arrival order
/// (progress display). Returns the results in run order and whether the run was interrupted.
pub fn run_all(
    jobs: Vec<Job>,
    shared: &Shared,
    max_jobs: usize,
    fail_fast: bool,
    mut on_event: impl FnMut(&Event, &[Job]),
) -> (Vec<LaneResult>, bool) {
    let (tx, rx) = mpsc::channel::<Event>();
    let watcher = {
        let tx = tx.clone();
        interrupt::Watcher::install(move || {
            let _ = tx.send(Event::Interrupted);
        })
    };
    if let Err(err) = &watcher {
        shared
            .notices
            .warn(format!("{err}; Ctrl-C ends the review abruptly"));
    }
    // Group jobs by lane, in run order of each lane's first identity.
    let mut groups: Vec<Vec<Job>> = Vec::new();
    for job in &jobs {
        match groups.iter_mut().find(|g| {
            g.first()
                .is_some_and(|f| f.identity.cli == job.identity.cli)
        }) {
            Some(group) => group.push(job.clone()),
            None => groups.push(vec![job.clone()]),
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let gate = Arc::new(Gate {
        state: Mutex::new((0, 0)),
        wake: Condvar::new(),
        jobs: max_jobs.max(1),
    });
    let shared = Arc::new(shared.clone());
    for (ticket, group) in groups.into_iter().enumerate() {
        let tx = tx.clone();
        let stop = Arc::clone(&stop);
        let gate = Arc::clone(&gate);
        let notices = shared.notices.clone();
        let shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name(format!("gsd-review-{ticket}"))
            .spawn(move || run_group(&group, ticket, &shared, &gate, &stop, fail_fast, &tx));
        if let Err(err) = spawned {
            notices.error(format!("starting a lane thread: {err}"));
        }
    }
    drop(tx);
    let results = coordinate(
        &jobs,
        &rx,
        &stop,
        fail_fast,
        &mut |event: &Event, jobs: &[Job]| {
            if let Event::Finished(index, result) = event {
                if let Some(job) = jobs.get(*index) {
                    record_final(job, result, &shared);
                }
            }
            on_event(event, jobs);
        },
    );
    drop(watcher);
    (results, interrupt::interrupted())
}

fn coordinate(
    jobs: &[Job],
    rx: &Receiver<Event>,
    stop: &AtomicBool,
    fail_fast: bool,
    on_event: &mut impl FnMut(&Event, &[Job]),
) -> Vec<LaneResult> {
    let mut results: BTreeMap<usize, LaneResult> = BTreeMap::new();
    let mut started: Vec<bool> = vec![false; jobs.len()];
    let mut deadline: Option<Instant> = None;
    while results.len() < jobs.len() {
        let event = match deadline {
            None => match rx.recv() {
                Ok(event) => event,
                Err(_) => break,
            },
            Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(event) => event,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            },
        };
        match &event {
            Event::Started(index) => {
                if let Some(flag) = started.get_mut(*index) {
                    *flag = true;
                }
            }
            Event::Finished(index, result) => {
                if jobs
                    .get(*index)
                    .is_some_and(|job| stops_the_named(fail_fast, job, result))
                {
                    stop.store(true, Ordering::SeqCst);
                }
                results.insert(*index, result.clone());
            }
            Event::Interrupted => {
                deadline.get_or_insert_with(|| Instant::now() + INTERRUPT_GRACE);
            }
        }
        on_event(&event, jobs);
    }
    // Whatever did not report: interrupted and not back within the grace, or a lane thread that
    // died (a panic is a bug: the default hook has printed it, and the lane is never shown as
    // a clean result).
    for (index, job) in jobs.iter().enumerate() {
        if let std::collections::btree_map::Entry::Vacant(slot) = results.entry(index) {
            let result = LaneResult {
                done: Done::Interrupted,
                metadata: None,
                started: started.get(index).copied().unwrap_or(false),
                retries: 0,
                repository_changes: Vec::new(),
                model: None,
            };
            let _ = job;
            on_event(&Event::Finished(index, result.clone()), jobs);
            slot.insert(result);
        }
    }
    results.into_values().collect()
}

fn run_group(
    group: &[Job],
    ticket: usize,
    shared: &Shared,
    gate: &Gate,
    stop: &AtomicBool,
    fail_fast: bool,
    tx: &Sender<Event>,
) {
    // A panic below is a gsd-lane bug: the guard reports this lane's unfinished identities as
    // internal errors naming the lane, instead of leaving them to look interrupted.
    let guard = PanicReport::new(
        tx,
        group.iter().map(|job| job.index).collect(),
        |index, first| {
            let job = group.iter().find(|job| job.index == index)?;
            let message = if first {
                format!(
                "internal error: gsd-lane panicked while running lane {} for reviewer {} (a bug in gsd-lane, not in the lane; the panic message is on stderr)",
                job.lane.slug, job.identity.id
            )
            } else {
                format!(
                    "internal error: not run: gsd-lane panicked earlier in the thread of lane {}",
                    job.lane.slug
                )
            };
            Some(internal_stub(job, shared, &message))
        },
    );
    let slot = gate.acquire(ticket, stop);
    let admitted = slot.is_some();
    for job in group {
        if !admitted || stop.load(Ordering::SeqCst) || interrupt::interrupted() {
            let done = if interrupt::interrupted() {
                Done::Interrupted
            } else {
                Done::Cancelled
            };
            guard.finished(
                job.index,
                LaneResult {
                    done,
                    metadata: None,
                    started: false,
                    retries: 0,
                    repository_changes: Vec::new(),
                    model: None,
                },
            );
            continue;
        }
        let _ = tx.send(Event::Started(job.index));
        let mut result = execute(job, shared);
        if let Err(replaced) = shared.run_dir.in_place() {
            result = run_dir_replaced(job, shared, &replaced, result);
        }
        if interrupt::interrupted() {
            result.done = Done::Interrupted;
        }
        result.started = true;
        // Said before this lane's slot is free, so that no named lane starts after it failed.
        if stops_the_named(fail_fast, job, &result) {
            stop.store(true, Ordering::SeqCst);
        }
        guard.finished(job.index, result);
    }
    drop(slot);
}

/// Whether `result` of `job` leaves the named lanes not yet started (`review` only, §9): a
/// named lane that failed (not one cancelled or interrupted itself).
fn stops_the_named(fail_fast: bool, job: &Job, result: &LaneResult) -> bool {
    fail_fast
        && job.explicit
        && !result.ok()
        && !matches!(result.done, Done::Cancelled | Done::Interrupted)
}

/// Reports the identities of a lane thread that had not finished when the thread panicked:
/// on drop during a panic, each is sent as the result `on_panic` makes (`first` for the one
/// that was running). `catch_unwind` stays at the loaded-module boundary (CONTRIBUTING.md):
/// the panic still unwinds the thread; only what it leaves unreported is said.
struct PanicReport<'a, F: Fn(usize, bool) -> Option<LaneResult>> {
    tx: &'a Sender<Event>,
    pending: std::cell::RefCell<Vec<usize>>,
    on_panic: F,
}

impl<'a, F: Fn(usize, bool) -> Option<LaneResult>> PanicReport<'a, F> {
    fn new(tx: &'a Sender<Event>, pending: Vec<usize>, on_panic: F) -> Self {
        PanicReport {
            tx,
            pending: std::cell::RefCell::new(pending),
            on_panic,
        }
    }

    /// Sends identity `index`'s result; it is no longer pending.
    fn finished(&self, index: usize, result: LaneResult) {
        self.pending.borrow_mut().retain(|&i| i != index);
        let _ = self.tx.send(Event::Finished(index, result));
    }
}

impl<F: Fn(usize, bool) -> Option<LaneResult>> Drop for PanicReport<'_, F> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let pending = std::mem::take(&mut *self.pending.borrow_mut());
        for (n, index) in pending.into_iter().enumerate() {
            if let Some(result) = (self.on_panic)(index, n == 0) {
                let _ = self.tx.send(Event::Finished(index, result));
            }
        }
    }
}

/// Appends the identity's final attempt to the journal (synced before the result is shown).
/// The review file is read once, streamed: every byte is hashed for the journal, its head
/// (`review.max_inline_bytes`) kept for REVIEWS.md.
fn record_final(job: &Job, result: &LaneResult, shared: &Shared) {
    let id = &job.identity.id;
    let mut review_sha256 = None;
    if matches!(result.done, Done::Ran { .. } | Done::Budget(_)) {
        let path = super::resume::review_path(&shared.run_dir.path, id);
        let bound = super::captured::checked_bound(&shared.config);
        if let Some(review) = shared.reviews.read(&path, bound) {
            review_sha256.clone_from(&review.sha256);
            shared.reviews.keep(id, review);
        }
    }
    let Some(journal) = &shared.journal else {
        return;
    };
    let attempt = shared.prior_attempts.get(id).copied().unwrap_or(0) + 1 + result.retries;
    let (status, refusal) = match &result.done {
        Done::Ran { stubbed: false } => (Status::Review, None),
        Done::Ran { stubbed: true } => (Status::Stub, None),
        Done::Budget(refusal) => (Status::BudgetFailed, Some(refusal)),
        Done::Unavailable(refusal) => (Status::Unavailable, Some(refusal)),
        Done::Cancelled => (Status::Cancelled, None),
        Done::Interrupted => (Status::Interrupted, None),
    };
    let mut line = Line::new(id, attempt, status);
    if let Some(refusal) = refusal {
        line.reason = Some(refusal.reason.to_string());
        line = line.with_detail(&refusal.detail);
    }
    line.review_sha256 = review_sha256;
    if result.metadata.is_some() {
        let name = format!(
            "gsd-review-prompt-{}.md",
            crate::plan::safe_instance_name(id)
        );
        line.prompt_sha256 =
            journal::file_sha256(&shared.run_dir.file(&name), super::resume::MAX_REVIEW_BYTES);
    }
    line.metadata = result.metadata.as_ref().map(Metadata::to_json);
    line.retries = result.retries;
    if let Err(failure) = journal.append(&line) {
        shared.notices.warn(failure.to_string());
    }
}

/// A lane whose run failed inside gsd-lane: it ran, and its review file is the generic stub
/// with the error as the extra diagnostic (the stub's first line is preserved).
fn internal_stub(job: &Job, shared: &Shared, message: &str) -> LaneResult {
    let id = crate::plan::safe_instance_name(&job.identity.id);
    let err = shared.run_dir.file(&format!("gsd-review-{id}.err"));
    let sidecar = crate::run::review_file::read_sidecar(&err);
    let stub = crate::run::review_file::stub_text(&job.lane.slug, &sidecar, Some(message));
    // Replaced whatever the lane left at the name (a link, a FIFO): the stub always lands.
    if let Err(failure) = shared
        .run_dir
        .replace(&format!("gsd-review-{id}.md"), &stub)
    {
        shared.notices.error(failure.to_string());
    }
    LaneResult {
        done: Done::Ran { stubbed: true },
        metadata: None,
        started: true,
        retries: 0,
        repository_changes: Vec::new(),
        model: None,
    }
}

/// A lane that ended while its run dir was replaced, or after it had been: its review file
/// (in the run dir gsd-lane holds) becomes the generic stub saying so, whatever the lane
/// wrote, and it is reported as failed, never as a review.
fn run_dir_replaced(
    job: &Job,
    shared: &Shared,
    replaced: &super::rundir::Replaced,
    ran: LaneResult,
) -> LaneResult {
    if !matches!(ran.done, Done::Ran { .. } | Done::Budget(_)) {
        return ran;
    }
    shared.notices.error(format!(
        "reviewer {} is marked failed: {replaced}",
        job.identity.id
    ));
    let mut result = internal_stub(job, shared, &replaced.to_string());
    result.metadata = ran.metadata;
    result.retries = ran.retries;
    result.repository_changes = ran.repository_changes;
    result.model = ran.model;
    result
}

/// Budget step, then the run pipeline.
fn execute(job: &Job, shared: &Shared) -> LaneResult {
    let metadata = match budget_step(job, shared) {
        None => None,
        Some(Step::Run { metadata }) => metadata,
        Some(Step::Skip { refusal, metadata }) => {
            return LaneResult {
                done: Done::Budget(refusal),
                metadata,
                started: true,
                retries: 0,
                repository_changes: Vec::new(),
                model: None,
            }
        }
    };
    let egress = crate::trust::egress_check(&shared.env, &shared.project_root);
    let setup = RunSetup {
        view_proof: crate::sandbox::confine::ViewProof::Probed,
        config: &shared.config,
        inputs: PlanInputs {
            run_dir: shared.run_dir.as_str(),
            repo_root: shared.repo_root.clone(),
            ..PlanInputs::default()
        },
        path_var: shared.env.path.clone(),
        home: shared.env.home.clone(),
        lock_dir: shared.lock_dir.clone(),
        egress: egress.as_ref(),
        handler_override: None,
        sandbox: shared.sandbox,
    };
    let prior = shared
        .prior_attempts
        .get(&job.identity.id)
        .copied()
        .unwrap_or(0);
    let mut retried = 0;
    let mut on_retry = |retry: &Retrying| {
        retried += 1;
        note_retry(job, shared, prior + retried, retry);
    };
    let attempts = rate_limit::run_lane_retrying(
        &job.lane,
        &job.cleared.plan,
        &job.cleared.probe,
        &setup,
        &mut on_retry,
        &interrupt::interrupted,
    );
    let retries = attempts.retries;
    let mut repository_changes = Vec::new();
    let mut model = None;
    let done = match attempts.outcome {
        Ok(Outcome::Unavailable(refusal)) => Done::Unavailable(refusal),
        Ok(Outcome::Completed(completion)) => {
            repository_changes = completion.repository_changes;
            model = Some(completion.model);
            // A review cut off by its bound or cap is kept (with its notice) but never
            // counted as a finished review: not in the verdict, and rerun on resume.
            Done::Ran {
                stubbed: completion.stubbed || completion.incomplete,
            }
        }
        Err(failure) => {
            let mut result = internal_stub(job, shared, &failure.message);
            result.metadata = metadata;
            result.retries = retries;
            return result;
        }
    };
    LaneResult {
        done,
        metadata,
        started: true,
        retries,
        repository_changes,
        model,
    }
}

/// The budget step (§8) when the lane's budget `B > 0`.
fn budget_step(job: &Job, shared: &Shared) -> Option<Step> {
    let b = job.budget.filter(|b| *b > 0)?;
    let id = crate::plan::safe_instance_name(&job.identity.id);
    Some(match &shared.plan_names {
        Some(names) => budget::phase_step(&shared.run_dir, &id, b, names, &shared.budget_inputs),
        None => budget::prompt_file_step(&shared.run_dir, &id, b, &shared.budget_inputs),
    })
}

/// A rate-limited attempt about to be retried: journalled as attempt `attempt`, and said.
fn note_retry(job: &Job, shared: &Shared, attempt: u32, retry: &Retrying) {
    if let Some(journal) = &shared.journal {
        let mut line =
            Line::new(&job.identity.id, attempt, Status::RateLimited).with_detail(&retry.why);
        line.wait_ms = Some(u64::try_from(retry.wait.as_millis()).unwrap_or(u64::MAX));
        if let Err(failure) = journal.append(&line) {
            shared.notices.warn(failure.to_string());
        }
    }
    shared.notices.info(format!(
        "reviewer {} rate-limited ({}); retrying in {} ms",
        job.identity.id,
        retry.why,
        retry.wait.as_millis()
    ));
    // The lane now waits: said at once, not at the next event.
    shared.notices.flush();
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn result(done: Done) -> LaneResult {
        LaneResult {
            done,
            metadata: None,
            started: true,
            retries: 0,
            repository_changes: Vec::new(),
            model: None,
        }
    }

    /// Issue 21 item 9: a panic in a lane thread reports that thread's unfinished identities
    /// (the running one first) as the internal errors `on_panic` makes, not as interrupted.
    #[test]
    fn a_panicking_lane_thread_reports_its_unfinished_identities() {
        let (tx, rx) = mpsc::channel::<Event>();
        let died = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let guard = PanicReport::new(&tx, vec![3, 4, 5], |index, first| {
                        let reason = if first { "running" } else { "after" };
                        Some(result(Done::Unavailable(Refusal::new(
                            crate::refusal::Reason::MalformedLane,
                            format!("{index} {reason}"),
                        ))))
                    });
                    guard.finished(3, result(Done::Ran { stubbed: false }));
                    panic!("a bug while running identity 4");
                })
                .join()
        });
        assert!(died.is_err());
        drop(tx);
        let seen: Vec<(usize, String)> = rx
            .iter()
            .filter_map(|event| match event {
                Event::Finished(index, r) => Some((
                    index,
                    match r.done {
                        Done::Unavailable(refusal) => refusal.detail,
                        other => format!("{other:?}"),
                    },
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                (3, "Ran { stubbed: false }".to_owned()),
                (4, "4 running".to_owned()),
                (5, "5 after".to_owned()),
            ]
        );
    }

    #[test]
    fn a_lane_thread_that_dies_gives_its_running_slot_back() {
        let gate = Gate {
            state: Mutex::new((0, 0)),
            wake: Condvar::new(),
            jobs: 1,
        };
        let stop = AtomicBool::new(false);
        let died = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let _slot = gate.acquire(0, &stop).expect("the first ticket runs");
                    panic!("a lane thread dies mid-run");
                })
                .join()
        });
        assert!(died.is_err());
        assert_eq!(gate.state.lock().unwrap().1, 0, "no slot is left held");
        assert!(
            gate.acquire(1, &stop).is_some(),
            "the next lane gets the slot"
        );
    }
}
