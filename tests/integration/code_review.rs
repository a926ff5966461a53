//! `gsd-lane code-review`, `dispatch-step` and `explicit-from-argv` (upstream-since-2026-08.md
//! §8, decisions.md row 19): the real binary, fake lanes (`tests/fixtures/code_review/bin`)
//! installed as global overlays by the review tests' `Lab`, every dispatcher outcome of §8.2,
//! the input checks with their attacks, and one run end to end.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{json, Value};

use crate::review::{finish, Lab};
use crate::util::{self, Outcome};

const BASE: &str = "0123abcd";

/// A lab with a `src/lib.rs` to review and fake lanes `slugs` running the code-review script.
fn lab(slugs: &[&str]) -> Lab {
    let lab = Lab::new();
    std::fs::create_dir_all(lab.env.project.join("src")).expect("src");
    std::fs::write(
        lab.env.project.join("src/lib.rs"),
        "pub fn f(x: &[u8]) -> u8 {\n    x[0]\n}\n",
    )
    .expect("lib.rs");
    for slug in slugs {
        install(&lab, slug);
    }
    lab
}

/// Installs fake lane `slug` with the code-review fake script.
fn install(lab: &Lab, slug: &str) {
    lab.lane(slug, |_| {});
    let script = lab.bin.join(format!("fake-{slug}"));
    std::fs::copy(util::fixture("code_review/bin/fake-lane"), script).expect("copy script");
}

/// What lane `slug` will print as its review.
fn findings(lab: &Lab, slug: &str, text: &str) {
    let dir = lab.env.home.join("findings");
    std::fs::create_dir_all(&dir).expect("findings dir");
    std::fs::write(dir.join(format!("fake-{slug}")), text).expect("findings");
}

/// `gsd-lane <args>` with `stdin` as its standard input.
fn with_stdin(lab: &Lab, args: &[&str], stdin: &[u8]) -> Outcome {
    let mut command = lab.gsd_command(args);
    command.stdin(Stdio::piped());
    let mut child = command.spawn().expect("spawn gsd-lane");
    let mut input = child.stdin.take().expect("stdin");
    // A refused call may exit before reading it all: a broken pipe is not the test's failure.
    let _ = input.write_all(stdin);
    drop(input);
    finish(child, &format!("{args:?}"))
}

/// `code-review --json <args>`, its exit status and its one JSON object.
fn code_review(lab: &Lab, args: &[&str]) -> (Outcome, Value) {
    let mut full = vec!["code-review", "--json"];
    full.extend_from_slice(args);
    let out = lab.gsd(&full);
    out.assert_no_panic();
    let value = out.json();
    (out, value)
}

/// The lane entry `slug` of a result.
fn lane<'a>(result: &'a Value, slug: &str) -> &'a Value {
    result["lanes"]
        .as_array()
        .and_then(|lanes| lanes.iter().find(|l| l["slug"] == slug))
        .unwrap_or_else(|| panic!("no lane {slug} in {result:#}"))
}

/// Asserts a whole-call refusal with `reason`, exit 2, and that no lane started.
fn assert_rejected(lab: &Lab, out: &Outcome, result: &Value, reason: &str, slugs: &[&str]) {
    out.assert_status(2);
    assert_eq!(result["ok"], false, "{result:#}");
    assert_eq!(result["reason"], reason, "{result:#}\n{}", out.stderr);
    assert!(result["detail"].as_str().is_some_and(|d| !d.is_empty()));
    for slug in slugs {
        assert!(!lab.started(slug), "{slug} started on a refused call");
    }
}

#[test]
fn end_to_end_two_lanes_review_the_changed_files_and_write_the_findings() {
    let lab = lab(&["alpha", "beta"]);
    findings(
        &lab,
        "beta",
        "# beta\n\n- [critical] src/lib.rs:2 — indexes without a length check\n\
         - [blocker] src/lib.rs:2 — unknown severity\n\
         - [warning] ../../etc/passwd:1 — outside\n\
         - [info] src/lib.rs:1 \u{1b}[2J clears the screen\n",
    );
    let (out, result) = code_review(
        &lab,
        &[
            "src/lib.rs",
            "--base-sha",
            BASE,
            "--depth",
            "deep",
            "--alpha",
            "--explicit",
            "beta",
        ],
    );
    out.assert_status(0);
    assert_eq!(result["ok"], true, "{result:#}\n{}", out.stderr);
    assert!(result.get("reason").is_none());
    // Each lane got the one bounded, metadata-only request.
    let prompt_path = PathBuf::from(result["promptPath"].as_str().expect("promptPath"));
    let prompt = util::read_text(&prompt_path);
    assert_eq!(
        prompt_path.file_name().expect("name"),
        "gsd-review-prompt.md"
    );
    assert!(prompt.starts_with("## Source Review Request\n"), "{prompt}");
    assert!(
        prompt.contains("Depth: deep") && prompt.contains(BASE),
        "{prompt}"
    );
    assert!(prompt.contains("- src/lib.rs\n"), "{prompt}");
    assert!(
        !prompt.contains("x[0]"),
        "the request carries no file content"
    );
    for slug in ["alpha", "beta"] {
        let prompts = lab.prompts(slug);
        assert_eq!(prompts.len(), 1, "{slug} ran once");
        assert_eq!(prompts[0], prompt, "{slug} was given the request");
        let entry = lane(&result, slug);
        assert_eq!(entry["ok"], true);
        let review = PathBuf::from(entry["reviewPath"].as_str().expect("reviewPath"));
        assert!(review.starts_with(result["runDir"].as_str().expect("runDir")));
        let expected = if slug == "beta" {
            "# beta"
        } else {
            "# fake-alpha review"
        };
        assert!(util::read_text(&review).contains(expected), "{slug}");
    }
    let alpha = lane(&result, "alpha");
    assert_eq!(
        alpha["findings"],
        json!([{"severity": "warning", "path": "src/lib.rs", "line": 1,
                "text": "the function never checks its input"}])
    );
    // Untrusted findings: only the one that passes every check is kept; the rest are refused
    // with their reason, never dropped silently.
    let beta = lane(&result, "beta");
    assert_eq!(
        beta["findings"],
        json!([{"severity": "critical", "path": "src/lib.rs", "line": 2,
                "text": "indexes without a length check"}])
    );
    let refused: Vec<&str> = beta["refusedFindings"]
        .as_array()
        .expect("refused")
        .iter()
        .map(|r| r["why"].as_str().expect("why"))
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(refused[0].contains("unknown severity"), "{refused:?}");
    assert!(
        refused[1].contains("outside the repository root"),
        "{refused:?}"
    );
    assert!(refused[2].contains("control character"), "{refused:?}");
    // The findings file is review's REVIEWS.md, with the panel verdict.
    let findings_path = PathBuf::from(result["findingsPath"].as_str().expect("findingsPath"));
    let doc = util::read_text(&findings_path);
    assert!(
        doc.contains("## Alpha Review") && doc.contains("## Beta Review"),
        "{doc}"
    );
    assert!(doc.contains("verdict"), "{doc}");
    // The default run dir is private and lies where confined lanes cannot write.
    let run_dir = PathBuf::from(result["runDir"].as_str().expect("runDir"));
    assert!(
        run_dir.starts_with(lab.env.gsd_home.join(".gsd/code-review")),
        "{}",
        run_dir.display()
    );
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&run_dir).expect("run dir").permissions(),
    );
    assert_eq!(mode & 0o777, 0o700);
    // The stages' progress went to stderr: stdout is the one JSON object (checked by json()).
    assert!(out.stderr.contains("Reviewing with"), "{}", out.stderr);
}

#[test]
fn the_human_form_lists_each_lane_review_and_says_the_findings_are_unverified() {
    let lab = lab(&["alpha"]);
    let out = lab.gsd(&["code-review", "src/lib.rs", "--base-sha", BASE, "--alpha"]);
    out.assert_status(0);
    assert!(out.stdout.contains("- alpha: "), "{}", out.stdout);
    assert!(
        out.stdout.contains("(1 findings, 0 refused)"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("UNVERIFIED"), "{}", out.stdout);
}

#[test]
fn dispatch_step_reads_stdin_checks_the_trait_and_answers_json() {
    let lab = lab(&["alpha"]);
    let args = [
        "dispatch-step",
        "--cap-id",
        "code-review",
        "--point",
        "execute:post",
        "--explicit",
        "alpha",
        "--base-sha",
        BASE,
        "--repo-root",
        ".",
        "--depth",
        "quick",
        "--raw",
    ];
    let out = with_stdin(&lab, &args, b"src/lib.rs\nsrc/gone.rs\n");
    out.assert_status(0);
    let result = out.json();
    assert_eq!(result["ok"], true, "{result:#}\n{}", out.stderr);
    let prompt = &lab.prompts("alpha")[0];
    assert!(prompt.contains("- src/lib.rs\n- src/gone.rs\n"), "{prompt}");
    assert!(prompt.contains("Depth: quick"), "{prompt}");
}

#[test]
fn trait_not_enabled_for_a_step_without_the_trait_or_an_inactive_hook() {
    let lab = lab(&["alpha"]);
    let base = ["--explicit", "alpha", "--base-sha", BASE];
    for extra in [
        vec![],
        vec!["--cap-id", "code-review"],
        vec!["--point", "execute:post"],
        vec!["--cap-id", "security", "--point", "execute:post"],
        vec!["--cap-id", "code-review", "--point", "plan:post"],
    ] {
        let mut args = vec!["dispatch-step"];
        args.extend_from_slice(&base);
        args.extend_from_slice(&extra);
        let out = with_stdin(&lab, &args, b"src/lib.rs\n");
        let result = out.json();
        assert_rejected(&lab, &out, &result, "trait_not_enabled", &["alpha"]);
        if extra == ["--cap-id", "code-review"] {
            assert!(out.stderr.contains("without --point"), "{}", out.stderr);
        }
    }
    lab.config(&json!({"workflow": {"code_review": false}}));
    let mut args = vec![
        "dispatch-step",
        "--cap-id",
        "code-review",
        "--point",
        "execute:post",
    ];
    args.extend_from_slice(&base);
    let out = with_stdin(&lab, &args, b"src/lib.rs\n");
    let result = out.json();
    assert_rejected(&lab, &out, &result, "trait_not_enabled", &["alpha"]);
    assert!(result["detail"]
        .as_str()
        .expect("detail")
        .contains("workflow.code_review"));
}

#[test]
fn no_lanes_selected_and_selection_failed() {
    let lab = lab(&["alpha"]);
    let (out, result) = code_review(&lab, &["src/lib.rs", "--base-sha", BASE]);
    assert_rejected(&lab, &out, &result, "no_lanes_selected", &["alpha"]);
    let (out, result) = code_review(&lab, &["src/lib.rs", "--base-sha", BASE, "--explicit", ""]);
    assert_rejected(&lab, &out, &result, "no_lanes_selected", &["alpha"]);
    for bad in ["alpha;touch /tmp/x", "Alpha", "alpha,\u{1b}[2J"] {
        let (out, result) =
            code_review(&lab, &["src/lib.rs", "--base-sha", BASE, "--explicit", bad]);
        assert_rejected(&lab, &out, &result, "selection_failed", &["alpha"]);
    }
    // A config that cannot be read stops the call before any lane (decisions.md #13).
    std::fs::write(lab.env.project.join(".planning/config.json"), "{ nope").expect("config");
    let (out, result) = code_review(&lab, &["src/lib.rs", "--base-sha", BASE, "--alpha"]);
    assert_rejected(&lab, &out, &result, "selection_failed", &["alpha"]);
}

#[test]
fn attack_control_characters_are_refused_in_every_input() {
    let lab = lab(&["alpha"]);
    for (args, reason) in [
        (
            vec!["src/lib\u{1b}[2J.rs", "--base-sha", BASE],
            "invalid_paths",
        ),
        (
            vec!["src/lib.rs\u{2028}", "--base-sha", BASE],
            "invalid_paths",
        ),
        (
            vec!["src/lib.rs", "--base-sha", "0123abcd\n"],
            "invalid_provenance",
        ),
        (
            vec!["src/lib.rs", "--base-sha", BASE, "--depth", "deep\u{7}"],
            "invalid_provenance",
        ),
        (
            vec!["src/lib.rs", "--base-sha", BASE, "--repo-root", ".\u{1b}"],
            "invalid_paths",
        ),
        (
            vec!["src/lib.rs", "--base-sha", BASE, "--run-dir", "run\rdir"],
            "invalid_paths",
        ),
        (
            vec!["src/lib.rs", "--base-sha", BASE, "--cwd", "src\u{1}"],
            "invalid_paths",
        ),
    ] {
        let mut full = args.clone();
        full.push("--alpha");
        let (out, result) = code_review(&lab, &full);
        assert_rejected(&lab, &out, &result, reason, &["alpha"]);
    }
    // A list on stdin with a CR (or any control character) in a path.
    let out = with_stdin(
        &lab,
        &[
            "code-review",
            "--json",
            "--files-from",
            "-",
            "--base-sha",
            BASE,
            "--alpha",
        ],
        b"src/lib.rs\r\n",
    );
    let result = out.json();
    assert_rejected(&lab, &out, &result, "invalid_paths", &["alpha"]);
}

#[test]
fn attack_paths_that_leave_the_repository_are_refused() {
    let lab = lab(&["alpha"]);
    let outside = lab.env.root.path().join("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(outside.join("secret"), "secret").expect("secret");
    std::os::unix::fs::symlink(&outside, lab.env.project.join("link")).expect("dir link");
    std::os::unix::fs::symlink(outside.join("secret"), lab.env.project.join("src/s.rs"))
        .expect("file link");
    let absolute = outside.join("secret").display().to_string();
    for path in [
        "../outside/secret",
        "src/../../outside/secret",
        &absolute,
        "link/secret",
        "src/s.rs",
    ] {
        let (out, result) = code_review(&lab, &[path, "--base-sha", BASE, "--alpha"]);
        assert_rejected(&lab, &out, &result, "path_escapes_repo_root", &["alpha"]);
    }
    // The same through --files-from, and a --cwd outside the root.
    let list = lab.env.root.path().join("list.txt");
    std::fs::write(&list, "src/lib.rs\n../outside/secret\n").expect("list");
    let list = list.display().to_string();
    let (out, result) = code_review(
        &lab,
        &["--files-from", &list, "--base-sha", BASE, "--alpha"],
    );
    assert_rejected(&lab, &out, &result, "path_escapes_repo_root", &["alpha"]);
    let (out, result) = code_review(
        &lab,
        &["src/lib.rs", "--base-sha", BASE, "--cwd", "..", "--alpha"],
    );
    assert_rejected(&lab, &out, &result, "path_escapes_repo_root", &["alpha"]);
}

#[test]
fn attack_oversized_and_malformed_lists_are_refused() {
    let lab = lab(&["alpha"]);
    let many = "src/lib.rs\n".repeat(30_000);
    let out = with_stdin(
        &lab,
        &[
            "code-review",
            "--json",
            "--files-from",
            "-",
            "--base-sha",
            BASE,
            "--alpha",
        ],
        many.as_bytes(),
    );
    let result = out.json();
    assert_rejected(&lab, &out, &result, "invalid_paths", &["alpha"]);
    assert!(result["detail"]
        .as_str()
        .expect("detail")
        .contains("larger than"));
    let distinct: String = (0..2_001).map(|i| format!("f{i}\n")).collect();
    let out = with_stdin(
        &lab,
        &["code-review", "--json", "--base-sha", BASE, "--alpha"],
        distinct.as_bytes(),
    );
    let result = out.json();
    assert_rejected(&lab, &out, &result, "invalid_paths", &["alpha"]);
    let out = with_stdin(
        &lab,
        &["code-review", "--json", "--base-sha", BASE, "--alpha"],
        b"\xff\xfe\n",
    );
    let result = out.json();
    assert_rejected(&lab, &out, &result, "invalid_paths", &["alpha"]);
    // No files at all.
    let out = with_stdin(
        &lab,
        &["code-review", "--json", "--base-sha", BASE, "--alpha"],
        b"",
    );
    let result = out.json();
    assert_rejected(&lab, &out, &result, "invalid_paths", &["alpha"]);
}

#[test]
fn missing_and_invalid_provenance() {
    let lab = lab(&["alpha"]);
    let (out, result) = code_review(&lab, &["src/lib.rs", "--alpha"]);
    assert_rejected(&lab, &out, &result, "missing_provenance", &["alpha"]);
    for bad in ["HEAD~1", "--upload-pack=x", "abc", &"f".repeat(65)] {
        let arg = format!("--base-sha={bad}");
        let (out, result) = code_review(&lab, &["src/lib.rs", &arg, "--alpha"]);
        assert_rejected(&lab, &out, &result, "invalid_provenance", &["alpha"]);
    }
}

#[test]
fn attack_a_link_planted_at_the_prompt_is_refused_and_its_target_untouched() {
    let lab = lab(&["alpha"]);
    let run_dir = lab.env.root.path().join("run");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    let victim = lab.env.root.path().join("victim");
    std::fs::write(&victim, "precious").expect("victim");
    std::os::unix::fs::symlink(&victim, run_dir.join("gsd-review-prompt.md")).expect("plant");
    let dir = run_dir.display().to_string();
    let (out, result) = code_review(
        &lab,
        &[
            "src/lib.rs",
            "--base-sha",
            BASE,
            "--run-dir",
            &dir,
            "--alpha",
        ],
    );
    assert_rejected(&lab, &out, &result, "prompt_write_failed", &["alpha"]);
    assert_eq!(util::read_text(&victim), "precious");
}

#[test]
fn attack_a_run_dir_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let lab = lab(&["alpha"]);
    let run_dir = lab.env.root.path().join("shared");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    std::fs::set_permissions(&run_dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let dir = run_dir.display().to_string();
    let (out, result) = code_review(
        &lab,
        &[
            "src/lib.rs",
            "--base-sha",
            BASE,
            "--run-dir",
            &dir,
            "--alpha",
        ],
    );
    assert_rejected(&lab, &out, &result, "invalid_paths", &["alpha"]);
    assert!(!run_dir.join("gsd-review-prompt.md").exists());
}

#[test]
fn per_lane_reasons_fail_the_aggregate_while_the_others_run() {
    let lab = lab(&["alpha", "gone", "quiet"]);
    lab.budget_lane("tight");
    std::fs::copy(
        util::fixture("code_review/bin/fake-lane"),
        lab.bin.join("fake-tight"),
    )
    .expect("tight script");
    lab.config(&json!({"review": {"max_prompt_tokens_per_reviewer": {"tight": 10}}}));
    std::fs::remove_file(lab.bin.join("fake-gone")).expect("remove gone");
    lab.behave("quiet", "stub");
    let (out, result) = code_review(
        &lab,
        &[
            "src/lib.rs",
            "--base-sha",
            BASE,
            "--explicit",
            "alpha,coderabbit,nosuch,gone,tight,quiet",
        ],
    );
    out.assert_status(2);
    assert_eq!(result["ok"], false, "{result:#}");
    assert!(
        result.get("reason").is_none(),
        "no whole-call reason: {result:#}"
    );
    let reason = |slug: &str| lane(&result, slug)["reason"].as_str().map(str::to_owned);
    assert_eq!(
        reason("coderabbit").as_deref(),
        Some("prompt_channel_unsupported")
    );
    assert_eq!(reason("nosuch").as_deref(), Some("unknown_lane"));
    assert_eq!(reason("gone").as_deref(), Some("missing_binary"));
    assert_eq!(
        reason("tight").as_deref(),
        Some("budget_exceeded"),
        "{result:#}"
    );
    assert_eq!(
        reason("quiet").as_deref(),
        Some("invoke_failed"),
        "{result:#}"
    );
    // The lane that could run did, and its review is there.
    let alpha = lane(&result, "alpha");
    assert_eq!(alpha["ok"], true, "{result:#}");
    assert!(Path::new(alpha["reviewPath"].as_str().expect("path")).is_file());
    assert!(!lab.started("tight"), "an over-budget lane is not invoked");
    // A run that did not end cleanly is recorded as review's are (`runs`, `review --resume`).
    let runs = lab.gsd(&["runs", "--json"]);
    runs.assert_status(0);
    assert!(
        runs.stdout.contains("gsd-review-prompt.md"),
        "{}",
        runs.stdout
    );
}

#[test]
fn a_retired_or_inactive_lane_flag_is_a_lane_failure_with_the_reason() {
    let lab = lab(&["alpha"]);
    let (out, result) = code_review(
        &lab,
        &["src/lib.rs", "--base-sha", BASE, "--alpha", "--gemini"],
    );
    out.assert_status(2);
    let gemini = lane(&result, "gemini");
    assert_eq!(gemini["reason"], "inactive_lane");
    assert!(
        gemini["detail"]
            .as_str()
            .expect("detail")
            .contains("antigravity"),
        "{gemini}"
    );
    assert_eq!(lane(&result, "alpha")["ok"], true);
}

#[test]
fn explicit_from_argv_maps_lane_flags_to_sorted_slugs() {
    let lab = lab(&["alpha", "beta"]);
    let out = lab.gsd(&[
        "explicit-from-argv",
        "--",
        "3",
        "--beta",
        "--depth",
        "deep",
        "--alpha",
        "--agy",
    ]);
    out.assert_status(0);
    assert_eq!(out.stdout, "alpha,antigravity,beta\n");
    let out = lab.gsd(&["explicit-from-argv", "--", "--depth=deep", "src/lib.rs"]);
    out.assert_status(0);
    assert_eq!(out.stdout, "");
    let out = lab.gsd(&["explicit-from-argv", "--json", "--", "--codex", "--gemini"]);
    out.assert_status(0);
    assert_eq!(out.json(), json!({"explicit": ["codex"]}));
    assert!(out.stderr.contains("--gemini"), "{}", out.stderr);
}

#[test]
fn code_review_takes_the_lane_flags_of_review_and_says_so_in_its_help() {
    let lab = lab(&["alpha"]);
    let out = lab.gsd(&["code-review", "--help"]);
    out.assert_status(0);
    assert!(out.stdout.contains("Lane flags"), "{}", out.stdout);
    assert!(out.stdout.contains("--alpha"), "{}", out.stdout);
    assert!(out.stdout.contains("--files-from"), "{}", out.stdout);
    assert!(out.stdout.contains("UNVERIFIED"), "{}", out.stdout);
    // A mistyped lane flag is clap's usage error with a suggestion, as in review.
    let out = lab.gsd(&["code-review", "src/lib.rs", "--base-sha", BASE, "--alpah"]);
    out.assert_status(2);
    assert!(out.stderr.contains("--alpha"), "{}", out.stderr);
    assert!(!lab.started("alpha"));
}

#[test]
fn attack_a_lane_cannot_plant_an_earlier_findings_file_in_the_default_run_dir() {
    let lab = lab(&["alpha"]);
    // The lane looks for code-review run dirs where gsd-lane could keep them (its state root,
    // the temp dir) and plants a forged "earlier" REVIEWS.md in each, which review's
    // preservation would otherwise carry into the findings file.
    let planter = format!(
        "#!/bin/sh\ncat > /dev/null\nfor d in {}/.gsd/code-review/gsd-code-review-* {}/gsd-code-review-*; do\n  \
         [ -d \"$d\" ] && printf -- '# FORGED\\n\\n## Codex Review\\n\\n- [critical] src/lib.rs:1 — FORGED\\n' > \"$d/REVIEWS.md\" 2>/dev/null\n\
         done\nprintf '# alpha review\\n\\n- [info] src/lib.rs:1 — fine\\n'\n",
        lab.env.gsd_home.display(),
        lab.tmp.display()
    );
    let script = lab.bin.join("fake-alpha");
    std::fs::write(&script, planter).expect("planter");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let (out, result) = code_review(&lab, &["src/lib.rs", "--base-sha", BASE, "--alpha"]);
    out.assert_status(0);
    let doc = util::read_text(Path::new(
        result["findingsPath"].as_str().expect("findings"),
    ));
    assert!(
        !doc.contains("FORGED"),
        "a planted file reached the findings:\n{doc}"
    );
    assert!(!doc.contains("earlier"), "{doc}");
    assert_eq!(lane(&result, "alpha")["findings"][0]["text"], "fine");
    // With the sandbox off the lane can write there: the planted file is noticed, neither read
    // nor written over, and the call fails (exit 2) with the lanes' own reviews listed.
    let (out, result) = code_review(
        &lab,
        &[
            "src/lib.rs",
            "--base-sha",
            BASE,
            "--alpha",
            "--sandbox",
            "off",
        ],
    );
    out.assert_status(2);
    assert_eq!(result["ok"], false, "{result:#}");
    assert_eq!(
        lane(&result, "alpha")["ok"],
        true,
        "the lane itself reviewed: {result:#}"
    );
    assert!(result.get("findingsPath").is_none(), "{result:#}");
    let detail = result["detail"].as_str().expect("detail");
    assert!(detail.contains("while the lanes ran"), "{detail}");
    assert!(!out.stdout.contains("FORGED"));
}

#[test]
fn the_depth_comes_from_the_flag_else_the_config_else_standard() {
    let lab = lab(&["alpha"]);
    lab.config(&json!({"workflow": {"code_review_depth": "deep"}}));
    // The lane may run as the same pid each time (the sandbox's namespace): read its request
    // after each run.
    let depth_given = |extra: &[&str]| {
        let mut args = vec!["src/lib.rs", "--base-sha", BASE, "--alpha"];
        args.extend_from_slice(extra);
        let (out, _) = code_review(&lab, &args);
        out.assert_status(0);
        let prompts = lab.prompts("alpha");
        let line = prompts
            .iter()
            .flat_map(|p| p.lines())
            .find(|l| l.starts_with("Depth: "))
            .expect("a depth line")
            .to_owned();
        for entry in std::fs::read_dir(lab.env.home.join("marks"))
            .expect("marks")
            .flatten()
        {
            if entry.file_name().to_string_lossy().contains(".prompt.") {
                std::fs::remove_file(entry.path()).expect("clear");
            }
        }
        (line, out.stderr)
    };
    assert!(depth_given(&[]).0.starts_with("Depth: deep "));
    assert!(depth_given(&["--depth", "quick"])
        .0
        .starts_with("Depth: quick "));
    let (line, stderr) = depth_given(&["--depth", "thorough"]);
    assert!(line.starts_with("Depth: standard "), "{line}");
    assert!(stderr.contains("reviewing at standard depth"), "{stderr}");
}

#[test]
fn a_lane_the_run_path_refuses_is_a_malformed_lane() {
    let lab = lab(&["alpha"]);
    // A third-party lane naming a program outside its install folder by absolute path.
    lab.lane("odd", |lane| {
        lane["reviewer"]["probe"]["binary"] = json!("/bin/sh");
        lane["reviewer"]["invoke"]["binary"] = json!("/bin/sh");
    });
    let (out, result) = code_review(
        &lab,
        &["src/lib.rs", "--base-sha", BASE, "--alpha", "--odd"],
    );
    out.assert_status(2);
    let odd = lane(&result, "odd");
    assert_eq!(
        odd["reason"], "malformed_lane",
        "{result:#}\n{}",
        out.stderr
    );
    assert_eq!(lane(&result, "alpha")["ok"], true);
}

/// How many times lane `slug` started (its start marks; the prompt copies are named by a pid,
/// which a lane's own PID namespace can repeat).
fn starts(lab: &Lab, slug: &str) -> usize {
    lab.marks(slug).iter().filter(|m| m.kind == "start").count()
}

/// A call where alpha reviews and beta gives no review (stub), then beta set to review:
/// the lab, the first result and its run dir.
fn interrupted_call() -> (Lab, Value, PathBuf) {
    let lab = lab(&["alpha", "beta"]);
    lab.behave("beta", "stub");
    let (out, first) = code_review(
        &lab,
        &["src/lib.rs", "--base-sha", BASE, "--alpha", "--beta"],
    );
    out.assert_status(2);
    assert_eq!(lane(&first, "beta")["reason"], "invoke_failed", "{first:#}");
    let run_dir = PathBuf::from(first["runDir"].as_str().expect("runDir"));
    lab.behave("beta", "review");
    (lab, first, run_dir)
}

#[test]
fn resume_reruns_only_the_lane_that_did_not_finish_with_the_recorded_request() {
    let (lab, first, run_dir) = interrupted_call();
    let command = format!("gsd-lane code-review --resume {}", run_dir.display());
    assert_eq!(first["resumeWith"], command.as_str(), "{first:#}");
    // Lane flags are the recorded ones: a different selection is refused, nothing runs.
    let (out, refused) = code_review(
        &lab,
        &["--resume", &run_dir.display().to_string(), "--alpha"],
    );
    assert_rejected(&lab, &out, &refused, "selection_failed", &[]);
    assert!(
        refused["detail"]
            .as_str()
            .is_some_and(|d| d.contains("recorded run selected")),
        "{refused:#}"
    );
    assert_eq!(starts(&lab, "beta"), 1);
    // The request and the changed files come from the record: giving them again is an error.
    let again = lab.gsd(&["code-review", "--resume", "--base-sha", BASE]);
    again.assert_status(2);
    assert!(
        again.stderr.contains("cannot be used with"),
        "{}",
        again.stderr
    );

    let (out, result) = code_review(&lab, &["--resume", &run_dir.display().to_string()]);
    out.assert_status(0);
    assert_eq!(result["ok"], true, "{result:#}\n{}", out.stderr);
    assert!(result.get("resumeWith").is_none(), "{result:#}");
    assert!(
        out.stderr.contains("keeping alpha; running beta"),
        "{}",
        out.stderr
    );
    assert_eq!(starts(&lab, "alpha"), 1, "a finished lane is not run again");
    assert_eq!(starts(&lab, "beta"), 2);
    // Every lane got the request the call recorded, and the kept lane's findings are read again.
    let prompt_path = PathBuf::from(result["promptPath"].as_str().expect("promptPath"));
    assert_eq!(prompt_path, run_dir.join("gsd-review-prompt.md"));
    let prompt = util::read_text(&prompt_path);
    assert!(lab.prompts("beta").iter().all(|p| *p == prompt));
    assert_eq!(result["runDir"], first["runDir"]);
    for slug in ["alpha", "beta"] {
        let entry = lane(&result, slug);
        assert_eq!(entry["ok"], true, "{result:#}");
        assert_eq!(
            entry["findings"].as_array().map(Vec::len),
            Some(1),
            "{slug}"
        );
    }
    let doc = util::read_text(Path::new(
        result["findingsPath"].as_str().expect("findings"),
    ));
    assert!(
        doc.contains("## Alpha Review") && doc.contains("## Beta Review"),
        "{doc}"
    );
    // Bare --resume finds nothing left: the finished run was removed, as review's is.
    let (out, none) = code_review(&lab, &["--resume"]);
    assert_rejected(&lab, &out, &none, "selection_failed", &[]);
    assert_eq!(starts(&lab, "beta"), 2);
}

#[test]
fn bare_resume_continues_the_latest_call_started_here() {
    let (lab, _, _) = interrupted_call();
    let (out, result) = code_review(&lab, &["--resume"]);
    out.assert_status(0);
    assert_eq!(result["ok"], true, "{result:#}\n{}", out.stderr);
    assert_eq!(starts(&lab, "alpha"), 1);
    assert_eq!(starts(&lab, "beta"), 2);
}

/// What a damaged file's refusal says, and how the file is damaged.
type Damage = (&'static str, fn(&Path));

#[test]
fn attack_a_resumed_request_a_lane_changed_is_refused_and_nothing_runs() {
    let cases: [Damage; 4] = [
        ("changed", |path| {
            let mut text = std::fs::read_to_string(path).expect("prompt");
            text.push_str("- src/secret.rs\n");
            std::fs::write(path, text).expect("edit");
        }),
        ("a symbolic link", |path| {
            let target = path.with_file_name("elsewhere.md");
            std::fs::rename(path, &target).expect("move");
            std::os::unix::fs::symlink(&target, path).expect("link");
        }),
        ("larger than", |path| {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .expect("open");
            file.set_len(9 * 1024 * 1024).expect("grow");
        }),
        ("not a regular file", |path| {
            std::fs::remove_file(path).expect("remove");
            let made = std::process::Command::new("mkfifo")
                .arg(path)
                .status()
                .expect("mkfifo");
            assert!(made.success());
        }),
    ];
    for (needle, damage) in cases {
        let (lab, _, run_dir) = interrupted_call();
        let prompt = run_dir.join("gsd-review-prompt.md");
        damage(&prompt);
        let (out, result) = code_review(&lab, &["--resume", &run_dir.display().to_string()]);
        assert_eq!(result["ok"], false, "{needle}: {result:#}");
        out.assert_status(2);
        let detail = result["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(needle) && detail.contains("gsd-review-prompt.md"),
            "{needle:?} not in {result:#}\n{}",
            out.stderr
        );
        assert_eq!(starts(&lab, "alpha"), 1, "{needle}: alpha ran again");
        assert_eq!(starts(&lab, "beta"), 1, "{needle}: beta ran again");
    }
}

#[test]
fn resume_of_a_plain_review_run_is_refused_with_the_command_that_continues_it() {
    let lab = lab(&["alpha", "beta"]);
    lab.behave("beta", "stub");
    let prompt = lab.env.project.join("ask.md");
    std::fs::write(&prompt, "Review this.\n").expect("prompt");
    let out = lab.review(&[
        "--prompt-file",
        "ask.md",
        "--out",
        "R.md",
        "--alpha",
        "--beta",
    ]);
    out.assert_no_panic();
    let review_dir = crate::review::run_dir_of(&out);
    let (out, result) = code_review(&lab, &["--resume", &review_dir.display().to_string()]);
    assert_rejected(&lab, &out, &result, "selection_failed", &[]);
    let detail = result["detail"].as_str().expect("detail");
    assert!(
        detail.contains(&format!(
            "gsd-lane review --resume {}",
            review_dir.display()
        )),
        "{result:#}"
    );
    assert_eq!(starts(&lab, "beta"), 1);
}

#[test]
fn a_lane_flag_that_is_an_option_of_code_review_is_said_and_selects_nothing() {
    let lab = lab(&["alpha"]);
    lab.lane("rawish", |lane| {
        lane["reviewer"]["flags"] = json!(["--raw"])
    });
    std::fs::copy(
        util::fixture("code_review/bin/fake-lane"),
        lab.bin.join("fake-rawish"),
    )
    .expect("rawish script");
    // In `review`, --raw selects the lane; in code-review it is code-review's own option.
    let (out, result) = code_review(&lab, &["src/lib.rs", "--base-sha", BASE, "--raw"]);
    assert_rejected(&lab, &out, &result, "no_lanes_selected", &["rawish"]);
    let said = "warning: lane rawish declares --raw, an option of code-review; it is ignored for selection";
    assert!(out.stderr.contains(said), "{}", out.stderr);
    // explicit-from-argv maps flags as code-review reads them: --raw names no lane.
    let mapped = lab.gsd(&["explicit-from-argv", "--", "--raw", "--alpha"]);
    mapped.assert_status(0);
    assert_eq!(mapped.stdout, "alpha\n");
    assert!(mapped.stderr.contains(said), "{}", mapped.stderr);
    // The same lane by its flag and in --explicit runs once, and the call says so.
    let (out, result) = code_review(
        &lab,
        &[
            "src/lib.rs",
            "--base-sha",
            BASE,
            "--alpha",
            "--explicit",
            "alpha",
        ],
    );
    out.assert_status(0);
    assert_eq!(
        result["lanes"].as_array().map(Vec::len),
        Some(1),
        "{result:#}"
    );
    assert_eq!(starts(&lab, "alpha"), 1);
    assert!(
        out.stderr.contains(
            "warning: lane alpha is named both by its lane flag and in --explicit; it runs once"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn resume_with_a_damaged_run_record_fails_closed_naming_the_file_and_the_fix() {
    let damages: [Damage; 3] = [
        ("not valid JSON", |path| {
            let text = std::fs::read(path).expect("record");
            std::fs::write(path, &text[..text.len() / 2]).expect("truncate");
        }),
        ("not valid JSON", |path| {
            std::fs::write(path, "<html>oops</html>\n").expect("write")
        }),
        ("larger than", |path| {
            let file = std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .expect("open");
            file.set_len(5 * 1024 * 1024).expect("grow");
        }),
    ];
    for (needle, damage) in damages {
        let (lab, _, run_dir) = interrupted_call();
        let record = crate::resume::ledger_entry(&lab).join("run.json");
        damage(&record);
        for target in [run_dir.display().to_string(), String::new()] {
            let mut args = vec!["--resume"];
            if !target.is_empty() {
                args.push(&target);
            }
            let (out, result) = code_review(&lab, &args);
            assert_rejected(&lab, &out, &result, "selection_failed", &[]);
            let detail = result["detail"].as_str().expect("detail");
            assert!(
                detail.contains(&record.display().to_string())
                    && detail.contains(needle)
                    && detail.contains("start a new"),
                "{needle:?}, {target:?}: {result:#}\n{}",
                out.stderr
            );
            assert_eq!(starts(&lab, "beta"), 1, "{needle}: nothing runs");
        }
    }
}

#[test]
fn a_call_interrupted_by_ctrl_c_is_resumed_with_only_the_interrupted_lane() {
    let lab = lab(&["alpha"]);
    // beta: review's fake lane, which can be told to sleep.
    lab.lane("beta", |_| {});
    lab.behave("beta", "sleep 30");
    let mut command = lab.gsd_command(&[
        "code-review",
        "--json",
        "src/lib.rs",
        "--base-sha",
        BASE,
        "--alpha",
        "--beta",
    ]);
    let child = command.spawn().expect("spawn code-review");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !(lab.marks("beta").iter().any(|m| m.kind == "child")
        && crate::review::journaled(&lab.tmp, "alpha"))
    {
        assert!(std::time::Instant::now() < deadline, "lanes did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let sent = std::process::Command::new("/bin/kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let first = finish(child, "interrupted code-review");
    first.assert_no_panic().assert_status(130);
    let interrupted = first.json();
    assert_eq!(
        lane(&interrupted, "beta")["reason"],
        "interrupted",
        "{interrupted:#}"
    );
    let resume_with = interrupted["resumeWith"]
        .as_str()
        .expect("resumeWith")
        .to_owned();
    assert!(
        first
            .stderr
            .contains(&format!("code-review: resume with: {resume_with}")),
        "{}",
        first.stderr
    );

    lab.behave("beta", "review");
    let run_dir = interrupted["runDir"].as_str().expect("runDir");
    let (out, result) = code_review(&lab, &["--resume", run_dir]);
    out.assert_status(0);
    assert_eq!(result["ok"], true, "{result:#}\n{}", out.stderr);
    assert_eq!(starts(&lab, "alpha"), 1, "the finished lane is kept");
    assert_eq!(starts(&lab, "beta"), 2, "the interrupted lane runs again");
}

#[test]
fn a_lane_flag_that_is_an_option_of_review_only_selects_its_lane_in_code_review_without_a_false_warning(
) {
    let lab = lab(&[]);
    lab.lane("phasey", |lane| {
        lane["reviewer"]["flags"] = json!(["--phase"])
    });
    std::fs::copy(
        util::fixture("code_review/bin/fake-lane"),
        lab.bin.join("fake-phasey"),
    )
    .expect("phasey script");
    let (out, result) = code_review(&lab, &["src/lib.rs", "--base-sha", BASE, "--phase"]);
    out.assert_status(0);
    assert_eq!(lane(&result, "phasey")["ok"], true, "{result:#}");
    assert!(
        !out.stderr.contains("--phase, an option of"),
        "code-review has no --phase: {}",
        out.stderr
    );
    // review, which has --phase, still says so.
    let review = lab.review(&["--phase", "3", "--all"]);
    assert!(
        review.stderr.contains(
            "lane phasey declares --phase, an option of review; it is ignored for selection"
        ),
        "{}",
        review.stderr
    );
}
