//! Typed findings of validation: a stable code, a severity, where, and what is wrong.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::path::FieldPath;
use crate::jsonpos::Position;

mod code;

pub use code::Code;

/// Whether a finding rejects the capability or only informs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Rejects the capability (build fails, overlay skipped).
    Error,
    /// Never changes acceptance.
    Warning,
}

/// One finding, carrying the catalogue code of manifest.md §8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable catalogue code ([`Code::SpOutputargRequired`], [`Code::WBodyUnknown`], …).
    pub code: Code,
    /// Error or warning.
    pub severity: Severity,
    /// The manifest's `id` when it is a string, else `(unknown)`.
    pub capability: String,
    /// The field the finding is about.
    pub field: FieldPath,
    /// What is wrong, naming the field.
    pub message: String,
    /// For closed enums, every valid member in canonical order.
    pub valid: Option<&'static [&'static str]>,
    /// The offending value, compact JSON (or `absent`), at most 120 characters.
    pub got: Option<String>,
    /// The manifest file, once known.
    pub file: Option<PathBuf>,
    /// Line and column of the field in that file, once known.
    pub position: Option<Position>,
}

impl Diagnostic {
    /// An error with `code` about `field`.
    pub fn error(code: Code, field: FieldPath, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, Severity::Error, field, message)
    }

    /// A warning with `code` about `field`.
    pub fn warning(code: Code, field: FieldPath, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, Severity::Warning, field, message)
    }

    fn new(
        code: Code,
        severity: Severity,
        field: FieldPath,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            code,
            severity,
            capability: "(unknown)".to_owned(),
            field,
            message: message.into(),
            valid: None,
            got: None,
            file: None,
            position: None,
        }
    }

    /// Records the offending value (`None` renders as `absent`).
    pub fn got(mut self, value: Option<&Value>) -> Diagnostic {
        self.got = Some(render_value(value));
        self
    }

    /// Records the members of the closed enum the field belongs to.
    pub fn members(mut self, members: &'static [&'static str]) -> Diagnostic {
        self.valid = Some(members);
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The message in the catalogue's shape, without the capability prefix:
    /// `<path>: <what>[; must be one of: …] (got: …)`.
    pub fn detail(&self) -> String {
        let field = self.field.to_string();
        let mut text = if field.is_empty() {
            self.message.clone()
        } else {
            format!("{field}: {}", self.message)
        };
        if let Some(members) = self.valid {
            text.push_str("; must be one of: ");
            text.push_str(&members.join(", "));
        }
        if let Some(got) = &self.got {
            text.push_str(" (got: ");
            text.push_str(got);
            text.push(')');
        }
        text
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "capability \"{}\": {}", self.capability, self.detail())
    }
}

/// Renders a value as compact JSON, `absent` for none, truncated to 120 characters with `…`.
pub fn render_value(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "absent".to_owned();
    };
    let text = match value {
        // Render big containers without serializing all of them.
        Value::Array(items) if items.len() > 64 => format!("[… {} items]", items.len()),
        Value::Object(map) if map.len() > 64 => format!("{{… {} members}}", map.len()),
        Value::String(s) if s.len() > 512 => {
            serde_json::to_string(truncate_chars(s, 200)).unwrap_or_default()
        }
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    if text.chars().count() > 120 {
        let mut short: String = text.chars().take(119).collect();
        short.push('…');
        short
    } else {
        text
    }
}

fn truncate_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// The JSON type name of a value, as used in messages (`null`, `boolean`, `number`, …).
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_absent_and_truncates_long_values() {
        assert_eq!(render_value(None), "absent");
        assert_eq!(render_value(Some(&json!("x"))), "\"x\"");
        let long = render_value(Some(&json!("a".repeat(500))));
        assert_eq!(long.chars().count(), 120);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn detail_lists_members_and_value() {
        let d = Diagnostic::error(
            Code::RbTransport,
            FieldPath::root().key("reviewer").key("transport"),
            "is not a known transport",
        )
        .members(&["spawn", "openai-http"])
        .got(Some(&json!("grpc")));
        assert_eq!(
            d.detail(),
            "reviewer.transport: is not a known transport; must be one of: spawn, openai-http (got: \"grpc\")"
        );
    }
}
