//! The verdict as Markdown: the table, the quorum line, the agreed places and divergent risk
//! (the top of REVIEWS.md and `gsd-lane verdict`'s human output), its place below the title,
//! and the computed parts of the Consensus Summary.

use super::model::{AgreedPlace, ReviewerVerdict, Verdict};

/// Escapes a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// `path:first-last` in a code span (plain when the path holds a backtick).
fn place_ref(place: &AgreedPlace) -> String {
    let [first, last] = place.lines;
    let lines = if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    };
    let text = format!("{}:{lines}", place.path);
    if text.contains('`') {
        text
    } else {
        format!("`{text}`")
    }
}

/// `Claude (claude)`; an instance's display already names it: `OpenCode (op-a)`.
fn reviewer_name(r: &ReviewerVerdict) -> String {
    if r.section.ends_with(&format!("({})", r.id)) {
        r.section.clone()
    } else {
        format!("{} ({})", r.section, r.id)
    }
}

/// One table row.
fn row(r: &ReviewerVerdict) -> String {
    let c = &r.concerns;
    let unrated = if c.unrated > 0 {
        format!(" (+{} unrated)", c.unrated)
    } else {
        String::new()
    };
    format!(
        "| {} | {} | {} | {}/{}/{}{unrated} | {}/{} | {} |\n",
        cell(&reviewer_name(r)),
        r.outcome.as_str(),
        r.risk.map_or("—", |l| l.as_str()),
        c.high,
        c.medium,
        c.low,
        r.citations.verified,
        r.citations.found,
        r.grounding.as_str()
    )
}

/// "2 of 5 reviews are substantive and source-grounded; quorum 2 met".
pub fn quorum_line(v: &Verdict) -> String {
    let q = &v.quorum;
    let total = v.reviewers.len() + v.missing.len();
    format!(
        "{} of {total} {} {} substantive and source-grounded; quorum {} {}",
        q.substantive,
        if total == 1 { "review" } else { "reviews" },
        if q.substantive == 1 { "is" } else { "are" },
        q.required,
        if q.met { "met" } else { "not met" }
    )
}

/// One agreed place as a line.
fn agreed_line(place: &AgreedPlace) -> String {
    let mut line = format!(
        "- {} — {} — {}",
        place_ref(place),
        place.severity.map_or("unrated", |l| l.as_str()),
        place.reviewers.join(", ")
    );
    if !place.also_raised_by.is_empty() {
        line.push_str(&format!(
            " (also raised by {}, not substantive)",
            place.also_raised_by.join(", ")
        ));
    }
    line.push('\n');
    line
}

/// The divergent reviewers with their risk.
fn divergent_line(v: &Verdict) -> Option<String> {
    if v.divergent.is_empty() {
        return None;
    }
    let names: Vec<String> = v
        .reviewers
        .iter()
        .filter(|r| v.divergent.contains(&r.id))
        .map(|r| format!("{} {}", r.id, r.risk.map_or("—", |l| l.as_str())))
        .collect();
    Some(format!("Divergent risk: {}\n", names.join(", ")))
}

/// The verdict block: table, quorum line, agreed places, divergent risk, missing sections.
pub fn block(v: &Verdict) -> String {
    let mut out = String::from(
        "**Panel verdict** (computed by gsd-lane from the reviews below; `gsd-lane verdict` recomputes it)\n\n",
    );
    out.push_str(
        "| Reviewer | Outcome | Risk | HIGH/MEDIUM/LOW | Citations verified/found | Grounding |\n",
    );
    out.push_str("|---|---|---|---|---|---|\n");
    for r in &v.reviewers {
        out.push_str(&row(r));
    }
    out.push('\n');
    out.push_str(&quorum_line(v));
    out.push_str(if v.quorum.met {
        ".\n\n"
    } else {
        " — PANEL DEGRADED.\n\n"
    });
    if v.agreed.is_empty() {
        out.push_str("Agreed places: none.\n");
    } else {
        out.push_str("Agreed places:\n\n");
        for place in &v.agreed {
            out.push_str(&agreed_line(place));
        }
    }
    if let Some(line) = divergent_line(v) {
        out.push('\n');
        out.push_str(&line);
    }
    if !v.missing.is_empty() {
        out.push_str(&format!(
            "\nListed in the frontmatter but no section found (broken Markdown in an earlier review?): {}\n",
            v.missing.join(", ")
        ));
    }
    out
}

/// Inserts `line` after the comment line that follows `heading` in the Consensus Summary.
fn prefill(text: &mut String, from: usize, heading: &str, lines: &str) {
    let Some(at) = text.get(from..).and_then(|t| t.find(heading)) else {
        return;
    };
    let after_heading = from + at + heading.len();
    let insert_at = match text.get(after_heading..) {
        Some(rest) if rest.starts_with("<!--") => rest
            .find("-->\n")
            .map_or(after_heading, |end| after_heading + end + 4),
        _ => after_heading,
    };
    text.insert_str(insert_at, lines);
}

/// REVIEWS.md with the verdict block below its title (`after_title`) and the Consensus
/// Summary's computed parts filled in (agreed concerns, divergent views).
pub fn into_document(text: &str, after_title: usize, v: &Verdict) -> String {
    let (head, tail) = text.split_at(after_title.min(text.len()));
    let mut out = format!("{head}\n{}{tail}", block(v));
    if let Some(summary) = out.rfind("\n## Consensus Summary\n") {
        let divergent = divergent_line(v)
            .map(|l| format!("- {l}"))
            .unwrap_or_default();
        prefill(&mut out, summary, "### Divergent Views\n", &divergent);
        let agreed: String = v.agreed.iter().map(agreed_line).collect();
        prefill(&mut out, summary, "### Agreed Concerns\n", &agreed);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::model::{CitationCounts, ConcernCounts, Grounding, Level, Outcome, Quorum};
    use super::*;

    fn verdict(met: bool) -> Verdict {
        Verdict {
            reviewers: vec![ReviewerVerdict {
                id: "op-a".into(),
                section: "OpenCode (op-a)".into(),
                outcome: Outcome::Review,
                risk: Some(Level::High),
                concerns: ConcernCounts {
                    high: 1,
                    medium: 2,
                    low: 0,
                    unrated: 1,
                },
                citations: CitationCounts {
                    found: 4,
                    verified: 3,
                },
                grounding: Grounding::Grounded,
            }],
            quorum: Quorum {
                required: if met { 1 } else { 2 },
                substantive: 1,
                met,
            },
            agreed: vec![AgreedPlace {
                path: "src/a|b.rs".into(),
                lines: [3, 3],
                reviewers: vec!["op-a".into(), "x".into()],
                severity: None,
                also_raised_by: vec!["y".into()],
            }],
            divergent: Vec::new(),
            missing: vec!["z".into()],
        }
    }

    #[test]
    fn table_quorum_line_and_places() {
        let text = block(&verdict(false));
        assert!(
            text.contains(
                "| OpenCode (op-a) | review | HIGH | 1/2/0 (+1 unrated) | 3/4 | grounded |\n"
            ),
            "{text}"
        );
        assert!(text.contains("1 of 2 reviews is substantive and source-grounded; quorum 2 not met — PANEL DEGRADED.\n"), "{text}");
        assert!(
            text.contains(
                "- `src/a|b.rs:3` — unrated — op-a, x (also raised by y, not substantive)\n"
            ),
            "{text}"
        );
        assert!(text.contains("no section found (broken Markdown in an earlier review?): z\n"));
        assert!(
            !text.contains("\n## "),
            "no heading a REVIEWS.md reader would take for a section"
        );
        assert!(block(&verdict(true)).contains("quorum 1 met.\n"));
    }

    #[test]
    fn placed_below_the_title_and_in_the_consensus_summary() {
        let doc = "# T\n\n## A Review\n\nx\n\n---\n\n## Consensus Summary\n\n### Agreed Strengths\n<!-- s -->\n\n### Agreed Concerns\n<!-- c -->\n\n### Divergent Views\n<!-- d -->\n";
        let out = into_document(doc, 4, &verdict(true));
        assert!(out.starts_with("# T\n\n**Panel verdict**"), "{out}");
        assert!(out.contains("\n\n## A Review\n"), "{out}");
        assert!(
            out.contains("### Agreed Concerns\n<!-- c -->\n- `src/a|b.rs:3` — unrated"),
            "{out}"
        );
        assert!(out.ends_with("### Divergent Views\n<!-- d -->\n"), "{out}");
    }
}
