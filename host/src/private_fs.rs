//! Files and directories gsd-lane writes for a run (trust.md §7.5, issue 11): nothing is ever
//! written through an entry planted in a run dir, and every run dir gsd-lane creates is private.
//!
//! - [`open_run_file`] opens a run-dir file without following a symbolic link (`O_NOFOLLOW`),
//!   without blocking on a FIFO (`O_NONBLOCK`), and refuses anything but a regular file with a
//!   single link, before a byte is truncated or written: a symlink or hard link planted under
//!   the name of a review file cannot redirect the write to a file outside the run dir.
//! - Every opener here (and [`check_entry`], [`run_dir_names`]) reaches a file directly in a
//!   run dir gsd-lane holds open ([`crate::held_dir`]) through that directory's descriptor
//!   (`openat`), never through the run dir's path: a run dir moved away and replaced by a lane
//!   is never read nor written. A file read must also be owned by this user.
//! - [`check_entry`] refuses the same entries up front, by name, before a lane starts.
//! - [`private_temp_dir`] creates a fresh `0700` directory whatever the umask.
//! - [`check_given_dir`] refuses a `--run-dir` that others could plant entries in.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// How [`open_run_file`] treats existing content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Create or empty the file.
    Truncate,
    /// Create or append to the file.
    Append,
    /// Create the file or open it as it is (a lock file).
    Keep,
}

/// The error for a refused entry: it names the entry, what it is, and that nothing was
/// written through it.
fn refused(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "refusing to write {}: the entry is {what}; nothing was written through it (remove it, or use a fresh run dir)",
            crate::output::neutralize(&path.display().to_string())
        ),
    )
}

/// The error for an entry refused on reading: it names the entry and what it is.
fn refused_read(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "refusing to read {}: the entry is {what}, not a file gsd-lane wrote (something planted it there)",
            crate::output::neutralize(&path.display().to_string())
        ),
    )
}

/// What an existing entry is, when gsd-lane must not write through it; `None` for a regular
/// file with one link (or no entry at all).
fn unsafe_kind(meta: &fs::Metadata) -> Option<&'static str> {
    if meta.file_type().is_symlink() {
        return Some("a symbolic link");
    }
    if meta.is_dir() {
        return Some("a directory");
    }
    if !meta.is_file() {
        return Some("not a regular file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Some("a hard link to another file");
        }
    }
    None
}

/// [`unsafe_kind`] of an entry looked at relative to a held run dir (`lstat`).
#[cfg(unix)]
fn unsafe_stat_kind(stat: &rustix::fs::Stat) -> Option<&'static str> {
    use rustix::fs::FileType;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::Symlink => Some("a symbolic link"),
        FileType::Directory => Some("a directory"),
        FileType::RegularFile if stat.st_nlink > 1 => Some("a hard link to another file"),
        FileType::RegularFile => None,
        _ => Some("not a regular file"),
    }
}

/// Refuses `path` when an entry that gsd-lane must not write through is there: a symbolic
/// link (dangling or not), a directory, a FIFO or device, or a file with more than one link.
///
/// # Errors
///
/// An error naming the entry; other I/O errors of `lstat`.
pub fn check_entry(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    if let Some((dir, name)) = crate::held_dir::resolve(path) {
        return match dir.metadata_at(&name) {
            Ok(stat) => match unsafe_stat_kind(&stat) {
                Some(what) => Err(refused(path, what)),
                None => Ok(()),
            },
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(err),
        };
    }
    match fs::symlink_metadata(path) {
        Ok(meta) => match unsafe_kind(&meta) {
            Some(what) => Err(refused(path, what)),
            None => Ok(()),
        },
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    }
}

/// Opens a run-dir file for writing (created with mode 0600) without following a symbolic link
/// or blocking on a FIFO; an existing entry must be a regular file with one link, checked on
/// the open descriptor before anything is truncated.
///
/// # Errors
///
/// An error naming a refused entry, or the I/O error.
pub fn open_run_file(path: &Path, mode: WriteMode) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true);
    if mode == WriteMode::Append {
        options.append(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let file = open_checked(path, write_flags(mode), &options)?;
    if mode == WriteMode::Truncate {
        file.set_len(0)?;
    }
    Ok(file)
}

/// Opens an existing run-dir file for appending (a notice added to a review file), the way
/// [`open_run_file`] opens one but never creating it: a missing file is
/// [`io::ErrorKind::NotFound`].
///
/// # Errors
///
/// An error naming a refused entry, or the I/O error.
pub fn open_run_file_to_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    #[cfg(unix)]
    let flags =
        rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::APPEND | rustix::fs::OFlags::NONBLOCK;
    #[cfg(not(unix))]
    let flags = ();
    open_checked(path, flags, &options)
}

/// Opens `path` through its held run dir with `held_flags` (or by path with `options` when it
/// lies in none) and checks the open descriptor: an entry that is not a regular file with one
/// link is refused by name.
fn open_checked(
    path: &Path,
    #[cfg(unix)] held_flags: rustix::fs::OFlags,
    #[cfg(not(unix))] held_flags: (),
    options: &OpenOptions,
) -> io::Result<File> {
    // ELOOP is what O_NOFOLLOW gives for a link: say so by name. Other errors keep their
    // errno (a FIFO without a reader is ENXIO), which spawn reports as its error code.
    let file = open_in_held_dir(path, held_flags)
        .unwrap_or_else(|| options.open(path))
        .map_err(|err| match err.raw_os_error() {
            Some(libc::ELOOP) => refused(path, "a symbolic link"),
            _ => err,
        })?;
    if let Some(what) = unsafe_kind(&file.metadata()?) {
        return Err(refused(path, what));
    }
    Ok(file)
}

/// Opens a run-dir file for reading the same way [`open_run_file`] opens one for writing:
/// without following a symbolic link (`O_NOFOLLOW`), without blocking on a FIFO
/// (`O_NONBLOCK`: the open returns at once and the check below refuses it), and only when the
/// open descriptor is a regular file. A planted link, FIFO, device or directory is refused by
/// name; a missing file is [`io::ErrorKind::NotFound`] as usual.
///
/// # Errors
///
/// An error naming a refused entry, or the I/O error.
pub fn open_run_file_read(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let file = open_in_held_dir(path, read_flags())
        .unwrap_or_else(|| options.open(path))
        .map_err(|err| match err.raw_os_error() {
            Some(libc::ELOOP) => refused_read(path, "a symbolic link"),
            _ => err,
        })?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(refused_read(path, "a directory"));
    }
    if !meta.is_file() {
        return Err(refused_read(
            path,
            "not a regular file (a FIFO, socket or device)",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != current_uid()? {
            return Err(refused_read(path, "owned by another user"));
        }
    }
    Ok(file)
}

/// Opens `path` relative to the descriptor of the held run dir it lies directly in
/// ([`crate::held_dir`]), never through the path; `None` when its parent is not held (the
/// caller opens the path itself).
#[cfg(unix)]
fn open_in_held_dir(path: &Path, flags: rustix::fs::OFlags) -> Option<io::Result<File>> {
    let (dir, name) = crate::held_dir::resolve(path)?;
    Some(dir.open_at(&name, flags))
}

#[cfg(not(unix))]
fn open_in_held_dir(_path: &Path, _flags: ()) -> Option<io::Result<File>> {
    None
}

/// The `openat` flags of [`open_run_file`] in a held run dir.
#[cfg(unix)]
fn write_flags(mode: WriteMode) -> rustix::fs::OFlags {
    use rustix::fs::OFlags;
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::NONBLOCK;
    if mode == WriteMode::Append {
        flags | OFlags::APPEND
    } else {
        flags
    }
}

#[cfg(not(unix))]
fn write_flags(_mode: WriteMode) {}

/// The `openat` flags of [`open_run_file_read`] in a held run dir.
#[cfg(unix)]
fn read_flags() -> rustix::fs::OFlags {
    rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK
}

#[cfg(not(unix))]
fn read_flags() {}

/// True when `path` lies directly in a run dir gsd-lane holds open ([`crate::held_dir`]): the
/// openers of this module then reach it through that descriptor only.
pub fn in_held_run_dir(path: &Path) -> bool {
    #[cfg(unix)]
    {
        crate::held_dir::resolve(path).is_some()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// The names in the run dir `dir` (`.` and `..` left out), at most `max`, and whether there
/// were more: listed through its descriptor when gsd-lane holds it ([`crate::held_dir`]), so
/// that a directory put at its path is never listed; by its path otherwise.
///
/// # Errors
///
/// The I/O error of the listing.
pub fn run_dir_names(dir: &Path, max: usize) -> io::Result<(Vec<std::ffi::OsString>, bool)> {
    #[cfg(unix)]
    if let Some(held) = crate::held_dir::find(dir) {
        return held.names(max);
    }
    let mut names = Vec::new();
    for entry in fs::read_dir(dir)? {
        if names.len() == max {
            return Ok((names, true));
        }
        names.push(entry?.file_name());
    }
    Ok((names, false))
}

/// True when an entry named `path` exists (never followed through a link): in a held run dir,
/// looked up through its descriptor ([`crate::held_dir`]).
pub fn run_entry_exists(path: &Path) -> bool {
    #[cfg(unix)]
    if let Some((dir, name)) = crate::held_dir::resolve(path) {
        return dir.metadata_at(&name).is_ok();
    }
    fs::symlink_metadata(path).is_ok()
}

/// Opens a file given to a child as its stdin (a prompt file): in a held run dir relative to
/// its descriptor and without following a link ([`crate::held_dir`]), elsewhere by its path;
/// never blocking on a FIFO. `Ok(None)` when it does not exist.
///
/// # Errors
///
/// Not a regular file (`InvalidInput`), or the I/O error.
pub fn open_input_file(path: &Path) -> io::Result<Option<File>> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    match open_in_held_dir(path, read_flags()).unwrap_or_else(|| options.open(path)) {
        Ok(file) if file.metadata()?.is_file() => Ok(Some(file)),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        )),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Reads at most `max` bytes of a run-dir file opened with [`open_run_file_read`]; `Ok(None)`
/// when the file is missing. The second value is true when the file held more than `max`.
///
/// # Errors
///
/// A refused entry or the I/O error.
pub fn read_run_file(path: &Path, max: u64) -> io::Result<Option<(Vec<u8>, bool)>> {
    use std::io::Read;
    let file = match open_run_file_read(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    };
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    let over = bytes.len() as u64 > max;
    bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    Ok(Some((bytes, over)))
}

/// Writes `bytes` to a run-dir file with [`open_run_file`].
///
/// # Errors
///
/// See [`open_run_file`]; write errors.
pub fn write_run_file(path: &Path, bytes: &[u8], mode: WriteMode) -> io::Result<()> {
    use std::io::Write;
    open_run_file(path, mode)?.write_all(bytes)
}

/// Replaces the run-dir file `path` with `bytes` (0600): written to a new temporary file beside
/// it (created exclusively, never through a link) and renamed over the name, so whatever entry
/// was there (a planted link or FIFO) is replaced, never followed nor waited on. In a held run
/// dir every step goes through its descriptor. For gsd-lane's own text that must land whatever
/// a lane left at the name (a failed lane's stub).
///
/// # Errors
///
/// The I/O error of a step (the temporary file is removed).
pub fn replace_run_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let mut temp_name = name.to_owned();
    temp_name.push(format!(
        ".tmp.{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let temp = path.with_file_name(&temp_name);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    #[cfg(unix)]
    let flags = rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CREATE | rustix::fs::OFlags::EXCL;
    #[cfg(not(unix))]
    let flags = ();
    let written = open_in_held_dir(&temp, flags)
        .unwrap_or_else(|| options.open(&temp))
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_data()));
    let renamed = written.and_then(|()| rename_in_place(&temp, path));
    if renamed.is_err() {
        let _ = remove_in_place(&temp);
    }
    renamed
}

/// Renames `from` to `to` (both directly in one directory), through the held descriptor when
/// that directory is held.
fn rename_in_place(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(unix)]
    if let (Some((dir, from_name)), Some(to_name)) =
        (crate::held_dir::resolve(from), to.file_name())
    {
        return dir.rename_at(&from_name, to_name);
    }
    fs::rename(from, to)
}

/// Removes the file `path`, through the held descriptor when its directory is held.
fn remove_in_place(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    if let Some((dir, name)) = crate::held_dir::resolve(path) {
        return dir.remove_at(&name);
    }
    fs::remove_file(path)
}

/// Creates a fresh directory `<temp>/<prefix>XXXXXX` with mode 0700 (whatever the umask) and
/// keeps it.
///
/// # Errors
///
/// The I/O error.
pub fn private_temp_dir(prefix: &str) -> io::Result<PathBuf> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix).rand_bytes(6);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o700));
    }
    builder.tempdir().map(tempfile::TempDir::keep)
}

/// The effective user id of this process (the owner of every file it creates).
#[cfg(unix)]
#[allow(clippy::unnecessary_wraps)]
fn current_uid() -> io::Result<u32> {
    Ok(rustix::process::geteuid().as_raw())
}

/// Why a directory is not one of this user's private run dirs ([`check_own_run_dir`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotOwnRunDir {
    /// It cannot be looked at (missing, unreadable).
    Unreadable(String),
    /// It is a symbolic link (a run dir is never one).
    Symlink,
    /// It is not a directory.
    NotADirectory,
    /// Another user owns it.
    ForeignOwner {
        /// Its owner.
        owner: u32,
        /// This process's effective user id.
        me: u32,
    },
    /// Its mode is not 0700.
    Mode(u32),
}

impl std::fmt::Display for NotOwnRunDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotOwnRunDir::Unreadable(err) => write!(f, "it cannot be read ({err})"),
            NotOwnRunDir::Symlink => f.write_str("it is a symbolic link, not a directory"),
            NotOwnRunDir::NotADirectory => f.write_str("it is not a directory"),
            NotOwnRunDir::ForeignOwner { owner, me } => write!(
                f,
                "it is owned by another user (uid {owner}, you are {me}); gsd-lane only resumes and lists run dirs it created for you"
            ),
            NotOwnRunDir::Mode(mode) => write!(
                f,
                "its mode is {mode:o}, not 0700 (gsd-lane creates every run dir 0700; others could have planted files in it)"
            ),
        }
    }
}

/// Checks that `dir` is a run dir as gsd-lane creates them: a directory (never followed
/// through a symbolic link) owned by this user, with mode exactly 0700.
///
/// # Errors
///
/// What is wrong with it.
pub fn check_own_run_dir(dir: &Path) -> Result<(), NotOwnRunDir> {
    let meta =
        fs::symlink_metadata(dir).map_err(|err| NotOwnRunDir::Unreadable(err.to_string()))?;
    if meta.file_type().is_symlink() {
        return Err(NotOwnRunDir::Symlink);
    }
    if !meta.is_dir() {
        return Err(NotOwnRunDir::NotADirectory);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let me = current_uid().map_err(|err| NotOwnRunDir::Unreadable(err.to_string()))?;
        if meta.uid() != me {
            return Err(NotOwnRunDir::ForeignOwner {
                owner: meta.uid(),
                me,
            });
        }
        let mode = meta.permissions().mode() & 0o7777;
        if mode != 0o700 {
            return Err(NotOwnRunDir::Mode(mode));
        }
    }
    Ok(())
}

/// How far a run dir gsd-lane did not create may be shared with other users.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// A `--run-dir` the user named: writable by nobody else.
    Private,
    /// The working directory `invoke` defaults to (decisions.md #4): a group-writable project
    /// folder is common under umask 002, so only world-writable or foreign-owned is refused.
    WorkingDirectory,
}

/// Why a given run dir is refused ([`check_given_dir`]); each names the directory and the fix.
#[derive(Debug)]
pub enum GivenDirError {
    /// It cannot be looked at (missing, unreadable).
    Unreadable {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// It is not a directory.
    NotADirectory {
        /// The path given.
        dir: PathBuf,
    },
    /// Others may create entries in it.
    Writable {
        /// The directory.
        dir: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// This process's user could not be told.
    CurrentUser {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// Another user owns it.
    ForeignOwner {
        /// The directory.
        dir: PathBuf,
        /// Its owner.
        owner: u32,
        /// This process's effective user id.
        me: u32,
    },
}

impl std::fmt::Display for GivenDirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |dir: &Path| crate::output::neutralize(&dir.display().to_string());
        match self {
            GivenDirError::Unreadable { dir, source } => {
                write!(f, "run dir {}: {source}", shown(dir))
            }
            GivenDirError::NotADirectory { dir } => {
                write!(f, "run dir {} is not a directory", shown(dir))
            }
            GivenDirError::Writable { dir, mode } => write!(
                f,
                "run dir {} is writable by {} (mode {:o}): others could plant entries in it; use a private directory (chmod go-w, or omit --run-dir for a fresh 0700 one)",
                shown(dir),
                if mode & 0o002 != 0 { "everyone" } else { "its group" },
                mode & 0o7777
            ),
            GivenDirError::CurrentUser { dir, source } => {
                write!(f, "checking run dir {}: {source}", shown(dir))
            }
            GivenDirError::ForeignOwner { dir, owner, me } => write!(
                f,
                "run dir {} is owned by another user (uid {owner}, you are {me}): they could plant entries in it; use a directory of your own",
                shown(dir)
            ),
        }
    }
}

impl std::error::Error for GivenDirError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GivenDirError::Unreadable { source, .. }
            | GivenDirError::CurrentUser { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Refuses a given run dir that is not a directory, is writable by others (by its group too,
/// for [`Sharing::Private`]), or is owned by another user: anyone else who can create entries
/// there could plant links under the names gsd-lane writes.
///
/// # Errors
///
/// The reason, naming the directory and the fix.
pub fn check_given_dir(dir: &Path, sharing: Sharing) -> Result<(), GivenDirError> {
    let meta = fs::metadata(dir).map_err(|source| GivenDirError::Unreadable {
        dir: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(GivenDirError::NotADirectory {
            dir: dir.to_path_buf(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let mode = meta.permissions().mode();
        let refused = match sharing {
            Sharing::Private => 0o022,
            Sharing::WorkingDirectory => 0o002,
        };
        if mode & refused != 0 {
            return Err(GivenDirError::Writable {
                dir: dir.to_path_buf(),
                mode,
            });
        }
        let me = current_uid().map_err(|source| GivenDirError::CurrentUser {
            dir: dir.to_path_buf(),
            source,
        })?;
        if meta.uid() != me {
            return Err(GivenDirError::ForeignOwner {
                dir: dir.to_path_buf(),
                owner: meta.uid(),
                me,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn planted_entries_are_refused_and_the_victim_is_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").expect("victim");
        let link = dir.path().join("gsd-review-x.md");
        std::os::unix::fs::symlink(&victim, &link).expect("symlink");
        let hard = dir.path().join("gsd-review-x.err");
        fs::hard_link(&victim, &hard).expect("hard link");
        for (path, what) in [(&link, "a symbolic link"), (&hard, "a hard link")] {
            for mode in [WriteMode::Truncate, WriteMode::Append] {
                let err = write_run_file(path, b"pwned", mode).expect_err("refused");
                let text = err.to_string();
                assert!(text.contains("gsd-review-x"), "{text}");
                assert!(text.contains(what), "{text}");
            }
            assert!(check_entry(path).is_err());
        }
        assert_eq!(fs::read_to_string(&victim).expect("victim"), "keep");
    }

    #[test]
    fn a_planted_fifo_never_blocks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("f");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        assert!(write_run_file(&fifo, b"x", WriteMode::Truncate).is_err());
        assert!(check_entry(&fifo).is_err());
    }

    #[test]
    fn reads_refuse_links_fifos_and_directories_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        fs::write(&victim, "secret").expect("victim");
        let link = dir.path().join("run.json");
        std::os::unix::fs::symlink(&victim, &link).expect("symlink");
        let fifo = dir.path().join("run.lock");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        for (path, what) in [
            (&link, "a symbolic link"),
            (&fifo, "not a regular file"),
            (&dir.path().to_owned(), "a directory"),
        ] {
            let err = open_run_file_read(path).expect_err("refused");
            assert!(err.to_string().contains(what), "{err}");
            assert!(read_run_file(path, 10).is_err());
        }
        assert!(read_run_file(&dir.path().join("missing"), 10)
            .expect("missing is fine")
            .is_none());
        assert_eq!(
            read_run_file(&victim, 3).expect("read"),
            Some((b"sec".to_vec(), true))
        );
        assert_eq!(
            read_run_file(&victim, 6).expect("read"),
            Some((b"secret".to_vec(), false))
        );
        // The lock file: created or kept as is, never through a link.
        let lock = dir.path().join("own.lock");
        fs::write(&lock, "x").expect("lock");
        open_run_file(&lock, WriteMode::Keep).expect("keep");
        assert_eq!(fs::read_to_string(&lock).expect("read"), "x");
        assert!(open_run_file(&link, WriteMode::Keep).is_err());
    }

    #[test]
    fn appends_never_create_follow_or_block_and_reads_refuse_foreign_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing.md");
        let err = open_run_file_to_append(&missing).expect_err("missing");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(!missing.exists(), "never created");
        let review = dir.path().join("r.md");
        fs::write(&review, "one").expect("review");
        std::io::Write::write_all(&mut open_run_file_to_append(&review).expect("open"), b"+")
            .expect("append");
        assert_eq!(fs::read_to_string(&review).expect("read"), "one+");
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").expect("victim");
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&victim, &link).expect("symlink");
        let err = open_run_file_to_append(&link).expect_err("link");
        assert!(err.to_string().contains("a symbolic link"), "{err}");
        let fifo = dir.path().join("fifo.md");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        assert!(open_run_file_to_append(&fifo).is_err());
        assert_eq!(fs::read_to_string(&victim).expect("victim"), "keep");
        // A file another user owns is never read as one gsd-lane wrote (only root can make
        // one here).
        if std::os::unix::fs::chown(&review, Some(65534), None).is_ok() {
            let err = open_run_file_read(&review).expect_err("foreign");
            assert!(err.to_string().contains("owned by another user"), "{err}");
        }
    }

    #[test]
    fn replacing_a_run_file_replaces_a_planted_link_and_never_writes_through_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").expect("victim");
        let review = dir.path().join("gsd-review-x.md");
        std::os::unix::fs::symlink(&victim, &review).expect("symlink");
        replace_run_file(&review, b"stub\n").expect("replace");
        assert_eq!(fs::read_to_string(&victim).expect("victim"), "keep");
        let meta = fs::symlink_metadata(&review).expect("meta");
        assert!(meta.is_file(), "the link was replaced by a file");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::read_to_string(&review).expect("review"), "stub\n");
        let names = run_dir_names(dir.path(), 10).expect("list").0;
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
    }

    #[test]
    fn run_dir_names_are_bounded() {
        let dir = tempfile::tempdir().expect("tempdir");
        for n in 0..5 {
            fs::write(dir.path().join(format!("f{n}")), "").expect("file");
        }
        let (names, more) = run_dir_names(dir.path(), 10).expect("list");
        assert_eq!((names.len(), more), (5, false));
        let (names, more) = run_dir_names(dir.path(), 3).expect("list");
        assert_eq!((names.len(), more), (3, true));
    }

    #[test]
    fn own_run_dirs_are_private_directories_of_ours() {
        let dir = private_temp_dir("gsd-lane-test-").expect("dir");
        assert_eq!(check_own_run_dir(&dir), Ok(()));
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o750)).expect("chmod");
        assert_eq!(check_own_run_dir(&dir), Err(NotOwnRunDir::Mode(0o750)));
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("chmod");
        let link = dir.with_extension("link");
        std::os::unix::fs::symlink(&dir, &link).expect("symlink");
        assert_eq!(check_own_run_dir(&link), Err(NotOwnRunDir::Symlink));
        let file = dir.join("f");
        fs::write(&file, "").expect("file");
        assert_eq!(check_own_run_dir(&file), Err(NotOwnRunDir::NotADirectory));
        assert!(matches!(
            check_own_run_dir(&dir.join("missing")),
            Err(NotOwnRunDir::Unreadable(_))
        ));
        fs::remove_file(&link).expect("cleanup");
        fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn regular_files_are_truncated_or_appended() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.md");
        assert!(check_entry(&path).is_ok());
        write_run_file(&path, b"one", WriteMode::Truncate).expect("create");
        write_run_file(&path, b"+", WriteMode::Append).expect("append");
        assert_eq!(fs::read_to_string(&path).expect("read"), "one+");
        write_run_file(&path, b"two", WriteMode::Truncate).expect("truncate");
        assert_eq!(fs::read_to_string(&path).expect("read"), "two");
        let mode = fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn temp_dirs_are_private_and_shared_dirs_are_refused() {
        let dir = private_temp_dir("gsd-lane-test-").expect("dir");
        let mode = fs::metadata(&dir).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(check_given_dir(&dir, Sharing::Private).is_ok());
        for (bits, word) in [
            (0o770, "its group"),
            (0o707, "everyone"),
            (0o1777, "everyone"),
        ] {
            fs::set_permissions(&dir, fs::Permissions::from_mode(bits)).expect("chmod");
            let why = check_given_dir(&dir, Sharing::Private)
                .expect_err("refused")
                .to_string();
            assert!(why.contains(word), "{why}");
        }
        // The working directory `invoke` defaults to may be group-writable, never world-writable.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o775)).expect("chmod");
        assert!(check_given_dir(&dir, Sharing::WorkingDirectory).is_ok());
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).expect("chmod");
        assert!(check_given_dir(&dir, Sharing::WorkingDirectory).is_err());
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
        assert!(check_given_dir(&dir, Sharing::Private).is_ok());
        assert!(check_given_dir(&dir.join("missing"), Sharing::Private).is_err());
        fs::remove_dir_all(&dir).expect("cleanup");
    }
}
