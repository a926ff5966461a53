//! `flags` and `sections` (review-workflow.md §3).

use serde_json::{json, Value};

use crate::review::Lab;
use crate::util::{self, TestEnv};

use crate::util::{default_flags, default_sections};

fn stdout_of(env: &TestEnv, args: &[&str]) -> String {
    let out = env.run(args);
    out.assert_status(0).assert_no_panic();
    out.stdout
}

#[test]
fn flags_default_output_is_exact() {
    let env = TestEnv::new();
    assert_eq!(stdout_of(&env, &["flags"]), default_flags());
}

#[test]
fn sections_default_output_is_exact() {
    let env = TestEnv::new();
    assert_eq!(stdout_of(&env, &["sections"]), default_sections());
}

#[test]
fn selected_list_is_trimmed_deduplicated_and_in_descriptor_order() {
    let env = TestEnv::new();
    let selected = "qwen, ,claude,nope,claude";
    assert_eq!(
        stdout_of(&env, &["flags", "--selected", selected]),
        "--claude\n--qwen\n"
    );
    assert_eq!(
        stdout_of(&env, &["sections", "--selected", selected]),
        "claude\tClaude\nqwen\tQwen\n"
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
    assert_eq!(
        stdout_of(&env, &["flags", "--selected", ""]),
        default_flags()
    );
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
    let flags_text = default_flags();
    let expected_flags: Vec<&str> = flags_text.lines().collect();
    assert_eq!(flags, json!(expected_flags));

    let sections: Value = serde_json::from_str(&stdout_of(&env, &["sections", "--json"]))
        .expect("sections --json parses");
    let expected_sections: Vec<Value> = util::first_party()
        .iter()
        .map(|lane| json!({"slug": lane.slug, "section": lane.section}))
        .collect();
    assert_eq!(sections, Value::Array(expected_sections));

    let selected: Value = serde_json::from_str(&stdout_of(
        &env,
        &[
            "sections",
            "--json",
            "--selected",
            "qwen, ,claude,nope,claude",
        ],
    ))
    .expect("sections --json --selected parses");
    assert_eq!(
        selected,
        json!([{"slug": "claude", "section": "Claude"}, {"slug": "qwen", "section": "Qwen"}])
    );

    let none: Value =
        serde_json::from_str(&stdout_of(&env, &["flags", "--json", "--selected", "nope"]))
            .expect("flags --json --selected nope parses");
    assert_eq!(none, json!([]));

    let list: Value =
        serde_json::from_str(&stdout_of(&env, &["list", "--json"])).expect("list --json parses");
    assert_eq!(
        list.as_array().map(Vec::len),
        Some(util::first_party().len())
    );
}

// ---------------------------------------------------------------------------------------------
// The roster is data (issue 22 item 4): what the tests compare against is derived from
// capabilities/, so adding a first-party lane is its manifest, its order line and its golden
// plan row (CONTRIBUTING.md).
// ---------------------------------------------------------------------------------------------

/// Copies the files of `from` (one level of folders, as capabilities/ is) into `to`.
fn copy_capabilities(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).expect("list capabilities") {
        let path = entry.expect("entry").path();
        let target = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            for file in std::fs::read_dir(&path).expect("list lane") {
                let file = file.expect("entry").path();
                std::fs::copy(&file, target.join(file.file_name().expect("name"))).expect("copy");
            }
        } else {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

#[test]
fn every_manifest_folder_is_in_the_descriptor_order_and_the_binary_agrees() {
    // host/build.rs refuses a folder the order file does not list; the tests' reader sees the
    // same set, so no lane can be compiled in without the tests knowing it.
    let dir = util::workspace_root().join("capabilities");
    let mut folders: Vec<String> = std::fs::read_dir(&dir)
        .expect("list capabilities")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("capability.json").is_file())
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut listed = util::first_party_ids();
    listed.sort();
    assert_eq!(folders, listed);
    let env = TestEnv::new();
    let rows = env.list(&[]);
    util::assert_first_party_intact(&rows);
    assert_eq!(rows.len(), util::first_party().len());
}

#[test]
fn adding_a_first_party_lane_the_documented_way_moves_every_derived_expectation() {
    let before = util::first_party();
    let copy = tempfile::tempdir().expect("temp dir");
    copy_capabilities(&util::workspace_root().join("capabilities"), copy.path());
    // CONTRIBUTING.md "Shipping a first-party lane": the manifest folder, its order line.
    let lane = copy.path().join("acme-review");
    std::fs::create_dir_all(&lane).expect("mkdir");
    std::fs::write(
        lane.join("capability.json"),
        serde_json::to_string_pretty(&util::acme()).expect("json"),
    )
    .expect("write manifest");
    let order = copy.path().join("descriptor-order.txt");
    let mut text = std::fs::read_to_string(&order).expect("order");
    text.push_str("acme-review\n");
    std::fs::write(&order, text).expect("order");

    let after = util::roster_in(copy.path());
    assert_eq!(after.len(), before.len() + 1, "the count follows the data");
    let ids: Vec<&str> = after.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids.last(), Some(&"acme-review"));
    assert_eq!(
        util::flags_text(&after),
        format!("{}--acme\n", default_flags())
    );
    assert_eq!(
        util::sections_text(&after),
        format!("{}acme\tAcme\n", default_sections())
    );
    // Removing one is the same edit backwards: the derived outputs shrink with it.
    let without_claude: Vec<util::FirstPartyLane> = before
        .iter()
        .filter(|l| l.id != "claude")
        .cloned()
        .collect();
    assert!(!util::flags_text(&without_claude).contains("--claude\n"));
    assert_eq!(without_claude.len(), before.len() - 1);
}

// ---------------------------------------------------------------------------------------------
// The gemini lane's retirement (decisions.md row 16)
// ---------------------------------------------------------------------------------------------

/// Every retirement message says why (the sunset), what replaces it and how to keep it.
fn assert_explains_the_retirement(text: &str) {
    for needle in [
        "the gemini lane was retired",
        "2026-06-18",
        "its successor is antigravity",
        "`gsd-lane install examples/lanes/gemini`",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    assert!(!text.contains("unexpected argument"), "{text}");
    assert!(!text.contains("unknown reviewer slug"), "{text}");
}

#[test]
fn the_roster_follows_the_upstream_without_gemini() {
    let ids = util::first_party_ids();
    assert!(!ids.iter().any(|id| id == "gemini"), "{ids:?}");
    let env = TestEnv::new();
    assert!(!stdout_of(&env, &["flags"]).contains("--gemini"));
    assert!(!stdout_of(&env, &["sections"]).contains("Gemini"));
    // No first-party manifest declares a key of the retired lane (upstream's #4716 test).
    for lane in util::first_party() {
        let keys = lane.manifest["config"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(
            !keys.keys().any(|k| k.ends_with(".gemini")),
            "{}: {keys:?}",
            lane.id
        );
    }
}

#[test]
fn gemini_flag_without_the_overlay_exits_2_and_explains() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let out = lab.review(&["--phase", "3", "--gemini", "--alpha"]);
    out.assert_no_panic().assert_status(2);
    assert!(out.stderr.contains("error: --gemini: "), "{}", out.stderr);
    assert!(out.stderr.contains("nothing was invoked"), "{}", out.stderr);
    assert_explains_the_retirement(&out.stderr);
    assert!(!lab.started("alpha"), "nothing runs");
    assert!(!lab.reviews_path().exists());
    // `run gemini` and `doctor gemini` name the same reason.
    let out = lab.gsd(&["run", "gemini"]);
    out.assert_no_panic();
    assert_ne!(out.code, Some(0));
    assert_explains_the_retirement(&out.stderr);
    let out = lab.gsd(&["doctor", "gemini"]);
    out.assert_no_panic().assert_status(2);
    assert_explains_the_retirement(&out.stderr);
}

#[test]
fn gemini_in_default_reviewers_is_a_warning_with_the_reason() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.config(&json!({"review": {"default_reviewers": ["gemini", "alpha"]}}));
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(0);
    assert!(
        out.stderr
            .contains("warning: review.default_reviewers names gemini: the gemini lane was"),
        "{}",
        out.stderr
    );
    assert_explains_the_retirement(&out.stderr);
    assert!(lab.started("alpha"));
    // With reviewer instances an unknown entry is an error (§5.1); it still says why.
    lab.config(&json!({"review": {"default_reviewers": ["gemini", "alpha"],
        "reviewer_instances": {"alpha-x": {"cli": "alpha"}}}}));
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(2);
    assert!(
        out.stderr
            .contains("error: review.default_reviewers names gemini: the gemini lane was"),
        "{}",
        out.stderr
    );
    assert_explains_the_retirement(&out.stderr);
}

#[test]
fn leftover_review_gemini_keys_each_get_the_message() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.config(&json!({"review": {
        "models": {"gemini": "gemini-2.5-pro"},
        "timeouts": {"gemini": 900},
        "max_prompt_tokens_per_reviewer": {"gemini": 5000}
    }}));
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic().assert_status(0);
    for key in [
        "review.models.gemini",
        "review.timeouts.gemini",
        "review.max_prompt_tokens_per_reviewer.gemini",
    ] {
        let line = out
            .stderr
            .lines()
            .find(|l| l.starts_with(&format!("warning: {key} is set but has no effect: ")))
            .unwrap_or_else(|| panic!("no warning for {key}:\n{}", out.stderr));
        assert_explains_the_retirement(line);
    }
}

#[test]
fn with_the_example_overlay_installed_gemini_works_as_before() {
    let lab = Lab::new();
    lab.env.install_example_lane("gemini");
    let gemini = lab.bin.join("gemini");
    std::fs::write(
        &gemini,
        "#!/bin/sh\ncat >/dev/null\nprintf '## Summary\\n\\nLooks fine.\\n'\n",
    )
    .expect("fake gemini");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gemini, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    // gemini's folder-trust gate applies to the overlay lane (its program is `gemini`).
    let out = lab.review(&["--phase", "3", "--gemini"]);
    out.assert_no_panic().assert_status(2);
    assert!(out.stderr.contains("trust"), "{}", out.stderr);
    std::fs::create_dir_all(lab.env.home.join(".gemini")).expect("mkdir .gemini");
    std::fs::write(
        lab.env.home.join(".gemini/trustedFolders.json"),
        json!({ lab.env.project.display().to_string(): "TRUST_FOLDER" }).to_string(),
    )
    .expect("trust the project");
    lab.config(&json!({"review": {"models": {"gemini": "gemini-2.5-pro"}}}));
    let out = lab.review(&["--phase", "3", "--gemini"]);
    out.assert_no_panic().assert_status(0);
    assert!(!out.stderr.contains("retired"), "{}", out.stderr);
    let reviews = lab.reviews();
    assert!(reviews.contains("reviewers: [gemini]\n"), "{reviews}");
    assert!(
        reviews.contains(&format!(
            "## Gemini Review\n\n{}\n\n### Summary\n\nLooks fine.\n",
            crate::util::CITATION_STAMP
        )),
        "{reviews}"
    );
}
