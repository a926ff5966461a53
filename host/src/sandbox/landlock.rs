//! The read-only posture on Linux: a Landlock ruleset that handles every write right and grants
//! it everywhere except under the confined roots (the repository roots, gsd-lane's own state and
//! the lane's run dir, [`super::roots`]); on Landlock ABI 6 and later it also scopes signals, so
//! that a lane cannot signal gsd-lane, its watchdog or any other process outside its domain.
//!
//! Landlock rules are an allow-list of directory hierarchies, so "everything but the roots" is
//! spelt as: for each directory on the path from `/` down to any root, write access beneath every
//! entry that is *not itself* on such a path. The roots and their ancestors themselves are never
//! granted. What follows:
//!
//! - nothing under a root can be created, written, truncated, renamed, linked or removed
//!   (`.git` and `.planning` included), except the paths named writable (the lane's own output
//!   files and its private scratch directory), each granted alone;
//! - a *new* entry directly inside one of the ancestor directories (`/`, `/home`, `$HOME` when a
//!   root is under it, …) is refused too, and so is renaming or removing the entries that exist
//!   there; entries below them (`$HOME/.cache/…`, `/tmp/…`) stay writable;
//! - a root that does not exist (a git directory a `.git` file names but nobody made yet) cannot
//!   be created: its nearest existing ancestor is on the path, so no new entry appears there;
//! - entries are granted as they were listed when the rules were made; a symbolic link among
//!   them is not followed (it is skipped), and an entry that is a root or one of its ancestors
//!   under another name (a bind mount) is skipped;
//! - reading and executing are not restricted at all.
//!
//! # Listed once per process, opened again per lane
//!
//! Listing the ancestors is the expensive part (about a thousand entries when a root lies in a
//! busy `/tmp`), so the grants of a set of roots are listed once per process ([`warm`] starts
//! that in the background) and kept by name, device and inode; only the first few keep their
//! descriptor open (an eighth of the open-file limit, at most 4,096), so a directory of any size
//! beside the repository costs a bounded number of descriptors between lanes. Each lane then
//! gets a ruleset of its own: the held grants as they are, and every other granted entry opened
//! again relative to its directory (`O_PATH | O_NOFOLLOW`), granted only when it is still the
//! entry that was listed, and closed as soon as its rule is added (two descriptors at a time),
//! plus the lane's own writable paths: nothing one lane is granted reaches another. An entry that appears in an
//! ancestor directory after the grants were listed, or was replaced since, is not granted
//! (refused, the safe side). Past [`MAX_RULES`] entries no lane starts, and the message names
//! the bound, the directory and the ways out (the read-only view, `--sandbox detect`).
//!
//! Landlock does not govern metadata: `chmod`, `chown`, `utime` and extended attributes still
//! succeed. The enforce mode therefore also runs [`super::detect`] (once per review when lanes
//! run at once), which reports them.

use std::path::PathBuf;

pub use super::error::{LandlockError, LandlockStep, RulesetStep};

/// Most directory entries granted in one ruleset (bounds the spawner's work and memory; past it
/// no lane starts, and the message names the bound and the ways out).
pub const MAX_RULES: usize = 1_000_000;

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

/// Whether confined lanes are also kept from signalling processes outside their domain
/// (Landlock ABI 6 or later; probed once per process).
pub fn signals_scoped() -> bool {
    static SCOPED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SCOPED.get_or_init(imp::probe_signal_scope)
}

/// Restricts the calling thread, and every process it starts from now on, to the read-only
/// posture for the roots `read_only`; `writable` paths stay writable even inside them (a path
/// that does not exist is not granted).
///
/// # Errors
///
/// A message naming the path when the ruleset cannot be built or applied, or when Landlock
/// turns out not to be enforced at all: the caller must then not start the lane.
pub fn restrict_self(read_only: &[PathBuf], writable: &[PathBuf]) -> Result<(), LandlockError> {
    imp::restrict_self(read_only, writable)
}

/// Starts listing, on a background thread, the grants a lane confined by `read_only` will use
/// ([`restrict_self`] then waits for them instead of listing again). Does nothing where
/// Landlock is unavailable.
pub fn warm(read_only: &[PathBuf]) {
    if support() == Support::Unavailable || imp::is_built(read_only) {
        return;
    }
    let roots = read_only.to_vec();
    // Best effort: when no thread can be started, the lane lists the grants itself.
    let _ = std::thread::Builder::new()
        .name("gsd-lane-landlock".to_owned())
        .spawn(move || imp::warm(&roots));
}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::{BTreeSet, HashMap, HashSet};
    use std::fs::{File, OpenOptions};
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex, OnceLock};

    use landlock::{
        AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
        RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
    };

    use super::{LandlockError, LandlockStep, RulesetStep, Support, MAX_RULES};
    use crate::sandbox::roots::{outermost, resolved};

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

    pub(super) fn probe_signal_scope() -> bool {
        Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .scope(Scope::Signal)
            .and_then(Ruleset::create)
            .is_ok()
    }

    /// One granted entry, kept by name and identity (no descriptor stays open): the directory
    /// it was listed in (an index into [`Grants::dirs`]), its name there, its device and inode
    /// when listed, and the rights granted beneath it.
    struct Grant {
        dir: usize,
        name: std::ffi::OsString,
        identity: (u64, u64),
        rights: BitFlags<AccessFs>,
        /// The entry kept open, for the first [`held_budget`] grants only.
        held: Option<File>,
    }

    /// How many grants keep their descriptor open between lanes: an eighth of the open-file
    /// limit (raised to the hard limit at start), at most 4,096; each of the others is opened
    /// again for every lane. At a limit of 256 that is 32, leaving the lanes the rest.
    fn held_budget() -> usize {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        limit.map_or(4096, |n| usize::try_from(n / 8).unwrap_or(4096).min(4096))
    }

    /// The grants of a set of roots: the directories listed (each with its identity when
    /// listed) and the entries granted in them.
    pub(super) struct Grants {
        dirs: Vec<(PathBuf, (u64, u64))>,
        entries: Vec<Grant>,
    }

    impl Grants {
        /// How many entries are granted (siblings of the repository's ancestors).
        #[cfg(test)]
        pub(super) fn len(&self) -> usize {
            self.entries.len()
        }
    }

    /// The grants of a set of roots being listed or listed once (or why they could not be).
    type Slot = Arc<OnceLock<Result<Grants, LandlockError>>>;

    /// Every set of grants this process listed, by its resolved, sorted roots.
    static BUILT: Mutex<Option<HashMap<Vec<PathBuf>, Slot>>> = Mutex::new(None);

    /// The slot of `key`, created empty when new.
    fn slot(key: &[PathBuf]) -> Slot {
        let mut built = BUILT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(
            built
                .get_or_insert_with(HashMap::new)
                .entry(key.to_vec())
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

    /// Opens the entry `name` of the open directory `dir` itself, as [`open_path`] does.
    fn open_at(dir: &File, name: &std::ffi::OsStr) -> std::io::Result<File> {
        use rustix::fs::{Mode, OFlags};
        rustix::fs::openat(
            dir,
            name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map(File::from)
        .map_err(std::io::Error::from)
    }

    /// The device and inode of an open file.
    fn identity(file: &File) -> std::io::Result<(u64, u64)> {
        let meta = file.metadata()?;
        Ok((meta.dev(), meta.ino()))
    }

    /// The type, device and inode of an open file.
    fn examine(file: &File) -> std::io::Result<(std::fs::FileType, (u64, u64))> {
        let meta = file.metadata()?;
        Ok((meta.file_type(), (meta.dev(), meta.ino())))
    }

    /// The roots resolved, sorted, without duplicates and without a root inside another (its
    /// ancestors would otherwise be listed and their entries granted): the key of their grants.
    fn key_of(roots: &[PathBuf]) -> Result<Vec<PathBuf>, LandlockError> {
        if roots.is_empty() {
            return Err(LandlockError::NoRoots);
        }
        Ok(outermost(roots.iter().map(|root| resolved(root)).collect()))
    }

    /// The rights granted beneath an entry of type `kind`.
    fn rights_for(kind: std::fs::FileType) -> BitFlags<AccessFs> {
        if kind.is_dir() {
            handled()
        } else {
            file_rights()
        }
    }

    /// Lists the grants of `roots`: every entry of every directory on a path from `/` to a
    /// root, except the entries that are themselves on such a path (or symbolic links). Each
    /// entry is examined through its directory's descriptor and closed at once.
    fn build(roots: &[PathBuf]) -> Result<Grants, LandlockError> {
        build_bounded(roots, MAX_RULES)
    }

    /// [`build`], with at most `max_rules` grants.
    pub(super) fn build_bounded(
        roots: &[PathBuf],
        max_rules: usize,
    ) -> Result<Grants, LandlockError> {
        let mut on_path: HashSet<PathBuf> = HashSet::new();
        let mut listed: BTreeSet<PathBuf> = BTreeSet::new();
        for root in roots {
            on_path.extend(root.ancestors().map(Path::to_path_buf));
            listed.extend(root.ancestors().skip(1).map(Path::to_path_buf));
        }
        let mut forbidden = HashSet::new();
        for path in &on_path {
            // A part of a root that does not exist has no identity to keep out.
            if let Ok(file) = open_path(path) {
                forbidden.insert(
                    identity(&file)
                        .map_err(|e| LandlockError::io(LandlockStep::Identify, path, e))?,
                );
            }
        }
        let mut grants = Grants {
            dirs: Vec::new(),
            entries: Vec::new(),
        };
        let budget = held_budget();
        for dir in &listed {
            let handle = match open_path(dir) {
                Ok(handle) => handle,
                // Below the part of a root that exists: nothing to list.
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(err) => return Err(LandlockError::io(LandlockStep::Open, dir, err)),
            };
            let dir_identity = identity(&handle)
                .map_err(|err| LandlockError::io(LandlockStep::Identify, dir, err))?;
            let listing = match std::fs::read_dir(dir) {
                Ok(listing) => listing,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(err) => return Err(LandlockError::io(LandlockStep::List, dir, err)),
            };
            let index = grants.dirs.len();
            grants.dirs.push((dir.clone(), dir_identity));
            for entry in listing {
                let entry = entry.map_err(|err| LandlockError::io(LandlockStep::List, dir, err))?;
                if on_path.contains(&entry.path()) {
                    continue;
                }
                if grants.entries.len() >= max_rules {
                    return Err(LandlockError::TooManyRules {
                        roots: roots.to_vec(),
                        dir: dir.clone(),
                        max: max_rules,
                    });
                }
                // An entry that vanished or cannot be opened is simply not granted.
                let Ok(file) = open_at(&handle, &entry.file_name()) else {
                    continue;
                };
                let Ok((kind, found)) = examine(&file) else {
                    continue;
                };
                if kind.is_symlink() || forbidden.contains(&found) {
                    continue;
                }
                grants.entries.push(Grant {
                    dir: index,
                    name: entry.file_name(),
                    identity: found,
                    rights: rights_for(kind),
                    held: (grants.entries.len() < budget).then_some(file),
                });
            }
        }
        Ok(grants)
    }

    /// Adds the rule of every grant to `ruleset`: each entry opened again by name in its
    /// directory and granted only when it is still the entry listed (same device and inode);
    /// one descriptor open at a time besides its directory's, closed once added.
    fn add_grants(
        ruleset: &mut RulesetCreated,
        grants: &Grants,
        key: &[PathBuf],
    ) -> Result<(), LandlockError> {
        let mut open_dir: Option<(usize, File)> = None;
        for grant in &grants.entries {
            if let Some(file) = &grant.held {
                (&mut *ruleset)
                    .add_rule(PathBeneath::new(file, grant.rights))
                    .map_err(|err| grant_beside(key, &err))?;
                continue;
            }
            if open_dir
                .as_ref()
                .is_none_or(|(index, _)| *index != grant.dir)
            {
                open_dir = None;
                let Some((path, expected)) = grants.dirs.get(grant.dir) else {
                    continue;
                };
                // A listed directory replaced since: none of its entries is granted.
                let Ok(handle) = open_path(path) else {
                    continue;
                };
                if identity(&handle).ok().as_ref() != Some(expected) {
                    continue;
                }
                open_dir = Some((grant.dir, handle));
            }
            let Some((_, dir)) = &open_dir else {
                continue;
            };
            let Ok(file) = open_at(dir, &grant.name) else {
                continue;
            };
            if examine(&file).map(|(_, found)| found).ok() != Some(grant.identity) {
                continue;
            }
            (&mut *ruleset)
                .add_rule(PathBeneath::new(file, grant.rights))
                .map_err(|err| grant_beside(key, &err))?;
        }
        Ok(())
    }

    /// The error of an entry beside `key` that could not be granted.
    fn grant_beside(key: &[PathBuf], err: &impl std::fmt::Display) -> LandlockError {
        LandlockError::GrantBeside {
            roots: key.to_vec(),
            detail: err.to_string(),
        }
    }

    /// `writable`, resolved, without the paths that do not exist or that contain a root
    /// (their other entries are granted already).
    fn usable_writable(roots: &[PathBuf], writable: &[PathBuf]) -> Vec<PathBuf> {
        let mut kept: Vec<PathBuf> = writable
            .iter()
            .filter_map(|path| path.canonicalize().ok())
            .filter(|path| !roots.iter().any(|root| root.starts_with(path)))
            .collect();
        kept.sort();
        kept.dedup();
        kept
    }

    pub(super) fn is_built(read_only: &[PathBuf]) -> bool {
        key_of(read_only).is_ok_and(|key| slot(&key).get().is_some())
    }

    pub(super) fn warm(read_only: &[PathBuf]) {
        if let Ok(key) = key_of(read_only) {
            slot(&key).get_or_init(|| build(&key));
        }
    }

    /// A new ruleset handling every write right (and scoping signals where the kernel can).
    fn new_ruleset() -> Result<RulesetCreated, LandlockError> {
        let refused = |step| {
            move |err: landlock::RulesetError| LandlockError::Ruleset {
                step,
                detail: err.to_string(),
            }
        };
        let ruleset = Ruleset::default()
            .handle_access(handled())
            .map_err(refused(RulesetStep::Create))?;
        let ruleset = if super::signals_scoped() {
            ruleset
                .scope(Scope::Signal)
                .map_err(refused(RulesetStep::ScopeSignals))?
        } else {
            ruleset
        };
        ruleset.create().map_err(refused(RulesetStep::Create))
    }

    pub(super) fn restrict_self(
        read_only: &[PathBuf],
        writable: &[PathBuf],
    ) -> Result<(), LandlockError> {
        let key = key_of(read_only)?;
        let slot = slot(&key);
        let grants = slot
            .get_or_init(|| build(&key))
            .as_ref()
            .map_err(Clone::clone)?;
        let mut ruleset = new_ruleset()?;
        add_grants(&mut ruleset, grants, &key)?;
        for path in usable_writable(&key, writable) {
            let file = open_path(&path)
                .map_err(|err| LandlockError::io(LandlockStep::Open, &path, err))?;
            let meta = file
                .metadata()
                .map_err(|err| LandlockError::io(LandlockStep::Inspect, &path, err))?;
            if meta.file_type().is_symlink() {
                continue;
            }
            let rights = if meta.is_dir() {
                handled()
            } else {
                file_rights()
            };
            (&mut ruleset)
                .add_rule(PathBeneath::new(file, rights))
                .map_err(|err| LandlockError::Grant {
                    path: path.clone(),
                    detail: err.to_string(),
                })?;
        }
        let status = ruleset
            .restrict_self()
            .map_err(|err| LandlockError::Ruleset {
                step: RulesetStep::Apply,
                detail: err.to_string(),
            })?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(LandlockError::NotEnforced);
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::PathBuf;

    use super::{LandlockError, Support};

    pub(super) fn probe() -> Support {
        Support::Unavailable
    }

    pub(super) fn probe_signal_scope() -> bool {
        false
    }

    pub(super) fn restrict_self(
        _read_only: &[PathBuf],
        _writable: &[PathBuf],
    ) -> Result<(), LandlockError> {
        Err(LandlockError::NotLinux)
    }

    pub(super) fn is_built(_read_only: &[PathBuf]) -> bool {
        true
    }

    pub(super) fn warm(_read_only: &[PathBuf]) {}
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::fs;

    /// Landlock restricts only the calling thread, so a dedicated thread can be sandboxed
    /// without touching the rest of the test binary.
    fn in_restricted_thread<T: Send + 'static>(
        roots: Vec<PathBuf>,
        writable: Vec<PathBuf>,
        body: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, LandlockError> {
        std::thread::spawn(move || restrict_self(&roots, &writable).map(|()| body()))
            .join()
            .expect("thread")
    }

    #[test]
    fn the_roots_are_read_only_and_their_siblings_and_granted_paths_are_not() {
        let top = tempfile::tempdir().unwrap();
        let repo = top.path().join("repo");
        let state = top.path().join("home/.gsd");
        let sibling = top.path().join("sibling");
        let scratch = repo.join("scratch");
        for dir in [&repo, &state, &sibling, &scratch] {
            fs::create_dir_all(dir).unwrap();
        }
        fs::write(repo.join("file"), "data").unwrap();
        fs::write(repo.join("own.md"), "").unwrap();
        let (r, st, s, w) = (
            repo.clone(),
            state.clone(),
            sibling.clone(),
            scratch.clone(),
        );
        let home = top.path().join("home");
        let writable = vec![scratch.clone(), repo.join("own.md")];
        let outcome =
            in_restricted_thread(vec![repo.clone(), state.clone()], writable, move || {
                (
                    fs::write(r.join("new"), "x").is_err(),
                    fs::write(r.join("file"), "changed").is_err(),
                    fs::remove_file(r.join("file")).is_err(),
                    fs::create_dir(r.join("dir")).is_err(),
                    fs::write(st.join("consent.json"), "{}").is_err(),
                    fs::write(home.join("other"), "x").is_err(),
                    fs::write(s.join("ok"), "x").is_ok(),
                    fs::write(w.join("tmp"), "x").is_ok(),
                    fs::write(r.join("own.md"), "review").is_ok(),
                    fs::read_to_string(r.join("file")).ok(),
                )
            });
        match support() {
            Support::Unavailable => assert!(outcome.is_err(), "must fail closed"),
            _ => {
                let outcome = outcome.expect("restricted");
                assert_eq!(
                    outcome,
                    (
                        true,
                        true,
                        true,
                        true,
                        true,
                        true,
                        true,
                        true,
                        true,
                        Some("data".to_owned())
                    )
                );
            }
        }
        assert_eq!(fs::read_to_string(repo.join("file")).unwrap(), "data");
    }

    #[test]
    fn a_writable_path_of_one_lane_is_not_shared_with_another() {
        let top = tempfile::tempdir().unwrap();
        let repo = top.path().join("repo");
        let run = top.path().join("run");
        let (first, second) = (run.join("first"), run.join("second"));
        for dir in [&repo, &first, &second] {
            fs::create_dir_all(dir).unwrap();
        }
        let roots = vec![repo.clone(), run.clone()];
        let (f, s) = (first.clone(), second.clone());
        let granted = in_restricted_thread(roots.clone(), vec![first.clone()], move || {
            (
                fs::write(f.join("x"), "x").is_ok(),
                fs::write(s.join("x"), "x").is_err(),
            )
        });
        let (f, s) = (first.clone(), second.clone());
        let other = in_restricted_thread(roots, vec![second.clone()], move || {
            (
                fs::write(s.join("y"), "x").is_ok(),
                fs::write(f.join("y"), "x").is_err(),
            )
        });
        match support() {
            Support::Unavailable => assert!(granted.is_err() && other.is_err()),
            _ => assert_eq!(
                (
                    granted.map_err(|err| err.to_string()),
                    other.map_err(|err| err.to_string())
                ),
                (Ok((true, true)), Ok((true, true)))
            ),
        }
    }

    #[test]
    fn a_root_that_does_not_exist_cannot_be_created() {
        let top = tempfile::tempdir().unwrap();
        let missing = top.path().join("missing/gitdir");
        let (m, t) = (missing.clone(), top.path().to_path_buf());
        let outcome = in_restricted_thread(vec![missing], Vec::new(), move || {
            (
                fs::create_dir_all(&m).is_err(),
                fs::create_dir(t.join("missing")).is_err(),
            )
        });
        match support() {
            Support::Unavailable => assert!(outcome.is_err()),
            _ => assert_eq!(outcome.map_err(|err| err.to_string()), Ok((true, true))),
        }
    }

    #[test]
    fn a_root_inside_another_does_not_open_the_outer_one() {
        let top = tempfile::tempdir().unwrap();
        let repo = top.path().join("repo");
        let inner = repo.join("a/b");
        fs::create_dir_all(&inner).unwrap();
        let r = repo.clone();
        let outcome = in_restricted_thread(vec![inner, repo.clone()], Vec::new(), move || {
            fs::write(r.join("a/x"), "x").is_err() && fs::write(r.join("x"), "x").is_err()
        });
        match support() {
            Support::Unavailable => assert!(outcome.is_err()),
            _ => assert_eq!(outcome.map_err(|err| err.to_string()), Ok(true)),
        }
    }

    #[test]
    fn past_its_bound_the_fallback_says_which_bound_and_what_to_do() {
        let top = tempfile::tempdir().unwrap();
        let base = top.path().canonicalize().unwrap();
        let repo = base.join("repo");
        fs::create_dir(&repo).unwrap();
        for i in 0..20 {
            fs::write(base.join(format!("s{i:02}")), "").unwrap();
        }
        let err = imp::build_bounded(std::slice::from_ref(&repo), 10)
            .err()
            .expect("past the bound")
            .to_string();
        for needed in [
            "more than 10 entries",
            "--sandbox detect",
            crate::sandbox::policy::NO_NAMESPACES_VAR,
            &repo.display().to_string(),
        ] {
            assert!(err.contains(needed), "{needed}: {err}");
        }
        // Within the bound: every sibling is granted (and whatever lies beside the ancestors).
        let grants = imp::build_bounded(&[repo], MAX_RULES).expect("within the bound");
        assert!(grants.len() >= 20, "{}", grants.len());
    }

    #[test]
    fn no_root_is_an_error() {
        let outcome = in_restricted_thread(Vec::new(), Vec::new(), || ());
        assert!(outcome.is_err());
    }
}
