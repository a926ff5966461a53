//! Reads a REVIEWS.md that gsd-lane wrote (review-workflow.md §11) into reviewer sections:
//! the frontmatter's `reviewers:` list, the title, and the `## <Section> Review` /
//! `## <Section> Review (<instance>)` headings, each matched to its reviewer id.
//!
//! Ids: an instance heading names its id; a lane heading takes the next id of the
//! `reviewers:` list in run order, except a section whose text is a "not completed" or
//! "skipped" notice (those reviewers are not in the list), whose id is the notice's first word.

use super::blocks::{self, Block};
use super::model::Outcome;
use crate::review::reviews_md::{is_blind, DIFF_ONLY_CAVEAT};

/// The title every gsd-lane REVIEWS.md has.
const TITLE: &str = "# Cross-AI Plan Review — ";
/// The citation stamp's first words (upstream #3436).
const CITATION_STAMP: &str = super::citations::CITATION_MARKER;

/// Why a text is not a gsd-lane REVIEWS.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReviews {
    /// No frontmatter block at the start.
    Frontmatter,
    /// The frontmatter has no `reviewers:` list.
    ReviewersList,
    /// No `# Cross-AI Plan Review — …` title after the frontmatter.
    Title,
}

impl std::fmt::Display for NotReviews {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NotReviews::Frontmatter => "it does not start with a `---` frontmatter block",
            NotReviews::ReviewersList => "its frontmatter has no `reviewers: [...]` list",
            NotReviews::Title => "it has no `# Cross-AI Plan Review — …` title",
        })
    }
}

impl std::error::Error for NotReviews {}

/// How the section marks its evidence (the writer's markers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// The diff-only caveat.
    DiffOnly,
    /// The blind-review marker.
    Blind,
}

/// One reviewer section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewerSection {
    /// The reviewer id.
    pub id: String,
    /// The heading's display name (`Claude`, `OpenCode (op-a)`).
    pub display: String,
    /// What the section holds.
    pub outcome: Outcome,
    /// The diff-only or blind marker, if any.
    pub marker: Option<Marker>,
    /// Its text blocks.
    pub blocks: Vec<Block>,
}

/// A parsed REVIEWS.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The frontmatter's `reviewers:` list.
    pub listed: Vec<String>,
    /// The reviewer sections, in file order.
    pub sections: Vec<ReviewerSection>,
    /// Byte offset just after the title line (where the verdict block goes).
    pub after_title: usize,
}

impl Parsed {
    /// Listed reviewers with no section.
    pub fn missing(&self) -> Vec<String> {
        self.listed
            .iter()
            .filter(|id| !self.sections.iter().any(|s| &s.id == *id))
            .cloned()
            .collect()
    }
}

/// The frontmatter's text and where the body starts.
fn frontmatter(text: &str) -> Result<(&str, usize), NotReviews> {
    let rest = text.strip_prefix("---\n").ok_or(NotReviews::Frontmatter)?;
    let end = rest.find("\n---\n").ok_or(NotReviews::Frontmatter)?;
    let inner = rest.get(..end).ok_or(NotReviews::Frontmatter)?;
    Ok((inner, 4 + end + 5))
}

/// A flow list of plain or JSON-quoted scalars (`[a, "b c"]`), as the writer emits it.
fn flow_list(value: &str) -> Option<Vec<String>> {
    let mut rest = value.trim().strip_prefix('[')?.trim_start();
    let mut items = Vec::new();
    if let Some(after) = rest.strip_prefix(']') {
        return after.trim().is_empty().then_some(items);
    }
    loop {
        if rest.starts_with('"') {
            let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<String>();
            items.push(stream.next()?.ok()?);
            rest = rest.get(stream.byte_offset()..)?;
        } else {
            let end = rest.find([',', ']'])?;
            items.push(rest.get(..end)?.trim().to_owned());
            rest = rest.get(end..)?;
        }
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix(',') {
            rest = after.trim_start();
        } else {
            let after = rest.strip_prefix(']')?;
            return after.trim().is_empty().then_some(items);
        }
    }
}

/// The `reviewers:` list of the frontmatter.
fn reviewers(front: &str) -> Result<Vec<String>, NotReviews> {
    front
        .lines()
        .find_map(|line| line.strip_prefix("reviewers:"))
        .and_then(flow_list)
        .ok_or(NotReviews::ReviewersList)
}

/// `(display, instance)` of a reviewer heading, `None` for any other heading.
fn heading(text: &str) -> Option<(String, Option<String>)> {
    if let Some(open) = text.strip_suffix(')').and_then(|t| t.rfind(" Review (")) {
        let section = text.get(..open)?;
        let instance = text.get(open + " Review (".len()..text.len() - 1)?;
        return Some((format!("{section} ({instance})"), Some(instance.to_owned())));
    }
    let section = text.strip_suffix(" Review")?;
    Some((section.to_owned(), None))
}

/// The section content after the diff-only caveat, and whether it had one.
fn after_caveat(content: &str) -> (&str, bool) {
    let trimmed = content.trim_start_matches('\n');
    match trimmed.strip_prefix(DIFF_ONLY_CAVEAT) {
        Some(rest) => (rest.trim_start_matches('\n'), true),
        None => (trimmed, false),
    }
}

/// The review text past a leading citation stamp (its line and the empty line after it).
fn past_citation_stamp(review: &str) -> &str {
    if !review.starts_with(CITATION_STAMP) {
        return review;
    }
    review
        .split_once('\n')
        .map_or("", |(_, rest)| rest.trim_start_matches('\n'))
}

/// A section's text without the `---` rule that closes it in REVIEWS.md.
fn without_rule(content: &str) -> &str {
    let trimmed = content.trim_end();
    trimmed.strip_suffix("\n---").unwrap_or(trimmed)
}

/// `content` without a last line that is gsd-lane's partial-review notice (a review shown in
/// part ends with it, after the text shown and any incomplete-review notice).
fn without_partial_notice(content: &str) -> &str {
    let trimmed = content.trim_end();
    match trimmed.rfind('\n') {
        Some(at)
            if trimmed.get(at + 1..).is_some_and(|last| {
                last.trim_start()
                    .starts_with(crate::review::reviews_md::PARTIAL_PREFIX)
            }) =>
        {
            trimmed.get(..at).unwrap_or_default()
        }
        _ => trimmed,
    }
}

/// The outcome of a section's text and, for a notice, the id it names.
fn outcome(review: &str) -> (Outcome, Option<&str>) {
    let first = review.lines().map(str::trim).find(|l| !l.is_empty());
    let Some(first) = first else {
        return (Outcome::Stub, None);
    };
    let named = first.split(' ').next();
    if first.contains(" review failed or returned empty output") {
        (Outcome::Stub, None)
    } else if crate::review::preserve::is_notice(first) {
        (Outcome::NotCompleted, named)
    } else if crate::run::review_file::ends_incomplete(without_partial_notice(without_rule(review)))
    {
        // Cut off by its bound or cap: the text is partial, never a finished review.
        (Outcome::NotCompleted, None)
    } else {
        (Outcome::Review, None)
    }
}

/// Parses a REVIEWS.md.
///
/// # Errors
///
/// The text is not a gsd-lane REVIEWS.md.
pub fn parse(text: &str) -> Result<Parsed, NotReviews> {
    let (front, body_at) = frontmatter(text)?;
    let listed = reviewers(front)?;
    let body = text.get(body_at..).unwrap_or_default();
    let title = body
        .match_indices(TITLE)
        .find(|(at, _)| *at == 0 || body.get(..*at).is_some_and(|b| b.ends_with('\n')))
        .map(|(at, _)| at)
        .ok_or(NotReviews::Title)?;
    let after_title = body
        .get(title..)
        .and_then(|t| t.find('\n'))
        .map_or(text.len(), |nl| body_at + title + nl + 1);
    let mut cursor = 0;
    let mut sections = Vec::new();
    for section in blocks::sections(body) {
        let Some((display, instance)) = heading(&section.heading) else {
            continue;
        };
        let content = body.get(section.content.clone()).unwrap_or_default();
        let (review, diff_only) = after_caveat(content);
        let (outcome, named) = outcome(review);
        let id = match (instance, named) {
            (Some(instance), _) => {
                if let Some(at) = listed.iter().skip(cursor).position(|id| *id == instance) {
                    cursor += at + 1;
                }
                instance
            }
            (None, Some(named)) if outcome == Outcome::NotCompleted => named.to_owned(),
            (None, _) => match listed.get(cursor) {
                Some(id) => {
                    cursor += 1;
                    id.clone()
                }
                None => display.to_lowercase(),
            },
        };
        let marker = if diff_only {
            Some(Marker::DiffOnly)
        } else if is_blind(past_citation_stamp(review)) {
            Some(Marker::Blind)
        } else {
            None
        };
        sections.push(ReviewerSection {
            id,
            display,
            outcome,
            marker,
            blocks: section.blocks,
        });
    }
    Ok(Parsed {
        listed,
        sections,
        after_title,
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn lists() {
        assert_eq!(
            flow_list("[a, \"b, ]c\", d]"),
            Some(vec!["a".into(), "b, ]c".into(), "d".into()])
        );
        assert_eq!(flow_list("[]"), Some(vec![]));
        assert_eq!(flow_list("[a"), None);
        assert_eq!(flow_list("a"), None);
    }

    #[test]
    fn headings() {
        assert_eq!(heading("Claude Review"), Some(("Claude".into(), None)));
        assert_eq!(
            heading("OpenCode Review (op-a)"),
            Some(("OpenCode (op-a)".into(), Some("op-a".into())))
        );
        assert_eq!(heading("Consensus Summary"), None);
        assert_eq!(
            heading("A Review (x) Review (op)"),
            Some(("A Review (x) (op)".into(), Some("op".into())))
        );
    }

    #[test]
    fn sections_and_ids() {
        let text = "---\nphase: 3\nreviewers: [alpha, op-a, beta]\n---\n\n# Cross-AI Plan Review — Phase 3\n\n## Alpha Review\n\nok\n\n---\n\n## OpenCode Review (op-a)\n\n> [reviewed-without-source-citations] x\n\n> [reviewed-without-repo-access] y\n\nz\n\n---\n\n## Gamma Review\n\ngamma review not completed: the review run was interrupted (SIGINT/SIGTERM) before this reviewer started.\n\n---\n\n## Beta Review\n\n> [diff-only] This reviewer examined the working-tree diff, not the source tree, and never received the review prompt — fold its findings in as diff observations; do not weight its verdict as a grounded plan review.\n\nbeta review failed or returned empty output. stderr:\n\n---\n\n## Consensus Summary\n";
        let parsed = parse(text).expect("parses");
        let got: Vec<(&str, Outcome, Option<Marker>)> = parsed
            .sections
            .iter()
            .map(|s| (s.id.as_str(), s.outcome, s.marker))
            .collect();
        assert_eq!(
            got,
            vec![
                ("alpha", Outcome::Review, None),
                ("op-a", Outcome::Review, Some(Marker::Blind)),
                ("gamma", Outcome::NotCompleted, None),
                ("beta", Outcome::Stub, Some(Marker::DiffOnly)),
            ]
        );
        assert!(parsed.missing().is_empty());
        assert!(text[parsed.after_title..].starts_with("\n## Alpha"));
    }

    /// The sections of `text` read: alpha not completed, beta a review.
    fn assert_alpha_not_completed_beta_a_review(text: &str) {
        let parsed = parse(text).expect("parses");
        let got: Vec<(&str, Outcome)> = parsed
            .sections
            .iter()
            .map(|s| (s.id.as_str(), s.outcome))
            .collect();
        assert_eq!(
            got,
            vec![("alpha", Outcome::NotCompleted), ("beta", Outcome::Review)]
        );
    }

    #[test]
    fn a_review_ending_with_the_incomplete_notice_is_not_completed() {
        let notice = crate::run::review_file::incomplete_notice("ETIMEDOUT");
        let text = format!(
            "---\nphase: 3\nreviewers: [alpha, beta]\n---\n\n# Cross-AI Plan Review — Phase 3\n\n## Alpha Review\n\nFirst finding.\n{notice}\n---\n\n## Beta Review\n\nWhole.\n\n---\n\n## Consensus Summary\n"
        );
        assert_alpha_not_completed_beta_a_review(&text);
    }

    /// Shown in part, a cut-off review ends with the incomplete-review notice and then the
    /// partial-review notice: still not completed. The partial notice alone changes nothing.
    #[test]
    fn a_review_shown_in_part_that_ends_incomplete_is_not_completed() {
        let notice = crate::run::review_file::incomplete_notice("ENOBUFS");
        let partial = format!(
            "{}it has 99 bytes and only the first 9 are shown here.",
            crate::review::reviews_md::PARTIAL_PREFIX
        );
        let text = format!(
            "---\nphase: 3\nreviewers: [alpha, beta]\n---\n\n# Cross-AI Plan Review — Phase 3\n\n## Alpha Review\n\nFirst finding.\n{notice}\n{partial}\n\n---\n\n## Beta Review\n\nWhole.\n\n{partial}\n\n---\n\n## Consensus Summary\n"
        );
        assert_alpha_not_completed_beta_a_review(&text);
    }

    #[test]
    fn not_reviews() {
        assert_eq!(parse("# notes\n"), Err(NotReviews::Frontmatter));
        assert_eq!(
            parse("---\nphase: 1\n---\n# x"),
            Err(NotReviews::ReviewersList)
        );
        assert_eq!(
            parse("---\nreviewers: []\n---\n# x"),
            Err(NotReviews::Title)
        );
    }
}
