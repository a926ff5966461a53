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

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

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

/// The agreed places of `points` (`reviewers[i]` says whether reviewer `i` is substantive).
///
/// Sorting and one sweep per file: O(n log n) in the points, plus the size of the answer.
pub fn agreed(points: &[Point], reviewers: &[ReviewerVerdict]) -> Vec<AgreedPlace> {
    let substantive = |p: &Point| reviewers.get(p.reviewer).is_some_and(|r| r.substantive());
    let mut by_path: BTreeMap<&str, (Vec<&Point>, Vec<&Point>)> = BTreeMap::new();
    for point in points {
        let (mine, others) = by_path.entry(&point.path).or_default();
        if substantive(point) {
            mine.push(point);
        } else {
            others.push(point);
        }
    }
    let ids = |list: &mut dyn Iterator<Item = usize>| -> Vec<String> {
        list.filter_map(|i| reviewers.get(i).map(|r| r.id.clone()))
            .collect()
    };
    let mut places = Vec::new();
    for (path, (mut mine, mut others)) in by_path {
        mine.sort_by_key(|p| (p.first, p.last));
        others.sort_by_key(|p| (p.first, p.last));
        let mut sweep = Sweep::new(&others);
        for group in groups(&mine) {
            let mut who: Vec<usize> = group.iter().map(|p| p.reviewer).collect();
            who.sort_unstable();
            who.dedup();
            if who.len() < 2 {
                continue;
            }
            let first = group.iter().map(|p| p.first).min().unwrap_or(0);
            let last = group.iter().map(|p| p.last).max().unwrap_or(0);
            let also = sweep.near(first, last);
            places.push(AgreedPlace {
                path: path.to_owned(),
                lines: [first, last],
                reviewers: ids(&mut who.into_iter()),
                severity: group.iter().filter_map(|p| p.level).max(),
                also_raised_by: ids(&mut also.into_iter()),
            });
        }
    }
    places
}

/// Sorted points joined into groups: each point within [`NEAR`] lines of the group so far.
fn groups<'a>(sorted: &[&'a Point]) -> Vec<Vec<&'a Point>> {
    let mut groups: Vec<Vec<&Point>> = Vec::new();
    let mut span = (0, 0);
    for &point in sorted {
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
    groups
}

/// The reviewers of points (sorted by first line) near places asked for in increasing order.
struct Sweep<'a> {
    points: &'a [&'a Point],
    next: usize,
    /// Points taken in, by last line (smallest first).
    open: BinaryHeap<Reverse<(u64, usize)>>,
    /// Reviewers of the open points, with their count.
    reviewers: BTreeMap<usize, usize>,
}

impl<'a> Sweep<'a> {
    fn new(points: &'a [&'a Point]) -> Sweep<'a> {
        Sweep {
            points,
            next: 0,
            open: BinaryHeap::new(),
            reviewers: BTreeMap::new(),
        }
    }

    /// The reviewers with a point near `[first, last]` (places come in increasing order).
    fn near(&mut self, first: u64, last: u64) -> Vec<usize> {
        let high = last.saturating_add(NEAR);
        while let Some(point) = self.points.get(self.next).filter(|p| p.first <= high) {
            self.open.push(Reverse((point.last, point.reviewer)));
            *self.reviewers.entry(point.reviewer).or_default() += 1;
            self.next += 1;
        }
        let low = first.saturating_sub(NEAR);
        while let Some(&Reverse((end, reviewer))) = self.open.peek() {
            if end >= low {
                break;
            }
            self.open.pop();
            if let Some(count) = self.reviewers.get_mut(&reviewer) {
                *count -= 1;
                if *count == 0 {
                    self.reviewers.remove(&reviewer);
                }
            }
        }
        self.reviewers.keys().copied().collect()
    }
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
    fn many_places_and_long_citations_stay_near_linear() {
        let mut reviewers: Vec<ReviewerVerdict> = (0..3)
            .map(|i| reviewer(&format!("r{i}"), Grounding::Grounded, None))
            .collect();
        reviewers.push(reviewer("blind", Grounding::WithoutRepoAccess, None));
        let mut points = Vec::new();
        for n in 0..20_000_u64 {
            points.push(point(0, None, "a.rs", n * 100 + 1, n * 100 + 1));
            points.push(point(1, None, "a.rs", n * 100 + 5, n * 100 + 5));
            points.push(point(3, None, "a.rs", 1, 3_000_000));
        }
        let start = std::time::Instant::now();
        let places = agreed(&points, &reviewers);
        assert_eq!(places.len(), 20_000);
        assert!(places.iter().all(|p| p.also_raised_by == vec!["blind"]));
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
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
