//! `gsd-lane review` end to end (review-workflow.md, planning-layout.md): the real binary, fake
//! reviewer lanes (one POSIX sh script, `tests/fixtures/review/bin/fake-lane`, installed under
//! several names) declared as global overlays, and a small GSD project
//! (`tests/fixtures/review/project`).
//!
//! Every fake lane appends `start <ns> <pid>` / `end <ns> <pid>` to `$HOME/marks/<name>.log`, so
//! the tests judge "did it start" and "did they overlap" from the lanes' own timestamps, never
//! from wall-clock thresholds.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{self, Outcome, Scope, TestEnv};

/// Bound on one command (a hang fails the test instead of blocking the suite).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

pub(crate) struct Lab {
    pub(crate) env: TestEnv,
    pub(crate) bin: PathBuf,
    pub(crate) tmp: PathBuf,
}

/// One line of a lane's log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    pub(crate) kind: String,
    pub(crate) ns: u128,
    pub(crate) pid: u32,
}

impl Lab {
    pub(crate) fn new() -> Lab {
        let env = TestEnv::new();
        copy_dir(&util::fixture("review/project"), &env.project);
        std::fs::create_dir_all(env.project.join(".git")).expect("git marker");
        let bin = env.root.path().join("bin");
        let tmp = env.root.path().join("tmp");
        for dir in [&bin, &tmp, &env.home.join("behave")] {
            std::fs::create_dir_all(dir).expect("dirs");
        }
        Lab { env, bin, tmp }
    }

    /// Installs fake lane `slug` (binary `fake-<slug>`, flag `--<slug>`, section = `Slug`).
    pub(crate) fn lane(&self, slug: &str, edit: impl FnOnce(&mut Value)) {
        let mut lane = util::read_json(&util::fixture("review/lane/capability.json"));
        let id = format!("fake-{slug}");
        let section = format!("{}{}", slug[..1].to_uppercase(), &slug[1..]);
        lane["id"] = json!(id);
        lane["reviewer"]["slug"] = json!(slug);
        lane["reviewer"]["flags"] = json!([format!("--{slug}")]);
        lane["reviewer"]["probe"]["binary"] = json!(id);
        lane["reviewer"]["invoke"]["binary"] = json!(id);
        lane["reviewer"]["reviewsSection"] = json!(section);
        lane["reviewer"]["modelConfigKey"] = json!(format!("review.models.{slug}"));
        lane["config"] = json!({
            format!("review.models.{slug}"): {"type": "string", "default": "", "description": "Model."}
        });
        edit(&mut lane);
        self.env.write_overlay(Scope::Global, &id, &lane);
        let script = self.bin.join(&id);
        std::fs::copy(util::fixture("review/bin/fake-lane"), &script).expect("copy fake lane");
    }

    /// A lane with a prompt budget key `review.max_prompt_tokens_per_reviewer.<slug>`.
    pub(crate) fn budget_lane(&self, slug: &str) {
        self.lane(slug, |lane| {
            let key = format!("review.max_prompt_tokens_per_reviewer.{slug}");
            lane["reviewer"]["promptBudgetKey"] = json!(key);
            lane["config"][key] =
                json!({"type": "number", "default": -1, "description": "Budget."});
        });
    }

    pub(crate) fn behave(&self, slug: &str, what: &str) {
        std::fs::write(
            self.env.home.join("behave").join(format!("fake-{slug}")),
            what,
        )
        .expect("behave");
    }

    pub(crate) fn config(&self, value: &Value) {
        std::fs::write(
            self.env.project.join(".planning/config.json"),
            serde_json::to_string_pretty(value).expect("json"),
        )
        .expect("config");
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut full = vec!["review"];
        full.extend_from_slice(args);
        self.gsd_command(&full)
    }

    /// `gsd-lane <args>` (any command) in the lab's environment.
    pub(crate) fn gsd_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(util::bin());
        command
            .env_clear()
            .env("HOME", &self.env.home)
            .env("GSD_HOME", &self.env.gsd_home)
            .env("TMPDIR", &self.tmp)
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .current_dir(&self.env.project)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    pub(crate) fn review(&self, args: &[&str]) -> Outcome {
        let child = self.command(args).spawn().expect("spawn gsd-lane");
        finish(child, &format!("review {args:?}"))
    }

    /// `gsd-lane <args>` (any command), finished.
    pub(crate) fn gsd(&self, args: &[&str]) -> Outcome {
        let child = self.gsd_command(args).spawn().expect("spawn gsd-lane");
        finish(child, &format!("{args:?}"))
    }

    pub(crate) fn marks(&self, slug: &str) -> Vec<Mark> {
        let path = self.env.home.join("marks").join(format!("fake-{slug}.log"));
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let mut parts = line.split(' ');
                Some(Mark {
                    kind: parts.next()?.to_owned(),
                    ns: parts.next()?.parse().ok()?,
                    pid: parts.next()?.parse().ok()?,
                })
            })
            .collect()
    }

    pub(crate) fn started(&self, slug: &str) -> bool {
        self.marks(slug).iter().any(|m| m.kind == "start")
    }

    /// (start, end) of every run of `slug`, in start order.
    pub(crate) fn intervals(&self, slug: &str) -> Vec<(u128, u128)> {
        let marks = self.marks(slug);
        let mut out: Vec<(u128, u128)> = marks
            .iter()
            .filter(|m| m.kind == "start")
            .filter_map(|s| {
                marks
                    .iter()
                    .find(|e| e.kind == "end" && e.pid == s.pid)
                    .map(|e| (s.ns, e.ns))
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Every prompt `slug` received on stdin.
    pub(crate) fn prompts(&self, slug: &str) -> Vec<String> {
        let dir = self.env.home.join("marks");
        let prefix = format!("fake-{slug}.prompt.");
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                out.push(std::fs::read_to_string(entry.path()).expect("prompt"));
            }
        }
        out
    }

    pub(crate) fn reviews_path(&self) -> PathBuf {
        self.env
            .project
            .join(".planning/phases/03-billing/03-REVIEWS.md")
    }

    pub(crate) fn reviews(&self) -> String {
        std::fs::read_to_string(self.reviews_path())
            .unwrap_or_else(|err| panic!("reading {}: {err}", self.reviews_path().display()))
    }
}

/// Copies a fixture directory tree.
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Waits for `child` (stdout and stderr piped) at most `COMMAND_TIMEOUT`.
pub(crate) fn finish(child: Child, description: &str) -> Outcome {
    util::finish_bounded(child, description.to_owned(), COMMAND_TIMEOUT)
}

fn selection_line(out: &Outcome) -> String {
    out.stderr
        .lines()
        .find(|l| l.starts_with("review: selection "))
        .unwrap_or_else(|| panic!("no selection line:\n{}", out.stderr))
        .to_owned()
}

/// `reviewed_at` varies; everything else in REVIEWS.md is deterministic.
pub(crate) fn normalize(reviews: &str) -> String {
    reviews
        .lines()
        .map(|line| {
            if line.starts_with("reviewed_at: ") {
                "reviewed_at: <timestamp>".to_owned()
            } else if line.starts_with("> Sandbox: enforce (")
                && (line.ends_with(", mechanism view") || line.ends_with(", mechanism landlock"))
            {
                // The mechanism is this machine's (confinement_said.rs checks which).
                "> Sandbox: enforce (<this machine's mechanism>)".to_owned()
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn run_dir_of(out: &Outcome) -> PathBuf {
    let line = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("review: run dir kept: "))
        .unwrap_or_else(|| panic!("no kept run dir:\n{}", out.stderr));
    PathBuf::from(line)
}

// ---------------------------------------------------------------------------------------------
// Selection (§5) and self-skip (§6)
// ---------------------------------------------------------------------------------------------

#[test]
fn explicit_flags_beat_all_and_default_reviewers() {
    let lab = Lab::new();
    for slug in ["alpha", "beta"] {
        lab.lane(slug, |_| {});
    }
    lab.config(&json!({"review": {"default_reviewers": ["beta"]}}));
    let out = lab.review(&["--phase", "3", "--alpha", "--all"]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(
        selection_line(&out),
        "review: selection source=explicit_flags reviewers=alpha"
    );
    assert!(lab.started("alpha"));
    assert!(!lab.started("beta"), "beta was not asked for");
    assert!(out.stdout.contains("◆ Reviewing with Alpha... done ✓\n"));
    assert!(out.stdout.contains("Phase 3 reviewed by 1 reviewer.\n"));
}

#[test]
fn all_flag_ignores_default_reviewers() {
    let lab = Lab::new();
    for slug in ["alpha", "beta"] {
        lab.lane(slug, |_| {});
    }
    lab.config(&json!({"review": {"default_reviewers": ["beta"]}}));
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(
        selection_line(&out),
        "review: selection source=all_flag reviewers=alpha,beta"
    );
    assert!(lab.started("alpha") && lab.started("beta"));
}

#[test]
fn default_reviewers_pick_listed_lanes_and_report_the_undetected() {
    let lab = Lab::new();
    for slug in ["alpha", "beta"] {
        lab.lane(slug, |_| {});
    }
    lab.config(&json!({"review": {"default_reviewers": ["Beta", "claude", "nosuch"]}}));
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(
        selection_line(&out),
        "review: selection source=config_default reviewers=beta"
    );
    assert!(out.stderr.contains(
        "warning: configured default reviewer claude is skipped: not available on this host ("
    ));
    assert!(out
        .stderr
        .contains("warning: unknown reviewer slug in review.default_reviewers: nosuch\n"));
    assert!(!lab.started("alpha"));
    assert!(lab.started("beta"));
}

#[test]
fn no_flags_no_config_runs_every_detected_lane() {
    let lab = Lab::new();
    for slug in ["alpha", "beta"] {
        lab.lane(slug, |_| {});
    }
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(
        selection_line(&out),
        "review: selection source=no_config_all_detected reviewers=alpha,beta"
    );
}

#[test]
fn default_reviewers_errors_fail_before_anything_runs() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.config(&json!({"review": {"default_reviewers": []}}));
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(1);
    assert!(out
        .stderr
        .contains("error: review.default_reviewers cannot be empty\n"));
    lab.config(&json!({"review": {"default_reviewers": ["ghost"],
        "reviewer_instances": {"alpha-x": {"cli": "alpha"}}}}));
    let out = lab.review(&["--phase", "3"]);
    out.assert_status(2);
    assert!(out.stderr.contains("error: reviewer instance 'ghost' referenced in review.default_reviewers is not defined in review.reviewer_instances\n"));
    lab.config(&json!({"review": {"default_reviewers": ["claude"]}}));
    let out = lab.review(&["--phase", "3"]);
    out.assert_status(2);
    assert!(out
        .stderr
        .contains("error: all configured default reviewers are unavailable on this host\n"));
    assert!(!lab.started("alpha"));
    assert!(!lab.reviews_path().exists());
}

#[test]
fn self_skip_removes_the_driving_agent() {
    let lab = Lab::new();
    for slug in ["alpha", "beta"] {
        lab.lane(slug, |_| {});
    }
    let out = lab.review(&["--phase", "3", "--alpha", "--beta", "--self", "alpha"]);
    out.assert_no_panic().assert_status(0);
    assert!(out
        .stderr
        .contains("warning: skipping explicitly named reviewer 'alpha'"));
    assert!(!lab.started("alpha"));
    assert!(lab.started("beta"));
    let out = lab.review(&["--phase", "3", "--alpha", "--self", "alpha"]);
    out.assert_status(2);
    assert!(out.stderr.contains(
        "error: at least one reviewer different from the driving agent (alpha) is required"
    ));
}

#[test]
fn explicit_missing_lane_stops_before_any_lane_starts() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("broken", |lane| {
        lane["reviewer"]["probe"]["binary"] = json!("fake-not-installed");
    });
    let out = lab.review(&["--phase", "3", "--qwen", "--alpha", "--broken"]);
    out.assert_no_panic().assert_status(2);
    assert!(out.stderr.contains(
        "error: explicit reviewer 'broken' is not available on this host (missing_binary: fake-not-installed is not on PATH)\n"
    ));
    assert!(out.stderr.contains(
        "error: explicit reviewer 'qwen' is not available on this host (missing_binary: qwen is not on PATH)\n"
    ));
    assert!(
        !lab.started("alpha"),
        "no lane may start when an explicit lane is missing"
    );
    assert!(!lab.reviews_path().exists());
    assert!(
        out.stdout.is_empty(),
        "nothing printed as progress: {}",
        out.stdout
    );
}

#[test]
fn unknown_flag_is_a_usage_error_with_a_suggestion() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let out = lab.review(&["--phase", "3", "--alpah"]);
    out.assert_no_panic().assert_status(1);
    // Clap's error and suggestion (lane flags are part of the clap model).
    assert!(
        out.stderr.contains("unexpected argument '--alpah'")
            && out.stderr.contains("a similar argument exists: '--alpha'"),
        "{}",
        out.stderr
    );
    let out = lab.review(&["--phase", "Phase 3"]);
    out.assert_status(1);
    assert!(out.stderr.contains("invalid phase 'Phase 3'"));
    let out = lab.review(&["--phase", "9", "--alpha"]);
    out.assert_status(1);
    assert!(out.stderr.contains(
        "phase 9 not found in .planning/phases/, .planning/milestones/v*-phases/ or ROADMAP.md"
    ));
    let out = lab.review(&["--phase", "4", "--alpha"]);
    out.assert_status(1);
    assert!(out
        .stderr
        .contains("phase 4 (Reports) has no directory under .planning/phases/; plan it first"));
    assert!(!lab.started("alpha"));
}

// ---------------------------------------------------------------------------------------------
// Run dir and prompt (§7)
// ---------------------------------------------------------------------------------------------

#[test]
fn stub_only_run_keeps_a_private_run_dir_with_the_section_files() {
    use std::os::unix::fs::PermissionsExt;
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.behave("alpha", "stub");
    let out = lab.review(&["--phase", "03", "--alpha"]);
    out.assert_no_panic().assert_status(2);
    assert!(out
        .stdout
        .contains("◆ Reviewing with Alpha... failed ✗ (diagnostic stub written)\n"));
    // No lane result: no REVIEWS.md (decisions.md row 20); the run dir is kept all the same.
    assert!(!lab.reviews_path().exists());
    assert!(
        out.stdout.contains(" GSD ► REVIEW FAILED\n"),
        "{}",
        out.stdout
    );
    let run_dir = run_dir_of(&out);
    // The lane's stub, kept in the run dir, ends with the Diagnosis line (upstream #4275 §7.4).
    let stub = std::fs::read_to_string(run_dir.join("gsd-review-alpha.md")).expect("the stub");
    assert!(
        stub.contains("alpha review failed or returned empty output. stderr:\nfake-alpha: no output today\n\nDiagnosis: alpha ran with no effort argument, so the reviewer CLI's own configuration applied and exited cleanly inside the timeout \u{2014} a clean exit that produced no output is most often a model ending its turn without writing a final message rather than a crash; if this lane carries a reasoning effort, raising it is the usual fix."),
        "{stub}"
    );
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(&run_dir), 0o700);
    assert!(run_dir
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("gsd-review-")));
    let mut names: Vec<String> = std::fs::read_dir(&run_dir)
        .expect("ls")
        .flatten()
        .filter(|e| e.file_name() != ".plans-manifest.md")
        .map(|e| {
            assert_eq!(mode(&e.path()), 0o600, "{}", e.path().display());
            e.file_name().to_string_lossy().into_owned()
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "gsd-review-alpha.err",
            "gsd-review-alpha.md",
            "gsd-review-context.md",
            "gsd-review-instructions.md",
            "gsd-review-journal.jsonl",
            "gsd-review-lane-results.jsonl",
            "gsd-review-lanes.json",
            "gsd-review-plan-03-01.md",
            "gsd-review-plan-03-02.md",
            "gsd-review-project.md",
            "gsd-review-prompt.md",
            "gsd-review-requirements.md",
            "gsd-review-research.md",
            "gsd-review-roadmap.md",
            "run.json",
            "run.lock",
        ]
    );
    let results =
        std::fs::read_to_string(run_dir.join("gsd-review-lane-results.jsonl")).expect("results");
    assert_eq!(
        results,
        "{\"slug\":\"alpha\",\"ok\":true,\"stubbed\":true,\"identity\":\"alpha\",\
         \"model\":{\"value\":null,\"source\":\"unknown\"}}\n"
    );
    let prompt = std::fs::read_to_string(run_dir.join("gsd-review-prompt.md")).expect("prompt");
    assert_eq!(lab.prompts("alpha"), vec![prompt.clone()]);
    assert!(prompt.starts_with("# Cross-AI Plan Review Request\n\n"));
    assert!(
        prompt.contains("\n\n## Phase 03: Billing\n### Roadmap Section\n### Phase 3: Billing\n")
    );
    assert!(prompt.contains(
        "### Plans to Review\n#### .planning/phases/03-billing/03-01-PLAN.md\n\n# Plan 03-01"
    ));
    assert!(prompt.contains("\n\n#### .planning/phases/03-billing/03-02-PLAN.md\n\n"));
    assert!(prompt.contains("### User Decisions (CONTEXT.md)\nDecision:"));
    assert!(prompt.contains("### Research Findings\nResearch:"));
    assert!(prompt.contains("### Requirements Addressed\n# Requirements"));
}

// ---------------------------------------------------------------------------------------------
// Budgets (§8)
// ---------------------------------------------------------------------------------------------

#[test]
fn budget_too_small_is_visible_and_the_lane_never_starts() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.budget_lane("tiny");
    lab.config(&json!({"review": {"max_prompt_tokens_per_reviewer": {"tiny": 50}}}));
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(0);
    assert!(out
        .stdout
        .contains("◆ Reviewing with Tiny... skipped (budget_too_small)\n"));
    assert!(!lab.started("tiny"));
    let reviews = lab.reviews();
    assert!(reviews.contains("reviewers: [alpha]\n"));
    assert!(reviews.contains("trimmed_reviewers:\n  tiny:\n    budget: 50\n    effective_budget: 45\n    estimated_tokens: 0\n    omitted: []\n    project_md_shrunk: false\n    plan_truncation_pct: 0\n    hard_failed: true\n    note_injected: false\n"));
    assert!(reviews.contains("## Tiny Review\n\ntiny review skipped: prompt budget (50 tokens) too small for the minimum review set.\n\n---\n"));

    // Explicitly named, the same lane fails the review before REVIEWS.md is written.
    std::fs::remove_file(lab.reviews_path()).expect("rm");
    let out = lab.review(&["--phase", "3", "--tiny", "--alpha", "--jobs", "1"]);
    out.assert_status(2);
    assert!(out
        .stderr
        .contains("error: explicit reviewer 'tiny' could not run (budget_too_small"));
    assert!(!lab.reviews_path().exists());
}

#[test]
fn a_named_lane_that_fails_leaves_the_named_lanes_after_it_unstarted() {
    // One lane at a time, in descriptor order: `early` fails its budget, so `zed` (named too)
    // must never start; the failure is said by the lane's own thread before its slot is free,
    // not only when the coordinator reads it.
    let lab = Lab::new();
    lab.budget_lane("early");
    lab.lane("zed", |_| {});
    lab.config(&json!({"review": {"max_prompt_tokens_per_reviewer": {"early": 50}}}));
    for _ in 0..3 {
        let out = lab.review(&["--phase", "3", "--early", "--zed", "--jobs", "1"]);
        out.assert_status(2);
        assert!(out
            .stderr
            .contains("error: explicit reviewer 'early' could not run (budget_too_small"));
        assert!(!lab.started("zed"), "{}", out.stderr);
    }
}

#[test]
fn budget_trims_in_the_specified_order_and_the_global_fallback_works() {
    let lab = Lab::new();
    lab.budget_lane("tiny");
    let research = lab
        .env
        .project
        .join(".planning/phases/03-billing/03-RESEARCH.md");
    std::fs::write(&research, "r".repeat(4000)).expect("research");
    lab.config(
        &json!({"review": {"max_prompt_tokens_per_reviewer": {"tiny": -1},
        "max_prompt_tokens": 900}}),
    );
    let out = lab.review(&["--phase", "3", "--tiny"]);
    out.assert_no_panic().assert_status(0);
    let prompts = lab.prompts("tiny");
    assert_eq!(prompts.len(), 1);
    let prompt = &prompts[0];
    assert!(prompt.contains("<note>\nPrompt automatically trimmed to fit a 900-token budget.\nOmitted sections: context, research.\nPlan content truncated by approximately 0%.\nTreat any missing context as out-of-scope rather than a review concern.\n</note>\n\n## Roadmap\n\n### Phase 3: Billing"), "{prompt}");
    assert!(prompt.contains("\n\n## Plans\n\n### 03-01-PLAN.md\n\n# Plan 03-01"));
    assert!(prompt.contains("\n\n## Requirements\n\n# Requirements"));
    assert!(!prompt.contains("rrrr"));
    assert!(!prompt.contains("## Context"));
    let reviews = lab.reviews();
    assert!(reviews.contains("  tiny:\n    budget: 900\n    effective_budget: 810\n"));
    assert!(reviews.contains("    omitted: [context, research]\n"));
    assert!(reviews.contains("    hard_failed: false\n    note_injected: true\n"));

    // A per-lane 0 means "do not trim": no fallback to the global value.
    lab.config(
        &json!({"review": {"max_prompt_tokens_per_reviewer": {"tiny": 0},
        "max_prompt_tokens": 10}}),
    );
    let out = lab.review(&["--phase", "3", "--tiny"]);
    out.assert_status(0);
    let untrimmed = lab.prompts("tiny");
    assert!(untrimmed
        .iter()
        .any(|p| p.starts_with("# Cross-AI Plan Review Request") && p.contains("rrrr")));
    assert!(!lab.reviews().contains("trimmed_reviewers"));
}

/// The plan a review records for a lane (`gsd-review-lanes.json`, `run.json`, what a resume
/// checks against) is the plan that lane ran: a trimmed lane reads its trimmed prompt, and the
/// record names that file, not the untrimmed prompt beside it.
#[test]
fn the_recorded_plan_is_the_plan_the_lane_ran() {
    let lab = Lab::new();
    lab.budget_lane("tiny");
    lab.lane("beta", |_| {});
    lab.behave("beta", "stub");
    let research = lab
        .env
        .project
        .join(".planning/phases/03-billing/03-RESEARCH.md");
    std::fs::write(&research, "r".repeat(4000)).expect("research");
    lab.config(&json!({"review": {"max_prompt_tokens": 900}}));
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    let dir = run_dir_of(&out);
    let seen = lab.prompts("tiny");
    assert_eq!(seen.len(), 1, "tiny ran once");
    assert!(!seen[0].contains("rrrr"), "tiny read its trimmed prompt");

    let lanes = util::read_json(&dir.join("gsd-review-lanes.json"));
    let run = util::read_json(&dir.join("run.json"));
    let recorded = lanes
        .as_array()
        .expect("lane entries")
        .iter()
        .find(|entry| entry["slug"] == "tiny")
        .expect("tiny's entry")
        .clone();
    let in_record = run["identities"]
        .as_array()
        .expect("identities")
        .iter()
        .find(|identity| identity["id"] == "tiny")
        .expect("tiny's identity")["plan"]
        .clone();
    assert_eq!(
        recorded, in_record,
        "the lane file and the run record agree"
    );
    let stdin = recorded["plan"]["stdin"].as_str().expect("recorded stdin");
    assert_eq!(recorded["promptPath"], stdin);
    let named = std::fs::read_to_string(stdin).expect("the recorded prompt file");
    assert!(
        named == seen[0],
        "the recorded plan names {stdin}, which is not the prompt the lane read"
    );
}

#[test]
fn prompt_file_form_reports_a_budget_below_the_estimate() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.budget_lane("tiny");
    lab.config(&json!({"review": {"max_prompt_tokens_per_reviewer": {"tiny": 20}}}));
    let doc = lab.env.project.join("design.md");
    std::fs::write(&doc, format!("# Design\n\n{}\n", "word ".repeat(100))).expect("doc");
    let out = lab.review(&["--prompt-file", "design.md", "--out", "out/REVIEWS.md"]);
    out.assert_no_panic().assert_status(1);
    assert!(out.stderr.contains("does not exist"), "{}", out.stderr);
    assert!(!lab.started("alpha"), "checked before any lane runs");
    std::fs::create_dir_all(lab.env.project.join("out")).expect("out");
    let out = lab.review(&["--prompt-file", "design.md", "--out", "out/REVIEWS.md"]);
    out.assert_no_panic().assert_status(0);
    let reviews = std::fs::read_to_string(lab.env.project.join("out/REVIEWS.md")).expect("out");
    assert!(reviews.starts_with("---\nphase: design.md\nreviewers: [alpha]\n"));
    assert!(reviews.contains("plans_reviewed: [design.md]\nmodels:\n  alpha: \"unknown\"\nmodel_sources:\n  alpha: \"unknown\"\ntrimmed_reviewers:\n  tiny:\n    budget: 20\n    effective_budget: 18\n    estimated_tokens: 128\n"));
    assert!(reviews.contains("## Tiny Review\n\ntiny review skipped: prompt budget (20 tokens) too small for the minimum review set.\n"));
    assert!(!lab.started("tiny"));
    assert_eq!(
        lab.prompts("alpha"),
        vec![std::fs::read_to_string(&doc).expect("doc")]
    );
}

// ---------------------------------------------------------------------------------------------
// Concurrency (§9)
// ---------------------------------------------------------------------------------------------

#[test]
fn four_lanes_run_concurrently() {
    let lab = Lab::new();
    let slugs = ["alpha", "beta", "gamma", "delta"];
    for slug in slugs {
        lab.lane(slug, |_| {});
        lab.behave(slug, "sleep 2");
    }
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    let runs: Vec<(u128, u128)> = slugs
        .iter()
        .map(|s| {
            let i = lab.intervals(s);
            assert_eq!(i.len(), 1, "{s} ran once");
            i[0]
        })
        .collect();
    let last_start = runs.iter().map(|r| r.0).max().expect("starts");
    let first_end = runs.iter().map(|r| r.1).min().expect("ends");
    assert!(
        last_start < first_end,
        "every lane started before any finished: {runs:?}"
    );
    // Progress and results stay in run order.
    // Run order = descriptor order: global overlays are accepted in folder-name order.
    let order: Vec<usize> = ["Alpha", "Beta", "Delta", "Gamma"]
        .iter()
        .map(|d| {
            out.stdout
                .find(&format!("◆ Reviewing with {d}... done ✓"))
                .expect("line")
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{}", out.stdout);
}

#[test]
fn jobs_one_is_sequential_in_run_order() {
    let lab = Lab::new();
    for slug in ["alpha", "beta"] {
        lab.lane(slug, |_| {});
        lab.behave(slug, "sleep 0.3");
    }
    let out = lab.review(&["--phase", "3", "--all", "--jobs", "1"]);
    out.assert_no_panic().assert_status(0);
    let alpha = lab.intervals("alpha")[0];
    let beta = lab.intervals("beta")[0];
    assert!(
        alpha.1 <= beta.0,
        "alpha {alpha:?} ends before beta {beta:?} starts"
    );
}

#[test]
fn instances_of_one_lane_never_overlap() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("alpha", "sleep 0.5");
    lab.behave("beta", "sleep 0.5");
    lab.config(&json!({"review": {
        "default_reviewers": ["alpha-y", "beta", "alpha-x", "alpha"],
        "reviewer_instances": {"alpha-x": {"cli": "alpha", "model": "m-x"},
                               "alpha-y": {"cli": "alpha", "model": "m-y"}}}}));
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(
        selection_line(&out),
        "review: selection source=config_default reviewers=alpha,alpha-y,alpha-x,beta"
    );
    let runs = lab.intervals("alpha");
    assert_eq!(runs.len(), 3);
    for pair in runs.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "alpha runs overlap: {runs:?}");
    }
    let beta = lab.intervals("beta")[0];
    assert!(
        beta.0 < runs[0].1,
        "beta runs alongside alpha: {beta:?} {runs:?}"
    );
    let reviews = lab.reviews();
    assert!(reviews.contains("> Note: alpha-y and alpha-x share the alpha adapter; their consensus is cross-model, not cross-tool.\n"));
}

#[test]
fn a_hung_lane_does_not_hold_up_or_spoil_the_others() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("slow", |lane| {
        lane["reviewer"]["timeoutFloorMs"] = json!(1500);
    });
    lab.behave("slow", "sleep 30");
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    assert!(reviews.contains(&stamped_section("## Alpha Review", "### fake-alpha review")));
    assert!(reviews.contains("## Slow Review\n\nslow review failed or returned empty output. stderr:\n\n[spawn error: ETIMEDOUT]\n"), "{reviews}");
    assert!(
        reviews.contains("\n> [gsd-lane] timed out after 1.5 s (reviewer.timeoutFloorMs in "),
        "{reviews}"
    );
}

// ---------------------------------------------------------------------------------------------
// REVIEWS.md (§11)
// ---------------------------------------------------------------------------------------------

fn mixed_lab() -> Lab {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.lane("gamma", |lane| {
        lane["reviewer"]["evidenceClass"] = json!("diff-only");
        lane["reviewer"]["invoke"]["promptChannel"] = json!("none");
    });
    lab.lane("delta", |_| {});
    lab.budget_lane("tiny");
    lab.behave("beta", "stub");
    lab.behave("gamma", "diff");
    lab.behave("delta", "blind");
    lab.config(&json!({"review": {
        "default_reviewers": ["alpha", "beta", "gamma", "delta", "tiny", "alpha-x", "alpha-y", "claude"],
        "reviewer_instances": {"alpha-x": {"cli": "alpha", "model": "m-x"},
                               "alpha-y": {"cli": "alpha", "model": "m-y"}},
        "max_prompt_tokens_per_reviewer": {"tiny": 50}}}));
    lab
}

#[test]
fn reviews_md_golden_for_a_mixed_run_whatever_the_jobs() {
    let lab = mixed_lab();
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(0);
    let concurrent = normalize(&lab.reviews());
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../fixtures/review/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("mixed_reviews_md", concurrent));
    assert!(
        out.stdout.contains("Phase 3 reviewed by 5 reviewers.\n"),
        "{}",
        out.stdout
    );

    let out = lab.review(&["--phase", "3", "--jobs", "1"]);
    out.assert_status(0);
    assert_eq!(
        normalize(&lab.reviews()),
        concurrent,
        "REVIEWS.md depends on --jobs"
    );
}

#[test]
fn json_progress_is_one_object_per_event() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "stub");
    let out = lab.review(&["--phase", "3", "--all", "--json"]);
    out.assert_no_panic().assert_status(0);
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        kinds,
        [
            "review",
            "lane_start",
            "lane_end",
            "lane_start",
            "lane_end",
            "verdict",
            "complete"
        ]
    );
    assert_eq!(events[2]["outcome"], "review");
    assert_eq!(events[4]["outcome"], "stub");
    assert_eq!(events[5]["quorum"]["met"], false);
    assert_eq!(events[6]["count"], 1);
}

// ---------------------------------------------------------------------------------------------
// Interruption
// ---------------------------------------------------------------------------------------------

/// Whether a review run under `tmp` has journaled a finished attempt of `slug`.
pub(crate) fn journaled(tmp: &Path, slug: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return false;
    };
    entries.flatten().any(|entry| {
        std::fs::read_to_string(entry.path().join("gsd-review-journal.jsonl"))
            .is_ok_and(|text| text.contains(&format!("\"{slug}\"")))
    })
}

#[test]
fn sigint_kills_every_lane_and_still_writes_reviews_md() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.lane("gamma", |_| {});
    lab.behave("beta", "sleep 30");
    lab.behave("gamma", "sleep 30");
    let child = lab
        .command(&["--phase", "3", "--all"])
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(20);
    let children = loop {
        let kids: Vec<Mark> = ["beta", "gamma"]
            .iter()
            .flat_map(|s| lab.marks(s))
            .filter(|m| m.kind == "child")
            .collect();
        // Alpha counts as finished once gsd-lane journaled it, not when its script ended.
        if kids.len() == 2 && journaled(&lab.tmp, "alpha") {
            break kids;
        }
        assert!(Instant::now() < deadline, "lanes did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    let status = Command::new("/bin/kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let out = finish(child, "interrupted review");
    out.assert_no_panic().assert_status(130);
    // One progress line per reviewer, none printed twice after Ctrl-C.
    for name in ["Alpha", "Beta", "Gamma"] {
        let prefix = format!("◆ Reviewing with {name}... ");
        let count = out.stdout.matches(&prefix).count();
        assert_eq!(
            count, 1,
            "{name} line printed {count} times:\n{}",
            out.stdout
        );
    }
    assert_eq!(children.len(), 2, "both sleeping lanes started a child");
    let left = util::processes_left_with_home(&lab.env.home, Duration::from_secs(5));
    assert!(
        left.is_empty(),
        "lane processes survived the interrupt: {left:?}"
    );
    let reviews = lab.reviews();
    assert!(reviews.contains("reviewers: [alpha]\n"));
    assert!(reviews.contains(&stamped_section("## Alpha Review", "### fake-alpha review")));
    assert!(reviews.contains("## Beta Review\n\nbeta review not completed: the review run was interrupted (SIGINT/SIGTERM) before this reviewer finished.\n"));
    assert!(reviews.contains("- Gamma — not completed (review run interrupted)\n"));
    assert!(reviews.ends_with("<!-- where reviewers disagreed — worth investigating -->\n"));
    assert!(run_dir_of(&out).is_dir(), "the run dir is kept");
}

#[test]
fn a_real_lane_whose_cli_prints_nothing_is_kept_as_a_stub() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let qwen = lab.bin.join("qwen");
    std::fs::write(&qwen, "#!/bin/sh\ncat >/dev/null\n").expect("fake qwen");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&qwen, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let out = lab.review(&["--phase", "3", "--qwen", "--alpha"]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    assert!(reviews.contains("reviewers: [qwen, alpha]\n"));
    assert!(reviews.contains(
        "## Qwen Review\n\nqwen review failed or returned empty output. stderr:\n\nDiagnosis: qwen ran with no effort argument, so the reviewer CLI's own configuration applied and exited cleanly inside the timeout \u{2014} a clean exit that produced no output is most often a model ending its turn without writing a final message rather than a crash; if this lane carries a reasoning effort, raising it is the usual fix.\n\n---\n"
    ));
    assert!(reviews.contains("- Qwen — failed (diagnostic stub, no review)\n"));
    // Alone, the stubbed lane is no lane result: no REVIEWS.md is written, the earlier one
    // stays, and the review exits 2 (decisions.md row 20).
    let before = lab.reviews();
    let out = lab.review(&["--phase", "3", "--qwen"]);
    out.assert_status(2);
    assert_eq!(lab.reviews(), before);
    assert!(!lab
        .reviews_path()
        .with_file_name("03-REVIEWS.failed.md")
        .exists());
}

/// The README's main command, minus the release build: the example lane reviews the sample
/// project (`examples/`), so `bash examples/demo.sh` keeps working.
#[test]
fn example_lane_reviews_the_sample_project() {
    let env = TestEnv::new();
    let examples = util::workspace_root().join("examples");
    copy_dir(&examples.join("sample-project"), &env.project);
    std::fs::create_dir_all(env.project.join(".git")).expect("git marker");
    // The lane ships its program (`./bin/gsd-plan-stats`): a copy of its folder is the whole
    // install, and PATH does not hold the program.
    copy_dir(
        &examples.join("lanes/plan-stats"),
        &env.gsd_home.join(".gsd/capabilities/plan-stats"),
    );
    let child = Command::new(util::bin())
        .env_clear()
        .env("HOME", &env.home)
        .env("GSD_HOME", &env.gsd_home)
        .env("TMPDIR", env.root.path())
        .env("PATH", "/usr/bin:/bin")
        .current_dir(&env.project)
        .args(["review", "--phase", "3", "--plan-stats"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let out = finish(child, "example review");
    out.assert_no_panic().assert_status(0);
    let reviews = std::fs::read_to_string(
        env.project
            .join(".planning/phases/03-invoices/03-REVIEWS.md"),
    )
    .expect("REVIEWS.md");
    assert!(reviews.contains("reviewers: [plan-stats]\n"));
    assert!(reviews.contains(&stamped_section(
        "## Plan Stats Review",
        "**Plan statistics (example lane: a shell script, not an AI reviewer).**"
    )));
    assert!(
        reviews.contains("| `03-01` | 16 | 66 | 4 | 5 |\n"),
        "{reviews}"
    );
    assert!(reviews.contains("Reviewed: Phase 3: Invoices\n"));
    // The example names every plan id, so its review covers the plans (upstream #4084).
    assert!(!reviews.contains("plan_coverage"), "{reviews}");
}

// ---------------------------------------------------------------------------------------------
// REVIEWS.md hygiene (issue 10 point 4)
// ---------------------------------------------------------------------------------------------

/// The characters that may steer a terminal or reorder text: C0 other than `\n`/`\t`, DEL, C1,
/// and the bidi embeddings, overrides and isolates.
fn unsafe_chars(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| {
            (c.is_control() && *c != '\n' && *c != '\t')
                || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

#[test]
fn control_sequences_never_reach_reviews_md_and_headings_nest_under_the_reviewer() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("alpha", "hostile");
    lab.behave("beta", "hostile-stub");
    let out = lab.review(&["--phase", "3", "--alpha", "--beta"]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    assert_eq!(unsafe_chars(&reviews), Vec::<char>::new(), "{reviews:?}");
    assert_eq!(
        unsafe_chars(&out.stdout),
        Vec::<char>::new(),
        "{:?}",
        out.stdout
    );
    assert!(
        reviews.contains(&stamped_section(
            "## Alpha Review",
            "### Review by fake-alpha\n\nIntro red link ok\n\n#### Findings\n\n\
             ```md\n# kept in code\n```\n\nbell c1 del end\n\n---\n"
        )),
        "{reviews}"
    );
    assert!(
        reviews.contains(
            "## Beta Review\n\nbeta review failed or returned empty output. stderr:\n\
             fatal txt.exe\n\nDiagnosis: beta ran with no effort argument, so the reviewer CLI's own configuration applied and exited cleanly inside the timeout \u{2014} a clean exit that produced no output is most often a model ending its turn without writing a final message rather than a crash; if this lane carries a reasoning effort, raising it is the usual fix.\n\n---\n"
        ),
        "{reviews}"
    );
    assert!(out.stdout.contains("Phase 3 reviewed by 1 reviewer.\n"));
}

#[test]
fn a_stub_keeps_the_raw_bytes_in_the_run_dir_only() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "hostile-stub");
    let out = lab.review(&["--phase", "3", "--beta", "--alpha"]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    assert_eq!(unsafe_chars(&reviews), Vec::<char>::new(), "{reviews:?}");
    assert_eq!(
        unsafe_chars(&out.stdout),
        Vec::<char>::new(),
        "{:?}",
        out.stdout
    );
    let raw = std::fs::read(run_dir_of(&out).join("gsd-review-beta.err")).expect("sidecar");
    assert_eq!(
        raw, b"\x1b]0;pwned\x07\x1b[31mfatal\x1b[0m \xe2\x80\xaetxt.exe\n",
        "the run dir keeps what the lane wrote"
    );
    assert!(out.stdout.contains("Phase 3 reviewed by 1 reviewer.\n"));

    // Alone, the stub is no lane result: the saved diagnostics keep the raw bytes, and nothing
    // the lane wrote reaches the terminal unfiltered.
    let out = lab.review(&["--phase", "3", "--beta"]);
    out.assert_no_panic().assert_status(2);
    for stream in [&out.stdout, &out.stderr] {
        assert_eq!(unsafe_chars(stream), Vec::<char>::new(), "{stream:?}");
    }
    let saved = saved_diagnostics(&lab);
    assert_eq!(saved.len(), 1);
    assert_eq!(
        std::fs::read(saved[0].join("gsd-review-beta.err")).expect("saved"),
        raw
    );
}

/// The saved diagnostics directories of the lab's phase, oldest first.
pub(crate) fn saved_diagnostics(lab: &Lab) -> Vec<PathBuf> {
    let root = lab
        .env
        .project
        .join(".planning/phases/03-billing/.review-diagnostics");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs
}

#[test]
fn review_prompt_file_missing_and_directory_are_told_apart() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let out_file = lab.env.root.path().join("OUT.md").display().to_string();
    let out = lab.review(&["--prompt-file", "no-such.md", "--out", &out_file, "--alpha"]);
    out.assert_status(1);
    assert!(
        out.stderr.contains("no-such.md does not exist"),
        "{}",
        out.stderr
    );
    let out = lab.review(&["--prompt-file", ".planning", "--out", &out_file, "--alpha"]);
    out.assert_status(1);
    assert!(
        out.stderr.contains("is a directory, not a file"),
        "{}",
        out.stderr
    );
    assert!(!lab.started("alpha"));
}

// ---------------------------------------------------------------------------------------------
// REVIEWS.md never lost (decisions.md #14), the banner, the undetected summary
// ---------------------------------------------------------------------------------------------

#[test]
fn a_rerun_without_a_real_review_never_replaces_a_good_reviews_md() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.review(&["--phase", "3", "--alpha"]).assert_status(0);
    let good = lab.reviews();
    assert!(good.contains("The plans look sound."), "{good}");

    lab.behave("alpha", "stub");
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic().assert_status(2);
    assert_eq!(lab.reviews(), good, "the good REVIEWS.md was replaced");
    let failed = lab
        .env
        .project
        .join(".planning/phases/03-billing/03-REVIEWS.failed.md");
    assert!(!failed.exists(), "a run with no lane result writes nothing");
    assert!(out.stdout.contains("REVIEW FAILED"), "{}", out.stdout);
    assert!(!out.stdout.contains("REVIEW COMPLETE"), "{}", out.stdout);
    assert!(
        out.stderr.contains("03-REVIEWS.md was not written"),
        "{}",
        out.stderr
    );
}

#[test]
fn banner_says_partial_when_some_reviewers_failed() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "stub");
    let out = lab.review(&["--phase", "3", "--alpha", "--beta"]);
    out.assert_no_panic().assert_status(0);
    assert!(
        out.stdout.contains("GSD ► REVIEW PARTIAL"),
        "{}",
        out.stdout
    );
    lab.behave("beta", "review");
    let out = lab.review(&["--phase", "3", "--alpha", "--beta"]);
    assert!(
        out.stdout.contains("GSD ► REVIEW COMPLETE"),
        "{}",
        out.stdout
    );
}

#[test]
fn undetected_lanes_are_one_summary_line_and_listed_with_verbose() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(0);
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("not detected"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].starts_with(&format!(
            "info: {} lanes not detected on this host",
            util::first_party().len()
        )),
        "{}",
        lines[0]
    );
    let out = lab.gsd(&["-v", "review", "--phase", "3"]);
    out.assert_status(0);
    let listed = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("info: reviewer ") && l.contains(" not detected ("))
        .count();
    assert_eq!(listed, util::first_party().len(), "{}", out.stderr);
    let out = lab.gsd(&["-q", "review", "--phase", "3"]);
    out.assert_status(0);
    assert!(!out.stderr.contains("not detected"), "{}", out.stderr);
    assert!(!out.stderr.contains("info:"), "{}", out.stderr);
    lab.config(&json!({"review": {"default_reviewers": ["alpha", "claude"]}}));
    let out = lab.review(&["--phase", "3", "--quiet"]);
    out.assert_status(0);
    assert!(
        !out.stderr.contains("info:"),
        "-q after the command: {}",
        out.stderr
    );
    let out = lab.review(&["--phase", "3"]);
    assert!(
        out.stderr
            .contains("warning: configured default reviewer claude is skipped"),
        "{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// The review command line is clap's (lane flags added from the registry), inactive lanes explained
// ---------------------------------------------------------------------------------------------

#[test]
fn review_help_is_clap_help_with_every_lane_flag() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let help = lab.review(&["--help"]);
    help.assert_status(0);
    let other = lab.gsd(&["help", "review"]);
    other.assert_status(0);
    assert_eq!(
        help.stdout, other.stdout,
        "review --help differs from help review"
    );
    for flag in [
        "--phase <N>",
        "--alpha",
        "--claude",
        "--antigravity",
        "--agy",
        "Lane flags:",
    ] {
        assert!(
            help.stdout.contains(flag),
            "{flag} missing:\n{}",
            help.stdout
        );
    }
    assert!(
        !help.stdout.contains("--compat-version"),
        "hidden option shown"
    );
}

#[test]
fn global_options_work_after_review() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let elsewhere = lab.env.root.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let project = lab.env.project.display().to_string();
    let out = {
        let child = lab
            .gsd_command(&[
                "review",
                "--phase",
                "3",
                "--alpha",
                "--project",
                &project,
                "-q",
            ])
            .current_dir(&elsewhere)
            .spawn()
            .expect("spawn");
        finish(child, "review --project after")
    };
    out.assert_no_panic().assert_status(0);
    assert!(lab.reviews().contains("The plans look sound."));
    let missing = lab
        .env
        .root
        .path()
        .join("no-such-dir")
        .display()
        .to_string();
    let out = lab.review(&["--phase", "3", "--alpha", "--project", &missing]);
    out.assert_status(1);
    assert!(out.stderr.contains("no such directory"), "{}", out.stderr);
    let out = lab.gsd(&["list", "--project", &missing]);
    out.assert_status(2);
    assert!(out.stderr.contains("no such directory"), "{}", out.stderr);
}

/// Installs a copy of the fake lane `slug` that will not load for the reason `edit` gives it.
fn inactive_case(lab: &Lab, slug: &str, scope: Scope, edit: impl FnOnce(&mut Value)) -> PathBuf {
    lab.lane(slug, |_| {});
    let id = format!("fake-{slug}");
    let global = lab.env.capabilities_dir(Scope::Global).join(&id);
    let mut lane = util::read_json(&global.join("capability.json"));
    edit(&mut lane);
    if scope == Scope::Project {
        std::fs::remove_dir_all(&global).expect("remove global copy");
    }
    lab.env.write_overlay(scope, &id, &lane)
}

#[test]
fn a_flag_of_an_inactive_lane_says_why_where_and_how_to_fix() {
    type Case = (
        &'static str,
        Scope,
        fn(&mut Value),
        &'static str,
        &'static str,
    );
    let cases: [Case; 4] = [
        (
            "engine",
            Scope::Global,
            |l| l["engines"] = json!({"gsd": ">=99.0.0"}),
            "engines.gsd",
            "fix: edit engines.gsd",
        ),
        (
            "pending",
            Scope::Project,
            |_| {},
            "no consent recorded",
            "fix: gsd-lane trust approve fake-pending",
        ),
        (
            "clash",
            Scope::Global,
            |l| {
                l["reviewer"]["modelConfigKey"] = json!("review.models.claude");
                l["config"] = json!({"review.models.claude":
                    {"type": "string", "default": "", "description": "Model."}});
            },
            "rejected by cross-capability checks",
            "fix: give fake-clash its own id, slug, flags and config keys",
        ),
        (
            "broken",
            Scope::Global,
            |l| l["reviewer"]["emptyOutput"] = json!("whatever"),
            "rejected by validation",
            "gsd-lane validate ",
        ),
    ];
    for (slug, scope, edit, reason, fix) in cases {
        let lab = Lab::new();
        let path = inactive_case(&lab, slug, scope, edit);
        let flag = format!("--{slug}");
        let out = lab.review(&["--phase", "3", &flag]);
        out.assert_no_panic().assert_status(2);
        let stderr = &out.stderr;
        assert!(!stderr.contains("unexpected argument"), "{slug}: {stderr}");
        assert!(!stderr.contains("unknown option"), "{slug}: {stderr}");
        assert!(stderr.contains("is not active"), "{slug}: {stderr}");
        assert!(stderr.contains(reason), "{slug}: {stderr}");
        assert!(
            stderr.contains(&path.display().to_string()),
            "{slug}: {stderr}"
        );
        assert!(stderr.contains(fix), "{slug}: {stderr}");
        assert!(!lab.started(slug), "{slug}: the lane started");
        assert!(!lab.reviews_path().exists());
        // The hidden flag of an inactive lane is not offered in help.
        let help = lab.review(&["--help"]);
        assert!(!help.stdout.contains(&flag), "{slug}: {}", help.stdout);

        // Named in review.default_reviewers: the same reason instead of "unknown slug".
        lab.lane("alpha", |_| {});
        lab.config(&json!({"review": {"default_reviewers": ["alpha", slug]}}));
        let out = lab.review(&["--phase", "3"]);
        out.assert_no_panic().assert_status(0);
        assert!(
            out.stderr.contains(&format!(
                "review.default_reviewers names {slug}: lane {slug}"
            )),
            "{slug}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(fix), "{slug}: {}", out.stderr);
        assert!(
            !out.stderr.contains("unknown reviewer slug"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn verbose_says_what_was_used_and_why_each_lane_was_or_was_not_selected() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    let out = lab.review(&["--phase", "3", "--alpha", "-v"]);
    out.assert_no_panic().assert_status(0);
    let stderr = &out.stderr;
    let root = lab.env.project.display().to_string();
    for expected in [
        format!("verbose: project root {root} (nearest directory holding .planning/)"),
        format!("verbose: config {root}/.planning/config.json"),
        format!(
            "verbose: GSD home {} (from GSD_HOME)",
            lab.env.gsd_home.display()
        ),
        "verbose: consent store ".to_owned(),
        "verbose: pin store ".to_owned(),
        "verbose: lane alpha: selected as alpha".to_owned(),
        "verbose: lane beta: not selected: not asked for (selection source explicit_flags)"
            .to_owned(),
    ] {
        assert!(
            stderr.contains(&expected),
            "{expected:?} missing:\n{stderr}"
        );
    }
    let out = lab.review(&["--phase", "3", "-v"]);
    assert!(
        out.stderr
            .contains("verbose: lane claude: not selected: not detected ("),
        "{}",
        out.stderr
    );
    let quiet = lab.review(&["--phase", "3", "--alpha"]);
    assert!(!quiet.stderr.contains("verbose:"), "{}", quiet.stderr);
}

// ---------------------------------------------------------------------------------------------
// Issue 21 item 1: a re-run never destroys a real review
// ---------------------------------------------------------------------------------------------

/// The `reviewed_at` of a REVIEWS.md.
fn reviewed_at(reviews: &str) -> String {
    reviews
        .lines()
        .find_map(|l| l.strip_prefix("reviewed_at: "))
        .expect("reviewed_at")
        .to_owned()
}

/// Two lanes that both reviewed: the REVIEWS.md a re-run must not lose.
fn reviewed_twice() -> (Lab, String) {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.config(&json!({"review": {"default_reviewers": ["alpha", "beta"]}}));
    lab.review(&["--phase", "3"]).assert_status(0);
    let first = lab.reviews();
    assert!(first.contains("### fake-beta review"), "{first}");
    let date = reviewed_at(&first);
    (lab, date)
}

#[test]
fn issue21_a_reviewer_failing_this_time_keeps_its_earlier_review_marked() {
    let (lab, first) = reviewed_twice();
    lab.behave("beta", "stub");
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    let marked = format!(
        "## Beta Review — from the earlier run of {first}\n\n{}\n\n### fake-beta review",
        util::CITATION_STAMP
    );
    assert!(reviews.contains(&marked), "{reviews}");
    assert!(
        reviews.contains(&stamped_section("## Alpha Review", "### fake-alpha review")),
        "{reviews}"
    );
    assert!(
        reviews.contains("## Beta Review\n\nbeta review failed"),
        "{reviews}"
    );
    assert!(
        reviews.contains(&format!(
            "- Beta Review — from the earlier run of {first} (not reproduced by this run)"
        )),
        "{reviews}"
    );
    assert!(out.stdout.contains("REVIEW PARTIAL"), "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!(
            "Kept from the earlier run (not reproduced by this one): Beta Review ({first})"
        )),
        "{}",
        out.stdout
    );
    // Still failing a run later: the review is kept again, with its own (first) date.
    lab.review(&["--phase", "3"]).assert_status(0);
    let again = lab.reviews();
    assert_eq!(again.matches("### fake-beta review").count(), 1, "{again}");
    assert!(again.contains(&marked), "{again}");
    // Reviewing again replaces the kept one.
    lab.behave("beta", "review");
    let out = lab.review(&["--phase", "3"]);
    assert!(out.stdout.contains("REVIEW COMPLETE"), "{}", out.stdout);
    assert!(
        !lab.reviews().contains("from the earlier run"),
        "{}",
        lab.reviews()
    );
}

#[test]
fn issue21_a_skipped_default_reviewer_is_said_and_its_review_kept() {
    let (lab, first) = reviewed_twice();
    std::fs::remove_file(lab.bin.join("fake-beta")).expect("uninstall beta");
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(0);
    assert!(!out.stdout.contains("REVIEW COMPLETE"), "{}", out.stdout);
    assert!(out.stdout.contains("REVIEW PARTIAL"), "{}", out.stdout);
    assert!(out.stdout.contains("Not run: Beta ("), "{}", out.stdout);
    let warned: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: configured default reviewer beta is skipped: not available on this host ("))
        .collect();
    assert_eq!(warned.len(), 1, "{}", out.stderr);
    let reviews = lab.reviews();
    assert!(reviews.contains("> Not run: Beta ("), "{reviews}");
    assert!(
        reviews.contains(&format!(
            "## Beta Review — from the earlier run of {first}\n\n{}\n\n### fake-beta review",
            util::CITATION_STAMP
        )),
        "{reviews}"
    );
}

#[test]
fn issue21_an_interrupted_rerun_keeps_the_reviews_it_did_not_reproduce() {
    let (lab, first) = reviewed_twice();
    lab.behave("beta", "sleep 30");
    let child = lab.command(&["--phase", "3"]).spawn().expect("spawn");
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(lab.marks("beta").iter().any(|m| m.kind == "child") && journaled(&lab.tmp, "alpha")) {
        assert!(Instant::now() < deadline, "lanes did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("/bin/kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let out = finish(child, "interrupted review");
    out.assert_no_panic().assert_status(130);
    let reviews = lab.reviews();
    assert!(
        reviews.contains("## Beta Review\n\nbeta review not completed"),
        "{reviews}"
    );
    assert!(
        reviews.contains(&format!(
            "## Beta Review — from the earlier run of {first}\n\n{}\n\n### fake-beta review",
            util::CITATION_STAMP
        )),
        "{reviews}"
    );
    assert!(
        out.stdout.contains("Kept from the earlier run"),
        "{}",
        out.stdout
    );
}

#[test]
fn issue21_an_earlier_file_of_another_shape_is_kept_whole_and_named() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let notes = "# My notes on phase 3\n\nCheck the invoice rounding by hand.\n";
    std::fs::write(lab.reviews_path(), notes).expect("notes");
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic().assert_status(0);
    let dir = lab.reviews_path().parent().expect("dir").to_owned();
    let kept: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("03-REVIEWS.earlier-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(util::read_text(&kept[0]), notes);
    let name = kept[0]
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let reviews = lab.reviews();
    assert!(
        reviews.contains(&format!("it is kept whole as {name}.")),
        "{reviews}"
    );
    assert!(out.stdout.contains(&name), "{}", out.stdout);
}

// ---------------------------------------------------------------------------------------------
// Issue 21 item 5: a lane's declared config default is applied, and said where it came from
// ---------------------------------------------------------------------------------------------

#[test]
fn issue21_a_lane_config_default_is_applied_and_its_source_shown() {
    let lab = Lab::new();
    lab.lane("alpha", |lane| {
        lane["config"]["review.models.alpha"]["default"] = json!("m-default");
    });
    let plan = lab.gsd(&["plan", "--selected", "alpha"]);
    plan.assert_status(0);
    let entry = &plan.json()[0];
    assert_eq!(
        entry["plan"]["argv"],
        json!(["--model", "m-default", "-"]),
        "{entry}"
    );
    assert_eq!(entry["settings"][0]["source"], "lane default", "{entry}");
    assert_eq!(entry["settings"][0]["value"], "m-default", "{entry}");
    let doctor = lab.gsd(&["doctor", "alpha", "--json"]);
    let row = &doctor.json()[0];
    assert_eq!(row["settings"][0]["key"], "review.models.alpha", "{row}");
    assert_eq!(
        row["settings"][0]["from"], "the default fake-alpha declares",
        "{row}"
    );
    let disclose = lab.gsd(&["disclose", "fake-alpha", "--json"]);
    assert_eq!(
        disclose.json()[0]["run"]["model"],
        "m-default from review.models.alpha (the default fake-alpha declares)"
    );
    // A config that sets the key wins, and says so.
    lab.config(&json!({"review": {"models": {"alpha": "mine"}}}));
    let entry = &lab.gsd(&["plan", "--selected", "alpha"]).json()[0];
    assert_eq!(
        entry["plan"]["argv"],
        json!(["--model", "mine", "-"]),
        "{entry}"
    );
    assert_eq!(entry["settings"][0]["source"], "config file", "{entry}");
    let disclose = lab.gsd(&["disclose", "fake-alpha", "--json"]);
    assert_eq!(
        disclose.json()[0]["run"]["model"],
        "mine from review.models.alpha (set in the config file)"
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 21 item 7: the small ones
// ---------------------------------------------------------------------------------------------

#[test]
fn issue21_a_timed_out_lane_says_its_bound_and_where_it_is_set() {
    let lab = Lab::new();
    lab.lane("alpha", |lane| {
        lane["reviewer"]["timeoutFloorMs"] = json!(1000)
    });
    lab.lane("beta", |_| {});
    lab.behave("alpha", "sleep 30");
    let out = lab.review(&["--phase", "3", "--alpha", "--beta"]);
    out.assert_no_panic().assert_status(0);
    let manifest = lab
        .env
        .capabilities_dir(Scope::Global)
        .join("fake-alpha/capability.json");
    let said = format!(
        "timed out after 1 s (reviewer.timeoutFloorMs in {})",
        manifest.display()
    );
    let reviews = lab.reviews();
    assert!(reviews.contains(&said), "{reviews}");
}

#[test]
fn issue21_doctor_is_not_ready_on_a_config_review_refuses() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        "{ \"review\": { \"default_reviewers\": [\"alpha\" }",
    )
    .expect("config");
    let review = lab.review(&["--phase", "3"]);
    review.assert_status(1);
    let doctor = lab.gsd(&["doctor", "alpha"]);
    doctor.assert_no_panic().assert_status(1);
    assert!(doctor.stderr.contains("config.json"), "{}", doctor.stderr);
    assert!(
        doctor.stderr.contains("doctor: not ready"),
        "{}",
        doctor.stderr
    );
}

/// A REVIEWS.md section whose review cites no `file:line`: its heading, the citation stamp
/// (upstream #3436), then the review's text.
fn stamped_section(heading: &str, review: &str) -> String {
    format!("{heading}\n\n{}\n\n{review}", util::CITATION_STAMP)
}
