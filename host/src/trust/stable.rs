//! ECMAScript-exact JSON encodings (trust.md §4.3): the canonical "stable JSON" of the disclosure
//! signature, `JSON.stringify` of plain values, and `JSON.stringify(v, null, 2)` for the consent
//! store.
//!
//! Shared encodings must match the reference byte for byte, so nothing here relies on
//! `serde_json`'s own printer: strings are escaped as `JSON.stringify` escapes them, numbers are
//! printed with the ECMAScript Number-to-String algorithm, and object keys are sorted by UTF-16
//! code units where sorting applies.

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::{Map, Value};

/// Compares two strings by UTF-16 code units, as ECMAScript's default sort does.
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Returns `stable(v)`: objects with keys sorted by UTF-16 code units, no whitespace.
pub fn stable(value: &Value) -> String {
    let mut out = String::new();
    write_stable(&mut out, value);
    out
}

fn write_stable(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| utf16_cmp(a, b));
            out.push('{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                if let Some(member) = map.get(key) {
                    write_stable(out, member);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_stable(out, item);
            }
            out.push(']');
        }
        scalar => write_scalar(out, scalar),
    }
}

/// Returns `JSON.stringify(v)`: compact, keys in their stored order.
pub fn compact(value: &Value) -> String {
    let mut out = String::new();
    write_compact(&mut out, value);
    out
}

fn write_compact(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) => {
            out.push('{');
            for (index, (key, member)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_compact(out, member);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_compact(out, item);
            }
            out.push(']');
        }
        scalar => write_scalar(out, scalar),
    }
}

/// Returns `JSON.stringify(v, null, 2)`: two-space indentation, keys in their stored order.
pub fn pretty(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(&mut out, value, 0);
    out
}

fn indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_pretty(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => write_pretty_object(out, map, depth),
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                write_pretty(out, item, depth + 1);
            }
            indent(out, depth);
            out.push(']');
        }
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
        scalar => write_scalar(out, scalar),
    }
}

fn write_pretty_object(out: &mut String, map: &Map<String, Value>, depth: usize) {
    out.push('{');
    for (index, (key, member)) in map.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        indent(out, depth + 1);
        write_string(out, key);
        out.push_str(": ");
        write_pretty(out, member, depth + 1);
    }
    indent(out, depth);
    out.push('}');
}

fn write_scalar(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => out.push_str(&number_to_string(number.as_f64().unwrap_or(0.0))),
        Value::String(text) => write_string(out, text),
        // Containers are handled by the callers.
        Value::Array(_) | Value::Object(_) => out.push_str(&compact(value)),
    }
}

/// Returns `text` as a JSON string literal, escaped exactly as `JSON.stringify` escapes it.
pub fn string_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    write_string(&mut out, text);
    out
}

fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Prints a finite double with the ECMAScript Number-to-String algorithm (`-0` → `0`).
///
/// Rust's shortest round-trip formatting (`{:e}`) supplies the digits and the exponent; the
/// layout rules (plain digits up to 21 integer digits, `0.000001` down to 10^-6, exponent form
/// with an explicit sign otherwise) are ECMAScript's. Non-finite values print as `null`, as
/// `JSON.stringify` prints them; they cannot come from parsed JSON.
pub fn number_to_string(x: f64) -> String {
    if !x.is_finite() {
        return "null".to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let n = exponent + 1;
    let body = if k <= n && n <= 21 {
        let zeros = usize::try_from(n - k).unwrap_or(0);
        format!("{digits}{}", "0".repeat(zeros))
    } else if 0 < n && n <= 21 {
        let split = usize::try_from(n).unwrap_or(0);
        format!("{}.{}", &digits[..split], &digits[split..])
    } else if -6 < n && n <= 0 {
        let zeros = usize::try_from(-n).unwrap_or(0);
        format!("0.{}{digits}", "0".repeat(zeros))
    } else {
        let e = n - 1;
        let e_sign = if e < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{e_sign}{}", e.abs())
        } else {
            format!("{first}.{rest}e{e_sign}{}", e.abs())
        }
    };
    format!("{sign}{body}")
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_follow_ecmascript() {
        let rows: [(f64, &str); 16] = [
            (7.0, "7"),
            (-0.0, "0"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (12345678901234567890.0, "12345678901234567000"),
            (1.0, "1"),
            (0.1, "0.1"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (123.456, "123.456"),
            (-2.5, "-2.5"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.000123, "0.000123"),
            (1.2345e22, "1.2345e+22"),
        ];
        for (x, expected) in rows {
            assert_eq!(number_to_string(x), expected, "{x:e}");
        }
    }

    #[test]
    fn parsed_numbers_print_like_json_stringify() {
        let value: Value =
            serde_json::from_str("[7,1e21,0.1,-0,12345678901234567890,1.0,100]").expect("parse");
        assert_eq!(stable(&value), "[7,1e+21,0.1,0,12345678901234567000,1,100]");
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        let text = "\"\\/\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{7f}é\u{2028}\u{2029}😀";
        assert_eq!(
            string_literal(text),
            "\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\u{7f}é\u{2028}\u{2029}😀\""
        );
    }

    #[test]
    fn stable_sorts_keys_and_pretty_keeps_order() {
        let value = json!({"b": 1, "a": [true, null, {"d": "x", "c": {}}]});
        assert_eq!(
            stable(&value),
            "{\"a\":[true,null,{\"c\":{},\"d\":\"x\"}],\"b\":1}"
        );
        assert_eq!(
            compact(&value),
            "{\"b\":1,\"a\":[true,null,{\"d\":\"x\",\"c\":{}}]}"
        );
        assert_eq!(
            pretty(&json!({"v": "1", "r": {}, "l": []})),
            "{\n  \"v\": \"1\",\n  \"r\": {},\n  \"l\": []\n}"
        );
    }

    #[test]
    fn s11_keys_sort_by_utf16_code_units() {
        // U+1F600 is D83D DE00 in UTF-16, which sorts before U+E000; by code point it is after.
        let value = json!({"\u{e000}": 1, "\u{1f600}": 2, "a": 3});
        assert_eq!(stable(&value), "{\"a\":3,\"\u{1f600}\":2,\"\u{e000}\":1}");
    }
}
