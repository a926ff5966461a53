//! `gsd-lane plan` (invocation.md §3.3, §3.5, §4, §14, §15): the golden table of every
//! first-party lane, with the golden config and with an empty one, plus the §15 invariants.
//!
//! Every command runs the real binary with a cleared environment: `PATH` is the fixture bin
//! directory plus `/usr/bin:/bin`, `HOME` and `GSD_HOME` point into a private temp dir.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{self, Scope, TestEnv};

const RUN: &str = "/run";
const REPO: &str = "/repo";
/// stdin "P" of §15.
const PROMPT: &str = "/run/gsd-review-prompt.md";
const HOSTILE: &str = "; rm -rf /; $(whoami)";
/// Bound on one gsd-lane command (a hang fails the test instead of blocking the suite).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The §4.5 wire text (one argv element; `—` is U+2014).
fn file_ref(prompt_path: &str, repo_root: &str) -> String {
    format!(
        "Read the file at {prompt_path} in full and carry out the review request it contains. \
         The repository under review is at {repo_root} \u{2014} resolve every relative file path \
         in the review request against that absolute root. Output only the resulting markdown \
         review. Do not edit any files."
    )
}

/// `gsd-lane <args>` in `env`'s project with the controlled environment.
fn gsd(env: &TestEnv, args: &[&str]) -> util::Outcome {
    let command = util::gsd_command(env, &util::fixture_path(), &env.project, args);
    util::run_bounded(command, COMMAND_TIMEOUT).0
}

/// A project whose `.planning/config.json` holds `config` (`None`: no config file at all).
fn project(config: Option<&str>) -> TestEnv {
    let env = TestEnv::with_planning();
    if let Some(text) = config {
        std::fs::write(env.project.join(".planning").join("config.json"), text)
            .expect("write config.json");
    }
    env
}

fn golden_config() -> String {
    std::fs::read_to_string(util::fixture("run/golden-config.json")).expect("golden config")
}

/// `plan --run-dir /run --repo-root /repo <extra>`: exit 0, stdout a JSON array.
fn plan(env: &TestEnv, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["plan", "--run-dir", RUN, "--repo-root", REPO];
    args.extend_from_slice(extra);
    let out = gsd(env, &args);
    out.assert_no_panic().assert_status(0);
    match out.json() {
        Value::Array(entries) => entries,
        other => panic!("plan output is not an array: {other}"),
    }
}

fn entry<'a>(entries: &'a [Value], slug: &str) -> &'a Value {
    entries
        .iter()
        .find(|entry| entry["slug"] == slug)
        .unwrap_or_else(|| panic!("no plan entry for {slug}: {entries:?}"))
}

fn argv(entry: &Value) -> Vec<String> {
    entry["plan"]["argv"]
        .as_array()
        .unwrap_or_else(|| panic!("no argv array: {entry}"))
        .iter()
        .map(|arg| {
            arg.as_str()
                .unwrap_or_else(|| panic!("non-string argv element in {entry}"))
                .to_owned()
        })
        .collect()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// One spawn row of the golden table.
struct SpawnRow {
    slug: &'static str,
    binary: &'static str,
    argv: Vec<String>,
    /// `true`: stdin is the prompt path; `false`: no stdin.
    stdin: bool,
    /// `None`: stdout; `Some(path)`: file.
    file: Option<&'static str>,
    timeout_ms: u64,
    handler: Option<&'static str>,
}

fn assert_spawn_row(entries: &[Value], row: &SpawnRow) {
    let entry = entry(entries, row.slug);
    let slug = row.slug;
    assert_eq!(entry["ok"], true, "{slug}: {entry}");
    assert_eq!(entry["transport"], "spawn", "{slug}");
    assert_eq!(
        entry["promptBudget"],
        Value::Null,
        "{slug}: no budget configured"
    );
    let plan = &entry["plan"];
    assert_eq!(plan["binary"], row.binary, "{slug}: binary");
    assert_eq!(argv(entry), row.argv, "{slug}: argv");
    let stdin = if row.stdin {
        json!(PROMPT)
    } else {
        Value::Null
    };
    assert_eq!(plan["stdin"], stdin, "{slug}: stdin");
    assert_eq!(entry["promptPath"], stdin, "{slug}: entry promptPath");
    assert_eq!(plan["promptPath"], PROMPT, "{slug}: plan promptPath");
    let target = match row.file {
        None => json!("stdout"),
        Some(path) => json!({ "file": path }),
    };
    assert_eq!(plan["outputTarget"], target, "{slug}: outputTarget");
    assert_eq!(plan["timeoutMs"], row.timeout_ms, "{slug}: timeoutMs");
    assert_eq!(
        plan["reviewPath"],
        format!("/run/gsd-review-{slug}.md"),
        "{slug}: reviewPath"
    );
    assert_eq!(
        plan["errPath"],
        format!("/run/gsd-review-{slug}.err"),
        "{slug}: errPath"
    );
    assert_eq!(
        plan["handler"],
        row.handler.map_or(Value::Null, |h| json!(h)),
        "{slug}: handler"
    );
    for arg in argv(entry) {
        assert!(
            !arg.contains("{{"),
            "{slug}: placeholder survived in argv: {arg:?}"
        );
    }
}

/// The spawn rows; `golden` selects the §15 config, else the empty config. claude, codex and
/// opencode run at their declared `defaultEffort` `high` (upstream #4275; the golden config
/// sets no `review.effort.*`).
fn spawn_rows(golden: bool) -> Vec<SpawnRow> {
    let fr = file_ref(PROMPT, REPO);
    let model = |flag: &str, value: &str| -> Vec<String> {
        if golden {
            strings(&[flag, value])
        } else {
            Vec::new()
        }
    };
    let cat = |parts: Vec<Vec<String>>| -> Vec<String> { parts.concat() };
    vec![
        SpawnRow {
            slug: "claude",
            binary: "claude",
            argv: cat(vec![
                model("--model", "C"),
                strings(&["--effort", "high", "-p", "-"]),
            ]),
            stdin: true,
            file: None,
            timeout_ms: 1_200_000,
            handler: None,
        },
        SpawnRow {
            slug: "codex",
            binary: "codex",
            argv: cat(vec![
                strings(&["exec", "--ephemeral"]),
                model("--model", "X"),
                strings(&[
                    "-c",
                    "model_reasoning_effort=high",
                    "--skip-git-repo-check",
                    "-o",
                    "/run/gsd-review-codex.md",
                    "-",
                ]),
            ]),
            stdin: true,
            file: Some("/run/gsd-review-codex.md"),
            timeout_ms: 1_200_000,
            handler: None,
        },
        SpawnRow {
            slug: "coderabbit",
            binary: "coderabbit",
            argv: strings(&["review", "--prompt-only"]),
            stdin: false,
            file: None,
            timeout_ms: 360_000,
            handler: None,
        },
        SpawnRow {
            slug: "opencode",
            binary: "opencode",
            argv: cat(vec![
                strings(&["run"]),
                model("--model", "O"),
                strings(&["--variant", "high", "--format", "json", "-"]),
            ]),
            stdin: true,
            file: None,
            timeout_ms: 660_000,
            handler: Some("opencode"),
        },
        SpawnRow {
            slug: "qwen",
            binary: "qwen",
            argv: cat(vec![model("-m", "Q"), strings(&["-"])]),
            stdin: true,
            file: None,
            timeout_ms: 900_000,
            handler: None,
        },
        SpawnRow {
            slug: "cursor",
            binary: "cursor-agent",
            // upstream #4160: `--model` right after `-p`, only when review.models.cursor is set.
            argv: cat(vec![
                strings(&["-p"]),
                model("--model", "U"),
                strings(&["--mode", "ask", "--trust", "--output-format", "text"]),
                vec![fr.clone()],
            ]),
            stdin: false,
            file: None,
            timeout_ms: 900_000,
            handler: None,
        },
        SpawnRow {
            slug: "antigravity",
            binary: "agy",
            argv: cat(vec![
                strings(&["--print-timeout", "540s"]),
                model("--model", "A"),
                vec!["-p".to_owned(), fr.clone()],
            ]),
            stdin: false,
            file: None,
            timeout_ms: 600_000,
            handler: Some("antigravity"),
        },
        SpawnRow {
            slug: "kimi-code",
            binary: "kimi",
            argv: cat(vec![
                model("-m", "K"),
                strings(&["--output-format", "stream-json", "-p"]),
                vec![fr],
            ]),
            stdin: false,
            file: None,
            timeout_ms: 900_000,
            handler: Some("kimi-code"),
        },
    ]
}

/// (slug, port, fallback model) of the three HTTP lanes (§9 table).
const HTTP_ROWS: [(&str, u16, &str); 3] = [
    ("ollama", 11434, "llama3"),
    ("lm_studio", 1234, "local-model"),
    ("llama_cpp", 8080, "local-model"),
];

fn assert_http_rows(entries: &[Value], model: Option<&str>) {
    for (slug, port, fallback) in HTTP_ROWS {
        let entry = entry(entries, slug);
        assert_eq!(entry["ok"], true, "{slug}: {entry}");
        assert_eq!(entry["transport"], "openai-http", "{slug}");
        assert_eq!(entry["promptPath"], PROMPT, "{slug}: HTTP promptPath");
        let plan = &entry["plan"];
        let host = format!("http://localhost:{port}");
        assert_eq!(plan["host"], host, "{slug}: host");
        assert_eq!(
            plan["hostConfigKey"],
            format!("review.{slug}_host"),
            "{slug}"
        );
        assert_eq!(
            plan["url"],
            format!("{host}/v1/chat/completions"),
            "{slug}: url"
        );
        assert_eq!(
            plan["modelsUrl"],
            format!("{host}/v1/models"),
            "{slug}: modelsUrl"
        );
        assert_eq!(
            plan["model"],
            model.map_or(Value::Null, |m| json!(m)),
            "{slug}: model"
        );
        assert_eq!(plan["fallbackModel"], fallback, "{slug}: fallbackModel");
        assert_eq!(plan["timeoutMs"], 120_000, "{slug}: timeoutMs");
        assert_eq!(
            plan["reviewPath"],
            format!("/run/gsd-review-{slug}.md"),
            "{slug}"
        );
        assert_eq!(
            plan["errPath"],
            format!("/run/gsd-review-{slug}.err"),
            "{slug}"
        );
        assert_eq!(plan["promptPath"], PROMPT, "{slug}");
        assert_eq!(plan["handler"], "openai-compatible", "{slug}");
    }
}

/// The golden table's slugs: one row per first-party lane, spawn rows then HTTP rows.
fn golden_slugs() -> Vec<String> {
    let mut slugs: Vec<String> = spawn_rows(false)
        .iter()
        .map(|row| row.slug.to_owned())
        .collect();
    slugs.extend(HTTP_ROWS.iter().map(|(slug, _, _)| (*slug).to_owned()));
    slugs
}

/// Adding or removing a first-party lane is its manifest (with its line in
/// `capabilities/descriptor-order.txt`) plus its row here: the table must hold exactly one row
/// per first-party lane.
#[test]
fn the_golden_table_has_one_row_per_first_party_lane() {
    let mut golden = golden_slugs();
    golden.sort();
    let mut roster = util::first_party_slugs();
    roster.sort();
    assert_eq!(
        golden, roster,
        "the golden plan table (spawn_rows, HTTP_ROWS) and capabilities/ disagree: add or \
         remove the lane's golden row"
    );
}

fn slugs(entries: &[Value]) -> Vec<String> {
    entries.iter().map(|e| util::str_of(e, "slug")).collect()
}

#[test]
fn golden_table_with_golden_config() {
    let env = project(Some(&golden_config()));
    let entries = plan(&env, &[]);
    assert_eq!(
        slugs(&entries),
        util::first_party_slugs(),
        "every lane, descriptor order"
    );
    for row in spawn_rows(true) {
        assert_spawn_row(&entries, &row);
    }
    assert_http_rows(&entries, Some("M"));
}

#[test]
fn golden_table_without_a_config_file() {
    let env = project(None);
    let entries = plan(&env, &[]);
    assert_eq!(slugs(&entries), util::first_party_slugs());
    for row in spawn_rows(false) {
        assert_spawn_row(&entries, &row);
    }
    assert_http_rows(&entries, None);
}

#[test]
fn golden_table_with_unset_model_values() {
    // §3.2: blank, sentinel and non-string values are all "unset" → same as the empty config.
    let config = json!({"review": {"models": {
        "qwen": "   ", "claude": "null", "codex": "  undefined ", "opencode": 0,
        "agy": false, "kimi-code": [], "ollama": {}, "lm_studio": null, "llama_cpp": "\t\n"
    }}});
    let env = project(Some(&config.to_string()));
    let entries = plan(&env, &[]);
    for row in spawn_rows(false) {
        assert_spawn_row(&entries, &row);
    }
    assert_http_rows(&entries, None);
}

#[test]
fn model_values_are_trimmed_and_case_kept() {
    let config = json!({"review": {"models": {"qwen": " Q ", "claude": "NULL"}}});
    let env = project(Some(&config.to_string()));
    let entries = plan(&env, &["--selected", "qwen,claude"]);
    assert_eq!(argv(entry(&entries, "qwen")), ["-m", "Q", "-"]);
    assert_eq!(
        argv(entry(&entries, "claude")),
        ["--model", "NULL", "--effort", "high", "-p", "-"]
    );
}

#[test]
fn file_ref_is_exactly_one_element_with_the_section_4_5_text() {
    let env = project(Some(&golden_config()));
    let entries = plan(&env, &["--selected", "cursor,antigravity,kimi-code"]);
    let expected = file_ref(PROMPT, REPO);
    assert!(expected.contains('\u{2014}'));
    for slug in ["cursor", "antigravity", "kimi-code"] {
        let args = argv(entry(&entries, slug));
        let refs: Vec<&String> = args
            .iter()
            .filter(|a| a.starts_with("Read the file"))
            .collect();
        assert_eq!(refs, [&expected], "{slug}: exactly one FILE_REF element");
        assert_eq!(args.last(), Some(&expected), "{slug}: FILE_REF is last");
    }
}

#[test]
fn run_dir_trailing_slash_is_removed_and_repo_root_reaches_file_ref() {
    let env = project(None);
    let out = gsd(
        &env,
        &[
            "plan",
            "--run-dir",
            "/tmp/some run/",
            "--repo-root",
            "/src/my repo",
            "--selected",
            "cursor,codex",
        ],
    );
    out.assert_status(0);
    let entries = match out.json() {
        Value::Array(entries) => entries,
        other => panic!("{other}"),
    };
    let cursor = entry(&entries, "cursor");
    assert_eq!(
        cursor["plan"]["reviewPath"],
        "/tmp/some run/gsd-review-cursor.md"
    );
    assert_eq!(
        cursor["plan"]["errPath"],
        "/tmp/some run/gsd-review-cursor.err"
    );
    assert_eq!(
        argv(cursor).last().map(String::as_str),
        Some(file_ref("/tmp/some run/gsd-review-prompt.md", "/src/my repo").as_str())
    );
    let codex = entry(&entries, "codex");
    assert_eq!(
        codex["plan"]["outputTarget"],
        json!({"file": "/tmp/some run/gsd-review-codex.md"})
    );
}

#[test]
fn effort_reaches_exactly_claude_codex_and_opencode() {
    // upstream #4275: each lane's own key decides; agents' effort settings never leak in.
    let config = json!({
        "review": {"effort": {"claude": "medium", "codex": "medium", "opencode": "medium"}},
        "effort": {"default": "minimal", "agent_overrides": {"gsd-plan-checker": "max"}}
    });
    let env = project(Some(&config.to_string()));
    let entries = plan(&env, &[]);
    let effort_args = |slug: &str| -> Vec<String> {
        argv(entry(&entries, slug))
            .into_iter()
            .filter(|a| {
                ["medium", "minimal", "max", "high", "low"]
                    .iter()
                    .any(|level| a.contains(level))
                    || a == "--effort"
                    || a == "--variant"
                    || a == "-c"
            })
            .collect()
    };
    assert_eq!(effort_args("claude"), ["--effort", "medium"]);
    assert_eq!(
        effort_args("codex"),
        ["-c", "model_reasoning_effort=medium"]
    );
    assert_eq!(effort_args("opencode"), ["--variant", "medium"]);
    for row in spawn_rows(false) {
        if ["claude", "codex", "opencode"].contains(&row.slug) {
            continue;
        }
        assert_eq!(
            effort_args(row.slug),
            Vec::<String>::new(),
            "{} got effort",
            row.slug
        );
    }
    for (slug, _, _) in HTTP_ROWS {
        let text = entry(&entries, slug).to_string();
        assert!(!text.contains("medium"), "{slug} got effort: {text}");
    }
    // The exact positions (§4.3 template order).
    assert_eq!(
        argv(entry(&entries, "claude")),
        ["--effort", "medium", "-p", "-"]
    );
    assert_eq!(
        argv(entry(&entries, "opencode")),
        ["run", "--variant", "medium", "--format", "json", "-"]
    );
}

#[test]
fn effort_resolution_configured_then_lane_default_then_none() {
    let effort_of = |value: Value| -> Vec<String> {
        let env = project(Some(
            &json!({"review": {"effort": {"claude": value}}}).to_string(),
        ));
        argv(entry(&plan(&env, &["--selected", "claude"]), "claude"))
    };
    assert_eq!(effort_of(json!("xhigh")), ["--effort", "xhigh", "-p", "-"]);
    // claude clamps minimal to low (the level that ran is what is recorded).
    assert_eq!(effort_of(json!("minimal")), ["--effort", "low", "-p", "-"]);
    // inherit: no effort argument, even over the lane default.
    assert_eq!(effort_of(json!("inherit")), ["-p", "-"]);
    // Invalid configured values fall back to the lane default, never reach the CLI.
    for invalid in [
        json!("hihg"),
        json!("HIGH"),
        json!(""),
        json!("null"),
        json!(7),
    ] {
        assert_eq!(
            effort_of(invalid.clone()),
            ["--effort", "high", "-p", "-"],
            "{invalid}"
        );
    }
}

/// upstream #3436: every plan object carries its normalised `evidenceClass`.
#[test]
fn plan_objects_carry_the_evidence_class() {
    let env = project(None);
    let entries = plan(&env, &["--selected", "claude,coderabbit,ollama"]);
    assert_eq!(
        entry(&entries, "claude")["plan"]["evidenceClass"],
        "source-grounded"
    );
    assert_eq!(
        entry(&entries, "coderabbit")["plan"]["evidenceClass"],
        "diff-only"
    );
    assert_eq!(
        entry(&entries, "ollama")["plan"]["evidenceClass"],
        "source-grounded"
    );
}

#[test]
fn effort_clamps_per_host() {
    // upstream #4275 (§7.3) clamps: claude and codex minimal→low, codex passes max (the
    // baseline max→xhigh clamp is gone), opencode none.
    let env = project(Some(
        &json!({"review": {"effort": {"claude": "minimal", "codex": "minimal", "opencode": "minimal"}}})
            .to_string(),
    ));
    let entries = plan(&env, &["--selected", "claude,codex,opencode"]);
    assert_eq!(
        argv(entry(&entries, "claude"))[..2],
        strings(&["--effort", "low"])
    );
    assert!(argv(entry(&entries, "codex")).contains(&"model_reasoning_effort=low".to_owned()));
    assert!(argv(entry(&entries, "opencode")).contains(&"minimal".to_owned()));

    let env = project(Some(
        &json!({"review": {"effort": {"claude": "max", "codex": "max", "opencode": "max"}}})
            .to_string(),
    ));
    let entries = plan(&env, &["--selected", "claude,codex,opencode"]);
    assert_eq!(
        argv(entry(&entries, "claude"))[..2],
        strings(&["--effort", "max"])
    );
    assert!(argv(entry(&entries, "codex")).contains(&"model_reasoning_effort=max".to_owned()));
    assert!(argv(entry(&entries, "opencode")).contains(&"max".to_owned()));
}

/// upstream #4083: `review.timeouts.<slug>` (seconds) replaces the floor for both transports,
/// and antigravity's `{{nativeTimeout}}` follows it; a lane without the key ignores it.
#[test]
fn timeout_keys_set_the_outer_bound_and_the_native_timeout() {
    let config = json!({"review": {"timeouts": {
        "antigravity": 900, "claude": 0.5, "ollama": 30, "qwen": 5, "codex": "900", "opencode": -1
    }}});
    let env = project(Some(&config.to_string()));
    let entries = plan(&env, &[]);
    let timeout = |slug: &str| entry(&entries, slug)["plan"]["timeoutMs"].clone();
    assert_eq!(timeout("antigravity"), 900_000);
    assert_eq!(
        argv(entry(&entries, "antigravity"))[..2],
        strings(&["--print-timeout", "840s"])
    );
    assert_eq!(timeout("claude"), 500);
    assert_eq!(timeout("ollama"), 30_000);
    assert_eq!(timeout("qwen"), 900_000, "qwen declares no timeout key");
    assert_eq!(
        timeout("codex"),
        1_200_000,
        "a numeric string is not a number"
    );
    assert_eq!(timeout("opencode"), 660_000, "negative means unset");
    // The override leaves every other argv unchanged.
    assert_eq!(
        argv(entry(&entries, "claude")),
        ["--effort", "high", "-p", "-"]
    );
}

#[test]
fn third_party_lane_with_argv_effort_channel_gets_no_effort() {
    let env = project(Some(&json!({"effort": {"default": "high"}}).to_string()));
    let mut lane =
        util::read_json(&util::fixture("run/spawn-stdout/acme-review").join("capability.json"));
    lane["reviewer"]["invoke"]["effortChannel"] = json!("argv");
    lane["reviewer"]["invoke"]["args"] = json!(["review", "{{effort}}", "{{model}}", "-p", "-"]);
    env.write_overlay(Scope::Global, "acme-review", &lane);
    let entries = plan(&env, &["--selected", "acme"]);
    let acme = entry(&entries, "acme");
    assert_eq!(acme["ok"], true, "{acme}");
    assert_eq!(argv(acme), ["review", "-p", "-"]);
}

#[test]
fn lanes_without_a_model_key_emit_no_model_argument() {
    // golden-config.json also sets review.models.{coderabbit,antigravity}.
    let env = project(Some(&golden_config()));
    let entries = plan(&env, &["--selected", "coderabbit,cursor,antigravity"]);
    assert_eq!(
        argv(entry(&entries, "coderabbit")),
        ["review", "--prompt-only"]
    );
    for slug in ["coderabbit", "antigravity"] {
        let args = argv(entry(&entries, slug));
        assert!(
            !args.iter().any(|a| a.contains("SHOULD-NOT-APPEAR")),
            "{slug} consulted review.models.{slug}: {args:?}"
        );
    }
    // antigravity reads review.models.agy only.
    assert_eq!(
        argv(entry(&entries, "antigravity"))[2..4],
        strings(&["--model", "A"])
    );
    let args = argv(entry(&entries, "coderabbit"));
    assert!(
        !args.iter().any(|a| a == "--model" || a == "-m"),
        "{args:?}"
    );
}

#[test]
fn qwen_sends_a_configured_model_with_dash_m_and_nothing_when_unset() {
    // The real qwen CLI (qwen-code 0.24) takes `-m/--model`; the reference sent none.
    let configured = project(Some(
        &json!({"review": {"models": {"qwen": "qwen3-coder-plus"}}}).to_string(),
    ));
    let entries = plan(&configured, &["--selected", "qwen"]);
    assert_eq!(
        argv(entry(&entries, "qwen")),
        ["-m", "qwen3-coder-plus", "-"]
    );
    for config in [
        None,
        Some(json!({"review": {"models": {"qwen": ""}}}).to_string()),
    ] {
        let env = project(config.as_deref());
        let entries = plan(&env, &["--selected", "qwen"]);
        assert_eq!(argv(entry(&entries, "qwen")), ["-"], "{config:?}");
    }
}

#[test]
fn antigravity_ignores_review_models_antigravity() {
    let env = project(Some(
        &json!({"review": {"models": {"antigravity": "WRONG"}}}).to_string(),
    ));
    let entries = plan(&env, &["--selected", "antigravity"]);
    let args = argv(entry(&entries, "antigravity"));
    assert_eq!(args[..3], strings(&["--print-timeout", "540s", "-p"]));
    assert_eq!(args.len(), 4);
}

#[test]
fn unknown_selected_slug_is_malformed_lane() {
    let env = project(None);
    let entries = plan(&env, &["--selected", "nope"]);
    assert_eq!(entries.len(), 1);
    let nope = &entries[0];
    assert_eq!(nope["slug"], "nope");
    assert_eq!(nope["ok"], false);
    assert_eq!(nope["reason"], "malformed_lane");
    assert!(nope["detail"].is_string());
    assert!(nope.get("plan").is_none());
}

#[test]
fn selected_list_is_trimmed_ordered_as_given_and_unknowns_are_refused_in_place() {
    let env = project(None);
    let entries = plan(&env, &["--selected", " qwen, ,nope,../evil,claude,"]);
    assert_eq!(slugs(&entries), ["qwen", "nope", "../evil", "claude"]);
    let oks: Vec<&Value> = entries.iter().map(|e| &e["ok"]).collect();
    assert_eq!(
        oks,
        [&json!(true), &json!(false), &json!(false), &json!(true)]
    );
    for bad in &entries[1..3] {
        assert_eq!(bad["reason"], "malformed_lane", "{bad}");
    }
}

#[test]
fn prompt_budget_per_lane_number_else_global_fallback() {
    let config = json!({"review": {
        "max_prompt_tokens": 8000,
        "max_prompt_tokens_per_reviewer": {
            "ollama": 5000,
            "lm_studio": -1
        }
    }});
    let env = project(Some(&config.to_string()));
    let entries = plan(&env, &[]);
    let budget = |slug: &str| entry(&entries, slug)["promptBudget"].clone();
    assert_eq!(budget("ollama").as_f64(), Some(5000.0), "own number");
    assert_eq!(
        budget("lm_studio").as_f64(),
        Some(8000.0),
        "-1 sentinel → global"
    );
    assert_eq!(
        budget("llama_cpp").as_f64(),
        Some(8000.0),
        "absent → global"
    );
    // upstream #3832: every lane declares a budget key, so the global cap reaches CLI lanes.
    for row in spawn_rows(false) {
        assert_eq!(
            budget(row.slug).as_f64(),
            Some(8000.0),
            "{}: review.max_prompt_tokens applies",
            row.slug
        );
    }
}

#[test]
fn prompt_budget_zero_never_falls_back_and_no_global_means_null() {
    let config = json!({"review": {
        "max_prompt_tokens": 8000,
        "max_prompt_tokens_per_reviewer": {"ollama": 0, "lm_studio": "5000"}
    }});
    let env = project(Some(&config.to_string()));
    let entries = plan(&env, &["--selected", "ollama,lm_studio"]);
    assert_eq!(
        entry(&entries, "ollama")["promptBudget"].as_f64(),
        Some(0.0)
    );
    assert_eq!(
        entry(&entries, "lm_studio")["promptBudget"].as_f64(),
        Some(8000.0),
        "a string is not a number → global"
    );

    let config = json!({"review": {"max_prompt_tokens_per_reviewer": {"lm_studio": -1}}});
    let env = project(Some(&config.to_string()));
    let entries = plan(&env, &["--selected", "ollama,lm_studio,llama_cpp"]);
    for slug in ["ollama", "lm_studio", "llama_cpp"] {
        assert_eq!(entry(&entries, slug)["promptBudget"], Value::Null, "{slug}");
    }
}

#[test]
fn hostile_model_value_stays_one_argv_element() {
    let config = json!({"review": {"models": {
        "qwen": HOSTILE, "claude": HOSTILE, "codex": HOSTILE, "opencode": HOSTILE,
        "agy": HOSTILE, "kimi-code": HOSTILE, "ollama": HOSTILE
    }}});
    let env = project(Some(&config.to_string()));
    let entries = plan(&env, &[]);
    for (slug, flag) in [
        ("qwen", "-m"),
        ("claude", "--model"),
        ("codex", "--model"),
        ("opencode", "--model"),
        ("antigravity", "--model"),
        ("kimi-code", "-m"),
    ] {
        let args = argv(entry(&entries, slug));
        let at = args
            .iter()
            .position(|a| a == flag)
            .unwrap_or_else(|| panic!("{slug}: no {flag} in {args:?}"));
        assert_eq!(
            args.get(at + 1).map(String::as_str),
            Some(HOSTILE),
            "{slug}"
        );
        assert_eq!(
            args.iter().filter(|a| a.contains("rm -rf")).count(),
            1,
            "{slug}: {args:?}"
        );
    }
    assert_eq!(
        argv(entry(&entries, "claude")),
        ["--model", HOSTILE, "--effort", "high", "-p", "-"]
    );
    assert_eq!(entry(&entries, "ollama")["plan"]["model"], HOSTILE);
}

#[test]
fn plan_is_deterministic_and_never_probes() {
    // The fixture bin dir is on PATH, but no first-party binary is; plan must not care.
    let env = project(Some(&golden_config()));
    let first = gsd(&env, &["plan", "--run-dir", RUN, "--repo-root", REPO]);
    let second = gsd(&env, &["plan", "--run-dir", RUN, "--repo-root", REPO]);
    first.assert_status(0);
    assert_eq!(first.stdout, second.stdout);
    assert!(!Path::new(RUN).join("gsd-review-claude.md").exists());
}

/// `gsd-lane run qwen` against `tests/fixtures/qwen/bin/qwen` (a replay of qwen-code 0.24.4's
/// headless `-m`/`-`): the configured model reaches the CLI, and none is sent by default.
#[test]
fn qwen_run_sends_the_configured_model_to_the_cli() {
    for (config, argv, model) in [
        (
            Some(json!({"review": {"models": {"qwen": "qwen3-coder-plus"}}}).to_string()),
            "run -m qwen3-coder-plus -",
            "qwen3-coder-plus",
        ),
        (None, "run -", "default-qwen-model"),
    ] {
        let env = project(config.as_deref());
        let run_dir = env.root.path().join("run");
        std::fs::create_dir_all(&run_dir).expect("run dir");
        std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
        let path = format!("{}:/usr/bin:/bin", util::fixture("qwen/bin").display());
        let run_arg = run_dir.display().to_string();
        let args = [
            "run",
            "qwen",
            "--json",
            "--run-dir",
            &run_arg,
            "--repo-root",
            ".",
        ];
        let command = util::gsd_command(&env, &path, &env.project, &args);
        let (out, _) = util::run_bounded(command, std::time::Duration::from_secs(30));
        out.assert_no_panic().assert_status(0);
        assert_eq!(
            out.json(),
            json!({"slug": "qwen", "ok": true, "stubbed": false, "model": if config.is_some() {
                json!({"value": model, "source": "pinned"})
            } else {
                json!({"value": null, "source": "unknown"})
            }})
        );
        let log = std::fs::read_to_string(env.home.join("qwen.log")).expect("qwen ran");
        assert_eq!(log, format!("{argv}\n"));
        let review = util::read_text(&run_dir.join("gsd-review-qwen.md"));
        assert_eq!(
            review,
            util::uncited(&format!("## Summary\n\nReviewed by {model}.\n"))
        );
    }
}

/// Writes an executable sh script `name` into `dir`.
fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, body).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `gsd-lane run cursor --json` with `bin` (then `/usr/bin:/bin`) on PATH.
fn run_cursor(env: &TestEnv, bin: &Path) -> (util::Outcome, std::path::PathBuf) {
    let run_dir = env.root.path().join("run");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let run_arg = run_dir.display().to_string();
    let args = [
        "run",
        "cursor",
        "--json",
        "--run-dir",
        &run_arg,
        "--repo-root",
        ".",
    ];
    let command = util::gsd_command(env, &path, &env.project, &args);
    let (out, _) = util::run_bounded(command, COMMAND_TIMEOUT);
    out.assert_no_panic();
    (out, run_dir)
}

/// A fake program called `agent`: `--help` prints `help`, otherwise it logs its argv and
/// prints a review.
fn fake_agent(bin: &Path, help: &str) {
    script(
        bin,
        "agent",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = --help ]; then printf '%s\\n' '{help}'; exit 0; fi\n\
             printf '%s\\n' \"$*\" >> \"$HOME/agent.log\"\nprintf '## Summary\\n\\nvia agent\\n'\n"
        ),
    );
}

/// CLI drift (issue 22 item 6): Cursor renamed `cursor-agent` to `agent`. The cursor lane runs
/// `agent` when `cursor-agent` is missing, but only the `agent` whose help is Cursor's.
#[test]
fn cursor_lane_finds_cursors_cli_under_its_new_name_agent() {
    let env = project(None);
    let bin = env.root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    fake_agent(
        &bin,
        "Usage: agent [options] [command] [prompt...]\n\nStart the Cursor Agent",
    );
    let (out, run_dir) = run_cursor(&env, &bin);
    out.assert_status(0);
    assert_eq!(
        out.json(),
        json!({"slug": "cursor", "ok": true, "stubbed": false, "model": {"value": null, "source": "unknown"}})
    );
    let log = std::fs::read_to_string(env.home.join("agent.log")).expect("agent ran");
    assert!(
        log.starts_with("-p --mode ask --trust --output-format text Read the file at "),
        "{log}"
    );
    assert_eq!(
        util::read_text(&run_dir.join("gsd-review-cursor.md")),
        util::uncited("## Summary\n\nvia agent\n")
    );
}

#[test]
fn another_program_called_agent_never_gets_the_prompt() {
    let env = project(None);
    let bin = env.root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    fake_agent(&bin, "agent: a build agent for CI runners");
    let (out, _) = run_cursor(&env, &bin);
    let result = out.json();
    assert_eq!(result["ok"], false, "{result}");
    assert_eq!(result["reason"], "probe_failed", "{result}");
    let detail = util::str_of(&result, "detail");
    assert!(
        detail.contains("the `agent` found is another program"),
        "{detail}"
    );
    assert!(
        !env.home.join("agent.log").exists(),
        "the other agent ran with the prompt"
    );
}

#[test]
fn cursor_agent_wins_when_both_names_are_installed_and_both_are_named_when_none_is() {
    let env = project(None);
    let bin = env.root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let (out, _) = run_cursor(&env, &bin);
    let result = out.json();
    assert_eq!(result["reason"], "missing_binary", "{result}");
    assert!(
        util::str_of(&result, "detail").contains("cursor-agent is not on PATH (nor is agent"),
        "{result}"
    );

    fake_agent(&bin, "Start the Cursor Agent");
    script(
        &bin,
        "cursor-agent",
        "#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$HOME/cursor-agent.log\"\nprintf 'old name\\n'\n",
    );
    let (out, run_dir) = run_cursor(&env, &bin);
    out.assert_status(0);
    assert!(env.home.join("cursor-agent.log").exists());
    assert!(!env.home.join("agent.log").exists());
    assert_eq!(
        util::read_text(&run_dir.join("gsd-review-cursor.md")),
        util::uncited("old name\n")
    );
}
