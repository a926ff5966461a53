//! The upstream's merged changes after 2026-08 (spec/upstream-since-2026-08.md) that a review
//! shows end to end: `review.parallel_lanes` (decisions.md row 17).

use serde_json::json;

use crate::review::Lab;

/// Two fake lanes that each sleep, and whether their runs overlapped.
fn overlapped(lab: &Lab) -> bool {
    let alpha = lab.intervals("alpha")[0];
    let beta = lab.intervals("beta")[0];
    alpha.0 < beta.1 && beta.0 < alpha.1
}

fn lab() -> Lab {
    let lab = Lab::new();
    for slug in ["alpha", "beta"] {
        lab.lane(slug, |_| {});
        lab.behave(slug, "sleep 0.4");
    }
    lab
}

#[test]
fn parallel_lanes_false_runs_lanes_one_at_a_time_and_says_so() {
    let lab = lab();
    lab.config(&json!({"review": {"parallel_lanes": false}}));
    let out = lab.gsd(&["-v", "review", "--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    assert!(
        !overlapped(&lab),
        "lanes overlapped under parallel_lanes=false"
    );
    assert!(
        out.stderr
            .contains("lanes run one at a time (review.parallel_lanes is false, as --jobs 1)"),
        "{}",
        out.stderr
    );
}

#[test]
fn parallel_lanes_true_or_absent_keeps_concurrent_lanes() {
    for config in [json!({"review": {"parallel_lanes": true}}), json!({})] {
        let lab = lab();
        lab.config(&config);
        let out = lab.gsd(&["-v", "review", "--phase", "3", "--all"]);
        out.assert_no_panic().assert_status(0);
        assert!(overlapped(&lab), "{config}: lanes did not run at once");
        assert!(
            out.stderr.contains("lanes run concurrently"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn a_non_boolean_parallel_lanes_is_sequential_with_a_warning() {
    let lab = lab();
    lab.config(&json!({"review": {"parallel_lanes": "yes"}}));
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    assert!(!overlapped(&lab));
    assert!(
        out.stderr
            .contains("warning: review.parallel_lanes is \"yes\", not true or false"),
        "{}",
        out.stderr
    );
}

/// `gsd-lane run <slug> --json` in `lab` with its bin dir on PATH; the lane's review text.
fn run_lane(lab: &Lab, slug: &str) -> (serde_json::Value, String) {
    let run_dir = lab.env.root.path().join("run");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
    let run = run_dir.display().to_string();
    let out = lab.gsd(&["run", slug, "--json", "--run-dir", &run, "--repo-root", "."]);
    out.assert_no_panic();
    let review =
        std::fs::read_to_string(run_dir.join(format!("gsd-review-{slug}.md"))).unwrap_or_default();
    (out.json(), review)
}

/// upstream #2493 (decisions.md row 18): the first-party claude lane's child gets its two
/// `invoke.env` pairs on top of the inherited environment, and only that child.
#[test]
fn invoke_env_reaches_the_first_party_claude_child() {
    use std::os::unix::fs::PermissionsExt;
    let lab = Lab::new();
    let claude = lab.bin.join("claude");
    std::fs::write(
        &claude,
        "#!/bin/sh\ncat >/dev/null\nprintf 'mds=%s memory=%s home=%s\\n' \
         \"$CLAUDE_CODE_DISABLE_CLAUDE_MDS\" \"$CLAUDE_CODE_DISABLE_AUTO_MEMORY\" \"${HOME:+set}\"\n",
    )
    .expect("fake claude");
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (result, review) = run_lane(&lab, "claude");
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(review, crate::util::uncited("mds=1 memory=1 home=set\n"));
}

/// decisions.md row 18: a third-party lane's `invoke.env` pairs are added to the minimal
/// environment its child starts from; nothing else of gsd-lane's environment comes along.
#[test]
fn a_third_party_lanes_invoke_env_reaches_its_child_on_the_minimal_environment() {
    use std::os::unix::fs::PermissionsExt;
    let lab = Lab::new();
    lab.lane("alpha", |lane| {
        lane["reviewer"]["invoke"]["env"] =
            json!({"ACME_MODE": "strict mode", "LC_ALL": "C", "constructor": "x"});
    });
    let script = lab.bin.join("fake-alpha");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat >/dev/null\nprintf 'mode=%s lc=%s ctor=%s secret=%s home=%s\\n' \
         \"$ACME_MODE\" \"$LC_ALL\" \"$(printenv constructor)\" \"${SECRET_TOKEN:-unset}\" \
         \"${HOME:+set}\"\n",
    )
    .expect("fake lane");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let run_dir = lab.env.root.path().join("run");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
    let run = run_dir.display().to_string();
    let mut command = lab.gsd_command(&[
        "run",
        "alpha",
        "--json",
        "--run-dir",
        &run,
        "--repo-root",
        ".",
    ]);
    command
        .env("SECRET_TOKEN", "hunter2")
        .env("LC_ALL", "POSIX");
    let out = crate::review::finish(command.spawn().expect("spawn"), "run alpha");
    out.assert_no_panic();
    let result = out.json();
    assert_eq!(result["ok"], true, "{result}");
    let review = std::fs::read_to_string(run_dir.join("gsd-review-alpha.md")).expect("review");
    assert_eq!(
        review,
        crate::util::uncited("mode=strict mode lc=C ctor=x secret=unset home=set\n")
    );
}

/// upstream #3649: `models:` / `model_sources:` between `plans_reviewed` and the rest, one
/// double-quoted entry per reviewer; a configured model with a newline is refused (unknown),
/// never written into the frontmatter.
#[test]
fn reviews_md_records_each_reviewers_model() {
    let lab = Lab::new();
    for slug in ["alpha", "beta"] {
        lab.lane(slug, |_| {});
    }
    lab.config(&json!({"review": {"models": {
        "alpha": "model-a:7b",
        "beta": "x\nreviewers: [evil]"
    }}}));
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    assert!(
        reviews.contains(
            "\nmodels:\n  alpha: \"model-a:7b\"\n  beta: \"unknown\"\nmodel_sources:\n  \
             alpha: \"pinned\"\n  beta: \"unknown\"\nplan_coverage:\n"
        ),
        "{reviews}"
    );
    assert!(!reviews.contains("reviewers: [evil]"), "{reviews}");
}

/// upstream #3649 §3.5 and #4275 §7.3 end to end: REVIEWS.md records the pinned model with
/// the effort that ran, as rendered for the host (codex clamps `minimal` to `low`), and
/// `run --json` reports the same record.
#[test]
fn reviews_md_records_the_model_with_the_effort_that_ran() {
    use std::os::unix::fs::PermissionsExt;
    let lab = Lab::new();
    let codex = lab.bin.join("codex");
    std::fs::write(
        &codex,
        "#!/bin/sh
cat >/dev/null
out=\nwhile [ \"$#\" -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done
         printf '## Summary\\n\\nsee src/a.rs:1\\n' > \"$out\"\n",
    )
    .expect("fake codex");
    std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    lab.config(&json!({"review": {
        "models": {"codex": "gpt-5.1-codex"},
        "effort": {"codex": "minimal"}
    }}));
    let (result, _) = run_lane(&lab, "codex");
    assert_eq!(
        result["model"],
        json!({"value": "gpt-5.1-codex (reasoning=low)", "source": "pinned"}),
        "{result}"
    );
    let out = lab.review(&["--phase", "3", "--codex"]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    assert!(
        reviews.contains(
            "\nmodels:\n  codex: \"gpt-5.1-codex (reasoning=low)\"\nmodel_sources:\n  codex: \"pinned\"\n"
        ),
        "{reviews}"
    );
}
