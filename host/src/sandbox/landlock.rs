//! The read-only posture on Linux: a Landlock ruleset that handles every write right and grants
//! it everywhere except under the repository root.
//!
//! Landlock rules are an allow-list of directory hierarchies, so "everything but the repository"
//! is spelt as: for each directory on the path from `/` down to the repository root, write access
//! beneath every entry *other than* the next directory on that path. The repository root and its
//! ancestors themselves are never granted. What follows:
//!
//! - nothing under the repository root can be created, written, truncated, renamed, linked or
//!   removed (`.git` and `.planning` included), except the directories named writable (the run
//!   dir, when it lies inside the repository);
//! - a *new* entry directly inside one of the ancestor directories (`/`, `/home`, `$HOME` when the
//!   repository is under it, …) is refused too, and so is renaming or removing the entries that
//!   exist there; entries below them (`$HOME/.cache/…`, `/tmp/…`) stay writable;
//! - entries are granted as they were listed when the ruleset was built; a symbolic link among
//!   them is not followed (it is skipped), and an entry that is the repository root or one of its
//!   ancestors under another name (a bind mount) is skipped;
//! - reading and executing are not restricted at all.
//!
//! # Built once per process
//!
//! Listing the ancestors and adding one rule per entry is the expensive part (about a thousand
//! entries when the repository lies in a busy `/tmp`), so a ruleset is built once per process for
//! each repository root and set of writable paths *inside* the repository, and kept. Each lane
//! then adds its writable paths *outside* the repository (its run dir, its private `TMPDIR`) to
//! that ruleset and restricts itself with a copy: those paths lie outside the repository, where
//! the posture grants writing anyway, so a later lane that also gets them is granted nothing the
//! posture refuses. Writable paths inside the repository (the lane's own files of an in-repository
//! run dir) are part of the key instead, so they are never shared between lanes. An entry that
//! appears in an ancestor directory after the ruleset was built is not granted (refused, the safe
//! side). [`warm`] starts building in the background, so that `run` overlaps it with its other
//! work.
//!
//! Landlock does not govern metadata: `chmod`, `chown`, `utime` and extended attributes still
//! succeed. The enforce mode therefore also runs [`super::detect`] around the lane, which reports
//! a mode change.

use std::path::{Path, PathBuf};

/// Most directory entries granted in one ruleset (bounds the spawner's work and memory).
pub const MAX_RULES: usize = 65_536;

/// What this kernel offers for the read-only posture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Every write right the posture needs is enforced (Landlock ABI 3 or later: truncation is
    /// covered).
    Full,
    /// Landlock ABI 1 or 2: truncating an existing file is not refused (detection still
    /// reports it).
    Partial,
    /// No Landlock (another OS, an old kernel, or Landlock disabled).
    Unavailable,
}

impl Support {
    /// How the support is shown to the user.
    pub fn describe(self) -> &'static str {
        match self {
            Support::Full => "Landlock",
            Support::Partial => "Landlock (partial: kernel before ABI 3, truncation not refused)",
            Support::Unavailable => "no Landlock on this system",
        }
    }
}

/// What the running kernel supports (probed once per process; creates and drops a ruleset).
pub fn support() -> Support {
    static SUPPORT: std::sync::OnceLock<Support> = std::sync::OnceLock::new();
    *SUPPORT.get_or_init(imp::probe)
}

/// Restricts the calling thread, and every process it starts from now on, to the read-only
/// posture for `read_only`; `writable` paths stay writable even inside it.
///
/// # Errors
///
/// A message naming the path when the ruleset cannot be built or applied, or when Landlock
/// turns out not to be enforced at all: the caller must then not start the lane.
pub fn restrict_self(read_only: &Path, writable: &[PathBuf]) -> Result<(), String> {
    imp::restrict_self(read_only, writable)
}

/// Starts building, on a background thread, the ruleset that a lane of the repository at
/// `read_only` with no writable path inside it will use ([`restrict_self`] then waits for it
/// instead of building it again). Does nothing where Landlock is unavailable.
pub fn warm(read_only: &Path) {
    if support() == Support::Unavailable || imp::is_built(read_only) {
        return;
    }
    let root = read_only.to_path_buf();
    // Best effort: when no thread can be started, the lane builds the ruleset itself.
    let _ = std::thread::Builder::new()
        .name("gsd-lane-landlock".to_owned())
        .spawn(move || imp::warm(&root));
}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::{HashMap, HashSet};
    use std::fs::{File, OpenOptions};
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    use std::path::{Component, Path, PathBuf};
    use std::sync::{Arc, Mutex, OnceLock};

    use landlock::{
        AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
        RulesetCreated, RulesetCreatedAttr, RulesetStatus, ABI,
    };

    use super::{Support, MAX_RULES};

    /// The newest ABI whose write rights the posture uses (ABI 5 added `IoctlDev`; later ABIs
    /// add no right that writes a file).
    const TARGET: ABI = ABI::V5;

    /// Every handled right: the write rights of [`TARGET`]. Read rights stay unhandled.
    fn handled() -> BitFlags<AccessFs> {
        AccessFs::from_write(TARGET)
    }

    /// The handled rights that apply to a non-directory.
    fn file_rights() -> BitFlags<AccessFs> {
        handled() & (AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev)
    }

    pub(super) fn probe() -> Support {
        let hard = |abi: ABI| {
            Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessFs::from_write(abi))
                .and_then(Ruleset::create)
                .is_ok()
        };
        if hard(ABI::V3) {
            Support::Full
        } else if hard(ABI::V1) {
            Support::Partial
        } else {
            Support::Unavailable
        }
    }

    /// What a built ruleset is kept under: the canonical repository root and the canonical
    /// writable paths inside it.
    type Key = (PathBuf, Vec<PathBuf>);

    /// A ruleset being built or built once for its key (or why it could not be).
    type Slot = Arc<OnceLock<Result<Mutex<RulesetCreated>, String>>>;

    /// Every ruleset this process built, by key.
    static BUILT: Mutex<Option<HashMap<Key, Slot>>> = Mutex::new(None);

    /// The slot of `key`, created empty when new.
    fn slot(key: &Key) -> Slot {
        let mut built = BUILT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(
            built
                .get_or_insert_with(HashMap::new)
                .entry(key.clone())
                .or_default(),
        )
    }

    /// Opens `path` itself (never following a final symbolic link) for use in a rule.
    fn open_path(path: &Path) -> std::io::Result<File> {
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    }

    /// The device and inode of an open file.
    fn identity(file: &File) -> std::io::Result<(u64, u64)> {
        let meta = file.metadata()?;
        Ok((meta.dev(), meta.ino()))
    }

    /// The canonical repository root, or an error naming it.
    fn canonical_root(root: &Path) -> Result<PathBuf, String> {
        root.canonicalize()
            .map_err(|err| format!("resolving the repository root {}: {err}", root.display()))
    }

    /// `/`, then each directory down to the canonical `root`.
    fn chain(root: &Path) -> Result<Vec<PathBuf>, String> {
        let mut dirs = Vec::new();
        let mut at = PathBuf::new();
        for component in root.components() {
            match component {
                Component::RootDir | Component::Normal(_) => {
                    at.push(component);
                    dirs.push(at.clone());
                }
                _ => return Err(format!("unexpected component in {}", root.display())),
            }
        }
        Ok(dirs)
    }

    /// Adds the grant for one entry; returns whether it was added.
    fn grant(
        ruleset: &mut RulesetCreated,
        file: File,
        forbidden: &HashSet<(u64, u64)>,
        path: &Path,
    ) -> Result<bool, String> {
        let meta = file
            .metadata()
            .map_err(|err| format!("inspecting {}: {err}", path.display()))?;
        if meta.file_type().is_symlink() || forbidden.contains(&(meta.dev(), meta.ino())) {
            return Ok(false);
        }
        let rights = if meta.is_dir() {
            handled()
        } else {
            file_rights()
        };
        ruleset
            .add_rule(PathBeneath::new(file, rights))
            .map_err(|err| format!("granting {}: {err}", path.display()))?;
        Ok(true)
    }

    /// The identities of the directories on the path to the repository (never granted).
    fn forbidden(dirs: &[PathBuf]) -> Result<HashSet<(u64, u64)>, String> {
        let mut forbidden = HashSet::new();
        for dir in dirs {
            let file = open_path(dir).map_err(|err| format!("opening {}: {err}", dir.display()))?;
            forbidden.insert(identity(&file).map_err(|err| format!("{}: {err}", dir.display()))?);
        }
        Ok(forbidden)
    }

    /// Grants every sibling along the path from `/` to the repository root.
    fn grant_siblings(
        ruleset: &mut RulesetCreated,
        dirs: &[PathBuf],
        forbidden: &HashSet<(u64, u64)>,
    ) -> Result<(), String> {
        let mut rules = 0_usize;
        for pair in dirs.windows(2) {
            let [parent, next] = pair else { continue };
            let entries = std::fs::read_dir(parent)
                .map_err(|err| format!("listing {}: {err}", parent.display()))?;
            for entry in entries {
                let entry = entry.map_err(|err| format!("listing {}: {err}", parent.display()))?;
                let path = entry.path();
                if path == *next {
                    continue;
                }
                rules += 1;
                if rules > MAX_RULES {
                    let root = dirs.last().map_or(Path::new("/"), PathBuf::as_path);
                    return Err(format!(
                        "more than {MAX_RULES} entries along the path to {}",
                        root.display()
                    ));
                }
                // An entry that vanished or cannot be opened is simply not granted.
                if let Ok(file) = open_path(&path) {
                    grant(ruleset, file, forbidden, &path)?;
                }
            }
        }
        Ok(())
    }

    /// Grants each of `paths` (canonical, none of them on the path to the repository).
    fn grant_paths(ruleset: &mut RulesetCreated, paths: &[PathBuf]) -> Result<(), String> {
        for path in paths {
            let file =
                open_path(path).map_err(|err| format!("opening {}: {err}", path.display()))?;
            grant(ruleset, file, &HashSet::new(), path)?;
        }
        Ok(())
    }

    /// The ruleset of `key`: the siblings along the path to the root, and the writable paths
    /// inside the repository.
    fn build(key: &Key) -> Result<Mutex<RulesetCreated>, String> {
        let (root, inside) = key;
        let dirs = chain(root)?;
        let forbidden = forbidden(&dirs)?;
        let mut ruleset = Ruleset::default()
            .handle_access(handled())
            .and_then(Ruleset::create)
            .map_err(|err| format!("creating the Landlock ruleset: {err}"))?;
        grant_siblings(&mut ruleset, &dirs, &forbidden)?;
        grant_paths(&mut ruleset, inside)?;
        Ok(Mutex::new(ruleset))
    }

    /// `writable`, resolved, split into the paths inside the repository at `root` and those
    /// outside it; a path that cannot be resolved or that contains the repository (its other
    /// entries are granted already) is left out.
    fn split_writable(root: &Path, writable: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let mut inside = Vec::new();
        let mut outside = Vec::new();
        for path in writable {
            let Ok(canonical) = path.canonicalize() else {
                continue;
            };
            if root.starts_with(&canonical) {
                continue;
            }
            if canonical.starts_with(root) {
                inside.push(canonical);
            } else {
                outside.push(canonical);
            }
        }
        inside.sort();
        inside.dedup();
        (inside, outside)
    }

    pub(super) fn is_built(read_only: &Path) -> bool {
        canonical_root(read_only).is_ok_and(|root| slot(&(root, Vec::new())).get().is_some())
    }

    pub(super) fn warm(read_only: &Path) {
        if let Ok(root) = canonical_root(read_only) {
            let key = (root, Vec::new());
            slot(&key).get_or_init(|| build(&key));
        }
    }

    pub(super) fn restrict_self(read_only: &Path, writable: &[PathBuf]) -> Result<(), String> {
        let root = canonical_root(read_only)?;
        let (inside, outside) = split_writable(&root, writable);
        let key = (root, inside);
        let slot = slot(&key);
        let built = slot.get_or_init(|| build(&key)).as_ref()?;
        let copy = {
            let mut ruleset = built.lock().map_err(|_| "the ruleset is gone".to_owned())?;
            grant_paths(&mut ruleset, &outside)?;
            ruleset
                .try_clone()
                .map_err(|err| format!("copying the Landlock ruleset: {err}"))?
        };
        let status = copy
            .restrict_self()
            .map_err(|err| format!("applying the Landlock ruleset: {err}"))?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err("Landlock is not enforced on this system".to_owned());
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::{Path, PathBuf};

    use super::Support;

    pub(super) fn probe() -> Support {
        Support::Unavailable
    }

    pub(super) fn restrict_self(_read_only: &Path, _writable: &[PathBuf]) -> Result<(), String> {
        Err("Landlock exists only on Linux".to_owned())
    }

    pub(super) fn is_built(_read_only: &Path) -> bool {
        true
    }

    pub(super) fn warm(_read_only: &Path) {}
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::fs;

    /// Landlock restricts only the calling thread, so a dedicated thread can be sandboxed
    /// without touching the rest of the test binary.
    fn in_restricted_thread<T: Send + 'static>(
        root: PathBuf,
        writable: Vec<PathBuf>,
        body: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        std::thread::spawn(move || restrict_self(&root, &writable).map(|()| body()))
            .join()
            .expect("thread")
    }

    #[test]
    fn the_repository_is_read_only_and_its_siblings_and_the_run_dir_are_not() {
        let top = tempfile::tempdir().unwrap();
        let repo = top.path().join("repo");
        let sibling = top.path().join("sibling");
        let run = repo.join("run");
        for dir in [&repo, &sibling, &run] {
            fs::create_dir_all(dir).unwrap();
        }
        fs::write(repo.join("file"), "data").unwrap();
        let (r, s, w) = (repo.clone(), sibling.clone(), run.clone());
        let outcome = in_restricted_thread(repo.clone(), vec![run.clone()], move || {
            (
                fs::write(r.join("new"), "x").is_err(),
                fs::write(r.join("file"), "changed").is_err(),
                fs::remove_file(r.join("file")).is_err(),
                fs::create_dir(r.join("dir")).is_err(),
                fs::write(s.join("ok"), "x").is_ok(),
                fs::write(w.join("review.md"), "x").is_ok(),
                fs::read_to_string(r.join("file")).ok(),
            )
        });
        match support() {
            Support::Unavailable => assert!(outcome.is_err(), "must fail closed"),
            _ => {
                let outcome = outcome.expect("restricted");
                assert_eq!(
                    outcome,
                    (true, true, true, true, true, true, Some("data".to_owned()))
                );
            }
        }
        assert_eq!(fs::read_to_string(repo.join("file")).unwrap(), "data");
    }

    #[test]
    fn a_writable_path_inside_the_repository_is_not_shared_with_a_lane_without_it() {
        let top = tempfile::tempdir().unwrap();
        let repo = top.path().join("repo");
        let run = repo.join("run");
        fs::create_dir_all(&run).unwrap();
        let (first, second) = (run.join("first"), run.join("second"));
        let granted = in_restricted_thread(repo.clone(), vec![run.clone()], move || {
            fs::write(first, "x").is_ok()
        });
        let refused = in_restricted_thread(repo.clone(), Vec::new(), move || {
            fs::write(second, "x").is_err()
        });
        match support() {
            Support::Unavailable => assert!(granted.is_err() && refused.is_err()),
            _ => assert_eq!((granted, refused), (Ok(true), Ok(true))),
        }
    }

    #[test]
    fn a_later_lane_of_the_same_repository_gets_its_own_new_writable_dir() {
        let top = tempfile::tempdir().unwrap();
        let repo = top.path().join("repo");
        fs::create_dir_all(&repo).unwrap();
        let first = in_restricted_thread(repo.clone(), Vec::new(), || ());
        // Made after the ruleset was built: a new entry in an ancestor of the repository.
        let (late, unnamed) = (top.path().join("late"), top.path().join("unnamed"));
        fs::create_dir_all(&late).unwrap();
        fs::create_dir_all(&unnamed).unwrap();
        let (l, u) = (late.clone(), unnamed.clone());
        let second = in_restricted_thread(repo.clone(), vec![late], move || {
            (
                fs::write(l.join("x"), "x").is_ok(),
                fs::write(u.join("x"), "x").is_err(),
            )
        });
        match support() {
            Support::Unavailable => assert!(first.is_err() && second.is_err()),
            _ => assert_eq!(second, Ok((true, true))),
        }
    }

    #[test]
    fn a_repository_that_does_not_exist_is_an_error() {
        let top = tempfile::tempdir().unwrap();
        let missing = top.path().join("missing");
        let outcome = in_restricted_thread(missing, Vec::new(), || ());
        assert!(outcome
            .unwrap_err()
            .contains("resolving the repository root"));
    }
}
