//! Detection: the confined repository roots compared before and after lanes ran, so that a
//! change is reported where it could not be refused (the Landlock fallback, which governs no
//! `chmod`, `utime` or extended attribute; no Landlock at all; `--sandbox detect`; a lane
//! allowed to write the repository). Under the read-only view nothing is compared: the kernel
//! refuses every change.
//!
//! A [`Snapshot`] is a walk of one root, `.git` included, relative to each open directory
//! (`openat` and `fstatat` with `O_NOFOLLOW`, [`walk`]): no path is looked up from the root
//! again, so a directory swapped for a symbolic link mid-walk is recorded as the link, never
//! followed. For every entry it records the type, size, mode, owner, inode, modification and
//! status-change times. The status-change time cannot be set by a program, so a write that
//! restores the modification time, a `chmod` back to the old mode, a `utime` or an extended
//! attribute set on a file is still seen. The walk never runs anything: running `git` in the
//! repository under review would execute programs its own configuration names.
//!
//! Each directory's names are read in full and sorted before any of them is examined, and the
//! directories are walked in that order (in parallel on up to [`walk::WORKERS`] threads, which
//! pays on a large tree).
//!
//! # Bounds, and never a change not observed
//!
//! A walk stops at [`Bounds::entries`] entries or after [`Bounds::time`] (both can be set for a
//! run, [`ENTRIES_VAR`] and [`WALK_MS_VAR`]). It then records exactly what it read: the
//! directories whose listing it read in full, the entries it examined. The comparison
//! ([`compare`]) reports a change only where both walks observed it: an entry is "removed" only
//! when the later walk read its directory in full and did not find it, "created" only when the
//! earlier walk read the directory in full, and a directory one walk did not read is not
//! compared at all. A comparison that left anything out says what it covered
//! ([`Comparison::partial`]) instead of reading as "no change".
//!
//! # One walk per review
//!
//! A review with several lanes at once walks once before its first lane that needs detection
//! starts and once after its last lane ended ([`session`]); its changes are said to have
//! happened during the review (no lane can be blamed when several ran at once). When lanes run
//! one at a time (`--jobs 1`) each lane's "after" walk is the next lane's "before", and changes
//! are attributed to the lane. `run` walks before and after its one lane.

mod compare;
pub(crate) mod session;
#[cfg(unix)]
mod walk;

/// No walk without `openat` (not a Unix): every snapshot reads nothing, so every comparison
/// says it covered nothing instead of "no change".
#[cfg(not(unix))]
mod walk {
    /// An empty snapshot whose root could not be opened.
    pub(super) fn walk(
        _root: &std::path::Path,
        _skip: &super::RelativeSkip,
        _bounds: super::Bounds,
    ) -> super::Snapshot {
        super::Snapshot {
            unreadable: 1,
            ..super::Snapshot::default()
        }
    }
}

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use compare::{compare, Comparison};

/// Most entries one snapshot records, unless [`ENTRIES_VAR`] says otherwise.
pub const MAX_ENTRIES: usize = 1_000_000;
/// Longest one snapshot walks, unless [`WALK_MS_VAR`] says otherwise.
pub const MAX_WALK: Duration = Duration::from_secs(30);
/// Most changes listed in one report (the count of the rest is given).
pub const MAX_LISTED: usize = 20;
/// Deepest directory a walk reads (counted from the root); deeper ones are left out and said.
pub const MAX_DEPTH: usize = 512;
/// Set to a positive integer, the most entries one snapshot records (default [`MAX_ENTRIES`]).
pub const ENTRIES_VAR: &str = "GSD_LANE_DETECT_MAX_ENTRIES";
/// Set to a positive integer, the most milliseconds one snapshot walks (default [`MAX_WALK`]).
pub const WALK_MS_VAR: &str = "GSD_LANE_DETECT_MAX_WALK_MS";

/// The bounds of one walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Most entries recorded.
    pub entries: usize,
    /// Longest walk.
    pub time: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            entries: MAX_ENTRIES,
            time: MAX_WALK,
        }
    }
}

impl Bounds {
    /// The defaults, with [`ENTRIES_VAR`] and [`WALK_MS_VAR`] applied when they hold a
    /// positive integer (anything else is ignored and the default applies).
    pub fn from_env() -> Bounds {
        let read = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|text| text.trim().parse::<u64>().ok())
                .filter(|n| *n > 0)
        };
        let mut bounds = Bounds::default();
        if let Some(n) = read(ENTRIES_VAR) {
            bounds.entries = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(ms) = read(WALK_MS_VAR) {
            bounds.time = Duration::from_millis(ms);
        }
        bounds
    }
}

/// The kind of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link.
    Link,
    /// Anything else (FIFO, socket, device).
    Other,
}

/// What is recorded of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    /// Its type.
    kind: Kind,
    /// Size in bytes (0 for a directory).
    size: u64,
    /// Permission bits and file type.
    mode: u32,
    /// Owner and group.
    owner: (u32, u32),
    /// Inode number (a replaced file gets a new one).
    inode: u64,
    /// Modification time: seconds, nanoseconds.
    modified: (i64, u32),
    /// Status-change time: seconds, nanoseconds.
    changed: (i64, u32),
}

/// The names of one directory that a walk read, with their stamps.
///
/// The names live one after another in one buffer (each followed by a NUL byte, so that it can
/// be passed to `fstatat` as it is): one allocation per directory instead of one per name, which
/// on a 300,000-entry repository was most of the walk's own (not the kernel's) time.
#[derive(Debug, Clone, Default)]
struct Listing {
    /// Every name of `entries`, each followed by a NUL byte.
    names: Vec<u8>,
    /// Entries, sorted by name.
    entries: Vec<Entry>,
    /// How much of the directory the entries cover.
    extent: Extent,
}

/// One entry of a [`Listing`]: where its name is in the listing's buffer, and its stamp.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Offset of its name in [`Listing::names`].
    at: usize,
    /// Length of its name (without the NUL byte).
    len: usize,
    /// What was recorded of it.
    stamp: Stamp,
}

/// How much of a directory a listing covers (a name left out on purpose, [`Skip`], does not
/// count as missing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Extent {
    /// Every name was read and examined.
    #[default]
    Whole,
    /// A bound stopped the walk: every name up to this one (in sorted order, inclusive) was
    /// examined, none after it (`None`: none at all).
    Upto(Option<Vec<u8>>),
    /// A name could not be examined (gone, or no search permission): no absence is vouched for.
    Holes,
}

impl Listing {
    /// The name of `entry` (a listing's own entry; empty for any other).
    fn name(&self, entry: &Entry) -> &[u8] {
        self.names
            .get(entry.at..entry.at.saturating_add(entry.len))
            .unwrap_or_default()
    }

    /// Every entry with its name, in sorted order.
    fn iter(&self) -> impl Iterator<Item = (&[u8], &Stamp)> + '_ {
        self.entries
            .iter()
            .map(move |entry| (self.name(entry), &entry.stamp))
    }

    /// Whether this listing shows that `name` was absent when it lacks it.
    fn vouches_absence(&self, name: &[u8]) -> bool {
        match &self.extent {
            Extent::Whole => true,
            Extent::Upto(Some(last)) => name <= last.as_slice(),
            Extent::Upto(None) | Extent::Holes => false,
        }
    }
}

/// Why a walk stopped before reading everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The entry bound was reached.
    Entries(usize),
    /// The time bound was reached.
    Time(Duration),
}

/// The state of one repository root at one moment, as far as the walk read it.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Prefix of every name reported (empty for the plan's repository root).
    label: String,
    /// The root directory's own stamp (`None`: it could not be examined).
    root: Option<Stamp>,
    /// Every directory read, by its path relative to the root (`""` for the root itself,
    /// `/`-separated bytes).
    dirs: HashMap<Vec<u8>, Listing>,
    /// Entries recorded.
    entries: usize,
    /// Set when a bound stopped the walk.
    cut: Option<Cut>,
    /// Directories that could not be opened or listed (permissions, vanished, too deep).
    unreadable: usize,
    /// Directories not read because the walk stopped first.
    unread: usize,
}

impl Snapshot {
    /// Walks `root` under `bounds`, leaving out the paths `skip` names (the lane's own files and
    /// scratch directory, or the review's run dir, when they lie inside); every change is
    /// named with `label` in front of its path relative to `root`.
    pub fn take(root: &Path, skip: &Skip, label: &str, bounds: Bounds) -> Snapshot {
        let mut snapshot = walk::walk(root, &skip.relative_to(root), bounds);
        snapshot.label = label.to_owned();
        snapshot
    }

    /// Whether the walk read everything under its root.
    pub fn is_whole(&self) -> bool {
        self.cut.is_none() && self.unreadable == 0 && self.unread == 0 && self.root.is_some()
    }
}

/// Paths a walk leaves out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skip {
    /// Left out when a path equals one of these.
    pub exact: Vec<PathBuf>,
    /// Left out when a path's final name starts with this one's final name in the same
    /// directory (the scratch directories gsd-lane names in the temporary directory).
    pub prefixed: Vec<PathBuf>,
}

/// [`Skip`] relative to one root, as `/`-separated bytes.
#[derive(Debug, Clone, Default)]
struct RelativeSkip {
    /// Exact relative paths.
    exact: Vec<Vec<u8>>,
    /// (directory relative path, name prefix).
    prefixed: Vec<(Vec<u8>, Vec<u8>)>,
}

impl RelativeSkip {
    /// Whether the entry `name` of the directory `dir` (relative) is left out.
    fn skips(&self, dir: &[u8], name: &[u8]) -> bool {
        self.exact.iter().any(|p| is_child_path(p, dir, name))
            || self
                .prefixed
                .iter()
                .any(|(d, prefix)| d == dir && name.starts_with(prefix))
    }

    /// Whether nothing is left out.
    fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.prefixed.is_empty()
    }
}

/// Whether `path` is `dir/name` (`name` alone when `dir` is the root, empty), without making
/// that path.
fn is_child_path(path: &[u8], dir: &[u8], name: &[u8]) -> bool {
    if dir.is_empty() {
        return path == name;
    }
    path.len() == dir.len() + 1 + name.len()
        && path.starts_with(dir)
        && path.get(dir.len()) == Some(&b'/')
        && path.ends_with(name)
}

impl Skip {
    /// The paths that lie under `root`, relative to it.
    fn relative_to(&self, root: &Path) -> RelativeSkip {
        let rel = |path: &Path| -> Option<Vec<u8>> {
            let inner = path.strip_prefix(root).ok()?;
            let text = inner.to_string_lossy().into_owned().into_bytes();
            (!text.is_empty()).then_some(text)
        };
        let mut out = RelativeSkip::default();
        out.exact.extend(self.exact.iter().filter_map(|p| rel(p)));
        for path in &self.prefixed {
            let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                continue;
            };
            let dir = if parent == root {
                Some(Vec::new())
            } else {
                rel(parent)
            };
            if let Some(dir) = dir {
                out.prefixed
                    .push((dir, name.to_string_lossy().into_owned().into_bytes()));
            }
        }
        out
    }
}

/// The changes from `before` to `after`, one snapshot of each per confined root in the same
/// order: [`compare`] of every pair, merged.
pub fn changes_of(before: &[Snapshot], after: &[Snapshot]) -> Comparison {
    let mut all = Comparison::default();
    for (old, new) in before.iter().zip(after) {
        all.merge(compare(old, new));
    }
    all.bound_list();
    all
}

#[cfg(all(test, unix))]
mod tests;
