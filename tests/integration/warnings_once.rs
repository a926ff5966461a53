//! Every warning of a review is said once (issue 21 item 7): after Ctrl-C, and when an
//! explicitly requested lane is held back or not ready. Each test counts every `warning:` and
//! `error:` line of stderr; a line said twice fails, naming it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::http_server::Server;
use crate::review::{finish, journaled, Lab};
use crate::util::{self, Scope};

/// Bound on one command run on a terminal.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// A config that gives a review three warnings of its own: a weaker sandbox, a repository
/// write allowance and an unusable `review.parallel_lanes`, each taken from the repository.
fn warning_config() -> serde_json::Value {
    json!({"review": {
        "sandbox": "detect",
        "allow_repository_writes": ["alpha"],
        "parallel_lanes": "sometimes",
    }})
}

/// The `warning:` and `error:` lines of `stderr` said more than once, with their counts.
fn repeated(stderr: &str) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for line in stderr.lines() {
        let line = line.trim_end();
        if line.starts_with("warning:") || line.starts_with("error:") {
            *counts.entry(line).or_insert(0) += 1;
        }
    }
    counts.retain(|_, n| *n > 1);
    counts
}

/// Asserts that each warning the config causes is there, and that no warning or error line
/// is said twice.
fn assert_said_once(stderr: &str, expected: &[&str]) {
    for needle in expected {
        let count = stderr
            .lines()
            .filter(|l| l.starts_with("warning:") && l.contains(needle))
            .count();
        assert_eq!(count, 1, "warning {needle:?} said {count} times:\n{stderr}");
    }
    let twice = repeated(stderr);
    assert!(twice.is_empty(), "said more than once: {twice:?}\n{stderr}");
}

/// The config's warnings, each named by a part of its line.
const CONFIG_WARNINGS: [&str; 3] = [
    "sets review.sandbox to detect",
    "sets review.allow_repository_writes to [\"alpha\"]",
    "review.parallel_lanes",
];

#[test]
fn warnings_are_said_once_after_ctrl_c() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "sleep 30");
    lab.config(&warning_config());
    let child = lab
        .command(&["--phase", "3", "--alpha", "--beta"])
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Sequential (the unusable parallel_lanes): alpha journaled, then beta's sleep started.
    while !(journaled(&lab.tmp, "alpha") && lab.marks("beta").iter().any(|m| m.kind == "child")) {
        assert!(Instant::now() < deadline, "the lanes did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("/bin/kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let out = finish(child, "interrupted review");
    out.assert_no_panic().assert_status(130);
    assert!(
        lab.reviews().contains("## Alpha Review"),
        "the interrupted review still wrote REVIEWS.md"
    );
    assert_said_once(&out.stderr, &CONFIG_WARNINGS);
}

/// Ctrl-C typed into a real terminal (util-linux `script`): the terminal's SIGINT reaches the
/// whole foreground process group, and stdout and stderr share the screen with the live
/// display. Each warning is written once and still on the final screen.
#[test]
fn warnings_are_said_once_after_ctrl_c_on_a_terminal() {
    let script = Path::new("/usr/bin/script");
    if !script.is_file() {
        eprintln!("skipped: no util-linux script(1) to allocate a pseudo-terminal");
        return;
    }
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "sleep 30");
    lab.config(&warning_config());
    let inner = lab.gsd_command(&["review"]);
    let line = format!(
        "stty cols 400 rows 60; exec '{}' review --phase 3 --alpha --beta",
        util::bin().display()
    );
    let mut child = Command::new(script)
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .env_clear()
        .envs(inner.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("TERM", "xterm")
        .current_dir(inner.get_current_dir().expect("project dir"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn script");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(journaled(&lab.tmp, "alpha") && lab.marks("beta").iter().any(|m| m.kind == "child")) {
        assert!(Instant::now() < deadline, "the lanes did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"\x03").expect("type Ctrl-C");
    stdin.flush().expect("flush");
    let out = util::finish_bounded(child, "review on a terminal".to_owned(), COMMAND_TIMEOUT);
    drop(stdin);
    let rows = crate::terminal::screen(&out.stdout);
    assert!(
        rows.iter().any(|r| r.contains("REVIEW INTERRUPTED")),
        "{}",
        rows.join("\n")
    );
    for needle in CONFIG_WARNINGS {
        let written = out.stdout.matches(needle).count();
        assert_eq!(
            written, 1,
            "{needle:?} written {written} times:\n{}",
            out.stdout
        );
        let shown = rows.iter().filter(|r| r.contains(needle)).count();
        assert_eq!(
            shown,
            1,
            "{needle:?} shown {shown} times:\n{}",
            rows.join("\n")
        );
    }
    let screen = rows.join("\n");
    let twice = repeated(&screen);
    assert!(twice.is_empty(), "said more than once: {twice:?}\n{screen}");
}

#[test]
fn warnings_are_said_once_when_an_explicit_lane_is_not_ready() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    // beta's program is gone: installed, explicitly requested, not ready.
    std::fs::remove_file(lab.bin.join("fake-beta")).expect("remove fake-beta");
    lab.config(&warning_config());
    let out = lab.review(&["--phase", "3", "--alpha", "--beta"]);
    out.assert_no_panic().assert_status(2);
    assert!(
        out.stderr.contains("explicit reviewer 'beta'"),
        "{}",
        out.stderr
    );
    assert_said_once(&out.stderr, &CONFIG_WARNINGS[..2]);
}

#[test]
fn warnings_are_said_once_when_an_explicit_lane_is_held_back() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let first = crate::probe_once::openai_server();
    let mut http = crate::util::read_json(&crate::util::fixture(
        "run/http/acme-review/capability.json",
    ));
    http["id"] = json!("zz-acme");
    lab.env.write_overlay(Scope::Global, "zz-acme", &http);
    // A first run pins acme_local's destination on first use.
    lab.config(&json!({"review": {"acme_host": first.url()}}));
    let run_dir = lab.env.root.path().join("run-dir");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review this.\n").expect("prompt");
    let dir = run_dir.display().to_string();
    lab.gsd(&["run", "acme_local", "--run-dir", &dir, "--json"])
        .assert_no_panic()
        .assert_status(0);
    // The repository's config now names another server: held back (egress_host_changed).
    let other = Server::start(&[]);
    let mut config = warning_config();
    config["review"]["acme_host"] = json!(other.url());
    lab.config(&config);
    let out = lab.review(&["--phase", "3", "--alpha", "--acme-local"]);
    out.assert_no_panic().assert_status(2);
    assert!(
        out.stderr.contains(
            "error: explicit reviewer 'acme_local' is not available on this host \
             (egress_host_changed"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(
        other.connections(),
        0,
        "the held-back lane contacted its host"
    );
    let block = out
        .stderr
        .matches("the destination pinned on first use is")
        .count();
    assert_eq!(block, 1, "the block said {block} times:\n{}", out.stderr);
    assert_said_once(&out.stderr, &CONFIG_WARNINGS[..2]);
}

/// A damaged consent store holds back every project-scope lane: said once per review, though
/// the registry is loaded more than once (the lane flags, then the review itself).
#[test]
fn a_damaged_consent_store_is_said_once() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("delta", |_| {});
    let project = lab.env.overlay_dir(Scope::Project, "fake-delta");
    std::fs::create_dir_all(project.parent().expect("parent")).expect("project capabilities");
    std::fs::rename(lab.env.overlay_dir(Scope::Global, "fake-delta"), &project)
        .expect("move delta to the project");
    let store = lab.env.gsd_home.join(".gsd/consent.json");
    std::fs::create_dir_all(store.parent().expect("parent")).expect("store dir");
    std::fs::write(&store, "{ damaged").expect("damage the store");
    lab.config(&warning_config());
    // Without the held-back lane, then naming it explicitly.
    for (args, status) in [(&["--alpha"][..], 0), (&["--alpha", "--delta"][..], 2)] {
        let mut full = vec!["--phase", "3"];
        full.extend_from_slice(args);
        let out = lab.review(&full);
        out.assert_no_panic();
        eprintln!("{args:?}:\n{}", out.stderr);
        let damage = out
            .stderr
            .lines()
            .filter(|l| l.contains("project-scope lanes stay inactive"))
            .count();
        assert_eq!(
            damage, 1,
            "{args:?}: the damaged store said {damage} times:\n{}",
            out.stderr
        );
        out.assert_status(status);
        if status == 2 {
            // The held-back lane says why: the store, not a missing record.
            assert!(
                out.stderr
                    .contains("found but not activated: the consent store cannot be read:")
                    && !out.stderr.contains("no consent recorded"),
                "{}",
                out.stderr
            );
        }
        let expected = if status == 0 {
            &CONFIG_WARNINGS[..]
        } else {
            &[][..]
        };
        assert_said_once(&out.stderr, expected);
    }
}
