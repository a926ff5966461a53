//! The kimi-code lane (issue 10 point 3), end to end: the real binary, the first-party lane and
//! `tests/fixtures/kimi/bin/kimi`, which replays what the two programs called `kimi` printed
//! (Kimi Code 2.1.0's help, stream-json and text output against a loopback provider, and the
//! legacy kimi-cli 1.51.0's help and usage error).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{self, Outcome, TestEnv};

const TIMEOUT: Duration = Duration::from_secs(30);

/// The model's answer in the captured stream (what REVIEWS.md must hold).
const ANSWER: &str = "## Summary\n\nThe plan is sound. MARKER-42\n\n## Concerns\n\n- **Tests**: missing for the ledger (MEDIUM)\n\n```python\n# keep\nprint('x')\n```\n";

struct Lab {
    env: TestEnv,
    run_dir: PathBuf,
}

impl Lab {
    fn new(behave: &str) -> Lab {
        let env = TestEnv::new();
        crate::review::copy_dir(&util::fixture("review/project"), &env.project);
        std::fs::create_dir_all(env.project.join(".git")).expect("git marker");
        std::fs::write(env.home.join("kimi-behave"), behave).expect("behave");
        let run_dir = env.root.path().join("run");
        std::fs::create_dir_all(&run_dir).expect("run dir");
        std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review PLAN-1.\n").expect("prompt");
        Lab { env, run_dir }
    }

    fn gsd(&self, args: &[&str]) -> Outcome {
        let path = format!("{}:/usr/bin:/bin", util::fixture("kimi/bin").display());
        let command = util::gsd_command(&self.env, &path, &self.env.project, args);
        let (out, _) = util::run_bounded(command, TIMEOUT);
        out.assert_no_panic();
        out
    }

    fn run_json(&self, extra: &[&str]) -> Value {
        let run_dir = self.run_dir.display().to_string();
        let repo = self.env.project.display().to_string();
        let mut args = vec![
            "run",
            "kimi-code",
            "--json",
            "--run-dir",
            &run_dir,
            "--repo-root",
            &repo,
        ];
        args.extend_from_slice(extra);
        let out = self.gsd(&args);
        out.assert_status(0);
        out.json()
    }

    /// The argv of every run of the fake `kimi`.
    fn runs(&self) -> Vec<String> {
        std::fs::read_to_string(self.env.home.join("kimi.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

#[test]
fn kimi_code_review_is_the_final_answer_byte_for_byte() {
    let lab = Lab::new("code");
    let result = lab.run_json(&[]);
    assert_eq!(
        result,
        json!({"slug": "kimi-code", "ok": true, "stubbed": false, "model": {"value": null, "source": "unknown"}})
    );
    let review = util::read_text(&lab.run_dir.join("gsd-review-kimi-code.md"));
    assert_eq!(
        review,
        util::uncited(ANSWER),
        "no bullets, no indent, no narration"
    );
    let runs = lab.runs();
    assert_eq!(runs[0], "run --help", "the probe");
    assert!(
        runs[1].starts_with("run --output-format stream-json -p "),
        "{runs:?}"
    );
}

#[test]
fn a_configured_model_goes_before_the_stream_flags() {
    let lab = Lab::new("code");
    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        json!({"review": {"models": {"kimi-code": "k2"}}}).to_string(),
    )
    .expect("config");
    let result = lab.run_json(&[]);
    assert_eq!(result["stubbed"], false, "{result}");
    assert!(
        lab.runs()[1].starts_with("run -m k2 --output-format stream-json -p "),
        "{:?}",
        lab.runs()
    );
}

#[test]
fn the_legacy_kimi_cli_is_told_apart_by_the_probe_and_never_invoked() {
    let lab = Lab::new("legacy");
    let result = lab.run_json(&[]);
    assert_eq!(result["ok"], false, "{result}");
    assert_eq!(result["reason"], "probe_failed");
    let detail = util::str_of(&result, "detail");
    for needle in [
        "@moonshot-ai/kimi-code",
        "kimi-cli",
        "--output-format <format>",
    ] {
        assert!(detail.contains(needle), "{needle:?} missing from {detail}");
    }
    assert_eq!(lab.runs(), ["run --help"], "only the probe ran");
}

#[test]
fn reviews_md_holds_the_clean_answer_nested_under_the_reviewer() {
    let lab = Lab::new("code");
    let out = lab.gsd(&["review", "--phase", "3", "--kimi-code"]);
    out.assert_status(0);
    let reviews = util::read_text(
        &lab.env
            .project
            .join(".planning/phases/03-billing/03-REVIEWS.md"),
    );
    assert!(
        reviews.contains(&format!(
            "## Kimi Code Review\n\n{}\n\n### Summary\n\nThe plan is sound. MARKER-42\n\n### Concerns\n\n\
             - **Tests**: missing for the ledger (MEDIUM)\n\n```python\n# keep\nprint('x')\n```\n\n---\n",
            util::CITATION_STAMP
        )
        ),
        "{reviews}"
    );
    assert!(!reviews.contains('•'));
    assert!(!reviews.contains("I'll read the plan first."));
}
