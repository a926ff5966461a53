//! Atomic, durable replacement of a small private file (trust.md §5.6 step 3).
//!
//! The parent directory is created if missing, then [`crate::fsutil::replace_file`] writes the
//! content with mode 0600.

use std::fs;
use std::path::Path;

use crate::trust::error::WriteError;

/// Replaces `path` with `bytes` atomically and durably (mode 0600), creating its directory.
///
/// # Errors
///
/// The I/O error of the failing step, with the path it concerned.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir).map_err(|source| WriteError::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    crate::fsutil::replace_file(path, bytes, 0o600).map_err(WriteError::Replace)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn creates_the_directory_and_replaces() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub").join("consent.json");
        replace(&path, b"one").expect("first");
        replace(&path, b"two").expect("second");
        assert_eq!(fs::read(&path).expect("read"), b"two");
        let names: Vec<_> = fs::read_dir(dir.path().join("sub"))
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
