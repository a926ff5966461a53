//! Writing to stdout and stderr: broken pipes end quietly, JSON renderings in one place.

use std::io::Write;

use serde_json::{json, Value};

use crate::manifest::Diagnostic;

/// Writes `text` to stdout; a closed pipe is not an error.
pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Writes `value` as pretty JSON plus a newline to stdout.
pub fn print_json(value: &Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    print(&format!("{text}\n"));
}

/// Writes one line to stderr.
pub fn eprint_line(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}

/// A diagnostic as JSON: code, severity, file, line, column, field, message.
pub fn diagnostic_json(diagnostic: &Diagnostic) -> Value {
    json!({
        "code": diagnostic.code,
        "severity": diagnostic.severity,
        "capability": diagnostic.capability,
        "file": diagnostic.file.as_ref().map(|p| p.display().to_string()),
        "line": diagnostic.position.map(|p| p.line),
        "column": diagnostic.position.map(|p| p.column),
        "field": diagnostic.field.to_string(),
        "message": diagnostic.detail(),
        "valid": diagnostic.valid,
    })
}

/// A diagnostic for people: `path:line:col: error[CODE] field: message`.
pub fn diagnostic_line(diagnostic: &Diagnostic) -> String {
    let file = diagnostic
        .file
        .as_ref()
        .map_or_else(|| "<input>".to_owned(), |p| p.display().to_string());
    let (line, column) = diagnostic.position.map_or((1, 1), |p| (p.line, p.column));
    let severity = if diagnostic.is_error() {
        "error"
    } else {
        "warning"
    };
    format!(
        "{file}:{line}:{column}: {severity}[{}] {}",
        diagnostic.code,
        neutralize(&diagnostic.detail())
    )
}

/// Replaces control characters (ANSI escapes included) with visible escapes, so text from
/// manifests or lanes cannot rewrite the terminal.
pub fn neutralize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neutralizes_escapes() {
        assert_eq!(neutralize("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(neutralize("ok\n"), "ok\n");
    }
}
