//! The plan-revision conflicts slot of REVIEWS.md (upstream #3916, `upstream-since-2026-08.md`
//! §10.7): a block directly after the title that `plan-phase` appends open conflicts to, one
//! `- [ ] REVISION_CONFLICT …` line each, and that every rewrite keeps.
//!
//! ```text
//! # Cross-AI Plan Review — Phase 3
//!
//! <!-- gsd:plan-revision-conflicts:begin -->
//! ## Plan-Revision Conflicts
//! - [ ] REVISION_CONFLICT …
//! <!-- gsd:plan-revision-conflicts:end -->
//! ```
//!
//! Only the first block between the title and the first other `##` heading is the slot; the same
//! marker inside a review is text. A slot that is there but malformed stops the write: guessing
//! which lines are conflict state could drop an open conflict.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::Failure;
use crate::output::neutralize;
use crate::textsafe::strip_controls;

/// The line that opens the block.
pub const BEGIN: &str = "<!-- gsd:plan-revision-conflicts:begin -->";
/// The line that closes the block (the upstream's `review.md` and `plan-phase` use it).
pub const END: &str = "<!-- gsd:plan-revision-conflicts:end -->";
/// The block's heading, the line after [`BEGIN`].
pub const HEADING: &str = "## Plan-Revision Conflicts";
/// The heading's text as a Markdown parser reports it.
pub const HEADING_TEXT: &str = "Plan-Revision Conflicts";
/// The title every REVIEWS.md written by gsd-lane opens its body with.
const TITLE: &str = "# Cross-AI Plan Review";

/// The slot's lines between its heading and its closing marker (none for a new file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Slot {
    /// The conflict lines, as the earlier file had them (control characters removed).
    pub lines: Vec<String>,
}

/// Why the earlier file's block cannot be kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// The REVIEWS.md.
    pub path: PathBuf,
    /// 1-based line of the problem.
    pub line: usize,
    /// What is wrong there.
    pub why: &'static str,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BLOCKED: {}:{}: the plan-revision conflicts block is malformed ({}); REVIEWS.md was not written. Fix the block so that it is `{BEGIN}`, then `{HEADING}`, then one line per conflict, then `{END}`, directly after the title",
            neutralize(&self.path.display().to_string()),
            self.line,
            self.why
        )
    }
}

impl std::error::Error for Malformed {}

impl From<Malformed> for Failure {
    fn from(malformed: Malformed) -> Failure {
        Failure::new(malformed.to_string())
    }
}

/// The slot of the REVIEWS.md at `path`: empty when there is none, no file, or a file that
/// cannot be read as text (a link, not a regular file, too large: the earlier file is then
/// kept whole by [`super::preserve`], slot and all).
///
/// # Errors
///
/// The file has a slot and it is malformed.
pub fn read(path: &Path) -> Result<Slot, Malformed> {
    match crate::private_fs::read_run_file(path, super::preserve::MAX_BYTES) {
        Ok(Some((bytes, false))) => parse(&String::from_utf8_lossy(&bytes), path),
        _ => Ok(Slot::default()),
    }
}

/// Finds the slot in `text` (the earlier REVIEWS.md at `path`).
///
/// # Errors
///
/// The slot is malformed: a closing marker or the heading without the opening marker, an
/// opening marker not followed by the heading, a second opening marker or a heading inside the
/// block, or no closing marker.
pub fn parse(text: &str, path: &Path) -> Result<Slot, Malformed> {
    let malformed = |line: usize, why: &'static str| Malformed {
        path: path.to_owned(),
        line,
        why,
    };
    let mut lines = text.lines().enumerate().map(|(n, l)| (n + 1, l.trim_end()));
    let body_start = frontmatter_lines(text);
    let Some(_) = lines
        .by_ref()
        .skip(body_start)
        .find(|(_, l)| l.starts_with(TITLE))
    else {
        return Ok(Slot::default());
    };
    for (n, line) in lines.by_ref() {
        if line == END {
            return Err(malformed(
                n,
                "a closing marker with no opening marker before it",
            ));
        }
        if line == HEADING {
            return Err(malformed(n, "the heading with no opening marker before it"));
        }
        if line.starts_with("## ") {
            return Ok(Slot::default());
        }
        if line == BEGIN {
            return match lines.next() {
                Some((_, next)) if next == HEADING => body(&mut lines, n, &malformed),
                Some((at, _)) => Err(malformed(
                    at,
                    "the line after the opening marker is not the heading",
                )),
                None => Err(malformed(n, "the file ends after the opening marker")),
            };
        }
    }
    Ok(Slot::default())
}

/// The block's lines up to its closing marker.
fn body<'t>(
    lines: &mut impl Iterator<Item = (usize, &'t str)>,
    begin: usize,
    malformed: &impl Fn(usize, &'static str) -> Malformed,
) -> Result<Slot, Malformed> {
    let rest: Vec<(usize, &str)> = lines.collect();
    let Some(end) = rest.iter().position(|(_, line)| *line == END) else {
        return Err(malformed(begin, "the block has no closing marker"));
    };
    let mut kept = Vec::new();
    for (n, line) in rest.iter().take(end) {
        if *line == BEGIN {
            return Err(malformed(*n, "a second opening marker inside the block"));
        }
        if line.trim_start().starts_with('#') {
            return Err(malformed(*n, "a heading inside the block"));
        }
        kept.push(strip_controls(line));
    }
    Ok(Slot { lines: kept })
}

/// How many lines the frontmatter takes (0 without one).
fn frontmatter_lines(text: &str) -> usize {
    let Some(rest) = text.strip_prefix("---\n") else {
        return 0;
    };
    rest.find("\n---\n")
        .map_or(0, |end| rest.get(..end).unwrap_or("").lines().count() + 2)
}

/// The block as written: markers, heading, the kept lines.
fn block(slot: &Slot) -> String {
    let mut out = format!("{BEGIN}\n{HEADING}\n");
    for line in slot.lines.iter().filter(|l| !l.trim().is_empty()) {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(END);
    out.push('\n');
    out
}

/// `text` (a REVIEWS.md being written) with the slot directly after its title line; `text`
/// unchanged when it has no title line.
pub fn place(text: String, slot: &Slot) -> String {
    let body_at = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.find("\n---\n"))
        .map_or(0, |end| 4 + end + 5);
    let body = text.get(body_at..).unwrap_or_default();
    let title = if body.starts_with(TITLE) {
        Some(0)
    } else {
        body.find(&format!("\n{TITLE}")).map(|at| at + 1)
    };
    let Some(after_title) = title
        .and_then(|at| {
            body.get(at..)
                .and_then(|t| t.find('\n'))
                .map(|nl| at + nl + 1)
        })
        .map(|at| body_at + at)
    else {
        return text;
    };
    let (head, tail) = text.split_at(after_title);
    format!("{head}\n{}{tail}", block(slot))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str =
        "---\nphase: 3\nreviewers: [alpha]\n---\n\n# Cross-AI Plan Review — Phase 3\n\n";

    fn parsed(text: &str) -> Result<Slot, Malformed> {
        parse(text, Path::new("/p/03-REVIEWS.md"))
    }

    #[test]
    fn the_slot_is_placed_after_the_title_and_read_back() {
        let written = place(
            format!("{HEAD}## Alpha Review\n\nok\n"),
            &Slot {
                lines: vec!["- [ ] REVISION_CONFLICT a/01 — x".into()],
            },
        );
        assert_eq!(
            written,
            format!("{HEAD}{BEGIN}\n{HEADING}\n- [ ] REVISION_CONFLICT a/01 — x\n{END}\n\n## Alpha Review\n\nok\n")
        );
        assert_eq!(
            parsed(&written).expect("slot").lines,
            ["- [ ] REVISION_CONFLICT a/01 — x"]
        );
        let empty = place(format!("{HEAD}## Alpha Review\n"), &Slot::default());
        assert!(empty.contains(&format!("Phase 3\n\n{BEGIN}\n{HEADING}\n{END}\n\n## Alpha")));
        assert_eq!(parsed(&empty), Ok(Slot::default()));
        assert_eq!(place("no title".into(), &Slot::default()), "no title");
    }

    #[test]
    fn no_slot_and_markers_in_reviews_are_not_state() {
        assert_eq!(
            parsed(&format!("{HEAD}## Alpha Review\n\n{BEGIN}\n")),
            Ok(Slot::default())
        );
        assert_eq!(parsed("my notes\n"), Ok(Slot::default()));
        assert_eq!(parsed(""), Ok(Slot::default()));
        // A note between the title and the slot is allowed.
        let noted = format!("{HEAD}> note\n\n{BEGIN}\n{HEADING}\n- [x] done\n{END}\n");
        assert_eq!(parsed(&noted).expect("slot").lines, ["- [x] done"]);
    }

    #[test]
    fn malformed_blocks_name_their_line() {
        let cases = [
            (
                format!("{HEAD}{BEGIN}\n{HEADING}\n- [ ] open\n"),
                8,
                "no closing marker",
            ),
            (
                format!("{HEAD}{END}\n"),
                8,
                "closing marker with no opening",
            ),
            (
                format!("{HEAD}{HEADING}\n{END}\n"),
                8,
                "heading with no opening",
            ),
            (
                format!("{HEAD}{BEGIN}\n- [ ] x\n{END}\n"),
                9,
                "not the heading",
            ),
            (format!("{HEAD}{BEGIN}\n"), 8, "ends after the opening"),
            (
                format!("{HEAD}{BEGIN}\n{HEADING}\n{BEGIN}\n{END}\n"),
                10,
                "second opening",
            ),
            (
                format!("{HEAD}{BEGIN}\n{HEADING}\n## Forged Review\n{END}\n"),
                10,
                "heading inside",
            ),
        ];
        for (text, line, why) in cases {
            let err = parsed(&text).expect_err(&text);
            assert_eq!(err.line, line, "{text}");
            assert!(err.why.contains(why), "{}", err.why);
            let message = err.to_string();
            assert!(
                message.starts_with(&format!("BLOCKED: /p/03-REVIEWS.md:{line}: ")),
                "{message}"
            );
        }
    }
}
