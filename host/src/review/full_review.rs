//! The whole of a review that REVIEWS.md shows only in part (`review.max_inline_bytes`): a
//! stable file beside REVIEWS.md, `<REVIEWS stem>.<identity>.full.md`, byte-identical to the
//! review file whose hash the journal recorded.
//!
//! It is put in place after every lane ended, before REVIEWS.md (which names it). A review read
//! in this run was written, in the same pass that hashed it for the journal, into a private
//! file beside REVIEWS.md ([`super::spill`]): that file is linked into place, never read again.
//! A review kept from an earlier run (resume) is streamed from the run dir's review file in
//! fixed chunks and checked on the way against the journaled hash: a file that changed since (a
//! process the lane left behind) is never placed; the copy goes to a temporary file created
//! exclusively beside the target and is renamed over it ([`crate::fsutil::replace_file_with`]).
//! Either way a link planted at the target is replaced, never followed, no lane can write the
//! result, and the file and its directory are synced before REVIEWS.md names it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::spill::SpillSlot;
use crate::error::Failure;
use crate::private_fs::open_run_file_read;

/// The file beside `output` (REVIEWS.md) holding the whole review of identity `id`.
pub fn path_for(output: &Path, id: &str) -> PathBuf {
    let stem = output
        .file_stem()
        .map_or_else(|| "REVIEWS".into(), |s| s.to_string_lossy().into_owned());
    output.with_file_name(format!(
        "{stem}.{}.full.md",
        crate::plan::safe_instance_name(id)
    ))
}

/// Puts the whole review in place as `target`: the spill written while it was read when
/// `spill` holds one, else a copy of the review file `source`, checked against the hash
/// `sha256` (hex) the journal recorded.
///
/// # Errors
///
/// The spill cannot be placed, the source cannot be read or no longer has that hash, or the
/// target cannot be written; the message names both files. `target` is then left as it was.
pub fn place(source: &Path, sha256: &str, spill: &SpillSlot, target: &Path) -> Result<(), Failure> {
    if let Some(spill) = spill.take() {
        return spill.place(target).map_err(|err| {
            Failure::new(format!(
                "placing the whole review of {} as {}: {err}{}",
                source.display(),
                target.display(),
                fix_for(target)
            ))
        });
    }
    let copy = |file: &mut std::fs::File| -> std::io::Result<()> {
        let mut from = open_run_file_read(source)?;
        let limit = super::captured::MAX_REVIEW_BYTES;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0_u8; super::captured::CHUNK];
        let mut total: u64 = 0;
        loop {
            let read = match from.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            total = total.saturating_add(u64::try_from(read).unwrap_or(u64::MAX));
            if total > limit {
                return Err(std::io::Error::other(format!(
                    "it is larger than {limit} bytes"
                )));
            }
            let chunk = buffer.get(..read).unwrap_or_default();
            hasher.update(chunk);
            file.write_all(chunk)?;
        }
        if super::journal::hex(&hasher.finalize()) == sha256 {
            Ok(())
        } else {
            Err(std::io::Error::other(
                "it changed after its hash was recorded in the journal",
            ))
        }
    };
    // Synced before REVIEWS.md names it: a crash never leaves a named, empty file.
    let durability = crate::fsutil::Durability::Synced;
    crate::fsutil::replace_file_with(target, 0o644, durability, copy).map_err(|err| {
        Failure::new(format!(
            "copying the whole review {} to {}: {err}{}",
            source.display(),
            target.display(),
            fix_for(target)
        ))
    })
}

/// The fix to add to a failure to place a whole review at `target`, when what stands there
/// is why: a directory (never replaced) under the whole review's name.
fn fix_for(target: &Path) -> String {
    match std::fs::symlink_metadata(target) {
        Ok(meta) if meta.is_dir() => format!(
            "; fix: move the directory {} away (that name holds the whole review), then resume",
            target.display()
        ),
        _ => String::new(),
    }
}

/// Most directory entries looked at for stale whole-review files (bounded work on a huge
/// directory; what lies past it is left alone).
const SWEEP_SCAN_LIMIT: usize = 10_000;

/// A whole-review file beside REVIEWS.md that the REVIEWS.md just written does not name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// The whole of an earlier review of an identity this run reviewed again: REVIEWS.md
    /// replaced that review's section, so its whole file went with it.
    Removed(PathBuf),
    /// Not one this run can tell is its own to remove (no identity of this run has that name,
    /// or it is not a plain file): left as it was.
    Left(PathBuf),
}

impl std::fmt::Display for Stale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stale::Removed(path) => write!(
                f,
                "removed {}: it held the whole of an earlier review this run replaced",
                path.display()
            ),
            Stale::Left(path) => write!(
                f,
                "{} is not this run's: REVIEWS.md no longer names it (it is from an earlier \
                 run or not gsd-lane's); it was left as it was",
                path.display()
            ),
        }
    }
}

/// After REVIEWS.md was written at `output` with `text` (placement "replace", not the
/// `.failed.md` beside a kept file): every `<stem>.<name>.full.md` beside it that `text` does
/// not name is stale. One named after an identity in `reviewed` (identities this run reviewed
/// again, whose earlier section REVIEWS.md replaced and named that very file: the caller
/// checks the earlier REVIEWS.md) and that is a plain file is removed (the
/// name only, never through a link); any other is left and reported, so that no file is taken
/// for this run's whole review when REVIEWS.md does not name it, and nothing gsd-lane cannot
/// tell is its own is deleted.
pub fn sweep_stale(output: &Path, text: &str, reviewed: &[String]) -> Vec<Stale> {
    let Some(dir) = output.parent() else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(listing) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let stem = output
        .file_stem()
        .map_or_else(|| "REVIEWS".into(), |s| s.to_string_lossy().into_owned());
    let prefix = format!("{stem}.");
    let ours: Vec<String> = reviewed
        .iter()
        .map(|id| {
            path_for(output, id)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let mut stale = Vec::new();
    for entry in listing.take(SWEEP_SCAN_LIMIT).flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(middle) = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".full.md"))
        else {
            continue;
        };
        if middle.is_empty() || super::reviews_md::names_whole_file(text, &name) {
            continue;
        }
        let path = entry.path();
        let plain = std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_file());
        if plain && ours.contains(&name) && std::fs::remove_file(&path).is_ok() {
            stale.push(Stale::Removed(path));
        } else {
            stale.push(Stale::Left(path));
        }
    }
    stale.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    stale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sit_beside_reviews_md() {
        assert_eq!(
            path_for(Path::new("/p/03/03-REVIEWS.md"), "op-a"),
            Path::new("/p/03/03-REVIEWS.op-a.full.md")
        );
        assert_eq!(
            path_for(Path::new("/p/03/03-REVIEWS.md"), "../x"),
            path_for(Path::new("/p/03/03-REVIEWS.md"), "../x")
        );
        let odd = path_for(Path::new("/p/03/03-REVIEWS.md"), "../../etc/x");
        assert_eq!(odd.parent(), Some(Path::new("/p/03")));
    }

    /// A run-dir review file in `dir` and the hash the journal would record for it.
    fn hashed_review(dir: &Path) -> (PathBuf, String) {
        let source = dir.join("gsd-review-x.md");
        std::fs::write(&source, "whole review\n").expect("write");
        let hash = super::super::captured::read(&source, 4)
            .and_then(|r| r.sha256)
            .expect("hash");
        (source, hash)
    }

    #[cfg(unix)]
    #[test]
    fn places_only_the_journaled_bytes_and_never_through_a_link() {
        let dir = tempfile::tempdir().expect("dir");
        let (source, hash) = hashed_review(dir.path());
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "untouched").expect("write");
        let target = dir.path().join("03-REVIEWS.x.full.md");
        std::os::unix::fs::symlink(&elsewhere, &target).expect("link");
        place(&source, &hash, &SpillSlot::default(), &target).expect("placed");
        assert_eq!(std::fs::read(&target).expect("read"), b"whole review\n");
        assert!(!std::fs::symlink_metadata(&target)
            .expect("meta")
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&elsewhere).expect("read"), b"untouched");
        std::fs::write(&source, "rewritten later\n").expect("write");
        let err = place(&source, &hash, &SpillSlot::default(), &target).expect_err("changed");
        assert!(
            err.message.contains("changed after its hash"),
            "{}",
            err.message
        );
        assert_eq!(std::fs::read(&target).expect("read"), b"whole review\n");
    }

    /// A directory planted under the whole review's name is never replaced, and the failure
    /// says how to get past it.
    #[test]
    fn a_directory_at_the_name_is_left_and_the_failure_says_the_fix() {
        let dir = tempfile::tempdir().expect("dir");
        let (source, hash) = hashed_review(dir.path());
        let target = dir.path().join("03-REVIEWS.x.full.md");
        std::fs::create_dir(&target).expect("planted directory");
        std::fs::write(target.join("kept"), "a file of the user's").expect("write");
        let err = place(&source, &hash, &SpillSlot::default(), &target).expect_err("a directory");
        assert!(
            err.message.contains("fix: move the directory"),
            "{}",
            err.message
        );
        assert_eq!(
            std::fs::read(target.join("kept")).expect("kept"),
            b"a file of the user's"
        );
    }
}
