//! A review file read once, in bounded memory (issue 25 item 3): every byte is hashed for the
//! journal as it streams past, and only the first `review.max_inline_bytes` are kept for
//! REVIEWS.md. A review over that bound is shown by its first lines, and the whole of it is
//! copied beside REVIEWS.md at the end ([`super::full_review`]), checked against the same hash.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::spill::{Spill, SpillSlot};
use crate::config::ProjectConfig;
use crate::private_fs::open_run_file_read;

/// The config key bounding how much of each review REVIEWS.md shows (a central key).
pub const KEY: &str = "review.max_inline_bytes";
/// Its default: 2 MiB of each review inline.
pub const DEFAULT_INLINE_BYTES: u64 = 2 * 1024 * 1024;
/// The smallest value accepted (64 KiB).
pub const MIN_INLINE_BYTES: u64 = 64 * 1024;
/// The largest value accepted (256 MiB): more would undo the point of the bound.
pub const MAX_INLINE_BYTES: u64 = 256 * 1024 * 1024;
/// Largest review file hashed: the spawn cap on a review file plus room for what gsd-lane
/// appends (a final newline, the incomplete-review notice). A bigger file is never kept by a
/// resume and never copied beside REVIEWS.md.
pub const MAX_REVIEW_BYTES: u64 = crate::run::spawn::DEFAULT_STDOUT_FILE_BYTES + 64 * 1024;

/// Size of each read (large enough that a 1 GiB review costs a thousand reads, not sixteen
/// thousand).
pub const CHUNK: usize = 1024 * 1024;

/// The inline bound from the config: [`DEFAULT_INLINE_BYTES`] when unset.
///
/// # Errors
///
/// A value that is not an integer from [`MIN_INLINE_BYTES`] to [`MAX_INLINE_BYTES`]: the
/// message names the key, the value and the range.
pub fn inline_bound(config: &ProjectConfig) -> Result<u64, BadInlineBound> {
    match config.get(KEY) {
        None | Some(Value::Null) => Ok(DEFAULT_INLINE_BYTES),
        Some(value) => value
            .as_u64()
            .filter(|n| (MIN_INLINE_BYTES..=MAX_INLINE_BYTES).contains(n))
            .ok_or_else(|| BadInlineBound(value.clone())),
    }
}

/// A `review.max_inline_bytes` outside its range (the value it holds).
#[derive(Debug, Clone, PartialEq)]
pub struct BadInlineBound(pub Value);

impl std::fmt::Display for BadInlineBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            ".planning/config.json: {KEY} is {}, expected a whole number of bytes \
             from {MIN_INLINE_BYTES} to {MAX_INLINE_BYTES} (default {DEFAULT_INLINE_BYTES}); \
             fix the value or remove the key",
            self.0
        )
    }
}

impl std::error::Error for BadInlineBound {}

/// The inline bound of a request already checked by [`inline_bound`] (the default otherwise).
pub fn checked_bound(config: &ProjectConfig) -> u64 {
    inline_bound(config).unwrap_or(DEFAULT_INLINE_BYTES)
}

/// One review file as read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// Its first bytes: all of it when `total <= bound`, else the first `bound` bytes.
    pub head: Vec<u8>,
    /// How many bytes the file had when read (up to [`MAX_REVIEW_BYTES`] + 1).
    pub total: u64,
    /// SHA-256 (hex) of every byte read; `None` for a file over [`MAX_REVIEW_BYTES`].
    pub sha256: Option<String>,
    /// The whole review, written while it was read into a private file beside REVIEWS.md
    /// ([`read_spilling`]); empty when it fits inline or was read without one.
    pub spill: SpillSlot,
    /// The incomplete-review notice a review over the bound ends with (its lane was stopped by
    /// its time bound or output cap), read from the file's last bytes: REVIEWS.md shows it after
    /// the part shown, so a cut-off review is never read as finished.
    pub incomplete_line: Option<String>,
}

impl Review {
    /// A review held whole (tests).
    #[cfg(test)]
    pub fn whole(bytes: Vec<u8>) -> Review {
        Review {
            sha256: Some(super::journal::hex(&Sha256::digest(&bytes))),
            total: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
            head: bytes,
            spill: SpillSlot::default(),
            incomplete_line: None,
        }
    }

    /// True when REVIEWS.md shows only part of the review.
    pub fn is_cut(&self) -> bool {
        self.total > u64::try_from(self.head.len()).unwrap_or(u64::MAX)
    }

    /// What REVIEWS.md shows (lossy UTF-8): the whole review when it fits, else its head up to
    /// the last line break in it (up to the last whole character when it has none), followed by
    /// the incomplete-review notice the whole review ends with, if it ends with one.
    pub fn shown(&self) -> String {
        let head = String::from_utf8_lossy(self.head.get(..self.shown_len()).unwrap_or_default());
        match (&self.incomplete_line, self.is_cut()) {
            (Some(line), true) => format!("{}\n\n{line}\n", head.trim_end_matches('\n')),
            _ => head.into_owned(),
        }
    }

    /// How many bytes of the review [`Review::shown`] shows.
    pub fn shown_len(&self) -> usize {
        if !self.is_cut() {
            return self.head.len();
        }
        match self.head.iter().rposition(|&b| b == b'\n') {
            Some(at) => at + 1,
            None => whole_chars(&self.head),
        }
    }
}

/// The length of the longest prefix of `bytes` that does not end inside a character.
fn whole_chars(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(err) if err.error_len().is_none() => err.valid_up_to(),
        Err(_) => bytes.len(),
    }
}

/// Reads the review file at `path` once (no-follow, non-blocking opener), in fixed chunks:
/// every byte is hashed, the first `bound` are kept. `None` when the file is missing, refused
/// or unreadable.
pub fn read(path: &Path, bound: u64) -> Option<Review> {
    scan(path, bound, None)
}

/// [`read`], also writing the whole of a review over `bound` bytes, in the same pass, into a
/// private file in `dir` (REVIEWS.md's directory), which
/// [`super::full_review::place`] then puts in place without reading it again. When that file
/// cannot be created or written, the review is read as by [`read`] (the copy at the end then
/// reads it again, or says why it cannot).
pub fn read_spilling(path: &Path, bound: u64, dir: &Path) -> Option<Review> {
    scan(path, bound, Some(dir))
}

/// The one pass of [`read`] and [`read_spilling`].
fn scan(path: &Path, bound: u64, spill_in: Option<&Path>) -> Option<Review> {
    let mut file = open_run_file_read(path).ok()?;
    let keep = usize::try_from(bound).unwrap_or(usize::MAX);
    let mut head = Vec::new();
    let mut hasher = Sha256::new();
    let mut total: u64 = 0;
    let mut buffer = vec![0_u8; CHUNK];
    let mut tail: Vec<u8> = Vec::with_capacity(TAIL_BYTES);
    // `Some(None)`: wanted, not created yet; `None`: not wanted, or given up.
    let mut spill: Option<Option<Spill>> = spill_in.map(|_| None);
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        let chunk = buffer.get(..read).unwrap_or_default();
        keep_tail(&mut tail, chunk);
        let room = keep.saturating_sub(head.len());
        head.extend_from_slice(chunk.get(..room.min(read)).unwrap_or_default());
        total = total.saturating_add(u64::try_from(read).unwrap_or(u64::MAX));
        if total > MAX_REVIEW_BYTES {
            return Some(Review {
                head,
                total,
                sha256: None,
                spill: SpillSlot::default(),
                incomplete_line: None,
            });
        }
        if total > bound && spill.is_some() {
            // The hash and the (direct, disk-bound) write of the same chunk at once; hashed
            // here when no thread can be started.
            let mut copy = hasher.clone();
            let (hashed, written) = std::thread::scope(|scope| {
                let hashing = std::thread::Builder::new().spawn_scoped(scope, move || {
                    copy.update(chunk);
                    copy
                });
                let written =
                    spill.and_then(|open| spill_chunk(open, spill_in, &head, chunk, room));
                (hashing.map(|h| h.join()), written)
            });
            match hashed {
                Ok(Ok(done)) => hasher = done,
                Ok(Err(payload)) => std::panic::resume_unwind(payload),
                Err(_) => hasher.update(chunk),
            }
            spill = written;
        } else {
            hasher.update(chunk);
        }
    }
    Some(Review {
        head,
        total,
        sha256: Some(super::journal::hex(&hasher.finalize())),
        spill: spill.flatten().map(SpillSlot::holding).unwrap_or_default(),
        incomplete_line: (total > bound).then(|| incomplete_line(&tail)).flatten(),
    })
}

/// How many of a review's last bytes are kept to find the incomplete-review notice (one line).
const TAIL_BYTES: usize = 4096;

/// Keeps the last [`TAIL_BYTES`] of the bytes read so far in `tail`, `chunk` being the newest.
fn keep_tail(tail: &mut Vec<u8>, chunk: &[u8]) {
    if chunk.len() >= TAIL_BYTES {
        tail.clear();
        tail.extend_from_slice(chunk.get(chunk.len() - TAIL_BYTES..).unwrap_or_default());
        return;
    }
    tail.extend_from_slice(chunk);
    let excess = tail.len().saturating_sub(TAIL_BYTES);
    tail.drain(..excess);
}

/// The incomplete-review notice `tail` (a review's last bytes) ends with, as one line.
fn incomplete_line(tail: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(tail);
    crate::run::review_file::ends_incomplete(&text)
        .then(|| text.lines().rev().map(str::trim).find(|l| !l.is_empty()))
        .flatten()
        .map(str::to_owned)
}

/// Writes one chunk of a review over its bound to its spill, creating the spill (and writing
/// the head kept so far, which the chunk's first `kept` bytes ended) on the first call;
/// `None` gives the spill up.
fn spill_chunk(
    open: Option<Spill>,
    place: Option<&Path>,
    head: &[u8],
    chunk: &[u8],
    kept: usize,
) -> Option<Option<Spill>> {
    let mut spill = match open {
        Some(spill) => spill,
        None => {
            let dir = place?;
            let mut spill = Spill::create(dir).ok()?;
            // The head held everything before this chunk plus its first `kept` bytes.
            let before = head.len().saturating_sub(kept.min(chunk.len()));
            spill
                .write_all(head.get(..before).unwrap_or_default())
                .ok()?;
            spill
        }
    };
    spill.write_all(chunk).ok()?;
    Some(Some(spill))
}

/// The reviews each identity's journal line hashed, kept (their bounded heads) so that
/// REVIEWS.md is built from exactly those bytes and never from a file a lane could have
/// rewritten since.
#[derive(Debug, Default)]
pub struct Captured {
    reviews: Mutex<BTreeMap<String, Review>>,
    /// REVIEWS.md's path: a review over the bound is written whole beside it while it is read.
    output: Option<PathBuf>,
}

impl Captured {
    /// A store whose reviews over the bound are written whole beside `output` (REVIEWS.md)
    /// while they are read.
    pub fn beside(output: &Path) -> Captured {
        Captured {
            reviews: Mutex::default(),
            output: Some(output.to_owned()),
        }
    }

    /// Reads the review file at `path` once ([`read_spilling`] beside REVIEWS.md when the store
    /// knows it, else [`read`]).
    pub fn read(&self, path: &Path, bound: u64) -> Option<Review> {
        let Some(output) = &self.output else {
            return read(path, bound);
        };
        let dir = output
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."));
        read_spilling(path, bound, dir)
    }

    /// Keeps `review` as identity `id`'s.
    pub fn keep(&self, id: &str, review: Review) {
        if let Ok(mut map) = self.reviews.lock() {
            map.insert(id.to_owned(), review);
        }
    }

    /// Everything kept, emptying the store.
    pub fn take(&self) -> BTreeMap<String, Review> {
        self.reviews
            .lock()
            .map(|mut map| std::mem::take(&mut *map))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A review cut off by its bound and longer than the inline bound shows its head and then
    /// the notice it ends with, wherever the notice falls across the reads; a review that fits,
    /// or that does not end with the notice, shows none added.
    #[test]
    fn a_cut_review_shows_the_incomplete_notice_it_ends_with() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("r.md");
        let notice = crate::run::review_file::incomplete_notice("ETIMEDOUT");
        let line = notice.trim();
        // Sizes that put the notice inside one read, and across the first read's end.
        for size in [100_000, CHUNK - 40] {
            let mut text = "finding line\n".repeat(size / 13);
            text.push_str(&notice);
            std::fs::write(&path, &text).expect("write");
            let cut = read(&path, 65_536).expect("read");
            assert!(cut.is_cut());
            assert_eq!(cut.incomplete_line.as_deref(), Some(line), "size {size}");
            let shown = cut.shown();
            assert!(shown.starts_with("finding line\n"), "size {size}");
            assert!(shown.trim_end().ends_with(line), "size {size}");
            assert!(crate::run::review_file::ends_incomplete(&shown));
            // Whole: shown as it is, the notice once.
            let whole = read(&path, MAX_INLINE_BYTES).expect("read");
            assert_eq!(whole.shown(), text);
            assert_eq!(whole.shown().matches(line).count(), 1);
        }
        // The notice in the middle, not at the end: not a cut-off review.
        let text = format!("{}{notice}more text after it\n", "x\n".repeat(50_000));
        std::fs::write(&path, &text).expect("write");
        let cut = read(&path, 65_536).expect("read");
        assert_eq!(cut.incomplete_line, None);
        assert!(!crate::run::review_file::ends_incomplete(&cut.shown()));
    }

    #[test]
    fn reads_hash_everything_and_keep_the_head() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("r.md");
        let text = "line one\nline two é\nthird line without end";
        std::fs::write(&path, text).expect("write");
        let whole = read(&path, 1024).expect("read");
        assert_eq!(whole, Review::whole(text.as_bytes().to_vec()));
        assert!(!whole.is_cut());
        assert_eq!(whole.shown(), text);
        let cut = read(&path, 12).expect("read");
        assert_eq!(cut.sha256, whole.sha256, "the hash covers every byte");
        assert_eq!(cut.total, whole.total);
        assert_eq!(cut.head, b"line one\nlin");
        assert_eq!(cut.shown(), "line one\n");
        // No line break in the head: cut before a split character, never inside it.
        std::fs::write(&path, "aé").expect("write");
        assert_eq!(read(&path, 2).expect("read").shown(), "a");
        assert_eq!(read(&dir.path().join("missing"), 10), None);
    }

    #[test]
    fn the_bound_is_validated() {
        let with = |value: Value| {
            inline_bound(&ProjectConfig::from_value(
                json!({"review": {"max_inline_bytes": value}}),
            ))
        };
        assert_eq!(
            inline_bound(&ProjectConfig::empty()),
            Ok(DEFAULT_INLINE_BYTES)
        );
        assert_eq!(with(Value::Null), Ok(DEFAULT_INLINE_BYTES));
        assert_eq!(with(json!(65536)), Ok(65536));
        for bad in [
            json!(0),
            json!(-1),
            json!(1.5),
            json!("4MiB"),
            json!(65535),
            json!(MAX_INLINE_BYTES + 1),
        ] {
            let err = with(bad.clone()).expect_err("refused").to_string();
            assert!(err.contains(KEY) && err.contains("65536"), "{bad}: {err}");
        }
    }
}
