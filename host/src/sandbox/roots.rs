//! Which directories a confined lane may not write: the project under review (wherever the
//! command was started from), the git directories it uses, and gsd-lane's own trust state.
//!
//! The repository roots are the union of
//! - the project root (`--project`, else the nearest directory holding `.planning/`, else the
//!   git top level, else the working directory),
//! - the git top level of the working directory and of the project root (the nearest ancestor
//!   holding a `.git` entry, searched below the home directory only: a dotfiles repository at
//!   `$HOME` is not taken for the project's),
//! - the repository root the command was given (`--repo-root`) or chose (the working directory),
//! - for every such top level whose `.git` is a `gitdir:` file (a linked worktree, a submodule),
//!   the git directory it names and that directory's `commondir`, so hooks and config outside
//!   the work tree are covered too.
//!
//! The state root is `$GSD_HOME/.gsd` (capabilities, consent, egress pins, locks): a lane must
//! not install an overlay or approve itself.
//!
//! A `gitdir:` or `commondir` target that is `/`, the home directory, an ancestor of it, or the
//! work tree itself (or one of its ancestors) is refused ([`RootsError::Overreach`]): confining
//! it would take the whole home (or more) away from every lane, and leaving it out would leave
//! the hooks git runs writable. Such a `.git` file is hostile or broken either way; the command
//! stops and names it. A target that does not exist is still confined (a lane must not create
//! the git directory git would then use).
//!
//! Every root is absolute and resolved (symbolic links followed for the part that exists; the
//! rest kept as written), and none lies inside another.

use std::fmt;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// Most bytes read of a `.git` or `commondir` file (git writes one short line).
const MAX_POINTER: u64 = 4096;

/// What the roots are computed from.
#[derive(Debug, Clone, Copy)]
pub struct RootInputs<'a> {
    /// The working directory.
    pub cwd: &'a Path,
    /// The project root (`--project` or discovery).
    pub project_root: &'a Path,
    /// The repository root given or chosen for the plans (`--repo-root`, or the one `review`
    /// found).
    pub repo_root: &'a Path,
    /// The home directory (searches stop below it; a pointer may not reach it).
    pub home: Option<&'a Path>,
    /// `GSD_HOME`, else the home directory: its `.gsd` is gsd-lane's own state.
    pub gsd_home: Option<&'a Path>,
}

/// The directories nothing may be written under.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roots {
    /// The repository roots: confined, and compared before and after a lane.
    pub repository: Vec<PathBuf>,
    /// gsd-lane's own state (`$GSD_HOME/.gsd`): confined, not compared.
    pub state: Vec<PathBuf>,
}

/// Why the roots could not be decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootsError {
    /// A `.git` or `commondir` file could not be read or understood.
    Pointer {
        /// The file.
        file: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A `.git` or `commondir` file names a directory too wide to confine.
    Overreach {
        /// The file.
        file: PathBuf,
        /// The directory it names.
        target: PathBuf,
    },
}

impl fmt::Display for RootsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |path: &Path| crate::output::neutralize(&path.display().to_string());
        match self {
            RootsError::Pointer { file, why } => write!(
                f,
                "{}: {why}; gsd-lane cannot tell which git directory to keep read-only for the \
                 lanes, so none was started (fix the file, or pass --sandbox off)",
                shown(file)
            ),
            RootsError::Overreach { file, target } => write!(
                f,
                "{} names {} as a git directory: that is the root, the home directory, one of \
                 their ancestors or the work tree itself, which gsd-lane will neither make \
                 read-only for the lanes nor leave writable; no lane was started (fix the file, \
                 or pass --sandbox off)",
                shown(file),
                shown(target)
            ),
        }
    }
}

impl std::error::Error for RootsError {}

impl Roots {
    /// Computes the roots of a command.
    ///
    /// # Errors
    ///
    /// A `.git` pointer that cannot be read or names too wide a directory.
    pub fn resolve(inputs: &RootInputs<'_>) -> Result<Roots, RootsError> {
        let home = inputs.home.map(resolved);
        let mut repository = Vec::new();
        repository.push(resolved(inputs.project_root));
        repository.push(resolved(inputs.repo_root));
        for start in [inputs.project_root, inputs.repo_root, inputs.cwd] {
            if let Some(top) = git_top_level(&resolved(start), home.as_deref()) {
                repository.push(top);
            }
        }
        let mut pointed = Vec::new();
        for top in &repository {
            pointed.extend(git_dirs(top, home.as_deref())?);
        }
        repository.extend(pointed);
        let state = inputs
            .gsd_home
            .map(|home| vec![resolved(&home.join(".gsd"))])
            .unwrap_or_default();
        Ok(Roots {
            repository: outermost(repository),
            state: outermost(state),
        })
    }

    /// Every confined directory, outermost only.
    pub fn all(&self) -> Vec<PathBuf> {
        outermost(self.repository.iter().chain(&self.state).cloned().collect())
    }
}

/// The roots of the running command, set once it knows them ([`set_current`]).
static CURRENT: Mutex<Option<Roots>> = Mutex::new(None);

/// Records the roots every lane of this process is confined by (with the plan's repository
/// root, which is always added).
pub fn set_current(roots: Roots) {
    *CURRENT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(roots);
}

/// The roots recorded by [`set_current`] plus `repo_root`.
pub fn current_with(repo_root: &Path) -> Roots {
    let mut roots = CURRENT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
        .unwrap_or_default();
    roots.repository.push(resolved(repo_root));
    roots.repository = outermost(std::mem::take(&mut roots.repository));
    roots
}

/// `path` made absolute and resolved: the longest existing prefix canonicalised, the rest
/// appended as written (`.` dropped, `..` applied lexically).
pub fn resolved(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    loop {
        if let Ok(canonical) = at.canonicalize() {
            return append(canonical, rest.iter().rev());
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                at = parent;
            }
            _ => return lexical(&absolute),
        }
    }
}

/// `base` with each of `names` appended lexically.
fn append<'a>(base: PathBuf, names: impl Iterator<Item = &'a std::ffi::OsString>) -> PathBuf {
    let mut out = base;
    for name in names {
        out.push(name);
    }
    lexical(&out)
}

/// `path` with `.` dropped and `..` applied lexically.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `paths` sorted, without duplicates and without any path inside another.
pub fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    let mut kept: Vec<PathBuf> = Vec::new();
    for path in paths {
        if !kept.iter().any(|outer| path.starts_with(outer)) {
            kept.push(path);
        }
    }
    kept
}

/// Whether `dir` is `/`, the home directory or one of its ancestors.
fn too_wide(dir: &Path, home: Option<&Path>) -> bool {
    dir.parent().is_none() || home.is_some_and(|home| home.starts_with(dir))
}

/// The nearest ancestor of `start` (itself included) holding a `.git` entry, below the home
/// directory.
fn git_top_level(start: &Path, home: Option<&Path>) -> Option<PathBuf> {
    start
        .ancestors()
        .take_while(|dir| !too_wide(dir, home))
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .map(Path::to_path_buf)
}

/// The git directories outside the work tree `top` that its `.git` names: a `gitdir:` file's
/// target and that directory's `commondir`, or the target of a `.git` symbolic link.
fn git_dirs(top: &Path, home: Option<&Path>) -> Result<Vec<PathBuf>, RootsError> {
    let dot_git = top.join(".git");
    let Ok(meta) = dot_git.symlink_metadata() else {
        return Ok(Vec::new());
    };
    let git_dir = if meta.file_type().is_symlink() {
        // Read, not followed: a dangling link names the directory a lane must not create.
        let target = std::fs::read_link(&dot_git).map_err(|err| RootsError::Pointer {
            file: dot_git.clone(),
            why: format!("cannot be read: {err}"),
        })?;
        resolved(&top.join(target))
    } else if meta.is_file() {
        let line = read_pointer(&dot_git)?;
        let Some(target) = line.strip_prefix("gitdir:") else {
            return Err(RootsError::Pointer {
                file: dot_git,
                why: "it does not start with \"gitdir:\"".to_owned(),
            });
        };
        resolved(&top.join(target.trim()))
    } else {
        // A `.git` directory lies inside the work tree, which is confined already.
        return Ok(Vec::new());
    };
    check_target(&dot_git, &git_dir, top, home)?;
    let mut dirs = vec![git_dir.clone()];
    let commondir = git_dir.join("commondir");
    if commondir.symlink_metadata().is_ok() {
        let line = read_pointer(&commondir)?;
        let common = resolved(&git_dir.join(line.trim()));
        check_target(&commondir, &common, top, home)?;
        dirs.push(common);
    }
    Ok(dirs)
}

/// Refuses a pointer `target` that is too wide to confine (see the module docs).
fn check_target(
    file: &Path,
    target: &Path,
    top: &Path,
    home: Option<&Path>,
) -> Result<(), RootsError> {
    if too_wide(target, home) || top.starts_with(target) {
        return Err(RootsError::Overreach {
            file: file.to_path_buf(),
            target: target.to_path_buf(),
        });
    }
    Ok(())
}

/// The first line of a pointer file: opened without following a symbolic link or blocking on
/// a FIFO, a regular file, at most [`MAX_POINTER`] bytes, UTF-8.
fn read_pointer(file: &Path) -> Result<String, RootsError> {
    let fail = |why: String| RootsError::Pointer {
        file: file.to_path_buf(),
        why,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let handle = options
        .open(file)
        .map_err(|err| fail(format!("cannot be opened: {err}")))?;
    let meta = handle
        .metadata()
        .map_err(|err| fail(format!("cannot be examined: {err}")))?;
    if !meta.is_file() {
        return Err(fail("it is not a regular file".to_owned()));
    }
    let mut bytes = Vec::new();
    handle
        .take(MAX_POINTER + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| fail(format!("cannot be read: {err}")))?;
    if bytes.len() as u64 > MAX_POINTER {
        return Err(fail(format!("it is longer than {MAX_POINTER} bytes")));
    }
    let text = String::from_utf8(bytes).map_err(|_| fail("it is not UTF-8".to_owned()))?;
    let line = text.lines().next().unwrap_or("").to_owned();
    if line.trim().is_empty() {
        return Err(fail("it is empty".to_owned()));
    }
    Ok(line)
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::fs;

    fn inputs<'a>(cwd: &'a Path, project: &'a Path, home: &'a Path) -> RootInputs<'a> {
        RootInputs {
            cwd,
            project_root: project,
            repo_root: cwd,
            home: Some(home),
            gsd_home: Some(home),
        }
    }

    #[test]
    fn the_project_and_its_git_top_level_are_confined_from_a_subdirectory() {
        let top = tempfile::tempdir().unwrap();
        let base = resolved(top.path());
        let home = base.join("home");
        let proj = home.join("proj");
        fs::create_dir_all(proj.join(".git")).unwrap();
        fs::create_dir_all(proj.join("app/.planning")).unwrap();
        fs::create_dir_all(proj.join("app/src")).unwrap();
        let cwd = proj.join("app/src");
        let roots = Roots::resolve(&inputs(&cwd, &proj.join("app"), &home)).unwrap();
        assert_eq!(roots.repository, vec![proj.clone()]);
        assert_eq!(roots.state, vec![home.join(".gsd")]);
        // Elsewhere, with the project given: both.
        let elsewhere = base.join("elsewhere");
        fs::create_dir_all(&elsewhere).unwrap();
        let roots = Roots::resolve(&inputs(&elsewhere, &proj, &home)).unwrap();
        assert_eq!(roots.repository, vec![elsewhere, proj]);
    }

    #[test]
    fn a_dotfiles_repository_at_home_is_not_the_project() {
        let top = tempfile::tempdir().unwrap();
        let home = resolved(top.path()).join("home");
        let proj = home.join("proj");
        fs::create_dir_all(home.join(".git")).unwrap();
        fs::create_dir_all(&proj).unwrap();
        let roots = Roots::resolve(&inputs(&proj, &proj, &home)).unwrap();
        assert_eq!(roots.repository, vec![proj]);
    }

    #[test]
    fn a_linked_worktree_confines_its_git_dir_and_common_dir() {
        let top = tempfile::tempdir().unwrap();
        let home = resolved(top.path()).join("home");
        let main = home.join("main");
        let git_dir = main.join(".git/worktrees/wt");
        fs::create_dir_all(&git_dir).unwrap();
        fs::write(git_dir.join("commondir"), "../..\n").unwrap();
        let wt = home.join("wt");
        fs::create_dir_all(&wt).unwrap();
        fs::write(wt.join(".git"), format!("gitdir: {}\n", git_dir.display())).unwrap();
        let roots = Roots::resolve(&inputs(&wt, &wt, &home)).unwrap();
        assert_eq!(roots.repository, vec![main.join(".git"), wt.clone()]);

        // Relative, and naming a directory that does not exist yet: confined all the same.
        fs::write(wt.join(".git"), "gitdir: ../missing/gitdir\n").unwrap();
        let roots = Roots::resolve(&inputs(&wt, &wt, &home)).unwrap();
        assert_eq!(
            roots.repository,
            vec![home.join("missing/gitdir"), wt.clone()]
        );
    }

    #[test]
    fn a_pointer_at_the_home_the_root_or_the_work_tree_is_refused() {
        let top = tempfile::tempdir().unwrap();
        let home = resolved(top.path()).join("home");
        let wt = home.join("wt");
        fs::create_dir_all(&wt).unwrap();
        for target in [
            "/".to_owned(),
            home.display().to_string(),
            "..".to_owned(),
            ".".to_owned(),
        ] {
            fs::write(wt.join(".git"), format!("gitdir: {target}\n")).unwrap();
            let err = Roots::resolve(&inputs(&wt, &wt, &home)).unwrap_err();
            assert!(
                matches!(err, RootsError::Overreach { .. }),
                "{target}: {err}"
            );
        }
        for bad in ["", "HEAD\n", &"x".repeat(5000)] {
            fs::write(wt.join(".git"), bad).unwrap();
            let err = Roots::resolve(&inputs(&wt, &wt, &home)).unwrap_err();
            assert!(matches!(err, RootsError::Pointer { .. }), "{bad:?}: {err}");
        }
        // A FIFO does not block.
        let git_dir = home.join("gitdir");
        fs::create_dir_all(&git_dir).unwrap();
        fs::write(wt.join(".git"), format!("gitdir: {}\n", git_dir.display())).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(git_dir.join("commondir"))
            .status()
            .unwrap();
        assert!(status.success());
        let err = Roots::resolve(&inputs(&wt, &wt, &home)).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[test]
    fn a_dangling_git_link_confines_the_directory_it_names() {
        let top = tempfile::tempdir().unwrap();
        let home = resolved(top.path()).join("home");
        let wt = home.join("wt");
        fs::create_dir_all(&wt).unwrap();
        std::os::unix::fs::symlink("../elsewhere/git", wt.join(".git")).unwrap();
        let roots = Roots::resolve(&inputs(&wt, &wt, &home)).unwrap();
        assert_eq!(roots.repository, vec![home.join("elsewhere/git"), wt]);
    }

    #[test]
    fn resolution_keeps_a_missing_tail_and_outermost_drops_nested_roots() {
        let top = tempfile::tempdir().unwrap();
        let base = resolved(top.path());
        assert_eq!(resolved(&base.join("a/./b/../c")), base.join("a/c"));
        assert_eq!(
            outermost(vec![base.join("a/b"), base.join("a"), base.join("ab")]),
            vec![base.join("a"), base.join("ab")]
        );
    }
}
