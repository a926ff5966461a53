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
pub(crate) mod citations;
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

use agreed::Point;
use document::{NotReviews, ReviewerSection};
use model::{CitationCounts, ConcernCounts, ReviewerVerdict, Verdict};
use repo::{Cited, Repo};

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
        for c in concern.blocks.iter().filter_map(|b| verified.get(b)).flatten() {
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
