//! `gsd-lane review --resume`, `gsd-lane runs` and rate-limit retries, end to end: the real
//! binary, the fake reviewer lanes of `review.rs` (their behaviour switched between runs through
//! `$HOME/behave/<name>`), the loopback HTTP server for HTTP lanes.
//!
//! "Ran again" and "kept" are judged from the lanes' own start marks, never from timing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::http_server::{chat_reply, json_reply, sequence, Reply, Server};
use crate::review::{finish, normalize, run_dir_of, Lab};
use crate::util::{self, Outcome};

fn starts(lab: &Lab, slug: &str) -> usize {
    lab.marks(slug).iter().filter(|m| m.kind == "start").count()
}

/// `gsd-lane runs --json` in the lab's environment.
fn runs(lab: &Lab) -> Vec<Value> {
    let mut command = Command::new(util::bin());
    command
        .env_clear()
        .env("HOME", &lab.env.home)
        .env("GSD_HOME", &lab.env.gsd_home)
        .env("TMPDIR", &lab.tmp)
        .env("PATH", format!("{}:/usr/bin:/bin", lab.bin.display()))
        .current_dir(&lab.env.project)
        .args(["runs", "--json"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = finish(command.spawn().expect("spawn runs"), "runs --json");
    out.assert_no_panic().assert_status(0);
    match out.json() {
        Value::Array(items) => items,
        other => panic!("runs --json is not an array: {other}"),
    }
}

/// A lab with lanes alpha (reviews) and beta (stub on the first run).
fn failed_beta() -> (Lab, Outcome) {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "stub");
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    assert!(lab
        .reviews()
        .contains("## Beta Review\n\nbeta review failed"));
    (lab, out)
}

/// The REVIEWS.md a one-shot run writes in a fresh lab where every lane reviews.
fn one_shot(slugs: &[&str]) -> String {
    let lab = Lab::new();
    for slug in slugs {
        lab.lane(slug, |_| {});
    }
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    normalize(&lab.reviews())
}

#[test]
fn resume_after_a_failed_lane_reruns_only_that_lane_and_matches_the_one_shot_file() {
    let (lab, first) = failed_beta();
    let dir = run_dir_of(&first);
    assert!(first.stderr.contains(&format!(
        "review: resume with: gsd-lane review --resume {}",
        dir.display()
    )));
    let listed = runs(&lab);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["state"], "resumable");
    assert_eq!(
        listed[0]["identities"],
        json!([{"identity": "alpha", "status": "review"}, {"identity": "beta", "status": "stub"}])
    );

    lab.behave("beta", "review");
    // `--phase 03` names the same phase as the recorded `--phase 3`.
    let out = lab.review(&["--phase", "03", "--resume"]);
    out.assert_no_panic().assert_status(0);
    assert!(
        out.stderr.contains("keeping alpha; running beta"),
        "{}",
        out.stderr
    );
    assert_eq!(
        starts(&lab, "alpha"),
        1,
        "a finished review is never paid for twice"
    );
    assert_eq!(starts(&lab, "beta"), 2);
    assert_eq!(normalize(&lab.reviews()), one_shot(&["alpha", "beta"]));
    assert!(!dir.exists(), "a run with every review finished is removed");
}

/// A lab with a trimmed lane `tiny` (context and research dropped) and lane `beta`.
fn trimmed_lab() -> Lab {
    let lab = Lab::new();
    lab.budget_lane("tiny");
    lab.lane("beta", |_| {});
    let research = lab
        .env
        .project
        .join(".planning/phases/03-billing/03-RESEARCH.md");
    std::fs::write(&research, "r".repeat(4000)).expect("research");
    lab.config(&json!({"review": {"max_prompt_tokens": 900}}));
    lab
}

#[test]
fn a_kept_trimmed_review_keeps_its_budget_metadata_in_reviews_md() {
    let lab = trimmed_lab();
    lab.behave("beta", "stub");
    let first = lab.review(&["--phase", "3", "--all"]);
    first.assert_no_panic().assert_status(0);
    // The journal records the per-lane prompt the trimmed lane was given.
    let journal = std::fs::read_to_string(run_dir_of(&first).join("gsd-review-journal.jsonl"))
        .expect("journal");
    let tiny = journal
        .lines()
        .find(|l| l.contains("\"identity\":\"tiny\""))
        .expect("tiny's line");
    assert!(tiny.contains("\"promptSha256\":\""), "{tiny}");
    lab.behave("beta", "review");
    let out = lab.review(&["--phase", "3", "--resume"]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(starts(&lab, "tiny"), 1);
    let resumed = normalize(&lab.reviews());
    assert!(resumed.contains("  tiny:\n    budget: 900\n"), "{resumed}");

    let fresh = trimmed_lab();
    fresh.review(&["--phase", "3", "--all"]).assert_status(0);
    assert_eq!(resumed, normalize(&fresh.reviews()));
}

#[test]
fn retry_reruns_a_finished_identity() {
    let (lab, first) = failed_beta();
    let dir = run_dir_of(&first);
    lab.behave("beta", "review");
    let out = lab.review(&["--retry", "alpha", "--resume", &dir.display().to_string()]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(starts(&lab, "alpha"), 2);
    assert_eq!(starts(&lab, "beta"), 2);
    let unknown = lab.review(&["--phase", "3", "--retry", "nobody"]);
    // The run was removed after finishing, so there is nothing left to retry in.
    unknown.assert_no_panic().assert_status(1);
}

#[test]
fn resume_after_sigkill_keeps_what_finished_and_ignores_a_torn_journal_line() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "sleep 30");
    let mut child = lab
        .command(&["--phase", "3", "--all"])
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(20);
    let journal = loop {
        let found = std::fs::read_dir(&lab.tmp)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("gsd-review-journal.jsonl"))
            .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("\"alpha\"")));
        if let (Some(found), true) = (found, lab.marks("beta").iter().any(|m| m.kind == "child")) {
            break found;
        }
        assert!(Instant::now() < deadline, "lanes did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    // The killed review's lane processes are the test's to clean up (found by their HOME: a
    // confined lane's own `$$` is its pid in its PID namespace).
    let _ = util::processes_left_with_home(&lab.env.home, Duration::from_secs(5));
    // A write torn by the kill: the last line has no newline.
    let mut text = std::fs::read_to_string(&journal).expect("journal");
    text.push_str("{\"v\":1,\"identity\":\"beta\",\"attempt\":1,\"sta");
    std::fs::write(&journal, text).expect("torn line");

    let listed = runs(&lab);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        listed[0]["identities"][1],
        json!({"identity": "beta", "status": "missing"})
    );
    let dir = PathBuf::from(listed[0]["runDir"].as_str().expect("runDir"));
    lab.behave("beta", "review");
    let out = lab.review(&["--resume", &dir.display().to_string()]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(starts(&lab, "alpha"), 1);
    assert_eq!(starts(&lab, "beta"), 2);
    assert_eq!(normalize(&lab.reviews()), one_shot(&["alpha", "beta"]));
}

#[test]
fn resume_after_ctrl_c_runs_the_interrupted_lanes() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "sleep 30");
    let child = lab
        .command(&["--phase", "3", "--all"])
        .spawn()
        .expect("spawn");
    let pid = child.id();
    // Interrupt only once alpha's result is journaled (its lane exiting is not enough: the
    // runner records the result a moment later) and beta is running.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(lab.marks("beta").iter().any(|m| m.kind == "child") && journaled_review(&lab, "alpha"))
    {
        assert!(Instant::now() < deadline, "lanes did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("/bin/kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let first = finish(child, "interrupted review");
    first.assert_no_panic().assert_status(130);
    let dir = run_dir_of(&first);

    lab.behave("beta", "review");
    let out = lab.review(&["--resume", &dir.display().to_string()]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(starts(&lab, "alpha"), 1);
    assert_eq!(starts(&lab, "beta"), 2);
    assert_eq!(normalize(&lab.reviews()), one_shot(&["alpha", "beta"]));
}

/// True once a run dir under the lab's TMPDIR journals a finished review of `identity`.
fn journaled_review(lab: &Lab, identity: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(&lab.tmp) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let journal = entry.path().join("gsd-review-journal.jsonl");
        std::fs::read_to_string(journal).is_ok_and(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .any(|line| line["identity"] == identity && line["status"] == "review")
        })
    })
}

/// The one entry of gsd-lane's own run records (`$GSD_HOME/.gsd/runs/<entry>`).
pub(crate) fn ledger_entry(lab: &Lab) -> PathBuf {
    let root = lab.env.gsd_home.join(".gsd/runs");
    let entries: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|err| panic!("{}: {err}", root.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

fn assert_refused(lab: &Lab, dir: &Path, needle: &str) {
    let out = lab.review(&["--resume", &dir.display().to_string()]);
    out.assert_no_panic().assert_status(2);
    assert!(out.stderr.contains("cannot resume"), "{}", out.stderr);
    assert!(
        out.stderr.contains(needle),
        "{needle:?} not in:\n{}",
        out.stderr
    );
    assert_eq!(starts(lab, "beta"), 1, "a refused resume runs nothing");
}

#[test]
fn resume_is_refused_when_the_prompt_changed_unless_forced() {
    let (lab, first) = failed_beta();
    let dir = run_dir_of(&first);
    let plan = lab
        .env
        .project
        .join(".planning/phases/03-billing/03-02-PLAN.md");
    let mut text = std::fs::read_to_string(&plan).expect("plan");
    text.push_str("\nOne more task.\n");
    std::fs::write(&plan, text).expect("edit plan");
    assert_refused(&lab, &dir, "the prompt input gsd-review-prompt.md changed");
    assert_refused(&lab, &dir, "gsd-review-plan-03-02.md changed");

    lab.behave("beta", "review");
    let out = lab.review(&["--resume", &dir.display().to_string(), "--force"]);
    out.assert_no_panic().assert_status(0);
    assert!(out.stderr.contains("warning: resuming anyway (--force)"));
    assert_eq!(starts(&lab, "alpha"), 1);
    assert_eq!(starts(&lab, "beta"), 2);
    assert!(lab
        .prompts("beta")
        .iter()
        .any(|p| p.contains("One more task.")));
}

#[test]
fn resume_is_refused_when_a_lane_manifest_changed() {
    let (lab, first) = failed_beta();
    let dir = run_dir_of(&first);
    lab.lane("beta", |lane| {
        lane["reviewer"]["timeoutFloorMs"] = json!(30000);
    });
    assert_refused(&lab, &dir, "lane beta: manifest changed");
}

#[test]
fn resume_is_refused_when_a_lane_model_changed() {
    let (lab, first) = failed_beta();
    let dir = run_dir_of(&first);
    lab.config(&json!({"review": {"models": {"beta": "bigger-model"}}}));
    assert_refused(&lab, &dir, "beta: the resolved plan changed at plan.");
}

#[test]
fn resume_refuses_an_unknown_record_version_and_a_missing_run() {
    let (lab, first) = failed_beta();
    let dir = run_dir_of(&first);
    // gsd-lane's own record (a newer gsd-lane would have written version 9 there).
    let record = ledger_entry(&lab).join("run.json");
    let text = std::fs::read_to_string(&record).expect("record");
    std::fs::write(&record, text.replace("\"version\": 1", "\"version\": 9")).expect("edit");
    let out = lab.review(&["--resume", &dir.display().to_string()]);
    out.assert_no_panic().assert_status(1);
    assert!(
        out.stderr.contains("version 9 is not known"),
        "{}",
        out.stderr
    );
    assert!(runs(&lab).is_empty(), "an unreadable record is not listed");
    let out = lab.review(&["--phase", "3", "--resume"]);
    out.assert_no_panic().assert_status(1);
    assert!(
        out.stderr.contains("no resumable review run found"),
        "{}",
        out.stderr
    );
    let gone = lab.tmp.join("gsd-review-gone");
    let out = lab.review(&["--resume", &gone.display().to_string()]);
    out.assert_no_panic().assert_status(1);
    assert!(out.stderr.contains("no review run at"), "{}", out.stderr);
    assert_eq!(starts(&lab, "beta"), 1);
}

// ---------------------------------------------------------------------------------------------
// Rate limits (run::rate_limit)
// ---------------------------------------------------------------------------------------------

/// The quota answer of the fake lane (`ratelimit <n>` behaviour), declared as data.
fn quota_rule(lane: &mut Value) {
    lane["reviewer"]["rateLimit"] =
        json!({"exitCodes": [75], "stderrPatterns": ["quota exceeded"]});
}

fn journal_statuses(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("gsd-review-journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| {
            format!(
                "{}:{}",
                v["identity"].as_str().unwrap_or(""),
                v["status"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn a_cli_quota_message_is_retried_and_reported() {
    let lab = Lab::new();
    lab.lane("alpha", quota_rule);
    lab.lane("beta", |_| {});
    lab.behave("alpha", "ratelimit 1");
    lab.behave("beta", "stub");
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(starts(&lab, "alpha"), 2, "one retry after the quota answer");
    assert!(
        out.stderr
            .contains("info: reviewer alpha rate-limited (exit status 75"),
        "{}",
        out.stderr
    );
    let reviews = lab.reviews();
    assert!(
        reviews.contains("# fake-alpha review after 1 rate-limited runs\n\n> [gsd-lane] rate-limited, retried 1 times\n\n---"),
        "{reviews}"
    );
    let dir = run_dir_of(&out);
    // Lanes run concurrently: the journal is in completion order, each lane's lines in order.
    let lines = journal_statuses(&dir);
    let alpha: Vec<&String> = lines.iter().filter(|l| l.starts_with("alpha:")).collect();
    assert_eq!(alpha, ["alpha:rate-limited", "alpha:review"]);
    assert!(lines.contains(&"beta:stub".to_owned()), "{lines:?}");
}

#[test]
fn failures_that_are_not_rate_limits_are_never_retried() {
    let lab = Lab::new();
    lab.lane("alpha", quota_rule);
    lab.lane("beta", |_| {});
    lab.lane("gamma", |_| {});
    lab.behave("alpha", "fail");
    lab.behave("beta", "ratelimit 1"); // a quota message, but beta declares no rateLimit
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(starts(&lab, "alpha"), 1);
    assert_eq!(starts(&lab, "beta"), 1);
    assert!(!lab.reviews().contains("rate-limited"));
}

#[test]
fn an_invalid_rate_limit_declaration_is_a_validation_error() {
    let lab = Lab::new();
    lab.lane("alpha", |lane| {
        lane["reviewer"]["rateLimit"] = json!({"stderrPatterns": [".*"], "regex": true});
    });
    lab.lane("beta", |_| {});
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic();
    assert_ne!(out.code, Some(0));
    assert_eq!(starts(&lab, "alpha"), 0, "a rejected lane never runs");
    let folder = lab.env.overlay_dir(util::Scope::Global, "fake-alpha");
    let (_, report) = util::validate(&lab.env, &[folder]);
    let codes = report.codes();
    assert!(codes.iter().any(|c| c == "RB-RATELIMIT"), "{codes:?}");
}

/// A lab with the first-party ollama lane pointed at `server` (model pinned: no discovery).
fn ollama_lab(server: &Server) -> Lab {
    let lab = Lab::new();
    lab.config(&json!({"review": {"ollama_host": server.url(), "models": {"ollama": "m"}}}));
    lab
}

fn limited(status: u16, retry_after: Option<&str>) -> Reply {
    let mut headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
    if let Some(value) = retry_after {
        headers.push(("Retry-After".to_owned(), value.to_owned()));
    }
    Reply::Respond {
        status,
        headers,
        body: br#"{"error":{"message":"slow down"}}"#.to_vec(),
    }
}

fn http_review(steps: Vec<Reply>) -> (Server, Lab, Outcome) {
    let server = Server::start(&[
        (
            "GET",
            "/v1/models",
            json_reply(200, &json!({"object": "list", "data": [{"id": "m"}]})),
        ),
        ("POST", "/v1/chat/completions", sequence(steps)),
    ]);
    let lab = ollama_lab(&server);
    let out = lab.review(&["--phase", "3", "--ollama"]);
    out.assert_no_panic();
    (server, lab, out)
}

#[test]
fn http_429_with_retry_after_is_retried() {
    let (server, lab, out) = http_review(vec![
        limited(429, Some("0")),
        chat_reply("HTTP review after a 429"),
    ]);
    out.assert_status(0);
    assert_eq!(server.post_count(), 2);
    assert!(
        out.stderr
            .contains("rate-limited (HTTP 429 Too Many Requests); retrying in 0 ms"),
        "{}",
        out.stderr
    );
    assert!(lab
        .reviews()
        .contains("HTTP review after a 429\n\n> [gsd-lane] rate-limited, retried 1 times\n"));
}

#[test]
fn http_429_without_retry_after_backs_off_and_retries() {
    let (server, _lab, out) = http_review(vec![limited(429, None), chat_reply("second try")]);
    out.assert_status(0);
    assert_eq!(server.post_count(), 2);
    assert!(out.stderr.contains("retrying in 1000 ms"), "{}", out.stderr);
}

#[test]
fn http_503_is_retried_only_with_retry_after() {
    let (server, _lab, out) = http_review(vec![limited(503, Some("0")), chat_reply("after 503")]);
    out.assert_status(0);
    assert_eq!(server.post_count(), 2);
    let (server, _lab, out) = http_review(vec![limited(503, None), chat_reply("never asked")]);
    out.assert_status(2);
    assert_eq!(
        server.post_count(),
        1,
        "a 503 without Retry-After is a plain failure"
    );
}

#[test]
fn http_retries_stop_at_the_maximum_count() {
    let (server, lab, out) = http_review(vec![limited(429, Some("0"))]);
    out.assert_status(2);
    assert_eq!(server.post_count(), 4, "one attempt and three retries");
    // No lane result: the stub is in the saved diagnostics, not in a REVIEWS.md.
    let stub = saved_stub(&lab);
    assert!(stub.contains(
        "> [gsd-lane] rate-limited, retried 3 times; final failure: HTTP 429 Too Many Requests (no retry left (at most 3))\n"
    ), "{stub}");
}

/// The ollama stub of the newest saved diagnostics (a run with no lane result).
fn saved_stub(lab: &Lab) -> String {
    let saved = crate::review::saved_diagnostics(lab);
    let newest = saved.last().expect("saved diagnostics");
    std::fs::read_to_string(newest.join("gsd-review-ollama.md")).expect("saved stub")
}

#[test]
fn no_retry_waits_past_the_lane_deadline() {
    let date = "Fri, 01 Jan 2100 00:00:00 GMT";
    for retry_after in ["3600", date] {
        let (server, lab, out) = http_review(vec![
            limited(429, Some(retry_after)),
            chat_reply("too late"),
        ]);
        out.assert_status(2);
        assert_eq!(server.post_count(), 1, "{retry_after}");
        let stub = saved_stub(&lab);
        assert!(stub.contains("would pass the lane's deadline"), "{stub}");
    }
}

#[test]
fn resume_is_refused_when_the_selection_changed() {
    let (lab, first) = failed_beta();
    let dir = run_dir_of(&first);
    std::fs::remove_file(lab.bin.join("fake-beta")).expect("uninstall beta");
    let out = lab.review(&["--resume", &dir.display().to_string()]);
    out.assert_no_panic().assert_status(2);
    assert!(
        out.stderr
            .contains("the selection changed (was all_flag [alpha,beta], now all_flag [alpha])"),
        "{}",
        out.stderr
    );
    assert_eq!(starts(&lab, "alpha"), 1);
}

#[test]
fn a_running_review_is_listed_as_running_and_cannot_be_resumed_twice() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.behave("alpha", "sleep 30");
    let child = lab
        .command(&["--phase", "3", "--all"])
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !lab.marks("alpha").iter().any(|m| m.kind == "child") {
        assert!(Instant::now() < deadline, "lane did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let listed = runs(&lab);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["state"], "running");
    let dir = listed[0]["runDir"].as_str().expect("runDir").to_owned();
    let second = lab.review(&["--resume", &dir]);
    second.assert_no_panic().assert_status(2);
    assert!(
        second
            .stderr
            .contains("is in use by another gsd-lane review"),
        "{}",
        second.stderr
    );
    let status = Command::new("/bin/kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    finish(child, "interrupted review").assert_status(130);
    assert_eq!(runs(&lab)[0]["state"], "resumable");
}

/// Issue 21 item 7: `--resume` takes the lane flags the original run had; a different
/// selection is refused naming the setting and both values.
#[test]
fn issue21_resume_accepts_the_same_lane_flags_and_names_a_different_selection() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.lane("gamma", |_| {});
    lab.behave("beta", "stub");
    let first = lab.review(&["--phase", "3", "--alpha", "--beta"]);
    first.assert_no_panic().assert_status(0);
    let dir = run_dir_of(&first);
    let d = dir.display().to_string();
    let other = lab.review(&["--resume", &d, "--alpha", "--gamma"]);
    assert_ne!(other.code, Some(0), "{}", other.stderr);
    assert!(other.stderr.contains("alpha,beta"), "{}", other.stderr);
    assert!(other.stderr.contains("alpha,gamma"), "{}", other.stderr);
    assert!(!other.stderr.contains("plan.argv"), "{}", other.stderr);
    lab.behave("beta", "review");
    let same = lab.review(&["--resume", &d, "--alpha", "--beta"]);
    same.assert_no_panic().assert_status(0);
    assert!(
        same.stderr.contains("keeping alpha; running beta"),
        "{}",
        same.stderr
    );
}
