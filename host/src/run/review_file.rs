//! The review file and the empty-output policy (invocation.md §10).

use std::io::{Read, Write};
use std::path::Path;

use crate::config::is_ecma_whitespace;
use crate::private_fs::{open_run_file, WriteMode};

/// What a review file holds, judged without loading it whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Missing, or whitespace only.
    Empty,
    /// Has a non-whitespace character.
    Review {
        /// Whether the last byte is `\n`.
        ends_with_newline: bool,
    },
}

/// True when `text` is empty after trimming JavaScript whitespace (U+FEFF included).
pub fn is_empty_review(text: &str) -> bool {
    text.chars().all(is_ecma_whitespace)
}

/// Scans a file in fixed-size chunks (bounded memory, any size) up to its first
/// non-whitespace character, then reads only its last byte.
///
/// # Errors
///
/// I/O errors other than "not found".
pub fn inspect(path: &Path) -> std::io::Result<Content> {
    let mut file = match crate::private_fs::open_run_file_read(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Content::Empty),
        Err(err) => return Err(err),
    };
    let mut buffer = vec![0_u8; 64 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    let mut has_text = false;
    let mut last = None;
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        last = buffer.get(read - 1).copied();
        pending.extend_from_slice(buffer.get(..read).unwrap_or_default());
        // Decode what is complete; keep an incomplete trailing sequence for the next chunk.
        let (valid, rest) = match std::str::from_utf8(&pending) {
            Ok(text) => (text.to_owned(), Vec::new()),
            Err(err) if err.error_len().is_none() => {
                let cut = err.valid_up_to();
                (
                    String::from_utf8_lossy(pending.get(..cut).unwrap_or_default()).into_owned(),
                    pending.get(cut..).unwrap_or_default().to_vec(),
                )
            }
            Err(_) => (String::from_utf8_lossy(&pending).into_owned(), Vec::new()),
        };
        has_text = !is_empty_review(&valid);
        pending = rest;
        if has_text {
            // The rest matters only for its last byte.
            last = last_byte(&mut file)?.or(last);
            break;
        }
    }
    if !has_text && !pending.is_empty() {
        has_text = true;
    }
    Ok(if has_text {
        Content::Review {
            ends_with_newline: last == Some(b'\n'),
        }
    } else {
        Content::Empty
    })
}

/// The last byte of `file` after its current position (`None` when there is nothing after it).
fn last_byte(file: &mut std::fs::File) -> std::io::Result<Option<u8>> {
    use std::io::{Seek, SeekFrom};
    let here = file.stream_position()?;
    let end = file.seek(SeekFrom::End(0))?;
    if end <= here {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(end - 1))?;
    let mut byte = [0_u8; 1];
    file.read_exact(&mut byte)?;
    Ok(Some(byte[0]))
}

/// The generic stub: `<slug> review failed or returned empty output. stderr:`, the sidecar,
/// and the extra diagnostic when non-empty, joined with `\n` plus a final `\n`.
pub fn stub_text(slug: &str, sidecar: &str, diagnostic: Option<&str>) -> String {
    let mut lines = vec![
        format!("{slug} review failed or returned empty output. stderr:"),
        sidecar.to_owned(),
    ];
    if let Some(extra) = diagnostic.filter(|d| !d.is_empty()) {
        lines.push("Raw response body:".to_owned());
        lines.push(extra.to_owned());
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// Writes `text` to `path`, adding a final `\n` when missing; a planted link or special file
/// at `path` is refused ([`open_run_file`]).
///
/// # Errors
///
/// The I/O error.
pub fn write_review(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = open_run_file(path, WriteMode::Truncate)?;
    file.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        file.write_all(b"\n")?;
    }
    file.sync_data()
}

/// Appends `\n` to a review file that does not end with one.
///
/// # Errors
///
/// The I/O error.
pub fn finish_review_file(path: &Path, content: Content) -> std::io::Result<()> {
    if let Content::Review {
        ends_with_newline: false,
    } = content
    {
        open_run_file(path, WriteMode::Append)?.write_all(b"\n")?;
    }
    Ok(())
}

/// How the line [`incomplete_notice`] writes begins.
pub const INCOMPLETE_PREFIX: &str = "> [gsd-lane] incomplete review: ";

/// The line appended to a review whose lane was stopped before it finished.
pub fn incomplete_notice(code: &str) -> String {
    format!(
        "\n{INCOMPLETE_PREFIX}the lane was stopped ({code}) before it finished; the text above is partial.\n"
    )
}

/// Whether `review` ends with the incomplete-review notice (its last non-empty line), as a
/// review cut off by its bound or cap does. A lane can write the line itself, which only
/// counts its own review as incomplete.
pub fn ends_incomplete(review: &str) -> bool {
    review
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .is_some_and(|line| line.starts_with(INCOMPLETE_PREFIX))
}

/// Appends [`incomplete_notice`] to a review file.
///
/// # Errors
///
/// The I/O error.
pub fn append_incomplete_notice(path: &Path, code: &str) -> std::io::Result<()> {
    open_run_file(path, WriteMode::Append)?.write_all(incomplete_notice(code).as_bytes())
}

/// Reads the sidecar for a stub (bounded; missing → empty).
pub fn read_sidecar(path: &Path) -> String {
    let Ok(file) = crate::private_fs::open_run_file_read(path) else {
        return String::new();
    };
    let mut bytes = Vec::new();
    let _ = file
        .take(crate::run::spawn::DEFAULT_STDERR_BYTES + 4096)
        .read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_whitespace_only() {
        for empty in ["", " ", "\n", "\r\n", "\t", " \n\t ", "\u{feff}"] {
            assert!(is_empty_review(empty), "{empty:?}");
        }
        for review in ["x", " x ", "-n", "-e", "-E"] {
            assert!(!is_empty_review(review), "{review:?}");
        }
    }

    #[test]
    fn the_incomplete_notice_is_recognised_only_as_the_last_line() {
        let cut = format!(
            "# Review\n\nFirst finding.\n{}",
            incomplete_notice("ETIMEDOUT")
        );
        assert!(ends_incomplete(&cut));
        assert!(ends_incomplete(&format!("{cut}\n  \n")));
        assert!(!ends_incomplete(&format!("{cut}\nMore text.\n")));
        assert!(!ends_incomplete("# Review\n\nAll done.\n"));
        assert!(!ends_incomplete(""));
    }

    #[test]
    fn stub_format_is_exact() {
        assert_eq!(
            stub_text("ollama", "", Some("{\"error\":\"model not found\"}")),
            "ollama review failed or returned empty output. stderr:\n\nRaw response body:\n{\"error\":\"model not found\"}\n"
        );
        assert_eq!(
            stub_text("qwen", "boom\n", None),
            "qwen review failed or returned empty output. stderr:\nboom\n\n"
        );
    }

    #[test]
    fn inspects_files_in_chunks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.md");
        assert_eq!(inspect(&path).expect("missing"), Content::Empty);
        std::fs::write(&path, " \n\u{3000}\n").expect("write");
        assert_eq!(inspect(&path).expect("ws"), Content::Empty);
        let mut big = " ".repeat(200_000);
        big.push('x');
        std::fs::write(&path, &big).expect("write");
        assert_eq!(
            inspect(&path).expect("big"),
            Content::Review {
                ends_with_newline: false
            }
        );
        finish_review_file(
            &path,
            Content::Review {
                ends_with_newline: false,
            },
        )
        .expect("finish");
        assert_eq!(
            inspect(&path).expect("big"),
            Content::Review {
                ends_with_newline: true
            }
        );
    }
}
