//! Change detection of a review (issue 25, items 2 and 5): one walk before the lanes and one
//! after when they run at once, the changes said to have been made during the review; attributed
//! to the lane with `--jobs 1`; and never a change that was not observed, past every bound.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::sandbox::{review_command, review_lab};
use crate::util::{self, TestEnv};

/// Bound on one gsd-lane command.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// A lane body that reads its prompt and prints a review.
const QUIET: &str = "cat > /dev/null\necho '# Review'\necho fine\n";

/// The REVIEWS.md of phase 3 in the review lab.
fn reviews(env: &TestEnv) -> String {
    util::read_text(
        &env.project
            .join(".planning/phases/03-billing/03-REVIEWS.md"),
    )
}

/// `gsd-lane review --phase 3 <args>` in the lab, with `vars` set; must succeed.
fn review(env: &TestEnv, bin: &Path, args: &[&str], vars: &[(&str, &str)]) -> util::Outcome {
    let mut all = vec!["--phase", "3"];
    all.extend_from_slice(args);
    let mut command: Command = review_command(env, bin, &all);
    for (name, value) in vars {
        command.env(name, value);
    }
    let (out, _) = util::run_bounded(command, COMMAND_TIMEOUT);
    out.assert_no_panic().assert_status(0);
    out
}

/// A lab of lanes `one` (whose body is `body`) and `two` (which changes nothing), with
/// `files` files `a000`… at the project's top.
fn lab(body: &str, files: usize) -> (TestEnv, std::path::PathBuf) {
    let (env, bin) = review_lab(&[("one", body), ("two", QUIET)]);
    for i in 0..files {
        std::fs::write(env.project.join(format!("a{i:04}")), "x").expect("write");
    }
    (env, bin)
}

#[test]
fn lanes_at_once_report_a_change_as_made_during_the_review() {
    let chmod = "chmod 600 \"$PWD/a0001\"\ncat > /dev/null\necho '# Review'\necho fine\n";
    // `detect`, and `enforce` under the Landlock fallback (which does not govern chmod).
    let fallback = [("GSD_LANE_NO_NAMESPACES", "1")];
    for (mode, vars) in [("detect", &[][..]), ("enforce", &fallback[..])] {
        let (env, bin) = lab(chmod, 3);
        let out = review(&env, &bin, &["--one", "--two", "--sandbox", mode], vars);
        let text = reviews(&env);
        assert!(
            text.contains("the repository was modified during the review")
                && text.contains("mode changed a0001"),
            "{mode} {vars:?}: {text}"
        );
        assert!(!text.contains("this reviewer modified"), "{text}");
        assert!(out.stderr.contains("during the review"), "{}", out.stderr);
    }
    // Under the read-only view the chmod is refused: nothing changed, nothing to say.
    if crate::view::view_available() {
        let (env, bin) = lab(chmod, 3);
        review(&env, &bin, &["--one", "--two", "--sandbox", "enforce"], &[]);
        assert!(!reviews(&env).contains("modified"), "{}", reviews(&env));
    }
}

#[test]
fn lanes_one_at_a_time_are_each_blamed_for_their_own_change() {
    let chmod = "chmod 600 \"$PWD/a0001\"\ncat > /dev/null\necho '# Review'\necho fine\n";
    let (env, bin) = lab(chmod, 3);
    let out = review(
        &env,
        &bin,
        &["--one", "--two", "--sandbox", "detect", "--jobs", "1"],
        &[],
    );
    let text = reviews(&env);
    let warnings: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("modified the repository"))
        .collect();
    assert_eq!(
        warnings,
        ["> **Warning:** this reviewer modified the repository: mode changed a0001"],
        "{text}"
    );
    assert!(!text.contains("during the review"), "{text}");
    assert!(out.stderr.contains("lane one"), "{}", out.stderr);
}

#[test]
fn lanes_that_change_nothing_report_nothing_past_every_bound() {
    for bound in [
        ("GSD_LANE_DETECT_MAX_ENTRIES", "100"),
        ("GSD_LANE_DETECT_MAX_WALK_MS", "1"),
    ] {
        for jobs in ["1", "2"] {
            let (env, bin) = lab(QUIET, 1500);
            review(
                &env,
                &bin,
                &["--one", "--two", "--sandbox", "detect", "--jobs", jobs],
                &[bound],
            );
            let text = reviews(&env);
            for false_alarm in ["modified", "removed", "created", "changed"] {
                assert!(
                    !text.contains(&format!("{false_alarm} a")),
                    "{bound:?} --jobs {jobs}: {text}"
                );
            }
            assert!(!text.contains("modified the repository"), "{text}");
            // The entry bound always cuts this walk short; the time bound may not on a fast
            // machine, and then nothing needs saying.
            if bound.0.ends_with("ENTRIES") {
                assert!(
                    text.contains("the check for repository changes was partial")
                        && text.contains(bound.0),
                    "{bound:?} --jobs {jobs}: {text}"
                );
            }
        }
    }
}

#[test]
fn past_the_entry_bound_a_change_in_the_covered_part_is_reported() {
    // The top directory is read first, its names in sorted order: `.git`, `.planning`, then
    // `a0000`… up to the bound. `a0010` and `a0020` are inside it, `a1400` is not.
    let body =
        "chmod 600 \"$PWD/a0010\"\nrm \"$PWD/a0020\"\nrm \"$PWD/a1400\"\n".to_owned() + QUIET;
    for jobs in ["1", "2"] {
        let (env, bin) = lab(&body, 1500);
        review(
            &env,
            &bin,
            &["--one", "--two", "--sandbox", "detect", "--jobs", jobs],
            &[("GSD_LANE_DETECT_MAX_ENTRIES", "500")],
        );
        let text = reviews(&env);
        assert!(
            text.contains("mode changed a0010") && text.contains("removed a0020"),
            "--jobs {jobs}: {text}"
        );
        assert!(!text.contains("a1400"), "--jobs {jobs}: {text}");
        assert!(text.contains("partial"), "--jobs {jobs}: {text}");
    }
}
