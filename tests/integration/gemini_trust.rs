//! gemini's folder-trust gate (issue 10 point 2), end to end: the real binary, the gemini lane
//! of the example overlay `examples/lanes/gemini` (installed globally; the gate follows the
//! program, not the roster), and `tests/fixtures/gemini/bin/gemini`, a replay of gemini-cli
//! 0.61 (its exit 55 and red "not running in a trusted directory" message when it distrusts
//! the folder).
//!
//! gsd-lane reads gemini's own trust configuration (settings, environment, trusted-folders
//! file) before anything runs, says how to fix it, and never trusts a folder itself.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{self, Outcome, TestEnv};

const TIMEOUT: Duration = Duration::from_secs(30);

struct Lab {
    env: TestEnv,
    run_dir: PathBuf,
}

impl Lab {
    fn new() -> Lab {
        let env = TestEnv::new();
        crate::review::copy_dir(&util::fixture("review/project"), &env.project);
        std::fs::create_dir_all(env.project.join(".git")).expect("git marker");
        let run_dir = env.root.path().join("run");
        std::fs::create_dir_all(&run_dir).expect("run dir");
        std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review PLAN-1.\n").expect("prompt");
        // gemini is retired from the first-party roster; its example overlay keeps it.
        env.install_example_lane("gemini");
        Lab { env, run_dir }
    }

    fn gemini_dir(&self) -> PathBuf {
        self.env.home.join(".gemini")
    }

    /// Writes `<home>/.gemini/<name>`.
    fn gemini_file(&self, name: &str, text: &str) {
        std::fs::create_dir_all(self.gemini_dir()).expect("mkdir .gemini");
        std::fs::write(self.gemini_dir().join(name), text).expect("write gemini file");
    }

    fn trust(&self, rules: &Value) {
        self.gemini_file("trustedFolders.json", &rules.to_string());
    }

    fn behave(&self, what: &str) {
        std::fs::write(self.env.home.join("gemini-behave"), what).expect("behave");
    }

    fn project(&self) -> String {
        self.env.project.display().to_string()
    }

    /// The argv of every start of the fake gemini.
    fn starts(&self) -> Vec<String> {
        std::fs::read_to_string(self.env.home.join("gemini.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn command(&self, args: &[&str], vars: &[(&str, &str)]) -> Command {
        let path = format!("{}:/usr/bin:/bin", util::fixture("gemini/bin").display());
        let mut command = util::gsd_command(&self.env, &path, &self.env.project, args);
        for (name, value) in vars {
            command.env(name, value);
        }
        command
    }

    fn run_json(&self, vars: &[(&str, &str)]) -> (Outcome, Value) {
        let run_dir = self.run_dir.display().to_string();
        let repo = self.project();
        let args = [
            "run",
            "gemini",
            "--json",
            "--run-dir",
            &run_dir,
            "--repo-root",
            &repo,
        ];
        let (out, _) = util::run_bounded(self.command(&args, vars), TIMEOUT);
        out.assert_no_panic();
        let value = out.json();
        (out, value)
    }

    fn review(&self, flags: &[&str], vars: &[(&str, &str)]) -> Outcome {
        let mut args = vec!["review", "--phase", "3"];
        args.extend_from_slice(flags);
        let (out, _) = util::run_bounded(self.command(&args, vars), TIMEOUT);
        out.assert_no_panic();
        out
    }

    fn reviews(&self) -> String {
        util::read_text(
            &self
                .env
                .project
                .join(".planning/phases/03-billing/03-REVIEWS.md"),
        )
    }
}

fn assert_untrusted(result: &Value) {
    assert_eq!(result["ok"], false, "{result}");
    assert_eq!(result["reason"], "untrusted_workspace", "{result}");
    let detail = util::str_of(result, "detail");
    for needle in [
        "GEMINI_CLI_TRUST_WORKSPACE=true",
        "trust the folder",
        "exits 55",
        "never trusts a folder for you",
    ] {
        assert!(detail.contains(needle), "{needle:?} missing from {detail}");
    }
}

#[test]
fn an_untrusted_folder_is_refused_before_gemini_starts_with_the_fix() {
    let lab = Lab::new();
    let (out, result) = lab.run_json(&[]);
    out.assert_status(0);
    assert_untrusted(&result);
    assert!(
        util::str_of(&result, "detail").contains("trustedFolders.json does not exist"),
        "{result}"
    );
    assert_eq!(lab.starts(), Vec::<String>::new(), "gemini was started");
}

#[test]
fn invoke_carries_the_same_typed_reason() {
    let lab = Lab::new();
    let run_dir = lab.run_dir.display().to_string();
    let repo = lab.project();
    let args = [
        "invoke",
        "--slug",
        "gemini",
        "--run-dir",
        &run_dir,
        "--repo-root",
        &repo,
    ];
    let (out, _) = util::run_bounded(lab.command(&args, &[]), TIMEOUT);
    out.assert_no_panic();
    assert_untrusted(&out.json());
    assert!(lab.starts().is_empty());
}

#[test]
fn a_trust_rule_for_the_folder_or_a_parent_lets_gemini_run_without_skip_trust() {
    type Rules = fn(&Lab) -> Value;
    let cases: [(&str, Rules); 3] = [
        ("folder", |lab| json!({ lab.project(): "TRUST_FOLDER" })),
        (
            "parent",
            |lab| json!({ lab.env.root.path().display().to_string(): "TRUST_FOLDER" }),
        ),
        (
            "trust-parent",
            |lab| json!({ lab.env.project.join("x").display().to_string(): "TRUST_PARENT" }),
        ),
    ];
    for (name, rules) in cases {
        let lab = Lab::new();
        lab.trust(&rules(&lab));
        let (out, result) = lab.run_json(&[]);
        out.assert_status(0);
        assert_eq!(
            result,
            json!({"slug": "gemini", "ok": true, "stubbed": false, "model": {"value": null, "source": "unknown"}}),
            "{name}"
        );
        assert_eq!(
            lab.starts(),
            ["start -p -"],
            "{name}: no --skip-trust, ever"
        );
    }
}

#[test]
fn the_longest_rule_wins_so_do_not_trust_inside_a_trusted_parent_refuses() {
    let lab = Lab::new();
    lab.trust(&json!({
        lab.env.root.path().display().to_string(): "TRUST_FOLDER",
        lab.project(): "DO_NOT_TRUST",
    }));
    let (_, result) = lab.run_json(&[]);
    assert_untrusted(&result);
    assert!(
        util::str_of(&result, "detail").contains("DO_NOT_TRUST"),
        "{result}"
    );
    assert!(lab.starts().is_empty());
}

/// The overlay lane is third-party, so gemini starts from the minimal environment (trust.md
/// §7.9): gemini's own variables in gsd-lane's environment never reach it, and the gate, which
/// decides on the environment the child will see, is not swayed by them either way.
#[test]
fn gemini_s_environment_variables_in_gsd_lane_s_environment_do_not_reach_the_overlay_lane() {
    let lab = Lab::new();
    let (_, result) = lab.run_json(&[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    assert_untrusted(&result);
    assert!(lab.starts().is_empty());

    let lab = Lab::new();
    lab.trust(&json!({ lab.project(): "TRUST_FOLDER" }));
    for vars in [
        [("GEMINI_CLI_TRUST_WORKSPACE", "false")],
        [("GEMINI_RESTRICTED_MODE", "true")],
    ] {
        let (_, result) = lab.run_json(&vars);
        assert_eq!(result["stubbed"], false, "{result}");
    }
    assert_eq!(lab.starts(), ["start -p -", "start -p -"]);
}

#[test]
fn folder_trust_disabled_in_user_settings_means_no_gate() {
    let lab = Lab::new();
    lab.gemini_file(
        "settings.json",
        "{\n  // user settings may hold comments\n  \"security\": {\"folderTrust\": {\"enabled\": false}}\n}\n",
    );
    let (_, result) = lab.run_json(&[]);
    assert_eq!(result["stubbed"], false, "{result}");
    // A system settings file named only in gsd-lane's environment does not reach the overlay
    // lane's gemini (minimal environment), so it does not turn the gate back on.
    let system = lab.env.root.path().join("system-settings.json");
    std::fs::write(
        &system,
        r#"{"security": {"folderTrust": {"enabled": true}}}"#,
    )
    .expect("write");
    let (_, result) = lab.run_json(&[(
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
        system.to_str().expect("utf-8"),
    )]);
    assert_eq!(result["stubbed"], false, "{result}");
    assert_eq!(lab.starts().len(), 2);
}

#[test]
fn a_trusted_folders_file_gemini_would_reject_blocks_the_lane_naming_it() {
    for text in [r#"{"/x": "BOGUS"}"#, "[1]", "{not json"] {
        let lab = Lab::new();
        lab.gemini_file("trustedFolders.json", text);
        let (_, result) = lab.run_json(&[]);
        assert_eq!(result["ok"], false, "{result}");
        assert_eq!(result["reason"], "probe_failed", "{text}: {result}");
        assert!(
            util::str_of(&result, "detail").contains("trustedFolders.json cannot be used"),
            "{result}"
        );
        assert!(lab.starts().is_empty());
    }
}

#[test]
fn the_trusted_folders_path_follows_gemini_s_overrides() {
    let lab = Lab::new();
    let elsewhere = lab.env.root.path().join("trust-elsewhere.json");
    std::fs::write(
        &elsewhere,
        json!({ lab.project(): "TRUST_FOLDER" }).to_string(),
    )
    .expect("write");
    let (_, result) = lab.run_json(&[(
        "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
        elsewhere.to_str().expect("utf-8"),
    )]);
    assert_eq!(result["stubbed"], false, "{result}");
    let gemini_home = lab.env.root.path().join("gemini-home");
    std::fs::create_dir_all(gemini_home.join(".gemini")).expect("mkdir");
    std::fs::write(
        gemini_home.join(".gemini/trustedFolders.json"),
        json!({ lab.project(): "TRUST_FOLDER" }).to_string(),
    )
    .expect("write");
    let (_, result) = lab.run_json(&[("GEMINI_CLI_HOME", gemini_home.to_str().expect("utf-8"))]);
    assert_eq!(result["stubbed"], false, "{result}");
}

#[test]
fn exit_55_with_gemini_s_message_after_the_fact_is_a_typed_stub() {
    // gsd-lane's reading says trusted, gemini disagrees (an IDE's say, a newer gemini): the
    // stub says why and how to fix it, and the raw message stays in the sidecar.
    let lab = Lab::new();
    lab.trust(&json!({ lab.project(): "TRUST_FOLDER" }));
    lab.behave("untrusted");
    let (_, result) = lab.run_json(&[]);
    assert_eq!(
        result,
        json!({"slug": "gemini", "ok": true, "stubbed": true, "reason": "untrusted_workspace",
               "model": {"value": null, "source": "unknown"}})
    );
    let stub = util::read_text(&lab.run_dir.join("gsd-review-gemini.md"));
    assert!(stub.contains("> [gsd-lane] untrusted_workspace: gemini refused to run because it does not trust this folder (exit 55); to fix:"), "{stub}");
    let sidecar = util::read_text(&lab.run_dir.join("gsd-review-gemini.err"));
    assert!(sidecar.starts_with("\u{1b}[31mGemini CLI is not running in a trusted directory"));

    // Alone, the stub is no lane result: no REVIEWS.md; the stub is in the saved diagnostics
    // (decisions.md row 20), and the terminal gets no escape sequence.
    let out = lab.review(&["--gemini"], &[]);
    out.assert_status(2);
    assert!(!out.stdout.contains('\u{1b}'), "{}", out.stdout);
    let saved = lab
        .env
        .project
        .join(".planning/phases/03-billing/.review-diagnostics");
    let run = std::fs::read_dir(&saved)
        .expect("saved diagnostics")
        .flatten()
        .next()
        .expect("one run")
        .path();
    let stub = util::read_text(&run.join("gsd-review-gemini.md"));
    assert!(
        stub.contains("gemini review failed or returned empty output. stderr:\n"),
        "{stub}"
    );
    assert!(stub.contains("> [gsd-lane] untrusted_workspace:"), "{stub}");
}

#[test]
fn review_pre_flight_names_the_fix_before_any_lane_runs() {
    let lab = Lab::new();
    let out = lab.review(&["--gemini"], &[]);
    out.assert_status(2);
    assert!(
        out.stderr.contains("error: explicit reviewer 'gemini' is not available on this host (untrusted_workspace: gemini will refuse to run:"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("GEMINI_CLI_TRUST_WORKSPACE=true"));
    assert!(lab.starts().is_empty());
}

#[test]
fn a_default_reviewer_held_back_by_the_gate_is_named_in_reviews_md() {
    let lab = Lab::new();
    lab.env.write_overlay_fixture(
        util::Scope::Global,
        "acme-review",
        "run/spawn-stdout/acme-review",
    );
    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        json!({"review": {"default_reviewers": ["acme", "gemini"]}}).to_string(),
    )
    .expect("config");
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        util::fixture("gemini/bin").display(),
        util::fixture("bin").display()
    );
    let command = util::gsd_command(
        &lab.env,
        &path,
        &lab.env.project,
        &["review", "--phase", "3"],
    );
    let (out, _) = util::run_bounded(command, TIMEOUT);
    out.assert_no_panic().assert_status(0);
    assert!(
        out.stderr.contains(
            "warning: reviewer gemini is held back (untrusted_workspace: gemini will refuse to run:"
        ),
        "{}",
        out.stderr
    );
    let reviews = lab.reviews();
    assert!(
        reviews.contains("> Not run: Gemini (untrusted_workspace)\n"),
        "{reviews}"
    );
    assert!(lab.starts().is_empty());
}

#[test]
fn doctor_names_the_folder_trust_gate_and_its_fix() {
    let lab = Lab::new();
    let (out, _) = util::run_bounded(lab.command(&["doctor", "gemini", "--json"], &[]), TIMEOUT);
    out.assert_no_panic().assert_status(1);
    let rows = out.json();
    let row = &rows[0];
    assert_eq!(row["probe"]["reason"], "untrusted_workspace", "{rows}");
    let fix = row["problems"][0]["fix"].as_str().unwrap_or_default();
    assert!(fix.contains("GEMINI_CLI_TRUST_WORKSPACE=true"), "{fix}");
    assert!(!fix.contains("gsd-lane validate"), "{fix}");
    // Only the bounded `--version`: gemini never runs a review here.
    assert_eq!(lab.starts(), ["start --version"], "gemini was started");
}

/// Issue 20 item 9: a lane can write the home gemini's files live in; a FIFO planted at
/// `~/.gemini/trustedFolders.json` or `settings.json` must not hang the next review. The lane
/// here is an overlay whose program is `gemini` (the gate is the program's, whichever way the
/// lane is installed), run by a real `review`.
#[test]
fn a_fifo_planted_in_gemini_s_home_fails_the_check_promptly_and_names_it() {
    for name in ["trustedFolders.json", "settings.json"] {
        let lab = crate::review::Lab::new();
        lab.lane("gem", |lane| {
            lane["reviewer"]["probe"]["binary"] = json!("gemini");
            lane["reviewer"]["invoke"]["binary"] = json!("gemini");
        });
        std::fs::rename(lab.bin.join("fake-gem"), lab.bin.join("gemini")).expect("rename");
        let gemini = lab.env.home.join(".gemini");
        std::fs::create_dir_all(&gemini).expect("mkdir .gemini");
        let fifo = gemini.join(name);
        let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
        assert!(made.success());
        let started = std::time::Instant::now();
        let out = lab.review(&["--phase", "3", "--gem"]);
        out.assert_no_panic();
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the check took {:?}",
            started.elapsed()
        );
        assert_eq!(out.code, Some(2), "{}\n{}", out.stdout, out.stderr);
        let text = format!("{}{}", out.stdout, out.stderr);
        assert!(
            text.contains("probe_failed") && text.contains(&fifo.display().to_string()),
            "{name}: {text}"
        );
        let log = lab.env.home.join("marks").join("gemini.log");
        assert!(!log.exists(), "gemini must not start");
    }
}
