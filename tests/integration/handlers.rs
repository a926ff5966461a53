//! The `antigravity` and `opencode` handlers end to end (invocation.md §11), and compiled
//! handler modules (`run --handler-module`).
//!
//! Real processes only: the real `gsd-lane` binary runs the first-party lanes against fake CLIs
//! in `tests/fixtures/bin/` (`agy`, `opencode`, POSIX sh). The fake `agy` reads what to do from
//! `$HOME/agy-scenario/` (see the script's header) and writes transcript lines, the
//! conversation cache and the CLI log under the private `HOME`, exactly where the real one
//! does (`$HOME/.gemini/antigravity-cli/…`). Static inputs (help texts, transcript lines,
//! reviews, logs, event streams, the `agy-fast` overlay lane) are files under
//! `tests/fixtures/handlers/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{self, read_text as read, Scope, TestEnv};

/// The prompt every lane is given (`<run dir>/gsd-review-prompt.md`).
const PROMPT: &str = "Please review PLAN-1.\n";
/// Bound on one gsd-lane command (a hang fails the test instead of blocking the suite).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// The self-report marker and the stamp of §11.2.7.
const MARKER: &str = "REVIEWED-WITHOUT-REPO-ACCESS";
const STAMP: &str = "> [reviewed-without-repo-access] This reviewer ran without visibility into the repo under review \u{2014} down-weight its verdict in the Consensus Summary.\n\n";
/// First and last lines of the antigravity diagnostic stub (§11.2.6).
const STUB_HEAD: &str = "Antigravity review failed or returned empty output.\n";
const STUB_TAIL: &str = "If no agy run started, that is the pre-session-stall case: check whether a new ~/.gemini/antigravity-cli/brain/<conv-id>/ dir appeared within ~30s of launch.\n";
/// The stub's last line when an agy session started but left no review (upstream #4184).
const STUB_TAIL_STARTED: &str = "An agy session started (the workspace's conversation changed, its transcript grew, or it could not be checked) but left no review: the model may have ended its turn without a final message, or a pinned model may be unavailable \u{2014} check the log hint above and 'agy models'.\n";

// ---------------------------------------------------------------------------------------------
// Environment and runner
// ---------------------------------------------------------------------------------------------

/// One test's world: private HOME/GSD_HOME/project, a run dir holding the prompt.
struct Lab {
    env: TestEnv,
    run_dir: PathBuf,
}

/// What one command did.
struct Ran {
    out: util::Outcome,
    elapsed: Duration,
}

impl Ran {
    fn ok(&self) -> &Ran {
        self.out.assert_no_panic().assert_status(0);
        self
    }

    /// The value of a `key    value` line of the human run report.
    fn report_line(&self, key: &str) -> Option<String> {
        self.out.stdout.lines().find_map(|line| {
            line.strip_prefix(key)
                .filter(|rest| rest.starts_with(' '))
                .map(|rest| rest.trim().to_owned())
        })
    }

    fn notes(&self) -> Vec<String> {
        self.out
            .stdout
            .lines()
            .filter_map(|line| line.strip_prefix("note      "))
            .map(str::to_owned)
            .collect()
    }
}

impl Lab {
    fn new() -> Lab {
        let env = TestEnv::with_planning();
        let run_dir = env.root.path().join("run");
        std::fs::create_dir_all(&run_dir).expect("create run dir");
        std::fs::write(run_dir.join("gsd-review-prompt.md"), PROMPT).expect("write prompt");
        std::fs::create_dir_all(env.home.join("agy-scenario")).expect("scenario dir");
        Lab { env, run_dir }
    }

    /// The repository root every run reviews (the project directory).
    fn repo(&self) -> String {
        self.env.project.display().to_string()
    }

    /// `$HOME/.gemini/antigravity-cli`.
    fn agy_dir(&self) -> PathBuf {
        self.env.home.join(".gemini").join("antigravity-cli")
    }

    /// Writes scenario file `name` for the fake agy.
    fn scenario(&self, name: &str, content: &str) -> &Lab {
        std::fs::write(self.env.home.join("agy-scenario").join(name), content)
            .expect("write scenario file");
        self
    }

    /// Scenario file `name` from `tests/fixtures/handlers/<fixture>`.
    fn scenario_fixture(&self, name: &str, fixture: &str) -> &Lab {
        self.scenario(name, &fixture_text(fixture))
    }

    /// The conversation cache as the JSON text `cache`.
    fn cache(&self, cache: &Value) -> &Lab {
        let dir = self.agy_dir().join("cache");
        std::fs::create_dir_all(&dir).expect("cache dir");
        std::fs::write(dir.join("last_conversations.json"), cache.to_string())
            .expect("write cache");
        self
    }

    fn transcript_path(&self, conv: &str) -> PathBuf {
        self.agy_dir()
            .join("brain")
            .join(conv)
            .join(".system_generated")
            .join("logs")
            .join("transcript.jsonl")
    }

    /// Writes conversation `conv`'s transcript before the run.
    fn transcript(&self, conv: &str, text: &str) -> &Lab {
        let path = self.transcript_path(conv);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("logs dir");
        std::fs::write(path, text).expect("write transcript");
        self
    }

    /// The workspace `c1` with the two-line transcript of an earlier run.
    fn earlier_session(&self) -> &Lab {
        self.cache(&json!({ self.repo(): "c1" }))
            .transcript("c1", &fixture_text("agy/transcript-old.jsonl"))
    }

    /// `gsd-lane <args>` in the project, PATH = fixture bin + system dirs.
    fn gsd_command(&self, args: &[&str]) -> Command {
        util::gsd_command(&self.env, &util::fixture_path(), &self.env.project, args)
    }

    /// `gsd-lane run <slug> --run-dir <run_dir> --repo-root <project> <extra>`.
    fn run_in(&self, run_dir: &Path, slug: &str, extra: &[&str]) -> Ran {
        let run_dir = run_dir.display().to_string();
        let repo = self.repo();
        let mut args = vec!["run", slug, "--run-dir", &run_dir, "--repo-root", &repo];
        args.extend_from_slice(extra);
        run_bounded(self.gsd_command(&args), COMMAND_TIMEOUT)
    }

    fn run(&self, slug: &str, extra: &[&str]) -> Ran {
        self.run_in(&self.run_dir, slug, extra)
    }

    fn review(&self, slug: &str) -> String {
        read(&self.run_dir.join(format!("gsd-review-{slug}.md")))
    }

    /// The review of a source-grounded lane whose text cites no `file:line`: it must start
    /// with the citation stamp and an empty line (upstream #3436); returns what follows.
    fn uncited_review(&self, slug: &str) -> String {
        let review = self.review(slug);
        review
            .strip_prefix(&util::uncited(""))
            .unwrap_or_else(|| panic!("no citation stamp on {slug}'s review: {review:?}"))
            .to_owned()
    }

    fn review_exists(&self, slug: &str) -> bool {
        self.run_dir.join(format!("gsd-review-{slug}.md")).exists()
    }

    fn sidecar(&self, slug: &str) -> String {
        read(&self.run_dir.join(format!("gsd-review-{slug}.err")))
    }

    /// The argv of the last `agy` run (not `--help`).
    fn agy_argv(&self) -> Vec<String> {
        read(&self.env.home.join("agy-argv"))
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// `(start ns, end ns, pid)` of every finished agy run, in start order.
    fn agy_calls(&self) -> Vec<(u128, u128, String)> {
        let log = read(&self.env.home.join("agy-calls.log"));
        let mut starts: Vec<(u128, String)> = Vec::new();
        let mut calls = Vec::new();
        for line in log.lines() {
            let parts: Vec<&str> = line.split(' ').collect();
            let [kind, ns, pid] = parts[..] else {
                panic!("bad agy-calls.log line {line:?}");
            };
            let ns: u128 = ns.parse().expect("nanoseconds");
            match kind {
                "start" => starts.push((ns, pid.to_owned())),
                "end" => {
                    let at = starts
                        .iter()
                        .position(|(_, p)| p == pid)
                        .expect("end after start");
                    let (start, pid) = starts.remove(at);
                    calls.push((start, ns, pid));
                }
                other => panic!("bad kind {other}"),
            }
        }
        calls.sort();
        calls
    }

    /// The antigravity variant of the file-ref prompt for this lab (§11.2.3).
    fn variant_prompt(&self) -> String {
        let prompt = self
            .run_dir
            .join("gsd-review-prompt.md")
            .display()
            .to_string();
        let repo = self.repo();
        format!(
            "Read the file at {prompt} in full and carry out the review request it contains. \
             The repository under review is at {repo} \u{2014} resolve every relative file path \
             in the review request against that absolute root and verify claims against those \
             files. If you cannot read files under {repo}, begin your output with the exact \
             line REVIEWED-WITHOUT-REPO-ACCESS before the review. Output only the resulting \
             markdown review. Do not edit any files."
        )
    }
}

fn fixture_text(rel: &str) -> String {
    read(&util::fixture("handlers").join(rel))
}

/// Runs `command`, killed (and the test failed) after `timeout`.
fn run_bounded(command: Command, timeout: Duration) -> Ran {
    let (out, elapsed) = util::run_bounded(command, timeout);
    Ran { out, elapsed }
}

fn assert_stub_without_stale(review: &str) {
    assert_stub_ending(review, STUB_TAIL);
}

/// The antigravity stub, closed by `tail`, replaying nothing stale.
fn assert_stub_ending(review: &str, tail: &str) {
    assert!(
        review.starts_with(STUB_HEAD),
        "not the antigravity stub:\n{review}"
    );
    assert!(review.ends_with(tail), "stub tail missing:\n{review}");
    assert!(
        !review.contains("STALE"),
        "a stale response was replayed:\n{review}"
    );
}

// ---------------------------------------------------------------------------------------------
// antigravity: layer 1 (stdout)
// ---------------------------------------------------------------------------------------------

#[test]
fn antigravity_stdout_review_is_layer_one_and_the_report_says_so() {
    let lab = Lab::new();
    lab.earlier_session()
        .scenario("stdout", "## Agy review\nAll good.")
        .scenario("conv", "c1")
        .scenario_fixture("append", "agy/append-new.jsonl");
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    assert_eq!(
        lab.uncited_review("antigravity"),
        "## Agy review\nAll good.\n"
    );
    assert_eq!(ran.report_line("source").as_deref(), Some("stdout"));
    assert_eq!(
        ran.report_line("result").map(|r| r.starts_with("review")),
        Some(true),
        "{}",
        ran.out.stdout
    );
    assert!(
        ran.notes().iter().any(|n| n == "watermark conv=c1 lines=2"),
        "{:?}",
        ran.notes()
    );
    // The plan's file-ref prompt was replaced by the antigravity variant, still last.
    let argv = lab.agy_argv();
    assert_eq!(argv.last(), Some(&lab.variant_prompt()));
    assert_eq!(&argv[..3], ["--print-timeout", "540s", "-p"]);
}

#[test]
fn antigravity_nonzero_exit_discards_stdout_and_uses_the_transcript() {
    let lab = Lab::new();
    lab.earlier_session()
        .scenario("stdout", "half a review, then a crash")
        .scenario("exit", "3")
        .scenario("conv", "c1")
        .scenario_fixture("append", "agy/append-new.jsonl");
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    let review = lab.uncited_review("antigravity");
    assert!(
        review.starts_with("## Fresh review\nfrom the transcript (agy "),
        "{review}"
    );
    assert!(!review.contains("half a review"), "{review}");
    assert_eq!(ran.report_line("source").as_deref(), Some("transcript"));
    assert!(ran.notes().iter().any(|n| n == "stdout discarded (exit 3)"));
}

#[test]
fn antigravity_nonzero_exit_without_a_transcript_is_the_stub_not_the_stdout() {
    let lab = Lab::new();
    lab.scenario("stdout", "half a review, then a crash")
        .scenario("exit", "1");
    lab.run("antigravity", &["--json"]).ok();
    let review = lab.review("antigravity");
    assert_stub_without_stale(&review);
    assert!(!review.contains("half a review"), "{review}");
}

// ---------------------------------------------------------------------------------------------
// antigravity: layer 2 (transcript after the watermark)
// ---------------------------------------------------------------------------------------------

#[test]
fn antigravity_empty_stdout_uses_the_post_watermark_transcript_entry() {
    let lab = Lab::new();
    lab.earlier_session()
        .scenario("conv", "c1")
        .scenario_fixture("append", "agy/append-new.jsonl");
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    let pid = &lab.agy_calls()[0].2;
    assert_eq!(
        lab.uncited_review("antigravity"),
        format!("## Fresh review\nfrom the transcript (agy {pid})\n")
    );
    assert_eq!(ran.report_line("source").as_deref(), Some("transcript"));
    assert!(ran
        .notes()
        .iter()
        .any(|n| n == "review from transcript conv=c1"));
}

/// The recorded model of an antigravity run (upstream #3649, §3.3, §3.6) comes from the
/// workspace's transcript: the last entry naming one, after the watermark first.
#[test]
fn antigravity_records_the_transcript_model() {
    let lab = Lab::new();
    lab.earlier_session().scenario("conv", "c1").scenario(
        "append",
        "{\"model\":\"stale-model\"}\n\
         {\"source\":\"MODEL\",\"status\":\"DONE\",\"type\":\"PLANNER_RESPONSE\",\
         \"content\":\"see src/a.rs:1\",\"meta\":{\"model\":\"gemini-3-pro\"}}\n",
    );
    let ran = lab.run("antigravity", &["--json"]);
    ran.out.assert_status(0);
    let result: Value = serde_json::from_str(ran.out.stdout.trim()).expect("one JSON line");
    assert_eq!(
        result["model"],
        json!({"value": "gemini-3-pro", "source": "transcript"}),
        "{result}"
    );
    // A pinned model wins over the transcript.
    let planning = lab.env.project.join(".planning");
    std::fs::create_dir_all(&planning).expect(".planning");
    std::fs::write(
        planning.join("config.json"),
        json!({"review": {"models": {"agy": "pinned-agy"}}}).to_string(),
    )
    .expect("config.json");
    let ran = lab.run("antigravity", &["--json"]);
    let result: Value = serde_json::from_str(ran.out.stdout.trim()).expect("one JSON line");
    assert_eq!(
        result["model"],
        json!({"value": "pinned-agy", "source": "pinned"})
    );
}

#[test]
fn antigravity_only_pre_watermark_entries_give_the_stub_never_the_stale_review() {
    let lab = Lab::new();
    lab.earlier_session()
        .scenario("conv", "c1")
        .scenario_fixture("append", "agy/append-user-only.jsonl");
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    // The transcript grew past the watermark (user lines only): a session started (#4184).
    assert_stub_ending(&lab.review("antigravity"), STUB_TAIL_STARTED);
    assert_eq!(ran.report_line("source"), None);
    assert!(ran
        .notes()
        .iter()
        .any(|n| n == "layer 3: nothing from stdout or the transcript; diagnostic stub"));
    assert!(
        ran.report_line("result")
            .is_some_and(|r| r.starts_with("STUB")),
        "{}",
        ran.out.stdout
    );
}

#[test]
fn antigravity_changed_conversation_id_reads_the_new_transcript_from_the_top() {
    let lab = Lab::new();
    // Mark: c1 with 3 lines; the run moves the workspace to c2, whose transcript has 1 line.
    lab.cache(&json!({ lab.repo(): "c1" }))
        .transcript(
            "c1",
            &format!(
                "{}{}",
                fixture_text("agy/transcript-old.jsonl"),
                fixture_text("agy/append-user-only.jsonl")
            ),
        )
        .scenario("cache", &json!({ lab.repo(): "c2" }).to_string())
        .scenario("conv", "c2")
        .scenario_fixture("append", "agy/append-new-session.jsonl");
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    assert_eq!(lab.uncited_review("antigravity"), "## New session review\n");
    assert!(ran
        .notes()
        .iter()
        .any(|n| n == "review from transcript conv=c2"));
}

#[test]
fn antigravity_unreadable_transcript_with_the_same_id_fails_closed() {
    let lab = Lab::new();
    lab.earlier_session();
    // Unreadable at the watermark: mode 000, or (as root, who reads anything) a directory
    // where the file should be. The run makes it readable again, holding only stale lines.
    let path = lab.transcript_path("c1");
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o000))
        .expect("chmod 000");
    if std::fs::read(&path).is_ok() {
        std::fs::remove_file(&path).expect("remove transcript");
        std::fs::create_dir_all(&path).expect("directory in its place");
    }
    lab.scenario("conv", "c1")
        .scenario_fixture("restore-transcript", "agy/transcript-old.jsonl");
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    assert!(
        ran.notes()
            .iter()
            .any(|n| n == "watermark conv=c1 lines=0 unreadable"),
        "{:?}",
        ran.notes()
    );
    assert_eq!(
        read(&path),
        fixture_text("agy/transcript-old.jsonl"),
        "readable after the run"
    );
    // Unreadable at the watermark: never called a stall (#4184).
    assert_stub_ending(&lab.review("antigravity"), STUB_TAIL_STARTED);
}

#[test]
fn antigravity_workspace_key_matches_case_insensitively() {
    let lab = Lab::new();
    let shouted = lab.repo().to_uppercase();
    assert_ne!(shouted, lab.repo(), "the temp path has lower-case letters");
    lab.cache(&json!({ "/some/other/repo": "c0", shouted: "c1" }))
        .transcript("c1", &fixture_text("agy/transcript-old.jsonl"))
        .scenario("conv", "c1")
        .scenario_fixture("append", "agy/append-new.jsonl");
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    assert!(
        lab.uncited_review("antigravity")
            .starts_with("## Fresh review\n"),
        "{}",
        lab.review("antigravity")
    );
    assert!(ran.notes().iter().any(|n| n == "watermark conv=c1 lines=2"));
}

// ---------------------------------------------------------------------------------------------
// antigravity: argv adjustments and the help probe
// ---------------------------------------------------------------------------------------------

#[test]
fn antigravity_add_dir_is_inserted_before_the_last_p_when_help_mentions_it() {
    let lab = Lab::new();
    lab.scenario_fixture("help", "agy/help-add-dir.txt")
        .scenario("stdout", "ok");
    lab.run("antigravity", &["--model", "gemini-x"]).ok();
    let repo = lab.repo();
    let expected: Vec<String> = [
        "--print-timeout",
        "540s",
        "--model",
        "gemini-x",
        "--add-dir",
        repo.as_str(),
        "-p",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([lab.variant_prompt()])
    .collect();
    assert_eq!(lab.agy_argv(), expected);
}

#[test]
fn antigravity_no_add_dir_when_help_does_not_mention_it() {
    let lab = Lab::new();
    lab.scenario_fixture("help", "agy/help-plain.txt")
        .scenario("stdout", "ok");
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    let argv = lab.agy_argv();
    assert!(!argv.iter().any(|a| a == "--add-dir"), "{argv:?}");
    assert_eq!(argv.len(), 4, "{argv:?}");
    assert!(ran
        .notes()
        .iter()
        .any(|n| n.starts_with("agy --help does not mention --add-dir")));
}

#[test]
fn antigravity_help_that_hangs_is_cut_at_five_seconds_and_adds_nothing() {
    let lab = Lab::new();
    lab.scenario("help-hang", "")
        .scenario_fixture("help", "agy/help-add-dir.txt")
        .scenario("stdout", "reviewed anyway");
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    assert!(
        ran.elapsed >= Duration::from_millis(4900) && ran.elapsed < Duration::from_secs(12),
        "help bound is 5 s; the run took {:?}",
        ran.elapsed
    );
    assert!(!lab.agy_argv().iter().any(|a| a == "--add-dir"));
    assert_eq!(lab.uncited_review("antigravity"), "reviewed anyway\n");
}

// ---------------------------------------------------------------------------------------------
// antigravity: the two-level timeout (agy-fast overlay: the same handler, 1.5 s outer bound)
// ---------------------------------------------------------------------------------------------

fn install_agy_fast(lab: &Lab, edit: impl FnOnce(&mut Value)) {
    let mut lane = util::read_json(&util::fixture("handlers/agy/agy-fast/capability.json"));
    edit(&mut lane);
    lab.env.write_overlay(Scope::Global, "agy-fast", &lane);
}

#[test]
fn antigravity_outer_bound_kills_the_tree_when_the_inner_timeout_never_fires() {
    let lab = Lab::new();
    install_agy_fast(&lab, |_| {});
    lab.earlier_session().scenario("hang", "");
    let ran = lab.run("agy-fast", &[]);
    ran.ok();
    assert!(
        ran.elapsed < Duration::from_secs(6),
        "timeoutFloorMs 1500 but the run took {:?}",
        ran.elapsed
    );
    assert!(
        lab.agy_argv().contains(&"540s".to_owned()),
        "inner bound declared"
    );
    let sidecar = lab.sidecar("agy-fast");
    assert!(
        sidecar.ends_with("\n[spawn error: ETIMEDOUT]\n"),
        "{sidecar:?}"
    );
    let review = lab.review("agy-fast");
    // The stub, then the line saying which bound stopped it (issue 21 item 7).
    let (stub, said) = review
        .split_once("> [gsd-lane] timed out after ")
        .expect("the timeout is said");
    assert_stub_without_stale(&format!("{}\n", stub.trim_end()));
    assert!(said.contains("(reviewer.timeoutFloorMs in "), "{said}");
    assert!(
        ran.notes()
            .iter()
            .any(|n| n == "stdout discarded (spawn error ETIMEDOUT)"),
        "{:?}",
        ran.notes()
    );
    assert!(
        lab.env.home.join("agy-hang.pid").is_file(),
        "the grandchild started"
    );
    let left = util::processes_left_with_home(&lab.env.home, Duration::from_secs(3));
    assert!(
        left.is_empty(),
        "the grandchild survived the outer kill: {left:?}"
    );
}

#[test]
fn antigravity_inner_print_timeout_ends_the_run_before_the_outer_bound() {
    let lab = Lab::new();
    install_agy_fast(&lab, |lane| {
        lane["reviewer"]["timeoutFloorMs"] = json!(20_000);
        lane["reviewer"]["invoke"]["args"][1] = json!("1s");
    });
    lab.scenario("sleep", "5").scenario("stdout", "too late");
    let ran = lab.run("agy-fast", &[]);
    ran.ok();
    assert!(
        ran.elapsed < Duration::from_secs(4),
        "--print-timeout 1s but the run took {:?}",
        ran.elapsed
    );
    assert!(ran
        .notes()
        .iter()
        .any(|n| n == "stdout discarded (exit 124)"));
    let review = lab.review("agy-fast");
    assert_stub_without_stale(&review);
    assert!(
        review.contains("agy: --print-timeout 1s elapsed"),
        "{review}"
    );
}

// ---------------------------------------------------------------------------------------------
// antigravity: blind-review stamp
// ---------------------------------------------------------------------------------------------

fn blind_run(review_fixture: &str) -> (String, Ran) {
    let lab = Lab::new();
    lab.scenario_fixture("stdout", review_fixture);
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    (lab.review("antigravity"), ran)
}

#[test]
fn antigravity_self_report_in_line_three_is_stamped() {
    let (review, ran) = blind_run("agy/review-blind-line3.md");
    assert_eq!(
        review,
        // The citation stamp comes first, then the blind stamp (upstream #3436's order, §2.4).
        util::uncited(&format!(
            "{STAMP}{}",
            fixture_text("agy/review-blind-line3.md")
        ))
    );
    assert_eq!(
        review.lines().position(|l| l == MARKER),
        Some(6),
        "two stamps, each with its blank line, then the review's line 3"
    );
    assert!(ran
        .out
        .stdout
        .contains("note      reviewed without repository access (stamped)"));
}

#[test]
fn antigravity_self_report_in_line_nine_is_not_stamped() {
    let (review, ran) = blind_run("agy/review-marker-line9.md");
    assert_eq!(
        review,
        util::uncited(&fixture_text("agy/review-marker-line9.md"))
    );
    assert!(!ran.out.stdout.contains("(stamped)"));
}

#[test]
fn antigravity_scratch_dir_tell_is_stamped() {
    let (review, _) = blind_run("agy/review-scratch.md");
    assert_eq!(
        review,
        util::uncited(&format!("{STAMP}{}", fixture_text("agy/review-scratch.md")))
    );
}

// ---------------------------------------------------------------------------------------------
// antigravity: layer 3 (diagnostic stub with the log hint and the stderr tail)
// ---------------------------------------------------------------------------------------------

#[test]
fn antigravity_stub_carries_the_last_three_log_hint_lines_and_the_stderr_tail() {
    let lab = Lab::new();
    lab.scenario_fixture("log", "agy/cli.log")
        .scenario("stderr", "agy: model unavailable\n");
    let ran = lab.run("antigravity", &[]);
    ran.ok();
    let log: Vec<&str> = include_str!("../fixtures/handlers/agy/cli.log")
        .lines()
        .collect();
    let expected = [
        "Antigravity review failed or returned empty output.",
        "agy log hint (pinned model may be unavailable \u{2014} run 'agy models' and set review.models.agy):",
        log[3],
        log[4],
        log[5],
        "stderr (last 20 lines):",
        "agy: model unavailable",
        STUB_TAIL.trim_end(),
    ]
    .join("\n");
    assert_eq!(lab.review("antigravity"), format!("{expected}\n"));
    assert!(log[3].ends_with("(2)") && log[5].ends_with("(4)"));
    assert_eq!(lab.sidecar("antigravity"), "agy: model unavailable\n");
}

#[test]
fn antigravity_stub_without_a_log_has_no_hint() {
    let lab = Lab::new();
    lab.run("antigravity", &[]).ok();
    assert_eq!(
        lab.review("antigravity"),
        format!("{STUB_HEAD}{STUB_TAIL}"),
        "no log, no stderr: the two fixed lines"
    );
}

// ---------------------------------------------------------------------------------------------
// antigravity: the workspace lock
// ---------------------------------------------------------------------------------------------

#[test]
fn antigravity_concurrent_runs_on_one_workspace_are_serialized_by_the_lock() {
    let lab = Lab::new();
    lab.earlier_session()
        .scenario("sleep", "0.4")
        .scenario("conv", "c1")
        .scenario_fixture("append", "agy/append-new.jsonl");
    let dirs: Vec<PathBuf> = ["run-a", "run-b"]
        .iter()
        .map(|name| {
            let dir = lab.env.root.path().join(name);
            std::fs::create_dir_all(&dir).expect("run dir");
            std::fs::write(dir.join("gsd-review-prompt.md"), PROMPT).expect("prompt");
            dir
        })
        .collect();
    let commands: Vec<Command> = dirs
        .iter()
        .map(|dir| {
            let run_dir = dir.display().to_string();
            let repo = lab.repo();
            lab.gsd_command(&[
                "run",
                "antigravity",
                "--run-dir",
                &run_dir,
                "--repo-root",
                &repo,
            ])
        })
        .collect();
    let handles: Vec<_> = commands
        .into_iter()
        .map(|command| std::thread::spawn(move || run_bounded(command, COMMAND_TIMEOUT)))
        .collect();
    for handle in handles {
        handle.join().expect("runner thread").ok();
    }
    let calls = lab.agy_calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(
        calls[0].1 <= calls[1].0,
        "the two agy runs overlapped: {calls:?}"
    );
    // Each run read its own response, never the other's.
    let mut reviews: Vec<String> = dirs
        .iter()
        .map(|dir| read(&dir.join("gsd-review-antigravity.md")))
        .collect();
    reviews.sort();
    let mut expected: Vec<String> = calls
        .iter()
        .map(|(_, _, pid)| {
            util::uncited(&format!(
                "## Fresh review\nfrom the transcript (agy {pid})\n"
            ))
        })
        .collect();
    expected.sort();
    assert_eq!(reviews, expected);
}

// ---------------------------------------------------------------------------------------------
// opencode
// ---------------------------------------------------------------------------------------------

fn opencode_run(stream_fixture: &str) -> (Lab, Ran) {
    let lab = Lab::new();
    std::fs::copy(
        util::fixture("handlers").join(stream_fixture),
        lab.env.home.join("opencode-stream.jsonl"),
    )
    .expect("copy stream");
    let ran = lab.run("opencode", &[]);
    ran.ok();
    (lab, ran)
}

#[test]
fn opencode_event_stream_becomes_the_review() {
    let (lab, ran) = opencode_run("opencode/stream.jsonl");
    assert_eq!(
        lab.uncited_review("opencode"),
        "## OpenCode review\n\nLooks good; one nit in PLAN-1.\n"
    );
    assert_eq!(ran.report_line("source").as_deref(), Some("stdout"));
    assert!(ran
        .notes()
        .iter()
        .any(|n| n == "stop reason=stop, output tokens=42"));
    let argv = read(&lab.env.home.join("opencode-argv"));
    assert!(
        argv.starts_with("run\n") && argv.ends_with("\n--format\njson\n-\n"),
        "{argv:?}"
    );
}

/// Issue 21 item 4: the model narrates, calls a tool, then answers: the review is the answer.
#[test]
fn opencode_narration_before_a_tool_call_is_left_out() {
    let (lab, _) = opencode_run("opencode/narrated.jsonl");
    assert_eq!(
        lab.uncited_review("opencode"),
        "## Summary\n\nThe plan is sound; one risk in the rollback step.\n"
    );
}

#[test]
fn opencode_stream_without_text_is_a_stub_with_the_stop_reason() {
    let (lab, _) = opencode_run("opencode/no-text.jsonl");
    assert_eq!(
        lab.review("opencode"),
        "opencode review failed or returned empty output. stderr:\n\
         opencode: done\n\n\
         Raw response body:\n\
         OpenCode review returned no assistant text (agent ended its turn with no final message).\n\
         Diagnostic: stop reason=tool-calls, output tokens=7\n\
         Diagnosis: opencode ran at effort=high and exited cleanly inside the timeout \u{2014} a \
         clean exit that produced no output is most often a model ending its turn without \
         writing a final message rather than a crash; if this lane carries a reasoning effort, \
         raising it is the usual fix.\n"
    );
}

#[test]
fn opencode_garbage_lines_are_skipped_and_every_text_part_kept_in_order() {
    let (lab, ran) = opencode_run("opencode/garbage.jsonl");
    assert_eq!(
        lab.uncited_review("opencode"),
        "first kept\nsecond kept\nthird kept\n"
    );
    assert!(ran
        .notes()
        .iter()
        .any(|n| n == "stop reason=stop, output tokens=1.5"));
}

// ---------------------------------------------------------------------------------------------
// The one handler list (CONTRIBUTING.md, "Adding a handler"): vocabulary and schema read it
// ---------------------------------------------------------------------------------------------

#[test]
fn handler_name_lists_agree() {
    let sdk: Vec<&str> = gsd_lane_handlers::names()
        .into_iter()
        .map(gsd_lane_sdk::HandlerName::as_str)
        .collect();
    assert_eq!(
        gsd_lane::api::manifest::vocab::handler_names(),
        sdk.as_slice(),
        "manifest vocabulary"
    );
    let schema: Value = serde_json::from_str(
        &run_bounded(Lab::new().gsd_command(&["schema"]), COMMAND_TIMEOUT)
            .ok()
            .out
            .stdout,
    )
    .expect("schema is JSON");
    let in_schema: Vec<&str> = schema["definitions"]["HandlerName"]["oneOf"]
        .as_array()
        .expect("HandlerName is a oneOf")
        .iter()
        .flat_map(|member| member["enum"].as_array().cloned().unwrap_or_default())
        .map(|name| match name {
            Value::String(name) => sdk
                .iter()
                .copied()
                .find(|known| *known == name)
                .unwrap_or_else(|| panic!("schema names {name:?}, unknown to the sdk")),
            other => panic!("non-string handler {other}"),
        })
        .collect();
    assert_eq!(in_schema, sdk, "gsd-lane schema");
    for handler in gsd_lane_handlers::HANDLERS {
        assert!(sdk.contains(&handler.name().as_str()));
    }
}

// ---------------------------------------------------------------------------------------------
// Compiled handler modules (`run --handler-module`)
// ---------------------------------------------------------------------------------------------

#[test]
fn review_never_takes_a_handler_module() {
    let lab = Lab::new();
    let ran = run_bounded(
        lab.gsd_command(&["review", "--handler-module", "/tmp/x.so"]),
        COMMAND_TIMEOUT,
    );
    assert!(
        !matches!(ran.out.code, Some(0) | None),
        "review accepted --handler-module: {}",
        ran.out.stderr
    );
    assert!(
        ran.out.stderr.contains("--handler-module"),
        "{}",
        ran.out.stderr
    );
}

#[cfg(not(feature = "dynamic-handlers"))]
#[test]
fn handler_module_without_the_feature_is_a_clear_error_and_runs_nothing() {
    let lab = Lab::new();
    lab.scenario("stdout", "should never run");
    let ran = lab.run("antigravity", &["--handler-module", "/tmp/module.so"]);
    ran.out.assert_no_panic().assert_status(2);
    assert!(
        ran.out.stderr.contains(
            "this build has no dynamic handler support; rebuild with --features dynamic-handlers"
        ),
        "{}",
        ran.out.stderr
    );
    assert!(!lab.review_exists("antigravity"));
    assert!(
        !lab.env.home.join("agy-calls.log").exists(),
        "agy never ran"
    );
}

#[cfg(feature = "dynamic-handlers")]
mod dynamic {
    //! Built modules come from the workspace's own crates: `gsd-lane-opencode-module` (the
    //! example) and `gsd-lane-refused-modules` (an unknown name; the `incompatible_sdk` and
    //! `missing_field` examples). They are built once per test binary with the same cargo, profile and target
    //! directory as this test, so a stale library is never loaded.

    use super::*;
    use std::sync::OnceLock;

    /// `<target>/<profile>` of this test binary (`<target>/<profile>/deps/integration-…`).
    fn profile_dir() -> PathBuf {
        let exe = std::env::current_exe().expect("test exe path");
        exe.parent()
            .and_then(Path::parent)
            .expect("<target>/<profile>/deps/<exe>")
            .to_path_buf()
    }

    /// Builds the module crates once; returns `<target>/<profile>`.
    fn built() -> &'static Path {
        static BUILT: OnceLock<PathBuf> = OnceLock::new();
        BUILT.get_or_init(|| {
            let profile = profile_dir();
            let target = profile.parent().expect("<target>").to_path_buf();
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut command = Command::new(cargo);
            command
                .current_dir(util::workspace_root())
                .args([
                    "build",
                    "--quiet",
                    "-p",
                    "gsd-lane-opencode-module",
                    "-p",
                    "gsd-lane-refused-modules",
                    "--lib",
                    "--examples",
                    "--target-dir",
                ])
                .arg(&target);
            if profile.file_name().is_some_and(|name| name == "release") {
                command.arg("--release");
            }
            let status = command.status().expect("run cargo build for the modules");
            assert!(status.success(), "building the handler modules failed");
            profile
        })
    }

    fn library(dir: &Path, stem: &str) -> PathBuf {
        dir.join(format!(
            "{}{stem}{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        ))
    }

    fn opencode_module() -> PathBuf {
        library(built(), "gsd_lane_opencode_module")
    }

    fn unknown_name_module() -> PathBuf {
        library(built(), "gsd_lane_refused_modules")
    }

    fn incompatible_module() -> PathBuf {
        library(&built().join("examples"), "incompatible_sdk")
    }

    fn missing_field_module() -> PathBuf {
        library(&built().join("examples"), "missing_field")
    }

    fn stream_lab() -> Lab {
        let lab = Lab::new();
        std::fs::copy(
            util::fixture("handlers/opencode/stream.jsonl"),
            lab.env.home.join("opencode-stream.jsonl"),
        )
        .expect("copy stream");
        lab
    }

    #[test]
    fn dynamic_opencode_module_runs_the_lane_with_a_loud_notice() {
        let lab = stream_lab();
        let module = opencode_module();
        let ran = lab.run(
            "opencode",
            &["--handler-module", module.to_str().expect("utf-8 path")],
        );
        ran.ok();
        assert_eq!(
            lab.uncited_review("opencode"),
            "## OpenCode review\n\nLooks good; one nit in PLAN-1.\n"
        );
        assert_eq!(ran.report_line("source").as_deref(), Some("stdout"));
        assert!(
            ran.out.stderr.contains("NON-BUNDLED HANDLER MODULE IN USE")
                && ran.out.stderr.contains(&module.display().to_string()),
            "{}",
            ran.out.stderr
        );
        // The module's process went through the host's effects: sidecar written, bound kept.
        assert_eq!(lab.sidecar("opencode"), "opencode: done\n");
    }

    #[test]
    fn dynamic_module_is_only_used_by_the_run_that_names_it() {
        let lab = stream_lab();
        let ran = lab.run("opencode", &[]);
        ran.ok();
        assert!(
            !ran.out.stderr.contains("NON-BUNDLED"),
            "{}",
            ran.out.stderr
        );
    }

    #[test]
    fn dynamic_unknown_name_module_is_refused_and_nothing_runs() {
        let lab = stream_lab();
        let module = unknown_name_module();
        let ran = lab.run(
            "opencode",
            &["--handler-module", module.to_str().expect("utf-8 path")],
        );
        ran.out.assert_no_panic().assert_status(2);
        assert!(
            ran.out.stderr.contains("\"acme\"")
                && ran.out.stderr.contains("not a first-party handler")
                && ran.out.stderr.contains("nothing was run"),
            "{}",
            ran.out.stderr
        );
        assert!(!ran.out.stderr.contains("REFUSED MODULE RAN"));
        assert!(!ran.out.stderr.contains("NON-BUNDLED"));
        assert!(!lab.review_exists("opencode"));
        assert!(
            !lab.env.home.join("opencode-argv").exists(),
            "opencode never ran"
        );
    }

    #[test]
    fn dynamic_incompatible_sdk_module_is_refused_naming_both_versions() {
        let lab = stream_lab();
        let module = incompatible_module();
        let ran = lab.run(
            "opencode",
            &["--handler-module", module.to_str().expect("utf-8 path")],
        );
        ran.out.assert_no_panic().assert_status(2);
        let sdk = env!("CARGO_PKG_VERSION");
        assert!(
            ran.out.stderr.contains("gsd-lane-sdk 9.0.0")
                && ran.out.stderr.contains(&format!("gsd-lane-sdk {sdk}")),
            "{}",
            ran.out.stderr
        );
        assert!(!lab.review_exists("opencode"));
        assert!(
            !lab.env.home.join("opencode-argv").exists(),
            "opencode never ran"
        );
    }

    #[test]
    fn dynamic_module_whose_root_lacks_a_field_is_refused_not_a_panic() {
        let lab = stream_lab();
        let module = missing_field_module();
        let ran = lab.run(
            "opencode",
            &["--handler-module", module.to_str().expect("utf-8 path")],
        );
        ran.out.assert_no_panic().assert_status(2);
        assert!(
            ran.out.stderr.contains("cannot load") && ran.out.stderr.contains("new_handler"),
            "{}",
            ran.out.stderr
        );
        assert!(!ran.out.stderr.contains("NON-BUNDLED"));
        assert!(!lab.review_exists("opencode"));
        assert!(
            !lab.env.home.join("opencode-argv").exists(),
            "opencode never ran"
        );
    }

    #[test]
    fn dynamic_module_for_another_handler_is_refused() {
        let lab = Lab::new();
        lab.scenario("stdout", "should never run");
        let module = opencode_module();
        let ran = lab.run(
            "antigravity",
            &["--handler-module", module.to_str().expect("utf-8 path")],
        );
        ran.out.assert_no_panic().assert_status(2);
        assert!(
            ran.out.stderr.contains("declares handler antigravity"),
            "{}",
            ran.out.stderr
        );
        assert!(
            !lab.env.home.join("agy-calls.log").exists(),
            "agy never ran"
        );
    }

    #[test]
    fn dynamic_missing_module_file_is_refused() {
        let lab = Lab::new();
        let ran = lab.run("opencode", &["--handler-module", "no/such/module.so"]);
        ran.out.assert_no_panic().assert_status(2);
        assert!(
            ran.out.stderr.contains("no such file"),
            "{}",
            ran.out.stderr
        );
    }
}
