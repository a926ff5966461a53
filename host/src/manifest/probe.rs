//! `reviewer.probe` rules (manifest.md §2.4).

use serde_json::Value;

use super::checker::Checker;
use super::diagnostic::Code;
use super::path::FieldPath;
use super::vocab;

/// Whether a probe field is required or forbidden for a kind.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rule {
    Required,
    Forbidden,
}

/// `(field, code when missing, code when forbidden)` in report order.
const FIELDS: [(&str, Code, Code); 5] = [
    ("binary", Code::PrBinary, Code::PrBinaryForbidden),
    ("needle", Code::PrNeedle, Code::PrNeedleForbidden),
    ("timeoutMs", Code::PrTimeout, Code::PrTimeoutForbidden),
    ("hostConfigKey", Code::PrHostkey, Code::PrHostkeyForbidden),
    ("path", Code::PrPath, Code::PrPathForbidden),
];

/// The required/forbidden matrix of §2.4, in `FIELDS` order.
fn rules(kind: &str) -> [Rule; 5] {
    use Rule::{Forbidden as F, Required as R};
    match kind {
        "command-exists" => [R, F, F, F, F],
        "command-capability" => [R, R, R, F, F],
        _ => [F, F, R, R, R],
    }
}

/// Validates `probe`.
pub(crate) fn check(checker: &mut Checker, probe: Option<&Value>, at: &FieldPath) {
    let Some(object) = probe.and_then(Value::as_object) else {
        let message = "must be an object whose `kind` is a probe kind";
        checker.push(
            super::diagnostic::Diagnostic::error(Code::PrType, at.clone(), message)
                .members(&vocab::PROBE_KIND)
                .got(probe),
        );
        return;
    };
    let Some(kind) = checker.member(object, "kind", at, Code::PrKind, &vocab::PROBE_KIND) else {
        return;
    };
    let mut unknown: Vec<&String> = object
        .keys()
        .filter(|key| !vocab::PROBE_FIELDS.contains(&key.as_str()))
        .collect();
    unknown.sort();
    for key in unknown {
        checker.error(
            Code::PrUnknown,
            at.key(key),
            &format!(
                "is an unrecognised probe field (recognised: {})",
                vocab::PROBE_FIELDS.join(", ")
            ),
            None,
        );
    }
    for ((field, missing, forbidden), rule) in FIELDS.into_iter().zip(rules(kind)) {
        let value = object.get(field);
        match rule {
            Rule::Forbidden if value.is_some() => checker.error(
                forbidden,
                at.key(field),
                &format!("is not allowed for probe kind \"{kind}\""),
                None,
            ),
            Rule::Forbidden => {}
            Rule::Required if field == "timeoutMs" => {
                if vocab::positive_integer(value).is_none() {
                    checker.error(
                        missing,
                        at.key(field),
                        &format!(
                            "must be an integer number of milliseconds ≥ 1 for probe kind \"{kind}\" (such probes must be time-limited)"
                        ),
                        value,
                    );
                }
            }
            Rule::Required => {
                checker.non_empty_string(
                    object,
                    field,
                    at,
                    missing,
                    &format!("must be given as a non-empty string for probe kind \"{kind}\""),
                );
            }
        }
    }
}
