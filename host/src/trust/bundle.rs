//! Capability folders on disk: staging a copy, promoting it atomically, removing it.
//!
//! Install copies the source folder into `<scope root>/.gsd/.staging/<token>/<id>/` (same file
//! system as the destination), validates and hashes that copy, and promotes it with renames: the
//! destination is either the old bundle or the new one, never a mixture. Links and special files
//! are refused, and the copy is bounded like the content hash.

use std::fs;
use std::path::{Path, PathBuf};

use super::consent::hash::{MAX_BYTES, MAX_ENTRIES};
use super::error::{BundleError, BundleStep};

/// A staged copy; its staging directory is removed on drop.
#[derive(Debug)]
pub struct Staged {
    area: PathBuf,
    dir: PathBuf,
}

impl Staged {
    /// The staged capability folder (named after the id).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.area);
    }
}

/// Copies `source` into a fresh staging area under `staging_root`, as a folder named `id`.
///
/// # Errors
///
/// A [`BundleError`] naming the offending path: a link or special file, more than 100 000
/// entries or 16 MiB, or an I/O error.
pub fn stage(source: &Path, staging_root: &Path, id: &str) -> Result<Staged, BundleError> {
    let area = staging_root.join(super::consent::lock::token());
    let dir = area.join(id);
    fs::create_dir_all(&dir).map_err(io(BundleStep::Create, &dir))?;
    let staged = Staged { area, dir };
    let mut entries = 0usize;
    let mut bytes = 0u64;
    copy_tree(source, staged.dir(), &mut entries, &mut bytes)?;
    Ok(staged)
}

/// The [`BundleError::Io`] of `step` on `path`.
fn io(step: BundleStep, path: &Path) -> impl FnOnce(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Io {
        step,
        path: path.to_path_buf(),
        source,
    }
}

fn copy_tree(
    from: &Path,
    to: &Path,
    entries: &mut usize,
    bytes: &mut u64,
) -> Result<(), BundleError> {
    let listing = fs::read_dir(from).map_err(io(BundleStep::Read, from))?;
    for entry in listing {
        let entry = entry.map_err(io(BundleStep::Read, from))?;
        *entries += 1;
        if *entries > MAX_ENTRIES {
            return Err(BundleError::TooManyEntries {
                dir: from.to_path_buf(),
                max: MAX_ENTRIES,
            });
        }
        let path = entry.path();
        let target = to.join(entry.file_name());
        let meta = fs::symlink_metadata(&path).map_err(io(BundleStep::Read, &path))?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            return Err(BundleError::Link(path));
        }
        if kind.is_dir() {
            fs::create_dir(&target).map_err(io(BundleStep::Create, &target))?;
            copy_tree(&path, &target, entries, bytes)?;
        } else if kind.is_file() {
            *bytes = bytes.saturating_add(meta.len());
            if *bytes > MAX_BYTES {
                return Err(BundleError::TooLarge {
                    dir: from.to_path_buf(),
                    max_mib: MAX_BYTES >> 20,
                });
            }
            fs::copy(&path, &target).map_err(|source| BundleError::Copy {
                from: path.clone(),
                to: target.clone(),
                source,
            })?;
        } else {
            return Err(BundleError::Special(path));
        }
    }
    Ok(())
}

/// Moves `staged` to `destination`, replacing an existing bundle atomically (the old one is
/// moved aside first and restored if the promotion fails).
///
/// # Errors
///
/// A [`BundleError`] naming the rename that failed; the destination then holds the old bundle.
pub fn promote(staged: &Staged, destination: &Path) -> Result<(), BundleError> {
    if let Some(parent) = destination.parent() {
        fs::create_dir_all(parent).map_err(io(BundleStep::Create, parent))?;
    }
    let aside = staged.area.join("previous");
    let had_previous = destination.exists();
    if had_previous {
        fs::rename(destination, &aside).map_err(io(BundleStep::MoveAside, destination))?;
    }
    if let Err(source) = fs::rename(&staged.dir, destination) {
        if had_previous {
            let _ = fs::rename(&aside, destination);
        }
        return Err(io(BundleStep::Install, destination)(source));
    }
    Ok(())
}

/// Removes an installed bundle: it is first renamed out of the capabilities directory (so a
/// half-deleted folder is never loaded), then deleted.
///
/// # Errors
///
/// A [`BundleError`] naming the folder when it cannot be moved.
pub fn remove(installed: &Path, staging_root: &Path) -> Result<(), BundleError> {
    let area = staging_root.join(super::consent::lock::token());
    fs::create_dir_all(&area).map_err(io(BundleStep::Create, &area))?;
    let aside = area.join("removed");
    let moved = fs::rename(installed, &aside);
    let result = moved.map_err(io(BundleStep::Remove, installed));
    let _ = fs::remove_dir_all(&area);
    result
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn stage_promote_replace_remove() {
        let root = tempfile::tempdir().expect("tempdir");
        let source = root.path().join("src");
        fs::create_dir_all(source.join("bin")).expect("mkdir");
        fs::write(source.join("capability.json"), "{}").expect("write");
        fs::write(source.join("bin/x"), "1").expect("write");
        let staging = root.path().join(".staging");
        let dest = root.path().join("caps/acme");
        let staged = stage(&source, &staging, "acme").expect("stage");
        promote(&staged, &dest).expect("promote");
        drop(staged);
        assert_eq!(fs::read_to_string(dest.join("bin/x")).expect("read"), "1");
        fs::write(source.join("bin/x"), "2").expect("write");
        let staged = stage(&source, &staging, "acme").expect("stage");
        promote(&staged, &dest).expect("replace");
        drop(staged);
        assert_eq!(fs::read_to_string(dest.join("bin/x")).expect("read"), "2");
        assert_eq!(fs::read_dir(&staging).expect("list").count(), 0);
        remove(&dest, &staging).expect("remove");
        assert!(!dest.exists());
    }

    #[cfg(unix)]
    #[test]
    fn links_are_refused() {
        let root = tempfile::tempdir().expect("tempdir");
        let source = root.path().join("src");
        fs::create_dir_all(&source).expect("mkdir");
        std::os::unix::fs::symlink("/etc/passwd", source.join("l")).expect("symlink");
        let refused = stage(&source, &root.path().join(".staging"), "x").map(|_| ());
        assert!(
            matches!(&refused, Err(BundleError::Link(path)) if path.ends_with("l")),
            "{refused:?}"
        );
    }
}
