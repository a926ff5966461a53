//! An existing REVIEWS.md is never replaced by one without a real review (decisions.md #14).
//!
//! Deciding "does this file hold a real review" fails closed: only a file whose every review
//! section is a recognised failure notice (diagnostic stub, interrupted, budget skip), or an
//! empty file, counts as holding none. Anything else — a review, hand-written notes, a file
//! that cannot be read — is kept.

use std::path::{Path, PathBuf};

/// The first line of a section body that is a failure notice, never a review.
pub(crate) fn is_notice(first_line: &str) -> bool {
    const TELLS: [&str; 4] = [
        " review failed or returned empty output.",
        " review not completed: ",
        " review skipped: ",
        " review not completed.",
    ];
    TELLS.iter().any(|tell| first_line.contains(tell))
}

/// Whether `text` (a REVIEWS.md) holds at least one real review.
pub fn holds_real_review(text: &str) -> bool {
    let body = match text.find("\n# Cross-AI Plan Review") {
        Some(start) => &text[start..],
        None => return !text.trim().is_empty(),
    };
    let body = body
        .find("\n## Consensus Summary")
        .map_or(body, |end| &body[..end]);
    body.split("\n## ").skip(1).any(|section| {
        let mut lines = section.lines().skip(1).map(str::trim);
        let first = lines
            .find(|line| !line.is_empty() && !line.starts_with("> [diff-only]"))
            .unwrap_or("");
        !first.is_empty() && first != "---" && !is_notice(first)
    })
}

/// Whether the file at `path` must be kept: it exists and holds a real review, or it exists
/// and cannot be read (fail closed).
pub fn must_keep(path: &Path) -> bool {
    match std::fs::read(path) {
        Ok(bytes) => holds_real_review(&String::from_utf8_lossy(&bytes)),
        Err(err) => err.kind() != std::io::ErrorKind::NotFound,
    }
}

/// `<dir>/<stem>.failed.md` beside `path` (`03-REVIEWS.md` → `03-REVIEWS.failed.md`).
pub fn failed_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().map_or_else(
        || "REVIEWS".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    path.with_file_name(format!("{stem}.failed.md"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "---\nphase: 3\n---\n\n# Cross-AI Plan Review — Phase 3\n\n";
    const TAIL: &str = "## Consensus Summary\n\n### Agreed Strengths\n";

    #[test]
    fn stubs_and_notices_are_not_reviews() {
        let stub = format!("{HEAD}## Alpha Review\n\nalpha review failed or returned empty output. stderr:\nboom\n\n---\n\n{TAIL}");
        assert!(!holds_real_review(&stub));
        let interrupted = format!("{HEAD}## Alpha Review\n\nalpha review not completed: the review run was interrupted.\n\n---\n\n{TAIL}");
        assert!(!holds_real_review(&interrupted));
        assert!(!holds_real_review(""));
    }

    #[test]
    fn a_review_or_unknown_text_is_kept() {
        let real = format!("{HEAD}## Alpha Review\n\nalpha review failed or returned empty output. stderr:\n\n---\n\n## Beta Review\n\nThe plans look sound.\n\n---\n\n{TAIL}");
        assert!(holds_real_review(&real));
        assert!(holds_real_review("my own notes about the plans\n"));
        assert_eq!(
            failed_path(Path::new("/p/03-REVIEWS.md")),
            PathBuf::from("/p/03-REVIEWS.failed.md")
        );
    }
}
