//! A lane's findings, read as untrusted text (upstream-since-2026-08.md §8.4): the lines of
//! its review in the request's form `- [severity] path:LINE — text` become typed findings when
//! every part checks out, and are refused with the reason otherwise (never dropped silently).
//! Prose lines are not findings and stay in the review as written.

use serde::Serialize;

use super::hygiene::{self, RepoRoot};

/// Most findings read from one lane; further finding lines are refused as one entry.
pub const MAX_FINDINGS: usize = 200;
/// Longest finding text, in characters.
pub const MAX_TEXT_CHARS: usize = 2_000;
/// Most bytes of a review that are read for findings (the rest stays in the review file).
pub const MAX_SCANNED_BYTES: usize = 4 * 1024 * 1024;
/// Largest line number accepted.
pub const MAX_LINE: u64 = 10_000_000;

/// How serious a finding is (the request names exactly these three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Breaks behaviour or security.
    Critical,
    /// A likely bug.
    Warning,
    /// Everything else.
    Info,
}

impl Severity {
    /// Parses a severity word exactly (lower case, as the request asks).
    pub fn parse(word: &str) -> Option<Severity> {
        match word {
            "critical" => Some(Severity::Critical),
            "warning" => Some(Severity::Warning),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }
}

/// One finding that passed every check. Still unverified: the code-reviewer must re-open the
/// cited source before accepting it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The severity.
    pub severity: Severity,
    /// Repository-relative path (inside the root, lexically and through links).
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// What the lane says is wrong (no control characters, at most [`MAX_TEXT_CHARS`]).
    pub text: String,
}

/// A finding line that was refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refused {
    /// 1-based line of the review.
    pub line: usize,
    /// Why it was refused.
    pub why: String,
}

/// Why a finding line was refused (its text is [`Refused::why`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindingError {
    /// The line holds a control or bidi character.
    ControlCharacter(char),
    /// No `]` closes the severity.
    NoSeverityEnd,
    /// The severity word is not one of the three (its first 40 characters).
    UnknownSeverity(String),
    /// No `path:LINE` location (the location, shortened).
    NoLocation(String),
    /// The location has no line number (the location, shortened).
    NoLineNumber(String),
    /// The line number is 0 or past [`MAX_LINE`].
    LineOutOfRange(u64),
    /// The location has no path (the location, shortened).
    NoPath(String),
    /// The path is not inside the repository.
    Path(super::reason::Rejection),
    /// Nothing follows the location.
    NoText,
    /// The text is longer than [`MAX_TEXT_CHARS`].
    TextTooLong,
}

impl std::fmt::Display for FindingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FindingError::ControlCharacter(c) => {
                write!(f, "holds the control character U+{:04X}", u32::from(*c))
            }
            FindingError::NoSeverityEnd => f.write_str("no `]` after the severity"),
            FindingError::UnknownSeverity(word) => {
                write!(f, "unknown severity {word:?} (critical, warning or info)")
            }
            FindingError::NoLocation(location) => {
                write!(f, "no `path:LINE` location in {location:?}")
            }
            FindingError::NoLineNumber(location) => write!(f, "no line number in {location:?}"),
            FindingError::LineOutOfRange(line) => {
                write!(f, "line {line} is out of range (1-{MAX_LINE})")
            }
            FindingError::NoPath(location) => write!(f, "no path in {location:?}"),
            FindingError::Path(rejection) => f.write_str(&rejection.detail),
            FindingError::NoText => f.write_str("no text after the location"),
            FindingError::TextTooLong => {
                write!(f, "text longer than {MAX_TEXT_CHARS} characters")
            }
        }
    }
}

impl std::error::Error for FindingError {}

/// Everything read from one review.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Findings {
    /// The accepted findings, in review order.
    pub findings: Vec<Finding>,
    /// The refused finding lines.
    pub refused: Vec<Refused>,
}

/// Reads the findings of `review` (a lane's review text) against the repository `root`.
pub fn parse(review: &str, root: &RepoRoot) -> Findings {
    let scanned = cut_at_char(review, MAX_SCANNED_BYTES);
    let mut out = Findings::default();
    for (index, line) in scanned.split('\n').enumerate() {
        let number = index + 1;
        let Some(body) = finding_body(line) else {
            continue;
        };
        if out.findings.len() >= MAX_FINDINGS {
            out.refused.push(Refused {
                line: number,
                why: format!(
                    "more than {MAX_FINDINGS} findings; this one and the rest are not read"
                ),
            });
            break;
        }
        match finding(body, root) {
            Ok(found) => out.findings.push(found),
            Err(why) => out.refused.push(Refused {
                line: number,
                why: why.to_string(),
            }),
        }
    }
    if scanned.len() < review.len() {
        out.refused.push(Refused {
            line: scanned.split('\n').count(),
            why: format!("the review is longer than {MAX_SCANNED_BYTES} bytes; findings after this line are not read"),
        });
    }
    out
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn cut_at_char(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or("")
}

/// The part after `- [` (or `* [`) of a finding line, else `None` (prose).
fn finding_body(line: &str) -> Option<&str> {
    let trimmed = line.trim_start_matches([' ', '\t']);
    trimmed
        .strip_prefix("- [")
        .or_else(|| trimmed.strip_prefix("* ["))
}

/// One finding from the text after `- [`.
fn finding(body: &str, root: &RepoRoot) -> Result<Finding, FindingError> {
    // A trailing `\r` (CRLF reviews) is the line ending, not content.
    let body = body.strip_suffix('\r').unwrap_or(body);
    if let Some(c) = hygiene::control_char(body)
        .or_else(|| body.chars().find(|c| crate::textsafe::is_bidi_control(*c)))
    {
        return Err(FindingError::ControlCharacter(c));
    }
    let (word, rest) = body.split_once(']').ok_or(FindingError::NoSeverityEnd)?;
    let severity = Severity::parse(word.trim())
        .ok_or_else(|| FindingError::UnknownSeverity(word.chars().take(40).collect()))?;
    let rest = rest.trim_start();
    let (location, text) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    // `path:LINE:` and `path:LINE,` end the location with the separator.
    let location = location.trim_matches('`').trim_end_matches([':', ',']);
    let (path, line) = split_location(location)?;
    let path = root.inside(path).map_err(FindingError::Path)?;
    let text = text
        .trim()
        .trim_start_matches(['—', '–', '-', ':'])
        .trim()
        .to_owned();
    if text.is_empty() {
        return Err(FindingError::NoText);
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(FindingError::TextTooLong);
    }
    Ok(Finding {
        severity,
        path,
        line,
        text,
    })
}

/// `path:LINE`, `path:LINE:COL` or `path:START-END` into the path and the (first) line.
fn split_location(location: &str) -> Result<(&str, u64), FindingError> {
    let (head, tail) = location
        .rsplit_once(':')
        .ok_or_else(|| FindingError::NoLocation(shorten(location)))?;
    let (path, line_text) = match head.rsplit_once(':') {
        Some((path, line)) if is_number(line) && is_number(tail) => (path, line),
        _ => (head, tail),
    };
    let line_text = line_text
        .split_once('-')
        .map_or(line_text, |(start, _)| start);
    let line: u64 = line_text
        .parse()
        .map_err(|_| FindingError::NoLineNumber(shorten(location)))?;
    if line == 0 || line > MAX_LINE {
        return Err(FindingError::LineOutOfRange(line));
    }
    if path.is_empty() {
        return Err(FindingError::NoPath(shorten(location)));
    }
    Ok((path, line))
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

fn shorten(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::code_review::hygiene::tests::root;

    #[test]
    fn finding_lines_are_typed() {
        let (_dir, root) = root();
        let review = "# Review\n\nProse is not a finding.\n\
                      - [critical] src/a.rs:12 — unchecked index\n\
                      * [warning] `src/a.rs:3:7` the loop never ends\n\
                      - [info] src/a.rs:4-9: naming\r\n";
        let found = parse(review, &root);
        assert_eq!(found.refused, Vec::new());
        assert_eq!(
            found.findings,
            vec![
                Finding {
                    severity: Severity::Critical,
                    path: "src/a.rs".into(),
                    line: 12,
                    text: "unchecked index".into()
                },
                Finding {
                    severity: Severity::Warning,
                    path: "src/a.rs".into(),
                    line: 3,
                    text: "the loop never ends".into()
                },
                Finding {
                    severity: Severity::Info,
                    path: "src/a.rs".into(),
                    line: 4,
                    text: "naming".into()
                },
            ]
        );
    }

    #[test]
    fn untrusted_finding_lines_are_refused_with_the_reason() {
        let (_dir, root) = root();
        let cases = [
            ("- [blocker] src/a.rs:1 — x", "unknown severity"),
            ("- [Critical] src/a.rs:1 — x", "unknown severity"),
            ("- [critical src/a.rs:1 — x", "no `]`"),
            (
                "- [critical] ../../etc/passwd:1 — x",
                "outside the repository root",
            ),
            (
                "- [critical] /etc/passwd:1 — x",
                "outside the repository root",
            ),
            ("- [critical] src/a.rs:0 — x", "out of range"),
            ("- [critical] src/a.rs:99999999999 — x", "out of range"),
            ("- [critical] src/a.rs — x", "location"),
            ("- [critical] src/a.rs:x — x", "no line number"),
            ("- [critical] src/a.rs:3", "no text"),
            (
                "- [critical] src/a.rs:3 \u{1b}]0;pwned\u{7} x",
                "control character",
            ),
            (
                "- [critical] src/a.rs:3 evil \u{202e}txt.exe",
                "control character",
            ),
        ];
        for (line, why) in cases {
            let found = parse(line, &root);
            assert!(found.findings.is_empty(), "{line:?} accepted");
            assert_eq!(found.refused.len(), 1, "{line:?}");
            assert!(
                found.refused[0].why.contains(why),
                "{line:?}: {:?} lacks {why:?}",
                found.refused[0].why
            );
        }
        let long = format!("- [info] src/a.rs:1 {}", "x".repeat(MAX_TEXT_CHARS + 1));
        assert!(parse(&long, &root).refused[0].why.contains("longer than"));
    }

    #[test]
    fn findings_are_bounded() {
        let (_dir, root) = root();
        let review = "- [info] src/a.rs:1 x\n".repeat(MAX_FINDINGS + 50);
        let found = parse(&review, &root);
        assert_eq!(found.findings.len(), MAX_FINDINGS);
        assert_eq!(found.refused.len(), 1);
        let huge = format!(
            "{}\n- [info] src/a.rs:1 late\n",
            "é".repeat(MAX_SCANNED_BYTES)
        );
        let found = parse(&huge, &root);
        assert!(found.findings.is_empty());
        assert!(found.refused[0].why.contains("longer than"));
    }
}
