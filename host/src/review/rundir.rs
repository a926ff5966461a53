//! The private run directory (review-workflow.md §7): `<tmp>/gsd-review-XXXXXX`, mode 0700,
//! every file 0600, held open by descriptor from its creation so that every file in it is
//! reached through that descriptor ([`crate::held_dir`]); and the atomic write used for
//! `REVIEWS.md`.

use std::path::{Path, PathBuf};

use crate::error::Failure;
use crate::private_fs::{write_run_file, NotOwnRunDir, WriteMode};

/// Lock file held by a run (first or resumed) while it runs (`review::resume`).
pub const LOCK_NAME: &str = "run.lock";

/// The run's private directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    /// Absolute path.
    pub path: PathBuf,
    /// gsd-lane's own record of the run (`None`: a scratch dir, or no `$GSD_HOME`/`$HOME`,
    /// and then the run cannot be resumed).
    pub ledger: Option<super::ledger::Ledger>,
    /// Its descriptor, held since it was created or reopened: every file directly in it is
    /// opened relative to it ([`crate::held_dir`]).
    pub held: Held,
}

/// A run dir's open descriptor ([`crate::held_dir`]); empty for a dir not held (a test's, or
/// on a system without `openat`).
#[derive(Debug, Clone, Default)]
pub struct Held {
    #[cfg(unix)]
    dir: Option<std::sync::Arc<crate::held_dir::HeldDir>>,
}

impl Held {
    /// Opens and checks `path` (a directory of this user, mode 0700, not a link) and holds it.
    ///
    /// # Errors
    ///
    /// What is wrong with it.
    pub fn hold(path: &Path) -> Result<Held, NotOwnRunDir> {
        #[cfg(unix)]
        {
            crate::held_dir::HeldDir::hold(path).map(|dir| Held { dir: Some(dir) })
        }
        #[cfg(not(unix))]
        {
            crate::private_fs::check_own_run_dir(path).map(|()| Held::default())
        }
    }

    /// `Ok` while the path still names the held directory and never named another since.
    ///
    /// # Errors
    ///
    /// The run dir was moved or replaced.
    pub fn in_place(&self) -> Result<(), Replaced> {
        #[cfg(unix)]
        if let Some(dir) = &self.dir {
            return dir.in_place();
        }
        Ok(())
    }
}

/// A run dir whose path names another directory (or nothing) than the one gsd-lane holds: a
/// lane renamed it away, and maybe put another in its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// The run dir's path.
    pub path: PathBuf,
    /// What the path names now.
    pub now: String,
}

impl std::fmt::Display for Replaced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the run dir {} was moved or replaced while lanes ran ({}); gsd-lane kept reading \
             and writing the original through the descriptor it holds and used nothing from a \
             replacement, but a lane that ended after this is not trusted: its CLI may have read \
             or written files by path in the replacement (only a lane that is not confined can \
             move the run dir: --sandbox detect or off, or a lane allowed to write the repository)",
            crate::output::neutralize(&self.path.display().to_string()),
            self.now
        )
    }
}

impl std::error::Error for Replaced {}

impl RunDir {
    /// Creates `<TMPDIR or platform temp>/gsd-review-XXXXXX` (0700), its path resolved (so
    /// the ledger entry and every later lookup name it the same way). No ledger entry.
    ///
    /// # Errors
    ///
    /// The directory cannot be created.
    pub fn create() -> Result<RunDir, Failure> {
        let path = crate::private_fs::private_temp_dir("gsd-review-")
            .map_err(|err| Failure::new(format!("creating the run dir: {err}")))?;
        let path = path.canonicalize().unwrap_or(path);
        let held = Held::hold(&path).map_err(|why| {
            Failure::new(format!("holding the run dir {}: {why}", path.display()))
        })?;
        Ok(RunDir {
            path,
            ledger: None,
            held,
        })
    }

    /// `Ok` while the run dir's path still names the directory gsd-lane holds (and never named
    /// another since it was held).
    ///
    /// # Errors
    ///
    /// It was moved or replaced (by a lane).
    pub fn in_place(&self) -> Result<(), Replaced> {
        self.held.in_place()
    }

    /// [`RunDir::create`] with a fresh ledger entry under `ledger_root`
    /// (`$GSD_HOME/.gsd/runs`).
    ///
    /// # Errors
    ///
    /// The directory or the entry cannot be created.
    pub fn create_recorded(ledger_root: &Path) -> Result<RunDir, Failure> {
        let mut run_dir = RunDir::create()?;
        match super::ledger::Ledger::create(ledger_root, &run_dir.path) {
            Ok(ledger) => run_dir.ledger = Some(ledger),
            Err(failure) => {
                run_dir.remove();
                return Err(failure);
            }
        }
        Ok(run_dir)
    }

    /// `<run dir>/<name>`.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The path as the plan wants it (a string).
    pub fn as_str(&self) -> String {
        self.path.display().to_string()
    }

    /// Writes (truncating) `name` with mode 0600.
    ///
    /// # Errors
    ///
    /// I/O errors, naming the file.
    pub fn write(&self, name: &str, text: &str) -> Result<(), Failure> {
        write_private(&self.file(name), text.as_bytes(), false)
    }

    /// Replaces the file `name` with `text` (0600) whatever entry is there: a planted link or
    /// special file is replaced, never followed ([`crate::private_fs::replace_run_file`]).
    ///
    /// # Errors
    ///
    /// I/O errors, naming the file.
    pub fn replace(&self, name: &str, text: &str) -> Result<(), Failure> {
        let path = self.file(name);
        crate::private_fs::replace_run_file(&path, text.as_bytes())
            .map_err(|err| Failure::new(format!("writing {}: {err}", path.display())))
    }

    /// Writes the file `name` (0600, never through a planted link), its content streamed by
    /// `fill`.
    ///
    /// # Errors
    ///
    /// I/O errors, naming the file.
    pub fn write_with(
        &self,
        name: &str,
        fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
    ) -> Result<(), Failure> {
        let path = self.file(name);
        crate::private_fs::open_run_file(&path, WriteMode::Truncate)
            .and_then(|mut file| fill(&mut file))
            .map_err(|err| Failure::new(format!("writing {}: {err}", path.display())))
    }

    /// Removes the directory and everything in it, and its ledger entry (best effort); a run
    /// dir whose path no longer names the directory gsd-lane holds is left where it is (and
    /// so is whatever is at its path now).
    pub fn remove(&self) {
        if self.in_place().is_ok() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
        if let Some(ledger) = &self.ledger {
            ledger.remove();
        }
    }
}

/// Writes a file readable by its owner only, never through a planted link
/// ([`crate::private_fs::open_run_file`]).
///
/// # Errors
///
/// I/O errors, naming the file.
pub fn write_private(path: &Path, bytes: &[u8], append: bool) -> Result<(), Failure> {
    let mode = if append {
        WriteMode::Append
    } else {
        WriteMode::Truncate
    };
    write_run_file(path, bytes, mode)
        .map_err(|err| Failure::new(format!("writing {}: {err}", path.display())))
}

/// Writes `path` atomically and durably with [`crate::fsutil::replace_file`]: a temporary file
/// in the same directory, then a rename, so a crash never leaves a half-written file nor
/// destroys the previous one. The result is 0644.
///
/// # Errors
///
/// I/O errors, naming the file.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), Failure> {
    crate::fsutil::replace_file(path, text.as_bytes(), 0o644)
        .map_err(|err| Failure::new(format!("writing {}: {err}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn private_modes() {
        use std::os::unix::fs::PermissionsExt;
        let run = RunDir::create().expect("run dir");
        run.write("a.md", "x").expect("write");
        let dir_mode = std::fs::metadata(&run.path)
            .expect("meta")
            .permissions()
            .mode();
        let file_mode = std::fs::metadata(run.file("a.md"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert_eq!(file_mode & 0o777, 0o600);
        assert!(run
            .path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("gsd-review-")));
        run.remove();
    }

    #[test]
    fn atomic_write_replaces() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("R.md");
        std::fs::write(&path, "old").expect("old");
        write_atomic(&path, "new").expect("write");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new");
        assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 1);
    }
}
