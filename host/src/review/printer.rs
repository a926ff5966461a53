//! The one place a review writes a [`Notice`] to stderr: the level's prefix, the whole line
//! neutralised for the terminal (`output::neutralize`: what lanes, manifests and configs wrote
//! cannot rewrite the screen), `-q`/`-v` applied, and a notice marked once said once per
//! process (`output::eprint_once`). The stages never print; they say ([`super::notice`]).

use super::notice::{Notice, Verbosity};

/// The line `notice` shows on stderr, or `None` when the user asked not to see it.
pub fn render(notice: &Notice, verbosity: Verbosity) -> Option<String> {
    verbosity
        .shows(notice.level)
        .then(|| crate::output::neutralize(&format!("{}{}", notice.level.prefix(), notice.text)))
}

/// Writes `notice` to stderr as [`render`] shows it; true when it was written (not hidden by
/// `-q`/`-v`, not a once-only notice already said).
pub fn print(notice: &Notice, verbosity: Verbosity) -> bool {
    let Some(line) = render(notice, verbosity) else {
        return false;
    };
    if notice.once {
        crate::output::eprint_once(&line)
    } else {
        crate::output::eprint_line(&line);
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::path::Path;

    use super::super::notice::Level;
    use super::*;
    use crate::layering::{non_test_code, rust_files};

    #[test]
    fn lines_keep_their_prefix_and_are_neutralised_whole() {
        let shown = render(
            &Notice::new(Level::Warning, "lane \u{1b}[2Jx said\u{202e} no"),
            Verbosity::default(),
        );
        assert_eq!(
            shown.as_deref(),
            Some("warning: lane \\u{1b}[2Jx said\\u{202e} no")
        );
        // What a stage already neutralised is shown the same (the escape is idempotent).
        let once = crate::output::neutralize("a\u{7}b");
        assert_eq!(
            render(&Notice::new(Level::Info, once), Verbosity::default()).as_deref(),
            Some("info: a\\u{7}b")
        );
    }

    #[test]
    fn quiet_and_verbose_decide_what_is_rendered() {
        let quiet = Verbosity {
            quiet: true,
            verbose: 0,
        };
        assert_eq!(render(&Notice::new(Level::Info, "x"), quiet), None);
        assert_eq!(
            render(&Notice::new(Level::Error, "x"), quiet).as_deref(),
            Some("error: x")
        );
        assert_eq!(
            render(&Notice::new(Level::Verbose, "x"), Verbosity::default()),
            None
        );
    }

    #[test]
    fn a_once_notice_is_printed_once_per_process() {
        let notice = Notice::new(Level::Warning, "printer test: said once per process").once();
        assert!(print(&notice, Verbosity::default()));
        assert!(!print(&notice, Verbosity::default()));
    }

    /// The ways of writing to stderr, or of asking another layer to (`Context::info`/`verbose`
    /// print at once).
    const STDERR_WRITERS: [&str; 5] = [
        "eprint",
        "stderr()",
        "context.info(",
        "context.verbose(",
        "context.warn(",
    ];

    /// Each line of `code` (comments aside) that writes to stderr, as `line: text`.
    fn stderr_writes(code: &str) -> Vec<String> {
        code.lines()
            .enumerate()
            .filter(|(_, line)| !line.trim_start().starts_with("//"))
            .filter(|(_, line)| STDERR_WRITERS.iter().any(|w| line.contains(w)))
            .map(|(number, line)| format!("{}: {}", number + 1, line.trim()))
            .collect()
    }

    #[test]
    fn the_printer_is_the_only_writer_to_stderr_in_review() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        for dir in ["review", "code_review"] {
            rust_files(&src.join(dir), &mut files);
        }
        let mut found = Vec::new();
        for file in files {
            let relative = file.strip_prefix(&src).expect("under src");
            if relative == Path::new("review/printer.rs") {
                continue;
            }
            let source = std::fs::read_to_string(&file)
                .unwrap_or_else(|err| panic!("reading {}: {err}", file.display()));
            for hit in stderr_writes(non_test_code(&source)) {
                found.push(format!("{}:{hit}", relative.display()));
            }
        }
        assert!(
            found.is_empty(),
            "these lines write to stderr themselves (say a Notice instead):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn the_scan_sees_each_way_of_writing_to_stderr() {
        for line in [
            "output::eprint_line(&x);",
            "crate::output::eprint_line(&format!(\"warning: {w}\"));",
            "eprintln!(\"x\");",
            "eprint!(\"x\");",
            "crate::output::eprint_once(&x);",
            "let _ = writeln!(std::io::stderr(), \"x\");",
            "context.info(&line);",
            "context.verbose(&why);",
        ] {
            assert_eq!(stderr_writes(line).len(), 1, "missed: {line}");
        }
        for line in [
            "notices.warn(x);",
            "// output::eprint_line in a comment",
            "pub stderr_head: Option<String>,",
            "request.notices.info(line);",
        ] {
            assert!(stderr_writes(line).is_empty(), "false hit: {line}");
        }
    }
}
