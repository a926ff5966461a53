//! Atomic, durable replacement of a small file (trust.md §5.6 step 3).
//!
//! The new content goes to `<file>.tmp.<pid>-<8 hex>` (created exclusively, mode 0600), is
//! fsynced, and is renamed over the file; the directory is fsynced after. A crash at any point
//! leaves either the old file or the new one, never a mixture, and the temporary file is removed
//! on every failure.

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Rename attempts in total (Windows scanners hold files briefly).
const RENAME_ATTEMPTS: u32 = 3;

/// Replaces `path` with `bytes` atomically and durably.
///
/// # Errors
///
/// The I/O error of the failing step, with the path it concerned.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let (temp, mut file) = create_temp(path)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("writing {}: {e}", temp.display()));
    drop(file);
    if let Err(err) = written {
        let _ = fs::remove_file(&temp);
        return Err(err);
    }
    if let Err(err) = rename_with_retry(&temp, path) {
        let _ = fs::remove_file(&temp);
        return Err(format!("replacing {}: {err}", path.display()));
    }
    sync_dir(dir)
}

fn create_temp(path: &Path) -> Result<(PathBuf, fs::File), String> {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    for _ in 0..16 {
        let suffix: String = super::lock::token().chars().take(8).collect();
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
            Err(e) => return Err(format!("creating {}: {e}", temp.display())),
        }
    }
    Err(format!(
        "creating a temporary file next to {}",
        path.display()
    ))
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
fn sync_dir(dir: &Path) -> Result<(), String> {
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
        Err(e) => Err(format!("syncing {}: {e}", dir.display())),
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("consent.json");
        replace(&path, b"one").expect("first");
        replace(&path, b"two").expect("second");
        assert_eq!(fs::read(&path).expect("read"), b"two");
        let names: Vec<_> = fs::read_dir(dir.path())
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn failure_removes_the_temporary_file_and_keeps_the_old_content() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("consent.json");
        fs::create_dir(&path).expect("a directory where the file should be");
        fs::write(path.join("keep"), b"x").expect("write");
        assert!(replace(&path, b"new").is_err());
        let names: Vec<_> = fs::read_dir(dir.path())
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
