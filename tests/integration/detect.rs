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

/// `review` of `lanes` quiet lanes under the Landlock fallback, started through `prlimit` with
/// the open-file limit (soft and hard) at `fd_limit`, with `siblings` empty files beside the
/// project; returns REVIEWS.md.
fn fallback_review(lanes: usize, siblings: usize, fd_limit: u32) -> String {
    let slugs: Vec<String> = (0..lanes).map(|i| format!("q{i:03}")).collect();
    let scripts: Vec<(&str, &str)> = slugs.iter().map(|s| (s.as_str(), QUIET)).collect();
    let (env, bin) = review_lab(&scripts);
    let beside = env.project.parent().expect("parent").to_path_buf();
    for i in 0..siblings {
        std::fs::write(beside.join(format!("s{i:06}")), "").expect("sibling");
    }
    let mut args = vec!["--phase".to_owned(), "3".to_owned()];
    args.extend(slugs.iter().map(|s| format!("--{s}")));
    args.extend(["--sandbox".to_owned(), "enforce".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let inner = review_command(&env, &bin, &args);
    let mut command = Command::new("prlimit");
    command
        .arg(format!("--nofile={fd_limit}:{fd_limit}"))
        .arg("--")
        .arg(inner.get_program())
        .args(inner.get_args())
        .env_clear()
        .envs(
            inner
                .get_envs()
                .filter_map(|(name, value)| Some((name, value?))),
        )
        .env("GSD_LANE_NO_NAMESPACES", "1")
        .current_dir(&env.project);
    let (out, _) = util::run_bounded(command, Duration::from_secs(300));
    out.assert_no_panic();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    reviews(&env)
}

/// Whether `prlimit` can be run (util-linux).
fn have_prlimit() -> bool {
    Command::new("prlimit")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

#[test]
fn the_landlock_fallback_scales_past_65536_entries_beside_the_repository() {
    if !have_prlimit() {
        eprintln!("skipped: no prlimit");
        return;
    }
    // Before: more than 65,536 entries made every lane fail with a bare `EPERM`.
    let text = fallback_review(2, 66_000, 4096);
    assert!(!text.contains("spawn error"), "{text}");
    assert_eq!(text.matches("fine").count(), 2, "{text}");
}

#[test]
fn one_hundred_and_twenty_eight_lanes_under_the_fallback_at_256_descriptors_all_finish() {
    if !have_prlimit() {
        eprintln!("skipped: no prlimit");
        return;
    }
    // Before: the fallback held one descriptor per entry beside the repository for the whole
    // run, so a busy directory there left the lanes none (EMFILE).
    let text = fallback_review(128, 1_000, 256);
    assert!(!text.contains("spawn error"), "{text}");
    assert_eq!(text.matches("fine").count(), 128, "{text}");
}
