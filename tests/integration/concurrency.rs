//! Bounded concurrency (issue 25 item 4): without `--jobs`, a review runs at most as many lanes
//! at once as the open-file limit allows, the others wait in a queue, and every lane completes.

use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::review::{finish, Lab};

/// 128 lanes, each holding its descriptors for a second, under a hard and soft limit of 256
/// descriptors: with every lane started at once this ran out of descriptors (`EMFILE`).
#[test]
fn a_review_of_128_lanes_at_256_descriptors_completes_every_lane() {
    let lab = Lab::new();
    let slugs: Vec<String> = (0..128).map(|n| format!("l{n:03}")).collect();
    for slug in &slugs {
        lab.lane(slug, |_| {});
        lab.behave(slug, "sleep 1");
    }
    let template = lab.command(&["--phase", "3", "--all", "--json"]);
    let mut command = Command::new("prlimit");
    command
        .arg("--nofile=256:256")
        .arg("--")
        .arg(template.get_program())
        .args(template.get_args())
        .env_clear()
        .envs(
            template
                .get_envs()
                .filter_map(|(key, value)| value.map(|value| (key, value))),
        )
        .current_dir(&lab.env.project)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = command.spawn().expect("prlimit runs");
    let out = finish(child, "review of 128 lanes at 256 descriptors");
    let stdout = &out.stdout;
    let stderr = &out.stderr;
    assert!(
        !stdout.contains("EMFILE") && !stderr.contains("EMFILE"),
        "a lane ran out of descriptors:\n{stderr}"
    );
    out.assert_status(0);
    let reviews = std::fs::read_to_string(
        lab.env
            .project
            .join(".planning/phases/03-billing/03-REVIEWS.md"),
    )
    .expect("REVIEWS.md written");
    for slug in &slugs {
        assert!(
            reviews.contains(&format!("# fake-{slug} review after 1 s")),
            "{slug}'s review is missing"
        );
    }
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let banner = events
        .iter()
        .find(|e| e["event"] == "review")
        .expect("a review event");
    let jobs = banner["jobs"].as_u64().expect("the banner names the bound");
    assert!(
        (1..128).contains(&jobs),
        "the default bound follows the open-file limit: {jobs}"
    );
}

/// Lanes past `--jobs` wait in a queue the progress shows: a `lane_queued` event per waiting
/// identity, in run order with its place, before any lane starts; in plain output, how many wait.
#[test]
fn lanes_past_jobs_wait_in_a_queue_the_progress_shows() {
    let lab = Lab::new();
    for slug in ["alpha", "beta", "gamma"] {
        lab.lane(slug, |_| {});
    }
    let out = lab.review(&["--phase", "3", "--all", "--jobs", "1", "--json"]);
    out.assert_no_panic().assert_status(0);
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        kinds[..6],
        [
            "review",
            "lane_queued",
            "lane_queued",
            "lane_start",
            "lane_end",
            "lane_start"
        ],
        "{}",
        out.stdout
    );
    let started: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "lane_start")
        .map(|e| &e["identity"])
        .collect();
    assert_eq!(started.len(), 3, "{}", out.stdout);
    let queued: Vec<(&Value, &Value)> = events
        .iter()
        .filter(|e| e["event"] == "lane_queued")
        .map(|e| (&e["identity"], &e["position"]))
        .collect();
    assert_eq!(
        queued,
        [(started[1], &json!(1)), (started[2], &json!(2))],
        "the lanes after the first wait, in run order"
    );

    let plain = lab.review(&["--phase", "3", "--all", "--jobs", "1"]);
    plain.assert_no_panic().assert_status(0);
    assert!(
        plain
            .stdout
            .contains("\n2 of 3 reviewers wait in a queue (at most 1 at once; --jobs sets it)\n"),
        "{}",
        plain.stdout
    );
    let all_at_once = lab.review(&["--phase", "3", "--all", "--jobs", "3"]);
    assert!(
        !all_at_once.stdout.contains("wait in a queue"),
        "{}",
        all_at_once.stdout
    );
}
