//! The private file a review over `review.max_inline_bytes` is written to while it is read and
//! hashed for the journal (issue 25 item 3), so that its whole is written beside REVIEWS.md
//! once, in the same pass, and put in place at the end by a link and a rename instead of being
//! read, hashed and copied again.
//!
//! The file is created in REVIEWS.md's directory unnamed (`O_TMPFILE`, mode 0600): nothing
//! can open it by name, it vanishes with the process when it is not placed, and while lanes
//! still run it adds no entry to the repository that the sandbox's change detection could
//! take for a lane's write. Where the file system (or the platform) has no unnamed files there
//! is no spill: the whole review is then copied at the end from the run dir's file and
//! checked against its hash ([`super::full_review::place`]). Placing it ([`Spill::place`]) gives it mode 0644, syncs it, links it under a
//! fresh temporary name beside the target, renames that over the target (a link planted at the
//! target is replaced, never followed) and syncs the directory, so REVIEWS.md, written after,
//! never names a file a crash could leave empty.
//!
//! Where the file system allows it (Linux), the file is written with `O_DIRECT` in aligned
//! blocks of [`STAGE`] bytes: the bytes go from one reused buffer to the disk instead of
//! through a gigabyte of new page cache, which on the measured machine cost about four times
//! the CPU of the read and the hash together, and the final sync has nothing left to wait for
//! (BENCHMARKS.md). The last partial block is written through the page cache.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::trust::consent::lock;

/// A private file receiving a review's bytes.
#[derive(Debug)]
pub struct Spill {
    file: File,
    /// The aligned staging block of an `O_DIRECT` file; `None` once writes go through the
    /// page cache.
    stage: Option<Stage>,
}

/// Size of each direct write: a whole number of blocks of any file system's block size.
pub const STAGE: usize = 1024 * 1024;

/// Alignment of a direct write's buffer, offset and length (the largest common block size).
const ALIGN: usize = 4096;

/// A block-aligned buffer of [`STAGE`] bytes and how much of it is filled.
#[derive(Debug)]
struct Stage {
    /// `STAGE + ALIGN` bytes, never reallocated, so the aligned window stays put.
    bytes: Vec<u8>,
    /// Where the aligned window starts in `bytes`.
    start: usize,
    /// Bytes staged.
    filled: usize,
}

impl Stage {
    fn new() -> Stage {
        let bytes = vec![0_u8; STAGE + ALIGN];
        let start = bytes.as_ptr().align_offset(ALIGN).min(ALIGN);
        Stage {
            bytes,
            start,
            filled: 0,
        }
    }

    /// The staged bytes.
    fn staged(&self) -> &[u8] {
        self.bytes
            .get(self.start..self.start + self.filled)
            .unwrap_or_default()
    }

    /// Appends what fits of `bytes`; returns how many were taken.
    fn fill(&mut self, bytes: &[u8]) -> usize {
        let take = bytes.len().min(STAGE - self.filled);
        let at = self.start + self.filled;
        if let (Some(window), Some(part)) = (self.bytes.get_mut(at..at + take), bytes.get(..take)) {
            window.copy_from_slice(part);
        }
        self.filled += take;
        take
    }
}

impl Spill {
    /// A new, empty, unnamed file in `dir`.
    ///
    /// # Errors
    ///
    /// The directory refuses it, or has no unnamed files (`Unsupported`).
    pub fn create(dir: &Path) -> io::Result<Spill> {
        let file = unnamed(dir)?;
        let stage = set_direct(&file, true).then(Stage::new);
        Ok(Spill { file, stage })
    }

    /// Appends `bytes`. (Asking the kernel to start writeback as it goes, with
    /// `POSIX_FADV_DONTNEED` every 16 MiB, made the writes slower than the final sync it saved:
    /// measured in BENCHMARKS.md.)
    ///
    /// # Errors
    ///
    /// The write's error.
    pub fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let Some(stage) = &mut self.stage else {
                return self.file.write_all(bytes);
            };
            let taken = stage.fill(bytes);
            bytes = bytes.get(taken..).unwrap_or_default();
            if stage.filled == STAGE {
                self.write_stage()?;
            }
        }
        Ok(())
    }

    /// Writes the staged block directly; a file that refuses (`EINVAL`: not aligned for this
    /// file system after all) gets it, and everything after, through the page cache.
    fn write_stage(&mut self) -> io::Result<()> {
        let Some(stage) = self.stage.as_mut() else {
            return Ok(());
        };
        let mut done = 0;
        let result = loop {
            let Some(rest) = stage.staged().get(done..).filter(|r| !r.is_empty()) else {
                break Ok(());
            };
            match self.file.write(rest) {
                Ok(0) => break Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => done += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => break Err(err),
            }
        };
        match result {
            Ok(()) => {
                stage.filled = 0;
                Ok(())
            }
            Err(err) if err.raw_os_error() == Some(libc::EINVAL) => self.buffered_from(done),
            Err(err) => Err(err),
        }
    }

    /// Leaves direct writing: what is staged from `done` on is written through the page cache.
    fn buffered_from(&mut self, done: usize) -> io::Result<()> {
        let Some(stage) = self.stage.take() else {
            return Ok(());
        };
        set_direct(&self.file, false);
        self.file
            .write_all(stage.staged().get(done..).unwrap_or_default())
    }

    /// Puts the file in place as `target` (mode 0644), synced, with its directory synced after.
    ///
    /// # Errors
    ///
    /// The failing step's error; `target` is then left as it was.
    pub fn place(mut self, target: &Path) -> io::Result<()> {
        // The last, partial block through the page cache (no alignment needed there).
        self.buffered_from(0)?;
        set_public(&self.file)?;
        self.file.sync_all()?;
        let name = target
            .file_name()
            .map_or_else(|| "review".into(), |n| n.to_string_lossy().into_owned());
        let dir = parent_of(target);
        let temp = self.link_beside(dir, &name)?;
        if let Err(err) = std::fs::rename(&temp, target) {
            let _ = std::fs::remove_file(&temp);
            return Err(err);
        }
        File::open(dir).and_then(|d| d.sync_all()).or_else(|err| {
            // A directory handle some file systems cannot sync: the rename stands.
            if err.raw_os_error() == Some(libc::EINVAL) {
                Ok(())
            } else {
                Err(err)
            }
        })
    }

    /// Links the unnamed file under a fresh temporary name in `dir` (Linux only: an unnamed
    /// file exists nowhere else).
    fn link_beside(&self, dir: &Path, name: &str) -> io::Result<PathBuf> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let source = format!("/proc/self/fd/{}", self.file.as_raw_fd());
            for _ in 0..16 {
                let temp = dir.join(temp_name(name));
                match rustix::fs::linkat(
                    rustix::fs::CWD,
                    source.as_str(),
                    rustix::fs::CWD,
                    &temp,
                    rustix::fs::AtFlags::SYMLINK_FOLLOW,
                ) {
                    Ok(()) => return Ok(temp),
                    Err(rustix::io::Errno::EXIST) => continue,
                    Err(err) => return Err(err.into()),
                }
            }
            Err(io::Error::other(format!(
                "no free temporary name beside {}",
                dir.join(name).display()
            )))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (dir, name);
            Err(io::Error::other("an unnamed file cannot be linked here"))
        }
    }
}

/// A spill shared by the clones of one captured review; the first to place it takes it.
#[derive(Debug, Clone, Default)]
pub struct SpillSlot(Option<Arc<Mutex<Option<Spill>>>>);

impl SpillSlot {
    /// A slot holding `spill`.
    pub fn holding(spill: Spill) -> SpillSlot {
        SpillSlot(Some(Arc::new(Mutex::new(Some(spill)))))
    }

    /// The spill, once; `None` when there is none or it was taken.
    pub fn take(&self) -> Option<Spill> {
        self.0
            .as_ref()
            .and_then(|slot| slot.lock().ok().and_then(|mut s| s.take()))
    }
}

impl PartialEq for SpillSlot {
    /// Two slots are equal when both are empty or both are the same slot.
    fn eq(&self, other: &SpillSlot) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for SpillSlot {}

/// The directory of `path` (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."))
}

/// `<name>.tmp.<pid>-<8 hex>`: the temporary-name pattern of [`crate::fsutil`], whose sweep
/// removes such a file left by a writer that died.
fn temp_name(name: &str) -> String {
    let suffix: String = lock::token().chars().take(8).collect();
    format!("{name}.tmp.{}-{suffix}", std::process::id())
}

/// Turns `O_DIRECT` on or off for `file`; true when it is now as asked (always false off
/// Linux, where direct writing is not tried).
fn set_direct(file: &File, on: bool) -> bool {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::OFlags;
        let Ok(flags) = rustix::fs::fcntl_getfl(file) else {
            return false;
        };
        let wanted = if on {
            flags | OFlags::DIRECT
        } else {
            flags - OFlags::DIRECT
        };
        rustix::fs::fcntl_setfl(file, wanted).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, on);
        false
    }
}

/// An unnamed file in `dir` (`Unsupported` where the file system or platform has none).
fn unnamed(dir: &Path) -> io::Result<File> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
        match rustix::fs::open(dir, flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => Ok(File::from(fd)),
            Err(
                rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::ISDIR | rustix::io::Errno::INVAL,
            ) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("{} has no unnamed files", dir.display()),
            )),
            Err(err) => Err(err.into()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{} has no unnamed files here", dir.display()),
        ))
    }
}

/// Mode 0644 (the mode REVIEWS.md and its companions have).
fn set_public(file: &File) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o644))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(())
    }
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_placed_spill_replaces_a_link_without_following_it() {
        let dir = tempfile::tempdir().expect("dir");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "untouched").expect("write");
        let target = dir.path().join("03-REVIEWS.x.full.md");
        std::os::unix::fs::symlink(&elsewhere, &target).expect("link");
        let mut spill = Spill::create(dir.path()).expect("spill");
        spill.write_all(b"whole ").expect("write");
        spill.write_all(b"review\n").expect("write");
        spill.place(&target).expect("placed");
        assert_eq!(std::fs::read(&target).expect("read"), b"whole review\n");
        assert_eq!(std::fs::read(&elsewhere).expect("read"), b"untouched");
        let meta = std::fs::symlink_metadata(&target).expect("meta");
        assert!(meta.is_file());
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o777, 0o644);
        assert_eq!(names(dir.path()), ["03-REVIEWS.x.full.md", "elsewhere"]);
    }

    #[test]
    fn an_unplaced_spill_leaves_nothing_behind() {
        let dir = tempfile::tempdir().expect("dir");
        let mut spill = Spill::create(dir.path()).expect("spill");
        spill.write_all(b"never placed").expect("write");
        assert!(names(dir.path()).is_empty(), "an unnamed file has no entry");
        drop(spill);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn bytes_across_direct_blocks_arrive_whole_and_in_order() {
        let dir = tempfile::tempdir().expect("dir");
        let mut spill = Spill::create(dir.path()).expect("spill");
        let mut expected = Vec::new();
        // Odd-sized pieces: the first direct block fills across calls, the last stays partial.
        for n in 0..40_u32 {
            let piece: Vec<u8> = (0..(n * 7919 + 13) as usize)
                .map(|i| (i as u32 ^ n) as u8)
                .collect();
            spill.write_all(&piece).expect("write");
            expected.extend_from_slice(&piece);
        }
        assert!(expected.len() > 2 * STAGE + 1);
        let target = dir.path().join("R.x.full.md");
        spill.place(&target).expect("placed");
        assert!(std::fs::read(&target).expect("read") == expected);
    }

    #[test]
    fn a_slot_gives_its_spill_once() {
        let dir = tempfile::tempdir().expect("dir");
        let slot = SpillSlot::holding(Spill::create(dir.path()).expect("spill"));
        let clone = slot.clone();
        assert_eq!(slot, clone);
        assert_ne!(slot, SpillSlot::default());
        assert!(clone.take().is_some());
        assert!(slot.take().is_none());
    }
}
