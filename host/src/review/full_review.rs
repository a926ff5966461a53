//! The whole of a review that REVIEWS.md shows only in part (`review.max_inline_bytes`): a
//! stable file beside REVIEWS.md, `<REVIEWS stem>.<identity>.full.md`, byte-identical to the
//! review file whose hash the journal recorded.
//!
//! It is written after every lane ended, before REVIEWS.md (which names it), streamed from the
//! run dir's review file in fixed chunks, and checked on the way against the journaled hash: a
//! file that changed since (a process the lane left behind) is never placed. The copy goes to a
//! temporary file created exclusively beside the target and is renamed over it
//! ([`crate::fsutil::replace_file_with`]), so a link planted at the target is replaced, never
//! followed, and no lane can write the result. It is not synced to disk (see
//! [`crate::fsutil::Durability::Unsynced`]).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

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

/// Copies the review file `source` to `target`, checking that its bytes have the hash
/// `sha256` (hex) the journal recorded.
///
/// # Errors
///
/// The source cannot be read or no longer has that hash, or the target cannot be written; the
/// message names both files. `target` is then left as it was.
pub fn place(source: &Path, sha256: &str, target: &Path) -> Result<(), Failure> {
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
    // Not synced: the copy can be gigabytes, and `run` never syncs the same bytes either; a
    // crash may cost its content (REVIEWS.md states its size), never another file's.
    let durability = crate::fsutil::Durability::Unsynced;
    crate::fsutil::replace_file_with(target, 0o644, durability, copy).map_err(|err| {
        Failure::new(format!(
            "copying the whole review {} to {}: {err}",
            source.display(),
            target.display()
        ))
    })
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

    #[cfg(unix)]
    #[test]
    fn places_only_the_journaled_bytes_and_never_through_a_link() {
        let dir = tempfile::tempdir().expect("dir");
        let source = dir.path().join("gsd-review-x.md");
        std::fs::write(&source, "whole review\n").expect("write");
        let hash = super::super::captured::read(&source, 4)
            .and_then(|r| r.sha256)
            .expect("hash");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "untouched").expect("write");
        let target = dir.path().join("03-REVIEWS.x.full.md");
        std::os::unix::fs::symlink(&elsewhere, &target).expect("link");
        place(&source, &hash, &target).expect("placed");
        assert_eq!(std::fs::read(&target).expect("read"), b"whole review\n");
        assert!(!std::fs::symlink_metadata(&target)
            .expect("meta")
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&elsewhere).expect("read"), b"untouched");
        std::fs::write(&source, "rewritten later\n").expect("write");
        let err = place(&source, &hash, &target).expect_err("changed");
        assert!(
            err.message.contains("changed after its hash"),
            "{}",
            err.message
        );
        assert_eq!(std::fs::read(&target).expect("read"), b"whole review\n");
    }
}
