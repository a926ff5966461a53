//! Atomic, durable replacement of a small file (trust.md §5.6 step 3; `REVIEWS.md`).
//!
//! The new content goes to `<file>.tmp.<pid>-<8 hex>` in the same directory (created
//! exclusively, mode 0600, then given the caller's mode), is fsynced, and is renamed over the
//! file; the directory is fsynced after. A crash at any point leaves either the old file or the
//! new one, never a mixture, and the temporary file is removed on every failure. A writer
//! killed mid-write (SIGKILL, power loss) cannot remove its temporary file, so every write first
//! sweeps the temporary files of earlier writers of the same file that are gone: the pid in the
//! name no longer runs on this host, or the file is older than [`STALE_TEMP_AGE`] (a reused pid,
//! or a host without `/proc`).

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::trust::consent::lock;

/// Rename attempts in total (Windows scanners hold files briefly).
const RENAME_ATTEMPTS: u32 = 3;

/// Age after which a temporary file is swept even if its pid seems to run (pid reuse).
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// Most directory entries looked at by one sweep (bounded work on a huge directory).
const SWEEP_SCAN_LIMIT: usize = 10_000;

/// Why a file could not be replaced; the old content is intact and no temporary file is left.
/// Each variant names the step and the path it concerned.
#[derive(Debug)]
pub enum ReplaceError {
    /// The temporary file could not be created.
    CreateTemp {
        /// The temporary file.
        temp: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Every temporary name tried next to the file was taken.
    NoTempName {
        /// The file being replaced.
        path: PathBuf,
    },
    /// Writing, or syncing, the temporary file failed (the caller's own content error too).
    Write {
        /// The temporary file.
        temp: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Renaming the temporary file over the file failed.
    Rename {
        /// The file being replaced.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Syncing the directory after the rename failed (the new content is in place).
    SyncDir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl std::fmt::Display for ReplaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplaceError::CreateTemp { temp, source } => {
                write!(f, "creating {}: {source}", temp.display())
            }
            ReplaceError::NoTempName { path } => write!(
                f,
                "creating a temporary file next to {}: every name tried was taken (remove the \
                 stale `.tmp.` files beside it)",
                path.display()
            ),
            ReplaceError::Write { temp, source } => {
                write!(f, "writing {}: {source}", temp.display())
            }
            ReplaceError::Rename { path, source } => {
                write!(f, "replacing {}: {source}", path.display())
            }
            ReplaceError::SyncDir { dir, source } => {
                write!(f, "syncing {}: {source}", dir.display())
            }
        }
    }
}

impl std::error::Error for ReplaceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReplaceError::CreateTemp { source, .. }
            | ReplaceError::Write { source, .. }
            | ReplaceError::Rename { source, .. }
            | ReplaceError::SyncDir { source, .. } => Some(source),
            ReplaceError::NoTempName { .. } => None,
        }
    }
}

/// Replaces `path` with `bytes` atomically and durably; the parent directory must exist.
///
/// On Unix the new file gets exactly `mode` (`0o600` for private files); elsewhere `mode` is
/// ignored.
///
/// # Errors
///
/// The I/O error of the failing step, with the path it concerned.
pub fn replace_file(path: &Path, bytes: &[u8], mode: u32) -> Result<(), ReplaceError> {
    replace_file_with(path, mode, Durability::Synced, |file| file.write_all(bytes))
}

/// Whether [`replace_file_with`] waits for the new content to reach the disk before the rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `fsync` the file, then the directory: a crash leaves the old file or the whole new one.
    Synced,
}

/// [`replace_file`] with the content streamed by `fill` into the temporary file (a file of any
/// size in bounded memory); an error from `fill` leaves `path` as it was.
///
/// # Errors
///
/// The I/O error of the failing step (`fill`'s included), with the path it concerned.
pub fn replace_file_with(
    path: &Path,
    mode: u32,
    durability: Durability,
    fill: impl FnOnce(&mut fs::File) -> std::io::Result<()>,
) -> Result<(), ReplaceError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    sweep_stale_temps(path);
    let (temp, mut file) = create_temp(path)?;
    let written = set_mode(&file, mode)
        .and_then(|()| fill(&mut file))
        .and_then(|()| match durability {
            Durability::Synced => file.sync_all(),
        })
        .map_err(|source| ReplaceError::Write {
            temp: temp.clone(),
            source,
        });
    drop(file);
    if let Err(err) = written {
        let _ = fs::remove_file(&temp);
        return Err(err);
    }
    if let Err(source) = rename_with_retry(&temp, path) {
        let _ = fs::remove_file(&temp);
        return Err(ReplaceError::Rename {
            path: path.to_path_buf(),
            source,
        });
    }
    sync_dir(dir)
}

#[cfg(unix)]
fn set_mode(file: &fs::File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if mode == 0o600 {
        return Ok(());
    }
    file.set_permissions(fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_file: &fs::File, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// The writer pid encoded in `candidate` when it is a temporary file of `name`
/// (`<name>.tmp.<pid>-<8 hex>`), else `None`.
fn temp_owner(name: &str, candidate: &str) -> Option<u32> {
    let rest = candidate.strip_prefix(name)?.strip_prefix(".tmp.")?;
    let (pid, suffix) = rest.split_once('-')?;
    let hex = suffix.len() == 8 && suffix.bytes().all(|b| b.is_ascii_hexdigit());
    let digits = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    (hex && digits).then(|| pid.parse().ok()).flatten()
}

/// Removes the temporary files of `path` left by writers that are gone (best effort; never
/// touches this process's own, anything but regular files, or other names).
fn sweep_stale_temps(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let name = name.to_string_lossy();
    let Ok(listing) = fs::read_dir(dir) else {
        return;
    };
    for entry in listing.take(SWEEP_SCAN_LIMIT).flatten() {
        let file_name = entry.file_name();
        let Some(pid) = temp_owner(&name, &file_name.to_string_lossy()) else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let old = meta
            .modified()
            .ok()
            .and_then(|at| at.elapsed().ok())
            .is_some_and(|age| age > STALE_TEMP_AGE);
        if lock::process_exists(pid) == Some(false) || old {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn create_temp(path: &Path) -> Result<(PathBuf, fs::File), ReplaceError> {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    for _ in 0..16 {
        let suffix: String = lock::token().chars().take(8).collect();
        let temp = path.with_file_name(format!("{name}.tmp.{}-{suffix}", std::process::id()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(ReplaceError::CreateTemp { temp, source }),
        }
    }
    Err(ReplaceError::NoTempName {
        path: path.to_path_buf(),
    })
}

fn rename_with_retry(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut attempt = 1;
    loop {
        match fs::rename(from, to) {
            Ok(()) => return Ok(()),
            Err(e)
                if attempt < RENAME_ATTEMPTS
                    && matches!(
                        e.kind(),
                        ErrorKind::PermissionDenied | ErrorKind::ResourceBusy
                    ) =>
            {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Fsyncs the directory, tolerating the errors platforms give for directory handles.
fn sync_dir(dir: &Path) -> Result<(), ReplaceError> {
    let tolerated = |e: &std::io::Error| {
        matches!(
            e.kind(),
            ErrorKind::IsADirectory
                | ErrorKind::PermissionDenied
                | ErrorKind::InvalidInput
                | ErrorKind::NotFound
                | ErrorKind::Unsupported
        ) || matches!(e.raw_os_error(), Some(code) if code == libc::EBADF || code == libc::EINVAL || code == libc::EISDIR || code == libc::EPERM)
    };
    match fs::File::open(dir).and_then(|d| d.sync_all()) {
        Ok(()) => Ok(()),
        Err(e) if tolerated(&e) => Ok(()),
        Err(source) => Err(ReplaceError::SyncDir {
            dir: dir.to_path_buf(),
            source,
        }),
    }
}

/// Opens `path` for reading without blocking on a FIFO (`O_NONBLOCK`); the caller checks on the
/// open file that it is a regular file. Off Unix, a plain open (no blocking FIFO open there).
///
/// # Errors
///
/// The open's I/O error.
pub fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
    }
    #[cfg(not(unix))]
    {
        std::fs::File::open(path)
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<std::ffi::OsString> {
        fs::read_dir(dir)
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .collect()
    }

    #[test]
    fn temporary_files_of_dead_writers_are_swept_on_the_next_write() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("03-REVIEWS.md");
        // A pid that cannot run: above the kernel's pid_max ceiling (2^22).
        let dead = dir.path().join("03-REVIEWS.md.tmp.4194305-0123abcd");
        let live = dir.path().join(format!(
            "03-REVIEWS.md.tmp.{}-89abcdef",
            std::os::unix::process::parent_id()
        ));
        let other = dir.path().join("03-REVIEWS.md.tmp.4194305-notahexx");
        let other_file = dir.path().join("NOTES.md.tmp.4194305-0123abcd");
        for p in [&dead, &live, &other, &other_file] {
            fs::write(p, b"partial").expect("temp");
        }
        replace_file(&path, b"whole", 0o644).expect("write");
        assert!(!dead.exists(), "the dead writer's temp file is swept");
        assert!(live.exists(), "a running writer's temp file is kept");
        assert!(
            other.exists() && other_file.exists(),
            "other names are never touched"
        );
        assert_eq!(fs::read(&path).expect("read"), b"whole");
    }

    #[test]
    fn temp_names_carry_the_writer_pid() {
        assert_eq!(temp_owner("a.md", "a.md.tmp.123-0a1b2c3d"), Some(123));
        for no in [
            "a.md.tmp.123-0a1b2c3",
            "a.md.tmp.-0a1b2c3d",
            "a.md.tmp.12x-0a1b2c3d",
            "b.md.tmp.1-0a1b2c3d",
            "a.md",
        ] {
            assert_eq!(temp_owner("a.md", no), None, "{no}");
        }
    }

    #[test]
    fn replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("consent.json");
        replace_file(&path, b"one", 0o600).expect("first");
        replace_file(&path, b"two", 0o600).expect("second");
        assert_eq!(fs::read(&path).expect("read"), b"two");
        assert_eq!(names(dir.path()).len(), 1, "{:?}", names(dir.path()));
    }

    #[test]
    fn failure_removes_the_temporary_file_and_keeps_the_old_content() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("consent.json");
        fs::create_dir(&path).expect("a directory where the file should be");
        fs::write(path.join("keep"), b"x").expect("write");
        let err = replace_file(&path, b"new", 0o600).expect_err("a directory is in the way");
        assert!(matches!(err, ReplaceError::Rename { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with(&format!("replacing {}: ", path.display())),
            "{err}"
        );
        assert_eq!(names(dir.path()).len(), 1, "{:?}", names(dir.path()));
        assert!(path.join("keep").is_file());
    }

    #[test]
    #[cfg(unix)]
    fn gives_the_requested_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        for mode in [0o600, 0o644] {
            let path = dir.path().join(format!("f{mode:o}"));
            replace_file(&path, b"x", mode).expect("write");
            let got = fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(got & 0o777, mode);
        }
    }
}
