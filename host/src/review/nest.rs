//! Nests a review's own Markdown headings under its reviewer's `##` section in `REVIEWS.md`.
//!
//! ATX headings (`#`…`######`) are demoted by one shift, the smallest that puts the review's
//! top heading at level 3; levels are capped at 6. A setext heading (a one-line paragraph
//! underlined with `===` or `---`) is rewritten as the ATX heading of its demoted level, so it
//! nests too. Fenced code blocks (```` ``` ```` or `~~~`) are never touched, and neither is
//! anything else: indented code, block quotes and list items keep their text.

/// The level a review's top heading is moved to: one below the reviewer's `##` heading.
pub const TOP_LEVEL: usize = 3;

/// A line's role, as far as headings go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// An ATX heading of this level; `text_at` is the byte offset after the `#` run.
    Atx { level: usize, text_at: usize },
    /// A setext underline of this level (`=` → 1, `-` → 2) under a one-line paragraph.
    Underline { level: usize },
    /// Anything else (fence lines and fenced content included).
    Other,
}

/// An open code fence: its character and run length.
#[derive(Debug, Clone, Copy)]
struct Fence {
    marker: char,
    len: usize,
}

/// Up to three spaces of indentation, then the rest; `None` for deeper indentation.
fn unindent(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches(' ');
    (line.len() - rest.len() <= 3).then_some(rest)
}

/// The fence a line opens or closes with (marker, run length, what follows the run).
fn fence_run(line: &str) -> Option<(char, usize, &str)> {
    let rest = unindent(line)?;
    let marker = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = rest.len() - rest.trim_start_matches(marker).len();
    (len >= 3).then(|| (marker, len, rest.get(len..).unwrap_or_default()))
}

/// The ATX heading level of a line and where its `#` run ends.
fn atx(line: &str) -> Option<(usize, usize)> {
    let rest = unindent(line)?;
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    let after = rest.get(hashes..).unwrap_or_default();
    let separated = after.is_empty() || after.starts_with([' ', '\t']);
    ((1..=6).contains(&hashes) && separated).then(|| (hashes, line.len() - after.len()))
}

/// The setext level a line would underline with (`===` → 1, `---` → 2).
fn underline(line: &str) -> Option<usize> {
    let rest = unindent(line)?.trim_end_matches([' ', '\t']);
    let marker = rest.chars().next()?;
    let level = match marker {
        '=' => 1,
        '-' => 2,
        _ => return None,
    };
    rest.chars().all(|c| c == marker).then_some(level)
}

/// True for a line that may be a one-line setext heading's text.
fn is_paragraph_text(line: &str) -> bool {
    let Some(rest) = unindent(line) else {
        return false;
    };
    let starts_block = rest.starts_with(['>', '-', '*', '+', '|', '<'])
        || rest.chars().next().is_some_and(|c| c.is_ascii_digit());
    !rest.trim().is_empty() && !starts_block && atx(line).is_none() && fence_run(line).is_none()
}

/// Classifies every line (fence state tracked across lines).
fn classify(lines: &[&str]) -> Vec<Line> {
    let mut roles = Vec::with_capacity(lines.len());
    let mut fence: Option<Fence> = None;
    for (index, line) in lines.iter().enumerate() {
        if let Some(open) = fence {
            let closes = fence_run(line).is_some_and(|(marker, len, rest)| {
                marker == open.marker && len >= open.len && rest.trim().is_empty()
            });
            if closes {
                fence = None;
            }
            roles.push(Line::Other);
            continue;
        }
        if let Some((marker, len, info)) = fence_run(line) {
            // A backtick fence's info string may not contain a backtick.
            if marker == '~' || !info.contains('`') {
                fence = Some(Fence { marker, len });
                roles.push(Line::Other);
                continue;
            }
        }
        if let Some((level, text_at)) = atx(line) {
            roles.push(Line::Atx { level, text_at });
            continue;
        }
        let previous = index
            .checked_sub(1)
            .and_then(|i| lines.get(i).map(|l| (i, l)));
        let one_line_paragraph = previous.is_some_and(|(i, text)| {
            let before_blank = i
                .checked_sub(1)
                .and_then(|b| lines.get(b))
                .is_none_or(|b| b.trim().is_empty());
            is_paragraph_text(text)
                && before_blank
                && roles.get(i).is_some_and(|r| *r == Line::Other)
        });
        match underline(line).filter(|_| one_line_paragraph) {
            Some(level) => roles.push(Line::Underline { level }),
            None => roles.push(Line::Other),
        }
    }
    roles
}

/// Returns `review` with its headings nested below level 2 (see the module documentation).
pub fn nest_headings(review: &str) -> String {
    let lines: Vec<&str> = review.split('\n').collect();
    let roles = classify(&lines);
    let top = roles
        .iter()
        .filter_map(|role| match role {
            Line::Atx { level, .. } | Line::Underline { level } => Some(*level),
            Line::Other => None,
        })
        .min();
    let Some(shift) = top
        .map(|top| TOP_LEVEL.saturating_sub(top))
        .filter(|s| *s > 0)
    else {
        return review.to_owned();
    };
    let hashes = |level: usize| "#".repeat((level + shift).min(6));
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for (index, line) in lines.iter().enumerate() {
        match roles.get(index).copied().unwrap_or(Line::Other) {
            Line::Atx { level, text_at } => {
                let text = line.get(text_at..).unwrap_or_default();
                out.push(format!("{}{text}", hashes(level)));
            }
            Line::Underline { level } => {
                if let Some(text) = out.pop() {
                    out.push(format!("{} {}", hashes(level), text.trim()));
                }
            }
            Line::Other => out.push((*line).to_owned()),
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn nesting_keeps_every_line_but_headings_and_settles(
            lines in prop::collection::vec("(#{0,7} ?|```|~~~|===|---|)[a-z ]{0,8}", 0..30),
        ) {
            let text = lines.join("\n");
            let nested = nest_headings(&text);
            let top = nested
                .split('\n')
                .zip(classify(&nested.split('\n').collect::<Vec<_>>()))
                .filter_map(|(_, role)| match role {
                    Line::Atx { level, .. } | Line::Underline { level } => Some(level),
                    Line::Other => None,
                })
                .min();
            prop_assert!(top.is_none_or(|top| top >= TOP_LEVEL), "{:?}", nested);
            prop_assert_eq!(nest_headings(&nested), nested.clone());
        }
    }

    #[test]
    fn top_heading_lands_at_level_three_and_the_rest_follow() {
        assert_eq!(
            nest_headings("# Review\n\n## Summary\ntext\n### Deep\n"),
            "### Review\n\n#### Summary\ntext\n##### Deep\n"
        );
        assert_eq!(
            nest_headings("## Summary\n#### x\n"),
            "### Summary\n##### x\n"
        );
    }

    #[test]
    fn deep_enough_or_no_headings_is_unchanged() {
        for text in [
            "### a\n#### b\n",
            "plain\ntext\n",
            "#hashtag\n",
            "    # code\n",
            "",
        ] {
            assert_eq!(nest_headings(text), text);
        }
    }

    #[test]
    fn levels_cap_at_six() {
        assert_eq!(
            nest_headings("# a\n##### e\n###### f\n"),
            "### a\n###### e\n###### f\n"
        );
    }

    #[test]
    fn fenced_code_is_untouched() {
        let text = "# T\n```sh\n# comment\n```\n~~~\n## not a heading\n```\n~~~\n## H\n````\n# x\n";
        assert_eq!(
            nest_headings(text),
            "### T\n```sh\n# comment\n```\n~~~\n## not a heading\n```\n~~~\n#### H\n````\n# x\n"
        );
    }

    #[test]
    fn setext_headings_become_nested_atx() {
        assert_eq!(
            nest_headings("Title\n=====\n\nPart\n---\nbody\n"),
            "### Title\n\n#### Part\nbody\n"
        );
        // A thematic break after a blank line, and `---` under a list, stay as they are.
        assert_eq!(
            nest_headings("# A\n\n---\n- item\n---\n"),
            "### A\n\n---\n- item\n---\n"
        );
    }

    #[test]
    fn heading_text_and_closing_hashes_are_kept() {
        assert_eq!(nest_headings("  # Title ##\n#\n"), "### Title ##\n###\n");
    }
}
