//! The comparison of two snapshots of one root: only what both walks observed.

use std::cmp::Ordering;

use super::{Cut, Kind, Listing, Snapshot, Stamp, MAX_LISTED};

/// What a comparison found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// One line per change (`created x`, `removed x`, `replaced x`, `modified x`,
    /// `mode changed x`, `owner changed x`, `touched x`), at most [`MAX_LISTED`] and then
    /// `and N more` once [`Comparison::bound_list`] ran.
    pub changes: Vec<String>,
    /// Set when the comparison did not cover every entry: what it covered and why not the
    /// rest. The changes listed were observed all the same; nothing is said of the rest.
    pub partial: Option<String>,
    /// Entries examined by both walks.
    pub compared: usize,
}

impl Comparison {
    /// Whether a change was seen.
    pub fn changed(&self) -> bool {
        !self.changes.is_empty()
    }

    /// Adds `other`'s findings.
    pub(super) fn merge(&mut self, other: Comparison) {
        self.changes.extend(other.changes);
        self.compared += other.compared;
        self.partial = match (self.partial.take(), other.partial) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
    }

    /// Keeps the first [`MAX_LISTED`] changes and counts the rest.
    pub(super) fn bound_list(&mut self) {
        if self.changes.len() > MAX_LISTED {
            let rest = self.changes.len() - MAX_LISTED;
            self.changes.truncate(MAX_LISTED);
            self.changes.push(format!("and {rest} more"));
        }
    }

    /// One sentence for a partial comparison that found nothing (`None` when it was whole or
    /// found a change, whose own sentence carries [`Comparison::partial`]).
    pub fn partial_sentence(&self) -> Option<String> {
        self.partial.as_ref().map(|why| {
            format!(
                "the check for repository changes was partial: {why}; nothing outside that part \
                 was checked"
            )
        })
    }
}

/// The changes from `before` to `after` (two walks of the same root).
pub fn compare(before: &Snapshot, after: &Snapshot) -> Comparison {
    let mut out = Comparison::default();
    let label = &before.label;
    if let (Some(old), Some(new)) = (&before.root, &after.root) {
        let root_name = if label.is_empty() {
            ".".to_owned()
        } else {
            label.trim_end_matches('/').to_owned()
        };
        if let Some(what) = difference(old, new) {
            out.changes.push(format!("{what} {root_name}"));
        }
    }
    let mut dirs: Vec<&Vec<u8>> = before.dirs.keys().collect();
    dirs.sort_unstable();
    for rel in dirs {
        let (Some(old), Some(new)) = (before.dirs.get(rel), after.dirs.get(rel)) else {
            continue;
        };
        compare_listing((before, after), rel, old, new, &mut out);
    }
    out.partial = coverage(before, after, out.compared);
    out
}

/// The changes within one directory both walks read.
fn compare_listing(
    (before, after): (&Snapshot, &Snapshot),
    dir: &[u8],
    old: &Listing,
    new: &Listing,
    out: &mut Comparison,
) {
    let label = &before.label;
    let name_of = |name: &[u8]| {
        let mut path = String::from(label);
        if !dir.is_empty() {
            path.push_str(&String::from_utf8_lossy(dir));
            path.push('/');
        }
        path.push_str(&String::from_utf8_lossy(name));
        crate::output::escape_text(&path)
    };
    let (mut i, mut j) = (0, 0);
    while i < old.entries.len() || j < new.entries.len() {
        let (a, b) = (old.entries.get(i), new.entries.get(j));
        let order = match (a, b) {
            (Some(a), Some(b)) => old.name(a).cmp(new.name(b)),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match (order, a, b) {
            (Ordering::Equal, Some(a), Some(b)) => {
                out.compared += 1;
                if let Some(what) = difference(&a.stamp, &b.stamp) {
                    out.changes.push(format!("{what} {}", name_of(old.name(a))));
                }
                i += 1;
                j += 1;
            }
            (Ordering::Less, Some(a), _) => {
                // Only the later walk's listing vouches for an absence.
                let name = old.name(a);
                if new.vouches_absence(name) {
                    out.changes.push(format!("removed {}", name_of(name)));
                    if a.stamp.kind == Kind::Dir {
                        subtree(before, &child(dir, name), "removed", out);
                    }
                }
                i += 1;
            }
            (_, _, Some(b)) => {
                let name = new.name(b);
                if old.vouches_absence(name) {
                    out.changes.push(format!("created {}", name_of(name)));
                    if b.stamp.kind == Kind::Dir {
                        subtree(after, &child(dir, name), "created", out);
                    }
                }
                j += 1;
            }
            // Not reached: the loop runs while either side has an entry left.
            _ => break,
        }
    }
}

/// `dir/name` (`name` alone at the root).
fn child(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut path = dir.to_vec();
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    path
}

/// Every entry `snapshot` read under the directory `dir` (a directory created or removed as a
/// whole: its contents were observed by the one walk that saw it, and their absence by the
/// other), one line each as `what path`, in sorted order.
fn subtree(snapshot: &Snapshot, dir: &[u8], what: &str, out: &mut Comparison) {
    let mut pending = vec![dir.to_vec()];
    while let Some(rel) = pending.pop() {
        let Some(listing) = snapshot.dirs.get(&rel) else {
            continue;
        };
        let mut below = Vec::new();
        for (name, stamp) in listing.iter() {
            let path = child(&rel, name);
            let mut shown = snapshot.label.clone();
            shown.push_str(&String::from_utf8_lossy(&path));
            out.changes
                .push(format!("{what} {}", crate::output::escape_text(&shown)));
            if stamp.kind == Kind::Dir {
                below.push(path);
            }
        }
        pending.extend(below.into_iter().rev());
    }
}

/// How one entry changed (`None`: it did not).
fn difference(old: &Stamp, new: &Stamp) -> Option<&'static str> {
    if old == new {
        return None;
    }
    if old.kind != new.kind || old.inode != new.inode {
        return Some("replaced");
    }
    if old.kind != Kind::Dir && (old.size != new.size || old.modified != new.modified) {
        return Some("modified");
    }
    if old.mode != new.mode {
        return Some("mode changed");
    }
    if old.owner != new.owner {
        return Some("owner changed");
    }
    // A directory's times move whenever an entry is created or removed inside it, which is
    // listed on its own (and the lane's own files may be among them): not a change of its own.
    if old.kind == Kind::Dir {
        return None;
    }
    // Only the status-change time moved: a `utime` back, an extended attribute, a `chmod`
    // back to the same mode, a write that restored the size and modification time.
    Some("touched")
}

/// What the two walks covered, when it is not everything.
fn coverage(before: &Snapshot, after: &Snapshot, compared: usize) -> Option<String> {
    if before.is_whole() && after.is_whole() {
        return None;
    }
    let root = if before.label.is_empty() {
        "the repository".to_owned()
    } else {
        crate::output::escape_text(before.label.trim_end_matches('/'))
    };
    let mut why = Vec::new();
    for (walk, snapshot) in [("before", before), ("after", after)] {
        match snapshot.cut {
            Some(Cut::Entries(n)) => why.push(format!(
                "the walk {walk} stopped at its bound of {n} entries (set {} to raise it)",
                super::ENTRIES_VAR
            )),
            Some(Cut::Time(d)) => why.push(format!(
                "the walk {walk} stopped at its bound of {} ms (set {} to raise it)",
                d.as_millis(),
                super::WALK_MS_VAR
            )),
            None => {}
        }
        if snapshot.root.is_none() {
            why.push(format!("the walk {walk} could not open the root"));
        } else if snapshot.unreadable > 0 {
            why.push(format!(
                "the walk {walk} could not read {} director{} (permissions, removed, or deeper \
                 than {} levels)",
                snapshot.unreadable,
                if snapshot.unreadable == 1 { "y" } else { "ies" },
                super::MAX_DEPTH
            ));
        }
    }
    Some(format!(
        "{compared} entries of {root} were compared ({}; use --sandbox enforce where the \
         read-only view is available, which needs no comparison)",
        why.join(", ")
    ))
}
