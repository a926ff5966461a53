//! The bundle content hash `sha512-<base64>` (trust.md §5.7): the activation binding of a
//! project-scope overlay.
//!
//! The byte stream is fixed by the shared encoding: entry count (u64 BE), then per entry in
//! path-byte order (a directory before a file of the same path) either `0x02, len u32 BE, path`
//! or `0x01, len u32 BE, path, size u64 BE, content`. Symbolic links and special files are
//! refused; the walk is bounded in entries and bytes.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::{Digest, Sha512};

/// Most entries (files and directories) walked before the hash is refused.
pub const MAX_ENTRIES: usize = 100_000;

/// Most bytes of file content, in total and per file.
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Why a bundle hash is unavailable; the overlay then stays inactive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashError {
    /// A symbolic link inside the bundle.
    Symlink(PathBuf),
    /// Neither a regular file nor a directory.
    Special(PathBuf),
    /// More than [`MAX_ENTRIES`] entries.
    TooManyEntries,
    /// More than [`MAX_BYTES`] of content.
    TooLarge,
    /// A file changed or vanished while it was hashed, or could not be read.
    Io(PathBuf, String),
}

impl std::fmt::Display for HashError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HashError::Symlink(p) => write!(f, "{} is a symbolic link", p.display()),
            HashError::Special(p) => write!(f, "{} is neither a file nor a directory", p.display()),
            HashError::TooManyEntries => write!(f, "more than {MAX_ENTRIES} entries"),
            HashError::TooLarge => write!(f, "more than {} MiB of content", MAX_BYTES >> 20),
            HashError::Io(p, why) => write!(f, "{}: {why}", p.display()),
        }
    }
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Dir,
    File,
}

/// Computes the content hash of the capability folder `root`.
///
/// # Errors
///
/// A [`HashError`] when the bundle holds a link or special file, exceeds a bound, or changes
/// while it is read.
pub fn content_hash(root: &Path) -> Result<String, HashError> {
    // The folder itself must not be a link either: it could point the approved name at any
    // content, and be re-pointed after approval (trust.md §5.7).
    let top =
        fs::symlink_metadata(root).map_err(|e| HashError::Io(root.to_path_buf(), e.to_string()))?;
    if top.file_type().is_symlink() {
        return Err(HashError::Symlink(root.to_path_buf()));
    }
    let mut entries: Vec<(Vec<u8>, Kind, PathBuf)> = Vec::new();
    let mut total: u64 = 0;
    let mut pending: Vec<(PathBuf, Vec<u8>)> = vec![(root.to_path_buf(), Vec::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let listing = fs::read_dir(&dir).map_err(|e| HashError::Io(dir.clone(), e.to_string()))?;
        for entry in listing {
            let entry = entry.map_err(|e| HashError::Io(dir.clone(), e.to_string()))?;
            if entries.len() >= MAX_ENTRIES {
                return Err(HashError::TooManyEntries);
            }
            let path = entry.path();
            let mut rel = prefix.clone();
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.extend(name_bytes(&entry.file_name()));
            let meta = fs::symlink_metadata(&path)
                .map_err(|e| HashError::Io(path.clone(), e.to_string()))?;
            let kind = meta.file_type();
            if kind.is_symlink() {
                return Err(HashError::Symlink(path));
            }
            if kind.is_dir() {
                pending.push((path.clone(), rel.clone()));
                entries.push((rel, Kind::Dir, path));
            } else if kind.is_file() {
                total = total.saturating_add(meta.len());
                if total > MAX_BYTES {
                    return Err(HashError::TooLarge);
                }
                entries.push((rel, Kind::File, path));
            } else {
                return Err(HashError::Special(path));
            }
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut digest = Sha512::new();
    digest.update((entries.len() as u64).to_be_bytes());
    for (rel, kind, path) in &entries {
        let length = u32::try_from(rel.len()).map_err(|_| HashError::TooLarge)?;
        match kind {
            Kind::Dir => {
                digest.update([0x02]);
                digest.update(length.to_be_bytes());
                digest.update(rel);
            }
            Kind::File => {
                let content = read_bounded(path)?;
                digest.update([0x01]);
                digest.update(length.to_be_bytes());
                digest.update(rel);
                digest.update((content.len() as u64).to_be_bytes());
                digest.update(&content);
            }
        }
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(digest.finalize());
    Ok(format!("sha512-{encoded}"))
}

/// The raw bytes of a directory entry name (`\` turned into `/` on Windows).
fn name_bytes(name: &std::ffi::OsStr) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        name.as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        name.to_string_lossy().replace('\\', "/").into_bytes()
    }
}

/// Opens `path`, checks it is still a regular file, and reads exactly its size (≤ 16 MiB).
fn read_bounded(path: &Path) -> Result<Vec<u8>, HashError> {
    let io = |e: std::io::Error| HashError::Io(path.to_path_buf(), e.to_string());
    let file = open_no_follow(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(HashError::Special(path.to_path_buf()));
    }
    let size = meta.len();
    if size > MAX_BYTES {
        return Err(HashError::TooLarge);
    }
    let mut content = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(size + 1).read_to_end(&mut content).map_err(io)?;
    if content.len() as u64 != size {
        return Err(HashError::Io(
            path.to_path_buf(),
            "changed while it was read".to_owned(),
        ));
    }
    Ok(content)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<fs::File> {
    fs::File::open(path)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn bundle() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("capability.json"), b"{\"id\":\"x\"}").expect("write");
        fs::create_dir(dir.path().join("bin")).expect("mkdir");
        fs::write(dir.path().join("bin/run.sh"), b"#!/bin/sh\n").expect("write");
        dir
    }

    #[test]
    #[cfg(unix)]
    fn a_folder_that_is_a_link_has_no_hash() {
        let dir = bundle();
        let parent = tempfile::tempdir().expect("tempdir");
        let link = parent.path().join("acme");
        std::os::unix::fs::symlink(dir.path(), &link).expect("symlink");
        assert_eq!(content_hash(&link), Err(HashError::Symlink(link.clone())));
        assert!(content_hash(dir.path()).is_ok());
    }

    #[test]
    fn hash_is_sha512_base64_and_stable() {
        let dir = bundle();
        let a = content_hash(dir.path()).expect("hash");
        assert!(a.starts_with("sha512-"));
        assert_eq!(a.len(), "sha512-".len() + 88);
        assert_eq!(content_hash(dir.path()).expect("hash"), a);
    }

    #[test]
    fn stream_layout_is_the_shared_encoding() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("a"), b"xy").expect("write");
        fs::create_dir(dir.path().join("d")).expect("mkdir");
        let mut expected = Sha512::new();
        expected.update(2u64.to_be_bytes());
        expected.update([0x01, 0, 0, 0, 1, b'a']);
        expected.update(2u64.to_be_bytes());
        expected.update(b"xy");
        expected.update([0x02, 0, 0, 0, 1, b'd']);
        let expected = format!(
            "sha512-{}",
            base64::engine::general_purpose::STANDARD.encode(expected.finalize())
        );
        assert_eq!(content_hash(dir.path()).expect("hash"), expected);
    }

    #[test]
    fn c12_one_byte_or_an_empty_directory_changes_the_hash() {
        let dir = bundle();
        let before = content_hash(dir.path()).expect("hash");
        fs::write(dir.path().join("bin/run.sh"), b"#!/bin/sh \n").expect("write");
        let edited = content_hash(dir.path()).expect("hash");
        assert_ne!(before, edited);
        fs::create_dir(dir.path().join("empty")).expect("mkdir");
        assert_ne!(content_hash(dir.path()).expect("hash"), edited);
        fs::rename(
            dir.path().join("bin/run.sh"),
            dir.path().join("bin/run2.sh"),
        )
        .expect("rename");
        assert_ne!(content_hash(dir.path()).expect("hash"), edited);
    }

    #[cfg(unix)]
    #[test]
    fn links_and_bounds_make_the_hash_unavailable() {
        let dir = bundle();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).expect("symlink");
        assert!(matches!(
            content_hash(dir.path()),
            Err(HashError::Symlink(_))
        ));
        let big = tempfile::tempdir().expect("tempdir");
        let file = fs::File::create(big.path().join("big")).expect("create");
        file.set_len(MAX_BYTES + 1).expect("set_len");
        assert_eq!(content_hash(big.path()), Err(HashError::TooLarge));
        assert!(content_hash(&big.path().join("missing")).is_err());
    }
}
