//! gsd-lane's own copy of every review run's record and journal (decisions.md #22): one entry
//! per run dir under `$GSD_HOME/.gsd/runs/`, holding the authoritative `run.json` and
//! `gsd-review-journal.jsonl`.
//!
//! The run dir is writable by the lanes that run in it, and a lane can read everything, so a
//! record kept there (even one signed with a key the lane can read) can be rewritten by a lane
//! to decide how a later `review --resume` is confined or where it writes. The entry here is in
//! a place confined lanes cannot write (the sandbox makes `$GSD_HOME/.gsd` read-only to them)
//! and another local user cannot write at all. The run dir keeps copies of both files for
//! people and tools; [`verify_copies`] refuses a run whose copies no longer match.
//!
//! The entries are also the list of runs (`gsd-lane runs`, `review --resume` without a path):
//! it holds only this user's runs, so nothing another user plants in the shared temp dir, and
//! no number of other entries there, changes which run is the newest.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::journal;
use super::record;
use crate::error::Failure;
use crate::private_fs;

/// The folder under `$GSD_HOME/.gsd` holding one entry per run.
pub const DIR_NAME: &str = "runs";

/// The entry of one run dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ledger {
    /// `$GSD_HOME/.gsd/runs/<entry>`.
    pub dir: PathBuf,
}

/// `$GSD_HOME/.gsd/runs` for the environment `env`.
///
/// # Errors
///
/// Neither `GSD_HOME` nor `HOME` is set: gsd-lane has nowhere to keep its own records.
pub fn root(env: &crate::project::HostEnv) -> Result<PathBuf, Failure> {
    env.gsd_home()
        .map(|home| home.join(".gsd").join(DIR_NAME))
        .ok_or_else(|| {
            Failure::new(
                "neither GSD_HOME nor HOME is set: gsd-lane keeps the records of review runs in $GSD_HOME/.gsd/runs; set one of them",
            )
        })
}

/// Refuses a records folder that another user could write (group- or world-writable, or
/// owned by someone else): entries planted there would be taken for gsd-lane's own.
///
/// # Errors
///
/// Why, naming the folder and the fix.
pub fn check_root(root: &Path) -> Result<(), Failure> {
    private_fs::check_given_dir(root, private_fs::Sharing::Private).map_err(|why| Failure {
        message: format!("gsd-lane's records of review runs: {why}"),
        status: super::continuation::REFUSED,
    })
}

/// The entry name of the run dir at `run_dir` (absolute, resolved): its own name, made safe,
/// and 16 hex digits of the SHA-256 of its full path (two temp dirs can hold the same name).
pub fn entry_name(run_dir: &Path) -> String {
    let base: String = run_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect();
    let digest = journal::hex(&Sha256::digest(run_dir.as_os_str().as_encoded_bytes()));
    format!("{base}-{}", &digest[..16])
}

impl Ledger {
    /// The entry of `run_dir` under `root` (not created, not checked).
    pub fn of(root: &Path, run_dir: &Path) -> Ledger {
        Ledger {
            dir: root.join(entry_name(run_dir)),
        }
    }

    /// Creates the (empty) entry of a fresh run dir, 0700, replacing a stale entry of a run
    /// dir that had the same path before.
    ///
    /// # Errors
    ///
    /// The folders cannot be created, naming them.
    pub fn create(root: &Path, run_dir: &Path) -> Result<Ledger, Failure> {
        let fail = |path: &Path, err: std::io::Error| {
            Failure::new(format!(
                "creating gsd-lane's record of the run in {}: {err}",
                path.display()
            ))
        };
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(root).map_err(|err| fail(root, err))?;
        check_root(root)?;
        let ledger = Ledger::of(root, run_dir);
        if std::fs::symlink_metadata(&ledger.dir).is_ok() {
            ledger.remove();
        }
        builder.recursive(false);
        builder
            .create(&ledger.dir)
            .map_err(|err| fail(&ledger.dir, err))?;
        Ok(ledger)
    }

    /// The authoritative `run.json`.
    pub fn record_path(&self) -> PathBuf {
        self.dir.join(record::FILE_NAME)
    }

    /// The authoritative journal.
    pub fn journal_path(&self) -> PathBuf {
        self.dir.join(journal::FILE_NAME)
    }

    /// Removes the entry (best effort; never follows a link).
    pub fn remove(&self) {
        match std::fs::symlink_metadata(&self.dir) {
            Ok(meta) if meta.is_dir() => {
                let _ = std::fs::remove_dir_all(&self.dir);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(&self.dir);
            }
            Err(_) => {}
        }
    }
}

/// Every entry under `root` (names only, no bound: the folder holds only this user's runs).
/// A missing root is no entries.
pub fn entries(root: &Path) -> Vec<Ledger> {
    let Ok(listing) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<Ledger> = listing
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .map(|entry| Ledger { dir: entry.path() })
        .collect();
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    out
}

/// Checks the run dir's copies of `run.json` and the journal against the entry's: `run.json`
/// byte for byte; the journal's complete lines are the entry's, but for at most the last one
/// (written to the entry first: a run killed between the two writes leaves the copy one line
/// short).
///
/// # Errors
///
/// Which copy differs, refused with status 2: a lane or another process changed it, and such
/// a run is not resumed.
pub fn verify_copies(ledger: &Ledger, run_dir: &Path) -> Result<(), Failure> {
    let own_record = read_own(&ledger.record_path(), record::MAX_RECORD_BYTES)?;
    let copy = run_dir.join(record::FILE_NAME);
    match read_copy(&copy, record::MAX_RECORD_BYTES)? {
        Some(bytes) if bytes == own_record => {}
        Some(_) => {
            return Err(tampered(
                &copy,
                ledger,
                "was changed after gsd-lane wrote it",
            ))
        }
        None => return Err(tampered(&copy, ledger, "is missing")),
    }
    let own = read_own(&ledger.journal_path(), journal::MAX_JOURNAL_BYTES)?;
    let copy = run_dir.join(journal::FILE_NAME);
    let copied = read_copy(&copy, journal::MAX_JOURNAL_BYTES)?.unwrap_or_default();
    let own_lines = complete_lines(&own);
    let copy_lines = complete_lines(&copied);
    let prefix = own_lines.starts_with(&copy_lines);
    if !prefix || own_lines.len() - copy_lines.len() > 1 {
        return Err(tampered(
            &copy,
            ledger,
            "was changed after gsd-lane wrote it",
        ));
    }
    Ok(())
}

/// The complete (newline-ended) lines of `bytes`.
fn complete_lines(bytes: &[u8]) -> Vec<&[u8]> {
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => bytes[..end].split(|&b| b == b'\n').collect(),
        None => Vec::new(),
    }
}

/// Reads one of the entry's own files (a missing journal is empty).
fn read_own(path: &Path, max: u64) -> Result<Vec<u8>, Failure> {
    let fail = |why: String| {
        Failure::new(format!(
            "{}: {why}; this run cannot be resumed (start a new review)",
            path.display()
        ))
    };
    match private_fs::read_run_file(path, max) {
        Ok(Some((_, true))) => Err(fail(format!("larger than {max} bytes"))),
        Ok(Some((bytes, false))) => Ok(bytes),
        Ok(None) if path.ends_with(journal::FILE_NAME) => Ok(Vec::new()),
        Ok(None) => Err(fail("missing".to_owned())),
        Err(err) => Err(fail(err.to_string())),
    }
}

/// Reads a copy in the run dir through the no-follow, non-blocking opener.
fn read_copy(path: &Path, max: u64) -> Result<Option<Vec<u8>>, Failure> {
    match private_fs::read_run_file(path, max) {
        Ok(found) => Ok(found.map(|(bytes, _)| bytes)),
        Err(err) => Err(Failure {
            message: format!(
                "cannot resume: {err}; gsd-lane's own record of the run is in {}",
                crate::output::escape_text(&path_text(path))
            ),
            status: super::continuation::REFUSED,
        }),
    }
}

fn path_text(path: &Path) -> String {
    path.parent().unwrap_or(path).display().to_string()
}

fn tampered(copy: &Path, ledger: &Ledger, what: &str) -> Failure {
    Failure {
        message: format!(
            "cannot resume: {} {what}; gsd-lane's own record of the run ({}) says otherwise, so a lane or another process changed the run dir; nothing was run (start a new review)",
            crate::output::escape_text(&copy.display().to_string()),
            ledger.dir.display()
        ),
        status: super::continuation::REFUSED,
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_are_safe_and_unique_per_path() {
        let a = entry_name(Path::new("/tmp/gsd-review-AbC123"));
        let b = entry_name(Path::new("/var/tmp/gsd-review-AbC123"));
        assert!(a.starts_with("gsd-review-AbC123-"), "{a}");
        assert_ne!(a, b);
        let odd = entry_name(Path::new("/t/x/../\u{1b}[2J"));
        assert!(
            odd.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{odd}"
        );
    }

    #[test]
    fn copies_must_match_the_entry() {
        let home = tempfile::tempdir().expect("home");
        let run = tempfile::tempdir().expect("run");
        let ledger = Ledger::create(&home.path().join("runs"), run.path()).expect("create");
        std::fs::write(ledger.record_path(), "{}\n").expect("record");
        std::fs::write(run.path().join(record::FILE_NAME), "{}\n").expect("copy");
        std::fs::write(ledger.journal_path(), "a\nb\n").expect("journal");
        std::fs::write(run.path().join(journal::FILE_NAME), "a\n").expect("copy");
        verify_copies(&ledger, run.path()).expect("one line short is a crash, not tampering");
        std::fs::write(run.path().join(journal::FILE_NAME), "a\nb\nc\n").expect("copy");
        assert_eq!(
            verify_copies(&ledger, run.path())
                .expect_err("added")
                .status,
            2
        );
        std::fs::write(run.path().join(journal::FILE_NAME), "a\nb\n").expect("copy");
        std::fs::write(run.path().join(record::FILE_NAME), "{\"x\":1}\n").expect("edit");
        let err = verify_copies(&ledger, run.path()).expect_err("edited");
        assert!(err.message.contains("was changed"), "{}", err.message);
    }
}
