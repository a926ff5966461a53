//! `PATH` lookup without spawning (invocation.md §7.1, trust.md §7.8).
//!
//! Presence checks and program resolution never start a process (no `command -v`, no `where`).
//! Rules:
//!
//! - An empty name is never found.
//! - A name containing `/` (or `\`, which the spec also treats as a separator) is a path: it is
//!   found iff it names a regular file (symlinks followed). It is returned as given; a relative
//!   path stays relative to the working directory.
//! - Otherwise each `PATH` entry is tried in order. Empty entries are skipped, and so are
//!   **relative** entries (`.`, `bin`, …): a relative entry resolves against the working
//!   directory, which is usually the repository under review, and trust.md §7.5 forbids picking up a
//!   repository file that any pull request can change.
//! - Unix: the candidate `<dir>/<name>` is found iff it is a regular file with at least one
//!   execute bit set (a non-executable file of the same name earlier in `PATH` does not shadow a
//!   real program later on, as with `execvp`).
//! - Windows: the candidates are `<dir>\<name><ext>` for each extension of `PATHEXT` (default
//!   `.EXE;.CMD;.BAT;.COM`), preceded by `<dir>\<name>` itself when the name already ends in one of
//!   those extensions. A candidate is found iff it is a regular file. First hit wins.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Resolves `name` the way a lane binary is resolved, without spawning anything.
///
/// `path_var` is the value of `PATH` to search (the caller passes the child's `PATH`, which may
/// differ from this process's); `None` means no `PATH`, so only names with a separator can be
/// found. Returns the path to hand to the process spawner, or `None` when nothing qualifies.
pub fn find_executable(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if name.is_empty() {
        return None;
    }
    if name.contains('/') || name.contains('\\') {
        let candidate = PathBuf::from(name);
        return is_regular_file(&candidate).then_some(candidate);
    }
    let path_var = path_var?;
    std::env::split_paths(path_var)
        .filter(|dir| !dir.as_os_str().is_empty() && dir.is_absolute())
        .find_map(|dir| find_in_dir(&dir, name))
}

/// True when `path` names a regular file (following symlinks).
fn is_regular_file(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.is_file())
        .unwrap_or(false)
}

/// Unix: `<dir>/<name>` if it is an executable regular file.
#[cfg(unix)]
fn find_in_dir(dir: &Path, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;

    let candidate = dir.join(name);
    let meta = std::fs::metadata(&candidate).ok()?;
    (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then_some(candidate)
}

/// Windows: `<dir>\<name><ext>` for each `PATHEXT` extension (the bare name first when it already
/// carries one of them). The candidate list is `trust::winshim::candidates`, tested on every
/// platform (trust.md §7.4).
#[cfg(windows)]
fn find_in_dir(dir: &Path, name: &str) -> Option<PathBuf> {
    let pathext = std::env::var("PATHEXT").ok();
    let exts = crate::trust::winshim::pathext_list(pathext.as_deref());
    crate::trust::winshim::candidates(dir, name, &exts)
        .into_iter()
        .find(|candidate| is_regular_file(candidate))
}

/// Other platforms: `<dir>/<name>` if it is a regular file.
#[cfg(not(any(unix, windows)))]
fn find_in_dir(dir: &Path, name: &str) -> Option<PathBuf> {
    let candidate = dir.join(name);
    is_regular_file(&candidate).then_some(candidate)
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    fn write_file(path: &Path, mode: u32) {
        fs::write(path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    fn join(dirs: &[&Path]) -> OsString {
        std::env::join_paths(dirs).unwrap()
    }

    #[test]
    fn empty_name_is_never_found() {
        assert_eq!(find_executable("", Some(OsStr::new("/bin:/usr/bin"))), None);
        assert_eq!(find_executable("", None), None);
    }

    #[test]
    fn name_with_slash_is_a_path_and_must_be_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tool");
        write_file(&file, 0o644);
        let name = file.to_str().unwrap();
        // A path only needs to be a regular file; spawning reports EACCES later.
        assert_eq!(find_executable(name, None), Some(file.clone()));
        assert_eq!(find_executable(dir.path().to_str().unwrap(), None), None);
        let missing = dir.path().join("missing");
        assert_eq!(find_executable(missing.to_str().unwrap(), None), None);
    }

    #[test]
    fn backslash_name_is_treated_as_a_path() {
        let dir = tempfile::tempdir().unwrap();
        write_file(&dir.path().join("a\\b"), 0o755);
        let path = join(&[dir.path()]);
        assert_eq!(find_executable("a\\b", Some(&path)), None);
    }

    #[test]
    fn first_executable_regular_file_wins() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let c = tempfile::tempdir().unwrap();
        write_file(&a.path().join("tool"), 0o644); // not executable: skipped
        fs::create_dir(b.path().join("tool")).unwrap(); // a directory: skipped
        write_file(&c.path().join("tool"), 0o700);
        let path = join(&[a.path(), b.path(), c.path()]);
        assert_eq!(
            find_executable("tool", Some(&path)),
            Some(c.path().join("tool"))
        );
    }

    #[test]
    fn any_execute_bit_counts() {
        let a = tempfile::tempdir().unwrap();
        write_file(&a.path().join("tool"), 0o641);
        let path = join(&[a.path()]);
        assert_eq!(
            find_executable("tool", Some(&path)),
            Some(a.path().join("tool"))
        );
    }

    #[test]
    fn empty_and_relative_entries_are_skipped() {
        let a = tempfile::tempdir().unwrap();
        write_file(&a.path().join("tool"), 0o755);
        let mut path = OsString::from("::.:bin:relative/dir:");
        path.push(a.path().as_os_str());
        path.push(":");
        assert_eq!(
            find_executable("tool", Some(&path)),
            Some(a.path().join("tool"))
        );
        // Nothing relative is ever returned for a bare name, whatever the working directory has.
        let rel_only = OsString::from(".:bin:target");
        assert_eq!(find_executable("tool", Some(&rel_only)), None);
    }

    #[test]
    fn no_path_means_bare_names_are_not_found() {
        assert_eq!(find_executable("sh", None), None);
        assert_eq!(find_executable("sh", Some(OsStr::new(""))), None);
    }

    #[test]
    fn symlink_to_executable_is_found() {
        let a = tempfile::tempdir().unwrap();
        let target = a.path().join("real");
        write_file(&target, 0o755);
        std::os::unix::fs::symlink(&target, a.path().join("tool")).unwrap();
        std::os::unix::fs::symlink(a.path().join("nowhere"), a.path().join("dangling")).unwrap();
        let path = join(&[a.path()]);
        assert_eq!(
            find_executable("tool", Some(&path)),
            Some(a.path().join("tool"))
        );
        assert_eq!(find_executable("dangling", Some(&path)), None);
    }
}
