//! The diagnostics collector every per-field check of validation writes to.

use serde_json::{Map, Value};

use super::diagnostic::{Code, Diagnostic};
use super::path::FieldPath;
use super::vocab;

/// Collects diagnostics for one manifest.
pub(crate) struct Checker {
    pub(crate) found: Vec<Diagnostic>,
}

impl Checker {
    pub(crate) fn new() -> Checker {
        Checker { found: Vec::new() }
    }

    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        self.found.push(diagnostic);
    }

    pub(crate) fn error(&mut self, code: Code, field: FieldPath, what: &str, got: Option<&Value>) {
        self.push(Diagnostic::error(code, field, what).got(got));
    }

    pub(crate) fn enum_error(
        &mut self,
        code: Code,
        field: FieldPath,
        members: &'static [&'static str],
        got: Option<&Value>,
    ) {
        self.push(
            Diagnostic::error(code, field, "is not a recognised value")
                .members(members)
                .got(got),
        );
    }

    /// Requires a non-empty string; returns it when valid.
    pub(crate) fn non_empty_string<'v>(
        &mut self,
        object: &'v Map<String, Value>,
        key: &str,
        at: &FieldPath,
        code: Code,
        what: &str,
    ) -> Option<&'v str> {
        let value = object.get(key);
        match value.and_then(Value::as_str) {
            Some(text) if !text.is_empty() => Some(text),
            _ => {
                self.error(code, at.key(key), what, value);
                None
            }
        }
    }

    /// Requires a member of `members`; returns it when valid.
    pub(crate) fn member<'v>(
        &mut self,
        object: &'v Map<String, Value>,
        key: &str,
        at: &FieldPath,
        code: Code,
        members: &'static [&'static str],
    ) -> Option<&'v str> {
        let value = object.get(key);
        if vocab::is_member(members, value) {
            value.and_then(Value::as_str)
        } else {
            self.enum_error(code, at.key(key), members, value);
            None
        }
    }
}
