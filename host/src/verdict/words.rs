//! Whole words: the severity words LOW/MEDIUM/HIGH in any case, and label phrases.
//!
//! A word is a maximal run of letters, digits and `_`; so `[HIGH]`, `HIGH:`, `(high)`,
//! `**High**` and `high-risk` hold the word `high`, while `highly` and `HIGH_RISK` do not.

use super::model::Level;

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The words of `text`, in order.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
}

/// The level a word names, in any case.
fn level_of(word: &str) -> Option<Level> {
    [Level::Low, Level::Medium, Level::High]
        .into_iter()
        .find(|level| word.eq_ignore_ascii_case(level.as_str()))
}

/// Every severity word of `text`, in order.
pub fn levels(text: &str) -> impl Iterator<Item = Level> + '_ {
    words(text).filter_map(level_of)
}

/// The first severity word of `text`.
pub fn first_level(text: &str) -> Option<Level> {
    levels(text).next()
}

/// Whether `text` holds `word` as a whole word, in any case.
pub fn has_word(text: &str, word: &str) -> bool {
    words(text).any(|w| w.eq_ignore_ascii_case(word))
}

/// The byte offset just after the first occurrence of `phrase`'s words (given separated by
/// single spaces) as consecutive whole words of `text`, in any case.
pub fn phrase_end(text: &str, phrase: &str) -> Option<usize> {
    let wanted: Vec<&str> = phrase.split(' ').collect();
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (is_word_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push(s..i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push(s..text.len());
    }
    spans.windows(wanted.len()).find_map(|window| {
        let same = window.iter().zip(&wanted).all(|(span, word)| {
            text.get(span.clone())
                .is_some_and(|w| w.eq_ignore_ascii_case(word))
        });
        same.then(|| window.last().map_or(0, |span| span.end))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_words() {
        assert_eq!(first_level("**HIGH** x"), Some(Level::High));
        assert_eq!(first_level("x [Medium]"), Some(Level::Medium));
        assert_eq!(first_level("Severity: low"), Some(Level::Low));
        assert_eq!(first_level("(high)"), Some(Level::High));
        assert_eq!(first_level("highly lowered HIGH_RISK"), None);
        assert_eq!(levels("LOW then high").max(), Some(Level::High));
    }

    #[test]
    fn phrases() {
        assert_eq!(phrase_end("Overall  Risk: HIGH", "overall risk"), Some(13));
        assert_eq!(phrase_end("Overall-riskiness", "overall risk"), None);
        assert_eq!(
            phrase_end("the Overall risk: HIGH", "overall risk"),
            Some(16)
        );
        assert_eq!(phrase_end("risk assessments", "risk assessment"), None);
        assert!(has_word("Key Concerns:", "concerns"));
        assert!(!has_word("concerned", "concerns"));
    }
}
