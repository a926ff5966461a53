//! Run dirs held open by descriptor (issue 25, the run dir swapped by a lane).
//!
//! A review's run dir lives in the temporary directory. A lane that is not confined
//! (`--sandbox detect` or `off`, or a lane allowed to write the repository, which runs
//! unconfined beside confined ones) can rename the whole run dir away and make another at the
//! same path, with entries of its own in it; under `enforce` neither the Landlock fallback nor
//! the read-only view lets a lane move it. Every run-dir file gsd-lane opens goes through
//! [`crate::private_fs`]'s openers; once a run dir is held here, those openers resolve a name
//! directly inside it relative to the descriptor opened when the run dir was created or
//! reopened (`openat(…, O_NOFOLLOW)`), never through its path again: a run dir put in its place
//! is never read nor written, whatever it holds.
//!
//! A held dir is registered process-wide by its path for as long as a [`HeldDir`] handle lives
//! (a weak registry: dropping the last handle forgets it), so that every caller of the openers
//! (the lane pipeline, the spawner's output files, the journal, the review readers) gets the
//! descriptor without carrying it. [`HeldDir::in_place`] tells whether the path still names the
//! held directory, so the runner can say that the run dir was replaced.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rustix::fs::{AtFlags, Mode, OFlags};

use crate::private_fs::NotOwnRunDir;
use crate::review::rundir::Replaced;

/// A run dir opened once (`O_DIRECTORY | O_NOFOLLOW`), checked on its descriptor (a directory
/// of this user, mode 0700), and registered by its path.
#[derive(Debug)]
pub struct HeldDir {
    path: PathBuf,
    fd: OwnedFd,
    dev: u64,
    ino: u64,
    /// Set once the path was seen naming something else ([`HeldDir::in_place`]).
    replaced: AtomicBool,
}

/// Every held dir, by path (weak: a dir is forgotten with its last handle).
static REGISTRY: Mutex<Vec<Weak<HeldDir>>> = Mutex::new(Vec::new());

impl HeldDir {
    /// Opens `path` without following a link, checks on the open descriptor that it is a
    /// directory of this user with mode 0700, and registers it.
    ///
    /// # Errors
    ///
    /// What is wrong with it ([`NotOwnRunDir`]).
    pub fn hold(path: &Path) -> Result<Arc<HeldDir>, NotOwnRunDir> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|errno| match errno {
            rustix::io::Errno::LOOP => NotOwnRunDir::Symlink,
            rustix::io::Errno::NOTDIR => match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.file_type().is_symlink() => NotOwnRunDir::Symlink,
                _ => NotOwnRunDir::NotADirectory,
            },
            other => NotOwnRunDir::Unreadable(io::Error::from(other).to_string()),
        })?;
        // The checks are made on the descriptor (std's metadata: the same field types on
        // every Unix).
        let file = File::from(fd);
        let meta = file
            .metadata()
            .map_err(|err| NotOwnRunDir::Unreadable(err.to_string()))?;
        if !meta.is_dir() {
            return Err(NotOwnRunDir::NotADirectory);
        }
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me {
            return Err(NotOwnRunDir::ForeignOwner {
                owner: meta.uid(),
                me,
            });
        }
        let mode = meta.mode() & 0o7777;
        if mode != 0o700 {
            return Err(NotOwnRunDir::Mode(mode));
        }
        let held = Arc::new(HeldDir {
            path: path.to_owned(),
            fd: OwnedFd::from(file),
            dev: meta.dev(),
            ino: meta.ino(),
            replaced: AtomicBool::new(false),
        });
        register(&held);
        Ok(held)
    }

    /// `Ok` while the path still names the held directory (not followed through a link);
    /// once it was seen naming anything else, always the [`Replaced`] error, even if the
    /// original was put back since.
    ///
    /// # Errors
    ///
    /// The run dir was moved or replaced.
    pub fn in_place(&self) -> Result<(), Replaced> {
        let now = match std::fs::symlink_metadata(&self.path) {
            Ok(meta) if meta.dev() == self.dev && meta.ino() == self.ino => None,
            Ok(_) => Some("its path now names another entry".to_owned()),
            Err(err) => Some(format!("its path now names nothing: {err}")),
        };
        if let Some(now) = now {
            self.replaced.store(true, Ordering::SeqCst);
            return Err(Replaced {
                path: self.path.clone(),
                now,
            });
        }
        if self.replaced.load(Ordering::SeqCst) {
            return Err(Replaced {
                path: self.path.clone(),
                now: "it was seen replaced earlier in this run".to_owned(),
            });
        }
        Ok(())
    }

    /// Opens `name` (one path component) relative to the held descriptor with `flags`
    /// (`O_NOFOLLOW` and `O_CLOEXEC` are always added); a file it creates is 0600.
    ///
    /// # Errors
    ///
    /// The I/O error (`ELOOP` for a symbolic link).
    pub fn open_at(&self, name: &OsStr, flags: OFlags) -> io::Result<File> {
        let fd = rustix::fs::openat(
            self.fd.as_fd(),
            name,
            flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )?;
        Ok(File::from(fd))
    }

    /// The names in the held directory (`.` and `..` left out), at most `max` of them (in
    /// directory order), and whether there were more.
    ///
    /// # Errors
    ///
    /// The I/O error of the listing.
    pub fn names(&self, max: usize) -> io::Result<(Vec<OsString>, bool)> {
        use std::os::unix::ffi::OsStrExt;
        // `read_from` opens the directory again (`.` relative to the descriptor): the held
        // descriptor's own position is never moved.
        let mut dir = rustix::fs::Dir::read_from(&self.fd)?;
        let mut names = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            if names.len() == max {
                return Ok((names, true));
            }
            names.push(OsStr::from_bytes(name).to_owned());
        }
        Ok((names, false))
    }

    /// Renames `from` to `to`, both directly in the held directory (`renameat`): an entry at
    /// `to` (a planted link included) is replaced, never followed.
    ///
    /// # Errors
    ///
    /// The I/O error.
    pub fn rename_at(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::renameat(
            self.fd.as_fd(),
            from,
            self.fd.as_fd(),
            to,
        )?)
    }

    /// Removes the file `from` directly in the held directory (`unlinkat`).
    ///
    /// # Errors
    ///
    /// The I/O error.
    pub fn remove_at(&self, name: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(
            self.fd.as_fd(),
            name,
            AtFlags::empty(),
        )?)
    }

    /// `lstat` of `name` relative to the held descriptor.
    ///
    /// # Errors
    ///
    /// The I/O error (`NotFound` when there is no such entry).
    pub fn metadata_at(&self, name: &OsStr) -> io::Result<rustix::fs::Stat> {
        Ok(rustix::fs::statat(
            self.fd.as_fd(),
            name,
            AtFlags::SYMLINK_NOFOLLOW,
        )?)
    }
}

fn register(held: &Arc<HeldDir>) {
    // Nothing panics while the lock is held, so a poisoned lock still holds a valid list.
    let mut list = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    // Entries of dropped handles go first: the list is as long as the handles alive, each of
    // which holds a descriptor.
    list.retain(|weak| weak.strong_count() > 0);
    list.push(Arc::downgrade(held));
}

/// The held dir at `path` itself, if any.
pub fn find(path: &Path) -> Option<Arc<HeldDir>> {
    let list = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    list.iter()
        .rev()
        .filter_map(Weak::upgrade)
        .find(|held| held.path == path)
}

/// The held dir that `path` lies directly in, and the entry's name there: `None` when its
/// parent is not a held run dir (then callers open the path as it is).
pub fn resolve(path: &Path) -> Option<(Arc<HeldDir>, OsString)> {
    let name = path.file_name()?;
    // The newest registration wins (a run dir reopened later in the same process).
    let held = find(path.parent()?)?;
    Some((held, name.to_owned()))
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_held_dir_is_used_after_its_path_is_swapped() {
        let top = tempfile::tempdir().expect("top");
        let dir = top.path().join("run");
        std::fs::create_dir(&dir).expect("dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        let held = HeldDir::hold(&dir).expect("hold");
        assert_eq!(held.in_place(), Ok(()));
        std::fs::write(dir.join("mine.md"), "mine").expect("write");
        std::fs::rename(&dir, top.path().join("away")).expect("rename");
        std::fs::create_dir(&dir).expect("replacement");
        std::fs::write(dir.join("mine.md"), "planted").expect("plant");
        let (found, name) = resolve(&dir.join("mine.md")).expect("resolved");
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut found.open_at(&name, OFlags::RDONLY).expect("open"),
            &mut text,
        )
        .expect("read");
        assert_eq!(text, "mine");
        let replaced = held.in_place().expect_err("replaced");
        assert!(
            replaced.to_string().contains("moved or replaced"),
            "{replaced}"
        );
        // Put back, it stays reported: a lane that ended meanwhile was exposed.
        std::fs::remove_dir_all(&dir).expect("remove");
        std::fs::rename(top.path().join("away"), &dir).expect("back");
        assert!(held.in_place().is_err());
        assert!(resolve(&top.path().join("elsewhere/x")).is_none());
        let (names, more) = held.names(10).expect("names");
        assert_eq!((names, more), (vec![OsString::from("mine.md")], false));
        assert_eq!(held.names(0).expect("names"), (Vec::new(), true));
        drop(found);
        drop(held);
        assert!(
            resolve(&dir.join("mine.md")).is_none(),
            "forgotten with its handle"
        );
    }

    #[test]
    fn only_own_private_directories_are_held() {
        let top = tempfile::tempdir().expect("top");
        let dir = top.path().join("run");
        std::fs::create_dir(&dir).expect("dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(HeldDir::hold(&dir).err(), Some(NotOwnRunDir::Mode(0o755)));
        let link = top.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).expect("link");
        assert_eq!(HeldDir::hold(&link).err(), Some(NotOwnRunDir::Symlink));
        let file = top.path().join("file");
        std::fs::write(&file, "").expect("file");
        assert_eq!(
            HeldDir::hold(&file).err(),
            Some(NotOwnRunDir::NotADirectory)
        );
        assert!(matches!(
            HeldDir::hold(&top.path().join("missing")),
            Err(NotOwnRunDir::Unreadable(_))
        ));
    }
}
