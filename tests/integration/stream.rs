//! Streamed reviews (issue 25 item 3): REVIEWS.md shows at most `review.max_inline_bytes` of
//! each review and names the file beside it that holds the whole review, byte for byte; a
//! review under the bound is shown as before. Memory and time are measured by
//! `bench/review_stream.py`, not asserted here.

use serde_json::json;

use crate::review::Lab;

/// The bound the tests set: the smallest accepted.
pub(crate) const BOUND: usize = 65_536;

/// A lab with lane `alpha` printing a review of `bytes` bytes (`fake-lane`'s `big` behaviour,
/// which keeps a copy of what it printed in `$HOME/marks/fake-alpha.out`).
pub(crate) fn big_lab(bytes: usize, bound: Option<usize>) -> Lab {
    let lab = Lab::new();
    // Declared diff-only: the citation check (which stamps a source-grounded review citing no
    // file:line) would otherwise change the review these tests compare byte for byte.
    lab.lane("alpha", |m| {
        m["reviewer"]["evidenceClass"] = json!("diff-only")
    });
    lab.behave("alpha", &format!("big {bytes}"));
    if let Some(bound) = bound {
        lab.config(&json!({"review": {"max_inline_bytes": bound}}));
    }
    lab
}

/// Where alpha's whole review goes, beside REVIEWS.md.
pub(crate) fn whole_review(lab: &Lab) -> std::path::PathBuf {
    lab.reviews_path()
        .with_file_name("03-REVIEWS.alpha.full.md")
}

/// Reviews phase 3 with alpha, which must succeed; returns where its whole review is.
pub(crate) fn reviewed_once(lab: &Lab) -> std::path::PathBuf {
    lab.review(&["--phase", "3", "--alpha"])
        .assert_no_panic()
        .assert_status(0);
    whole_review(lab)
}

fn printed(lab: &Lab) -> Vec<u8> {
    std::fs::read(lab.env.home.join("marks/fake-alpha.out")).expect("the lane's own copy")
}

#[test]
fn a_review_over_the_bound_is_shown_in_part_and_kept_whole_beside_reviews_md() {
    let lab = big_lab(300_000, Some(BOUND));
    let full = whole_review(&lab);
    // A link planted where the whole review goes is replaced, never written through.
    let outside = lab.env.root.path().join("outside.txt");
    std::fs::write(&outside, "not gsd-lane's").expect("outside");
    std::os::unix::fs::symlink(&outside, &full).expect("plant link");

    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic().assert_status(0);

    let lane_output = printed(&lab);
    assert_eq!(lane_output.len(), 300_001, "the fake lane printed its size");
    let kept = std::fs::read(&full).expect("the whole review beside REVIEWS.md");
    assert!(
        kept == lane_output,
        "the file beside REVIEWS.md is byte-identical to the lane's output"
    );
    assert!(!std::fs::symlink_metadata(&full)
        .expect("meta")
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(&outside).expect("outside"),
        "not gsd-lane's"
    );

    let reviews = lab.reviews();
    assert!(
        reviews.len() < BOUND + 8 * 1024,
        "REVIEWS.md holds the bounded part only: {} bytes",
        reviews.len()
    );
    let section = reviews
        .split("## Alpha Review\n\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n---\n\n").next())
        .expect("alpha's section");
    // A diff-only lane's section opens with its one-paragraph `[diff-only]` marker.
    let section = match section.split_once("\n\n") {
        Some((marker, rest)) if marker.starts_with("> [diff-only] ") => rest,
        _ => section,
    };
    assert!(
        section.starts_with("### fake-alpha big review\n\n```text\n- finding 1\n"),
        "{}",
        &section[..200]
    );
    let notice = "> [gsd-lane] partial review: it has 300001 bytes and only the first ";
    let (shown, tail) = section
        .split_once(notice)
        .expect("the partial-review notice");
    assert!(
        tail.contains("The whole review is in 03-REVIEWS.alpha.full.md, beside this file."),
        "{tail}"
    );
    // The shown part is whole lines of the review, its open fence closed before the notice.
    let shown_lines: Vec<&str> = shown.trim_end().lines().collect();
    assert_eq!(
        shown_lines.last(),
        Some(&"```"),
        "{:?}",
        &shown_lines[shown_lines.len() - 3..]
    );
    let body = &shown[..shown.len() - "```\n\n".len()];
    let original = String::from_utf8(lane_output).expect("utf-8");
    let original_body = original
        .strip_prefix("# fake-alpha big review\n\n")
        .expect("head");
    let body = body
        .strip_prefix("### fake-alpha big review\n\n")
        .expect("nested");
    assert!(
        original_body.starts_with(body) && body.ends_with('\n'),
        "REVIEWS.md shows a prefix of the review cut at a line break"
    );
    assert!(
        body.len() <= BOUND && body.len() > BOUND - 64,
        "{}",
        body.len()
    );
}

#[test]
fn a_review_under_the_bound_is_shown_whole_and_no_file_is_added() {
    let lab = big_lab(20_000, None);
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic().assert_status(0);
    let original = String::from_utf8(printed(&lab)).expect("utf-8");
    let reviews = lab.reviews();
    assert!(!reviews.contains("partial review"), "{reviews}");
    let last = original.trim_end().lines().last().expect("a last line");
    assert!(
        reviews.contains(&format!("{last}\n```\n\n---\n")),
        "the whole review is inline"
    );
    let dir = lab.reviews_path().parent().expect("phase dir").to_owned();
    let extra: Vec<String> = std::fs::read_dir(&dir)
        .expect("phase dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".full."))
        .collect();
    assert!(extra.is_empty(), "{extra:?}");
}

#[test]
fn a_bad_inline_bound_stops_the_review_before_any_lane_runs() {
    for bad in [json!(0), json!("4MiB"), json!(1.5), json!(-1)] {
        let lab = big_lab(1_000, None);
        lab.config(&json!({"review": {"max_inline_bytes": bad}}));
        let out = lab.review(&["--phase", "3", "--alpha"]);
        out.assert_no_panic();
        assert_ne!(out.code, Some(0), "{bad}: {}", out.stderr);
        assert!(
            out.stderr.contains("review.max_inline_bytes is") && out.stderr.contains("65536"),
            "{bad}: {}",
            out.stderr
        );
        assert!(lab.marks("alpha").is_empty(), "{bad}: a lane ran");
    }
}

/// The names in the phase directory of `lab`'s REVIEWS.md.
fn phase_files(lab: &Lab) -> Vec<String> {
    let dir = lab.reviews_path().parent().expect("phase dir").to_owned();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("phase dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("REVIEWS"))
        .collect();
    names.sort();
    names
}

#[test]
fn the_whole_review_is_written_in_place_once_and_leaves_no_temporary_file() {
    let lab = big_lab(300_000, Some(BOUND));
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic().assert_status(0);
    let full = whole_review(&lab);
    assert!(std::fs::read(&full).expect("whole review") == printed(&lab));
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(&full).expect("meta");
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o644,
        "readable as REVIEWS.md is"
    );
    assert_eq!(
        phase_files(&lab),
        ["03-REVIEWS.alpha.full.md", "03-REVIEWS.md"],
        "no temporary file is left beside REVIEWS.md"
    );
}

#[test]
fn a_whole_review_no_longer_named_is_removed_when_ours_and_reported_otherwise() {
    let lab = big_lab(300_000, Some(BOUND));
    let full = reviewed_once(&lab);
    assert!(full.is_file());
    // A file of the same pattern that names no identity of this run is not gsd-lane's to
    // remove.
    let foreign = lab
        .reviews_path()
        .with_file_name("03-REVIEWS.someone.full.md");
    std::fs::write(&foreign, "a user's notes").expect("foreign");

    // The same lane again, now with a review that fits inline: REVIEWS.md replaces alpha's
    // section and no longer names the earlier whole review, which must not pass for this one.
    lab.behave("alpha", "big 20000");
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    assert!(!reviews.contains("partial review"), "{reviews}");
    assert!(
        !full.exists(),
        "the earlier whole review of alpha was removed"
    );
    assert!(
        out.stderr.contains("removed") && out.stderr.contains("03-REVIEWS.alpha.full.md"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&foreign).expect("left"),
        "a user's notes"
    );
    assert!(
        out.stderr
            .contains("03-REVIEWS.someone.full.md is not this run's"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_whole_review_carried_with_its_section_is_kept() {
    let lab = big_lab(300_000, Some(BOUND));
    let full = reviewed_once(&lab);
    let whole = std::fs::read(&full).expect("whole");
    // Alpha now fails: its earlier review is carried into the new REVIEWS.md, naming the
    // whole file, which therefore stays.
    lab.behave("alpha", "fail");
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic();
    // Kept as it was or replaced with alpha's section carried: either names the whole file.
    let text = lab.reviews();
    assert!(
        text.contains("03-REVIEWS.alpha.full.md"),
        "the kept REVIEWS.md names the whole review: {}",
        &text[..text.len().min(2000)]
    );
    assert!(std::fs::read(&full).expect("kept") == whole);
    assert!(!out.stderr.contains("removed"), "{}", out.stderr);
}
