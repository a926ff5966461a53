//! Locating a field path in JSON text, for line:column in diagnostics.
//!
//! The scanner works on bytes (every JSON structural character is ASCII, and UTF-8 never reuses
//! ASCII bytes inside a multi-byte character), never recurses, and tolerates invalid JSON: it
//! only looks for positions and returns the best one it finds. Cost is linear in the text for
//! each path segment, i.e. O(text length × path length).

use crate::manifest::path::{FieldPath, Segment};
use serde::Serialize;

/// A 1-based line and column in a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Position {
    /// The line number; LF and CRLF each end a line (a lone CR does not).
    pub line: usize,
    /// The column in Unicode scalar values from the line start (a leading BOM is not counted).
    pub column: usize,
}

/// Where one path segment was found: the position to report and the start of its value.
#[derive(Debug, Clone, Copy)]
struct Found {
    mark: usize,
    value: usize,
}

/// Returns the position of the deepest prefix of `path` that exists in `text`.
///
/// A key segment points at the opening quote of its key (the last one when a key repeats), an
/// index segment at the first character of its element, and the root at the first
/// non-whitespace character (1:1 when there is none).
pub fn locate(text: &str, path: &FieldPath) -> Position {
    let bytes = text.as_bytes();
    let first = skip_ws(bytes, bom_len(bytes));
    let root = if first < bytes.len() { first } else { 0 };
    let mut best = Found {
        mark: root,
        value: root,
    };
    for segment in path.segments() {
        let step = match segment {
            Segment::Key(key) => find_member(bytes, best.value, key),
            Segment::Index(index) => find_element(bytes, best.value, *index),
        };
        match step {
            Some(found) => best = found,
            None => break,
        }
    }
    position_of(bytes, best.mark)
}

/// Finds the last member named `key` of the object starting at `at`.
fn find_member(bytes: &[u8], at: usize, key: &str) -> Option<Found> {
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    let mut last = None;
    let mut i = at.saturating_add(1);
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            None | Some(b'}' | b']') => return last,
            Some(b',') => i = i.saturating_add(1),
            Some(b'"') => {
                let (name, after) = read_string(bytes, i);
                let colon = skip_ws(bytes, after);
                if bytes.get(colon) != Some(&b':') {
                    i = after;
                    continue;
                }
                let value = skip_ws(bytes, colon.saturating_add(1));
                if name == key {
                    last = Some(Found { mark: i, value });
                }
                i = skip_value(bytes, value);
            }
            Some(_) => i = skip_value(bytes, i),
        }
    }
}

/// Finds element number `index` of the array starting at `at`.
fn find_element(bytes: &[u8], at: usize, index: usize) -> Option<Found> {
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    let mut count = 0usize;
    let mut i = skip_ws(bytes, at.saturating_add(1));
    loop {
        match bytes.get(i) {
            None | Some(b']' | b'}') => return None,
            Some(_) if count == index => return Some(Found { mark: i, value: i }),
            Some(b',') => {
                count = count.saturating_add(1);
                i = skip_ws(bytes, i.saturating_add(1));
            }
            Some(_) => i = skip_ws(bytes, skip_value(bytes, i)),
        }
    }
}

/// Returns the index just past the value starting at `at`.
///
/// It advances at least one byte unless `at` holds whitespace, `,`, `}`, `]` or is the end.
fn skip_value(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at) {
        Some(b'"') => skip_string(bytes, at),
        Some(b'{' | b'[') => skip_container(bytes, at),
        _ => skip_scalar(bytes, at),
    }
}

/// Returns the index just past the container opening at `at` (the end if it never closes).
fn skip_container(bytes: &[u8], at: usize) -> usize {
    let mut depth = 0usize;
    let mut i = at;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'"' => {
                i = skip_string(bytes, i);
                continue;
            }
            b'{' | b'[' => depth = depth.saturating_add(1),
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i.saturating_add(1);
                }
            }
            _ => {}
        }
        i = i.saturating_add(1);
    }
    bytes.len()
}

/// Returns the index just past the string opening at `at` (the end if it never closes).
fn skip_string(bytes: &[u8], at: usize) -> usize {
    closing_quote(bytes, at).map_or(bytes.len(), |quote| quote.saturating_add(1))
}

/// Returns the index of the quote closing the string that opens at `at`, if there is one.
fn closing_quote(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at.saturating_add(1);
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'\\' => i = i.saturating_add(2),
            b'"' => return Some(i),
            _ => i = i.saturating_add(1),
        }
    }
    None
}

/// Returns the index of the first delimiter at or after `at` (a bare literal, number or garbage).
fn skip_scalar(bytes: &[u8], at: usize) -> usize {
    let mut i = at;
    while let Some(&byte) = bytes.get(i) {
        if is_ws(byte) || matches!(byte, b',' | b'{' | b'}' | b'[' | b']' | b'"') {
            break;
        }
        i = i.saturating_add(1);
    }
    i
}

/// Returns the index of the first non-whitespace byte at or after `at`.
fn skip_ws(bytes: &[u8], at: usize) -> usize {
    let mut i = at;
    while bytes.get(i).is_some_and(|&byte| is_ws(byte)) {
        i = i.saturating_add(1);
    }
    i
}

/// Reports whether `byte` is JSON whitespace.
fn is_ws(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// Returns the length of a leading UTF-8 byte-order mark (0 or 3).
fn bom_len(bytes: &[u8]) -> usize {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        3
    } else {
        0
    }
}

/// Decodes the string opening at `at`, returning its value and the index just past it.
fn read_string(bytes: &[u8], at: usize) -> (String, usize) {
    let quote = closing_quote(bytes, at);
    let body_end = quote.unwrap_or(bytes.len());
    let body = bytes
        .get(at.saturating_add(1)..body_end)
        .unwrap_or_default();
    (unescape(body), skip_string(bytes, at))
}

/// Resolves JSON escapes in a string body; malformed escapes are kept as their literal character.
fn unescape(body: &[u8]) -> String {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0usize;
    while let Some(&byte) = body.get(i) {
        if byte != b'\\' {
            out.push(byte);
            i = i.saturating_add(1);
            continue;
        }
        match body.get(i.saturating_add(1)) {
            Some(b'u') => {
                let (ch, used) = unicode_escape(body, i);
                let mut buffer = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buffer).as_bytes());
                i = i.saturating_add(used);
            }
            Some(&escaped) => {
                out.push(simple_escape(escaped));
                i = i.saturating_add(2);
            }
            None => break,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Maps the character after a backslash to the byte it stands for.
fn simple_escape(escaped: u8) -> u8 {
    match escaped {
        b'b' => 0x08,
        b'f' => 0x0C,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        other => other,
    }
}

/// Decodes the `\uXXXX` escape at `at`, joining a surrogate pair; returns the char and bytes used.
///
/// Malformed hex yields a literal `u`; an unpaired surrogate yields U+FFFD.
fn unicode_escape(body: &[u8], at: usize) -> (char, usize) {
    let Some(first) = hex4(body, at.saturating_add(2)) else {
        return ('u', 2);
    };
    let paired = body.get(at.saturating_add(6)..at.saturating_add(8)) == Some(b"\\u".as_slice());
    if (0xD800..0xDC00).contains(&first) && paired {
        if let Some(second) =
            hex4(body, at.saturating_add(8)).filter(|s| (0xDC00..0xE000).contains(s))
        {
            let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
            return (
                char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER),
                12,
            );
        }
    }
    (
        char::from_u32(first).unwrap_or(char::REPLACEMENT_CHARACTER),
        6,
    )
}

/// Reads four hexadecimal digits at `at` as a number.
fn hex4(body: &[u8], at: usize) -> Option<u32> {
    let digits = body.get(at..at.saturating_add(4))?;
    digits.iter().try_fold(0u32, |code, &digit| {
        Some(code * 16 + char::from(digit).to_digit(16)?)
    })
}

/// Converts a byte offset into a line and column.
fn position_of(bytes: &[u8], offset: usize) -> Position {
    let mut position = Position { line: 1, column: 1 };
    for i in bom_len(bytes)..offset.min(bytes.len()) {
        match bytes.get(i) {
            Some(b'\n') => {
                position.line = position.line.saturating_add(1);
                position.column = 1;
            }
            Some(b'\r') if bytes.get(i.saturating_add(1)) == Some(&b'\n') => {}
            Some(&byte) if is_continuation(byte) => {}
            _ => position.column = position.column.saturating_add(1),
        }
    }
    position
}

/// Reports whether `byte` continues a multi-byte UTF-8 character.
fn is_continuation(byte: u8) -> bool {
    (0x80..0xC0).contains(&byte)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Builds a position.
    fn at(line: usize, column: usize) -> Position {
        Position { line, column }
    }

    /// Parses a rendered field path.
    fn path(text: &str) -> FieldPath {
        FieldPath::parse(text).unwrap_or_default()
    }

    /// The 1-based column of the last occurrence of `needle` in a one-line ASCII `text`.
    fn last_column(text: &str, needle: &str) -> usize {
        text.rfind(needle).map_or(0, |offset| offset + 1)
    }

    const NESTED: &str = r#"{
  "id": "x",
  "reviewer": {
    "invoke": {
      "args": ["a", "b"]
    }
  }
}
"#;

    #[test]
    fn finds_nested_keys_and_elements() {
        assert_eq!(locate(NESTED, &FieldPath::root()), at(1, 1));
        assert_eq!(locate(NESTED, &path("id")), at(2, 3));
        assert_eq!(locate(NESTED, &path("reviewer")), at(3, 3));
        assert_eq!(locate(NESTED, &path("reviewer.invoke")), at(4, 5));
        assert_eq!(locate(NESTED, &path("reviewer.invoke.args")), at(5, 7));
        assert_eq!(locate(NESTED, &path("reviewer.invoke.args[0]")), at(5, 16));
        assert_eq!(locate(NESTED, &path("reviewer.invoke.args[1]")), at(5, 21));
    }

    #[test]
    fn missing_segments_fall_back_to_the_deepest_existing_prefix() {
        assert_eq!(locate(NESTED, &path("reviewer.invoke.outputArg")), at(4, 5));
        assert_eq!(locate(NESTED, &path("reviewer.invoke.args[5]")), at(5, 7));
        assert_eq!(locate(NESTED, &path("reviewer.invoke.args.x")), at(5, 7));
        assert_eq!(locate(NESTED, &path("id[0]")), at(2, 3));
        assert_eq!(locate(NESTED, &path("nope.deeper")), at(1, 1));
    }

    #[test]
    fn duplicate_keys_resolve_to_the_last_occurrence() {
        let text = r#"{"a": {"b": 1}, "a": {"c": 2}}"#;
        assert_eq!(locate(text, &path("a")), at(1, last_column(text, "\"a\"")));
        assert_eq!(
            locate(text, &path("a.c")),
            at(1, last_column(text, "\"c\""))
        );
        assert_eq!(
            locate(text, &path("a.b")),
            at(1, last_column(text, "\"a\""))
        );
    }

    #[test]
    fn keys_compare_after_unescaping() {
        let text = r#"{"\u0061": 1, "x\"y": [true], "\ud83d\ude00": 0, "t\tb": 2, "\uD800": 3}"#;
        assert_eq!(locate(text, &path("a")), at(1, 2));
        let quoted = FieldPath::root().key("x\"y").index(0);
        assert_eq!(locate(text, &quoted), at(1, last_column(text, "true")));
        let emoji = FieldPath::root().key("\u{1F600}");
        assert_eq!(locate(text, &emoji), at(1, last_column(text, r#""\ud83d"#)));
        let tab = FieldPath::root().key("t\tb");
        assert_eq!(locate(text, &tab), at(1, last_column(text, r#""t\tb""#)));
        let lone = FieldPath::root().key("\u{FFFD}");
        assert_eq!(locate(text, &lone), at(1, last_column(text, r#""\uD800""#)));
    }

    #[test]
    fn crlf_is_one_line_break_and_lone_cr_is_not() {
        let text = "{\r\n  \"a\": {\r\n    \"b\": [1,\r\n 2]\r\n  }\r\n}";
        assert_eq!(locate(text, &path("a")), at(2, 3));
        assert_eq!(locate(text, &path("a.b")), at(3, 5));
        assert_eq!(locate(text, &path("a.b[1]")), at(4, 2));
        assert_eq!(locate("{\r\"a\": 1}", &path("a")), at(1, 3));
    }

    #[test]
    fn columns_count_unicode_scalars_and_skip_a_bom() {
        let text = r#"{"é": {"b": 1}}"#;
        assert_eq!(locate(text, &FieldPath::root().key("é").key("b")), at(1, 8));
        assert_eq!(locate("\u{FEFF}{\"a\": 1}", &path("a")), at(1, 2));
        assert_eq!(locate("\u{FEFF}", &path("a")), at(1, 1));
    }

    #[test]
    fn root_is_the_first_non_whitespace_character() {
        assert_eq!(locate("\n  {}", &FieldPath::root()), at(2, 3));
        assert_eq!(locate("", &path("a")), at(1, 1));
        assert_eq!(locate("  \n ", &path("a[0]")), at(1, 1));
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 100_000;
        let arrays = "[".repeat(depth);
        let zeros = path(&"[0]".repeat(depth));
        assert_eq!(locate(&arrays, &zeros), at(1, depth));
        assert_eq!(locate(&arrays, &path("[1]")), at(1, 1));
        let closed = format!("{arrays}{}", "]".repeat(depth));
        assert_eq!(locate(&closed, &path("[0][0][1]")), at(1, 3));
        let objects = "{\"a\":".repeat(depth);
        assert_eq!(locate(&objects, &path("a.a.a.b")), at(1, 12));
    }

    #[test]
    fn invalid_json_yields_the_best_position() {
        let unterminated = r#"{"a": [1, 2"#;
        assert_eq!(
            locate(unterminated, &path("a[1]")),
            at(1, last_column(unterminated, "2"))
        );
        let missing_colon = r#"{"a" 1, "b": 2}"#;
        assert_eq!(
            locate(missing_colon, &path("b")),
            at(1, last_column(missing_colon, "\"b\""))
        );
        assert_eq!(locate("{:}", &path("x")), at(1, 1));
        assert_eq!(locate("%%%", &path("x")), at(1, 1));
        assert_eq!(locate(r#"{"a":}"#, &path("a.b")), at(1, 2));
        assert_eq!(locate(r#"{"a"#, &path("a")), at(1, 1));
        assert_eq!(locate(r#"{"a\"#, &path("a")), at(1, 1));
        assert_eq!(locate(r#"[,,7]"#, &path("[2]")), at(1, 4));
        assert_eq!(locate(r#"{"a": {"b": 1]], "c": 2}"#, &path("c")), at(1, 1));
    }

    /// Generates field paths over a small alphabet of keys and indices.
    fn arb_path() -> impl Strategy<Value = FieldPath> {
        let segment = prop_oneof![
            "[a-c\"\\\\é]{0,3}".prop_map(Segment::Key),
            (0usize..4).prop_map(Segment::Index),
        ];
        proptest::collection::vec(segment, 0..6).prop_map(|segments| {
            segments
                .into_iter()
                .fold(FieldPath::root(), |path, segment| match segment {
                    Segment::Key(key) => path.key(&key),
                    Segment::Index(index) => path.index(index),
                })
        })
    }

    proptest! {
        #[test]
        fn arbitrary_text_and_paths_never_panic(text in any::<String>(), field in arb_path()) {
            let position = locate(&text, &field);
            prop_assert!(position.line >= 1 && position.column >= 1);
        }

        #[test]
        fn json_like_text_never_panics(
            text in "[\\[\\]{}\",:abcé\\\\u0-9D \r\n\u{FEFF}]{0,80}",
            field in arb_path(),
        ) {
            let position = locate(&text, &field);
            prop_assert!(position.line <= text.len() + 1);
        }
    }
}
