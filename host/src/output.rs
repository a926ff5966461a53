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

/// The project's one terminal escaper, for text gsd-lane did not write itself (manifests,
/// configs, lane output, review text): every character [`is_unsafe_for_terminal`] names is
/// replaced by a visible `\u{…}` escape, keeping line feeds and tabs, so the text cannot
/// rewrite, reorder or hide what the terminal shows.
pub fn neutralize(text: &str) -> String {
    escape(text, true)
}

/// [`neutralize`] for a value shown inside one line (a host, an argument, a path): line feeds
/// and tabs are escaped too.
pub fn escape_text(text: &str) -> String {
    escape(text, false)
}

fn escape(text: &str, keep_layout: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let layout = keep_layout && (c == '\n' || c == '\t');
        if is_unsafe_for_terminal(c) && !layout {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// True for characters that can change what a terminal shows without being seen: C0 and C1
/// controls (ESC, BEL, CR, …) and DEL; the bidi embeddings, overrides, isolates and marks
/// (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C); line and paragraph separators; and
/// invisible format characters (soft hyphen, zero-width space, word joiner and invisible
/// operators, U+206A–U+206F, the BOM, interlinear annotation marks, tag characters). The
/// zero-width (non-)joiners U+200C and U+200D stay: scripts and emoji need them.
pub fn is_unsafe_for_terminal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neutralizes_escapes() {
        assert_eq!(neutralize("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(neutralize("ok\n"), "ok\n");
        assert_eq!(escape_text("a\nb\tc"), "a\\u{a}b\\u{9}c");
    }

    #[test]
    fn bidi_and_invisible_controls_are_escaped() {
        for c in [
            '\u{202A}',
            '\u{202B}',
            '\u{202C}',
            '\u{202D}',
            '\u{202E}',
            '\u{2066}',
            '\u{2067}',
            '\u{2068}',
            '\u{2069}',
            '\u{200E}',
            '\u{200F}',
            '\u{061C}',
            '\u{200B}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{E0041}',
            '\u{2028}',
            '\u{7}',
            '\u{d}',
            '\u{9b}',
        ] {
            let shown = neutralize(&format!("a{c}b"));
            assert_eq!(shown, format!("a{}b", c.escape_unicode()), "{:?}", c);
        }
        // Joiners and ordinary text are kept.
        assert_eq!(neutralize("👩\u{200D}💻 é 漢"), "👩\u{200D}💻 é 漢");
    }
}
