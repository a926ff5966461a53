//! What one lane is confined by, and applying it to the thread that starts the lane.
//!
//! Landlock restricts the calling thread and every process it starts from then on, so the spawner
//! starts each confined lane from a thread of its own that first calls [`confine_current_thread`]:
//! the lane and everything it starts inherit the restriction, and the rest of
//! gsd-lane stays unrestricted. The ruleset itself is built once per process and repository
//! ([`super::landlock`]).

use std::io;
use std::path::{Path, PathBuf};

/// How one lane is confined.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Confinement {
    /// The directories nothing may be written under (Landlock, [`super::roots`]); empty: no
    /// filesystem restriction.
    pub read_only: Vec<PathBuf>,
    /// Paths that stay writable even when they lie under `read_only` (the lane's own output
    /// files, which must exist when the lane starts).
    pub writable: Vec<PathBuf>,
    /// `TMPDIR` for the lane: its private scratch directory. Created (0700) when the lane
    /// starts, and writable.
    pub tmpdir: Option<PathBuf>,
}

impl Confinement {
    /// Whether a filesystem restriction is asked for.
    pub fn is_restricted(&self) -> bool {
        !self.read_only.is_empty()
    }
}

/// Applies `confinement` to the calling thread: creates the private `TMPDIR`, then restricts
/// the thread (and every process it starts) to the read-only posture. Nothing happens when no
/// filesystem restriction is asked for.
///
/// Called right before the lane is started, so that a refused lane leaves nothing behind.
///
/// # Errors
///
/// A message naming the path when the `TMPDIR` cannot be made or the posture cannot be
/// applied: the lane must then not start.
pub fn confine_current_thread(confinement: &Confinement) -> Result<(), String> {
    if !confinement.is_restricted() {
        return Ok(());
    }
    let mut writable = confinement.writable.clone();
    if let Some(tmpdir) = &confinement.tmpdir {
        private_dir(tmpdir).map_err(|err| format!("creating {}: {err}", tmpdir.display()))?;
        writable.push(tmpdir.clone());
    }
    super::landlock::restrict_self(&confinement.read_only, &writable)
}

/// Creates `dir` with mode 0700, or accepts an existing directory that is not a symbolic link.
fn private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            if std::fs::symlink_metadata(dir)?.is_dir() {
                Ok(())
            } else {
                Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "not a directory",
                ))
            }
        }
        other => other,
    }
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn no_restriction_asked_is_a_no_op_and_the_tmpdir_is_private() {
        assert_eq!(confine_current_thread(&Confinement::default()), Ok(()));
        use std::os::unix::fs::PermissionsExt;
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("tmp");
        private_dir(&dir).unwrap();
        private_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let file = top.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(private_dir(&file).is_err());
    }
}
