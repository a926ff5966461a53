//! `REVIEWS.md` (review-workflow.md §11): frontmatter, notes, one section per identity in run
//! order, the diff-only caveat, and the Consensus Summary skeleton. Pure: text in, text out.
//! Lane text is made safe on the way in ([`crate::textsafe`]: no terminal control sequences)
//! and its headings are nested under the reviewer's section ([`super::nest`]); the raw bytes
//! stay in the run dir's files.

use super::budget::Metadata;
use super::nest::nest_headings;
use super::preserve::{Kept, EARLIER_MARK};
use crate::textsafe::{for_terminal, strip_controls};

/// The diff-only caveat line (§11.3).
pub const DIFF_ONLY_CAVEAT: &str = "> [diff-only] This reviewer examined the working-tree diff, not the source tree, and never received the review prompt — fold its findings in as diff observations; do not weight its verdict as a grounded plan review.";

/// What became of one identity, as far as REVIEWS.md cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    /// It ran: a review or a diagnostic stub (`content` = the review file).
    Ran {
        /// True for a diagnostic stub.
        stubbed: bool,
        /// The review file's contents.
        content: String,
    },
    /// The budget step failed; `content` is the skip notice.
    BudgetFailed {
        /// The skip notice.
        content: String,
    },
    /// The run was interrupted before this identity finished.
    Interrupted {
        /// The not-completed notice.
        content: String,
    },
    /// Not run (unavailable at run time, or excluded with `egress_host_changed`).
    NotRun {
        /// The reason's wire name.
        reason: String,
    },
}

/// One identity (or excluded candidate) in run order.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Identity (slug or instance name).
    pub id: String,
    /// Lane slug it runs through.
    pub cli: String,
    /// True for an instance.
    pub instance: bool,
    /// The lane's `reviewsSection`.
    pub section: String,
    /// The lane's `evidenceClass` is `diff-only`.
    pub diff_only: bool,
    /// Budget metadata, when the budget step wrote one.
    pub metadata: Option<Metadata>,
    /// What happened.
    pub fate: Fate,
    /// The reviewer's resolved model (`None`: not recorded, written as unknown).
    pub model: Option<super::model_record::ModelRecord>,
    /// Set when the review is over `review.max_inline_bytes`: REVIEWS.md shows its head and
    /// names the file holding all of it.
    pub full: Option<Overflow>,
}

/// How the notice under a review REVIEWS.md shows only in part begins.
pub const PARTIAL_PREFIX: &str = "> [gsd-lane] partial review: ";

/// A review REVIEWS.md shows only in part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overflow {
    /// Bytes of the whole review.
    pub total: u64,
    /// Bytes of it shown.
    pub shown: u64,
    /// Where the whole text is.
    pub whole: Whole,
}

/// Where the whole text of a review shown in part is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Whole {
    /// In this file, beside REVIEWS.md (a real review).
    Beside(String),
    /// Only in the run dir's review file, kept for `review --resume` (a stub or a skip notice:
    /// never copied beside REVIEWS.md, where it could replace the whole of a real review an
    /// earlier run left and this file still carries).
    RunDir,
    /// Nowhere: the file is over the largest size gsd-lane hashes and copies.
    TooLarge,
}

/// The words of a partial-review notice naming `file`, the whole review beside REVIEWS.md.
fn beside_notice(file: &str) -> String {
    format!("The whole review is in {}, beside this file", name(file))
}

/// True when the REVIEWS.md `text` names `file` as holding a whole review (its own section's
/// notice or one carried from an earlier REVIEWS.md).
pub fn names_whole_file(text: &str, file: &str) -> bool {
    text.contains(&beside_notice(file))
}

impl Overflow {
    /// The line closing a section that shows only part of its review.
    fn notice(&self) -> String {
        let whole = match &self.whole {
            Whole::Beside(file) => beside_notice(file),
            Whole::RunDir => {
                "The whole text is in the run dir's review file, kept for review --resume"
                    .to_owned()
            }
            Whole::TooLarge => "The whole text is too large to keep".to_owned(),
        };
        format!(
            "{PARTIAL_PREFIX}it has {} bytes and only the first {} are shown here \
             (review.max_inline_bytes). {whole}. The panel verdict and the consensus read only the \
             part shown.",
            self.total, self.shown
        )
    }
}

impl Entry {
    /// `<reviewsSection>` or `<reviewsSection> (<instance>)`, on one line: the section is
    /// overlay text, so a line break in it (validation refuses one) is escaped, never a new
    /// line that could forge a heading.
    pub fn display(&self) -> String {
        let section = name(&self.section);
        if self.instance {
            format!("{section} ({})", name(&self.id))
        } else {
            section
        }
    }

    /// The section heading without `## ` (`OpenCode Review`, `OpenCode Review (op-a)`).
    pub fn heading(&self) -> String {
        let section = name(&self.section);
        if self.instance {
            format!("{section} Review ({})", name(&self.id))
        } else {
            format!("{section} Review")
        }
    }
}

/// A lane-supplied name as REVIEWS.md shows it: on one line ([`for_terminal`]) and with no raw
/// HTML (`<` written `&lt;`), so it can neither start a heading nor open an element.
fn name(text: &str) -> String {
    for_terminal(text).replace('<', "&lt;")
}

/// The document's inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// `phase:` value and title subject (`Phase <N>`).
    pub phase: String,
    /// The title after `— ` (`Phase 3`, or the prompt file's name).
    pub subject: String,
    /// `reviewed_at`.
    pub reviewed_at: String,
    /// Plan file names, sorted.
    pub plans: Vec<String>,
    /// Every entry in run order.
    pub entries: Vec<Entry>,
    /// What is kept of the earlier REVIEWS.md (reviews this run did not reproduce).
    pub earlier: Kept,
    /// How the spawned lanes were confined, in one line (`None`: not said).
    pub sandbox: Option<String>,
    /// What change detection found during the review when no lane can be named (several ran
    /// at once), or that its check was partial; `None`: nothing to say.
    pub repository_note: Option<String>,
}

/// Whether a review counts as blind (§11.3), looking past a leading citation stamp (upstream
/// #3436 puts it before antigravity's blind stamp, addendum §2.4).
pub fn is_blind(content: &str) -> bool {
    let content = crate::verdict::citations::after_stamp(content);
    let mut lines = content.split('\n');
    if lines
        .clone()
        .next()
        .is_some_and(|l| l.contains("[reviewed-without-repo-access]"))
    {
        return true;
    }
    lines
        .by_ref()
        .take(5)
        .any(|l| l.contains("REVIEWED-WITHOUT-REPO-ACCESS"))
}

/// A frontmatter scalar: plain when it is safe, else JSON-quoted.
pub(crate) fn scalar(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-'));
    if plain {
        value.to_owned()
    } else {
        serde_json::Value::String(value.to_owned()).to_string()
    }
}

fn list(values: &[String]) -> String {
    let items: Vec<String> = values.iter().map(|v| scalar(v)).collect();
    format!("[{}]", items.join(", "))
}

fn names(list: &[String]) -> String {
    match list.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// Renders the whole file.
pub fn render(doc: &Doc) -> String {
    let mut out = frontmatter(doc);
    if let Some(sandbox) = &doc.sandbox {
        out.push_str(&format!("> Sandbox: {sandbox}\n\n"));
    }
    let notes = shared_adapter_notes(&doc.entries);
    if !notes.is_empty() {
        out.push_str(&notes.join("\n"));
        out.push_str("\n\n");
    }
    let not_run: Vec<String> = doc
        .entries
        .iter()
        .filter_map(|e| match &e.fate {
            Fate::NotRun { reason } => Some(format!("{} ({reason})", e.display())),
            _ => None,
        })
        .collect();
    if !not_run.is_empty() {
        out.push_str(&format!("> Not run: {}\n\n", not_run.join(", ")));
    }
    out.push_str(&earlier_notes(&doc.earlier));
    if let Some(note) = &doc.repository_note {
        out.push_str(&format!("> **Warning:** {}\n\n", note.replace('\n', " ")));
    }
    out.push_str(&format!("# Cross-AI Plan Review — {}\n\n", doc.subject));
    let mut down_weighted = Vec::new();
    for e in &doc.entries {
        if let Some(section) = section(e) {
            out.push_str(&section);
        }
        if let Some(kind) = down_weight(e) {
            down_weighted.push(format!("- {} — {kind}", e.display()));
        }
    }
    for carried in &doc.earlier.carried {
        out.push_str(&format!(
            "## {}{EARLIER_MARK}{}\n\n{}\n\n---\n\n",
            carried.heading,
            carried.reviewed_at,
            nest_headings(&carried.body).trim_end_matches('\n')
        ));
        down_weighted.push(format!(
            "- {} — from the earlier run of {} (not reproduced by this run)",
            carried.heading, carried.reviewed_at
        ));
    }
    out.push_str(&consensus_skeleton(&down_weighted));
    // Lane-supplied names (ids, sections, reasons) pass through the same filter as reviews.
    strip_controls(&out)
}

/// The notes on what was kept of the earlier REVIEWS.md.
fn earlier_notes(kept: &Kept) -> String {
    let mut out = String::new();
    if !kept.carried.is_empty() {
        let labels: Vec<String> = kept.carried.iter().map(|c| c.label()).collect();
        out.push_str(&format!(
            "> Kept from an earlier run (this run did not reproduce them; each is marked below): {}\n\n",
            labels.join(", ")
        ));
    }
    if let Some((name, why)) = &kept.set_aside {
        out.push_str(&format!(
            "> The earlier review file could not be read section by section ({why}); it is kept whole as {name}.\n\n"
        ));
    }
    out
}

/// The YAML frontmatter, with `trimmed_reviewers` when a budget trimmed a prompt.
fn frontmatter(doc: &Doc) -> String {
    let mut out = String::from("---\n");
    out.push_str(&format!("phase: {}\n", scalar(&doc.phase)));
    let reviewers: Vec<String> = doc
        .entries
        .iter()
        .filter(|e| matches!(e.fate, Fate::Ran { .. }))
        .map(|e| e.id.clone())
        .collect();
    out.push_str(&format!("reviewers: {}\n", list(&reviewers)));
    out.push_str(&format!("reviewed_at: {}\n", doc.reviewed_at));
    out.push_str(&format!("plans_reviewed: {}\n", list(&doc.plans)));
    let unknown = super::model_record::ModelRecord::unknown();
    let models: Vec<(&str, &super::model_record::ModelRecord)> = doc
        .entries
        .iter()
        .filter(|e| matches!(e.fate, Fate::Ran { .. }))
        .map(|e| (e.id.as_str(), e.model.as_ref().unwrap_or(&unknown)))
        .collect();
    out.push_str(&super::model_record::frontmatter(&models, scalar));
    let trimmed: Vec<(&Entry, &Metadata)> = doc
        .entries
        .iter()
        .filter(|e| matches!(e.fate, Fate::Ran { .. } | Fate::BudgetFailed { .. }))
        .filter_map(|e| {
            e.metadata
                .as_ref()
                .filter(|m| m.qualifies())
                .map(|m| (e, m))
        })
        .collect();
    if !trimmed.is_empty() {
        out.push_str("trimmed_reviewers:\n");
        for (entry, m) in trimmed {
            out.push_str(&format!("  {}:\n", scalar(&entry.id)));
            out.push_str(&format!("    budget: {}\n", m.budget));
            out.push_str(&format!("    effective_budget: {}\n", m.effective_budget));
            out.push_str(&format!("    estimated_tokens: {}\n", m.estimated_tokens));
            out.push_str(&format!("    omitted: {}\n", list(&m.omitted)));
            out.push_str(&format!("    project_md_shrunk: {}\n", m.project_md_shrunk));
            out.push_str(&format!("    plan_truncation_pct: {}\n", m.rounded_pct()));
            out.push_str(&format!("    hard_failed: {}\n", m.hard_failed));
            out.push_str(&format!("    note_injected: {}\n", m.note_injected));
        }
    }
    out.push_str("---\n\n");
    out
}

/// Shared-adapter notes: one line per cli with ≥2 instances among the identities that ran.
fn shared_adapter_notes(entries: &[Entry]) -> Vec<String> {
    let ran_instances: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.instance && matches!(e.fate, Fate::Ran { .. }))
        .collect();
    let mut clis: Vec<&str> = Vec::new();
    for e in &ran_instances {
        if !clis.contains(&e.cli.as_str()) {
            clis.push(&e.cli);
        }
    }
    let mut notes = Vec::new();
    for cli in clis {
        let ids: Vec<String> = ran_instances
            .iter()
            .filter(|e| e.cli == cli)
            .map(|e| e.id.clone())
            .collect();
        if ids.len() >= 2 {
            notes.push(format!(
                "> Note: {} share the {cli} adapter; their consensus is cross-model, not cross-tool.",
                names(&ids)
            ));
        }
    }
    notes
}

/// An identity's section (heading, diff-only caveat, nested content); none when it did not run.
fn section(e: &Entry) -> Option<String> {
    let content = match &e.fate {
        Fate::Ran { content, .. }
        | Fate::BudgetFailed { content }
        | Fate::Interrupted { content } => content,
        Fate::NotRun { .. } => return None,
    };
    let mut out = format!("## {}\n\n", e.heading());
    if e.diff_only {
        out.push_str(DIFF_ONLY_CAVEAT);
        out.push_str("\n\n");
    }
    out.push_str(nest_headings(&strip_controls(content)).trim_end_matches('\n'));
    if let Some(full) = &e.full {
        out.push_str("\n\n");
        out.push_str(&full.notice());
    }
    if cut_off_unsaid(e) {
        out.push_str("\n\n");
        out.push_str(crate::run::review_file::INCOMPLETE_PREFIX);
        out.push_str(
            "the lane was stopped by its time bound or output cap before it finished; \
             the whole text is partial.",
        );
    }
    out.push_str("\n\n---\n\n");
    Some(out)
}

/// A failed lane's own text (not replaced by a diagnostic stub: stopped by its bound or cap)
/// whose shown text does not end with the incomplete-review line: text was added after it (a
/// process the lane left behind), or a review shown in part did not end with it. The
/// section then says it again at its end, so the panel verdict and the consensus read it as not
/// completed, never as a review.
fn cut_off_unsaid(e: &Entry) -> bool {
    let Fate::Ran {
        stubbed: true,
        content,
    } = &e.fate
    else {
        return false;
    };
    let first = content.lines().map(str::trim).find(|l| !l.is_empty());
    let lane_text = first.is_some_and(|line| !super::preserve::is_notice(line));
    // Shown in part, the text still ends with the line when the whole review did
    // (`captured::Review::shown`); the partial-review notice follows it, and the panel verdict
    // reads past that notice.
    let ends_said = crate::run::review_file::ends_incomplete(content);
    lane_text && !ends_said
}

/// Why an identity's verdict must not count at full consensus weight, if it must not.
fn down_weight(e: &Entry) -> Option<&'static str> {
    match &e.fate {
        Fate::Ran {
            stubbed: true,
            content,
        } if crate::run::review_file::ends_incomplete(content) || cut_off_unsaid(e) => {
            Some("incomplete (stopped by its time bound or output cap; the text is partial)")
        }
        Fate::Ran { stubbed: true, .. } => Some("failed (diagnostic stub, no review)"),
        Fate::Interrupted { .. } => Some("not completed (review run interrupted)"),
        Fate::Ran { .. } if e.diff_only => Some("diff-only (never received the review prompt)"),
        Fate::Ran { content, .. } if is_blind(content) && is_uncited(content) => {
            Some("reviewed-without-repo-access, reviewed-without-source-citations")
        }
        Fate::Ran { content, .. } if is_blind(content) => Some("reviewed-without-repo-access"),
        Fate::Ran { content, .. } if is_uncited(content) => {
            Some("reviewed-without-source-citations (cited no file:line source)")
        }
        _ => None,
    }
}

/// Whether a review carries the citation stamp (upstream #3436): counted at reduced weight.
fn is_uncited(content: &str) -> bool {
    crate::verdict::citations::is_stamped(content)
}

/// The Consensus Summary skeleton, listing the down-weighted verdicts.
fn consensus_skeleton(down_weighted: &[String]) -> String {
    let mut out = String::from("## Consensus Summary\n\n");
    out.push_str("<!-- Synthesize the concerns shared across reviewers; weight file:line-grounded findings above impressions.\n");
    if !down_weighted.is_empty() {
        out.push_str(
            "Do not count these verdicts at full consensus weight (note their findings only):\n",
        );
        for line in down_weighted {
            // Inside an HTML comment: a `-->` in a name would end it early.
            out.push_str(&line.replace("-->", "--&gt;"));
            out.push('\n');
        }
    }
    out.push_str("-->\n\n");
    out.push_str("### Agreed Strengths\n<!-- strengths raised by 2+ reviewers -->\n\n");
    out.push_str(
        "### Agreed Concerns\n<!-- concerns raised by 2+ reviewers — highest priority -->\n\n",
    );
    out.push_str("### Divergent Views\n<!-- where reviewers disagreed — worth investigating -->\n");
    out
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SS.sssZ` (see [`crate::clock::iso_now`]).
pub fn utc_now() -> String {
    crate::clock::iso_now()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blind_tells() {
        assert!(is_blind("> [reviewed-without-repo-access] x\n\nreview"));
        // Past a leading citation stamp (the order antigravity's stamps end up in).
        let both = format!(
            "{}\n\n> [reviewed-without-repo-access] x\n\nreview",
            crate::verdict::citations::CITATION_STAMP
        );
        assert!(is_blind(&both));
        assert!(is_uncited(&both));
        assert!(!is_uncited("> [reviewed-without-repo-access] x\n\nreview"));
        assert!(is_blind("a\nb\nc\nd\nREVIEWED-WITHOUT-REPO-ACCESS\n"));
        assert!(!is_blind("a\nb\nc\nd\ne\nREVIEWED-WITHOUT-REPO-ACCESS\n"));
    }

    #[test]
    fn scalars_quote_when_needed() {
        assert_eq!(scalar("03-01-PLAN.md"), "03-01-PLAN.md");
        assert_eq!(scalar("a b"), "\"a b\"");
        assert_eq!(names(&["a".into(), "b".into(), "c".into()]), "a, b and c");
    }

    fn entry(id: &str, cli: &str, instance: bool, fate: Fate) -> Entry {
        Entry {
            id: id.into(),
            cli: cli.into(),
            instance,
            section: "OpenCode".into(),
            diff_only: false,
            metadata: None,
            fate,
            model: None,
            full: None,
        }
    }

    /// A failed lane's own text never reads as a finished review: when its section would not
    /// end with the incomplete-review line (text added after it), the line is said again.
    #[test]
    fn a_failed_lanes_text_always_ends_incomplete() {
        let notice = crate::run::review_file::incomplete_notice("ETIMEDOUT");
        for content in [
            format!("# Review\n\nfinding{notice}more text a leftover process wrote\n"),
            format!("# Review\n\nfinding{notice}"),
        ] {
            let e = entry(
                "op-a",
                "opencode",
                false,
                Fate::Ran {
                    stubbed: true,
                    content,
                },
            );
            let text = section(&e).expect("section");
            let body = text.trim_end().trim_end_matches("---");
            assert!(crate::run::review_file::ends_incomplete(body), "{text}");
            assert_eq!(
                text.matches(crate::run::review_file::INCOMPLETE_PREFIX)
                    .count(),
                if text.contains("leftover") { 2 } else { 1 },
                "{text}"
            );
            assert!(down_weight(&e).is_some_and(|w| w.starts_with("incomplete")));
        }
        let stub = entry(
            "op-a",
            "opencode",
            false,
            Fate::Ran {
                stubbed: true,
                content: "op-a review failed or returned empty output. stderr:\nboom\n".into(),
            },
        );
        assert!(!section(&stub)
            .expect("section")
            .contains("incomplete review"));
    }

    /// A section or review cannot forge a heading or hide the summary (issue 20 items 8, 10).
    #[test]
    fn names_and_reviews_cannot_forge_headings_or_end_the_summary_comment() {
        let mut hostile = entry(
            "op-a",
            "opencode",
            false,
            Fate::Interrupted {
                content: "text\n```\nopen fence".into(),
            },
        );
        hostile.section = "X --> <h2>Forged</h2>\n## Forged".into();
        let doc = Doc {
            phase: "3".into(),
            subject: "Phase 3".into(),
            reviewed_at: "2026-07-29T14:03:05.120Z".into(),
            plans: vec![],
            entries: vec![hostile],
            earlier: Kept::default(),
            sandbox: None,
            repository_note: None,
        };
        let text = render(&doc);
        let headings: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(
            headings,
            [
                "# Cross-AI Plan Review — Phase 3",
                "## X --> &lt;h2>Forged&lt;/h2>\\u{a}## Forged Review",
                "## Consensus Summary",
                "### Agreed Strengths",
                "### Agreed Concerns",
                "### Divergent Views",
            ],
            "{text}"
        );
        assert!(text.contains("- X --&gt; &lt;h2>"), "{text}");
        assert!(text.contains("open fence\n```\n\n---\n"), "{text}");
    }

    /// A review shown in part ends with the notice, after its nested text (a fence it left
    /// open closed first), naming where the whole text is.
    #[test]
    fn a_partial_review_ends_with_the_notice_outside_its_fence() {
        let partial = |whole: Whole| {
            let mut e = entry(
                "op-a",
                "opencode",
                false,
                Fate::Ran {
                    stubbed: false,
                    content: "# Big\n\n```\nline\n".into(),
                },
            );
            e.full = Some(Overflow {
                total: 5000,
                shown: 20,
                whole,
            });
            let doc = Doc {
                phase: "3".into(),
                subject: "Phase 3".into(),
                reviewed_at: "2026-07-29T14:03:05.120Z".into(),
                plans: vec![],
                entries: vec![e],
                earlier: Kept::default(),
                sandbox: None,
                repository_note: None,
            };
            render(&doc)
        };
        let text = partial(Whole::Beside("03-REVIEWS.<op-a>.full.md".into()));
        assert!(
            text.contains("### Big\n\n```\nline\n```\n\n> [gsd-lane] partial review: it has 5000 bytes and only the first 20 are shown here (review.max_inline_bytes). The whole review is in 03-REVIEWS.&lt;op-a>.full.md, beside this file."),
            "{text}"
        );
        assert!(partial(Whole::RunDir).contains("The whole text is in the run dir's review file"));
        assert!(partial(Whole::TooLarge).contains("The whole text is too large to keep."));
    }

    #[test]
    fn not_run_line_and_shared_adapter_note() {
        let ran = |c: &str| Fate::Ran {
            stubbed: false,
            content: c.into(),
        };
        let doc = Doc {
            phase: "3".into(),
            subject: "Phase 3".into(),
            reviewed_at: "2026-07-29T14:03:05.120Z".into(),
            plans: vec!["03-01-PLAN.md".into()],
            entries: vec![
                entry("op-a", "opencode", true, ran("a\r\n\n")),
                entry("op-b", "opencode", true, ran("b")),
                entry("op-c", "opencode", true, ran("c")),
                entry(
                    "ollama",
                    "ollama",
                    false,
                    Fate::NotRun {
                        reason: "egress_host_changed".into(),
                    },
                ),
            ],
            earlier: Kept::default(),
            sandbox: None,
            repository_note: None,
        };
        let text = render(&doc);
        assert!(text.starts_with("---\nphase: 3\nreviewers: [op-a, op-b, op-c]\nreviewed_at: 2026-07-29T14:03:05.120Z\nplans_reviewed: [03-01-PLAN.md]\nmodels:\n  op-a: \"unknown\"\n  op-b: \"unknown\"\n  op-c: \"unknown\"\nmodel_sources:\n  op-a: \"unknown\"\n  op-b: \"unknown\"\n  op-c: \"unknown\"\n---\n\n> Note: op-a, op-b and op-c share the opencode adapter; their consensus is cross-model, not cross-tool.\n\n> Not run: OpenCode (egress_host_changed)\n\n# Cross-AI Plan Review — Phase 3\n\n## OpenCode Review (op-a)\n\na\n\n---\n\n"), "{text}");
        assert!(!text.contains("Do not count"));
    }
}
