//! `reviewer.probe` rules (manifest.md §2.4).

use gsd_lane_sdk::Probe;
use serde::Deserialize;
use serde_json::Value;

use super::checker::Checker;
use super::diagnostic::Code;
use super::path::FieldPath;
use super::vocab;

/// `reviewer.probe.kind`, typed: the members of [`super::vocab::PROBE_KIND`] (the tags of
/// [`Probe`]), so a kind is matched by the compiler, never by a string with a catch-all arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeKind {
    /// `command-exists`.
    CommandExists,
    /// `command-capability`.
    CommandCapability,
    /// `http-reachable`.
    HttpReachable,
}

impl ProbeKind {
    /// The kind written exactly as `value` (a string member, case-sensitive), or `None`.
    pub fn of_value(value: Option<&Value>) -> Option<ProbeKind> {
        value
            .filter(|value| value.is_string())
            .and_then(|value| ProbeKind::deserialize(value).ok())
    }

    /// The kind of a typed probe; `None` for [`Probe::Unusable`].
    pub fn of_probe(probe: &Probe) -> Option<ProbeKind> {
        match probe {
            Probe::CommandExists { .. } => Some(ProbeKind::CommandExists),
            Probe::CommandCapability { .. } => Some(ProbeKind::CommandCapability),
            Probe::HttpReachable { .. } => Some(ProbeKind::HttpReachable),
            Probe::Unusable => None,
        }
    }

    /// The kind as descriptors write it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::CommandExists => "command-exists",
            ProbeKind::CommandCapability => "command-capability",
            ProbeKind::HttpReachable => "http-reachable",
        }
    }
}

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
fn rules(kind: ProbeKind) -> [Rule; 5] {
    use Rule::{Forbidden as F, Required as R};
    match kind {
        ProbeKind::CommandExists => [R, F, F, F, F],
        ProbeKind::CommandCapability => [R, R, R, F, F],
        ProbeKind::HttpReachable => [F, F, R, R, R],
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
    let Some(kind) = checker
        .member(object, "kind", at, Code::PrKind, &vocab::PROBE_KIND)
        .and_then(|_| ProbeKind::of_value(object.get("kind")))
    else {
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
    let kind_name = kind.as_str();
    for ((field, missing, forbidden), rule) in FIELDS.into_iter().zip(rules(kind)) {
        let value = object.get(field);
        match rule {
            Rule::Forbidden if value.is_some() => checker.error(
                forbidden,
                at.key(field),
                &format!("is not allowed for probe kind \"{kind_name}\""),
                None,
            ),
            Rule::Forbidden => {}
            Rule::Required if field == "timeoutMs" => {
                if vocab::positive_integer(value).is_none() {
                    checker.error(
                        missing,
                        at.key(field),
                        &format!(
                            "must be an integer number of milliseconds ≥ 1 for probe kind \"{kind_name}\" (such probes must be time-limited)"
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
                    &format!("must be given as a non-empty string for probe kind \"{kind_name}\""),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typed_kinds_are_the_vocabulary() {
        let kinds = [
            ProbeKind::CommandExists,
            ProbeKind::CommandCapability,
            ProbeKind::HttpReachable,
        ];
        let names: Vec<&str> = kinds.iter().map(|kind| kind.as_str()).collect();
        assert_eq!(names, *vocab::PROBE_KIND);
        for kind in kinds {
            let written = Value::String(kind.as_str().to_owned());
            assert_eq!(ProbeKind::of_value(Some(&written)), Some(kind));
        }
        let miscased = Value::String("HTTP-reachable".to_owned());
        assert_eq!(ProbeKind::of_value(Some(&miscased)), None);
        assert_eq!(ProbeKind::of_probe(&Probe::Unusable), None);
    }
}
