//! Reading a large JSON document without a copy of it per layer: members as borrowed raw text,
//! and a string member decoded step by step.
//!
//! A chat completion is one JSON body (up to the 16 MiB body cap) whose answer is one string.
//! Parsed into a `serde_json::Value`, the answer is held three times while the body is: the
//! body, serde_json's scratch buffer for the escaped string, and the decoded string. Here the
//! members are borrowed spans of the body ([`RawValue`], checked by serde_json as they are
//! skipped), and a string is decoded by serde_json in pieces of [`STEP`] bytes into one string
//! sized once, so the answer is held twice at most (the body and its text) and the scratch
//! stays one piece long. Every escape is still decoded by serde_json itself; this module only
//! cuts the literal where no escape or character is split.

use std::collections::HashMap;

use serde_json::value::RawValue;

/// Escaped text decoded per piece.
const STEP: usize = 64 * 1024;

/// The members of the JSON object `text` as raw spans of it (the last of duplicate names
/// wins, as in `serde_json::Value`); `None` when it is not one valid JSON object.
pub fn members(text: &str) -> Option<HashMap<String, &RawValue>> {
    serde_json::from_str(text).ok()
}

/// The first element of the JSON array `text`, as a raw span; `None` when it is not an array
/// or is empty.
pub fn first_element(text: &str) -> Option<&RawValue> {
    serde_json::from_str::<Vec<&RawValue>>(text)
        .ok()?
        .first()
        .copied()
}

/// The text of the JSON string literal `literal` (quotes included), or `None` when it is not
/// a valid string literal (a lone surrogate escape among them, as serde_json refuses it).
///
/// The result is reserved once at the literal's length (decoding never lengthens text) and
/// filled a piece at a time, so besides the literal only the result and one piece are held.
pub fn string(literal: &str) -> Option<String> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
    let mut text = String::with_capacity(inner.len());
    let mut quoted = String::with_capacity(STEP + 16);
    let mut rest = inner;
    while !rest.is_empty() {
        let (piece, after) = rest.split_at(cut(rest, STEP));
        quoted.clear();
        quoted.push('"');
        quoted.push_str(piece);
        quoted.push('"');
        text.push_str(&serde_json::from_str::<String>(&quoted).ok()?);
        rest = after;
    }
    Some(text)
}

/// The first place at or after `at` bytes (or the end) where `escaped` may be cut: outside
/// every escape (`\x`, `\uXXXX`, and a surrogate pair `\uD8xx\uDCxx` kept whole) and on a
/// character boundary. Escapes are ASCII and never inside a multi-byte character, so bytes
/// other than `\` are stepped over one at a time and the cut moved to the next boundary.
fn cut(escaped: &str, at: usize) -> usize {
    let bytes = escaped.as_bytes();
    let mut i = 0;
    while i < at && i < bytes.len() {
        i += if bytes.get(i) == Some(&b'\\') {
            escape_len(bytes.get(i..).unwrap_or_default())
        } else {
            1
        };
    }
    let mut i = i.min(bytes.len());
    while !escaped.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The length of the escape `escape` starts with: 12 for a high surrogate followed by another
/// `\u` escape (a pair, or a lone surrogate serde_json refuses either way), 6 for `\uXXXX`, 2
/// for the others.
fn escape_len(escape: &[u8]) -> usize {
    if escape.get(1) != Some(&b'u') {
        return 2;
    }
    let high = escape
        .get(2..6)
        .and_then(|hex| std::str::from_utf8(hex).ok())
        .and_then(|hex| u16::from_str_radix(hex, 16).ok())
        .is_some_and(|unit| (0xD800..=0xDBFF).contains(&unit));
    if high && escape.get(6..8) == Some(b"\\u") {
        12
    } else {
        6
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    /// `string` agrees with serde_json's own decoding for every cut.
    fn agrees(text: &str) {
        let literal = serde_json::to_string(text).expect("encode");
        let inner = &literal[1..literal.len() - 1];
        for at in 0..=inner.len() {
            let (piece, rest) = inner.split_at(cut(inner, at));
            let whole = |part: &str| serde_json::from_str::<String>(&format!("\"{part}\""));
            assert_eq!(
                whole(piece).expect("a cut keeps escapes whole") + &whole(rest).expect("rest"),
                text,
                "cut at {at}"
            );
        }
        assert_eq!(string(&literal).as_deref(), Some(text));
    }

    #[test]
    fn cuts_never_split_an_escape_a_pair_or_a_character() {
        agrees("plain");
        agrees("a\nb\t\"c\"\\d/\u{1}\u{7f}");
        agrees("é😀€ mixed \u{1f600}\n\u{fffd}");
        // A surrogate pair written as two escapes, as some servers send it.
        let paired = "\"x\\ud83d\\ude00y\"";
        assert_eq!(string(paired).as_deref(), Some("x\u{1f600}y"));
        for at in 0..14 {
            let inner = &paired[1..paired.len() - 1];
            let at = cut(inner, at);
            assert!(!(2..13).contains(&at), "cut {at} splits the pair");
        }
    }

    #[test]
    fn long_text_is_decoded_whole_across_pieces() {
        let line = "* **MEDIUM** `src/a.rs:1`: \"quoted\" \\ é😀\n";
        let text = line.repeat(3 * STEP / line.len() + 7);
        let literal = serde_json::to_string(&text).expect("encode");
        let decoded = string(&literal).expect("decodes");
        assert!(decoded == text, "the decoded text differs");
        assert!(
            decoded.capacity() <= literal.len(),
            "reserved more than the literal"
        );
    }

    #[test]
    fn what_serde_json_refuses_is_refused() {
        for literal in [
            "\"lone \\ud800 high\"",
            "\"lone \\udc00 low\"",
            "\"\\ud800\\u0041\"",
            "\"bad \\x escape\"",
            "\"cut \\u12\"",
            "\"raw \n newline\"",
            "no quotes",
            "\"",
            "7",
        ] {
            assert_eq!(
                string(literal),
                serde_json::from_str::<String>(literal).ok(),
                "{literal}"
            );
        }
        assert_eq!(string("\"\"").as_deref(), Some(""));
    }

    #[test]
    fn members_and_elements_are_spans_of_the_text() {
        let body = r#"{"a": [1, {"b": "c"}], "a": "last", "d": null}"#;
        let top = members(body).expect("an object");
        assert_eq!(top.get("a").map(|raw| raw.get()), Some("\"last\""));
        assert_eq!(top.get("d").map(|raw| raw.get()), Some("null"));
        assert!(members("[1]").is_none());
        assert!(members("{\"a\": 1} trailing").is_none());
        assert_eq!(
            first_element("[{\"b\": 1}, 2]").map(RawValue::get),
            Some("{\"b\": 1}")
        );
        assert_eq!(first_element("[]").map(RawValue::get), None);
        assert_eq!(first_element("{}").map(RawValue::get), None);
    }
}
