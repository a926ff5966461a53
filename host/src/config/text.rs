//! ECMAScript whitespace trimming shared by every config string cleaner.
//!
//! `str::trim` is not used on purpose: it keeps U+FEFF and removes U+0085, whereas the reference
//! trims exactly the ECMAScript set (trust.md §6.3 step 1).

/// Reports whether `c` belongs to the ECMAScript whitespace set of trust.md §6.3 step 1.
pub fn is_ecma_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'..='\u{000D}'
            | '\u{0020}'
            | '\u{00A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// Returns `s` without leading and trailing ECMAScript whitespace.
pub fn trim_ecma_whitespace(s: &str) -> &str {
    s.trim_matches(is_ecma_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_the_full_ecmascript_set() {
        let all = "\u{9}\u{a}\u{b}\u{c}\u{d} \u{a0}\u{1680}\u{2000}\u{2005}\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}";
        assert_eq!(trim_ecma_whitespace(&format!("{all}x y{all}")), "x y");
    }

    #[test]
    fn keeps_next_line_character() {
        assert_eq!(trim_ecma_whitespace("\u{85}x\u{85}"), "\u{85}x\u{85}");
    }

    #[test]
    fn whitespace_only_becomes_empty() {
        assert_eq!(trim_ecma_whitespace(" \t\n\u{feff}"), "");
    }
}
