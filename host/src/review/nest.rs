//! Keeps a review inside its reviewer's `##` section of `REVIEWS.md`, as a CommonMark parser
//! (pulldown-cmark, no extensions) reads it; line rules cannot, so every decision below is
//! made on the parser's own blocks.
//!
//! 1. **Raw HTML is escaped.** Every `<` of an HTML block and the `<` opening every inline HTML
//!    tag become `&lt;`, so the text shows as written: an unclosed `<!--` or `<details>` cannot
//!    hide what follows, and `<h2>` cannot forge a section. Escaping can expose what the HTML
//!    block held (a fence, a heading), so the review is parsed again, at most
//!    [`HTML_PASSES`] times.
//! 2. **Headings are nested.** Every heading, inside block quotes and list items too, moves
//!    down by one shift, the smallest that puts the review's top heading at level 3; levels
//!    are capped at 6. A setext heading (one or more lines underlined with `===` or `---`) is
//!    rewritten as the ATX heading of its new level, its lines joined by spaces.
//! 3. **An open code fence is closed.** A fenced code block the review leaves open would run
//!    to the end of the file, swallowing every later reviewer and the summary; a closing
//!    fence is appended.
//!
//! The result is then checked the way it will be read: between a `##` heading and the
//! `---` and `##` heading that follow it in `REVIEWS.md`, it must add only headings of level 3
//! or more and no raw HTML, and leave the next `##` heading at the top level. If it does not
//! (nothing known produces that), the whole review is shown as one fenced code block instead:
//! what cannot be contained is quoted. Fenced and indented code, and all other text, are kept.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The level a review's top heading is moved to: one below the reviewer's `##` heading.
pub const TOP_LEVEL: usize = 3;

/// The deepest heading level Markdown has.
const MAX_LEVEL: usize = 6;

/// How many times raw HTML is escaped and the review parsed again before it is quoted whole.
const HTML_PASSES: usize = 8;

/// One replacement of a byte range of the review.
struct Edit {
    range: Range<usize>,
    with: String,
}

/// The review's events with their byte ranges, as CommonMark (no extensions) reads it, one at a
/// time (collected, they took about 12 bytes of memory per byte of review: 25 MiB for the 2 MiB
/// REVIEWS.md inlines by default, the peak of a review; BENCHMARKS.md "HTTP reviews: memory by
/// answer size").
fn events(text: &str) -> impl Iterator<Item = (Event<'_>, Range<usize>)> {
    Parser::new_ext(text, Options::empty()).into_offset_iter()
}

/// `text` with `edits` applied; edits that overlap an earlier one are dropped.
fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|edit| edit.range.start);
    let mut out = String::with_capacity(text.len() + edits.len() * 4);
    let mut at = 0;
    for edit in edits {
        if edit.range.start < at {
            continue;
        }
        out.push_str(text.get(at..edit.range.start).unwrap_or_default());
        out.push_str(&edit.with);
        at = edit.range.end;
    }
    out.push_str(text.get(at..).unwrap_or_default());
    out
}

/// One pass of step 1: the escapes of every raw HTML event; `None` when there is none.
fn escape_html_once(text: &str) -> Option<String> {
    let mut edits = Vec::new();
    for (event, range) in events(text) {
        if !matches!(event, Event::Html(_) | Event::InlineHtml(_)) {
            continue;
        }
        let Some(raw) = text.get(range.clone()) else {
            continue;
        };
        for (offset, _) in raw.match_indices('<') {
            let at = range.start + offset;
            edits.push(Edit {
                range: at..at + 1,
                with: "&lt;".to_owned(),
            });
        }
    }
    (!edits.is_empty()).then(|| apply(text, edits))
}

/// Step 1: `text` without raw HTML, or `None` when it still has some after [`HTML_PASSES`].
fn escape_html(text: &str) -> Option<String> {
    let mut current = text.to_owned();
    for _ in 0..HTML_PASSES {
        match escape_html_once(&current) {
            Some(next) => current = next,
            None => return Some(current),
        }
    }
    None
}

/// A heading's level as a number.
fn level_number(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// A heading found by the parser: its level, its whole range, and (for a setext heading)
/// its text on one line.
struct Heading {
    level: usize,
    range: Range<usize>,
    setext_text: Option<String>,
}

/// One inline element directly inside a heading: its range, and whether it is a line break.
struct Inline {
    is_break: bool,
    range: Range<usize>,
}

/// A heading being read: its level, its whole range, its direct inline elements.
struct OpenHeading {
    level: usize,
    range: Range<usize>,
    children: Vec<Inline>,
}

/// The text of a heading whose direct inline elements are `children`, on one line: line
/// breaks, and a container's prefix after them (`> `), become one space.
fn one_line(text: &str, children: &[Inline]) -> String {
    let mut out = String::new();
    let mut after_break = false;
    let mut at = children.first().map_or(0, |inline| inline.range.start);
    for Inline { is_break, range } in children {
        if *is_break {
            out.push_str(text.get(at..range.start).unwrap_or_default());
            out.push(' ');
            after_break = true;
        } else {
            if !after_break {
                out.push_str(text.get(at..range.start).unwrap_or_default());
            }
            out.push_str(text.get(range.clone()).unwrap_or_default());
            after_break = false;
        }
        at = range.end;
    }
    // An element that spans a line break keeps its text; its line break becomes a space.
    let mut line = out.replace(['\r', '\n'], " ").trim().to_owned();
    // A trailing `#` run would read as an ATX closing sequence and vanish: escape its last `#`.
    if line.ends_with('#') {
        line.pop();
        line.push_str("\\#");
    }
    line
}

/// Every heading of `text`, in order.
fn headings(text: &str) -> Vec<Heading> {
    let mut found = Vec::new();
    let mut open: Option<OpenHeading> = None;
    let mut depth = 0_usize;
    for (event, range) in events(text) {
        if let Some(heading) = open.as_mut() {
            let direct = depth == 0;
            match event {
                Event::End(TagEnd::Heading(_)) if direct => {
                    let source = text.get(heading.range.clone()).unwrap_or_default();
                    let setext = source.trim_end_matches(['\n', '\r']).contains('\n');
                    found.push(Heading {
                        level: heading.level,
                        range: heading.range.clone(),
                        setext_text: setext.then(|| one_line(text, &heading.children)),
                    });
                    open = None;
                }
                Event::Start(_) => {
                    if direct {
                        heading.children.push(Inline {
                            is_break: false,
                            range,
                        });
                    }
                    depth += 1;
                }
                Event::End(_) => depth = depth.saturating_sub(1),
                _ if direct => heading.children.push(Inline {
                    is_break: matches!(event, Event::SoftBreak | Event::HardBreak),
                    range,
                }),
                _ => {}
            }
            continue;
        }
        if let Event::Start(Tag::Heading { level, .. }) = event {
            open = Some(OpenHeading {
                level: level_number(level),
                range,
                children: Vec::new(),
            });
            depth = 0;
        }
    }
    found
}

/// The range of an ATX heading's opening `#` run, with the indentation before it.
fn atx_run(text: &str, range: &Range<usize>) -> Option<Range<usize>> {
    let source = text.get(range.clone())?;
    let rest = source.trim_start_matches(' ');
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    (1..=MAX_LEVEL)
        .contains(&hashes)
        .then(|| range.start..range.start + (source.len() - rest.len()) + hashes)
}

/// Step 2: every heading moved down so the top one is at [`TOP_LEVEL`] (capped at level 6).
fn nest_levels(text: &str) -> String {
    let found = headings(text);
    let Some(top) = found.iter().map(|h| h.level).min() else {
        return text.to_owned();
    };
    let shift = TOP_LEVEL.saturating_sub(top);
    let hashes = |level: usize| "#".repeat((level + shift).min(MAX_LEVEL));
    let mut edits = Vec::new();
    for heading in found {
        match heading.setext_text {
            Some(line) => {
                let source = text.get(heading.range.clone()).unwrap_or_default();
                let newline = if source.ends_with('\n') { "\n" } else { "" };
                let with = if line.is_empty() {
                    format!("{}{newline}", hashes(heading.level))
                } else {
                    format!("{} {line}{newline}", hashes(heading.level))
                };
                edits.push(Edit {
                    range: heading.range,
                    with,
                });
            }
            None if shift > 0 => {
                if let Some(run) = atx_run(text, &heading.range) {
                    edits.push(Edit {
                        range: run,
                        with: hashes(heading.level),
                    });
                }
            }
            None => {}
        }
    }
    apply(text, edits)
}

/// The fence that opens a fenced code block at `start`: its character and run length.
fn opening_fence(text: &str, start: usize) -> Option<(char, usize)> {
    let rest = text.get(start..)?.trim_start_matches(' ');
    let marker = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = rest.len() - rest.trim_start_matches(marker).len();
    Some((marker, len))
}

/// True when the last line of `block` closes a fence of `marker` × at least `len`.
fn is_closed(block: &str, marker: char, len: usize) -> bool {
    let body = block.trim_end_matches(['\n', '\r']);
    let Some((_, last)) = body.rsplit_once('\n') else {
        return false;
    };
    let last = last.trim_matches([' ', '\t']);
    last.chars().count() >= len && last.chars().all(|c| c == marker)
}

/// Step 3: a top-level fenced code block left open is closed.
fn close_fence(text: &str) -> String {
    let mut depth = 0_usize;
    let mut open_fence = None;
    for (event, range) in events(text) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) if depth == 0 => {
                let fence = opening_fence(text, range.start);
                let block = text.get(range.clone()).unwrap_or_default();
                open_fence = fence.filter(|(marker, len)| !is_closed(block, *marker, *len));
                depth += 1;
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    match open_fence {
        Some((marker, len)) => {
            let newline = if text.ends_with('\n') { "" } else { "\n" };
            format!("{text}{newline}{}\n", marker.to_string().repeat(len))
        }
        None => text.to_owned(),
    }
}

/// True when `nested`, placed in `REVIEWS.md` between a `##` heading and the `---` and `##`
/// heading that follow every section, adds only headings of level 3 or more and no raw HTML,
/// and leaves the next `##` heading at the top level.
pub fn stays_in_section(nested: &str) -> bool {
    const BEFORE: &str = "## Before\n\n";
    const AFTER: &str = "## After\n";
    let document = format!(
        "{BEFORE}{}\n\n---\n\n{AFTER}",
        nested.trim_end_matches('\n')
    );
    let after_at = document.len() - AFTER.len();
    let mut levels = Vec::new();
    let mut depth = 0_usize;
    for (event, range) in events(&document) {
        match event {
            Event::Html(_) | Event::InlineHtml(_) => return false,
            Event::Start(Tag::Heading { level, .. }) => {
                let level = level_number(level);
                let at_top = depth == 0;
                levels.push((level, range.start, at_top));
                depth += 1;
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let Some(((2, 0, true), rest)) = levels.split_first().map(|(f, r)| (*f, r)) else {
        return false;
    };
    let Some(((2, last_at, true), middle)) = rest.split_last().map(|(l, m)| (*l, m)) else {
        return false;
    };
    last_at == after_at && middle.iter().all(|(level, _, _)| *level >= TOP_LEVEL)
}

/// `review` as one fenced code block, its fence longer than any backtick run inside.
fn quoted_whole(review: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in review.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}text\n{}\n{fence}\n", review.trim_end_matches('\n'))
}

/// Returns `review` nested inside its reviewer's section (see the module documentation).
pub fn nest_headings(review: &str) -> String {
    let nested = escape_html(review)
        .map(|text| nest_levels(&text))
        .map(|text| close_fence(&text));
    match nested {
        Some(text) if stays_in_section(&text) => text,
        _ => quoted_whole(review),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The heading levels of `text` in order, as a CommonMark parser reads them.
    fn levels(text: &str) -> Vec<usize> {
        events(text)
            .filter_map(|(event, _)| match event {
                Event::Start(Tag::Heading { level, .. }) => Some(level_number(level)),
                _ => None,
            })
            .collect()
    }

    proptest! {
        #[test]
        fn any_review_stays_in_its_section_and_nesting_settles(
            lines in prop::collection::vec(
                "(#{0,7} ?|```|~~~|===|---|<!--|<details>|<h2>|> |- |1. |\\* |\\+ |    |)[a-z<>` ]{0,8}",
                0..30,
            ),
        ) {
            let text = lines.join("\n");
            let nested = nest_headings(&text);
            prop_assert!(stays_in_section(&nested), "{:?} -> {:?}", text, nested);
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
            "### T\n```sh\n# comment\n```\n~~~\n## not a heading\n```\n~~~\n#### H\n````\n# x\n````\n"
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
        // The indentation before the run is kept; it renders the same.
        assert_eq!(nest_headings("  # Title ##\n#\n"), "  ### Title ##\n###\n");
    }

    /// Issue 20 item 8: each of these escaped the line rules.
    #[test]
    fn setext_forms_the_line_rules_missed_are_nested() {
        for (text, want) in [
            ("a\nb\n===\n", "### a b\n"),
            ("*emph*\n===\n", "### *emph*\n"),
            ("1984\n---\n", "### 1984\n"),
            ("+1\n===\n", "### +1\n"),
            ("<span>x</span>\n===\n", "### &lt;span>x&lt;/span>\n"),
            ("#tag\n===\n", "### #tag\n"),
            ("end #\n===\n", "### end \\#\n"),
        ] {
            let nested = nest_headings(text);
            assert_eq!(nested, want, "{text:?}");
            assert!(
                levels(&nested).iter().all(|l| *l >= TOP_LEVEL),
                "{nested:?}"
            );
        }
    }

    #[test]
    fn headings_in_block_quotes_and_lists_are_nested_too() {
        assert_eq!(nest_headings("> # Quoted\n"), "> ### Quoted\n");
        assert_eq!(nest_headings("- a\n  ===\n"), "- ### a\n");
        let nested = nest_headings("> two\n> lines\n> ===\n");
        assert_eq!(levels(&nested), vec![3], "{nested:?}");
    }

    #[test]
    fn an_open_fence_is_closed_so_it_swallows_nothing() {
        assert_eq!(nest_headings("text\n```\ncode"), "text\n```\ncode\n```\n");
        assert_eq!(nest_headings("~~~~ x\n## a\n"), "~~~~ x\n## a\n~~~~\n");
        assert!(stays_in_section(&nest_headings("```\n")));
    }

    #[test]
    fn raw_html_is_escaped_whatever_it_would_hide_or_forge() {
        assert_eq!(nest_headings("<!-- hide\nall\n"), "&lt;!-- hide\nall\n");
        assert_eq!(
            nest_headings("<details>\n\n# Forged\n"),
            "&lt;details>\n\n### Forged\n"
        );
        assert_eq!(
            nest_headings("<h2>Forged</h2>\n"),
            "&lt;h2>Forged&lt;/h2>\n"
        );
        // An unclosed inline comment is not HTML, only text; it is left as it is.
        assert_eq!(
            nest_headings("see <b>this</b> <!-- x"),
            "see &lt;b>this&lt;/b> <!-- x"
        );
        // What the HTML block held is parsed once the block is escaped: the fence is closed.
        assert_eq!(
            nest_headings("<div>\n```\n</div>\n"),
            "&lt;div>\n```\n&lt;/div>\n```\n"
        );
        assert!(stays_in_section(&nest_headings("<pre>\n# x\n")));
    }

    #[test]
    fn what_cannot_be_contained_is_quoted_whole() {
        assert_eq!(quoted_whole("a ``` b\n"), "````text\na ``` b\n````\n");
        assert!(stays_in_section(&quoted_whole("# x\n<!--\n```")));
    }
}
