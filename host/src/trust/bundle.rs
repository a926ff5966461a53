//! Capability folders on disk: staging a copy, promoting it atomically, removing it.
//!
//! Install copies the source folder into `<scope root>/.gsd/.staging/<token>/<id>/` (same file
//! system as the destination), validates and hashes that copy, and promotes it with renames: the
//! destination is either the old bundle or the new one, never a mixture. Links and special files
//! are refused, and the copy is bounded like the content hash.

use std::fs;
use std::path::{Path, PathBuf};

use super::consent::hash::{MAX_BYTES, MAX_ENTRIES};

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
/// A message naming the offending path: a link or special file, more than 100 000 entries or
/// 16 MiB, or an I/O error.
pub fn stage(source: &Path, staging_root: &Path, id: &str) -> Result<Staged, String> {
    let area = staging_root.join(super::consent::lock::token());
    let dir = area.join(id);
    fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let staged = Staged { area, dir };
    let mut entries = 0usize;
    let mut bytes = 0u64;
    copy_tree(source, staged.dir(), &mut entries, &mut bytes)?;
    Ok(staged)
}

fn copy_tree(from: &Path, to: &Path, entries: &mut usize, bytes: &mut u64) -> Result<(), String> {
    let listing = fs::read_dir(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
    for entry in listing {
        let entry = entry.map_err(|e| format!("reading {}: {e}", from.display()))?;
        *entries += 1;
        if *entries > MAX_ENTRIES {
            return Err(format!(
                "{} holds more than {MAX_ENTRIES} entries",
                from.display()
            ));
        }
        let path = entry.path();
        let target = to.join(entry.file_name());
        let meta =
            fs::symlink_metadata(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            return Err(format!(
                "{} is a symbolic link; a capability bundle holds only files and folders",
                path.display()
            ));
        }
        if kind.is_dir() {
            fs::create_dir(&target).map_err(|e| format!("creating {}: {e}", target.display()))?;
            copy_tree(&path, &target, entries, bytes)?;
        } else if kind.is_file() {
            *bytes = bytes.saturating_add(meta.len());
            if *bytes > MAX_BYTES {
                return Err(format!(
                    "{} holds more than {} MiB",
                    from.display(),
                    MAX_BYTES >> 20
                ));
            }
            fs::copy(&path, &target)
                .map_err(|e| format!("copying {} to {}: {e}", path.display(), target.display()))?;
        } else {
            return Err(format!("{} is neither a file nor a folder", path.display()));
        }
    }
    Ok(())
}

/// Moves `staged` to `destination`, replacing an existing bundle atomically (the old one is
/// moved aside first and restored if the promotion fails).
///
/// # Errors
///
/// A message naming the rename that failed; the destination then holds the old bundle.
pub fn promote(staged: &Staged, destination: &Path) -> Result<(), String> {
    if let Some(parent) = destination.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("creating {}: {e}", parent.display()))?;
    }
    let aside = staged.area.join("previous");
    let had_previous = destination.exists();
    if had_previous {
        fs::rename(destination, &aside)
            .map_err(|e| format!("moving the installed {} aside: {e}", destination.display()))?;
    }
    if let Err(e) = fs::rename(&staged.dir, destination) {
        if had_previous {
            let _ = fs::rename(&aside, destination);
        }
        return Err(format!("installing into {}: {e}", destination.display()));
    }
    Ok(())
}

/// Removes an installed bundle: it is first renamed out of the capabilities directory (so a
/// half-deleted folder is never loaded), then deleted.
///
/// # Errors
///
/// A message naming the folder when it cannot be moved.
pub fn remove(installed: &Path, staging_root: &Path) -> Result<(), String> {
    let area = staging_root.join(super::consent::lock::token());
    fs::create_dir_all(&area).map_err(|e| format!("creating {}: {e}", area.display()))?;
    let aside = area.join("removed");
    let moved = fs::rename(installed, &aside);
    let result = moved.map_err(|e| format!("removing {}: {e}", installed.display()));
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
        assert!(stage(&source, &root.path().join(".staging"), "x").is_err());
    }
}
