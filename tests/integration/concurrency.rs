//! Bounded concurrency (issue 25 item 4): without `--jobs`, a review runs at most as many lanes
//! at once as the open-file limit allows, the others wait in a queue, and every lane completes.

use std::process::{Command, Stdio};

use serde_json::Value;

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
