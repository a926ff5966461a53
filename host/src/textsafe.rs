//! The one place that knows which characters can steer a terminal or hide text: it strips them
//! from lane-supplied text before it reaches `REVIEWS.md` ([`strip_controls`]), and it is the one
//! helper every command uses for overlay- or lane-controlled text it prints
//! ([`for_terminal`] for a name on one line, [`for_terminal_block`] for a block of lines,
//! [`json_for_terminal`] for JSON). Those three use [`crate::output`]'s one table of
//! terminal-unsafe characters ([`crate::output::is_unsafe_for_terminal`]); validation refuses the
//! same characters in a manifest's `title` and `reviewsSection` ([`first_unsafe_for_terminal`]).
//!
//! [`strip_controls`], for `REVIEWS.md`:
//! Removed: ESC sequences (CSI, OSC / DCS / SOS / PM / APC strings, and two-character escapes),
//! their 8-bit C1 forms, every other C0 control except `\n` and `\t` (so `\r\n` becomes `\n`),
//! DEL, the remaining C1 controls, and the Unicode bidi embeddings, overrides and isolates.
//! Everything else, including malformed or unterminated sequences' printable remainder, is kept:
//! once the introducer is gone it is inert text, and dropping it could swallow the review.

/// True for the Unicode bidi embedding, override and isolate controls
/// (U+202A–U+202E, U+2066–U+2069) that reorder what a reader sees.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// True for a character [`strip_controls`] never lets through: C0 controls other than `\n` and
/// `\t`, DEL, C1 controls and bidi controls.
pub fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// Overlay- or lane-controlled text shown on one line of a terminal (a section, a title, a
/// display name, a subject, a reason): every control character (line feed and tab included),
/// bidi control and invisible format character becomes a visible `\u{…}` escape, so the text
/// cannot move the cursor, retitle the window, reorder or hide what the line shows, or start a
/// line of its own.
pub fn for_terminal(text: &str) -> String {
    crate::output::escape_text(text)
}

/// [`for_terminal`] for a block of several lines (a help page, a completion script, a report):
/// line feeds and tabs are kept, everything else [`for_terminal`] escapes is escaped.
pub fn for_terminal_block(text: &str) -> String {
    crate::output::neutralize(text)
}

/// The first character of `text` that [`for_terminal`] would escape, with its character
/// index; `None` when the text can be shown as it is.
pub fn first_unsafe_for_terminal(text: &str) -> Option<(usize, char)> {
    text.chars()
        .enumerate()
        .find(|(_, c)| crate::output::is_unsafe_for_terminal(*c))
}

/// JSON text as `serde_json` writes it, with every terminal-unsafe character inside its strings
/// written as a `\uXXXX` escape (a UTF-16 surrogate pair above U+FFFF): a JSON reader gets the
/// very same value, a terminal gets no raw control, bidi or invisible character. Outside strings
/// JSON holds only ASCII punctuation, digits, letters and whitespace, which are kept.
pub fn json_for_terminal(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if crate::output::is_unsafe_for_terminal(c) && !matches!(c, '\n' | '\t') {
            let mut units = [0_u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// How a string-type sequence (OSC, DCS, SOS, PM, APC) ends.
enum Body {
    /// CSI: parameter and intermediate bytes, then one final byte.
    Csi,
    /// A control string, ended by BEL (OSC only in practice, accepted for all) or ST.
    Text,
}

/// What follows an introducer (`ESC x` or its C1 form), if it opens a sequence with a body.
fn body_of(introducer: char) -> Option<Body> {
    match introducer {
        '[' | '\u{9B}' => Some(Body::Csi),
        ']' | 'P' | 'X' | '^' | '_' | '\u{9D}' | '\u{90}' | '\u{98}' | '\u{9E}' | '\u{9F}' => {
            Some(Body::Text)
        }
        _ => None,
    }
}

/// Length in bytes of a complete CSI body starting at `rest`, or `None` when it is malformed
/// or unterminated.
fn csi_len(rest: &str) -> Option<usize> {
    for (at, c) in rest.char_indices() {
        match c {
            '\u{30}'..='\u{3F}' | '\u{20}'..='\u{2F}' => {}
            '\u{40}'..='\u{7E}' => return Some(at + 1),
            _ => return None,
        }
    }
    None
}

/// Length in bytes of a control string plus its terminator (BEL, `ESC \` or U+009C), or `None`
/// when another control character (a line break, a new introducer) or the end of text comes
/// first. Stopping at every control keeps [`strip_controls`] linear: no two scans overlap.
fn text_len(rest: &str) -> Option<usize> {
    let mut chars = rest.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '\u{07}' | '\u{9C}' => return Some(at + c.len_utf8()),
            '\u{1B}' => {
                return chars
                    .peek()
                    .filter(|(_, next)| *next == '\\')
                    .map(|(next_at, _)| next_at + 1);
            }
            _ if c.is_control() => return None,
            _ => {}
        }
    }
    None
}

/// Length in bytes of the rest of a two-character escape (`ESC` + intermediates 0x20–0x2F +
/// final 0x30–0x7E), or `None` when `rest` does not start one.
fn escape_len(rest: &str) -> Option<usize> {
    for (at, c) in rest.char_indices() {
        match c {
            '\u{20}'..='\u{2F}' => {}
            '\u{30}'..='\u{7E}' => return Some(at + 1),
            _ => return None,
        }
    }
    None
}

/// Returns `text` without terminal control sequences or unsafe characters (see the module
/// documentation). Linear in the length of `text`; never allocates more than `text.len()`.
pub fn strip_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) {
        at += c.len_utf8();
        let rest = text.get(at..).unwrap_or_default();
        let (introducer, after) = match c {
            '\u{1B}' => match rest.chars().next() {
                Some(next) if body_of(next).is_some() => (Some(next), at + next.len_utf8()),
                _ => {
                    at += escape_len(rest).unwrap_or(0);
                    continue;
                }
            },
            '\u{9B}' | '\u{9D}' | '\u{90}' | '\u{98}' | '\u{9E}' | '\u{9F}' => (Some(c), at),
            _ if is_unsafe(c) => continue,
            _ => {
                out.push(c);
                continue;
            }
        };
        let body = text.get(after..).unwrap_or_default();
        let len = match introducer.and_then(body_of) {
            Some(Body::Csi) => csi_len(body),
            Some(Body::Text) => text_len(body),
            None => None,
        };
        // A malformed or unterminated sequence loses only its introducer.
        at = after + len.unwrap_or(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_input_comes_out_safe_and_safe_text_is_kept(
            noise in any::<String>(),
            plain in "[a-zA-Z0-9 #`~\\n\\t.,;:()\\[\\]-]{0,60}",
        ) {
            let clean = strip_controls(&noise);
            prop_assert!(!clean.chars().any(is_unsafe), "{:?}", clean);
            prop_assert_eq!(strip_controls(&clean), clean.clone());
            prop_assert_eq!(strip_controls(&plain), plain.clone());
        }
    }

    #[test]
    fn csi_osc_and_two_character_escapes_go() {
        assert_eq!(strip_controls("a\u{1b}[1;31mred\u{1b}[0m b"), "ared b");
        assert_eq!(strip_controls("\u{1b}[?25l\u{1b}[2K\u{1b}[1Gok"), "ok");
        assert_eq!(
            strip_controls("\u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{1b}\\ end"),
            "link end"
        );
        assert_eq!(strip_controls("\u{1b}]0;title\u{9c}t"), "t");
        assert_eq!(strip_controls("\u{1b}Pq#0;2;0;0;0\u{1b}\\x"), "x");
        assert_eq!(strip_controls("\u{1b}(B\u{1b}7\u{1b}=x\u{1b}c"), "x");
        assert_eq!(strip_controls("\u{9b}31mx\u{9d}2;t\u{7}y"), "xy");
    }

    #[test]
    fn c0_del_c1_and_bidi_go_newline_and_tab_stay() {
        assert_eq!(
            strip_controls("a\r\nb\tc\u{7}\u{8}\u{0}\u{7f}\n"),
            "a\nb\tc\n"
        );
        assert_eq!(strip_controls("x\u{85}\u{8d}y"), "xy");
        assert_eq!(
            strip_controls("if \u{202e}nimda\u{202c} \u{2066}a\u{2069} \u{202a}"),
            "if nimda a "
        );
        assert_eq!(strip_controls("héllo — ✓ 日本"), "héllo — ✓ 日本");
    }

    #[test]
    fn malformed_or_unterminated_sequences_lose_only_their_introducer() {
        assert_eq!(
            strip_controls("\u{1b}]0;never ends\nnext"),
            "0;never ends\nnext"
        );
        assert_eq!(strip_controls("\u{1b}[12"), "12");
        assert_eq!(strip_controls("\u{1b}[1\u{e9}x"), "1\u{e9}x");
        assert_eq!(strip_controls("end\u{1b}"), "end");
        assert_eq!(strip_controls("\u{1b}\u{e9}"), "\u{e9}");
        assert_eq!(strip_controls("\u{1b}]x\u{1b}y"), "x");
    }

    #[test]
    fn many_unterminated_introducers_stay_linear_and_keep_their_text() {
        let text = "\u{9d}ab".repeat(200_000);
        assert_eq!(strip_controls(&text), "ab".repeat(200_000));
        let text = "\u{1b}]x".repeat(200_000);
        assert_eq!(strip_controls(&text), "x".repeat(200_000));
    }

    #[test]
    fn terminal_helpers_escape_what_could_steer_a_terminal() {
        let hostile = "A\u{1b}]0;pwned\u{7}\rB\u{9b}2J\u{7f}\u{202e}C\u{200b}D\nE\tF";
        let line = for_terminal(hostile);
        assert!(
            !line.chars().any(crate::output::is_unsafe_for_terminal),
            "{line}"
        );
        assert!(
            line.contains("\\u{1b}]0;pwned") && line.contains("\\u{202e}"),
            "{line}"
        );
        let block = for_terminal_block(hostile);
        assert!(block.contains('\n') && block.contains('\t') && !block.contains('\r'));
        assert_eq!(first_unsafe_for_terminal("Acme — Review"), None);
        assert_eq!(
            first_unsafe_for_terminal("ab\u{200b}"),
            Some((2, '\u{200b}'))
        );
    }

    #[test]
    fn json_for_terminal_keeps_the_value_and_drops_every_raw_control() {
        let value = serde_json::json!({
            "section": "A\u{1b}[2J\u{9b}\u{7f}\u{202e}\u{200b}\u{e0041}\u{2028}B",
            "plain": "héllo ✓",
        });
        for text in [
            serde_json::to_string_pretty(&value).expect("json"),
            value.to_string(),
        ] {
            let safe = json_for_terminal(&text);
            assert!(
                !safe
                    .chars()
                    .any(|c| crate::output::is_unsafe_for_terminal(c) && c != '\n'),
                "{safe}"
            );
            let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
            assert_eq!(back, value);
        }
    }

    #[test]
    fn output_never_holds_an_unsafe_character() {
        let mut all = String::new();
        for code in (0_u32..0x250).chain(0x2000..0x2070) {
            if let Some(c) = char::from_u32(code) {
                all.push(c);
                all.push('\u{1b}');
            }
        }
        let clean = strip_controls(&all);
        assert!(!clean.chars().any(is_unsafe), "{clean:?}");
    }
}
