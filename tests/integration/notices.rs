//! What a review says (its notices) reaches the user in time and in `--json`: the stages say
//! notices into one collector and one printer writes them at the stage boundaries
//! (`host/src/review/notice.rs`, issue 25 item 6), so a notice said before the lanes start is
//! on stderr before any lane runs. The fake lane `stderr-so-far <file>` copies what gsd-lane
//! had written to its stderr (redirected to that file) into its review: the review shows what
//! was on the terminal when the lane ran, whatever the scheduling.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::review::Lab;

/// Bound on one review (a hang fails the test instead of blocking the suite).
const TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `review <args>` with its stderr written to `stderr_file` (stdout captured); returns
/// the exit code and stdout.
fn review_with_stderr_in(lab: &Lab, args: &[&str], stderr_file: &Path) -> (Option<i32>, String) {
    let file = std::fs::File::create(stderr_file).expect("stderr file");
    let mut child = lab
        .command(args)
        .stderr(Stdio::from(file))
        .spawn()
        .expect("spawn gsd-lane");
    let mut pipe = child.stdout.take().expect("stdout piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    let status = crate::util::wait_until(
        &mut child,
        &format!("review {args:?}"),
        Instant::now() + TIMEOUT,
        TIMEOUT,
    );
    (status.code(), reader.join().expect("stdout reader"))
}

/// Where gsd-lane's stderr goes for the lane `slug` to read.
fn stderr_file(lab: &Lab) -> PathBuf {
    lab.env.home.join("gsd-stderr.log")
}

/// The part of the review REVIEWS.md shows for `section` that the lane copied from stderr.
fn stderr_seen_by(reviews: &str, section: &str) -> String {
    let start = reviews
        .find(&format!("## {section} Review"))
        .unwrap_or_else(|| panic!("no {section} section:\n{reviews}"));
    let rest = &reviews[start..];
    let seen = rest
        .find("Stderr so far:")
        .unwrap_or_else(|| panic!("the lane did not copy stderr:\n{rest}"));
    let rest = &rest[seen..];
    rest[..rest.find("\n---").unwrap_or(rest.len())].to_owned()
}

#[test]
fn a_skipped_default_reviewer_is_said_before_any_lane_starts() {
    let lab = Lab::new();
    lab.lane("beta", |_| {});
    let stderr = stderr_file(&lab);
    lab.behave("beta", &format!("stderr-so-far {}", stderr.display()));
    lab.config(&json!({"review": {"default_reviewers": ["beta", "claude"]}}));
    let (code, stdout) = review_with_stderr_in(&lab, &["--phase", "3"], &stderr);
    let said = std::fs::read_to_string(&stderr).expect("stderr");
    assert_eq!(code, Some(0), "{stdout}\n{said}");
    let seen = stderr_seen_by(&lab.reviews(), "Beta");
    for line in [
        "warning: configured default reviewer claude is skipped: not available on this host (",
        "review: selection source=config_default reviewers=beta",
    ] {
        assert!(said.contains(line), "not said at all: {line}\n{said}");
        assert!(
            seen.contains(line),
            "said only after the lane ran: {line}\nthe lane saw:\n{seen}\nstderr:\n{said}"
        );
    }
    // What the review says after the lanes (REVIEWS.md written) was not there yet.
    assert!(said.contains("review: wrote "), "{said}");
    assert!(!seen.contains("review: wrote "), "{seen}");
}

#[test]
fn lanes_not_detected_are_said_before_any_lane_starts() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let stderr = stderr_file(&lab);
    lab.behave("alpha", &format!("stderr-so-far {}", stderr.display()));
    // No flags and no config: every lane is a candidate, and the first-party ones are not on
    // this PATH.
    let (code, stdout) = review_with_stderr_in(&lab, &["--phase", "3"], &stderr);
    let said = std::fs::read_to_string(&stderr).expect("stderr");
    assert_eq!(code, Some(0), "{stdout}\n{said}");
    let undetected = said
        .lines()
        .find(|l| l.starts_with("info: ") && l.contains("not detected on this host"))
        .unwrap_or_else(|| panic!("no undetected summary:\n{said}"));
    let seen = stderr_seen_by(&lab.reviews(), "Alpha");
    assert!(
        seen.contains(undetected),
        "said only after the lane ran: {undetected}\nthe lane saw:\n{seen}"
    );
}

#[test]
fn the_complete_event_lists_the_notices_printed_before_it() {
    let lab = Lab::new();
    lab.lane("beta", |_| {});
    lab.config(&json!({"review": {"default_reviewers": ["beta", "claude"]}}));
    let out = lab.review(&["--phase", "3", "--json"]);
    out.assert_no_panic().assert_status(0);
    let complete: Value = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("one JSON object per line"))
        .find(|e| e["event"] == "complete")
        .unwrap_or_else(|| panic!("no complete event:\n{}", out.stdout));
    let notices = complete["notices"].as_array().expect("notices array");
    let skipped = notices
        .iter()
        .find(|n| {
            n["text"].as_str().is_some_and(|t| {
                t.starts_with("configured default reviewer claude is skipped: not available")
            })
        })
        .unwrap_or_else(|| panic!("the skipped reviewer is not in {notices:?}"));
    assert_eq!(skipped["level"], "warning");
    assert!(notices
        .iter()
        .any(|n| n["level"] == "review"
            && n["text"] == "selection source=config_default reviewers=beta"));
    // Each is the line on stderr, once, without its prefix in `text`.
    for notice in notices {
        let line = format!(
            "{}: {}",
            notice["level"].as_str().expect("level"),
            notice["text"].as_str().expect("text")
        );
        assert_eq!(
            out.stderr.lines().filter(|l| *l == line).count(),
            1,
            "{line}\n{}",
            out.stderr
        );
    }
}

#[test]
fn quiet_leaves_info_notices_out_of_stderr_and_the_complete_event() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let out = lab.gsd(&["-q", "review", "--phase", "3", "--json"]);
    out.assert_no_panic().assert_status(0);
    assert!(!out.stderr.contains("info: "), "{}", out.stderr);
    let complete: Value = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "complete")
        .expect("complete event");
    let notices = complete["notices"].as_array().expect("notices array");
    assert!(notices.iter().all(|n| n["level"] != "info"), "{notices:?}");
    // Without -q the same review says which lanes were not detected.
    let out = lab.review(&["--phase", "3", "--json"]);
    assert!(
        out.stderr.contains("not detected on this host"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_hostile_phase_directory_name_reaches_stderr_escaped() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    let phases = lab.env.project.join(".planning/phases");
    let hostile = "03-bill\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}ing";
    std::fs::rename(phases.join("03-billing"), phases.join(hostile)).expect("rename phase dir");
    // A second REVIEWS.md beside the phase's own: the lookup warns, naming the directory.
    std::fs::write(phases.join(hostile).join("REVIEWS.md"), "old\n").expect("stray REVIEWS.md");
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic().assert_status(0);
    for raw in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(
            !out.stderr.contains(raw),
            "{raw:?} reached stderr raw:\n{}",
            out.stderr.escape_debug()
        );
    }
    // The lines are there, with the name escaped.
    let escaped = "03-bill\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{202e}ing";
    for prefix in ["review: wrote ", "warning: "] {
        assert!(
            out.stderr
                .lines()
                .any(|l| l.starts_with(prefix) && l.contains(escaped)),
            "no {prefix:?} line naming {escaped}:\n{}",
            out.stderr
        );
    }
}
