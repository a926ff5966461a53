//! The "configured or unset" rule for string settings (invocation.md §3.2, trust.md §6.2 step 2).

use serde_json::Value;

use super::text::trim_ecma_whitespace;

/// Returns the trimmed string when `value` counts as configured under invocation.md §3.2.
///
/// Only JSON strings count; numbers, booleans, arrays and objects are never coerced to text. A
/// string is unset when its trimmed form is empty or exactly `null` or `undefined` (case-sensitive).
pub fn configured(value: Option<&Value>) -> Option<String> {
    let text = trim_ecma_whitespace(value?.as_str()?);
    if is_unset_text(text) {
        None
    } else {
        Some(text.to_owned())
    }
}

/// Reports whether an already trimmed string means "unset".
fn is_unset_text(trimmed: &str) -> bool {
    matches!(trimmed, "" | "null" | "undefined")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(value: Option<Value>, expected: Option<&str>) {
        assert_eq!(
            configured(value.as_ref()).as_deref(),
            expected,
            "value {value:?}"
        );
    }

    #[test]
    fn absent_and_null_are_unset() {
        check(None, None);
        check(Some(Value::Null), None);
    }

    #[test]
    fn empty_and_whitespace_strings_are_unset() {
        check(Some(json!("")), None);
        check(Some(json!("   ")), None);
        check(Some(json!("\t\n")), None);
        check(Some(json!("\u{feff}\u{3000}")), None);
    }

    #[test]
    fn sentinel_words_are_unset() {
        check(Some(json!("null")), None);
        check(Some(json!("undefined")), None);
        check(Some(json!("  null ")), None);
        check(Some(json!(" undefined\t")), None);
    }

    #[test]
    fn non_strings_are_never_coerced() {
        for value in [
            json!(0),
            json!(1.5),
            json!(false),
            json!(true),
            json!([]),
            json!({}),
            json!(["a"]),
            json!({"a": "b"}),
        ] {
            check(Some(value), None);
        }
    }

    #[test]
    fn configured_value_is_trimmed() {
        check(Some(json!(" G ")), Some("G"));
    }

    #[test]
    fn sentinels_are_case_sensitive() {
        check(Some(json!("NULL")), Some("NULL"));
        check(Some(json!("Undefined")), Some("Undefined"));
    }

    #[test]
    fn inner_whitespace_is_kept() {
        check(Some(json!("  a b  ")), Some("a b"));
    }
}
