//! The Markdown structure of a REVIEWS.md body, from one CommonMark parse (pulldown-cmark):
//! the top-level `##` sections and, inside each, its text blocks (paragraphs, headings, table
//! rows, list-item text) with their bold spans and the list items they sit in.
//!
//! Code blocks (fenced or indented), HTML blocks and inline HTML contribute no text, so
//! look-alike tokens inside them never count. A heading is a section boundary only at the top
//! level (not inside a list or quote); the review text under a reviewer's heading was nested
//! below `##` when REVIEWS.md was written, so only gsd-lane's own headings are found.

use std::ops::Range;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// What a block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A heading of this level (3-6 inside a reviewer section).
    Heading(u8),
    /// A paragraph, a table row, or the text of a list item.
    Text,
}

/// One text block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Heading or text.
    pub kind: Kind,
    /// The rendered text (inline code included, markup removed, breaks as spaces, table cells
    /// joined by ` | `).
    pub text: String,
    /// Byte ranges of bold (`**…**`) spans in `text`.
    pub strong: Vec<Range<usize>>,
    /// The block's first visible text is bold (a bold label).
    pub lead_strong: bool,
    /// Serial numbers of the list items the block sits in, outermost first.
    pub items: Vec<u32>,
}

impl Block {
    /// The text of the first bold span, when the block starts with one.
    pub fn label(&self) -> Option<&str> {
        if !self.lead_strong {
            return None;
        }
        self.strong.first().and_then(|r| self.text.get(r.clone()))
    }
}

/// A top-level `##` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading's text.
    pub heading: String,
    /// The byte range of the section's content in the parsed text (after the heading line,
    /// up to the next top-level `##` heading or the end).
    pub content: Range<usize>,
    /// Its text blocks, in order.
    pub blocks: Vec<Block>,
}

/// The walk's state.
#[derive(Default)]
struct Walker {
    sections: Vec<Section>,
    text: String,
    strong: Vec<Range<usize>>,
    strong_open: Vec<usize>,
    lead_strong: bool,
    heading: Option<u8>,
    items: Vec<u32>,
    next_item: u32,
    containers: usize,
    skipping: usize,
    section_heading: bool,
}

impl Walker {
    /// Ends the current block, keeping it when it has text and a section is open.
    fn flush(&mut self) {
        // The buffer keeps its capacity: each kept block costs one exact-size allocation.
        let keep = !self.text.trim().is_empty();
        let text = if keep {
            self.text.as_str().to_owned()
        } else {
            String::new()
        };
        self.text.clear();
        let strong = std::mem::take(&mut self.strong);
        self.strong_open.clear();
        let lead_strong = std::mem::take(&mut self.lead_strong);
        if !keep {
            return;
        }
        if let Some(section) = self.sections.last_mut() {
            section.blocks.push(Block {
                kind: self.heading.map_or(Kind::Text, Kind::Heading),
                text,
                strong,
                lead_strong,
                items: self.items.clone(),
            });
        }
    }

    fn push(&mut self, text: &str) {
        if self.skipping == 0 {
            self.text.push_str(text);
        }
    }

    fn start(&mut self, tag: &Tag<'_>, at: Range<usize>) {
        match tag {
            Tag::Heading { level, .. } => {
                self.flush();
                if *level == HeadingLevel::H2 && self.containers == 0 {
                    if let Some(section) = self.sections.last_mut() {
                        section.content.end = at.start;
                    }
                    self.section_heading = true;
                } else {
                    self.heading = Some(*level as u8);
                }
            }
            Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::MetadataBlock(_) => {
                self.flush();
                self.skipping += 1;
            }
            Tag::List(_) | Tag::BlockQuote(_) => {
                self.flush();
                self.containers += 1;
            }
            Tag::Item => {
                self.flush();
                self.items.push(self.next_item);
                self.next_item = self.next_item.wrapping_add(1);
            }
            Tag::TableCell if !self.text.trim().is_empty() => self.push(" | "),
            Tag::Strong => {
                if self.text.trim().is_empty() && self.skipping == 0 {
                    self.lead_strong = true;
                }
                self.strong_open.push(self.text.len());
            }
            Tag::Paragraph
            | Tag::Table(_)
            | Tag::TableHead
            | Tag::TableRow
            | Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition => self.flush(),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd, at: Range<usize>, len: usize) {
        match tag {
            TagEnd::Heading(_) => {
                if std::mem::take(&mut self.section_heading) {
                    let heading = std::mem::take(&mut self.text).trim().to_owned();
                    self.strong.clear();
                    self.strong_open.clear();
                    self.lead_strong = false;
                    self.sections.push(Section {
                        heading,
                        content: at.end..len,
                        blocks: Vec::new(),
                    });
                } else {
                    self.flush();
                    self.heading = None;
                }
            }
            TagEnd::CodeBlock | TagEnd::HtmlBlock | TagEnd::MetadataBlock(_) => {
                self.skipping = self.skipping.saturating_sub(1);
            }
            TagEnd::List(_) | TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers = self.containers.saturating_sub(1);
            }
            TagEnd::Item => {
                self.flush();
                self.items.pop();
            }
            TagEnd::Strong => {
                if let Some(start) = self.strong_open.pop() {
                    self.strong.push(start..self.text.len());
                }
            }
            TagEnd::Paragraph
            | TagEnd::Table
            | TagEnd::TableHead
            | TagEnd::TableRow
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => self.flush(),
            _ => {}
        }
    }
}

/// Parses `body` and returns its top-level `##` sections (text before the first is dropped).
pub fn sections(body: &str) -> Vec<Section> {
    let mut walker = Walker::default();
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for (event, at) in Parser::new_ext(body, options).into_offset_iter() {
        match event {
            Event::Start(tag) => walker.start(&tag, at),
            Event::End(tag) => walker.end(tag, at, body.len()),
            Event::Text(text) | Event::Code(text) => walker.push(&text),
            Event::SoftBreak | Event::HardBreak => walker.push(" "),
            Event::Rule => walker.flush(),
            _ => {}
        }
    }
    walker.flush();
    walker.sections
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_blocks_and_code() {
        let body = "intro\n\n## A Review\n\n**Concerns:**\n- [HIGH] `src/a.rs:3` x\n  - nested\n\n```\n## Not A Review\nsrc/b.rs:1\n```\n\n| **Risk Assessment** | LOW |\n|---|---|\n\n---\n\n## B Review\n\n### Sub\ntext\n";
        let sections = sections(body);
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[0].heading, "A Review");
        let a = &sections[0].blocks;
        assert_eq!(a[0].label(), Some("Concerns:"));
        assert_eq!(a[1].text, "[HIGH] src/a.rs:3 x");
        assert_eq!(a[1].items.len(), 1);
        assert_eq!(a[2].items.len(), 2);
        assert!(a.iter().all(|b| !b.text.contains("src/b.rs")));
        assert!(a.iter().any(|b| b.text == "Risk Assessment | LOW"));
        assert_eq!(sections[1].blocks[0].kind, Kind::Heading(3));
        assert_eq!(&body[sections[1].content.clone()], "\n### Sub\ntext\n");
        assert!(body[sections[0].content.clone()].ends_with("---\n\n"));
    }

    #[test]
    fn an_unclosed_fence_hides_what_follows() {
        let sections = sections("## A Review\n\n```\nopen\n\n## B Review\n\nx\n");
        assert_eq!(sections.len(), 1);
    }
}
