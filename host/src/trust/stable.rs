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
/// The digits and the layout (plain digits up to 21 integer digits, `0.000001` down to 10^-6,
/// exponent form with an explicit sign otherwise) come from the `ryu-js` crate, which
/// implements exactly that algorithm; Rust's own shortest formatting picks different digits for
/// some doubles (`1542134690703039.2` would print as `…039.3`). Non-finite values print as
/// `null`, as `JSON.stringify` prints them; they cannot come from parsed JSON.
pub fn number_to_string(x: f64) -> String {
    if !x.is_finite() {
        return "null".to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    ryu_js::Buffer::new().format_finite(x).to_owned()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_follow_ecmascript() {
        let rows: [(f64, &str); 18] = [
            (1542134690703039.2, "1542134690703039.2"),
            (-1542134690703039.2, "-1542134690703039.2"),
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

    /// 20,000 doubles from a fixed proptest stream: random bit patterns (every exponent),
    /// integers around 2^53, and short decimals (where digit choice differs most).
    fn sample_doubles() -> Vec<f64> {
        use proptest::strategy::{Strategy, ValueTree};
        use proptest::test_runner::TestRunner;
        let strategy = proptest::prop_oneof![
            proptest::num::u64::ANY.prop_map(f64::from_bits),
            (-(1_i64 << 54)..(1_i64 << 54)).prop_map(|i| i as f64 / 10.0),
            (0_u32..1_000_000, -30_i32..30).prop_map(|(m, e)| f64::from(m) * 10f64.powi(e)),
        ]
        .prop_filter("finite", |x| x.is_finite());
        let mut runner = TestRunner::deterministic();
        (0..20_000)
            .map(|_| strategy.new_tree(&mut runner).expect("value").current())
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn numbers_round_trip_and_use_shortest_digits(bits in proptest::num::u64::ANY) {
            let x = f64::from_bits(bits);
            proptest::prop_assume!(x.is_finite());
            let text = number_to_string(x);
            let back: f64 = text.parse().expect("ECMAScript number text parses");
            proptest::prop_assert!(back == x, "{} -> {}", x, text);
            // No more significant digits than the shortest round-trip form needs.
            let digits = |t: &str| {
                let mantissa = t.split(['e', 'E']).next().unwrap_or("");
                mantissa.trim_start_matches('-').chars().filter(char::is_ascii_digit)
                    .collect::<String>().trim_start_matches('0').trim_end_matches('0').len()
            };
            let shortest = digits(&format!("{x:e}")).max(1);
            proptest::prop_assert!(digits(&text) <= shortest, "{} has more digits than {}", text, shortest);
        }
    }

    /// Differential test against a JavaScript engine: `String(x)` in node over the sample,
    /// when node is installed (skipped with a message otherwise).
    #[test]
    fn numbers_match_node_on_twenty_thousand_doubles() {
        let doubles = sample_doubles();
        let dir = tempfile::tempdir().expect("tempdir");
        let input = dir.path().join("doubles.txt");
        let bits: String = doubles
            .iter()
            .map(|x| format!("{:016x}\n", x.to_bits()))
            .collect();
        std::fs::write(&input, bits).expect("write doubles");
        let script = "const fs=require('fs');const v=new DataView(new ArrayBuffer(8));\
            const out=fs.readFileSync(process.argv[1],'utf8').trim().split('\\n').map(h=>{\
            v.setBigUint64(0,BigInt('0x'+h));return String(v.getFloat64(0));});\
            process.stdout.write(out.join('\\n')+'\\n');";
        let output = match std::process::Command::new("node")
            .arg("-e")
            .arg(script)
            .arg(&input)
            .output()
        {
            Ok(output) if output.status.success() => output,
            Ok(output) => panic!("node failed: {}", String::from_utf8_lossy(&output.stderr)),
            Err(err) => {
                eprintln!("skipped: node is not available ({err}); the differential test needs it");
                return;
            }
        };
        let expected = String::from_utf8(output.stdout).expect("utf8");
        let expected: Vec<&str> = expected.lines().collect();
        assert_eq!(expected.len(), doubles.len());
        let mismatches: Vec<String> = doubles
            .iter()
            .zip(&expected)
            .filter(|(x, js)| number_to_string(**x) != **js)
            .map(|(x, js)| format!("{x:e}: ours {} node {js}", number_to_string(*x)))
            .take(10)
            .collect();
        assert!(mismatches.is_empty(), "{mismatches:#?}");
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
