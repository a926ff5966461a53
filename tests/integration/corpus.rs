//! The upstream corpus and the shipped first-party manifests validate cleanly and agree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{self, read_json, str_of, validate, Report, TestEnv};

/// The reference's manifests, vendored with their provenance (`PROVENANCE.md` beside them).
const UPSTREAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/upstream-capabilities"
);

/// Every file under `dir`, recursively, sorted by path.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        let listing = std::fs::read_dir(&next)
            .unwrap_or_else(|err| panic!("listing {}: {err}", next.display()));
        for entry in listing {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The upstream corpus directory (vendored in the repository: a missing copy is a failure, never
/// a skip).
fn upstream() -> Option<PathBuf> {
    let dir = PathBuf::from(UPSTREAM);
    assert!(
        dir.is_dir(),
        "the vendored upstream corpus is missing at {}",
        dir.display()
    );
    Some(dir)
}

fn assert_clean(out: &util::Outcome, report: &Report, what: &str) {
    assert!(
        report.errors.is_empty() && report.warnings.is_empty(),
        "{what}: expected 0 errors and 0 warnings, got:\n{}",
        serde_json::to_string_pretty(&report.all().collect::<Vec<_>>()).unwrap_or_default()
    );
    out.assert_status(0);
}

/// Upstream manifests that carry a `reviewer` object, keyed by id.
fn upstream_lanes(dir: &Path) -> BTreeMap<String, Value> {
    files_under(dir)
        .iter()
        .filter(|path| path.file_name().is_some_and(|n| n == "capability.json"))
        .map(|path| read_json(path))
        .filter(|value| value.get("reviewer").is_some_and(Value::is_object))
        .map(|value| (str_of(&value, "id"), value))
        .collect()
}

#[test]
fn upstream_corpus_validates_without_findings() {
    let Some(dir) = upstream() else { return };
    let files: Vec<PathBuf> = files_under(&dir)
        .into_iter()
        .filter(|path| path.file_name().is_some_and(|n| n == "capability.json"))
        .collect();
    assert!(
        !files.is_empty(),
        "upstream corpus at {} is empty",
        dir.display()
    );
    let env = TestEnv::new();
    let (out, report) = validate(&env, &files);
    assert_clean(&out, &report, "upstream corpus");
}

/// Upstream lanes of the vendored (2026-08-08) corpus that the upstream deleted since
/// (spec/upstream-since-2026-08.md §11), with the example overlay each lives on as.
const RETIRED_SINCE: [(&str, &str); 1] = [("gemini", "examples/lanes/gemini")];

#[test]
fn upstream_lanes_are_the_first_party_lanes_and_the_retired_ones() {
    let Some(dir) = upstream() else { return };
    let lanes = upstream_lanes(&dir);
    let first_party = util::first_party_ids();
    let mut expected: Vec<&str> = first_party.iter().map(String::as_str).collect();
    expected.extend(RETIRED_SINCE.iter().map(|(id, _)| *id));
    expected.sort_unstable();
    assert_eq!(
        lanes.keys().map(String::as_str).collect::<Vec<_>>(),
        expected,
        "upstream manifests with a reviewer object vs capabilities/descriptor-order.txt plus \
         the retired lanes"
    );
    let upstream_slugs: Vec<String> = first_party
        .iter()
        .filter_map(|id| lanes.get(id))
        .map(|value| str_of(&value["reviewer"], "slug"))
        .collect();

    let env = TestEnv::new();
    let out = env.run(&["sections"]);
    out.assert_status(0);
    let section_slugs: Vec<String> = out
        .stdout
        .lines()
        .map(|line| line.split('\t').next().unwrap_or("").to_owned())
        .collect();
    assert_eq!(upstream_slugs, section_slugs);
}

/// A retired lane's example overlay declares the upstream lane as it was (body and config):
/// installing it gives back the lane exactly.
#[test]
fn retired_lanes_live_on_unchanged_as_example_overlays() {
    let Some(dir) = upstream() else { return };
    let lanes = upstream_lanes(&dir);
    for (id, folder) in RETIRED_SINCE {
        let path = util::workspace_root().join(folder).join("capability.json");
        let ours = read_json(&path);
        let theirs = lanes.get(id).expect("the retired lane is in the corpus");
        assert_eq!(ours.get("reviewer"), theirs.get("reviewer"), "{folder}");
        assert_eq!(config_shape(&ours), config_shape(theirs), "{folder}");
        let env = TestEnv::new();
        let (out, report) = validate(&env, &[path]);
        assert_clean(&out, &report, folder);
    }
}

/// The shipped `capabilities/<id>/capability.json` files.
fn shipped() -> Vec<PathBuf> {
    let dir = util::workspace_root().join("capabilities");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("listing {}: {err}", dir.display()))
        .map(|entry| {
            entry
                .expect("directory entry")
                .path()
                .join("capability.json")
        })
        .filter(|path| path.is_file())
        .collect();
    found.sort();
    found
}

#[test]
fn shipped_lanes_validate_without_findings() {
    let files = shipped();
    let ids: Vec<String> = files
        .iter()
        .map(|path| str_of(&read_json(path), "id"))
        .collect();
    let mut expected = util::first_party_ids();
    expected.sort();
    assert_eq!(ids, expected, "shipped capabilities");
    let env = TestEnv::new();
    let (out, report) = validate(&env, &files);
    assert_clean(&out, &report, "shipped capabilities");
}

/// `config` reduced to key → (type, default).
fn config_shape(manifest: &Value) -> BTreeMap<String, (Value, Value)> {
    manifest
        .get("config")
        .and_then(Value::as_object)
        .map(|config| {
            config
                .iter()
                .map(|(key, slice)| {
                    (
                        key.clone(),
                        (
                            slice.get("type").cloned().unwrap_or(Value::Null),
                            slice.get("default").cloned().unwrap_or(Value::Null),
                        ),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The upstream's merged changes after the vendored state (spec/upstream-since-2026-08.md §11,
/// the table of first-party lanes): every lane gets a prompt budget key, eight a timeout key,
/// claude/codex/opencode effort keys with default `high`, cursor a model, antigravity the
/// `{{nativeTimeout}}` placeholder, claude its `invoke.env` pair (§9.4). The declared types and
/// defaults of the new keys are not stated upstream; these are gsd-lane's (a number of seconds,
/// 0 = no override; the seven effort values with the lane default; -1 = unset budget; an empty
/// model).
fn upstream_since_2026_08(upstream: &Value) -> Value {
    let mut expected = upstream.clone();
    let slug = str_of(&upstream["reviewer"], "slug");
    let timeout_keyed = [
        "claude",
        "codex",
        "opencode",
        "antigravity",
        "kimi-code",
        "ollama",
        "lm_studio",
        "llama_cpp",
    ];
    let effort_keyed = ["claude", "codex", "opencode"];
    let mut config = expected["config"].as_object().cloned().unwrap_or_default();
    let reviewer = &mut expected["reviewer"];
    let budget = format!("review.max_prompt_tokens_per_reviewer.{slug}");
    if reviewer["promptBudgetKey"].is_null() {
        reviewer["promptBudgetKey"] = json!(budget);
        config.insert(budget, json!({"type": "number", "default": -1}));
    }
    if timeout_keyed.contains(&slug.as_str()) {
        let key = format!("review.timeouts.{slug}");
        reviewer["timeoutConfigKey"] = json!(key);
        config.insert(key, json!({"type": "number", "default": 0}));
    } else {
        reviewer["timeoutConfigKey"] = Value::Null;
    }
    if effort_keyed.contains(&slug.as_str()) {
        let key = format!("review.effort.{slug}");
        reviewer["effortConfigKey"] = json!(key);
        reviewer["defaultEffort"] = json!("high");
        config.insert(key, json!({"type": "enum", "default": "high"}));
    } else {
        reviewer["effortConfigKey"] = Value::Null;
        reviewer["defaultEffort"] = Value::Null;
    }
    match slug.as_str() {
        // #2493 (taken: decisions.md row 18), §9.4.
        "claude" => {
            reviewer["invoke"]["env"] = json!({
                "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
                "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"
            });
        }
        "cursor" => {
            reviewer["modelConfigKey"] = json!("review.models.cursor");
            reviewer["invoke"]["modelArg"] = json!("--model");
            reviewer["invoke"]["args"] = json!([
                "-p",
                "{{model}}",
                "--mode",
                "ask",
                "--trust",
                "--output-format",
                "text",
                "{{prompt}}"
            ]);
            config.insert(
                "review.models.cursor".to_owned(),
                json!({"type": "string", "default": ""}),
            );
        }
        "antigravity" => {
            reviewer["invoke"]["args"] = json!([
                "--print-timeout",
                "{{nativeTimeout}}",
                "{{model}}",
                "-p",
                "{{prompt}}"
            ]);
        }
        _ => {}
    }
    expected["config"] = Value::Object(config);
    expected
}

/// The upstream manifest of `id` moved to the upstream's current state
/// ([`upstream_since_2026_08`]), with the deviations README.md § "First-party lanes: where they
/// differ from upstream" documents applied; every other field must stay identical.
fn with_documented_deviations(id: &str, upstream: &Value) -> Value {
    let mut expected = upstream_since_2026_08(upstream);
    let reviewer = &mut expected["reviewer"];
    match id {
        // qwen-code takes `-m`: a model is sent only when `review.models.qwen` is set.
        "qwen" => {
            reviewer["invoke"]["args"] = serde_json::json!(["{{model}}", "-"]);
            reviewer["invoke"]["modelArg"] = serde_json::json!("-m");
            reviewer["modelConfigKey"] = serde_json::json!("review.models.qwen");
            expected["config"]["review.models.qwen"] = json!({"type": "string", "default": ""});
        }
        // Kimi Code 2.x: stream-json output read by the kimi-code handler; the probe needle
        // only Kimi Code's help prints (the legacy kimi-cli also has `--output-format`).
        "kimi-code" => {
            reviewer["probe"]["needle"] = serde_json::json!("--output-format <format>");
            // `kimi --help` loads a 21 MB bundle: 4.8-9.2 s measured on a loaded 2-core host.
            reviewer["probe"]["timeoutMs"] = serde_json::json!(20000);
            reviewer["invoke"]["args"] = serde_json::json!([
                "{{model}}",
                "--output-format",
                "stream-json",
                "-p",
                "{{prompt}}"
            ]);
            reviewer["handler"] = serde_json::json!("kimi-code");
        }
        _ => {}
    }
    expected
}

#[test]
fn shipped_lanes_match_upstream_bodies_and_config() {
    let Some(dir) = upstream() else { return };
    let lanes = upstream_lanes(&dir);
    let mut mismatches = Vec::new();
    for path in shipped() {
        let ours = read_json(&path);
        let id = str_of(&ours, "id");
        let Some(theirs) = lanes.get(&id) else {
            mismatches.push(format!("{id}: no upstream lane manifest"));
            continue;
        };
        let theirs = &with_documented_deviations(&id, theirs);
        if ours.get("reviewer") != theirs.get("reviewer") {
            mismatches.push(format!(
                "{id}: reviewer body differs\nshipped:  {}\nupstream: {}",
                ours["reviewer"], theirs["reviewer"]
            ));
        }
        if config_shape(&ours) != config_shape(theirs) {
            mismatches.push(format!(
                "{id}: config keys/types/defaults differ\nshipped:  {:?}\nupstream: {:?}",
                config_shape(&ours),
                config_shape(theirs)
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
