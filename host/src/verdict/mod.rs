//! The panel verdict (issue 23): from a REVIEWS.md that gsd-lane wrote, without any model,
//! each reviewer's outcome, risk, concerns by severity, citations checked against the
//! repository and grounding; the quorum of substantive reviews; the places two or more of
//! them agree on; and divergent risk. `review` puts it at the top of the REVIEWS.md it writes
//! and `gsd-lane verdict` recomputes it from the file, with the same result.
//!
//! One job per module: [`document`] reads the file into reviewer sections ([`blocks`] is the
//! Markdown structure), [`risk`], [`concerns`], [`citations`] (the one citation finder, also
//! the citation stamp's), [`repo`] (the repository check), [`grounding`], [`quorum`],
//! [`agreed`] (agreed places and divergence), [`render`] (the table and its place in
//! REVIEWS.md); [`model`] holds the JSON.

pub(crate) mod agreed;
pub(crate) mod blocks;
pub(crate) use crate::lane_result::citations;
pub(crate) mod concerns;
pub(crate) mod document;
pub(crate) mod grounding;
pub(crate) mod model;
pub(crate) mod quorum;
pub(crate) mod render;
pub(crate) mod repo;
pub(crate) mod risk;
mod words;

use std::collections::BTreeMap;
use std::path::PathBuf;

use agreed::Point;
use document::{NotReviews, ReviewerSection};
use model::{CitationCounts, ConcernCounts, ReviewerVerdict, Verdict};
use repo::{Cited, Repo};

use crate::review::exit::Exit;

/// What `review` needs to compute the verdict of the file it writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panel {
    /// `review.quorum`.
    pub quorum: u64,
    /// The repository the citations are checked against (the project root).
    pub repo_root: PathBuf,
    /// `--require-quorum`.
    pub require_quorum: bool,
}

impl Panel {
    /// The panel of a review: `review.quorum` checked now, before any lane runs.
    ///
    /// # Errors
    ///
    /// `review.quorum` is not an integer ≥ 1 (status 1, naming the file and key).
    pub fn for_review(
        context: &crate::context::Context,
        config: &crate::config::ProjectConfig,
        require_quorum: bool,
    ) -> Result<Panel, crate::error::Failure> {
        let quorum =
            quorum::configured(config).map_err(|e| crate::error::Failure::new(e.to_string()))?;
        Ok(Panel {
            quorum,
            repo_root: context.project_root.clone(),
            require_quorum,
        })
    }

    /// The REVIEWS.md `text` with its verdict at the top, and the verdict. A text the verdict
    /// cannot read (never one `review` rendered) is kept as it is, with a warning.
    pub fn apply(&self, text: String) -> (String, Option<Verdict>) {
        match compute(&text, &Repo::new(&self.repo_root), self.quorum) {
            Ok(computed) => (
                render::into_document(&text, computed.after_title, &computed.verdict),
                Some(computed.verdict),
            ),
            Err(why) => {
                crate::output::eprint_line(&format!(
                    "warning: no panel verdict: the REVIEWS.md being written cannot be read back ({why})"
                ));
                (text, None)
            }
        }
    }

    /// The review's exit under `--require-quorum`: a review that would exit 0 exits 2 when
    /// the quorum is not met or could not be computed; every other exit is unchanged.
    pub fn exit(&self, exit: Exit, verdict: Option<&Verdict>) -> Exit {
        let met = verdict.is_some_and(|v| v.quorum.met);
        if self.require_quorum && !met && exit == Exit::Reviewed {
            Exit::QuorumNotMet
        } else {
            exit
        }
    }
}

/// The `verdict` event of `review --json`: the verdict object plus `"event": "verdict"`.
pub fn event(verdict: &Verdict) -> serde_json::Value {
    let mut value = serde_json::json!({"event": "verdict"});
    if let (Some(map), Ok(serde_json::Value::Object(fields))) =
        (value.as_object_mut(), serde_json::to_value(verdict))
    {
        map.extend(fields);
    }
    value
}

/// The banner's line when the quorum is not met (then an empty line).
pub fn degraded_line(verdict: &Verdict) -> Option<String> {
    (!verdict.quorum.met).then(|| format!("PANEL DEGRADED: {}.\n\n", render::quorum_line(verdict)))
}

/// A verdict and where it goes in the file it was computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Computed {
    /// The verdict.
    pub verdict: Verdict,
    /// Byte offset just after the title line.
    pub after_title: usize,
}

/// One citation's owner: section and block.
struct Owner {
    section: usize,
    block: usize,
}

/// Computes the verdict of `text` (a REVIEWS.md) against `repo`, with quorum `wanted`.
///
/// # Errors
///
/// The text is not a gsd-lane REVIEWS.md.
pub fn compute(text: &str, repo: &Repo, wanted: u64) -> Result<Computed, NotReviews> {
    let parsed = document::parse(text)?;
    let mut cited = Vec::new();
    let mut owners = Vec::new();
    for (s, section) in parsed.sections.iter().enumerate() {
        for (b, block) in section.blocks.iter().enumerate() {
            for c in citations::find(&block.text) {
                cited.push(Cited {
                    path: c.path,
                    first: c.first,
                    last: c.last,
                });
                owners.push(Owner {
                    section: s,
                    block: b,
                });
            }
        }
    }
    let verified = repo.verify(&cited);
    let mut per_section: Vec<(CitationCounts, BTreeMap<usize, Vec<Cited<'_>>>)> =
        vec![(CitationCounts::default(), BTreeMap::new()); parsed.sections.len()];
    for ((owner, c), ok) in owners.iter().zip(&cited).zip(&verified) {
        if let Some((counts, by_block)) = per_section.get_mut(owner.section) {
            counts.found += 1;
            if *ok {
                counts.verified += 1;
                by_block.entry(owner.block).or_default().push(*c);
            }
        }
    }
    let mut reviewers = Vec::new();
    let mut points = Vec::new();
    for ((s, section), (counts, by_block)) in parsed.sections.iter().enumerate().zip(per_section) {
        let (concerns, mut places) = concern_points(section, s, &by_block);
        points.append(&mut places);
        reviewers.push(ReviewerVerdict {
            id: section.id.clone(),
            section: section.display.clone(),
            outcome: section.outcome,
            risk: risk::risk(&section.blocks),
            concerns,
            citations: counts,
            grounding: grounding::grounding(section.marker, counts),
        });
    }
    let verdict = Verdict {
        quorum: quorum::quorum(wanted, &reviewers, parsed.listed.len()),
        agreed: agreed::agreed(&points, &reviewers),
        divergent: agreed::divergent(&reviewers),
        missing: parsed.missing(),
        reviewers,
    };
    Ok(Computed {
        verdict,
        after_title: parsed.after_title,
    })
}

/// A section's concern counts and the verified citations of its concerns (`verified`:
/// the section's verified citations by block).
fn concern_points(
    section: &ReviewerSection,
    index: usize,
    verified: &BTreeMap<usize, Vec<Cited<'_>>>,
) -> (ConcernCounts, Vec<Point>) {
    let mut counts = ConcernCounts::default();
    let mut points = Vec::new();
    for concern in concerns::concerns(&section.blocks) {
        counts.add(concern.level);
        for c in concern
            .blocks
            .iter()
            .filter_map(|b| verified.get(b))
            .flatten()
        {
            points.push(Point {
                reviewer: index,
                level: concern.level,
                path: c.path.to_owned(),
                first: c.first,
                last: c.last,
            });
        }
    }
    (counts, points)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    const DOC: &str = "---\nphase: 3\nreviewers: [a, b]\nreviewed_at: x\nplans_reviewed: []\n---\n\n# Cross-AI Plan Review — Phase 3\n\n## A Review\n\n### Concerns\n- HIGH: `src/x.rs:2`\n\n**Risk Assessment:** LOW\n\n---\n\n## B Review\n\n**Concerns:**\n1. (medium) src/x.rs:5 and src/missing.rs:1\n\n**Overall risk:** HIGH\n\n---\n\n## Consensus Summary\n\n### Agreed Concerns\n<!-- c -->\n\n### Divergent Views\n<!-- d -->\n";

    #[test]
    fn computing_the_written_document_again_gives_the_same_verdict() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("src")).expect("src");
        std::fs::write(dir.path().join("src/x.rs"), "1\n2\n3\n4\n5\n").expect("x.rs");
        let repo = Repo::new(dir.path());
        let first = compute(DOC, &repo, 2).expect("parses");
        let v = &first.verdict;
        assert_eq!(v.quorum.substantive, 2);
        assert!(v.quorum.met);
        assert_eq!(v.agreed.len(), 1);
        assert_eq!(v.agreed[0].lines, [2, 5]);
        assert_eq!(v.agreed[0].severity, Some(model::Level::High));
        assert_eq!(v.divergent, vec!["a", "b"]);
        assert_eq!(
            v.reviewers[1].citations,
            CitationCounts {
                found: 2,
                verified: 1
            }
        );
        let written = render::into_document(DOC, first.after_title, v);
        let second = compute(&written, &repo, 2).expect("parses");
        assert_eq!(&second.verdict, v);
        assert_eq!(
            render::into_document(DOC, second.after_title, &second.verdict),
            written
        );
    }

    #[test]
    fn event_and_banner_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let computed = compute(DOC, &Repo::new(dir.path()), 5).expect("parses");
        let event = event(&computed.verdict);
        assert_eq!(event["event"], "verdict");
        assert_eq!(
            event["quorum"],
            serde_json::json!({"required": 2, "substantive": 0, "met": false})
        );
        assert_eq!(
            degraded_line(&computed.verdict).as_deref(),
            Some("PANEL DEGRADED: 0 of 2 reviews are substantive and source-grounded; quorum 2 not met.\n\n")
        );
        let panel = Panel {
            quorum: 5,
            repo_root: dir.path().to_owned(),
            require_quorum: true,
        };
        assert_eq!(
            panel.exit(Exit::Reviewed, Some(&computed.verdict)),
            Exit::QuorumNotMet
        );
        assert_eq!(panel.exit(Exit::Reviewed, None), Exit::QuorumNotMet);
        assert_eq!(panel.exit(Exit::Interrupted, None), Exit::Interrupted);
        let lax = Panel {
            require_quorum: false,
            ..panel
        };
        assert_eq!(
            lax.exit(Exit::Reviewed, Some(&computed.verdict)),
            Exit::Reviewed
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Any review text: no panic, and the written document recomputes to the same verdict.
        #[test]
        fn any_review_text_recomputes_identically(
            a in "(\\PC|\n|`|\\*|-|#|\\||:|[0-9]|HIGH|low|Concerns|Risk Assessment|src/x.rs:2|```){0,120}",
            b in "(\\PC|\n|`|\\*|-|#|:|[0-9]|MEDIUM|\\*\\*Concerns:\\*\\*|src/x.rs:4-9){0,120}",
        ) {
            let dir = tempfile::tempdir().expect("tempdir");
            std::fs::create_dir_all(dir.path().join("src")).expect("src");
            std::fs::write(dir.path().join("src/x.rs"), "1\n".repeat(20)).expect("x.rs");
            let repo = Repo::new(dir.path());
            let doc = format!(
                "---\nphase: 3\nreviewers: [a, b]\n---\n\n# Cross-AI Plan Review — Phase 3\n\n## A Review\n\n{a}\n\n---\n\n## B Review\n\n{b}\n\n---\n\n## Consensus Summary\n\n### Agreed Concerns\n<!-- c -->\n"
            );
            let first = compute(&doc, &repo, 2).expect("parses");
            let written = render::into_document(&doc, first.after_title, &first.verdict);
            let second = compute(&written, &repo, 2).expect("parses");
            proptest::prop_assert_eq!(second.verdict, first.verdict);
        }
    }
}
