//! The validator is total (manifest.md §3.5): hostile files give diagnostics, never a panic,
//! and the library validator returns for arbitrary JSON in any body field.

use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use crate::util::{acme, validate, TestEnv};

/// Writes `bytes` as `<tmp>/<folder>/capability.json`.
fn write_case(env: &TestEnv, folder: &str, bytes: &[u8]) -> PathBuf {
    let dir = env.root.path().join("cases").join(folder);
    std::fs::create_dir_all(&dir).expect("create case folder");
    let path = dir.join("capability.json");
    std::fs::write(&path, bytes).expect("write case file");
    path
}

/// `validate --json` on one file: exit 1, no panic, and at least one error whose code is one
/// of `codes` (any code when `codes` is empty).
fn assert_rejected(env: &TestEnv, folder: &str, bytes: &[u8], codes: &[&str]) {
    let path = write_case(env, folder, bytes);
    let (out, report) = validate(env, &[path]);
    out.assert_no_panic().assert_status(1);
    let got = report.codes();
    assert!(!report.errors.is_empty(), "{folder}: no error diagnostic");
    if !codes.is_empty() {
        assert!(
            got.iter().any(|code| codes.contains(&code.as_str())),
            "{folder}: expected one of {codes:?}, got {got:?}"
        );
    }
    for diagnostic in &report.errors {
        assert!(
            diagnostic["file"].as_str().is_some_and(|f| !f.is_empty()),
            "{folder}: diagnostic without file: {diagnostic}"
        );
    }
}

#[test]
fn deeply_nested_brackets() {
    let env = TestEnv::new();
    assert_rejected(
        &env,
        "brackets",
        "[".repeat(100_000).as_bytes(),
        &["LD-PARSE"],
    );
}

#[test]
fn number_out_of_f64_range() {
    let env = TestEnv::new();
    assert_rejected(&env, "huge-number", b"1e400", &["LD-PARSE"]);
    assert_rejected(
        &env,
        "huge-number-field",
        br#"{"id": "huge-number-field", "reviewer": {"timeoutFloorMs": 1e400}}"#,
        &["LD-PARSE"],
    );
}

#[test]
fn invalid_utf8() {
    let env = TestEnv::new();
    let mut bytes = serde_json::to_vec(&acme()).expect("serialize");
    let at = bytes
        .windows(4)
        .position(|w| w == b"Acme")
        .expect("Acme in fixture");
    bytes[at] = 0xFF;
    assert_rejected(&env, "acme-review", &bytes, &["LD-PARSE"]);
}

#[test]
fn byte_order_mark() {
    let env = TestEnv::new();
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend(serde_json::to_vec(&acme()).expect("serialize"));
    assert_rejected(&env, "acme-review", &bytes, &["LD-PARSE"]);
}

#[test]
fn empty_file() {
    let env = TestEnv::new();
    assert_rejected(&env, "empty", b"", &["LD-PARSE"]);
}

#[test]
fn nine_mib_file() {
    let env = TestEnv::new();
    let mut bytes = serde_json::to_vec(&acme()).expect("serialize");
    bytes.resize(9 * 1024 * 1024, b' ');
    assert_rejected(&env, "acme-review", &bytes, &["LD-MISSING"]);
}

#[test]
fn deeply_nested_reviewer_body() {
    let env = TestEnv::new();
    // Shallow enough to parse: validation errors.
    let parsable = format!("{{\"reviewer\": {}1{}}}", "[".repeat(100), "]".repeat(100));
    assert_rejected(&env, "nested-100", parsable.as_bytes(), &[]);
    let objects = format!(
        "{{\"reviewer\": {}1{}}}",
        "{\"a\":".repeat(100),
        "}".repeat(100)
    );
    assert_rejected(&env, "nested-objects", objects.as_bytes(), &[]);
    // Beyond the parser's depth limit: a parse error, not a stack overflow.
    let deep = format!(
        "{{\"reviewer\": {}1{}}}",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    assert_rejected(&env, "nested-deep", deep.as_bytes(), &["LD-PARSE"]);
    // Deep value (about 100 levels, under the parser's limit) inside an otherwise valid lane.
    let mut manifest = acme();
    let mut nested = json!("x");
    for _ in 0..50 {
        nested = json!({ "k": [nested] });
    }
    manifest["reviewer"]["slug"] = nested;
    assert_rejected(
        &env,
        "acme-review",
        &serde_json::to_vec(&manifest).expect("serialize"),
        &["RB-SLUG"],
    );
}

// ---------------------------------------------------------------------------------------
// In-process fuzzing of the library validator and the JSON reader.

/// Strings that matter to the vocabulary, mixed with arbitrary ones.
fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => ".{0,24}",
        1 => prop::sample::select(vec![
            "", " ", "spawn", "openai-http", "command-exists", "command-capability",
            "http-reachable", "stdin", "argv", "argv-file-ref", "none", "stdout", "file-arg",
            "env", "handler-owned", "stub-with-stderr", "diff-only", "source-grounded",
            "antigravity", "openai-compatible", "opencode", "{{model}}", "{{prompt}}",
            "{{output}}", "{{effort}}", "{{ model }}", "--acme", "--agy", "acme", "claude",
            "constructor", "__proto__", "prototype", "review.models.acme", "/v1/models",
            "v1/chat", "gsd-acme", ">=1.9.0", "1.0.0", "\u{1b}[31m", "é\u{0}",
        ])
        .prop_map(str::to_owned),
        1 => (0usize..20_000).prop_map(|n| "x".repeat(n)),
    ]
}

/// Object keys: known field names and arbitrary text.
fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => prop::sample::select(vec![
            "slug", "flags", "transport", "probe", "invoke", "timeoutFloorMs", "emptyOutput",
            "reviewsSection", "evidenceClass", "requiresBinaries", "promptBudgetKey",
            "modelConfigKey", "handler", "kind", "binary", "needle", "timeoutMs",
            "hostConfigKey", "path", "args", "promptChannel", "outputChannel", "outputArg",
            "modelArg", "effortChannel", "defaultHost", "modelDiscovery", "fallbackModel",
            "type", "default", "values", "description", "gsd", "__proto__", "",
        ])
        .prop_map(str::to_owned),
        1 => ".{0,12}",
    ]
}

fn arb_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            1.5,
            -5.0,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            1e300
        ])
        .prop_map(|f| json!(f)),
    ]
}

/// Arbitrary JSON of bounded depth.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        arb_number(),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(8, 96, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((arb_key(), inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// JSON pointers into the acme manifest that fuzzing overwrites.
const TARGETS: &[&str] = &[
    "",
    "/reviewer",
    "/reviewer/slug",
    "/reviewer/flags",
    "/reviewer/flags/0",
    "/reviewer/transport",
    "/reviewer/probe",
    "/reviewer/probe/kind",
    "/reviewer/probe/binary",
    "/reviewer/probe/needle",
    "/reviewer/probe/timeoutMs",
    "/reviewer/probe/hostConfigKey",
    "/reviewer/probe/path",
    "/reviewer/probe/retries",
    "/reviewer/invoke",
    "/reviewer/invoke/binary",
    "/reviewer/invoke/args",
    "/reviewer/invoke/args/1",
    "/reviewer/invoke/promptChannel",
    "/reviewer/invoke/outputChannel",
    "/reviewer/invoke/modelArg",
    "/reviewer/invoke/effortChannel",
    "/reviewer/invoke/outputArg",
    "/reviewer/invoke/hostConfigKey",
    "/reviewer/invoke/defaultHost",
    "/reviewer/invoke/path",
    "/reviewer/invoke/modelDiscovery",
    "/reviewer/invoke/fallbackModel",
    "/reviewer/invoke/cwd",
    "/reviewer/invoke/args/-",
    "/reviewer/flags/-",
    "/reviewer/requiresBinaries/-",
    "/reviewer/futureField",
    "/reviewer/timeoutFloorMs",
    "/reviewer/emptyOutput",
    "/reviewer/reviewsSection",
    "/reviewer/evidenceClass",
    "/reviewer/requiresBinaries",
    "/reviewer/promptBudgetKey",
    "/reviewer/modelConfigKey",
    "/reviewer/handler",
    "/id",
    "/role",
    "/version",
    "/tier",
    "/requires",
    "/engines",
    "/engines/gsd",
    "/config",
    "/config/review.models.acme",
    "/config/review.models.acme/type",
    "/config/review.models.acme/default",
    "/config/review.models.acme/values",
    "/compatVersions",
    "/integrity",
    "/provenance",
    "/runtime",
    "/skills",
];

/// Sets the value at `pointer` (the root for `""`): an object member is inserted or
/// replaced, an array element replaced, `-` appends. A location whose parent an earlier pick
/// removed is left alone.
fn set_at(manifest: &mut Value, pointer: &str, value: Value) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        *manifest = value;
        return;
    };
    match manifest.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(last.to_owned(), value);
        }
        Some(Value::Array(items)) if last == "-" => items.push(value),
        Some(Value::Array(items)) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                *slot = value;
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn validator_is_total_for_any_reviewer_body(body in arb_json()) {
        let mut manifest = acme();
        manifest["reviewer"] = body;
        let diagnostics = gsd_lane::api::manifest::validate_value(&manifest, Some("acme-review"));
        for diagnostic in &diagnostics {
            // Rendering any finding cannot fail either.
            let _ = diagnostic.to_string();
        }
    }

    #[test]
    fn validator_is_total_for_any_field(
        picks in prop::collection::vec((prop::sample::select(TARGETS), arb_json()), 1..6),
        role in prop::sample::select(vec!["reviewer", "runtime", "feature"]),
        transport in prop::sample::select(vec!["spawn", "openai-http"]),
    ) {
        let mut manifest = acme();
        manifest["role"] = json!(role);
        manifest["reviewer"]["transport"] = json!(transport);
        for (pointer, value) in picks {
            set_at(&mut manifest, pointer, value);
        }
        let diagnostics = gsd_lane::api::manifest::validate_value(&manifest, Some("acme-review"));
        for diagnostic in &diagnostics {
            let _ = diagnostic.to_string();
        }
        let _ = gsd_lane::api::manifest::validate_value(&manifest, None);
    }

    #[test]
    fn json_reader_is_total_for_any_bytes(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..2048),
            prop::collection::vec(
                prop::sample::select(b"{}[]\",:0123456789.eE+-truefalsnl \n\t\\u\xef\xbb\xbf".to_vec()),
                0..2048,
            ),
        ]
    ) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = gsd_lane::api::registry::read::parse_json(&text);
    }
}
