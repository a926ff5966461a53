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

/// Writes `value` as pretty JSON plus a newline to stdout; control, bidi and invisible
/// characters inside its strings are written as `\u` escapes
/// ([`crate::textsafe::json_for_terminal`]: the same JSON value, nothing raw on a terminal).
pub fn print_json(value: &Value) {
    print_serialized(value);
}

/// Prints any serializable command output as `--json` does ([`print_json`]'s bytes): pretty
/// JSON, fields in declaration order, neutralised for the terminal.
pub fn print_serialized<T: serde::Serialize + ?Sized>(value: &T) {
    let text = crate::textsafe::json_for_terminal(
        &serde_json::to_string_pretty(value).unwrap_or_default(),
    );
    print(&format!("{text}\n"));
}

/// Writes one line to stderr.
pub fn eprint_line(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}

/// Writes one line to stderr unless this process already wrote the same line through here: a
/// warning raised where a shared input is read (the consent store, read by every registry
/// load, and a command loads the registry more than once) is said once per command. True when
/// this call wrote it.
pub fn eprint_once(text: &str) -> bool {
    static SAID: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let first = SAID
        .lock()
        .map(|mut said| said.insert(text.to_owned()))
        .unwrap_or(true);
    if first {
        eprint_line(text);
    }
    first
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

/// Quotes one argument for a POSIX shell (the project's one quoter, the `shlex` crate): a
/// plain word stays as it is, anything else is single- or double-quoted so that pasting the
/// line into `sh` passes exactly this argument. A character no POSIX quoting can show inertly
/// on a terminal (a control or bidi character, see [`is_unsafe_for_terminal`]) is then escaped
/// as `\u{…}`: such a line is no longer paste-exact, which is why commands print the JSON argv
/// beside it. A NUL, which no argv can hold, is escaped the same way.
pub fn shell_quote(arg: &str) -> String {
    let quoted = shlex::Quoter::new()
        .quote(arg)
        .map_or_else(|_| format!("'{arg}'"), std::borrow::Cow::into_owned);
    escape_text(&quoted)
}

/// [`shell_quote`] of every argument, joined with spaces.
pub fn shell_join<'a>(args: impl IntoIterator<Item = &'a str>) -> String {
    args.into_iter()
        .map(shell_quote)
        .collect::<Vec<_>>()
        .join(" ")
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
    fn arguments_are_quoted_for_a_posix_shell() {
        assert_eq!(shell_quote("plain-word_1.2/x:y@z"), "plain-word_1.2/x:y@z");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(id)"), "'$(id)'");
        // ["a\\", "b"] and ["a b"] differ, and neither shows as `a\ b`.
        assert_ne!(shell_join(["a\\", "b"]), shell_join(["a b"]));
        assert!(!shell_join(["a\\", "b"]).contains("a\\ b"));
        assert_eq!(shell_quote("x\u{1b}[2J\u{202e}"), "'x\\u{1b}[2J\\u{202e}'");
        assert_eq!(shell_quote("a\0b"), "'a\\u{0}b'");
    }

    #[test]
    #[cfg(unix)]
    fn quoted_lines_paste_back_into_sh_as_the_same_argv() {
        let argv = [
            "a\\",
            "b",
            "",
            "a b",
            "$(id)",
            "`id`",
            "it's",
            "\"q\"",
            "--model=x",
            "*",
            "~",
            "#c",
            "!x",
            "a;b|c&d",
            "{a,b}",
            "é漢",
            "\\$HOME",
            "'",
            "tab\there",
            "new\nline",
        ];
        let line = shell_join(argv.iter().copied());
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {line}"))
            .output()
            .expect("sh");
        let got: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .split_terminator('\0')
            .map(str::to_owned)
            .collect();
        // Tab and newline are escaped for the terminal, so those two are shown, not pasted.
        let expected: Vec<String> = argv.iter().map(|a| escape_text(a)).collect();
        assert_eq!(got, expected, "{line}");
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
