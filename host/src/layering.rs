//! The module layering, checked against the source tree at test time: only the command layers
//! (`cli`, `app`, and `api`, the library's door to `cli`) may name `app` or `cli`. Everything
//! below (`review`, `code_review`, `verdict`, `run`, `sandbox`, `trust`, `manifest`, `config`,
//! `registry`, `context`, `plan` and the rest) takes what it needs as values, so a stage never
//! reaches back into the layer that calls it (issue 25, item 6). Below that, `run` (one lane:
//! admit, probe, execute) names neither `review` nor `verdict`, the layers that read its result:
//! what both sides need (the model record, the citation scanner) lives in `lane_result`.
//!
//! Errors are typed per area (issue 25, item 6): no function in `src` returns a bare
//! `String` as its error, which the same scan checks.

use std::path::{Path, PathBuf};

/// The top-level modules allowed to name `app` or `cli`: the command layers themselves.
/// This file is left out too: its own test cases spell the references it looks for.
const COMMAND_LAYERS: [&str; 6] = [
    "app",
    "cli.rs",
    "api.rs",
    "main.rs",
    "lib.rs",
    "layering.rs",
];

/// The modules a lower layer must never name.
const HIGHER: [&str; 2] = ["app", "cli"];

/// Further edges that point up: the top-level module, and the modules it must never name.
const FORBIDDEN: [(&str, &[&str]); 1] = [("run", &["review", "verdict"])];

/// Every `.rs` file under `dir`, sorted (a directory that cannot be read fails the test).
pub(crate) fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("reading {}: {err}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            into.push(path);
        }
    }
}

/// The code of a source file outside its test module: the lines before the first line that
/// is `#[cfg(test)]` alone (tests may build the whole command line to check a stage's flags).
pub(crate) fn non_test_code(source: &str) -> &str {
    let mut at = 0;
    for line in source.split_inclusive('\n') {
        if line.trim() == "#[cfg(test)]" {
            return &source[..at];
        }
        at += line.len();
    }
    source
}

/// Each path in `code` that names a higher layer from the crate root (`crate::app`,
/// `super::cli`, `crate::{app, ..}`), as `line: text`.
fn higher_references(code: &str) -> Vec<String> {
    references(code, &HIGHER)
}

/// Each path in `code` that names one of `modules` from the crate root (`crate::review`,
/// `super::verdict`, `crate::{review, ..}`), as `line: text`.
fn references(code: &str, modules: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (number, line) in code.lines().enumerate() {
        let text = line.trim();
        if text.starts_with("//") {
            continue;
        }
        let names_higher = modules.iter().any(|module| {
            ["crate::", "super::"].iter().any(|root| {
                let direct = format!("{root}{module}");
                line.match_indices(&direct).any(|(at, _)| {
                    let after = line[at + direct.len()..].chars().next();
                    !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            }) || (line.contains("crate::{")
                && line
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|word| word == *module))
        });
        if names_higher {
            found.push(format!("{}: {text}", number + 1));
        }
    }
    found
}

/// Every reference from a lower layer to `app` or `cli` in `src`, and every edge of
/// [`FORBIDDEN`], as `file:line: text`.
fn lower_to_higher(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src");
        let top = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap_or_default();
        if COMMAND_LAYERS.contains(&top) {
            continue;
        }
        let source = std::fs::read_to_string(&file)
            .unwrap_or_else(|err| panic!("reading {}: {err}", file.display()));
        let code = non_test_code(&source);
        let mut hits = higher_references(code);
        for (module, never) in FORBIDDEN {
            let top_module = top.strip_suffix(".rs").unwrap_or(top);
            if top_module == module {
                hits.extend(references(code, never));
            }
        }
        for hit in hits {
            found.push(format!("{}:{hit}", relative.display()));
        }
    }
    found
}

#[test]
fn no_lower_layer_imports_app_or_cli() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = lower_to_higher(&src);
    assert!(
        found.is_empty(),
        "these lower layers name a layer above them (`app` or `cli`; `review` or `verdict` from \
         `run`): move what they need below, or pass it in:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_each_way_of_naming_a_higher_layer() {
    for line in [
        "use crate::app::Context;",
        "    crate::app::inactive::explain(entry)",
        "fn f(c: &crate::app::Context) {}",
        "use crate::cli::Cli;",
        "use super::app::run;",
        "use crate::{app, config};",
    ] {
        assert_eq!(higher_references(line).len(), 1, "missed: {line}");
    }
    for line in [
        "use crate::context::Context;",
        "use crate::application::X;",
        "// crate::app::Context in a comment",
        "let app = 1;",
        "use crate::client::X;",
    ] {
        assert!(higher_references(line).is_empty(), "false hit: {line}");
    }
    let run_never = FORBIDDEN
        .iter()
        .find(|(module, _)| *module == "run")
        .map(|(_, never)| *never)
        .expect("a rule for run");
    for line in [
        "use crate::review::model_record::ModelRecord;",
        "    crate::verdict::citations::find(text)",
        "use crate::{config, verdict};",
    ] {
        assert_eq!(references(line, run_never).len(), 1, "missed: {line}");
    }
    for line in [
        "use crate::lane_result::model_record;",
        "use crate::reviewer::X;",
        "let review = 1;",
    ] {
        assert!(references(line, run_never).is_empty(), "false hit: {line}");
    }
    assert_eq!(
        non_test_code("use crate::config;\n#[cfg(test)]\nmod tests { use crate::cli::Cli; }"),
        "use crate::config;\n"
    );
    assert_eq!(
        non_test_code("//! says `#[cfg(test)]` in prose\nuse crate::app::X;\n"),
        "//! says `#[cfg(test)]` in prose\nuse crate::app::X;\n"
    );
}

/// `code` without its `//` comments (line by line; line numbers are kept).
fn without_comments(code: &str) -> String {
    code.lines()
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each `Result<…, String>` in `code` (an error that is a bare string instead of a typed
/// value), as `line: text`; nested generics, tuples and `->` inside the brackets are followed.
fn string_errors(code: &str) -> Vec<String> {
    let code = without_comments(code);
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for (at, _) in code.match_indices("Result<") {
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let open = at + "Result<".len();
        let mut depth = 1usize;
        // The last two top-level commas: a trailing comma leaves the error before the last.
        let mut commas = [None, None];
        let mut close = None;
        for (i, &byte) in bytes.iter().enumerate().skip(open) {
            match byte {
                b'<' | b'(' | b'[' => depth += 1,
                b'>' if i > 0 && bytes[i - 1] == b'-' => {}
                b'>' | b')' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                b',' if depth == 1 => commas = [commas[1], Some(i)],
                b';' | b'{' | b'}' => break,
                _ => {}
            }
        }
        let (Some(last), Some(close)) = (commas[1], close) else {
            continue;
        };
        let error = match code[last + 1..close].trim() {
            "" => commas[0].map_or("", |before| code[before + 1..last].trim()),
            error => error,
        };
        if matches!(
            error,
            "String" | "std::string::String" | "alloc::string::String"
        ) {
            let line = code[..at].matches('\n').count() + 1;
            let text: String = code[at..=close]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            found.push(format!("{line}: {text}"));
        }
    }
    found
}

#[test]
fn no_function_returns_a_string_error() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src");
        // This file spells the pattern in its own test cases.
        if relative == Path::new("layering.rs") {
            continue;
        }
        let source = std::fs::read_to_string(&file)
            .unwrap_or_else(|err| panic!("reading {}: {err}", file.display()));
        for hit in string_errors(&source) {
            found.push(format!("{}:{hit}", relative.display()));
        }
    }
    assert!(
        found.is_empty(),
        "these return a bare `String` as their error; give the area an error enum whose \
         variants carry the path, field or errno and whose Display says what and the fix (see \
         src/trust/error.rs, src/sandbox/error.rs):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_each_spelling_of_a_string_error() {
    for code in [
        "fn f() -> Result<(), String> {",
        "fn f() -> Result<Option<Vec<u8>>, String> {",
        "fn f() -> Result<(PathBuf, File), String> {",
        "fn f() -> Result<\n    Vec<(String, Level)>,\n    String,\n> {",
        "type Slot = Arc<OnceLock<Result<Grants, String>>>;",
        "let all = it.collect::<Result<Vec<PathBuf>, String>>()?;",
        "fn f() -> std::result::Result<u8, std::string::String> {",
        "fn f() -> Result<Box<dyn Fn() -> u8>, String> {",
    ] {
        assert_eq!(string_errors(code).len(), 1, "missed: {code}");
    }
    for code in [
        "fn f() -> Result<String, Failure> {",
        "fn f() -> Result<BTreeMap<String, String>, Failure> {",
        "fn f() -> io::Result<String> {",
        "fn f() -> Result<(), (u8, String)> {",
        "// fn f() -> Result<(), String> {",
        "fn f() -> IoResult<u8, String> {",
        "fn f() -> Result<(), StringError> {",
    ] {
        assert!(string_errors(code).is_empty(), "false hit: {code}");
    }
}

/// The manifest header members `app/` must read through [`crate::manifest::DeclaredHeader`]
/// (issue 25, item 6: one lenient typed view, no key read back from a raw manifest), spelled
/// as the by-key reads they replace.
const HEADER_READS: [&str; 3] = [".get(\"id\")", ".get(\"version\")", ".get(\"engines\")"];

/// Each line of `code` (comments aside) that reads a manifest header member by key, as
/// `line: text`.
fn header_reads(code: &str) -> Vec<String> {
    without_comments(code)
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            let squeezed: String = line.split_whitespace().collect();
            HEADER_READS.iter().any(|read| squeezed.contains(read))
        })
        .map(|(number, line)| format!("{}: {}", number + 1, line.trim()))
        .collect()
}

#[test]
fn app_reads_the_manifest_header_through_the_lenient_view() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("app"), &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src");
        let source = std::fs::read_to_string(&file)
            .unwrap_or_else(|err| panic!("reading {}: {err}", file.display()));
        for hit in header_reads(non_test_code(&source)) {
            found.push(format!("{}:{hit}", relative.display()));
        }
    }
    assert!(
        found.is_empty(),
        "these read `id`, `version` or `engines` by key; read the manifest's header through \
         crate::manifest::DeclaredHeader::of (a wrong type is a problem to show, not absent):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_each_by_key_header_read() {
    for code in [
        "let id = file.value.get(\"id\").and_then(Value::as_str);",
        "        .get(\"version\")",
        "value.get( \"engines\" ).and_then(|e| e.get(\"gsd\"))",
        "x.get(\"id\").cloned() // and a comment",
    ] {
        assert_eq!(header_reads(code).len(), 1, "missed: {code}");
    }
    for code in [
        "// value.get(\"id\") in a comment",
        "let id = header.id.clone();",
        "map.get(\"identity\")",
        "record.get(\"versions\")",
        "pins.get(&root, id)",
    ] {
        assert!(header_reads(code).is_empty(), "false hit: {code}");
    }
}
