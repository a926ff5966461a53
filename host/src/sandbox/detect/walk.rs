//! The walk of one root, relative to each open directory: the root is opened once (without
//! following a final symbolic link), every directory below it with `openat` of its name in its
//! parent's open descriptor (`O_NOFOLLOW | O_DIRECTORY`), and every entry examined with
//! `fstatat(AT_SYMLINK_NOFOLLOW)` in its directory's descriptor. A directory's descriptor stays
//! open while a child of it waits to be read, so at most about [`super::MAX_DEPTH`] descriptors
//! per worker are open at once.
//!
//! Directories wait on one shared stack (last in, first out, so the walk stays near a
//! depth-first order and few descriptors are open) that [`WORKERS`] threads take from.

use std::ffi::{CStr, CString};
use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use rustix::fd::OwnedFd;

use super::{Bounds, Cut, Entry, Extent, Kind, Listing, RelativeSkip, Snapshot, Stamp, MAX_DEPTH};

/// Most threads one walk uses (fewer on fewer cores): the directory reads and `fstatat` calls
/// are system time that spreads across cores (BENCHMARKS.md, "Change detection").
pub const WORKERS: usize = 4;

/// Set to a positive integer, the number of threads a walk uses instead (a measuring hook for
/// `bench/detect_cost.py`; the default is the cores, at most [`WORKERS`]).
pub const THREADS_VAR: &str = "GSD_LANE_DETECT_THREADS";

/// Entries examined between two looks at the clock.
const CLOCK_EVERY: usize = 1024;

/// Where a directory waiting to be read is.
enum Source {
    /// The root, opened already.
    Open(OwnedFd),
    /// A name in an open parent directory.
    At(Arc<OwnedFd>, CString),
}

/// A directory waiting to be read.
struct Task {
    /// How to open it.
    source: Source,
    /// Its path relative to the root.
    rel: Vec<u8>,
    /// Its depth (the root is 0).
    depth: usize,
}

/// What the workers share.
struct Shared<'a> {
    /// Directories waiting, how many workers are reading one, and how many wait for one.
    queue: Mutex<(Vec<Task>, usize, usize)>,
    /// Signalled when a directory is queued while a worker waits, when the last busy worker goes
    /// idle, and when a bound stops the walk.
    wake: Condvar,
    /// Entries recorded so far.
    entries: AtomicUsize,
    /// Set when a bound was reached: every worker stops.
    stop: AtomicBool,
    /// Why it stopped.
    cut: Mutex<Option<Cut>>,
    /// When the walk started.
    started: Instant,
    /// The bounds.
    bounds: Bounds,
    /// What is left out.
    skip: &'a RelativeSkip,
}

/// What one worker read.
#[derive(Default)]
struct Found {
    /// The directories it read.
    dirs: Vec<(Vec<u8>, Listing)>,
    /// Directories it could not read.
    unreadable: usize,
}

/// Walks `root` (see the module docs).
pub(super) fn walk(root: &Path, skip: &RelativeSkip, bounds: Bounds) -> Snapshot {
    use rustix::fs::{Mode, OFlags};

    let mut snapshot = Snapshot::default();
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(root, flags, Mode::empty()) else {
        snapshot.unreadable = 1;
        return snapshot;
    };
    snapshot.root = rustix::fs::fstat(&fd).ok().map(|stat| stamp(&stat));
    let shared = Shared {
        queue: Mutex::new((
            vec![Task {
                source: Source::Open(fd),
                rel: Vec::new(),
                depth: 0,
            }],
            0,
            0,
        )),
        wake: Condvar::new(),
        entries: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        cut: Mutex::new(None),
        started: Instant::now(),
        bounds,
        skip,
    };
    let workers = std::env::var(THREADS_VAR)
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .filter(|n| (1..=64).contains(n))
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map_or(1, std::num::NonZeroUsize::get)
                .clamp(1, WORKERS)
        });
    let found: Vec<Found> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..workers)
            .map(|_| scope.spawn(|| work(&shared)))
            .collect();
        let mut found = vec![work(&shared)];
        for handle in handles {
            // A worker that panicked read nothing this walk can vouch for: its directories are
            // counted as unread below (they are missing), never as unchanged.
            found.push(handle.join().unwrap_or_else(|_| Found {
                dirs: Vec::new(),
                unreadable: 1,
            }));
        }
        found
    });
    for part in found {
        snapshot.unreadable += part.unreadable;
        for (rel, listing) in part.dirs {
            snapshot.entries += listing.entries.len();
            snapshot.dirs.insert(rel, listing);
        }
    }
    snapshot.cut = *lock(&shared.cut);
    snapshot.unread = lock(&shared.queue).0.len();
    snapshot
}

/// Locks `mutex`, whatever a panicking holder left.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One worker: takes directories until none is left or a bound stops the walk.
fn work(shared: &Shared<'_>) -> Found {
    let mut found = Found::default();
    let mut buffer = vec![MaybeUninit::<u8>::uninit(); DIRENT_BUFFER];
    while let Some(task) = next(shared) {
        let children = read(shared, task, &mut buffer, &mut found);
        let mut queue = lock(&shared.queue);
        // A waiting worker has something to do, or must see that the walk is over; otherwise
        // nobody waits and the wake-up (a system call) is skipped.
        let wake = queue.2 > 0 && (!children.is_empty() || queue.1 == 1);
        // Reversed, so the first name in sorted order is taken first.
        queue.0.extend(children.into_iter().rev());
        queue.1 -= 1;
        drop(queue);
        if wake {
            shared.wake.notify_all();
        }
    }
    found
}

/// The next directory to read (`None`: the walk is over).
fn next(shared: &Shared<'_>) -> Option<Task> {
    let mut queue = lock(&shared.queue);
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return None;
        }
        if let Some(task) = queue.0.pop() {
            queue.1 += 1;
            return Some(task);
        }
        if queue.1 == 0 {
            return None;
        }
        queue.2 += 1;
        queue = shared
            .wake
            .wait(queue)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        queue.2 -= 1;
    }
}

/// Stops the walk for `cut` (the first reason is kept).
fn stop(shared: &Shared<'_>, cut: Cut) {
    lock(&shared.cut).get_or_insert(cut);
    shared.stop.store(true, Ordering::SeqCst);
    shared.wake.notify_all();
}

/// Bytes of the buffer each worker reads directory entries into (`getdents64`): a directory of
/// a few thousand names is read in one call.
const DIRENT_BUFFER: usize = 64 * 1024;

/// The names of one directory as read: one buffer holding each name followed by a NUL byte, and
/// the offset and length of each name in it, sorted by name.
struct Names {
    /// The names, each followed by a NUL byte, in the order the directory gave them.
    bytes: Vec<u8>,
    /// (offset, length) of every name but `.` and `..`, sorted by name.
    spans: Vec<(usize, usize)>,
}

impl Names {
    /// The name at `span`.
    fn name(&self, (at, len): (usize, usize)) -> &[u8] {
        self.bytes.get(at..at + len).unwrap_or_default()
    }

    /// The name at `span` with its NUL byte (`None` cannot happen: every name was stored so).
    fn c_name(&self, (at, len): (usize, usize)) -> Option<&CStr> {
        CStr::from_bytes_with_nul(self.bytes.get(at..=at + len)?).ok()
    }

    /// Appends `name`.
    fn push(&mut self, name: &[u8]) {
        if name != b"." && name != b".." {
            self.spans.push((self.bytes.len(), name.len()));
            self.bytes.extend_from_slice(name);
            self.bytes.push(0);
        }
    }

    /// Sorts the spans by name.
    fn sort(&mut self) {
        let bytes = &self.bytes;
        self.spans.sort_unstable_by(|&(a, la), &(b, lb)| {
            bytes
                .get(a..a + la)
                .unwrap_or_default()
                .cmp(bytes.get(b..b + lb).unwrap_or_default())
        });
    }
}

/// Every name of the open directory `fd`, with `buffer` for `getdents64` (read straight from
/// `fd`, with no second descriptor and no allocation per name).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn names_of(fd: &OwnedFd, buffer: &mut [MaybeUninit<u8>]) -> rustix::io::Result<Names> {
    let mut names = Names {
        bytes: Vec::new(),
        spans: Vec::new(),
    };
    let mut dir = rustix::fs::RawDir::new(fd, buffer);
    while let Some(entry) = dir.next() {
        names.push(entry?.file_name().to_bytes());
    }
    names.sort();
    Ok(names)
}

/// Every name of the open directory `fd` (`buffer` is not needed here).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn names_of(fd: &OwnedFd, _buffer: &mut [MaybeUninit<u8>]) -> rustix::io::Result<Names> {
    let mut names = Names {
        bytes: Vec::new(),
        spans: Vec::new(),
    };
    let mut dir = rustix::fs::Dir::read_from(fd)?;
    while let Some(entry) = dir.read() {
        names.push(entry?.file_name().to_bytes());
    }
    names.sort();
    Ok(names)
}

/// Reads one directory into `found`; returns its subdirectories to read.
fn read(
    shared: &Shared<'_>,
    task: Task,
    buffer: &mut [MaybeUninit<u8>],
    found: &mut Found,
) -> Vec<Task> {
    use rustix::fs::{AtFlags, Mode, OFlags};

    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let opened = match task.source {
        Source::Open(fd) => Ok(fd),
        Source::At(parent, name) => {
            rustix::fs::openat(&*parent, name.as_c_str(), flags, Mode::empty())
        }
    };
    let Ok(fd) = opened else {
        found.unreadable += 1;
        return Vec::new();
    };
    let Ok(mut names) = names_of(&fd, buffer) else {
        found.unreadable += 1;
        return Vec::new();
    };
    let fd = Arc::new(fd);
    let before = shared
        .entries
        .fetch_add(names.spans.len(), Ordering::SeqCst);
    let room = shared.bounds.entries.saturating_sub(before);
    // Set when a bound stops this listing: the number of names examined.
    let mut cut_at = None;
    if names.spans.len() > room {
        names.spans.truncate(room);
        cut_at = Some(room);
        stop(shared, Cut::Entries(shared.bounds.entries));
    }
    let mut holes = false;
    let mut entries = Vec::with_capacity(names.spans.len());
    let mut children = Vec::new();
    for (index, &span) in names.spans.iter().enumerate() {
        if index % CLOCK_EVERY == CLOCK_EVERY - 1 && shared.started.elapsed() > shared.bounds.time {
            cut_at = Some(index);
            stop(shared, Cut::Time(shared.bounds.time));
            break;
        }
        let name = names.name(span);
        if !shared.skip.is_empty() && shared.skip.skips(&task.rel, name) {
            continue;
        }
        let stat = names
            .c_name(span)
            .and_then(|c_name| rustix::fs::statat(&*fd, c_name, AtFlags::SYMLINK_NOFOLLOW).ok());
        let Some(stat) = stat else {
            // Listed but gone or not examinable: this listing does not vouch for its absence.
            holes = true;
            continue;
        };
        let stamp = stamp(&stat);
        if stamp.kind == Kind::Dir {
            if task.depth + 1 >= MAX_DEPTH {
                found.unreadable += 1;
            } else if let Some(c_name) = names.c_name(span) {
                children.push(Task {
                    source: Source::At(Arc::clone(&fd), c_name.to_owned()),
                    rel: child_path(&task.rel, name),
                    depth: task.depth + 1,
                });
            }
        }
        entries.push(Entry {
            at: span.0,
            len: span.1,
            stamp,
        });
    }
    let extent = match cut_at {
        _ if holes => Extent::Holes,
        Some(examined) => Extent::Upto(
            examined
                .checked_sub(1)
                .and_then(|i| names.spans.get(i))
                .map(|&span| names.name(span).to_vec()),
        ),
        None => Extent::Whole,
    };
    let listing = Listing {
        names: names.bytes,
        entries,
        extent,
    };
    if shared.started.elapsed() > shared.bounds.time {
        stop(shared, Cut::Time(shared.bounds.time));
    }
    found.dirs.push((task.rel, listing));
    children
}

/// `dir/name` (`name` alone at the root).
fn child_path(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut path = Vec::with_capacity(dir.len() + 1 + name.len());
    if !dir.is_empty() {
        path.extend_from_slice(dir);
        path.push(b'/');
    }
    path.extend_from_slice(name);
    path
}

/// `value` widened (the field types of `struct stat` differ between targets).
fn wide<T: Into<i128>>(value: T) -> i128 {
    value.into()
}

/// The stamp of one entry.
fn stamp(stat: &rustix::fs::Stat) -> Stamp {
    let unsigned = |value: i128| u64::try_from(value).unwrap_or(u64::MAX);
    let signed = |value: i128| i64::try_from(value).unwrap_or(i64::MAX);
    let nanos = |value: i128| u32::try_from(value).unwrap_or(0);
    let mode = u32::try_from(wide(stat.st_mode)).unwrap_or(0);
    let kind = match rustix::fs::FileType::from_raw_mode(stat.st_mode) {
        rustix::fs::FileType::Directory => Kind::Dir,
        rustix::fs::FileType::RegularFile => Kind::File,
        rustix::fs::FileType::Symlink => Kind::Link,
        _ => Kind::Other,
    };
    Stamp {
        kind,
        size: if kind == Kind::Dir {
            0
        } else {
            unsigned(wide(stat.st_size))
        },
        mode,
        owner: (stat.st_uid, stat.st_gid),
        inode: unsigned(wide(stat.st_ino)),
        modified: (signed(wide(stat.st_mtime)), nanos(wide(stat.st_mtime_nsec))),
        changed: (signed(wide(stat.st_ctime)), nanos(wide(stat.st_ctime_nsec))),
    }
}
