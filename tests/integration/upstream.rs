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
