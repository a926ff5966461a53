//! Risk: every LOW/MEDIUM/HIGH that follows a "Risk Assessment" or "Overall risk" label (a
//! heading, or bold text) within its block. When that finds none, a heading label reads the
//! block right after it, and so does a bold label that ends its block (nothing after it but
//! punctuation). A review of several plans has several; the
//! reviewer's risk is the highest.

use super::blocks::{Block, Kind};
use super::model::Level;
use super::words::{levels, phrase_end};

/// The label phrases.
const LABELS: [&str; 2] = ["risk assessment", "overall risk"];

/// Where a risk label in `block` ends (byte offset in its text), if it has one.
fn label_end(block: &Block) -> Option<usize> {
    let find = |text: &str| LABELS.iter().filter_map(|l| phrase_end(text, l)).min();
    match block.kind {
        Kind::Heading(_) => find(&block.text),
        Kind::Text => block.strong.iter().find_map(|range| {
            let inner = block.text.get(range.clone())?;
            find(inner).map(|end| range.start + end)
        }),
    }
}

/// The highest risk level labelled in `blocks`.
pub fn risk(blocks: &[Block]) -> Option<Level> {
    let mut highest = None;
    for (index, block) in blocks.iter().enumerate() {
        let Some(end) = label_end(block) else {
            continue;
        };
        let rest = block.text.get(end..).unwrap_or_default();
        let mut found = levels(rest).max();
        let reads_on = block.kind != Kind::Text || !rest.chars().any(char::is_alphanumeric);
        if found.is_none() && reads_on {
            found = blocks
                .get(index + 1)
                .filter(|next| next.kind == Kind::Text)
                .and_then(|next| levels(&next.text).max());
        }
        highest = highest.max(found);
    }
    highest
}

#[cfg(test)]
mod tests {
    use super::super::blocks::sections;
    use super::*;

    fn of(review: &str) -> Option<Level> {
        let text = format!("## R Review\n\n{review}");
        risk(&sections(&text)[0].blocks)
    }

    #[test]
    fn labels_and_paragraphs() {
        assert_eq!(
            of("**Risk Assessment:** MEDIUM — fine."),
            Some(Level::Medium)
        );
        assert_eq!(of("**Risk Assessment: high**"), Some(Level::High));
        assert_eq!(
            of("### Risk Assessment\n\nLow. Nothing else."),
            Some(Level::Low)
        );
        assert_eq!(
            of("### Risk Assessment: LOW\n\nHIGH later."),
            Some(Level::Low)
        );
        assert_eq!(of("**Overall risk**\n\nmedium"), Some(Level::Medium));
        assert_eq!(
            of("### Risk Assessment (plan 1)\n\nhigh"),
            Some(Level::High)
        );
        assert_eq!(of("**Overall risk** of plan 1\n\nhigh"), None);
        assert_eq!(of("Risk Assessment: HIGH (not a label)"), None);
        assert_eq!(of("LOW before **Overall risk:** none"), None);
        assert_eq!(
            of("#### Plan 1\n**Risk Assessment:** LOW\n\n#### Plan 2\n**Risk Assessment:** HIGH"),
            Some(Level::High)
        );
        assert_eq!(
            of("| **Overall risk** | MEDIUM |\n|---|---|"),
            Some(Level::Medium)
        );
        assert_eq!(of("```\n**Risk Assessment:** HIGH\n```"), None);
    }
}
