//! Grounding: the writer's diff-only and blind markers take precedence; otherwise
//! `grounded` (at least one verified citation), `miscited` (citations, none verified) or
//! `ungrounded` (none).

use super::document::Marker;
use super::model::{CitationCounts, Grounding};

/// The grounding of a section with `marker` and `citations`.
pub fn grounding(marker: Option<Marker>, citations: CitationCounts) -> Grounding {
    match marker {
        Some(Marker::DiffOnly) => Grounding::DiffOnly,
        Some(Marker::Blind) => Grounding::WithoutRepoAccess,
        None if citations.verified > 0 => Grounding::Grounded,
        None if citations.found > 0 => Grounding::Miscited,
        None => Grounding::Ungrounded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(found: usize, verified: usize) -> CitationCounts {
        CitationCounts { found, verified }
    }

    #[test]
    fn markers_win_then_citations() {
        assert_eq!(
            grounding(Some(Marker::DiffOnly), counts(3, 3)),
            Grounding::DiffOnly
        );
        assert_eq!(
            grounding(Some(Marker::Blind), counts(3, 3)),
            Grounding::WithoutRepoAccess
        );
        assert_eq!(grounding(None, counts(3, 1)), Grounding::Grounded);
        assert_eq!(grounding(None, counts(3, 0)), Grounding::Miscited);
        assert_eq!(grounding(None, counts(0, 0)), Grounding::Ungrounded);
    }
}
