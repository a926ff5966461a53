//! Federated config slices (manifest.md §5.1), validated on every role.

use serde_json::{Map, Value};

use super::checker::Checker;
use super::diagnostic::Code;
use super::path::FieldPath;
use super::vocab;

/// Validates a present `config` value.
pub(crate) fn check(checker: &mut Checker, config: &Value) {
    let at = FieldPath::root().key("config");
    let Some(slices) = config.as_object() else {
        checker.error(Code::CfgType, at, "must be an object", Some(config));
        return;
    };
    for (key, slice) in slices {
        let field = at.key(key);
        if key.is_empty() || vocab::RESERVED_WORDS.contains(&key.as_str()) {
            checker.error(
                Code::CfgKey,
                field,
                "keys must be non-empty and not reserved",
                None,
            );
            continue;
        }
        match slice.as_object() {
            Some(object) => check_slice(checker, object, &field),
            None => checker.error(Code::CfgSlice, field, "must be an object", Some(slice)),
        }
    }
}

fn check_slice(checker: &mut Checker, slice: &Map<String, Value>, at: &FieldPath) {
    let kind = checker.member(slice, "type", at, Code::CfgSliceType, &vocab::CONFIG_TYPE);
    let values = slice.get("values");
    let enum_values: Option<Vec<&str>> = values
        .and_then(Value::as_array)
        .filter(|items| !items.is_empty())
        .and_then(|items| items.iter().map(Value::as_str).collect());
    if kind == Some("enum") && enum_values.is_none() {
        checker.error(
            Code::CfgSliceEnumValues,
            at.key("values"),
            "must be a non-empty array of strings",
            values,
        );
    }
    match slice.get("default") {
        None => checker.error(
            Code::CfgSliceDefault,
            at.key("default"),
            "is required",
            None,
        ),
        Some(default) => check_default(checker, kind, default, enum_values.as_deref(), at),
    }
    checker.non_empty_string(
        slice,
        "description",
        at,
        Code::CfgSliceDescription,
        "must be a non-empty string",
    );
}

fn check_default(
    checker: &mut Checker,
    kind: Option<&str>,
    default: &Value,
    enum_values: Option<&[&str]>,
    at: &FieldPath,
) {
    let field = at.key("default");
    let (fits, wanted) = match kind {
        Some("boolean") => (default.is_boolean(), "a boolean"),
        Some("string") => (default.is_string(), "a string"),
        Some("number") => (
            default.as_f64().is_some_and(f64::is_finite),
            "a finite number",
        ),
        Some("enum") => (default.is_string(), "a string"),
        _ => return,
    };
    if !fits {
        checker.error(
            Code::CfgSliceDefaultType,
            field,
            &format!("must be {wanted} for its type"),
            Some(default),
        );
        return;
    }
    if let (Some(values), Some(text)) = (enum_values, default.as_str()) {
        if kind == Some("enum") && !values.contains(&text) {
            checker.error(
                Code::CfgSliceEnumDefault,
                field,
                &format!("\"{text}\" is not among values [{}]", values.join(", ")),
                None,
            );
        }
    }
}
