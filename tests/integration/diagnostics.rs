//! `validate`'s human diagnostics: the editor line first, then the source line with a caret
//! under the field and a did-you-mean; colour only when asked (or on a terminal without
//! `NO_COLOR`); `--json` keeps its shape.

use serde_json::{json, Value};

use crate::util::{self, Scope, TestEnv};

/// An overlay whose `transport` is misspelt and which carries a misspelt field name.
fn misspelt() -> (TestEnv, std::path::PathBuf) {
    let env = TestEnv::new();
    let mut manifest = util::acme();
    manifest["reviewer"]["transport"] = json!("spwan");
    manifest["reviewer"]["emptyOutpt"] = json!("stub-with-stderr");
    let path = env.write_overlay(Scope::Global, "acme-review", &manifest);
    (env, path)
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in:\n{text}"))
        + 1
}

#[test]
fn validate_shows_the_line_a_caret_and_did_you_mean() {
    let (env, path) = misspelt();
    let source = util::read_text(&path);
    let out = env.run(&["validate", &path.display().to_string()]);
    out.assert_status(1);
    let err = &out.stderr;
    let line = line_of(&source, "\"spwan\"");
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!(
            "{}:{line}:5: error[RB-TRANSPORT] reviewer.transport: ",
            path.display()
        )),
        "{first}"
    );
    assert!(
        err.contains(&format!("{line} |     \"transport\": \"spwan\",")),
        "{err}"
    );
    assert!(err.contains("|     ^^^^^^^^^^^\n"), "{err}");
    assert!(err.contains("= help: did you mean `spawn`?"), "{err}");
    assert!(err.contains("= help: did you mean `emptyOutput`?"), "{err}");
    assert!(
        !err.contains('\u{1b}'),
        "colour without a terminal: {err:?}"
    );

    let coloured = env.run(&["validate", &path.display().to_string(), "--color", "always"]);
    assert!(coloured.stderr.contains("\u{1b}["), "{:?}", coloured.stderr);
    let never = env
        .cmd(&["validate", &path.display().to_string(), "--color", "auto"])
        .run();
    assert!(!never.stderr.contains('\u{1b}'), "{:?}", never.stderr);
}

#[test]
fn validate_json_is_unchanged_by_the_rendering() {
    let (env, path) = misspelt();
    let (_, report) = util::validate(&env, &[path]);
    for diagnostic in report.all() {
        let keys: Vec<&String> = diagnostic.as_object().expect("object").keys().collect();
        assert_eq!(
            keys,
            [
                "code",
                "severity",
                "capability",
                "file",
                "line",
                "column",
                "field",
                "message",
                "valid"
            ],
            "{diagnostic}"
        );
        assert!(
            !util::str_of(diagnostic, "message").contains("did you mean"),
            "{diagnostic}"
        );
    }
    assert_eq!(report.errors[0]["code"], Value::from("RB-TRANSPORT"));
}
