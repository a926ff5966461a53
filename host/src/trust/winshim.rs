//! Windows `.cmd`/`.bat` shims (trust.md §7.4, weakness 10), as platform-neutral functions.
//!
//! On Windows a bare lane binary such as `gemini` is often `gemini.cmd`, a batch file that only
//! `cmd.exe` can run, and `cmd.exe` re-parses its command line: `&`, `|`, `<`, `>`, `^`, `"` and
//! `%VAR%` inside an argument can start other commands ("BatBadBut"). The safe path is:
//!
//! 1. resolve the bare name ourselves through `PATH` and `PATHEXT` ([`candidates`],
//!    [`pathext_list`]); the standard library only appends `.exe`;
//! 2. hand the **resolved full path** to the process builder, which (Rust ≥ 1.77.2) recognises
//!    `.bat`/`.cmd` and applies escaping made for `cmd.exe`, or returns `InvalidInput` for an
//!    argument it cannot pass safely;
//! 3. never build a `cmd.exe /c …` line by hand and never use `raw_arg` for lane argv;
//! 4. refuse up front, as a spawn failure (`EINVAL`), the arguments no escaping can carry
//!    through `cmd.exe` ([`batch_arg_refusal`]: CR, LF, NUL), and treat `InvalidInput` from the
//!    spawn the same way, never retrying another way.
//!
//! These functions are compiled and tested on every platform; only the call sites are
//! `cfg(windows)` (`run/path_lookup.rs`, `run/effects.rs`).

use std::path::{Path, PathBuf};

/// The `PATHEXT` default (trust.md §7.4).
pub const DEFAULT_PATHEXT: &str = ".EXE;.CMD;.BAT;.COM";

/// The extensions of a `PATHEXT` value, each with a leading dot; the default when unset or
/// empty.
pub fn pathext_list(raw: Option<&str>) -> Vec<String> {
    let raw = raw
        .filter(|v| !v.trim().is_empty())
        .unwrap_or(DEFAULT_PATHEXT);
    let exts: Vec<String> = raw
        .split(';')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| {
            if e.starts_with('.') {
                e.to_owned()
            } else {
                format!(".{e}")
            }
        })
        .collect();
    if exts.is_empty() {
        DEFAULT_PATHEXT.split(';').map(str::to_owned).collect()
    } else {
        exts
    }
}

/// The files to try for `name` in `dir`, in order: the name itself when it already ends in one
/// of `exts` (case-insensitive), then `<name><ext>` for each extension.
pub fn candidates(dir: &Path, name: &str, exts: &[String]) -> Vec<PathBuf> {
    let lower = name.to_ascii_lowercase();
    let mut out = Vec::with_capacity(exts.len() + 1);
    if exts
        .iter()
        .any(|ext| lower.ends_with(&ext.to_ascii_lowercase()))
    {
        out.push(dir.join(name));
    }
    out.extend(exts.iter().map(|ext| dir.join(format!("{name}{ext}"))));
    out
}

/// True when `program` is a batch file (`.bat` or `.cmd`, case-insensitive), which Windows runs
/// through `cmd.exe`.
pub fn is_batch_script(program: &Path) -> bool {
    program
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("cmd") || e.eq_ignore_ascii_case("bat"))
}

/// Why an argument cannot be handed to a batch file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchArgRefusal {
    /// Index of the argument in argv.
    pub index: usize,
    /// What it contains.
    pub why: &'static str,
}

impl std::fmt::Display for BatchArgRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "argument {} {} and cannot be passed to a batch file safely",
            self.index, self.why
        )
    }
}

/// The first argument that no `cmd.exe` escaping can carry intact: a carriage return or line
/// feed (they end the command line) or a NUL. Everything else (`"`, `&`, `|`, `%`, `^`, …) is
/// left to the standard library's batch escaping.
pub fn batch_arg_refusal(args: &[String]) -> Option<BatchArgRefusal> {
    args.iter().enumerate().find_map(|(index, arg)| {
        let why = if arg.contains('\0') {
            "contains a NUL byte"
        } else if arg.contains('\r') || arg.contains('\n') {
            "contains a line break"
        } else {
            return None;
        };
        Some(BatchArgRefusal { index, why })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model of the standard library's batch-argument quoting (std `make_bat_command_line`):
    /// quote anything outside `[A-Za-z0-9#$*+-./:?@\\_]`, double `"`, and defuse `%` as
    /// `%%cd:~,%`. Used to show that the hostile values of §9 P15 end up inert.
    fn std_batch_quote(arg: &str) -> String {
        let plain = !arg.is_empty()
            && !arg.ends_with('\\')
            && arg
                .chars()
                .all(|c| !c.is_ascii() || c.is_ascii_alphanumeric() || "#$*+-./:?@\\_".contains(c));
        let mut out = String::new();
        if !plain {
            out.push('"');
        }
        let mut backslashes = 0usize;
        for c in arg.chars() {
            if c == '\\' {
                backslashes += 1;
            } else {
                if c == '"' {
                    out.extend(std::iter::repeat_n('\\', backslashes));
                    out.push('"');
                } else if c == '%' {
                    out.push_str("%%cd:~,");
                }
                backslashes = 0;
            }
            out.push(c);
        }
        if !plain {
            out.extend(std::iter::repeat_n('\\', backslashes));
            out.push('"');
        }
        out
    }

    /// Whether `cmd.exe` would see a command separator or redirection outside double quotes.
    fn cmd_metachar_outside_quotes(line: &str) -> bool {
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                '&' | '|' | '<' | '>' | '^' if !quoted => return true,
                _ => {}
            }
        }
        false
    }

    #[test]
    fn pathext_parsing_and_default() {
        assert_eq!(pathext_list(None), vec![".EXE", ".CMD", ".BAT", ".COM"]);
        assert_eq!(
            pathext_list(Some("  ")),
            vec![".EXE", ".CMD", ".BAT", ".COM"]
        );
        assert_eq!(pathext_list(Some("cmd; .Exe ;;")), vec![".cmd", ".Exe"]);
        assert_eq!(
            pathext_list(Some(";;")),
            vec![".EXE", ".CMD", ".BAT", ".COM"]
        );
    }

    #[test]
    fn bare_names_try_every_extension_in_order() {
        let exts = pathext_list(None);
        let dir = Path::new("C:/tools");
        assert_eq!(
            candidates(dir, "gemini", &exts),
            vec![
                dir.join("gemini.EXE"),
                dir.join("gemini.CMD"),
                dir.join("gemini.BAT"),
                dir.join("gemini.COM")
            ]
        );
        assert_eq!(candidates(dir, "fake.cmd", &exts)[0], dir.join("fake.cmd"));
        assert!(is_batch_script(Path::new("C:/tools/gemini.CMD")));
        assert!(is_batch_script(Path::new("x.bat")));
        assert!(!is_batch_script(Path::new("x.exe")));
        assert!(!is_batch_script(Path::new("cmd")));
    }

    #[test]
    fn w10_batch_shim_arguments_stay_inert() {
        // §9 P15: the hostile model value either reaches the script verbatim or is refused;
        // PWNED is never a separate command.
        let hostile = [
            "a\" & echo PWNED & \"",
            "x; rm -rf ~ && $(id) \"a b\"",
            "%PATH%",
            "a|b",
            "^&",
            "trailing\\",
            "",
        ];
        for value in hostile {
            let args = vec!["-m".to_owned(), value.to_owned(), "-p".to_owned()];
            assert_eq!(
                batch_arg_refusal(&args),
                None,
                "{value:?} is passed, escaped"
            );
            let line: Vec<String> = args.iter().map(|a| std_batch_quote(a)).collect();
            let line = line.join(" ");
            assert!(!cmd_metachar_outside_quotes(&line), "{value:?} -> {line}");
        }
        for value in ["a\r\nb", "line\nbreak", "nul\0byte"] {
            let args = vec![value.to_owned()];
            assert_eq!(
                batch_arg_refusal(&args).map(|r| r.index),
                Some(0),
                "{value:?}"
            );
        }
    }
}
