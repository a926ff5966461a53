//! Agreed places and divergent risk.
//!
//! Agreed: the verified citations of substantive reviewers' concerns, per file, joined into
//! one place when their line ranges overlap or lie within [`NEAR`] lines of each other
//! (transitively); a place that two or more substantive reviewers cite is agreed. Its
//! severity is the highest of their concerns there; reviewers that are not substantive but
//! cite a concern within the place (or [`NEAR`] lines of it) are listed apart.
//!
//! Divergent: when one reviewer's risk is LOW and another's HIGH, every reviewer at either
//! end, in file order; otherwise none.

use std::collections::BTreeMap;

use super::model::{AgreedPlace, Level, ReviewerVerdict};

/// Lines apart that still count as the same place.
pub const NEAR: u64 = 10;

/// One verified citation inside a concern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// Index of the reviewer (file order).
    pub reviewer: usize,
    /// The concern's severity.
    pub level: Option<Level>,
    /// The file.
    pub path: String,
    /// First line.
    pub first: u64,
    /// Last line.
    pub last: u64,
}

/// Whether `[a, b]` and `[c, d]` overlap or lie within [`NEAR`] lines.
fn near(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 <= b.1.saturating_add(NEAR) && b.0 <= a.1.saturating_add(NEAR)
}

/// The agreed places of `points` (`substantive[i]`: reviewer i is substantive).
pub fn agreed(points: &[Point], reviewers: &[ReviewerVerdict]) -> Vec<AgreedPlace> {
    let substantive = |p: &&Point| reviewers.get(p.reviewer).is_some_and(|r| r.substantive());
    let mut by_path: BTreeMap<&str, Vec<&Point>> = BTreeMap::new();
    for point in points.iter().filter(substantive) {
        by_path.entry(&point.path).or_default().push(point);
    }
    let mut places = Vec::new();
    for (path, mut list) in by_path {
        list.sort_by_key(|p| (p.first, p.last));
        let mut groups: Vec<Vec<&Point>> = Vec::new();
        let mut span = (0, 0);
        for point in list {
            match groups.last_mut() {
                Some(group) if near(span, (point.first, point.last)) => {
                    span.1 = span.1.max(point.last);
                    group.push(point);
                }
                _ => {
                    span = (point.first, point.last);
                    groups.push(vec![point]);
                }
            }
        }
        for group in groups {
            if let Some(place) = place(path, &group, points, reviewers) {
                places.push(place);
            }
        }
    }
    places
}

/// The agreed place of one group, when two or more reviewers are in it.
fn place(
    path: &str,
    group: &[&Point],
    points: &[Point],
    reviewers: &[ReviewerVerdict],
) -> Option<AgreedPlace> {
    let mut who: Vec<usize> = group.iter().map(|p| p.reviewer).collect();
    who.sort_unstable();
    who.dedup();
    if who.len() < 2 {
        return None;
    }
    let first = group.iter().map(|p| p.first).min()?;
    let last = group.iter().map(|p| p.last).max()?;
    let mut others: Vec<usize> = points
        .iter()
        .filter(|p| p.path == path && near((first, last), (p.first, p.last)))
        .map(|p| p.reviewer)
        .filter(|r| reviewers.get(*r).is_some_and(|r| !r.substantive()))
        .collect();
    others.sort_unstable();
    others.dedup();
    let ids = |list: &[usize]| -> Vec<String> {
        list.iter()
            .filter_map(|&i| reviewers.get(i).map(|r| r.id.clone()))
            .collect()
    };
    Some(AgreedPlace {
        path: path.to_owned(),
        lines: [first, last],
        reviewers: ids(&who),
        severity: group.iter().filter_map(|p| p.level).max(),
        also_raised_by: ids(&others),
    })
}

/// The reviewers at either end of a LOW–HIGH spread, in file order.
pub fn divergent(reviewers: &[ReviewerVerdict]) -> Vec<String> {
    let has = |level| reviewers.iter().any(|r| r.risk == Some(level));
    if !(has(Level::Low) && has(Level::High)) {
        return Vec::new();
    }
    reviewers
        .iter()
        .filter(|r| matches!(r.risk, Some(Level::Low | Level::High)))
        .map(|r| r.id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::model::{CitationCounts, ConcernCounts, Grounding, Outcome};
    use super::*;

    fn reviewer(id: &str, grounding: Grounding, risk: Option<Level>) -> ReviewerVerdict {
        ReviewerVerdict {
            id: id.into(),
            section: id.into(),
            outcome: Outcome::Review,
            risk,
            concerns: ConcernCounts::default(),
            citations: CitationCounts::default(),
            grounding,
        }
    }

    fn point(reviewer: usize, level: Option<Level>, path: &str, first: u64, last: u64) -> Point {
        Point {
            reviewer,
            level,
            path: path.into(),
            first,
            last,
        }
    }

    #[test]
    fn places_join_within_ten_lines() {
        let reviewers = vec![
            reviewer("a", Grounding::Grounded, None),
            reviewer("b", Grounding::Grounded, None),
            reviewer("c", Grounding::DiffOnly, None),
            reviewer("d", Grounding::Grounded, None),
        ];
        let points = vec![
            point(0, Some(Level::Low), "src/x.rs", 10, 12),
            point(1, Some(Level::High), "src/x.rs", 22, 22),
            point(2, None, "src/x.rs", 30, 30),
            point(0, None, "src/x.rs", 40, 40),
            point(1, None, "src/y.rs", 1, 1),
            point(3, None, "src/y.rs", 11, 11),
            point(3, None, "src/z.rs", 5, 5),
            point(0, None, "src/z.rs", 16, 16),
        ];
        let places = agreed(&points, &reviewers);
        assert_eq!(places.len(), 2);
        assert_eq!(places[0].path, "src/x.rs");
        assert_eq!(places[0].lines, [10, 22]);
        assert_eq!(places[0].reviewers, vec!["a", "b"]);
        assert_eq!(places[0].severity, Some(Level::High));
        assert_eq!(places[0].also_raised_by, vec!["c"]);
        assert_eq!(places[1].path, "src/y.rs");
        assert_eq!(places[1].lines, [1, 11]);
        assert_eq!(places[1].reviewers, vec!["b", "d"]);
        assert_eq!(places[1].severity, None);
        // z.rs: 16 is 11 lines from 5, not a place.
    }

    #[test]
    fn divergence_needs_low_and_high() {
        let r = |id, risk| reviewer(id, Grounding::Grounded, risk);
        assert!(divergent(&[r("a", Some(Level::Low)), r("b", Some(Level::Medium))]).is_empty());
        assert_eq!(
            divergent(&[
                r("a", Some(Level::Low)),
                r("b", Some(Level::Medium)),
                r("c", Some(Level::High))
            ]),
            vec!["a", "c"]
        );
    }
}
