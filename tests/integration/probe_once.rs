//! Plan, admit and probe once (issue 13, point 3): a `command-capability` probe runs
//! `<binary> --help`; the probe binary of these lanes appends its arguments to a log, so the
//! tests count how often `review` and `run` probed each lane.

use std::path::PathBuf;

use serde_json::json;

use crate::http_server::{json_text_reply, Server};
use crate::review::Lab;
use crate::util::Scope;

/// The needle the probe binaries print in their help text.
const NEEDLE: &str = "--review-needle";

/// Installs fake lane `slug` whose probe is `help-<slug> --help` (logged to
/// `$HOME/marks/help-<slug>.log`).
fn probed_lane(lab: &Lab, slug: &str) {
    let helper = format!("help-{slug}");
    lab.lane(slug, |lane| {
        lane["reviewer"]["probe"] = json!({
            "kind": "command-capability",
            "binary": helper,
            "needle": NEEDLE,
            "timeoutMs": 5000
        });
    });
    let script = lab.bin.join(&helper);
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nmkdir -p \"$HOME/marks\"\necho \"$*\" >> \"$HOME/marks/{helper}.log\"\necho 'usage: {helper} {NEEDLE}'\n"
        ),
    )
    .expect("probe script");
    make_executable(&script);
}

fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// How often `slug`'s probe binary was called with `--help`.
fn probes(lab: &Lab, slug: &str) -> usize {
    let log: PathBuf = lab.env.home.join("marks").join(format!("help-{slug}.log"));
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.trim() == "--help")
        .count()
}

fn reset(lab: &Lab, slugs: &[&str]) {
    for slug in slugs {
        let _ = std::fs::remove_file(lab.env.home.join("marks").join(format!("help-{slug}.log")));
    }
}

#[test]
fn review_probes_each_lane_once_whatever_the_selection() {
    let lab = Lab::new();
    for slug in ["alpha", "beta"] {
        probed_lane(&lab, slug);
    }
    for args in [
        vec!["--phase", "3", "--alpha", "--beta"],
        vec!["--phase", "3"],
        vec!["--phase", "3", "--all", "--jobs", "1"],
    ] {
        reset(&lab, &["alpha", "beta"]);
        let out = lab.review(&args);
        out.assert_no_panic().assert_status(0);
        assert!(
            lab.started("alpha") && lab.started("beta"),
            "{}",
            out.stderr
        );
        for slug in ["alpha", "beta"] {
            assert_eq!(probes(&lab, slug), 1, "{slug} probed with {args:?}");
        }
    }
}

#[test]
fn review_probes_a_lane_once_for_all_its_instances() {
    let lab = Lab::new();
    probed_lane(&lab, "alpha");
    lab.config(&json!({"review": {
        "default_reviewers": ["alpha", "alpha-x", "alpha-y"],
        "reviewer_instances": {"alpha-x": {"cli": "alpha", "model": "m-x"},
                               "alpha-y": {"cli": "alpha", "model": "m-y"}}}}));
    let out = lab.review(&["--phase", "3"]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(
        lab.marks("alpha")
            .iter()
            .filter(|m| m.kind == "start")
            .count(),
        3
    );
    assert_eq!(probes(&lab, "alpha"), 1, "{}", out.stderr);
}

#[test]
fn run_probes_its_lane_once() {
    let lab = Lab::new();
    probed_lane(&lab, "alpha");
    let run_dir = lab.env.root.path().join("run-dir");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review this.\n").expect("prompt");
    let dir = run_dir.display().to_string();
    let out = lab.gsd(&["run", "alpha", "--run-dir", &dir, "--json"]);
    out.assert_no_panic().assert_status(0);
    assert!(lab.started("alpha"), "{}", out.stderr);
    assert_eq!(probes(&lab, "alpha"), 1, "{}", out.stderr);
}

/// An OpenAI-compatible loopback server for the `ollama` lane (probe, discovery, chat).
pub(crate) fn openai_server() -> Server {
    let completion = json!({"model": "acme-7b", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "looks fine"}}]});
    Server::start(&[
        (
            "GET",
            "/v1/models",
            json_text_reply(200, json!({"data": [{"id": "acme-7b"}]}).to_string()),
        ),
        (
            "POST",
            "/v1/chat/completions",
            json_text_reply(200, completion.to_string()),
        ),
    ])
}

/// Pre-flight admits the HTTP lane `acme_local` against its first-use pin; then, while the
/// review runs (`--jobs 1`), the lane before it re-pins `acme_local` elsewhere: the runner's
/// re-verification blocks it before any request is sent, although pre-flight found it fine.
#[test]
fn a_destination_changed_after_pre_flight_is_still_blocked() {
    let lab = Lab::new();
    let server = openai_server();
    let mut http = crate::util::read_json(&crate::util::fixture(
        "run/http/acme-review/capability.json",
    ));
    http["id"] = json!("zz-acme");
    lab.env.write_overlay(Scope::Global, "zz-acme", &http);
    lab.config(&json!({"review": {"acme_host": server.url()}}));
    let pins = lab.env.gsd_home.join(".gsd/egress-pins.json");
    let run_dir = lab.env.root.path().join("run-dir");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review this.\n").expect("prompt");
    let dir = run_dir.display().to_string();
    lab.gsd(&["run", "acme_local", "--run-dir", &dir, "--json"])
        .assert_no_panic()
        .assert_status(0);
    let pinned = std::fs::read_to_string(&pins).expect("first-use pin");
    assert!(pinned.contains(&server.url()), "{pinned}");
    let moved = lab.env.root.path().join("moved-pins.json");
    std::fs::write(&moved, pinned.replace(&server.url(), "http://127.0.0.1:9")).expect("moved");
    // `alpha` runs first and moves the pin, as another process could while the review runs.
    lab.lane("alpha", |_| {});
    let script = lab.bin.join("fake-alpha");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > /dev/null\ncp '{}' '{}'\nprintf '# alpha review\\n\\nFine.\\n'\n",
            moved.display(),
            pins.display()
        ),
    )
    .expect("alpha script");
    make_executable(&script);
    let posts = server.post_count();
    let out = lab.review(&[
        "--phase",
        "3",
        "--alpha",
        "--acme-local",
        "--jobs",
        "1",
        "--sandbox",
        "off",
    ]);
    out.assert_no_panic().assert_status(2);
    assert!(
        out.stderr
            .contains("error: explicit reviewer 'acme_local' could not run (egress_host_changed"),
        "{}",
        out.stderr
    );
    assert_eq!(server.post_count(), posts, "nothing was sent to acme_local");
}
