//! The repository check of citations: the cited file exists inside the repository root (no
//! `..` component, no absolute path, no symbolic link resolving outside the root) and is a
//! regular file with at least as many lines as the highest line cited.
//!
//! Each distinct path is resolved and read at most once, and only as far as the highest line
//! any citation of it needs; reads are bounded per file and in total, and the number of files
//! looked at is bounded. Whatever cannot be checked within the bounds is not verified (fail
//! closed). The path is resolved with `canonicalize` (every symbolic link followed) and must
//! stay under the canonical root; the file is then opened without following a link
//! (`O_NOFOLLOW`, `O_NONBLOCK`, so a FIFO never blocks) and must be a regular file.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Most distinct files read for one verdict.
pub const MAX_FILES: usize = 4096;
/// Most distinct path spellings resolved for one verdict.
pub const MAX_PATHS: usize = 4 * MAX_FILES;
/// Most bytes read from one file.
pub const MAX_FILE_BYTES: u64 = 32 << 20;
/// Most bytes read for one verdict.
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;

/// One citation to check: path and line range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cited<'a> {
    /// The path relative to the root, as cited.
    pub path: &'a str,
    /// First line.
    pub first: u64,
    /// Last line.
    pub last: u64,
}

/// Checks citations against one repository root.
#[derive(Debug)]
pub struct Repo {
    /// The canonical root, `None` when it cannot be resolved (nothing verifies).
    root: Option<PathBuf>,
}

impl Repo {
    /// A checker for `root` (resolved once).
    pub fn new(root: &Path) -> Repo {
        Repo {
            root: root.canonicalize().ok(),
        }
    }

    /// Whether each citation holds, in order.
    pub fn verify(&self, cited: &[Cited<'_>]) -> Vec<bool> {
        let Some(root) = &self.root else {
            return vec![false; cited.len()];
        };
        let mut needed: HashMap<&str, u64> = HashMap::new();
        for c in cited.iter().filter(|c| plausible(c)) {
            let entry = needed.entry(c.path).or_insert(0);
            *entry = (*entry).max(c.last);
        }
        let mut paths: Vec<(&str, u64)> = needed.into_iter().collect();
        paths.sort_unstable();
        // Spellings of one file (`a/b.rs`, `a//b.rs`, a link inside the root) share one read.
        let mut files: BTreeMap<PathBuf, (u64, Vec<&str>)> = BTreeMap::new();
        for (path, want) in paths.into_iter().take(MAX_PATHS) {
            if let Some(resolved) = resolve(root, path) {
                let entry = files.entry(resolved).or_default();
                entry.0 = entry.0.max(want);
                entry.1.push(path);
            }
        }
        let mut budget = MAX_TOTAL_BYTES;
        let mut lines: HashMap<&str, u64> = HashMap::new();
        for (file, (want, spellings)) in files.into_iter().take(MAX_FILES) {
            if let Some(count) = line_count(&file, want, &mut budget) {
                lines.extend(spellings.into_iter().map(|s| (s, count)));
            }
        }
        cited
            .iter()
            .map(|c| plausible(c) && lines.get(c.path).is_some_and(|&count| c.last <= count))
            .collect()
    }
}

/// Line numbers that can hold: `1 <= first <= last`.
fn plausible(c: &Cited<'_>) -> bool {
    c.first >= 1 && c.first <= c.last
}

/// The path under `root` when it stays inside it: relative, no `..`, resolving (links
/// followed) to a place under the root.
fn resolve(root: &Path, path: &str) -> Option<PathBuf> {
    let relative = Path::new(path);
    let clean = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !clean || path.contains('\0') {
        return None;
    }
    let resolved = root.join(relative).canonicalize().ok()?;
    (resolved != *root && resolved.starts_with(root)).then_some(resolved)
}

/// Opens a resolved path without following a link, refusing anything but a regular file.
fn open(path: &Path) -> Option<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let file = options.open(path).ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

/// The line count of a resolved file, read until `want` lines are seen (or the end, or a
/// bound); `None` when it cannot be read or the bounds stop the read before the answer is
/// known.
fn line_count(path: &Path, want: u64, budget: &mut u64) -> Option<u64> {
    let file = open(path)?;
    let limit = MAX_FILE_BYTES.min(*budget);
    let mut reader = file.take(limit);
    let mut buffer = vec![0_u8; 64 << 10];
    let (mut lines, mut read, mut open_line) = (0_u64, 0_u64, false);
    loop {
        let n = reader.read(&mut buffer).ok()?;
        if n == 0 {
            break;
        }
        let chunk = buffer.get(..n)?;
        read += n as u64;
        let newlines = chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        lines += newlines;
        open_line = chunk.last() != Some(&b'\n');
        if lines >= want {
            *budget = budget.saturating_sub(read);
            return Some(lines);
        }
    }
    *budget = budget.saturating_sub(read);
    if read >= limit {
        return None;
    }
    Some(lines + u64::from(open_line))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn cite(path: &str, first: u64, last: u64) -> Cited<'_> {
        Cited { path, first, last }
    }

    #[test]
    fn files_lines_and_escapes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("src")).expect("mkdir");
        std::fs::write(root.join("src/a.rs"), "1\n2\n3").expect("write");
        std::fs::write(dir.path().join("outside.rs"), "1\n2\n").expect("write");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("outside.rs"), root.join("out.rs"))
                .expect("link");
            std::os::unix::fs::symlink(root.join("src/a.rs"), root.join("in.rs")).expect("link");
        }
        let repo = Repo::new(&root);
        let got = repo.verify(&[
            cite("src/a.rs", 1, 3),
            cite("src/a.rs", 4, 4),
            cite("src/a.rs", 0, 1),
            cite("src/a.rs", 3, 2),
            cite("../outside.rs", 1, 1),
            cite("src/../src/a.rs", 1, 1),
            cite("/etc/passwd", 1, 1),
            cite("missing.rs", 1, 1),
            cite("src", 1, 1),
            cite("out.rs", 1, 1),
            cite("in.rs", 2, 2),
        ]);
        assert_eq!(
            got,
            vec![
                true,
                false,
                false,
                false,
                false,
                false,
                false,
                false,
                false,
                false,
                cfg!(unix)
            ]
        );
    }

    #[test]
    fn spellings_of_one_file_share_one_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("a")).expect("mkdir");
        std::fs::write(dir.path().join("a/b.rs"), "1\n2\n").expect("write");
        let repo = Repo::new(dir.path());
        let root = dir.path().canonicalize().expect("root");
        let mut files = BTreeMap::new();
        for path in ["a/b.rs", "a//b.rs", "./a/./b.rs"] {
            files.insert(resolve(&root, path).expect("inside"), ());
        }
        assert_eq!(files.len(), 1);
        assert_eq!(
            repo.verify(&[
                cite("a/b.rs", 2, 2),
                cite("a//b.rs", 1, 2),
                cite("a/./b.rs", 3, 3)
            ]),
            vec![true, true, false]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_never_blocks_and_never_verifies() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("pipe.rs");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        let repo = Repo::new(dir.path());
        assert_eq!(repo.verify(&[cite("pipe.rs", 1, 1)]), vec![false]);
    }

    #[test]
    fn a_missing_root_verifies_nothing() {
        let repo = Repo::new(Path::new("/nonexistent/gsd-lane-verdict-root"));
        assert_eq!(repo.verify(&[cite("a.rs", 1, 1)]), vec![false]);
    }
}
