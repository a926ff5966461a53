//! The one citation finder: `path:N` tokens in review text. Two callers share it.
//!
//! - [`has_source_citation`] answers the citation stamp's question (upstream #3436,
//!   `spec/upstream-since-2026-08.md` §2.2): does the text match
//!   `(?<![/:])(?:[^\s:]*[/\\][^\s:]*|[^\s:]*\.[A-Za-z0-9]{1,16}):[0-9]+` anywhere. It is
//!   computed without a regex engine, with exactly that meaning (see the function).
//! - [`find`] yields the verdict's citations: a `path:N` or `path:N-M` token whose path is
//!   relative (optionally `./`) and contains a `/` or ends in an extension.
//!
//! Both look at each `:` followed by an ASCII digit and the run of non-space, non-colon
//! characters before it, so the scan is linear: the runs of two colons never overlap.

use crate::config::is_ecma_whitespace;

/// Characters a citation may be wrapped in, stripped from the front of the path.
const OPENERS: &[char] = &['(', '[', '{', '<', '"', '\'', '`', '*'];

/// One `path:N` or `path:N-M` citation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation<'a> {
    /// The path as cited, without a leading `./`.
    pub path: &'a str,
    /// First cited line.
    pub first: u64,
    /// Last cited line (`first` for `path:N`).
    pub last: u64,
    /// Byte offset of the path in the text.
    pub at: usize,
}

/// A `:` followed by a digit, and the non-space non-colon run before it.
struct Candidate<'a> {
    /// The run (possibly empty).
    run: &'a str,
    /// Its byte offset.
    run_at: usize,
    /// The run follows a `:` directly.
    after_colon: bool,
    /// The text after the colon (starts with a digit).
    tail: &'a str,
}

/// Every colon of `text` followed by an ASCII digit, with the run before it.
fn candidates(text: &str) -> impl Iterator<Item = Candidate<'_>> {
    text.match_indices(':').filter_map(move |(colon, _)| {
        let tail = text.get(colon + 1..)?;
        if !tail.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let before = text.get(..colon)?;
        let run_at = before
            .char_indices()
            .rev()
            .find(|&(_, c)| c == ':' || is_ecma_whitespace(c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        Some(Candidate {
            run: before.get(run_at..)?,
            run_at,
            after_colon: before.get(..run_at).is_some_and(|b| b.ends_with(':')),
            tail,
        })
    })
}

/// Byte index of the `.` when `run` ends in `.` plus 1–16 ASCII letters or digits.
fn extension_dot(run: &str) -> Option<usize> {
    let alnum = run.len()
        - run
            .trim_end_matches(|c: char| c.is_ascii_alphanumeric())
            .len();
    let dot = run.len().checked_sub(alnum + 1)?;
    ((1..=16).contains(&alnum) && run.as_bytes().get(dot) == Some(&b'.')).then_some(dot)
}

/// Whether `text` holds a source citation in the sense of the citation stamp (upstream
/// #3436): the stamp's regex matches somewhere. See [`StampScan`], which this feeds.
pub fn has_source_citation(text: &str) -> bool {
    let mut scan = StampScan::default();
    scan.feed(text);
    scan.found()
}

/// The citation stamp's regex, `(?<![/:])(?:[^\s:]*[/\\][^\s:]*|[^\s:]*\.[A-Za-z0-9]{1,16}):[0-9]+`,
/// matched as a stream: text goes in piece by piece ([`StampScan::feed`]), in constant memory,
/// so a review file of any size is checked without loading it.
///
/// A match ends at a colon followed by an ASCII digit and starts inside the run of
/// non-space, non-colon characters before that colon, at a position not preceded by `/` or `:`
/// (a run's first position is one exactly when the run does not follow a colon; a later one
/// when the character before it is not `/`). From such a start the rest of the run must hold a
/// `/` or `\`, or end in `.` plus 1–16 ASCII letters or digits. Both are decided as the run
/// goes by: a slash counts once some start at or before it is valid, a final `.ext` once a
/// start at or before its dot is.
#[derive(Debug, Clone, Default)]
pub struct StampScan {
    /// A match was found (sticky).
    found: bool,
    /// The current run follows a colon.
    after_colon: bool,
    /// Characters of the current run so far.
    run_len: usize,
    /// The previous character of the run was `/`.
    prev_slash: bool,
    /// Some position of the run so far is a valid start.
    start_seen: bool,
    /// A `/` or `\` at or after a valid start.
    slash: bool,
    /// ASCII letters or digits after the run's last `.`, when that dot is at or after a valid
    /// start and only letters or digits followed it.
    extension: Option<usize>,
    /// The last character was a colon that ends a qualifying run: a digit next is a match.
    colon_pending: bool,
}

impl StampScan {
    /// Feeds the next piece of the text (pieces may split the text anywhere between chars).
    pub fn feed(&mut self, text: &str) {
        for c in text.chars() {
            if self.found {
                return;
            }
            self.step(c);
        }
    }

    /// True once the regex has matched.
    pub fn found(&self) -> bool {
        self.found
    }

    fn step(&mut self, c: char) {
        if std::mem::take(&mut self.colon_pending) && c.is_ascii_digit() {
            self.found = true;
            return;
        }
        if c == ':' {
            self.colon_pending =
                self.slash || self.extension.is_some_and(|n| (1..=16).contains(&n));
            self.new_run(true);
            return;
        }
        if is_ecma_whitespace(c) {
            self.new_run(false);
            return;
        }
        let valid_start = if self.run_len == 0 {
            !self.after_colon
        } else {
            !self.prev_slash
        };
        self.start_seen |= valid_start;
        if matches!(c, '/' | '\\') && self.start_seen {
            self.slash = true;
        }
        self.extension = match c {
            '.' => self.start_seen.then_some(0),
            c if c.is_ascii_alphanumeric() => self.extension.map(|n| n.saturating_add(1)),
            _ => None,
        };
        self.prev_slash = c == '/';
        self.run_len = self.run_len.saturating_add(1);
    }

    /// Starts a new run after a colon or a whitespace character.
    fn new_run(&mut self, after_colon: bool) {
        *self = StampScan {
            found: self.found,
            after_colon,
            colon_pending: self.colon_pending,
            ..StampScan::default()
        };
    }
}

/// The marker that opens the citation stamp (upstream #3436).
pub const CITATION_MARKER: &str = "> [reviewed-without-source-citations]";

/// The citation stamp's line, exactly (upstream #3436, `spec/upstream-since-2026-08.md` §2.2;
/// the dash is U+2014).
pub const CITATION_STAMP: &str = "> [reviewed-without-source-citations] This reviewer declared source-grounded evidence but cited no file:line source evidence, so it reviewed the pasted plan text only \u{2014} down-weight its verdict in the Consensus Summary.";

/// Whether a review carries the citation stamp (it starts with [`CITATION_MARKER`]).
pub fn is_stamped(review: &str) -> bool {
    review.starts_with(CITATION_MARKER)
}

/// A review without its leading citation stamp line and the empty line after it (the blind
/// marker of an antigravity review sits there, §2.4); the review itself when unstamped.
pub fn after_stamp(review: &str) -> &str {
    if !is_stamped(review) {
        return review;
    }
    review
        .split_once('\n')
        .map_or("", |(_, rest)| rest.trim_start_matches(['\r', '\n']))
}

/// The leading digits of `text` as a line number, with what follows; `None` when there are
/// no digits. A number too large for `u64` saturates (it can never be verified).
fn number(text: &str) -> Option<(u64, &str)> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let value = text.get(..digits)?.bytes().fold(0_u64, |n, d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    Some((value, text.get(digits..)?))
}

/// Whether `path` is a citation's path: relative, with a `/` or an extension.
fn is_citation_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with(['/', '\\', '~'])
        && (path.contains('/') || extension_dot(path).is_some())
}

/// The verdict's citations in `text`, in order.
pub fn find(text: &str) -> impl Iterator<Item = Citation<'_>> {
    candidates(text).filter_map(|c| {
        if c.after_colon {
            return None;
        }
        let trimmed = c.run.trim_start_matches(OPENERS);
        let stripped = trimmed.strip_prefix("./").unwrap_or(trimmed);
        if !is_citation_path(stripped) {
            return None;
        }
        let (first, rest) = number(c.tail)?;
        let last = rest
            .strip_prefix('-')
            .and_then(number)
            .map_or(first, |(last, _)| last);
        Some(Citation {
            path: stripped,
            first,
            last,
            at: c.run_at + (c.run.len() - stripped.len()),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first, whole-text reading of the regex, kept as the scanner's oracle.
    ///
    /// A match ends at a colon followed by a digit and starts inside the run before it, at a
    /// position not preceded by `/` or `:`. The earliest such start is the run's own start unless
    /// the run follows a colon, else the first position after a character other than `/`; a
    /// later start only removes characters, so the match exists exactly when, from that earliest
    /// start, the rest holds a `/` or `\`, or ends in `.` plus 1–16 ASCII letters or digits.
    fn oracle(text: &str) -> bool {
        candidates(text).any(|c| {
            let start = if c.after_colon {
                let Some(k) = c.run.char_indices().find(|&(_, ch)| ch != '/') else {
                    return false;
                };
                k.0 + k.1.len_utf8()
            } else {
                0
            };
            let Some(rest) = c.run.get(start..) else {
                return false;
            };
            rest.contains(['/', '\\']) || extension_dot(c.run).is_some_and(|dot| dot >= start)
        })
    }

    /// Every string over a small alphabet up to length 6, scanner against oracle, and the
    /// scanner fed in every split.
    #[test]
    fn the_scanner_agrees_with_the_whole_text_reading() {
        let alphabet = ['a', '/', '\\', ':', '.', '1', ' ', 'Z'];
        let mut words = vec![String::new()];
        for _ in 0..6 {
            let mut next = Vec::new();
            for w in &words {
                for c in alphabet {
                    let mut v = w.clone();
                    v.push(c);
                    next.push(v);
                }
            }
            for w in &next {
                assert_eq!(has_source_citation(w), oracle(w), "{w:?}");
            }
            words = next;
        }
        for w in [
            "see src/a.rs:12 x",
            "x:a/b:1",
            "https://example.com:443/x",
            "a.rs:1",
        ] {
            for cut in 0..=w.len() {
                let mut scan = StampScan::default();
                scan.feed(&w[..cut]);
                scan.feed(&w[cut..]);
                assert_eq!(scan.found(), oracle(w), "{w:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn the_stamp_is_upstreams_and_is_seen_past() {
        assert_eq!(
            CITATION_STAMP,
            "> [reviewed-without-source-citations] This reviewer declared source-grounded evidence but cited no file:line source evidence, so it reviewed the pasted plan text only \u{2014} down-weight its verdict in the Consensus Summary."
        );
        assert!(CITATION_STAMP.starts_with(CITATION_MARKER));
        let stamped = format!("{CITATION_STAMP}\n\nplan line 5 looks wrong, see L12-L18");
        assert!(is_stamped(&stamped));
        assert!(
            !has_source_citation(&stamped),
            "the stamp itself cites nothing"
        );
        assert_eq!(
            after_stamp(&stamped),
            "plan line 5 looks wrong, see L12-L18"
        );
        assert_eq!(after_stamp("plain"), "plain");
    }

    fn paths(text: &str) -> Vec<(String, u64, u64)> {
        find(text)
            .map(|c| (c.path.to_owned(), c.first, c.last))
            .collect()
    }

    #[test]
    fn stamp_cases_of_the_upstream_tests() {
        for grounded in [
            "see src/foo.cts:42 here",
            "see `src/foo.cts:42`",
            "README.md:12",
            "a/b/c.py:7-9",
            "src\\foo.cts:42",
            "(src/foo.cts:42)",
            "/abs/path/file.rs:3",
            "plan line 5, but also lib/x.rs:9",
        ] {
            assert!(has_source_citation(grounded), "{grounded}");
        }
        for not in [
            "see line 42",
            "plan line 5",
            "12:30",
            "http://localhost:8080",
            "https://example.com/x",
            "L12-L18",
            "",
            "a.rs:x",
        ] {
            assert!(!has_source_citation(not), "{not}");
        }
    }

    #[test]
    fn stamp_start_rules_follow_the_lookbehind() {
        // The match may start inside a run after a colon, but never right after `/` or `:`.
        assert!(has_source_citation("x:a/b:1"));
        assert!(!has_source_citation("x:/:1"));
        assert!(has_source_citation("x://a/b:1"));
        assert!(!has_source_citation("x://ab:1"));
        // A host with a dot and a port is a match, as the regex says.
        assert!(has_source_citation("https://example.com:443/x"));
        assert!(!has_source_citation(&format!("x.{}:1", "a".repeat(17))));
        assert!(has_source_citation(&format!("x.{}:1", "a".repeat(16))));
    }

    #[test]
    fn verdict_citations_are_relative_paths_with_a_slash_or_extension() {
        assert_eq!(
            paths("See `src/a.rs:12` and ./lib/b.py:3-9, (c.toml:4)."),
            vec![
                ("src/a.rs".into(), 12, 12),
                ("lib/b.py".into(), 3, 9),
                ("c.toml".into(), 4, 4),
            ]
        );
        for not in [
            "/etc/passwd:1",
            "~/x.rs:2",
            "http://h/a.rs:3",
            "12:30",
            "line:4",
            "C:\\x\\a.rs:5",
            ".:3",
        ] {
            assert_eq!(paths(not), Vec::new(), "{not}");
        }
        // line:column keeps the line.
        assert_eq!(paths("a/b.rs:12:5"), vec![("a/b.rs".into(), 12, 12)]);
        assert_eq!(
            paths("x/y:99999999999999999999999"),
            vec![("x/y".into(), u64::MAX, u64::MAX)]
        );
    }

    #[test]
    fn offsets_point_at_the_path() {
        let text = "at (./src/a.rs:1)";
        let c = find(text).next().expect("one");
        assert_eq!(&text[c.at..c.at + c.path.len()], "src/a.rs");
    }
}
