//! Detection: the repository compared before and after a lane, so that a change is reported
//! where it could not be refused (no Landlock, another OS, `detect` chosen, or what Landlock
//! does not govern, such as `chmod`).
//!
//! A snapshot is a bounded walk of the repository root, `.git` included, recording for every
//! entry its type, size, mode, inode, modification and status-change times. The status-change
//! time (`ctime`) cannot be set by a program, so a write that restores the modification time is
//! still seen. The walk never follows symbolic links and never runs anything: running `git` in
//! the repository under review would execute programs its own configuration names (an
//! `fsmonitor`, a clean filter), which the reviewed repository controls.
//!
//! Bounds: at most [`MAX_ENTRIES`] entries and [`MAX_WALK`] of walking; past either, the snapshot
//! is marked incomplete and the comparison says so instead of claiming "no change".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Most entries one snapshot records.
pub const MAX_ENTRIES: usize = 200_000;
/// Longest one snapshot walks.
pub const MAX_WALK: Duration = Duration::from_secs(10);
/// Most changes listed in one report (the count of the rest is given).
pub const MAX_LISTED: usize = 20;

/// What is recorded of one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    /// `d`, `f`, `l` or `o` (other).
    kind: char,
    /// Size in bytes.
    size: u64,
    /// Permission bits and file type.
    mode: u32,
    /// Inode number (a replaced file gets a new one).
    inode: u64,
    /// Modification time, nanoseconds.
    modified: i128,
    /// Status-change time, nanoseconds.
    changed: i128,
}

/// The state of a repository at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Entry stamps by path relative to the root (`/`-separated).
    entries: BTreeMap<String, Stamp>,
    /// False when a bound cut the walk short or a directory could not be listed.
    complete: bool,
}

impl Snapshot {
    /// Walks `root`, skipping the paths in `skip` (the lane's own files and scratch directory
    /// when they lie inside); entries are named relative to `root`.
    #[cfg(test)]
    pub fn take(root: &Path, skip: &[PathBuf]) -> Snapshot {
        Snapshot::take_labelled(root, skip, "")
    }

    /// [`Snapshot::take`], with every entry's name prefixed by `label` (a root other than the
    /// plan's repository root is named in full).
    pub fn take_labelled(root: &Path, skip: &[PathBuf], label: &str) -> Snapshot {
        let started = Instant::now();
        let mut snapshot = Snapshot {
            entries: BTreeMap::new(),
            complete: true,
        };
        let mut pending = vec![(root.to_path_buf(), label.to_owned())];
        while let Some((dir, rel)) = pending.pop() {
            let Ok(listing) = std::fs::read_dir(&dir) else {
                snapshot.complete = false;
                continue;
            };
            for entry in listing {
                if snapshot.entries.len() >= MAX_ENTRIES || started.elapsed() > MAX_WALK {
                    snapshot.complete = false;
                    return snapshot;
                }
                let Ok(entry) = entry else {
                    snapshot.complete = false;
                    continue;
                };
                let path = entry.path();
                if skip.contains(&path) {
                    continue;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                let rel_path = if rel.is_empty() {
                    name
                } else if rel.ends_with('/') {
                    format!("{rel}{name}")
                } else {
                    format!("{rel}/{name}")
                };
                let Ok(meta) = std::fs::symlink_metadata(&path) else {
                    // Vanished between listing and stat: absent from this snapshot.
                    continue;
                };
                let stamp = stamp(&meta);
                if stamp.kind == 'd' {
                    pending.push((path, rel_path.clone()));
                }
                snapshot.entries.insert(rel_path, stamp);
            }
        }
        snapshot
    }

    /// Changes from `self` (before) to `after`, one line each (`created x`, `removed x`,
    /// `modified x`, `mode changed x`), at most [`MAX_LISTED`] plus a count of the rest, and a
    /// note when either snapshot is incomplete. Empty when nothing changed.
    #[cfg(test)]
    pub fn changes(&self, after: &Snapshot) -> Vec<String> {
        changes_of(std::slice::from_ref(self), std::slice::from_ref(after))
    }

    /// Every change from `self` (before) to `after`, unbounded.
    fn all_changes(&self, after: &Snapshot, all: &mut Vec<String>) {
        for (path, old) in &self.entries {
            match after.entries.get(path) {
                None => all.push(format!("removed {path}")),
                Some(new) if new == old => {}
                Some(new) if new.kind != old.kind || new.inode != old.inode => {
                    all.push(format!("replaced {path}"));
                }
                Some(new)
                    if old.kind != 'd'
                        && (new.size != old.size || new.modified != old.modified) =>
                {
                    all.push(format!("modified {path}"));
                }
                Some(new) if new.mode != old.mode => all.push(format!("mode changed {path}")),
                // Directories' times move when an entry inside changes; that entry is listed.
                Some(_) if old.kind == 'd' => {}
                Some(_) => all.push(format!("touched {path}")),
            }
        }
        for path in after.entries.keys() {
            if !self.entries.contains_key(path) {
                all.push(format!("created {path}"));
            }
        }
    }
}

/// Changes from each snapshot of `before` to the one at the same place in `after` (one per
/// confined root), one line each (`created x`, `removed x`, `modified x`, `mode changed x`), at
/// most [`MAX_LISTED`] plus a count of the rest, and a note when any snapshot is incomplete.
/// Empty when nothing changed.
pub fn changes_of(before: &[Snapshot], after: &[Snapshot]) -> Vec<String> {
    let mut all = Vec::new();
    let mut partial = before.len() != after.len();
    for (old, new) in before.iter().zip(after) {
        old.all_changes(new, &mut all);
        partial |= !(old.complete && new.complete);
    }
    let mut listed: Vec<String> = all.iter().take(MAX_LISTED).cloned().collect();
    if all.len() > MAX_LISTED {
        listed.push(format!("and {} more", all.len() - MAX_LISTED));
    }
    if partial && !listed.is_empty() {
        listed.push("(the comparison is partial: the repository is too large)".to_owned());
    }
    listed
}

/// The stamp of one entry.
#[cfg(unix)]
fn stamp(meta: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;

    let kind = kind_of(meta);
    let nanos = |secs: i64, nsec: i64| i128::from(secs) * 1_000_000_000 + i128::from(nsec);
    Stamp {
        kind,
        size: if kind == 'd' { 0 } else { meta.size() },
        mode: meta.mode(),
        inode: meta.ino(),
        modified: nanos(meta.mtime(), meta.mtime_nsec()),
        changed: nanos(meta.ctime(), meta.ctime_nsec()),
    }
}

/// The stamp of one entry (no inode or status-change time here).
#[cfg(not(unix))]
fn stamp(meta: &std::fs::Metadata) -> Stamp {
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX));
    Stamp {
        kind: kind_of(meta),
        size: meta.len(),
        mode: u32::from(meta.permissions().readonly()),
        inode: 0,
        modified,
        changed: 0,
    }
}

/// One letter for the entry's type.
fn kind_of(meta: &std::fs::Metadata) -> char {
    let file_type = meta.file_type();
    if file_type.is_dir() {
        'd'
    } else if file_type.is_file() {
        'f'
    } else if file_type.is_symlink() {
        'l'
    } else {
        'o'
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn every_kind_of_change_is_listed_and_an_untouched_tree_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join(".git/refs")).unwrap();
        fs::write(root.join("a"), "a").unwrap();
        fs::write(root.join("b"), "b").unwrap();
        fs::write(root.join("c"), "c").unwrap();
        fs::write(root.join(".git/HEAD"), "ref").unwrap();
        let run = root.join("run");
        fs::create_dir(&run).unwrap();
        let before = Snapshot::take(root, std::slice::from_ref(&run));
        assert!(before
            .changes(&Snapshot::take(root, std::slice::from_ref(&run)))
            .is_empty());

        fs::write(root.join("a"), "changed!").unwrap();
        fs::remove_file(root.join("b")).unwrap();
        fs::write(root.join("new"), "n").unwrap();
        fs::write(root.join(".git/HEAD"), "moved").unwrap();
        fs::write(run.join("review.md"), "ok").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(root.join("c"), fs::Permissions::from_mode(0o600)).unwrap();
        }
        let changes = before.changes(&Snapshot::take(root, &[run]));
        assert!(changes.contains(&"modified a".to_owned()), "{changes:?}");
        assert!(changes.contains(&"removed b".to_owned()), "{changes:?}");
        assert!(changes.contains(&"created new".to_owned()), "{changes:?}");
        assert!(
            changes.contains(&"modified .git/HEAD".to_owned()),
            "{changes:?}"
        );
        #[cfg(unix)]
        assert!(
            changes.contains(&"mode changed c".to_owned()),
            "{changes:?}"
        );
        assert!(
            !changes.iter().any(|c| c.contains("review.md")),
            "{changes:?}"
        );
    }

    #[test]
    fn the_list_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let before = Snapshot::take(dir.path(), &[]);
        for i in 0..(MAX_LISTED + 5) {
            fs::write(dir.path().join(format!("f{i:03}")), "x").unwrap();
        }
        let changes = before.changes(&Snapshot::take(dir.path(), &[]));
        assert_eq!(changes.len(), MAX_LISTED + 1);
        assert_eq!(changes.last().map(String::as_str), Some("and 5 more"));
    }
}
