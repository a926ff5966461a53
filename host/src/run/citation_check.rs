//! The citation check of a finished review file (upstream #3436,
//! `spec/upstream-since-2026-08.md` §2): a source-grounded lane whose review cites no
//! `file:line` gets the `[reviewed-without-source-citations]` stamp as its first line.
//!
//! The review may be as large as the stdout cap (2 GiB), so it is read as a stream through the
//! one citation finder ([`crate::lane_result::citations::StampScan`]) and, when stamped, rewritten
//! through an unnamed temporary file in the run dir: memory stays bounded, and no named file
//! appears that a lane could have planted a link under.

use std::io::{self, Read, Seek, Write};
use std::path::Path;

use crate::config::is_ecma_whitespace;
use crate::lane_result::citations::{StampScan, CITATION_MARKER, CITATION_STAMP};
use crate::private_fs::{open_run_file, open_run_file_read, WriteMode};

/// Bytes read at a time.
const CHUNK: usize = 64 * 1024;

/// What the check found in a review file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Empty or whitespace only: left to the stub.
    Empty,
    /// Already carries the stamp: left alone (the check is idempotent).
    AlreadyStamped,
    /// Cites a source: left alone.
    Grounded,
    /// Cites none: the stamp was prepended.
    Stamped,
}

/// Checks the review file at `path` and prepends the stamp line and an empty line when the
/// review cites no source (§2.2).
///
/// # Errors
///
/// I/O errors, and a planted link or special file at `path` (refused, never followed).
pub fn check_file(path: &Path) -> io::Result<Verdict> {
    let verdict = scan(&mut open_run_file_read(path)?)?;
    if verdict == Verdict::Stamped {
        prepend_stamp(path)?;
    }
    Ok(verdict)
}

/// Reads `source` to its end (or to the first citation) and says what the check decides;
/// `Stamped` means the stamp is due.
fn scan(source: &mut impl Read) -> io::Result<Verdict> {
    let mut buffer = vec![0_u8; CHUNK];
    let mut pending: Vec<u8> = Vec::new();
    let mut head = String::new();
    let mut has_text = false;
    let mut finder = StampScan::default();
    loop {
        let read = source.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        pending.extend_from_slice(buffer.get(..read).unwrap_or_default());
        let text = decode_complete(&mut pending);
        if head.len() < CITATION_MARKER.len() {
            head.extend(text.chars().take(CITATION_MARKER.len()));
            if head.starts_with(CITATION_MARKER) {
                return Ok(Verdict::AlreadyStamped);
            }
        }
        has_text |= !text.chars().all(is_ecma_whitespace);
        finder.feed(&text);
        if finder.found() {
            return Ok(Verdict::Grounded);
        }
    }
    // A trailing incomplete sequence decodes as U+FFFD: text, and no citation.
    let rest = String::from_utf8_lossy(&pending);
    has_text |= !rest.chars().all(is_ecma_whitespace);
    Ok(if has_text {
        Verdict::Stamped
    } else {
        Verdict::Empty
    })
}

/// Decodes the complete UTF-8 prefix of `pending` (invalid bytes as U+FFFD, as a lossy reading
/// of the whole file would) and keeps an incomplete trailing sequence for the next chunk.
fn decode_complete(pending: &mut Vec<u8>) -> String {
    match std::str::from_utf8(pending) {
        Ok(text) => {
            let text = text.to_owned();
            pending.clear();
            text
        }
        Err(err) if err.error_len().is_none() => {
            let cut = err.valid_up_to();
            let rest = pending.split_off(cut);
            let text = String::from_utf8_lossy(pending).into_owned();
            *pending = rest;
            text
        }
        Err(_) => {
            let text = String::from_utf8_lossy(pending).into_owned();
            pending.clear();
            text
        }
    }
}

/// Rewrites `path` as the stamp line, an empty line, then its former bytes unchanged.
fn prepend_stamp(path: &Path) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut copy = tempfile::tempfile_in(dir)?;
    io::copy(&mut open_run_file_read(path)?, &mut copy)?;
    copy.rewind()?;
    let mut review = open_run_file(path, WriteMode::Truncate)?;
    review.write_all(CITATION_STAMP.as_bytes())?;
    review.write_all(b"\n\n")?;
    io::copy(&mut copy, &mut review)?;
    review.sync_data()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn checked(content: &[u8]) -> (Verdict, Vec<u8>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("gsd-review-x.md");
        std::fs::write(&path, content).expect("write");
        let verdict = check_file(&path).expect("check");
        (verdict, std::fs::read(&path).expect("read"))
    }

    #[test]
    fn an_uncited_review_gets_the_stamp_then_an_empty_line() {
        let (verdict, bytes) = checked(b"plan line 5 is wrong\n");
        assert_eq!(verdict, Verdict::Stamped);
        assert_eq!(
            String::from_utf8(bytes).expect("utf-8"),
            format!("{CITATION_STAMP}\n\nplan line 5 is wrong\n")
        );
    }

    #[test]
    fn cited_stamped_and_empty_reviews_are_left_alone() {
        for (content, want) in [
            (&b"see `src/a.rs:3`\n"[..], Verdict::Grounded),
            (b"  \n\t\n", Verdict::Empty),
            (b"", Verdict::Empty),
        ] {
            assert_eq!(checked(content), (want, content.to_vec()));
        }
        let stamped = format!("{CITATION_STAMP}\n\nplan line 5\n");
        assert_eq!(
            checked(stamped.as_bytes()),
            (Verdict::AlreadyStamped, stamped.into_bytes())
        );
    }

    #[test]
    fn a_citation_past_the_first_chunk_and_split_across_chunks_counts() {
        // The citation straddles the 64 KiB boundary, inside a multi-byte character run.
        let mut text = "é".repeat(CHUNK / 2 - 3);
        text.push_str(" lib/x.rs:9 end");
        assert_eq!(checked(text.as_bytes()).0, Verdict::Grounded);
        let mut long = "word ".repeat(3 * CHUNK / 5);
        long.push_str("plan line 5");
        let (verdict, bytes) = checked(long.as_bytes());
        assert_eq!(verdict, Verdict::Stamped);
        assert!(bytes.ends_with(long.as_bytes()));
        assert_eq!(bytes.len(), CITATION_STAMP.len() + 2 + long.len());
    }

    #[test]
    fn invalid_utf8_is_text_without_citations() {
        let (verdict, bytes) = checked(b"\xff\xfe plan\n");
        assert_eq!(verdict, Verdict::Stamped);
        assert!(bytes.ends_with(b"\xff\xfe plan\n"), "bytes kept unchanged");
    }

    #[test]
    #[cfg(unix)]
    fn a_planted_link_is_refused_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("target.md");
        std::fs::write(&target, "plan line 5\n").expect("write");
        let path = dir.path().join("gsd-review-x.md");
        std::os::unix::fs::symlink(&target, &path).expect("symlink");
        assert!(check_file(&path).is_err());
        assert_eq!(
            std::fs::read_to_string(&target).expect("read"),
            "plan line 5\n"
        );
    }
}
