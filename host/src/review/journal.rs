//! The results journal of a review run, `gsd-review-journal.jsonl`: append-only, one compact
//! JSON line per finished attempt of an identity, each line flushed to disk (`fsync`) before
//! the next lane result is reported, so a run killed at any instant (SIGKILL included) leaves a
//! journal that says exactly which identities finished and how.
//!
//! Reading is total: the file is read up to [`MAX_JOURNAL_BYTES`], a line longer than
//! [`MAX_LINE_BYTES`], a torn last line (no trailing newline, e.g. the process died mid-write)
//! and any line that is not a valid v1 entry are ignored, never a crash.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::error::Failure;
use crate::private_fs::{open_run_file, open_run_file_read, read_run_file, WriteMode};

/// File name inside the run dir.
pub const FILE_NAME: &str = "gsd-review-journal.jsonl";
/// Most bytes of a journal read back.
pub const MAX_JOURNAL_BYTES: u64 = 4 * 1024 * 1024;
/// Longest journal line accepted on reading.
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// Longest `detail` written (the rest is cut at a character boundary).
const MAX_DETAIL_CHARS: usize = 2000;

/// How one attempt of an identity ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A real review was written.
    Review,
    /// A diagnostic stub was written.
    Stub,
    /// The attempt was rate-limited and is retried (never the last line of a finished identity
    /// unless the run died while waiting).
    RateLimited,
    /// The budget step failed (the skip notice is the review file).
    BudgetFailed,
    /// The run pipeline refused the identity at run time.
    Unavailable,
    /// Not started because an explicitly named identity failed.
    Cancelled,
    /// Interrupted by SIGINT/SIGTERM.
    Interrupted,
}

impl Status {
    /// True when a resumed run keeps this result as written.
    pub fn is_finished_review(self) -> bool {
        self == Status::Review
    }

    /// The word shown by `gsd-lane runs`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Review => "review",
            Status::Stub => "stub",
            Status::RateLimited => "rate-limited",
            Status::BudgetFailed => "budget-failed",
            Status::Unavailable => "unavailable",
            Status::Cancelled => "cancelled",
            Status::Interrupted => "interrupted",
        }
    }
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Line {
    /// Format version, always 1.
    pub v: u32,
    /// The identity (slug or instance name).
    pub identity: String,
    /// 1-based attempt number within this run dir (resumes continue the count).
    pub attempt: u32,
    /// How the attempt ended.
    pub status: Status,
    /// Refusal reason or failure kind, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable detail, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// SHA-256 (hex) of the review file as the attempt left it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_sha256: Option<String>,
    /// SHA-256 (hex) of the lane's trimmed prompt (`gsd-review-prompt-<id>.md`), when the
    /// budget step wrote one: the per-lane prompt this attempt was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_sha256: Option<String>,
    /// The budget step's metadata document, when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
    /// How long the runner waited before the next attempt (rate-limited attempts only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
    /// Rate-limit retries that preceded this (final) attempt.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Line {
    /// A line for `identity` with everything optional left empty.
    pub fn new(identity: &str, attempt: u32, status: Status) -> Line {
        Line {
            v: 1,
            identity: identity.to_owned(),
            attempt,
            status,
            reason: None,
            detail: None,
            review_sha256: None,
            prompt_sha256: None,
            metadata: None,
            wait_ms: None,
            retries: 0,
        }
    }

    /// Sets the detail, cut to a bounded length.
    #[must_use]
    pub fn with_detail(mut self, detail: &str) -> Line {
        self.detail = Some(detail.chars().take(MAX_DETAIL_CHARS).collect());
        self
    }
}

/// The journal of one run dir, open for appending (shared by every lane thread): gsd-lane's own
/// copy in the run's ledger entry (`review::ledger`, written first: the one a resume trusts)
/// and the copy in the run dir, both opened through the no-follow, non-blocking opener.
#[derive(Debug)]
pub struct Journal {
    files: Mutex<Vec<(PathBuf, File)>>,
}

impl Journal {
    /// Opens (creating, 0600) the ledger's journal, when there is a ledger entry, and
    /// `<run dir>/gsd-review-journal.jsonl`, for appending.
    ///
    /// # Errors
    ///
    /// A file cannot be opened (or is a planted link, FIFO or hard link), naming it.
    pub fn open(
        ledger: Option<&super::ledger::Ledger>,
        run_dir: &Path,
    ) -> Result<Journal, Failure> {
        let mut paths: Vec<PathBuf> = ledger
            .map(super::ledger::Ledger::journal_path)
            .into_iter()
            .collect();
        paths.push(run_dir.join(FILE_NAME));
        let mut files = Vec::new();
        for path in paths {
            let file = open_run_file(&path, WriteMode::Append)
                .map_err(|err| Failure::new(format!("opening {}: {err}", path.display())))?;
            files.push((path, file));
        }
        Ok(Journal {
            files: Mutex::new(files),
        })
    }

    /// Appends one line to each copy, gsd-lane's own first, and syncs it to disk before
    /// returning.
    ///
    /// # Errors
    ///
    /// Write or sync errors, naming the file.
    pub fn append(&self, line: &Line) -> Result<(), Failure> {
        let mut text = serde_json::to_string(line)
            .map_err(|err| Failure::new(format!("encoding a journal line: {err}")))?;
        text.push('\n');
        let mut files = self
            .files
            .lock()
            .map_err(|_| Failure::new("writing the journal: lock poisoned"))?;
        for (path, file) in files.iter_mut() {
            let fail = |err: std::io::Error| {
                Failure::new(format!(
                    "writing {}: {err}; the run cannot be resumed reliably",
                    path.display()
                ))
            };
            // One write call per line: a crash can tear only the last line, never interleave two.
            file.write_all(text.as_bytes()).map_err(fail)?;
            file.sync_data().map_err(fail)?;
        }
        Ok(())
    }
}

/// Reads the journal at `path` (gsd-lane's own copy): every valid line in file order. A missing
/// journal is empty.
///
/// # Errors
///
/// The file exists but cannot be read (permissions, not a regular file).
pub fn read(path: &Path) -> Result<Vec<Line>, Failure> {
    match read_run_file(path, MAX_JOURNAL_BYTES) {
        Ok(None) => Ok(Vec::new()),
        Ok(Some((bytes, _))) => Ok(parse(&bytes)),
        Err(err) => Err(Failure::new(format!("reading {}: {err}", path.display()))),
    }
}

/// Parses journal bytes: complete lines only (a torn last line is dropped), each a valid v1
/// [`Line`] of bounded length; everything else is skipped.
pub fn parse(bytes: &[u8]) -> Vec<Line> {
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => &bytes[..end],
        None => return Vec::new(),
    };
    complete
        .split(|&b| b == b'\n')
        .filter(|raw| !raw.is_empty() && raw.len() <= MAX_LINE_BYTES)
        .filter_map(|raw| serde_json::from_slice::<Line>(raw).ok())
        .filter(|line| line.v == 1 && !line.identity.is_empty())
        .collect()
}

/// The last line of each identity, and the highest attempt number seen for it.
pub fn last_by_identity(lines: &[Line]) -> std::collections::BTreeMap<String, (Line, u32)> {
    let mut out: std::collections::BTreeMap<String, (Line, u32)> = Default::default();
    for line in lines {
        let attempts = out
            .get(&line.identity)
            .map_or(0, |(_, n)| *n)
            .max(line.attempt);
        out.insert(line.identity.clone(), (line.clone(), attempts));
    }
    out
}

/// SHA-256 (hex) of a run-dir file, streamed (never held in memory) through the no-follow,
/// non-blocking opener; `None` when missing, refused, unreadable or larger than `max` bytes.
pub fn file_sha256(path: &Path, max: u64) -> Option<String> {
    use sha2::{Digest, Sha256};
    let file = open_run_file_read(path).ok()?;
    let mut hasher = Sha256::new();
    let copied = std::io::copy(&mut file.take(max.saturating_add(1)), &mut hasher).ok()?;
    if copied > max {
        return None;
    }
    Some(hex(&hasher.finalize()))
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_then_read_round_trips() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::open(None, dir.path()).expect("open");
        let mut line = Line::new("alpha", 1, Status::Review);
        line.review_sha256 = Some("ab".into());
        journal.append(&line).expect("append");
        journal
            .append(&Line::new("beta", 1, Status::Stub).with_detail("no output"))
            .expect("append");
        let lines = read(&dir.path().join(FILE_NAME)).expect("read");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], line);
        assert_eq!(lines[1].detail.as_deref(), Some("no output"));
    }

    #[test]
    fn torn_garbage_and_oversized_lines_are_ignored() {
        let good = serde_json::to_string(&Line::new("alpha", 1, Status::Review)).expect("json");
        let other_version = good.replace("\"v\":1", "\"v\":2");
        let long = format!("{}\n", "x".repeat(MAX_LINE_BYTES + 1));
        let bytes = format!(
            "{good}\nnot json\n{{\"v\":1}}\n{other_version}\n{long}{{\"v\":1,\"identity\":\"beta\",\"att"
        );
        let lines = parse(bytes.as_bytes());
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].identity, "alpha");
        assert!(parse(b"").is_empty());
        assert!(parse(b"{\"v\":1").is_empty());
        assert!(parse(&[0xff, 0xfe, b'\n']).is_empty());
    }

    #[test]
    fn file_hashes_are_bounded() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("f");
        std::fs::write(&path, "abc").expect("write");
        assert_eq!(
            file_sha256(&path, 3).as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert_eq!(file_sha256(&path, 2), None);
        assert_eq!(file_sha256(&dir.path().join("missing"), 3), None);
    }

    #[test]
    fn last_line_wins_and_attempts_accumulate() {
        let lines = vec![
            Line::new("alpha", 1, Status::RateLimited),
            Line::new("alpha", 2, Status::Stub),
            Line::new("beta", 1, Status::Review),
        ];
        let last = last_by_identity(&lines);
        assert_eq!(last["alpha"].0.status, Status::Stub);
        assert_eq!(last["alpha"].1, 2);
        assert_eq!(last["beta"].1, 1);
    }
}
