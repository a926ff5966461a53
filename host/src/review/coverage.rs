//! Plan coverage (upstream #4084, `upstream-since-2026-08.md` §10.3): the plan ids of a phase,
//! the Plan Coverage Manifest the reviewers are given, and the grading of each real review
//! against it, written to REVIEWS.md's frontmatter as `plan_coverage` when a review is
//! incomplete.
//!
//! An id counts as covered when it occurs in the review with no ASCII word character
//! (`[A-Za-z0-9_]`) and no `-` directly before or after it: the upstream's
//! `(?<![\w-])<escaped id>(?![\w-])`, matched literally (so a `.` in an id is a dot) and without
//! look-around, which the `regex` crate does not offer.

use super::reviews_md::{Doc, Entry, Fate};
use super::subject::Subject;

/// The manifest's section file in the run dir (outside both `gsd-review-*.md` globs).
pub const MANIFEST_FILE: &str = ".plans-manifest.md";

/// The plan id of a plan file name: the name without its `-PLAN.md` suffix
/// (`12.6-01-PLAN.md` → `12.6-01`); a name without the suffix is its own id.
pub fn plan_id(file_name: &str) -> &str {
    file_name.strip_suffix("-PLAN.md").unwrap_or(file_name)
}

/// The `## Plan Coverage Manifest` block appended to the instructions and the prompt: a
/// leading empty line, the total count, one bullet per id.
pub fn manifest(ids: &[&str]) -> String {
    let mut text = format!(
        "\n## Plan Coverage Manifest\n\nTotal plans in this review: {}\n\nPlan ids (each needs its own `##` section whose heading is the id exactly as written):\n",
        ids.len()
    );
    for id in ids {
        text.push_str(&format!("- {id}\n"));
    }
    text
}

/// Whether `c` counts as part of a word for the id boundaries (`[\w-]`, ASCII `\w`).
fn joins(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether `id` occurs in `text` with no word character or `-` directly on either side.
pub fn mentions(text: &str, id: &str) -> bool {
    let mut from = 0;
    while let Some(found) = text.get(from..).and_then(|rest| rest.find(id)) {
        let at = from + found;
        let end = at + id.len();
        let before = text.get(..at).and_then(|t| t.chars().next_back());
        let after = text.get(end..).and_then(|t| t.chars().next());
        if !before.is_some_and(joins) && !after.is_some_and(joins) {
            return true;
        }
        // Overlapping occurrences count too: move on by one character, not by the id.
        let step = text
            .get(at..)
            .and_then(|t| t.chars().next())
            .map_or(1, char::len_utf8);
        from = at + step;
        if from > text.len() {
            break;
        }
    }
    false
}

/// One graded review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grade {
    /// The reviewer id (the frontmatter key).
    pub reviewer: String,
    /// How many plans the review had to cover.
    pub total: usize,
    /// The ids it never mentions, in plan order.
    pub missing: Vec<String>,
}

impl Grade {
    /// Grades `review` against `ids`.
    pub fn of(reviewer: &str, review: &str, ids: &[&str]) -> Grade {
        Grade {
            reviewer: reviewer.to_owned(),
            total: ids.len(),
            missing: ids
                .iter()
                .filter(|id| !mentions(review, id))
                .map(|id| (*id).to_owned())
                .collect(),
        }
    }

    /// True when the review mentions every plan.
    pub fn complete(&self) -> bool {
        self.missing.is_empty()
    }
}

/// The `plan_coverage:` frontmatter block (every graded review, in run order), or nothing when
/// every review is complete. `scalar` quotes a key or list item as the frontmatter does.
pub fn frontmatter(grades: &[Grade], scalar: fn(&str) -> String) -> String {
    if grades.iter().all(Grade::complete) {
        return String::new();
    }
    let mut out = String::from("plan_coverage:\n");
    for grade in grades {
        let missing: Vec<String> = grade.missing.iter().map(|id| scalar(id)).collect();
        out.push_str(&format!("  {}:\n", scalar(&grade.reviewer)));
        out.push_str(&format!("    total: {}\n", grade.total));
        out.push_str(&format!("    missing: [{}]\n", missing.join(", ")));
    }
    out
}

/// Whether an entry's review is graded: a real review (no stub, no budget skip) of a lane that
/// received the prompt (not coderabbit, not any other `diff-only` lane).
fn graded(entry: &Entry) -> Option<&str> {
    match &entry.fate {
        Fate::Ran {
            stubbed: false,
            content,
        } if !entry.diff_only && entry.cli != "coderabbit" => Some(content),
        _ => None,
    }
}

/// Grades every real review of a phase review (none for a prompt-file review, which has no
/// plans) and says on stderr which reviews leave plans out.
pub fn grade(subject: &Subject, doc: &Doc, notices: &super::notice::Notices) -> Vec<Grade> {
    if !matches!(subject, Subject::Phase(_)) {
        return Vec::new();
    }
    let ids: Vec<&str> = doc.plans.iter().map(|name| plan_id(name)).collect();
    let grades: Vec<Grade> = doc
        .entries
        .iter()
        .filter_map(|entry| graded(entry).map(|review| Grade::of(&entry.id, review, &ids)))
        .collect();
    for grade in grades.iter().filter(|g| !g.complete()) {
        notices.review(format!(
            "{}'s review never mentions plan(s) {} of {} (recorded as plan_coverage)",
            crate::output::neutralize(&grade.reviewer),
            crate::output::neutralize(&grade.missing.join(", ")),
            grade.total
        ));
    }
    grades
}

/// `text` (a rendered REVIEWS.md) with `block` added as the frontmatter's last keys; `text`
/// unchanged when `block` is empty or there is no frontmatter.
pub fn into_frontmatter(text: String, block: &str) -> String {
    if block.is_empty() {
        return text;
    }
    let Some(close) = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.find("\n---\n"))
        .map(|at| 4 + at + 1)
    else {
        return text;
    };
    let mut out = String::with_capacity(text.len() + block.len());
    out.push_str(text.get(..close).unwrap_or_default());
    out.push_str(block);
    out.push_str(text.get(close..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quote(value: &str) -> String {
        if value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            value.to_owned()
        } else {
            serde_json::Value::String(value.to_owned()).to_string()
        }
    }

    #[test]
    fn ids_and_manifest() {
        assert_eq!(plan_id("12.6-01-PLAN.md"), "12.6-01");
        assert_eq!(plan_id("notes.md"), "notes.md");
        assert_eq!(
            manifest(&["03-01", "03-02"]),
            "\n## Plan Coverage Manifest\n\nTotal plans in this review: 2\n\nPlan ids (each needs its own `##` section whose heading is the id exactly as written):\n- 03-01\n- 03-02\n"
        );
        assert!(manifest(&[]).contains("Total plans in this review: 0\n"));
    }

    /// The upstream's two named traps (#4084) and the boundary cases around them.
    #[test]
    fn boundaries_follow_the_upstream_pattern() {
        // Heading or prose: both count.
        assert!(mentions("## 01\n\nok", "01"));
        assert!(mentions("covered by plan 12.6-01 above.", "12.6-01"));
        // Trap 1: the dot is literal.
        assert!(!mentions("discussion of 12X6-01 only", "12.6-01"));
        // Trap 2: a hyphen before or after is no boundary.
        assert!(!mentions("threat T-04-07 at length", "04-07"));
        assert!(!mentions("see 04-07-b", "04-07"));
        // Word characters on either side, ASCII `\w`.
        assert!(!mentions("x04-07", "04-07"));
        assert!(!mentions("04-07_x", "04-07"));
        assert!(!mentions("104-07", "04-07"));
        // Start and end of text, punctuation, non-ASCII letters (not `\w`) are boundaries.
        assert!(mentions("04-07", "04-07"));
        assert!(mentions("(04-07).", "04-07"));
        assert!(mentions("é04-07é", "04-07"));
        assert!(mentions("`04-07`:", "04-07"));
        // A later occurrence counts when an earlier one does not.
        assert!(mentions("T-04-07 and then 04-07", "04-07"));
        // Overlapping occurrences are all tried.
        assert!(mentions("x. . .", ". ."));
        assert!(!mentions("x. .", ". ."));
        assert!(!mentions("", "01"));
    }

    #[test]
    fn grades_and_the_frontmatter_block() {
        let ids = ["03-01", "03-02"];
        let full = Grade::of("alpha", "## 03-01\n## 03-02\n", &ids);
        let partial = Grade::of("op a", "## 03-01 only\n", &ids);
        assert!(full.complete());
        assert_eq!(partial.missing, ["03-02"]);
        assert_eq!(frontmatter(std::slice::from_ref(&full), quote), "");
        let block = frontmatter(&[full, partial], quote);
        assert_eq!(
            block,
            "plan_coverage:\n  alpha:\n    total: 2\n    missing: []\n  \"op a\":\n    total: 2\n    missing: [03-02]\n"
        );
        let text = "---\nphase: 3\n---\n\n# T\n".to_owned();
        assert_eq!(
            into_frontmatter(text.clone(), "k: v\n"),
            "---\nphase: 3\nk: v\n---\n\n# T\n"
        );
        assert_eq!(into_frontmatter(text.clone(), ""), text);
        assert_eq!(into_frontmatter("no front".into(), "k: v\n"), "no front");
    }
}
