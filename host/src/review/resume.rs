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
use super::record::{RunRecord, SubjectKey};
use crate::error::Failure;

/// Prefix of every run dir (review-workflow.md §7).
pub const RUN_DIR_PREFIX: &str = "gsd-review-";
/// Most directory entries of the temp dir looked at when listing runs.
const MAX_SCANNED: usize = 10_000;
/// Largest review file whose hash is checked (the spawn output cap).
pub const MAX_REVIEW_BYTES: u64 = 64 * 1024 * 1024;

/// The review file of identity `id` in `run_dir`.
pub fn review_path(run_dir: &Path, id: &str) -> PathBuf {
    run_dir.join(format!(
        "gsd-review-{}.md",
        crate::plan::safe_instance_name(id)
    ))
}

/// A past run found in the temp dir.
#[derive(Debug, Clone)]
pub struct PastRun {
    /// The run dir.
    pub dir: PathBuf,
    /// Its record.
    pub record: RunRecord,
    /// Last status per recorded identity (`None`: no finished attempt).
    pub statuses: Vec<(String, Option<Status>)>,
    /// Another process holds the run's lock (it is running now).
    pub running: bool,
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

/// Where run dirs live: `TMPDIR` or the platform temp dir (review-workflow.md §7).
pub fn runs_root() -> PathBuf {
    std::env::temp_dir()
}

/// Reads one run dir as a past run.
///
/// # Errors
///
/// The record is missing or invalid, or the journal cannot be read.
pub fn inspect(dir: &Path) -> Result<PastRun, Failure> {
    let meta = std::fs::symlink_metadata(dir).map_err(|err| {
        Failure::new(format!(
            "no review run at {}: {err}; `gsd-lane runs` lists past runs",
            dir.display()
        ))
    })?;
    if !meta.is_dir() {
        return Err(Failure::new(format!(
            "{}: not a directory (a run dir is a directory, never a symlink)",
            dir.display()
        )));
    }
    let record = RunRecord::read(dir)?;
    let lines = journal::read(dir)?;
    let last = journal::last_by_identity(&lines);
    let statuses = record
        .identities
        .iter()
        .map(|i| (i.id.clone(), last.get(&i.id).map(|(l, _)| l.status)))
        .collect();
    Ok(PastRun {
        dir: dir.to_owned(),
        record,
        statuses,
        running: is_locked(dir),
    })
}

/// Every run dir under [`runs_root`] with a valid record, newest first. Dirs without a valid
/// record (older versions, other tools, runs of a different version) are skipped.
pub fn list() -> Vec<PastRun> {
    let root = runs_root();
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut runs: Vec<PastRun> = entries
        .take(MAX_SCANNED)
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(RUN_DIR_PREFIX))
        .filter_map(|e| inspect(&e.path()).ok())
        .collect();
    runs.sort_by(|a, b| {
        b.record
            .created_ms
            .cmp(&a.record.created_ms)
            .then_with(|| b.dir.cmp(&a.dir))
    });
    runs
}

/// The newest past run matching `subject` (or, without one, started in `cwd`).
pub fn latest(subject: Option<&SubjectKey>, cwd: &Path) -> Option<PastRun> {
    list().into_iter().find(|run| match subject {
        Some(subject) => run.record.subject.same_target(subject),
        None => run.record.cwd == cwd,
    })
}

/// True when another process holds the run's lock.
fn is_locked(dir: &Path) -> bool {
    let Ok(file) = std::fs::File::open(dir.join(LOCK_NAME)) else {
        return false;
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(_) => true,
    }
}

/// The run's exclusive lock, held for as long as the value lives.
#[derive(Debug)]
pub struct RunLock(#[allow(dead_code)] std::fs::File);

/// Takes the run dir's lock without waiting.
///
/// # Errors
///
/// Another process runs (or resumes) this run dir now, or the lock file cannot be opened.
pub fn lock(dir: &Path) -> Result<RunLock, Failure> {
    let path = dir.join(LOCK_NAME);
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options
        .open(&path)
        .map_err(|err| Failure::new(format!("opening {}: {err}", path.display())))?;
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
/// identities that run again even when they finished.
pub fn decide(run_dir: &Path, lines: &[Line], retry: &[String]) -> Decision {
    let mut decision = Decision::default();
    for (id, (line, attempts)) in journal::last_by_identity(lines) {
        decision.attempts.insert(id.clone(), attempts);
        if !line.status.is_finished_review() || retry.contains(&id) {
            continue;
        }
        let on_disk = journal::file_sha256(&review_path(run_dir, &id), MAX_REVIEW_BYTES);
        if on_disk.is_none() || on_disk != line.review_sha256 {
            continue;
        }
        let metadata = match &line.metadata {
            None => None,
            Some(value) => match metadata_from_json(value) {
                Some(meta) => Some(meta),
                None => continue,
            },
        };
        decision.kept.insert(id, Kept { metadata });
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
        let decision = decide(dir.path(), &lines, &[]);
        assert_eq!(
            decision.kept.keys().collect::<Vec<_>>(),
            vec!["alpha", "beta"]
        );
        let decision = decide(dir.path(), &lines, &["beta".to_owned()]);
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
