//! Input hygiene of a code-review call (upstream-since-2026-08.md §8.2): no control characters
//! in the paths, the depth, the base SHA, the repo root or the run dir; every changed file
//! inside the repository root, checked lexically and again after resolving links; every list
//! and value bounded.

use std::path::{Component, Path, PathBuf};

use super::reason::{Rejection, WholeReason};

/// Most changed files one call reviews.
pub const MAX_FILES: usize = 2_000;
/// Longest changed-file path, in bytes.
pub const MAX_PATH_BYTES: usize = 4_096;
/// Largest changed-file list read from a file or stdin, in bytes.
pub const MAX_LIST_BYTES: usize = 256 * 1024;
/// Longest base SHA (a SHA-256 object name is 64 hex digits).
const MAX_SHA: usize = 64;
/// Shortest base SHA git accepts as an abbreviation.
const MIN_SHA: usize = 4;

/// The first character of `text` that §8.2 refuses: C0 controls, DEL, U+2028 and U+2029.
pub fn control_char(text: &str) -> Option<char> {
    text.chars()
        .find(|c| matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}' | '\u{2028}' | '\u{2029}'))
}

/// Refuses `value` (named `what` in the message) when it holds a control character.
///
/// # Errors
///
/// A [`Rejection`] with `reason`, naming the character by its code point.
pub fn no_control(what: &str, value: &str, reason: WholeReason) -> Result<(), Rejection> {
    match control_char(value) {
        Some(c) => Err(Rejection::new(
            reason,
            format!(
                "{what} holds the control character U+{:04X}; pass it without control characters",
                u32::from(c)
            ),
        )),
        None => Ok(()),
    }
}

/// The base SHA: given, free of control characters, 4-64 hex digits.
///
/// # Errors
///
/// `missing_provenance` without one, `invalid_provenance` for anything else.
pub fn base_sha(given: Option<&str>) -> Result<String, Rejection> {
    let Some(sha) = given.filter(|s| !s.is_empty()) else {
        return Err(Rejection::new(
            WholeReason::MissingProvenance,
            "no --base-sha: name the commit the changes are measured from (e.g. --base-sha $(git merge-base HEAD main))",
        ));
    };
    no_control("--base-sha", sha, WholeReason::InvalidProvenance)?;
    let hex = sha.chars().all(|c| c.is_ascii_hexdigit());
    if !hex || !(MIN_SHA..=MAX_SHA).contains(&sha.len()) {
        return Err(Rejection::new(
            WholeReason::InvalidProvenance,
            format!(
                "--base-sha {:?} is not a commit id ({MIN_SHA}-{MAX_SHA} hex digits); resolve a ref first with git rev-parse",
                crate::output::neutralize(sha.get(..sha.len().min(80)).unwrap_or(""))
            ),
        ));
    }
    Ok(sha.to_ascii_lowercase())
}

/// The changed-file list of a file or stdin: UTF-8, at most [`MAX_LIST_BYTES`], one path a
/// line (`\n`), empty lines skipped. A `\r` is a control character like any other.
///
/// # Errors
///
/// `invalid_paths` when the list is too large or not UTF-8.
pub fn read_list(bytes: &[u8], source: &str) -> Result<Vec<String>, Rejection> {
    if bytes.len() > MAX_LIST_BYTES {
        return Err(Rejection::new(
            WholeReason::InvalidPaths,
            format!("the changed-file list of {source} is larger than {MAX_LIST_BYTES} bytes; review fewer files at a time"),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|err| {
        Rejection::new(
            WholeReason::InvalidPaths,
            format!(
                "the changed-file list of {source} is not UTF-8 (byte {}); pass paths as UTF-8 text",
                err.valid_up_to()
            ),
        )
    })?;
    Ok(text
        .split('\n')
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect())
}

/// The repository root, as given (made absolute, `.`/`..` resolved lexically) and as its real
/// path (links resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoRoot {
    /// Absolute, lexically normalised.
    pub lexical: PathBuf,
    /// Canonical (links resolved).
    pub real: PathBuf,
}

impl RepoRoot {
    /// Opens `path` (absolute) as the repository root.
    ///
    /// # Errors
    ///
    /// `invalid_paths` when it holds a control character, is not an existing directory or
    /// cannot be resolved.
    pub fn open(path: &Path) -> Result<RepoRoot, Rejection> {
        let shown = path.display().to_string();
        no_control("the repo root", &shown, WholeReason::InvalidPaths)?;
        let lexical = normalize(path).ok_or_else(|| {
            Rejection::new(
                WholeReason::InvalidPaths,
                format!("the repo root {shown} climbs above /"),
            )
        })?;
        let real = lexical.canonicalize().map_err(|err| {
            Rejection::new(
                WholeReason::InvalidPaths,
                format!("the repo root {shown} cannot be opened: {err}"),
            )
        })?;
        if !real.is_dir() {
            return Err(Rejection::new(
                WholeReason::InvalidPaths,
                format!("the repo root {shown} is not a directory"),
            ));
        }
        Ok(RepoRoot { lexical, real })
    }

    /// `given` (relative to the root, or absolute inside it) as a repository-relative path
    /// with `/` separators, after both checks of §8.2.
    ///
    /// # Errors
    ///
    /// `invalid_paths` (empty, too long, control characters, the root itself, unresolvable),
    /// `path_escapes_repo_root` (outside the root lexically or through a link).
    pub fn inside(&self, given: &str) -> Result<String, Rejection> {
        let shown = crate::output::neutralize(given.get(..given.len().min(200)).unwrap_or(""));
        if given.is_empty() {
            return Err(Rejection::new(
                WholeReason::InvalidPaths,
                "an empty changed-file path",
            ));
        }
        if given.len() > MAX_PATH_BYTES {
            return Err(Rejection::new(
                WholeReason::InvalidPaths,
                format!("changed file {shown}…: longer than {MAX_PATH_BYTES} bytes"),
            ));
        }
        no_control(
            &format!("changed file {shown:?}"),
            given,
            WholeReason::InvalidPaths,
        )?;
        let escapes = || {
            Rejection::new(
                WholeReason::PathEscapesRepoRoot,
                format!(
                    "changed file {shown} lies outside the repository root {}",
                    self.lexical.display()
                ),
            )
        };
        let path = Path::new(given);
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.lexical.join(path)
        };
        let normal = normalize(&joined).ok_or_else(escapes)?;
        let relative = normal
            .strip_prefix(&self.lexical)
            .or_else(|_| normal.strip_prefix(&self.real))
            .map_err(|_| escapes())?
            .to_path_buf();
        if relative.as_os_str().is_empty() {
            return Err(Rejection::new(
                WholeReason::InvalidPaths,
                format!("changed file {shown} names the repository root itself, not a file"),
            ));
        }
        self.resolves_inside(&relative, &shown)?;
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        Ok(parts.join("/"))
    }

    /// The real-path check: the deepest part of `relative` that exists, links resolved, stays
    /// under the real root (a deleted file is judged by its nearest existing folder).
    fn resolves_inside(&self, relative: &Path, shown: &str) -> Result<(), Rejection> {
        let full = self.real.join(relative);
        let Some(existing) = full.ancestors().find(|p| p.symlink_metadata().is_ok()) else {
            return Ok(());
        };
        let real = existing.canonicalize().map_err(|err| {
            Rejection::new(
                WholeReason::PathEscapesRepoRoot,
                format!("changed file {shown} cannot be resolved ({err}); a dangling link is not reviewed"),
            )
        })?;
        if real.starts_with(&self.real) {
            Ok(())
        } else {
            Err(Rejection::new(
                WholeReason::PathEscapesRepoRoot,
                format!(
                    "changed file {shown} resolves to {} through a link, outside the repository root {}",
                    real.display(),
                    self.real.display()
                ),
            ))
        }
    }

    /// Every changed file checked, duplicates dropped (first kept), at most [`MAX_FILES`].
    ///
    /// # Errors
    ///
    /// The first path's rejection; `invalid_paths` for too many files or none.
    pub fn changed_files(&self, given: &[String]) -> Result<Vec<String>, Rejection> {
        if given.len() > MAX_FILES {
            return Err(Rejection::new(
                WholeReason::InvalidPaths,
                format!(
                    "{} changed files; at most {MAX_FILES} are reviewed in one call",
                    given.len()
                ),
            ));
        }
        let mut files: Vec<String> = Vec::new();
        for path in given {
            let inside = self.inside(path)?;
            if !files.contains(&inside) {
                files.push(inside);
            }
        }
        if files.is_empty() {
            return Err(Rejection::new(
                WholeReason::InvalidPaths,
                "no changed files: give them as arguments, with --files-from FILE, or on stdin",
            ));
        }
        Ok(files)
    }
}

/// `path` made free of `.` and `..` lexically; `None` when `..` climbs above the root or the
/// path is relative.
pub fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::Normal(part) => out.push(part),
        }
    }
    out.is_absolute().then_some(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A repository root holding `src/a.rs` (shared with the other code-review tests).
    pub(crate) fn root() -> (tempfile::TempDir, RepoRoot) {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("src")).expect("src");
        std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\n").expect("a");
        let root = RepoRoot::open(dir.path()).expect("root");
        (dir, root)
    }

    #[test]
    fn control_characters_of_section_8_2_are_found() {
        for bad in [
            "a\u{0}b",
            "a\nb",
            "a\rb",
            "a\u{1b}[2J",
            "a\u{7f}",
            "a\u{2028}",
            "a\u{2029}",
        ] {
            assert!(control_char(bad).is_some(), "{bad:?}");
        }
        for good in ["src/a.rs", "é/ü.rs", "a b.rs", "a\u{80}"] {
            assert_eq!(control_char(good), None, "{good:?}");
        }
    }

    #[test]
    fn paths_inside_are_made_relative() {
        let (dir, root) = root();
        assert_eq!(root.inside("src/a.rs").expect("in"), "src/a.rs");
        assert_eq!(root.inside("./src/../src/a.rs").expect("in"), "src/a.rs");
        let absolute = dir.path().join("src/a.rs").display().to_string();
        assert_eq!(root.inside(&absolute).expect("abs"), "src/a.rs");
        // A deleted file is judged by its nearest existing folder.
        assert_eq!(root.inside("src/gone.rs").expect("gone"), "src/gone.rs");
    }

    #[test]
    fn paths_outside_are_refused_lexically() {
        let (_dir, root) = root();
        for bad in [
            "../x",
            "src/../../x",
            "/etc/passwd",
            "../../../../../../etc/shadow",
        ] {
            let err = root.inside(bad).expect_err(bad);
            assert_eq!(err.reason, WholeReason::PathEscapesRepoRoot, "{bad}: {err}");
        }
        assert_eq!(
            root.inside(".").expect_err("root").reason,
            WholeReason::InvalidPaths
        );
        assert_eq!(
            root.inside("").expect_err("empty").reason,
            WholeReason::InvalidPaths
        );
        let long = "a/".repeat(MAX_PATH_BYTES);
        assert_eq!(
            root.inside(&long).expect_err("long").reason,
            WholeReason::InvalidPaths
        );
        assert_eq!(
            root.inside("src/a\u{1b}.rs").expect_err("esc").reason,
            WholeReason::InvalidPaths
        );
    }

    #[test]
    fn links_out_of_the_root_are_refused() {
        let (dir, root) = root();
        let outside = tempfile::tempdir().expect("outside");
        std::fs::write(outside.path().join("secret"), "s").expect("secret");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).expect("link");
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("s.rs"))
            .expect("file link");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("dangling"))
            .expect("dangling");
        for bad in ["out/secret", "out/new.rs", "s.rs", "dangling"] {
            let err = root.inside(bad).expect_err(bad);
            assert_eq!(err.reason, WholeReason::PathEscapesRepoRoot, "{bad}: {err}");
        }
    }

    #[test]
    fn the_list_is_bounded_and_deduplicated() {
        let (_dir, root) = root();
        let many: Vec<String> = (0..=MAX_FILES).map(|i| format!("f{i}")).collect();
        assert_eq!(
            root.changed_files(&many).expect_err("many").reason,
            WholeReason::InvalidPaths
        );
        let files = root
            .changed_files(&["src/a.rs".into(), "./src/a.rs".into(), "b".into()])
            .expect("files");
        assert_eq!(files, vec!["src/a.rs", "b"]);
        assert!(root.changed_files(&[]).is_err());
        assert_eq!(
            read_list(b"a\n\nb\n", "stdin").expect("list"),
            vec!["a", "b"]
        );
        assert!(read_list(&[0xff, b'\n'], "stdin").is_err());
        assert!(read_list(&vec![b'a'; MAX_LIST_BYTES + 1], "stdin").is_err());
    }

    #[test]
    fn base_sha_is_provenance() {
        assert_eq!(
            base_sha(None).expect_err("none").reason,
            WholeReason::MissingProvenance
        );
        assert_eq!(
            base_sha(Some("")).expect_err("empty").reason,
            WholeReason::MissingProvenance
        );
        for bad in ["HEAD~1", "--output=x", "abc", "0123\n", &"a".repeat(65)] {
            assert_eq!(
                base_sha(Some(bad)).expect_err(bad).reason,
                WholeReason::InvalidProvenance,
                "{bad:?}"
            );
        }
        assert_eq!(base_sha(Some("ABCDEF12")).expect("sha"), "abcdef12");
    }
}
