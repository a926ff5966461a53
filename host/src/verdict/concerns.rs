//! Concerns: inside a section labelled "Concerns" (a heading holding the word, any level; or
//! a block that starts with bold text holding it), each top-level bullet or numbered item
//! counts once, rated by the first whole-word HIGH/MEDIUM/LOW in it (nested items and
//! paragraphs of the item included), else unrated.
//!
//! A heading label's section ends at the next heading of the same or a higher level; a bold
//! label's at the next heading, at the next block starting with bold text at the label's own
//! list depth (a sibling label such as `**Suggestions:**`), or where the list item holding the
//! label ends. "Top-level" is one list level below the label.

use super::blocks::{Block, Kind};
use super::model::Level;
use super::words::{first_level, has_word};

/// One concern: its rating and the blocks it spans (indexes into the section's blocks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concern {
    /// The first severity word, if any.
    pub level: Option<Level>,
    /// Its blocks.
    pub blocks: Vec<usize>,
}

/// An open "Concerns" section.
struct Scope {
    /// The label heading's level; `None` for a bold label.
    heading: Option<u8>,
    /// The list items holding the label (a concern is one level below them).
    items: Vec<u32>,
}

impl Scope {
    /// The item a block counts under, or why the block ends the scope.
    fn place(&self, block: &Block) -> Place {
        let depth = self.items.len();
        if block.items.get(..depth) != Some(self.items.as_slice()) {
            return Place::Ends;
        }
        match block.items.get(depth) {
            Some(&item) => Place::Item(item),
            None if block.lead_strong && self.heading.is_none() => Place::Ends,
            None => Place::Between,
        }
    }
}

/// Where a block falls inside a scope.
enum Place {
    /// In the concern item with this serial.
    Item(u32),
    /// At the label's level, not a label: between items.
    Between,
    /// It ends the scope.
    Ends,
}

/// Whether `block` labels a "Concerns" section.
fn is_label(block: &Block) -> bool {
    match block.kind {
        Kind::Heading(_) => has_word(&block.text, "concerns"),
        Kind::Text => block.label().is_some_and(|l| has_word(l, "concerns")),
    }
}

/// The concerns of a reviewer section's blocks, in order.
pub fn concerns(blocks: &[Block]) -> Vec<Concern> {
    let mut found: Vec<Concern> = Vec::new();
    let mut scope: Option<Scope> = None;
    let mut current: Option<u32> = None;
    for (index, block) in blocks.iter().enumerate() {
        if let (Some(open), Kind::Heading(level)) = (&scope, block.kind) {
            if open.heading.is_none_or(|label| level <= label) {
                scope = None;
            }
        }
        if let Some(open) = &scope {
            match open.place(block) {
                Place::Item(item) => {
                    if current != Some(item) {
                        current = Some(item);
                        found.push(Concern {
                            level: None,
                            blocks: Vec::new(),
                        });
                    }
                    if let Some(concern) = found.last_mut() {
                        concern.level = concern.level.or_else(|| first_level(&block.text));
                        concern.blocks.push(index);
                    }
                    continue;
                }
                Place::Between => {
                    current = None;
                    continue;
                }
                Place::Ends => scope = None,
            }
        }
        current = None;
        if is_label(block) {
            scope = Some(Scope {
                heading: match block.kind {
                    Kind::Heading(level) => Some(level),
                    Kind::Text => None,
                },
                items: block.items.clone(),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::blocks::sections;
    use super::*;

    fn of(review: &str) -> Vec<Option<Level>> {
        let text = format!("## R Review\n\n{review}");
        concerns(&sections(&text)[0].blocks)
            .into_iter()
            .map(|c| c.level)
            .collect()
    }

    use Level::{High, Low, Medium};

    #[test]
    fn heading_sections() {
        assert_eq!(
            of("### Concerns\n- **HIGH** a\n  - nested LOW\n- b (medium)\n- c\n\n### Suggestions\n- HIGH not a concern"),
            vec![Some(High), Some(Medium), None]
        );
        assert_eq!(
            of("#### Concerns\n1. x: LOW\n2. y\n\n##### Detail\n- HIGH still inside\n\n#### Risk\n- HIGH"),
            vec![Some(Low), None, Some(High)]
        );
    }

    #[test]
    fn bold_labels() {
        assert_eq!(
            of("**Concerns:**\n* [MEDIUM] a\n* b — Severity: low\n\n**Suggestions:**\n* HIGH no"),
            vec![Some(Medium), Some(Low)]
        );
        assert_eq!(
            of("- **Summary:** ok\n- **Concerns:**\n  - HIGH: a\n  - b\n- **Suggestions:**\n  - LOW no"),
            vec![Some(High), None]
        );
        assert_eq!(of("I have no **concerns** here.\n- HIGH x"), vec![]);
    }

    #[test]
    fn code_never_counts() {
        assert_eq!(
            of("### Concerns\n```\n- HIGH fake\n```\n- LOW real"),
            vec![Some(Low)]
        );
    }
}
