//! `flags` and `sections` (review-workflow.md §3).

use serde_json::{json, Value};

use crate::util::TestEnv;

const DEFAULT_FLAGS: &str = "--gemini\n--claude\n--codex\n--coderabbit\n--opencode\n--qwen\n\
--cursor\n--antigravity\n--agy\n--ollama\n--lm-studio\n--llama-cpp\n--kimi-code\n";

/// The twelve rows of review-workflow.md §3: `(slug, reviewsSection)`.
const SECTIONS: [(&str, &str); 12] = [
    ("gemini", "Gemini"),
    ("claude", "Claude"),
    ("codex", "Codex"),
    ("coderabbit", "CodeRabbit"),
    ("opencode", "OpenCode"),
    ("qwen", "Qwen"),
    ("cursor", "Cursor"),
    ("antigravity", "Antigravity"),
    ("ollama", "Ollama"),
    ("lm_studio", "LM Studio"),
    ("llama_cpp", "llama.cpp"),
    ("kimi-code", "Kimi Code"),
];

fn default_sections() -> String {
    SECTIONS
        .iter()
        .map(|(slug, section)| format!("{slug}\t{section}\n"))
        .collect()
}

fn stdout_of(env: &TestEnv, args: &[&str]) -> String {
    let out = env.run(args);
    out.assert_status(0).assert_no_panic();
    out.stdout
}

#[test]
fn flags_default_output_is_exact() {
    let env = TestEnv::new();
    assert_eq!(stdout_of(&env, &["flags"]), DEFAULT_FLAGS);
}

#[test]
fn sections_default_output_is_exact() {
    let env = TestEnv::new();
    assert_eq!(stdout_of(&env, &["sections"]), default_sections());
}

#[test]
fn selected_list_is_trimmed_deduplicated_and_in_descriptor_order() {
    let env = TestEnv::new();
    let selected = "qwen, ,gemini,nope,gemini";
    assert_eq!(
        stdout_of(&env, &["flags", "--selected", selected]),
        "--gemini\n--qwen\n"
    );
    assert_eq!(
        stdout_of(&env, &["sections", "--selected", selected]),
        "gemini\tGemini\nqwen\tQwen\n"
    );
    // A lane with two flags emits both, in declared order.
    assert_eq!(
        stdout_of(&env, &["flags", "--selected", "antigravity"]),
        "--antigravity\n--agy\n"
    );
}

#[test]
fn selecting_only_unknown_slugs_prints_nothing() {
    let env = TestEnv::new();
    assert_eq!(stdout_of(&env, &["flags", "--selected", "nope"]), "");
    assert_eq!(stdout_of(&env, &["sections", "--selected", "nope"]), "");
}

#[test]
fn empty_selection_means_every_lane() {
    let env = TestEnv::new();
    assert_eq!(stdout_of(&env, &["flags", "--selected", ""]), DEFAULT_FLAGS);
    assert_eq!(
        stdout_of(&env, &["sections", "--selected", " , "]),
        default_sections()
    );
}

#[test]
fn json_variants_parse_and_agree() {
    let env = TestEnv::new();
    let flags: Value =
        serde_json::from_str(&stdout_of(&env, &["flags", "--json"])).expect("flags --json parses");
    let expected_flags: Vec<&str> = DEFAULT_FLAGS.lines().collect();
    assert_eq!(flags, json!(expected_flags));

    let sections: Value = serde_json::from_str(&stdout_of(&env, &["sections", "--json"]))
        .expect("sections --json parses");
    let expected_sections: Vec<Value> = SECTIONS
        .iter()
        .map(|(slug, section)| json!({"slug": slug, "section": section}))
        .collect();
    assert_eq!(sections, Value::Array(expected_sections));

    let selected: Value = serde_json::from_str(&stdout_of(
        &env,
        &[
            "sections",
            "--json",
            "--selected",
            "qwen, ,gemini,nope,gemini",
        ],
    ))
    .expect("sections --json --selected parses");
    assert_eq!(
        selected,
        json!([{"slug": "gemini", "section": "Gemini"}, {"slug": "qwen", "section": "Qwen"}])
    );

    let none: Value =
        serde_json::from_str(&stdout_of(&env, &["flags", "--json", "--selected", "nope"]))
            .expect("flags --json --selected nope parses");
    assert_eq!(none, json!([]));

    let list: Value =
        serde_json::from_str(&stdout_of(&env, &["list", "--json"])).expect("list --json parses");
    assert_eq!(list.as_array().map(Vec::len), Some(12));
}
