//! Attacks on the promises of the stop after 276e818: the stale `.full.md` sweep, the whole
//! review beside REVIEWS.md and a review cut off by its bound.

use crate::review::Lab;
use crate::stream;

/// A lab with lane `alpha` printing a review of `bytes` bytes, REVIEWS.md bounded at the
/// smallest `review.max_inline_bytes` accepted.
fn big_lab(bytes: usize) -> Lab {
    stream::big_lab(bytes, Some(stream::BOUND))
}

/// A user's own file that merely has the name of a reviewer's whole review (no REVIEWS.md
/// ever named it) is not gsd-lane's: a run of that reviewer whose review fits inline leaves it.
#[test]
fn a_users_file_with_a_whole_review_name_is_never_swept() {
    let lab = big_lab(20_000);
    let mine = stream::whole_review(&lab);
    std::fs::create_dir_all(mine.parent().expect("phase dir")).expect("phase dir");
    std::fs::write(&mine, "a user's own notes, never gsd-lane's").expect("user file");
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic().assert_status(0);
    assert_eq!(
        std::fs::read_to_string(&mine).expect("the user's file is still there"),
        "a user's own notes, never gsd-lane's",
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("03-REVIEWS.alpha.full.md is not this run's"),
        "{}",
        out.stderr
    );
}

/// An earlier REVIEWS.md that cannot be read section by section is set aside whole, and still
/// names the whole review beside it: that file is part of the kept review and stays.
#[test]
fn a_whole_review_named_by_a_set_aside_earlier_file_is_kept() {
    let lab = big_lab(300_000);
    let full = stream::reviewed_once(&lab);
    let whole = std::fs::read(&full).expect("whole review placed");
    // The user adds a section of their own: the file is no longer the writer's shape.
    let text = lab.reviews().replacen(
        "## Consensus Summary",
        "## My own notes\n\nSee the whole review beside this file.\n\n## Consensus Summary",
        1,
    );
    std::fs::write(lab.reviews_path(), &text).expect("edit");

    lab.behave("alpha", "big 20000");
    let out = lab.review(&["--phase", "3", "--alpha"]);
    out.assert_no_panic().assert_status(0);
    let phase = lab.reviews_path().parent().expect("dir").to_path_buf();
    let aside: Vec<String> = std::fs::read_dir(&phase)
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".earlier-"))
        .collect();
    assert_eq!(aside.len(), 1, "the earlier file was set aside: {aside:?}");
    let kept = std::fs::read_to_string(phase.join(&aside[0])).expect("set aside");
    assert!(
        kept.contains("03-REVIEWS.alpha.full.md"),
        "it names the whole review"
    );
    assert!(
        std::fs::read(&full).ok() == Some(whole),
        "the whole review the set-aside file names is kept: {}",
        out.stderr
    );
}
