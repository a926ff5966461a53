//! Reads an earlier REVIEWS.md back into its reviewer sections, the way gsd-lane wrote them.
//!
//! The file is repository content, so it is read as untrusted text: bounded in size, never
//! followed through a symlink or blocked on a FIFO, and parsed as CommonMark. The writer nests
//! every heading of a lane's text below its reviewer's `##` heading ([`crate::review::nest`]),
//! so the only top-level level-2 headings of a file gsd-lane wrote are its own: one per
//! reviewer, then `## Consensus Summary`. A `## …` line inside a code block, a block quote or
//! a list is not a top-level heading and cannot open a section. Anything that does not have
//! the writer's shape is reported as unreadable (the caller keeps the whole file instead).

use std::io::Read;
use std::path::Path;

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag};

/// The largest earlier REVIEWS.md read section by section; a larger one is kept whole.
pub const MAX_BYTES: u64 = 32 * 1024 * 1024;

/// The marker the writer puts after the heading of a review carried from an earlier run.
pub const EARLIER_MARK: &str = " — from the earlier run of ";

/// One reviewer section of an earlier REVIEWS.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The reviewer's heading without `## ` (`Alpha Review`, `Alpha Review (op-a)`), with any
    /// earlier-run marker removed.
    pub heading: String,
    /// When the section was itself carried from an earlier run: that run's date.
    pub earlier_at: Option<String>,
    /// The section's text between its heading and the `---` that closes it.
    pub body: String,
}

impl Section {
    /// Whether the section holds a review, not a failure notice (stub, interrupted, skipped).
    pub fn is_real(&self) -> bool {
        let first = self
            .body
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with("> [diff-only]"))
            .unwrap_or("");
        !first.is_empty() && first != "---" && !is_notice(first)
    }
}

/// The first line of a section body that is a failure notice, never a review.
pub fn is_notice(first_line: &str) -> bool {
    const TELLS: [&str; 4] = [
        " review failed or returned empty output.",
        " review not completed: ",
        " review skipped: ",
        " review not completed.",
    ];
    TELLS.iter().any(|tell| first_line.contains(tell))
}

/// An earlier REVIEWS.md, as far as keeping its reviews goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Previous {
    /// There is none (or it is empty).
    Absent,
    /// It has the writer's shape: its `reviewed_at` and its reviewer sections.
    Sections {
        /// The frontmatter's `reviewed_at`, when present and plain.
        reviewed_at: Option<String>,
        /// The reviewer sections in file order.
        sections: Vec<Section>,
    },
    /// It exists but cannot be read section by section; why.
    Unreadable(NotPreservable),
}

/// Why an earlier REVIEWS.md cannot be read section by section (it is then set aside whole).
/// An I/O error is kept as its text, so that [`Previous`] stays comparable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotPreservable {
    /// The file could not be `opened`, `examined` or `read`; what the system said.
    Io {
        /// `opened`, `examined` or `read`.
        action: &'static str,
        /// The I/O error's text.
        detail: String,
    },
    /// It is not a regular file (a link, a directory, a device).
    NotRegular,
    /// It is larger than [`MAX_BYTES`].
    TooLarge,
    /// It grew past [`MAX_BYTES`] while being read.
    Grew,
    /// No `# Cross-AI Plan Review` title.
    NoTitle,
    /// A `##` heading gsd-lane does not write (the heading, neutralized).
    ForeignHeading(String),
    /// No `## Consensus Summary` section.
    NoConsensus,
}

impl std::fmt::Display for NotPreservable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = MAX_BYTES / (1024 * 1024);
        match self {
            NotPreservable::Io { action, detail } => write!(f, "it cannot be {action} ({detail})"),
            NotPreservable::NotRegular => f.write_str("it is not a regular file"),
            NotPreservable::TooLarge => write!(f, "it is larger than {mib} MiB"),
            NotPreservable::Grew => write!(f, "it grew past {mib} MiB"),
            NotPreservable::NoTitle => f.write_str("it has no \"# Cross-AI Plan Review\" title"),
            NotPreservable::ForeignHeading(heading) => {
                write!(
                    f,
                    "its section heading {heading:?} is not one gsd-lane writes"
                )
            }
            NotPreservable::NoConsensus => {
                f.write_str("it has no \"## Consensus Summary\" section")
            }
        }
    }
}

impl std::error::Error for NotPreservable {}

/// A [`NotPreservable::Io`] maker for `action`.
fn io_failed(action: &'static str) -> impl FnOnce(std::io::Error) -> NotPreservable {
    move |err| NotPreservable::Io {
        action,
        detail: err.to_string(),
    }
}

impl Previous {
    /// Reads the file at `path` (bounded, no symlink, regular files only).
    pub fn read(path: &Path) -> Previous {
        match read_bounded(path) {
            Ok(None) => Previous::Absent,
            Ok(Some(text)) if text.trim().is_empty() => Previous::Absent,
            Ok(Some(text)) => match parse(&text) {
                Ok((reviewed_at, sections)) => Previous::Sections {
                    reviewed_at,
                    sections,
                },
                Err(why) => Previous::Unreadable(why),
            },
            Err(why) => Previous::Unreadable(why),
        }
    }

    /// Whether the section headed `heading` (read section by section) names `file` as holding
    /// the whole of its review: the only proof that a `.full.md` of that name is the whole of
    /// an earlier review gsd-lane wrote, not a user's file or one a set-aside file still names.
    pub fn section_names_whole_file(&self, heading: &str, file: &str) -> bool {
        let Previous::Sections { sections, .. } = self else {
            return false;
        };
        sections.iter().any(|section| {
            section.heading == heading
                && crate::review::reviews_md::names_whole_file(&section.body, file)
        })
    }

    /// Whether the file holds something a run without a real review must not replace: a real
    /// review, or anything that cannot be read (fail closed).
    pub fn holds_real_review(&self) -> bool {
        match self {
            Previous::Absent => false,
            Previous::Sections { sections, .. } => sections.iter().any(Section::is_real),
            Previous::Unreadable(_) => true,
        }
    }
}

/// The file's text, `None` when it does not exist; an error for anything but a regular file
/// within [`MAX_BYTES`].
fn read_bounded(path: &Path) -> Result<Option<String>, NotPreservable> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io_failed("opened")(err)),
    };
    let meta = file.metadata().map_err(io_failed("examined"))?;
    if !meta.is_file() {
        return Err(NotPreservable::NotRegular);
    }
    if meta.len() > MAX_BYTES {
        return Err(NotPreservable::TooLarge);
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_failed("read"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(NotPreservable::Grew);
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// A top-level heading: its level, the raw text after the `#` run, and its byte range.
struct Heading<'t> {
    level: HeadingLevel,
    text: &'t str,
    start: usize,
    end: usize,
}

/// The top-level ATX headings of `text` (not inside a block quote, a list or any container).
fn top_level_headings(text: &str) -> Vec<Heading<'_>> {
    let mut depth = 0usize;
    let mut found = Vec::new();
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) if depth == 0 => {
                let raw = text.get(range.clone()).unwrap_or("");
                let line = raw.lines().next().unwrap_or("").trim();
                // Only ATX headings (`## x`); a setext heading is never what the writer wrote.
                if line.starts_with('#') {
                    found.push(Heading {
                        level,
                        text: line.trim_start_matches('#').trim(),
                        start: range.start,
                        end: range.end,
                    });
                }
                depth += 1;
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    found
}

/// The frontmatter's `reviewed_at`, when the file opens with one and it is a plain timestamp.
fn reviewed_at(text: &str) -> Option<String> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---\n")?;
    rest.get(..end)?
        .lines()
        .find_map(|line| line.strip_prefix("reviewed_at:"))
        .map(str::trim)
        .filter(|value| is_plain_date(value))
        .map(str::to_owned)
}

/// A timestamp as the writer writes it: short, digits and `-:.TZ+` only.
pub fn is_plain_date(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 40
        && value
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | '.' | 'T' | 'Z' | '+'))
}

/// Whether a heading has the shape of a reviewer's (`X Review`, `X Review (instance)`).
fn is_reviewer_heading(heading: &str) -> bool {
    heading.ends_with(" Review")
        || heading
            .rfind(" Review (")
            .is_some_and(|at| heading.ends_with(')') && at > 0)
}

/// Splits a heading into the reviewer's heading and the earlier-run date it was carried with.
fn split_earlier(heading: &str) -> Result<(String, Option<String>), NotPreservable> {
    match heading.rfind(EARLIER_MARK) {
        Some(at) => {
            let date = heading.get(at + EARLIER_MARK.len()..).unwrap_or("");
            let base = heading.get(..at).unwrap_or("");
            if is_plain_date(date) && is_reviewer_heading(base) {
                Ok((base.to_owned(), Some(date.to_owned())))
            } else {
                Err(foreign(heading))
            }
        }
        None if is_reviewer_heading(heading) => Ok((heading.to_owned(), None)),
        None => Err(foreign(heading)),
    }
}

/// [`NotPreservable::ForeignHeading`] for `heading`, neutralized.
fn foreign(heading: &str) -> NotPreservable {
    NotPreservable::ForeignHeading(crate::output::neutralize(heading))
}

/// A section's body: the text between its heading and the next, without the closing `---`.
fn body_of(text: &str) -> String {
    let trimmed = text.trim();
    let without_rule = trimmed
        .strip_suffix("---")
        .filter(|rest| rest.is_empty() || rest.ends_with('\n'))
        .unwrap_or(trimmed);
    without_rule.trim().to_owned()
}

/// Parses a REVIEWS.md: its `reviewed_at` and its reviewer sections.
///
/// # Errors
///
/// Why the text does not have the writer's shape (no `# Cross-AI Plan Review` title, a
/// `##` heading that is not a reviewer's, no `## Consensus Summary`).
pub fn parse(text: &str) -> Result<(Option<String>, Vec<Section>), NotPreservable> {
    let headings = top_level_headings(text);
    let title = headings
        .iter()
        .position(|h| h.level == HeadingLevel::H1 && h.text.starts_with("Cross-AI Plan Review"))
        .ok_or(NotPreservable::NoTitle)?;
    let level2: Vec<&Heading<'_>> = headings
        .iter()
        .skip(title + 1)
        .filter(|h| h.level == HeadingLevel::H2)
        .collect();
    let mut sections = Vec::new();
    for (index, heading) in level2.iter().enumerate() {
        if heading.text == "Consensus Summary" {
            return Ok((reviewed_at(text), sections));
        }
        // The plan-revision conflicts slot (upstream #3916) is no review: it is kept on its own.
        if index == 0 && heading.text == crate::review::conflicts_slot::HEADING_TEXT {
            continue;
        }
        let (name, earlier_at) = split_earlier(heading.text)?;
        let end = level2.get(index + 1).map_or(text.len(), |next| next.start);
        sections.push(Section {
            heading: name,
            earlier_at,
            body: body_of(text.get(heading.end..end).unwrap_or("")),
        });
    }
    Err(NotPreservable::NoConsensus)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "---\nphase: 3\nreviewers: [alpha]\nreviewed_at: 2026-07-29T14:03:05.120Z\nplans_reviewed: [03-01-PLAN.md]\n---\n\n# Cross-AI Plan Review — Phase 3\n\n";
    const TAIL: &str = "## Consensus Summary\n\n### Agreed Strengths\n";

    fn sections(text: &str) -> Vec<Section> {
        parse(text).expect("parses").1
    }

    #[test]
    fn reads_sections_and_date() {
        let text = format!("{HEAD}## Alpha Review\n\nThe plans look sound.\n\n### Risks\n\nnone\n\n---\n\n## Beta Review (op-b)\n\nbeta review failed or returned empty output. stderr:\nboom\n\n---\n\n{TAIL}");
        let (date, found) = parse(&text).expect("parses");
        assert_eq!(date.as_deref(), Some("2026-07-29T14:03:05.120Z"));
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].heading, "Alpha Review");
        assert_eq!(found[0].body, "The plans look sound.\n\n### Risks\n\nnone");
        assert!(found[0].is_real());
        assert_eq!(found[1].heading, "Beta Review (op-b)");
        assert!(!found[1].is_real());
    }

    /// The conflicts slot after the title is not a review; the same heading later is no slot.
    #[test]
    fn the_conflicts_slot_is_not_a_section() {
        let slot = "<!-- gsd:plan-revision-conflicts:begin -->\n## Plan-Revision Conflicts\n- [ ] REVISION_CONFLICT x\n<!-- gsd:plan-revision-conflicts:end -->\n\n";
        let found = sections(&format!(
            "{HEAD}{slot}## Alpha Review\n\nok\n\n---\n\n{TAIL}"
        ));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].heading, "Alpha Review");
        let late = format!("{HEAD}## Alpha Review\n\nok\n\n---\n\n{slot}{TAIL}");
        assert!(parse(&late).is_err());
    }

    #[test]
    fn headings_inside_code_quotes_and_lists_forge_nothing() {
        let text = format!("{HEAD}## Alpha Review\n\nSee:\n\n```\n---\n\n## Claude Review\n\nforged\n```\n\n> ## Codex Review\n\n- ## Qwen Review\n\n---\n\n{TAIL}");
        let found = sections(&text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].body.contains("forged"));
    }

    #[test]
    fn carried_sections_keep_their_date() {
        let text = format!("{HEAD}## Alpha Review — from the earlier run of 2026-01-02T03:04:05.000Z\n\nold review\n\n---\n\n{TAIL}");
        let found = sections(&text);
        assert_eq!(found[0].heading, "Alpha Review");
        assert_eq!(
            found[0].earlier_at.as_deref(),
            Some("2026-01-02T03:04:05.000Z")
        );
    }

    #[test]
    fn other_shapes_are_unreadable_not_empty() {
        assert!(parse("my own notes\n").is_err());
        assert!(parse(&format!("{HEAD}## Alpha Review\n\nx\n")).is_err());
        assert!(parse(&format!("{HEAD}## Notes\n\nx\n\n{TAIL}")).is_err());
        let odd_date =
            format!("{HEAD}## Alpha Review — from the earlier run of <b>\n\nx\n\n{TAIL}");
        assert!(parse(&odd_date).is_err());
        let hostile_date = HEAD.replace("2026-07-29T14:03:05.120Z", "now\u{1b}[2J");
        let (date, _) = parse(&format!("{hostile_date}{TAIL}")).expect("parses");
        assert_eq!(date, None);
    }

    #[test]
    fn reading_is_bounded_and_refuses_links() {
        let dir = tempfile::tempdir().expect("tempdir");
        let absent = dir.path().join("none.md");
        assert_eq!(Previous::read(&absent), Previous::Absent);
        let target = dir.path().join("t.md");
        std::fs::write(&target, "notes").expect("write");
        let link = dir.path().join("l.md");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        assert!(matches!(Previous::read(&link), Previous::Unreadable(_)));
        let big = dir.path().join("big.md");
        let file = std::fs::File::create(&big).expect("create");
        file.set_len(MAX_BYTES + 1).expect("set_len");
        assert!(matches!(Previous::read(&big), Previous::Unreadable(_)));
        assert!(Previous::read(&big).holds_real_review());
    }
}
