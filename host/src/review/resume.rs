//! Resuming a review run (`review --resume [<run-dir>]`, `gsd-lane runs`): finding past run
//! dirs, telling their status from the record and the journal, and deciding which identities a
//! resumed run keeps as written and which it runs again.
//!
//! An identity is kept only when its last journal line says it wrote a real review *and* its
//! review file still has the hash the journal recorded; anything else (stub, failure,
//! interruption, a missing line after a SIGKILL, an edited or missing review file) runs again.

use super::rundir::LOCK_NAME;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::budget::Metadata;
use super::journal::{self, Line, Status};
use super::ledger::{self, Ledger};
use super::record::{RunRecord, SubjectKey};
use crate::error::Failure;
use crate::output::escape_text;
use crate::private_fs;

/// Largest review file whose hash is checked (the spawn output cap, and a little room).
pub const MAX_REVIEW_BYTES: u64 = super::captured::MAX_REVIEW_BYTES;

/// The review file of identity `id` in `run_dir`.
pub fn review_path(run_dir: &Path, id: &str) -> PathBuf {
    run_dir.join(format!(
        "gsd-review-{}.md",
        crate::plan::safe_instance_name(id)
    ))
}

/// A past run: one of this user's run dirs with gsd-lane's own record of it.
#[derive(Debug, Clone)]
pub struct PastRun {
    /// The run dir (resolved).
    pub dir: PathBuf,
    /// gsd-lane's own record and journal of it.
    pub ledger: Ledger,
    /// Its record (gsd-lane's own copy).
    pub record: RunRecord,
    /// Its journal (gsd-lane's own copy), every valid line in order.
    pub lines: Vec<Line>,
    /// Last status per recorded identity (`None`: no finished attempt).
    pub statuses: Vec<(String, Option<Status>)>,
    /// Another process holds the run's lock (it is running now).
    pub running: bool,
    /// The run dir's descriptor, held since it was checked: every later read or write of a
    /// file in it goes through it ([`crate::held_dir`]).
    pub held: super::rundir::Held,
}

impl PastRun {
    /// `complete` (every identity has a real review), `running`, or `resumable`.
    pub fn state(&self) -> &'static str {
        if self.running {
            "running"
        } else if self
            .statuses
            .iter()
            .all(|(_, s)| s.is_some_and(Status::is_finished_review))
        {
            "complete"
        } else {
            "resumable"
        }
    }

    /// The JSON form printed by `gsd-lane runs --json`.
    pub fn to_json(&self) -> Value {
        let identities: Vec<Value> = self
            .statuses
            .iter()
            .map(|(id, s)| json!({"identity": id, "status": s.map_or("missing", Status::as_str)}))
            .collect();
        let subject = match &self.record.subject {
            SubjectKey::Phase { phase, dir } => json!({"phase": phase, "dir": dir}),
            SubjectKey::PromptFile { path } => json!({"promptFile": path}),
        };
        json!({
            "runDir": self.dir,
            "created": self.record.created,
            "state": self.state(),
            "subject": subject,
            "output": self.record.output,
            "identities": identities,
        })
    }
}

/// A refused resume (status 2): `dir` and why.
fn refuse(dir: &Path, why: &str) -> Failure {
    Failure {
        message: format!(
            "cannot resume {}: {why}; nothing was run",
            escape_text(&dir.display().to_string())
        ),
        status: super::continuation::REFUSED,
    }
}

/// Reads the run dir `dir` as a past run: it must be this user's own (a directory, not a
/// link, mode 0700), have an entry in gsd-lane's own records under `ledger_root`, and its
/// copies of the record and journal must match that entry.
///
/// # Errors
///
/// A missing dir (status 1); a dir that is not ours, has no record of ours, or whose copies
/// were changed (status 2, naming why); an unreadable record.
pub fn inspect(ledger_root: &Path, dir: &Path) -> Result<PastRun, Failure> {
    if let Err(err) = std::fs::symlink_metadata(dir) {
        return Err(Failure::new(format!(
            "no review run at {}: {err}; `gsd-lane runs` lists past runs",
            escape_text(&dir.display().to_string())
        )));
    }
    private_fs::check_own_run_dir(dir).map_err(|why| refuse(dir, &why.to_string()))?;
    ledger::check_root(ledger_root)?;
    let resolved = dir
        .canonicalize()
        .map_err(|err| refuse(dir, &err.to_string()))?;
    let ledger = Ledger::of(ledger_root, &resolved);
    if !std::fs::symlink_metadata(&ledger.dir).is_ok_and(|m| m.is_dir()) {
        return Err(refuse(
            dir,
            &format!(
                "gsd-lane has no record of it under {} (it was not started by you with this gsd-lane, or its record was removed)",
                ledger_root.display()
            ),
        ));
    }
    let record = RunRecord::read(&ledger.record_path())?;
    load(ledger, record, &resolved)
}

/// A past run from its ledger entry and record, once the run dir is checked.
fn load(ledger: Ledger, record: RunRecord, dir: &Path) -> Result<PastRun, Failure> {
    // Checked on the descriptor, which is held from here on: a run dir swapped after this
    // check is never read.
    let held = super::rundir::Held::hold(dir).map_err(|why| refuse(dir, &why.to_string()))?;
    if record.run_dir != dir {
        return Err(refuse(
            dir,
            &format!(
                "gsd-lane's own record {} belongs to another run dir",
                ledger.record_path().display()
            ),
        ));
    }
    // A running review may be rewriting its copies right now: it is listed as running, and
    // resuming it is refused by its lock; the copies are checked once it has ended.
    let running = is_locked(dir)?;
    if !running {
        super::ledger::verify_copies(&ledger, dir)?;
    }
    let lines = journal::read(&ledger.journal_path())?;
    let last = journal::last_by_identity(&lines);
    let statuses = record
        .identities
        .iter()
        .map(|i| (i.id.clone(), last.get(&i.id).map(|(l, _)| l.status)))
        .collect();
    Ok(PastRun {
        dir: dir.to_owned(),
        ledger,
        record,
        lines,
        statuses,
        running,
        held,
    })
}

/// The past runs and what was skipped.
#[derive(Debug, Default)]
pub struct Listing {
    /// This user's runs with a valid record, newest first.
    pub runs: Vec<PastRun>,
    /// One line per run skipped, and why.
    pub notes: Vec<String>,
}

/// Every run recorded under `ledger_root` (`$GSD_HOME/.gsd/runs`), newest first. An entry
/// whose record cannot be read, whose run dir is not this user's own 0700 dir, or whose copies
/// were changed is skipped with a note; an entry whose run dir is gone is forgotten (removed),
/// with a note. The temp dir is never scanned: what else it holds changes nothing.
pub fn list(ledger_root: &Path) -> Listing {
    let (recorded, mut notes) = recorded(ledger_root);
    let mut runs = Vec::new();
    for (ledger, record) in recorded {
        let dir = record.run_dir.clone();
        match load(ledger, record, &dir) {
            // A listing reads nothing more from the run dir: its descriptor is closed at once
            // (however many runs are listed, one is open at a time).
            Ok(run) => runs.push(PastRun {
                held: super::rundir::Held::default(),
                ..run
            }),
            Err(failure) => notes.push(format!("skipped: {}", failure.message)),
        }
    }
    Listing { runs, notes }
}

/// Most entries without a readable record named one by one in the notes (the rest counted).
const MAX_SKIP_NOTES: usize = 10;

/// The entries under `ledger_root` with a readable record and a run dir that still exists,
/// newest first, and notes on the others (unreadable records; forgotten entries).
fn recorded(ledger_root: &Path) -> (Vec<(Ledger, RunRecord)>, Vec<String>) {
    let mut found = Vec::new();
    let mut notes = Vec::new();
    if std::fs::symlink_metadata(ledger_root).is_err() {
        return (found, notes);
    }
    if let Err(failure) = ledger::check_root(ledger_root) {
        notes.push(format!("skipped every run: {}", failure.message));
        return (found, notes);
    }
    let mut forgotten = 0_usize;
    let mut unnamed = 0_usize;
    for ledger in ledger::entries(ledger_root) {
        let record = match RunRecord::read(&ledger.record_path()) {
            Ok(record) => record,
            Err(failure) => {
                // Named up to a bound, counted past it: a folder holding thousands of other
                // entries must not bury the listing under notes.
                if notes.len() < MAX_SKIP_NOTES {
                    notes.push(format!("skipped: {}", failure.message));
                } else {
                    unnamed += 1;
                }
                continue;
            }
        };
        if std::fs::symlink_metadata(&record.run_dir)
            .is_err_and(|err| err.kind() == std::io::ErrorKind::NotFound)
        {
            ledger.remove();
            forgotten += 1;
            continue;
        }
        found.push((ledger, record));
    }
    if unnamed > 0 {
        notes.push(format!(
            "skipped {unnamed} more entr{} of {} that hold no readable run record",
            if unnamed == 1 { "y" } else { "ies" },
            ledger_root.display()
        ));
    }
    if forgotten > 0 {
        notes.push(format!(
            "forgot {forgotten} run(s) whose run dir no longer exists (their records in {} were removed)",
            ledger_root.display()
        ));
    }
    found.sort_by(|(_, a), (_, b)| {
        b.created_ms
            .cmp(&a.created_ms)
            .then_with(|| b.run_dir.cmp(&a.run_dir))
    });
    (found, notes)
}

/// The newest recorded run matching `subject` (or, without one, started in `cwd`), and the
/// notes of entries skipped on the way. That run must pass every check of [`inspect`]: when
/// it does not, the resume is refused (never silently replaced by an older run).
///
/// # Errors
///
/// The newest matching run is not this user's own 0700 dir, or its copies were changed.
pub fn latest(
    ledger_root: &Path,
    subject: Option<&SubjectKey>,
    cwd: &Path,
) -> (Result<Option<PastRun>, Failure>, Vec<String>) {
    let (recorded, notes) = recorded(ledger_root);
    let found = recorded.into_iter().find(|(_, record)| match subject {
        Some(subject) => record.subject.same_target(subject),
        None => record.cwd == cwd,
    });
    let run = found.map(|(ledger, record)| {
        let dir = record.run_dir.clone();
        load(ledger, record, &dir)
    });
    (run.transpose(), notes)
}

/// True when another process holds the run's lock.
///
/// # Errors
///
/// `run.lock` is not a regular file (a planted link or FIFO), refused with status 2.
fn is_locked(dir: &Path) -> Result<bool, Failure> {
    let path = dir.join(LOCK_NAME);
    let file = match private_fs::open_run_file_read(&path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(refuse(dir, &err.to_string())),
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            Ok(false)
        }
        Err(_) => Ok(true),
    }
}

/// The run's exclusive lock, held for as long as the value lives.
#[derive(Debug)]
pub struct RunLock(#[allow(dead_code)] std::fs::File);

/// Takes the run dir's lock without waiting; `run.lock` is opened through the no-follow,
/// non-blocking opener (a planted link, FIFO or hard link is refused by name).
///
/// # Errors
///
/// Another process runs (or resumes) this run dir now, or the lock file cannot be opened.
pub fn lock(dir: &Path) -> Result<RunLock, Failure> {
    let path = dir.join(LOCK_NAME);
    let file =
        private_fs::open_run_file(&path, private_fs::WriteMode::Keep).map_err(|err| Failure {
            message: format!("opening {}: {err}", path.display()),
            status: super::continuation::REFUSED,
        })?;
    match file.try_lock() {
        Ok(()) => Ok(RunLock(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(Failure {
            message: format!(
                "{} is in use by another gsd-lane review; wait for it to end",
                dir.display()
            ),
            status: 2,
        }),
        Err(std::fs::TryLockError::Error(err)) => {
            Err(Failure::new(format!("locking {}: {err}", path.display())))
        }
    }
}

/// A finished identity a resumed run keeps as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    /// Its budget metadata, as the first run recorded it.
    pub metadata: Option<Metadata>,
    /// The review read (once, streamed) and found to have the journaled hash: its head is what
    /// REVIEWS.md shows.
    pub review: super::captured::Review,
}

/// What a resumed run does.
#[derive(Debug, Clone, Default)]
pub struct Decision {
    /// Identities kept as written.
    pub kept: BTreeMap<String, Kept>,
    /// Attempts already made per identity (the next attempt continues the count).
    pub attempts: BTreeMap<String, u32>,
}

/// Decides, from the journal and the review files, which identities are kept; `retry` names
/// identities that run again even when they finished. Each kept review file is read once,
/// through the no-follow, non-blocking opener, streamed: the hash covers every byte, the first
/// `inline` bytes are kept.
pub fn decide(run_dir: &Path, lines: &[Line], retry: &[String], inline: u64) -> Decision {
    let mut decision = Decision::default();
    for (id, (line, attempts)) in journal::last_by_identity(lines) {
        decision.attempts.insert(id.clone(), attempts);
        if !line.status.is_finished_review() || retry.contains(&id) {
            continue;
        }
        let Some(review) = super::captured::read(&review_path(run_dir, &id), inline) else {
            continue;
        };
        if review.sha256.is_none() || line.review_sha256 != review.sha256 {
            continue;
        }
        let metadata = match &line.metadata {
            None => None,
            Some(value) => match metadata_from_json(value) {
                Some(meta) => Some(meta),
                None => continue,
            },
        };
        decision.kept.insert(id, Kept { metadata, review });
    }
    decision
}

/// The inverse of [`Metadata::to_json`]; `None` when any field is missing or mistyped.
pub fn metadata_from_json(value: &Value) -> Option<Metadata> {
    let int = |key: &str| value.get(key).and_then(Value::as_i64);
    let flag = |key: &str| value.get(key).and_then(Value::as_bool);
    Some(Metadata {
        budget: int("budget")?,
        effective_budget: int("effectiveBudget")?,
        estimated_tokens: int("estimatedTokens")?,
        omitted: value
            .get("omitted")?
            .as_array()?
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
        project_md_shrunk: flag("projectMdShrunk")?,
        plan_truncation_pct: value.get("planTruncationPct")?.as_f64()?,
        hard_failed: flag("hardFailed")?,
        note_injected: flag("noteInjected")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(dir: &Path, id: &str, text: &str) -> Line {
        std::fs::write(review_path(dir, id), text).expect("review");
        let mut line = Line::new(id, 1, Status::Review);
        line.review_sha256 = journal::file_sha256(&review_path(dir, id), MAX_REVIEW_BYTES);
        line
    }

    #[test]
    fn keeps_only_untouched_finished_reviews() {
        let dir = tempfile::tempdir().expect("dir");
        let alpha = finished(dir.path(), "alpha", "# alpha\n");
        let beta = finished(dir.path(), "beta", "# beta\n");
        let gamma = finished(dir.path(), "gamma", "# gamma\n");
        std::fs::write(review_path(dir.path(), "gamma"), "edited\n").expect("edit");
        let lines = vec![
            alpha,
            beta.clone(),
            gamma,
            Line::new("delta", 1, Status::Stub),
            Line::new("eps", 1, Status::Interrupted),
        ];
        let decision = decide(dir.path(), &lines, &[], 1024);
        assert_eq!(
            decision.kept.keys().collect::<Vec<_>>(),
            vec!["alpha", "beta"]
        );
        assert_eq!(decision.kept["alpha"].review.head, b"# alpha\n");
        let decision = decide(dir.path(), &lines, &["beta".to_owned()], 1024);
        assert_eq!(decision.kept.keys().collect::<Vec<_>>(), vec!["alpha"]);
        assert_eq!(decision.attempts["delta"], 1);
    }

    #[test]
    fn metadata_round_trips() {
        let meta = Metadata {
            budget: 100,
            effective_budget: 90,
            estimated_tokens: 80,
            omitted: vec!["context".into()],
            project_md_shrunk: true,
            plan_truncation_pct: 12.5,
            hard_failed: false,
            note_injected: true,
        };
        assert_eq!(metadata_from_json(&meta.to_json()), Some(meta));
        assert_eq!(metadata_from_json(&json!({"budget": 1})), None);
    }
}
