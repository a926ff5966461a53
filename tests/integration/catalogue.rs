//! Table-driven check of the error/warning catalogue (manifest.md §8) against
//! `tests/fixtures/catalogue/<case>/` folders.
//!
//! Each case folder holds a `case.json` (`expect`: list of `{code, severity, field}`, `exact`:
//! bool) and one or more `capability.json` files in sub-folders. All of them are validated
//! together with `validate --json`; the reported diagnostics are compared as a multiset of
//! `(code, severity, field)`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{fixture, str_of, validate, TestEnv};

/// Error codes whose field is a closed enum: their diagnostics must carry `valid`.
const ENUM_CODES: [&str; 13] = [
    "RB-TRANSPORT",
    "RB-POSTURE",
    "RB-EMPTYOUTPUT",
    "RB-EVIDENCE",
    "RB-HANDLER",
    "PR-KIND",
    "SP-PROMPTCHANNEL",
    "SP-OUTPUTCHANNEL",
    "SP-EFFORT",
    "HT-DISCOVERY",
    "ENV-ROLE",
    "ENV-TIER",
    "CFG-SLICE-TYPE",
];

/// Every code of manifest.md §8.1-§8.6 and §8.8 (RB-INTERNAL excluded: it needs a panic).
const SPEC_CODES: &[&str] = &[
    // §8.1
    "ENV-OBJECT",
    "ENV-ID",
    "ENV-ID-FOLDER",
    "ENV-ROLE",
    "ENV-TITLE",
    "ENV-DESCRIPTION",
    "ENV-TIER",
    "ENV-REQUIRES",
    "ENV-REQUIRES-ENTRY",
    "ENV-VERSION",
    "ENV-ENGINES",
    "ENV-ENGINES-GSD",
    "ENV-COMPAT",
    "ENV-INTEGRITY",
    "ENV-PROVENANCE",
    "ROLE-FEATURE-REVIEWER",
    "ROLE-REVIEWER-NOBODY",
    "ROLE-REVIEWER-RUNTIME",
    "ROLE-REVIEWER-FEATUREFIELD",
    "OK-NOBODY",
    "OK-TOPLEVEL",
    "OK-RUNTIME-LANE",
    "ROLE-UNKNOWN-WITH-BODY",
    // §8.2
    "RB-TYPE",
    "RB-EMPTY",
    "RB-SLUG",
    "RB-SLUG-RESERVED",
    "RB-SLUG-GRAMMAR",
    "OK-SLUG-DIGIT",
    "RB-FLAGS",
    "RB-FLAGS-EMPTY",
    "RB-FLAG-GRAMMAR",
    "RB-FLAG-DUP",
    "RB-TRANSPORT",
    "RB-TIMEOUT",
    "OK-TIMEOUT-ONE",
    "RB-EMPTYOUTPUT",
    "RB-SECTION",
    "RB-EVIDENCE",
    "RB-REQBIN",
    "RB-REQBIN-ENTRY",
    "RB-MODELKEY",
    "OK-MODELKEY-ABSENT",
    "RB-BUDGETKEY",
    "RB-HANDLER",
    "RB-POSTURE",
    // §8.3
    "PR-TYPE",
    "PR-KIND",
    "PR-UNKNOWN",
    "PR-BINARY",
    "PR-BINARY-FORBIDDEN",
    "PR-NEEDLE",
    "PR-NEEDLE-FORBIDDEN",
    "PR-HOSTKEY",
    "PR-PATH",
    "PR-HOSTKEY-FORBIDDEN",
    "PR-PATH-FORBIDDEN",
    "PR-TIMEOUT",
    "PR-TIMEOUT-FORBIDDEN",
    "OK-PROBE-ANY-TRANSPORT",
    // §8.4
    "INV-TYPE",
    "INV-MIXED",
    "INV-FORBIDDEN",
    "INV-NEITHER",
    "SP-BINARY",
    "SP-ARGS",
    "SP-ARGS-ENTRY",
    "OK-ARGS-EMPTY",
    "SP-PROMPTCHANNEL",
    "SP-OUTPUTCHANNEL",
    "SP-OUTPUTARG-REQUIRED",
    "SP-OUTPUTARG-FORBIDDEN",
    "SP-MODELARG",
    "SP-EFFORT",
    "HT-HOSTKEY",
    "HT-PATH",
    "HT-DISCOVERY",
    "HT-EFFORT",
    "HT-DEFAULTHOST",
    "HT-FALLBACKMODEL",
    // §8.5
    "CFG-TYPE",
    "CFG-KEY",
    "CFG-SLICE",
    "CFG-SLICE-TYPE",
    "CFG-SLICE-DEFAULT",
    "CFG-SLICE-DEFAULT-TYPE",
    "CFG-SLICE-ENUM-VALUES",
    "CFG-SLICE-ENUM-DEFAULT",
    "CFG-SLICE-DESCRIPTION",
    // §8.6
    "X-SLUG-DUP",
    "X-FLAG-DUP",
    "X-SECTION-DUP",
    "OK-SECTION-CASE",
    "OK-ID-EQUALS-SLUG",
    "X-ID-DUP",
    "X-CONFIG-OWNED",
    "X-CONFIG-CENTRAL",
    "X-CONFIG-PATTERN",
    "X-REQUIRES-MISSING",
    "X-REQUIRES-CYCLE",
    "X-TIER",
    // §8.8
    "W-BODY-UNKNOWN",
    "W-INVOKE-UNKNOWN",
    "W-PLACEHOLDER-MISSING",
    "W-PLACEHOLDER-EMBEDDED",
    "W-HANDLER-OWNED-NO-HANDLER",
    "W-KEY-UNDECLARED",
    "W-MODELKEY-NO-MODELARG",
    "W-PATH-SLASH",
    "W-SECTION-CHARS",
];

/// Catalogue rows that name a situation rather than an emitted code (the `OK-*` rows and the
/// rows whose outcome is other codes). They are covered by a case folder named after them.
fn is_situation(code: &str) -> bool {
    code.starts_with("OK-") || matches!(code, "RB-EMPTY" | "INV-NEITHER" | "ROLE-UNKNOWN-WITH-BODY")
}

/// One diagnostic as compared: `(code, severity, field)`.
type Key = (String, String, String);

struct Case {
    name: String,
    dir: PathBuf,
    expect: Vec<Key>,
    exact: bool,
}

fn catalogue_dir() -> PathBuf {
    fixture("catalogue")
}

fn key_of(value: &Value) -> Key {
    (
        str_of(value, "code"),
        str_of(value, "severity"),
        str_of(value, "field"),
    )
}

/// Every `capability.json` under `dir`, recursively, sorted by path.
fn manifests_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        let Ok(listing) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in listing.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "capability.json") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The case folders, sorted by name; a malformed `case.json` is reported, not skipped.
fn cases() -> (Vec<Case>, Vec<String>) {
    let dir = catalogue_dir();
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("listing {}: {err}", dir.display()))
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    folders.sort();
    let mut cases = Vec::new();
    let mut problems = Vec::new();
    for folder in folders {
        let name = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let case_file = folder.join("case.json");
        let Ok(text) = std::fs::read_to_string(&case_file) else {
            problems.push(format!("{name}: no readable case.json"));
            continue;
        };
        let value: Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(err) => {
                problems.push(format!("{name}: case.json does not parse: {err}"));
                continue;
            }
        };
        let Some(expect) = value.get("expect").and_then(Value::as_array) else {
            problems.push(format!("{name}: case.json has no `expect` array"));
            continue;
        };
        cases.push(Case {
            name,
            dir: folder,
            expect: expect.iter().map(key_of).collect(),
            exact: value.get("exact").and_then(Value::as_bool).unwrap_or(false),
        });
    }
    (cases, problems)
}

fn counts(keys: &[Key]) -> BTreeMap<Key, usize> {
    let mut map = BTreeMap::new();
    for key in keys {
        *map.entry(key.clone()).or_insert(0) += 1;
    }
    map
}

fn show(keys: &BTreeMap<Key, usize>) -> String {
    if keys.is_empty() {
        return "(none)".to_owned();
    }
    keys.iter()
        .map(|((code, severity, field), n)| {
            let times = if *n > 1 {
                format!(" ×{n}")
            } else {
                String::new()
            };
            format!("{code}/{severity}@{field}{times}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs one case; returns every problem found (empty when the case passes).
fn check_case(env: &TestEnv, case: &Case) -> Vec<String> {
    let mut problems = Vec::new();
    let files = manifests_under(&case.dir);
    if files.is_empty() {
        return vec![format!(
            "{}: no capability.json under the case folder",
            case.name
        )];
    }
    let (out, report) = validate(env, &files);
    let got: Vec<Key> = report.all().map(key_of).collect();
    let got_counts = counts(&got);
    let want_counts = counts(&case.expect);
    let mismatch = if case.exact {
        got_counts != want_counts
    } else {
        want_counts
            .iter()
            .any(|(key, n)| got_counts.get(key).copied().unwrap_or(0) < *n)
    };
    if mismatch {
        let missing: BTreeMap<Key, usize> = want_counts
            .iter()
            .filter_map(|(key, n)| {
                let have = got_counts.get(key).copied().unwrap_or(0);
                (have < *n).then(|| (key.clone(), n - have))
            })
            .collect();
        let extra: BTreeMap<Key, usize> = got_counts
            .iter()
            .filter_map(|(key, n)| {
                let want = want_counts.get(key).copied().unwrap_or(0);
                (*n > want).then(|| (key.clone(), n - want))
            })
            .collect();
        problems.push(format!(
            "{} ({}): missing [{}]{}",
            case.name,
            if case.exact { "exact" } else { "subset" },
            show(&missing),
            if case.exact {
                format!("; unexpected [{}]", show(&extra))
            } else {
                String::new()
            }
        ));
    }
    let expects_error = case
        .expect
        .iter()
        .any(|(_, severity, _)| severity == "error");
    let want_status = if expects_error { 1 } else { 0 };
    if out.code != Some(want_status) {
        problems.push(format!(
            "{}: exit status {:?}, expected {want_status}",
            case.name, out.code
        ));
    }
    for diagnostic in report.all() {
        let code = str_of(diagnostic, "code");
        let file_ok = diagnostic
            .get("file")
            .and_then(Value::as_str)
            .is_some_and(|f| !f.is_empty());
        let line_ok = diagnostic
            .get("line")
            .and_then(Value::as_u64)
            .is_some_and(|l| l >= 1);
        let column_ok = diagnostic
            .get("column")
            .and_then(Value::as_u64)
            .is_some_and(|c| c >= 1);
        if !(file_ok && line_ok && column_ok) {
            problems.push(format!(
                "{}: {code} lacks file/line/column: file={} line={} column={}",
                case.name, diagnostic["file"], diagnostic["line"], diagnostic["column"]
            ));
        }
        let is_error = str_of(diagnostic, "severity") == "error";
        if is_error && ENUM_CODES.contains(&code.as_str()) {
            let valid_ok = diagnostic
                .get("valid")
                .and_then(Value::as_array)
                .is_some_and(|members| !members.is_empty() && members.iter().all(Value::is_string));
            if !valid_ok {
                problems.push(format!(
                    "{}: {code} on enum field {} has no `valid` list (got {})",
                    case.name, diagnostic["field"], diagnostic["valid"]
                ));
            }
        }
    }
    problems
}

#[test]
fn catalogue_cases_report_expected_diagnostics() {
    let (cases, mut problems) = cases();
    assert!(!cases.is_empty(), "no catalogue cases found");
    // A few workers: the cases are independent processes.
    let workers = 4;
    let chunk = cases.len().div_ceil(workers);
    let found: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(chunk)
            .map(|slice| {
                scope.spawn(move || {
                    let env = TestEnv::new();
                    slice
                        .iter()
                        .flat_map(|case| check_case(&env, case))
                        .collect::<Vec<String>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("catalogue worker"))
            .collect()
    });
    problems.extend(found);
    assert!(
        problems.is_empty(),
        "{} catalogue problem(s) over {} cases:\n{}",
        problems.len(),
        cases.len(),
        problems.join("\n")
    );
}

#[test]
fn catalogue_covers_every_spec_code() {
    let (cases, problems) = cases();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let expected_codes: Vec<&str> = cases
        .iter()
        .flat_map(|case| case.expect.iter().map(|(code, _, _)| code.as_str()))
        .collect();
    let names: Vec<String> = cases.iter().map(|case| case.name.to_lowercase()).collect();
    let uncovered: Vec<&str> = SPEC_CODES
        .iter()
        .copied()
        .filter(|code| {
            if is_situation(code) {
                let stem = code.to_lowercase();
                !names
                    .iter()
                    .any(|name| *name == stem || name.starts_with(&format!("{stem}-")))
            } else {
                !expected_codes.contains(code)
            }
        })
        .collect();
    assert!(
        uncovered.is_empty(),
        "catalogue fixtures miss {} code(s) of manifest.md §8: {}",
        uncovered.len(),
        uncovered.join(", ")
    );
}
