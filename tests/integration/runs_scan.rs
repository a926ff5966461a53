//! `runs` and `review --resume` find the newest run whatever else the runs folder and the
//! temporary directory hold (issue 25, item 5): 10,000 other entries in each.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::review::{finish, run_dir_of, Lab};

/// 5,000 directories without a record and 5,000 files in `dir`.
fn clutter(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("dir");
    for i in 0..5_000 {
        std::fs::create_dir(dir.join(format!("other-{i:05}"))).expect("dir");
        std::fs::write(dir.join(format!("file-{i:05}")), "x").expect("file");
    }
}

#[test]
fn the_newest_run_is_found_among_ten_thousand_other_entries() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "stub");
    let first = lab.review(&["--phase", "3", "--all"]);
    first.assert_no_panic().assert_status(0);
    let dir = run_dir_of(&first);
    clutter(&lab.env.gsd_home.join(".gsd/runs"));
    clutter(&lab.tmp);

    let mut command = Command::new(crate::util::bin());
    command
        .env_clear()
        .env("HOME", &lab.env.home)
        .env("GSD_HOME", &lab.env.gsd_home)
        .env("TMPDIR", &lab.tmp)
        .env("PATH", format!("{}:/usr/bin:/bin", lab.bin.display()))
        .current_dir(&lab.env.project)
        .args(["runs", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = finish(command.spawn().expect("spawn runs"), "runs --json");
    out.assert_no_panic().assert_status(0);
    let Value::Array(runs) = out.json() else {
        panic!("not an array: {}", out.stdout);
    };
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["state"], "resumable", "{runs:?}");
    // The other entries are counted, not named one by one.
    assert!(out.stderr.lines().count() < 20, "{}", out.stderr);
    assert!(
        out.stderr.contains("skipped 4990 more entries"),
        "{}",
        out.stderr
    );

    lab.behave("beta", "review");
    let out = lab.review(&["--phase", "3", "--resume"]);
    out.assert_no_panic().assert_status(0);
    assert!(
        out.stderr.contains("keeping alpha; running beta"),
        "{}",
        out.stderr
    );
    assert!(!dir.exists(), "the resumed run finished and was removed");
}
