//! An existing REVIEWS.md never loses a real review to a re-run (decisions.md #14, issue 21).
//!
//! Deciding "does this file hold a real review" fails closed: only a file whose every review
//! section is a recognised failure notice (diagnostic stub, interrupted, budget skip), or an
//! empty file, counts as holding none. Anything else — a review, hand-written notes, a file
//! that cannot be read — is kept.
//!
//! A run with no real review writes beside a file that holds one (`<stem>.failed.md`). A run
//! with real reviews carries every review of the earlier file it did not reproduce (an
//! interrupted re-run, a default reviewer skipped or failing this time) into the new file,
//! marked with the earlier run's date; an earlier file that cannot be read section by section
//! is moved aside whole to `<stem>.earlier-<time>.md`, which the new file names.

mod parse;

use std::path::{Path, PathBuf};

pub(crate) use parse::{is_notice, Previous, EARLIER_MARK, MAX_BYTES};

/// A review of an earlier run that this run did not reproduce, carried into the new file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    /// The reviewer's heading (`Alpha Review`, `Alpha Review (op-a)`).
    pub heading: String,
    /// When it was written: the earlier file's `reviewed_at` (or the date it was carried with).
    pub reviewed_at: String,
    /// The section's text as the earlier file had it.
    pub body: String,
}

impl Carried {
    /// `Alpha Review (2026-07-29T14:03:05.120Z)`, for notes and the banner.
    pub fn label(&self) -> String {
        format!("{} ({})", self.heading, self.reviewed_at)
    }
}

/// What the new REVIEWS.md keeps of the earlier one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    /// Reviews carried into the new file.
    pub carried: Vec<Carried>,
    /// The earlier file moved aside whole: the file name it now has, and why it was not read
    /// section by section.
    pub set_aside: Option<(String, String)>,
}

/// Where this run's REVIEWS.md goes, given the earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Over the wanted path, keeping what [`Kept`] says.
    Replace(Kept),
    /// Beside it (`<stem>.failed.md`): the earlier file holds a review and this run has none,
    /// or the earlier file could not be moved aside.
    Beside,
}

/// The real reviews of `previous` whose heading is not among `reproduced` (the headings this
/// run produced a real review under), oldest date kept.
pub fn carry(previous: &Previous, reproduced: &[String]) -> Vec<Carried> {
    let Previous::Sections {
        reviewed_at,
        sections,
    } = previous
    else {
        return Vec::new();
    };
    sections
        .iter()
        .filter(|section| section.is_real() && !reproduced.contains(&section.heading))
        .map(|section| Carried {
            heading: section.heading.clone(),
            reviewed_at: section
                .earlier_at
                .clone()
                .or_else(|| reviewed_at.clone())
                .unwrap_or_else(|| "an unknown date".to_owned()),
            body: section.body.clone(),
        })
        .collect()
}

/// Decides where this run's REVIEWS.md goes and keeps the earlier file's reviews: carried
/// (returned), or the whole file moved aside when it cannot be read by section.
/// `real` counts this run's real reviews; `stamp` names a moved-aside file.
pub fn place(wanted: &Path, real: usize, reproduced: &[String], stamp: &str) -> Placement {
    let previous = Previous::read(wanted);
    if real == 0 {
        return if previous.holds_real_review() {
            Placement::Beside
        } else {
            Placement::Replace(Kept::default())
        };
    }
    match &previous {
        Previous::Absent => Placement::Replace(Kept::default()),
        Previous::Sections { .. } => Placement::Replace(Kept {
            carried: carry(&previous, reproduced),
            set_aside: None,
        }),
        Previous::Unreadable(why) => match set_aside(wanted, stamp) {
            Ok(name) => Placement::Replace(Kept {
                carried: Vec::new(),
                set_aside: Some((name, why.to_string())),
            }),
            Err(_) => Placement::Beside,
        },
    }
}

/// Moves `path` to `<stem>.earlier-<stamp>[-n].md` beside it (a name not taken); returns the
/// new file name.
fn set_aside(path: &Path, stamp: &str) -> std::io::Result<String> {
    let stem = stem_of(path);
    let stamp: String = stamp.chars().filter(char::is_ascii_alphanumeric).collect();
    for n in 1..100u32 {
        let name = if n == 1 {
            format!("{stem}.earlier-{stamp}.md")
        } else {
            format!("{stem}.earlier-{stamp}-{n}.md")
        };
        let target = path.with_file_name(&name);
        if std::fs::symlink_metadata(&target).is_err() {
            std::fs::rename(path, &target)?;
            return Ok(name);
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "every earlier-run name is taken",
    ))
}

fn stem_of(path: &Path) -> String {
    path.file_stem().map_or_else(
        || "REVIEWS".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// `<dir>/<stem>.failed.md` beside `path` (`03-REVIEWS.md` → `03-REVIEWS.failed.md`).
pub fn failed_path(path: &Path) -> PathBuf {
    path.with_file_name(format!("{}.failed.md", stem_of(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "---\nphase: 3\nreviewed_at: 2026-07-29T14:03:05.120Z\n---\n\n# Cross-AI Plan Review — Phase 3\n\n";
    const TAIL: &str = "## Consensus Summary\n\n### Agreed Strengths\n";

    fn holds_real_review(text: &str) -> bool {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("03-REVIEWS.md");
        std::fs::write(&path, text).expect("write");
        Previous::read(&path).holds_real_review()
    }

    #[test]
    fn stubs_and_notices_are_not_reviews() {
        let stub = format!("{HEAD}## Alpha Review\n\nalpha review failed or returned empty output. stderr:\nboom\n\n---\n\n{TAIL}");
        assert!(!holds_real_review(&stub));
        let interrupted = format!("{HEAD}## Alpha Review\n\nalpha review not completed: the review run was interrupted.\n\n---\n\n{TAIL}");
        assert!(!holds_real_review(&interrupted));
        assert!(!holds_real_review(""));
    }

    #[test]
    fn a_review_or_unknown_text_is_kept() {
        let real = format!("{HEAD}## Alpha Review\n\nalpha review failed or returned empty output. stderr:\n\n---\n\n## Beta Review\n\nThe plans look sound.\n\n---\n\n{TAIL}");
        assert!(holds_real_review(&real));
        assert!(holds_real_review("my own notes about the plans\n"));
        assert_eq!(
            failed_path(Path::new("/p/03-REVIEWS.md")),
            PathBuf::from("/p/03-REVIEWS.failed.md")
        );
    }

    #[test]
    fn reviews_not_reproduced_are_carried_with_their_date() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("03-REVIEWS.md");
        std::fs::write(&path, format!("{HEAD}## Alpha Review\n\nalpha is fine\n\n---\n\n## Beta Review\n\nbeta is fine\n\n---\n\n## Gamma Review\n\ngamma review failed or returned empty output.\n\n---\n\n{TAIL}")).expect("write");
        let Placement::Replace(kept) = place(&path, 1, &["Beta Review".to_owned()], "x") else {
            panic!("replaced");
        };
        assert_eq!(
            kept.carried,
            vec![Carried {
                heading: "Alpha Review".into(),
                reviewed_at: "2026-07-29T14:03:05.120Z".into(),
                body: "alpha is fine".into(),
            }]
        );
        assert_eq!(place(&path, 0, &[], "x"), Placement::Beside);
    }

    #[test]
    fn an_unreadable_earlier_file_is_moved_aside_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("03-REVIEWS.md");
        std::fs::write(&path, "my own notes\n").expect("write");
        let Placement::Replace(kept) = place(&path, 1, &[], "2026-12-04T12:00:00.000Z") else {
            panic!("replaced");
        };
        let (name, why) = kept.set_aside.expect("set aside");
        assert_eq!(name, "03-REVIEWS.earlier-20261204T120000000Z.md");
        assert!(why.contains("Cross-AI Plan Review"), "{why}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(&name)).expect("kept"),
            "my own notes\n"
        );
        assert!(!path.exists());
    }
}
