//! Diagnostics of a review run with no lane result (ADR-3473 §8.5, `upstream-since-2026-08.md`
//! §10.5, decisions.md row 20): the lanes' `gsd-review-*.md` files and non-empty `.err` files,
//! minus the input copies, copied to `<phase dir>/.review-diagnostics/<run>/`.
//!
//! Everything in the run dir was written by lanes and is untrusted: each file is opened without
//! following a link and only when it is a regular file ([`open_run_file_read`]), read to a bound,
//! and copied under a name of a narrow alphabet into a directory this run just created (0700,
//! files 0600 and created new, never through a link). What is left out or cut short is listed in
//! the directory's `diagnostics.txt`.
//!
//! `<run>` is `<UTC time, YYYYMMDDTHHMMSSmmmZ>-<the run dir's random suffix>`: names sort by
//! time, and the directory is created (not opened), with `-2`, `-3`, … when the name is taken,
//! so two runs never share one.

use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::private_fs::open_run_file_read;

/// The directory beside REVIEWS.md that holds one subdirectory per saved run.
pub const DIR: &str = ".review-diagnostics";
/// The list of what was copied, cut short or left out, in each saved run's directory.
pub const INDEX: &str = "diagnostics.txt";
/// Most bytes copied of one file.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Most bytes copied in all.
pub const MAX_TOTAL_BYTES: u64 = 32 * 1024 * 1024;
/// Most files copied.
pub const MAX_FILES: usize = 256;
/// Most run-dir entries looked at.
pub const MAX_ENTRIES: usize = 10_000;
/// The input copies left out (#4329): names starting so after `gsd-review-`.
const INPUT_COPIES: [&str; 8] = [
    "prompt",
    "instructions",
    "plan-",
    "project",
    "roadmap",
    "context",
    "research",
    "requirements",
];

/// What a save did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Saved {
    /// The run's directory under [`DIR`].
    pub dir: PathBuf,
    /// Files copied whole.
    pub copied: Vec<String>,
    /// Files copied up to a bound: name and bytes kept.
    pub truncated: Vec<(String, u64)>,
    /// Entries not copied: name (made printable) and why.
    pub refused: Vec<Refused>,
}

/// Why the diagnostics could not be saved.
#[derive(Debug)]
pub struct SaveError {
    /// The path the save failed on.
    pub path: PathBuf,
    /// What failed.
    pub what: &'static str,
    /// The I/O error.
    pub source: io::Error,
}

impl fmt::Display for SaveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.what,
            crate::output::neutralize(&self.path.display().to_string()),
            self.source
        )
    }
}

impl std::error::Error for SaveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

fn failed<'p>(path: &'p Path, what: &'static str) -> impl FnOnce(io::Error) -> SaveError + 'p {
    move |source| SaveError {
        path: path.to_owned(),
        what,
        source,
    }
}

/// Whether a run-dir name is a diagnostic worth saving: a `gsd-review-*.md` or a `*.err`
/// that is no input copy. `None`: not one; `Some(Err)`: one, with a name refused.
fn wanted(name: &str) -> Option<Result<(), &'static str>> {
    let is_review = name.starts_with("gsd-review-") && name.ends_with(".md");
    if !is_review && !name.ends_with(".err") {
        return None;
    }
    let rest = name.strip_prefix("gsd-review-").unwrap_or(name);
    if INPUT_COPIES.iter().any(|prefix| rest.starts_with(prefix)) {
        return None;
    }
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    Some(if plain && !name.starts_with('.') {
        Ok(())
    } else {
        Err("its name has characters outside [A-Za-z0-9._-]")
    })
}

/// An entry not copied: its name (made printable) and why.
type Refused = (String, String);

/// The run dir's diagnostic names, sorted, and the names refused on sight.
fn select(run_dir: &Path) -> Result<(Vec<String>, Vec<Refused>), SaveError> {
    let mut names = Vec::new();
    let mut refused = Vec::new();
    // Through the run dir's held descriptor: a directory put at its path is never listed.
    let (entries, more) = crate::private_fs::run_dir_names(run_dir, MAX_ENTRIES)
        .map_err(failed(run_dir, "listing"))?;
    if more {
        refused.push((
            "…".to_owned(),
            format!(
                "the run dir holds more than {MAX_ENTRIES} entries; the rest were not looked at"
            ),
        ));
    }
    for raw in entries {
        let name = raw.to_string_lossy();
        match (wanted(&name), raw.to_str()) {
            (None, _) => {}
            (Some(Ok(())), Some(name)) => names.push(name.to_owned()),
            (Some(Err(why)), _) => refused.push((crate::output::neutralize(&name), why.to_owned())),
            (Some(Ok(())), None) => refused.push((
                crate::output::neutralize(&name),
                "its name is not UTF-8".to_owned(),
            )),
        }
    }
    names.sort();
    Ok((names, refused))
}

/// Creates `<into>/.review-diagnostics/<stamp>-<suffix>[-n]` (0700), refusing a
/// `.review-diagnostics` that is a link or not a directory.
fn create_target(into: &Path, stamp: &str, suffix: &str) -> Result<PathBuf, SaveError> {
    use std::os::unix::fs::DirBuilderExt;
    let root = into.join(DIR);
    match std::fs::symlink_metadata(&root) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(SaveError {
                path: root,
                what: "refusing",
                source: io::Error::other("it is a link or not a directory"),
            })
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => std::fs::DirBuilder::new()
            .mode(0o755)
            .create(&root)
            .map_err(failed(&root, "creating"))?,
        Err(err) => return Err(failed(&root, "examining")(err)),
    }
    let base = format!("{stamp}-{suffix}");
    for n in 1..=100u32 {
        let name = if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        let dir = root.join(&name);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(failed(&dir, "creating")(err)),
        }
    }
    Err(SaveError {
        path: root.join(base),
        what: "creating",
        source: io::Error::new(io::ErrorKind::AlreadyExists, "every name is taken"),
    })
}

/// Writes a new file (0600) in the directory this save created; never through a link.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), SaveError> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .and_then(|mut file| file.write_all(bytes))
        .map_err(failed(path, "writing"))
}

/// `YYYYMMDDTHHMMSSmmmZ` of an ISO-8601 UTC time.
fn compact(iso: &str) -> String {
    iso.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// The run dir's random suffix (`gsd-review-Ab3dE9` → `Ab3dE9`), within the name alphabet.
fn suffix(run_dir: &Path) -> String {
    let name = run_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rest = name.strip_prefix("gsd-review-").unwrap_or(&name);
    let clean: String = rest
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(32)
        .collect();
    if clean.is_empty() {
        "run".to_owned()
    } else {
        clean
    }
}

/// Copies the diagnostics of `run_dir` into a new directory under `<into>/.review-diagnostics/`,
/// named from `now` (an ISO-8601 UTC time) and the run dir's suffix.
///
/// # Errors
///
/// The run dir cannot be listed, the target cannot be created (or `.review-diagnostics` is a
/// link or a file), or a copy cannot be written.
pub fn save(run_dir: &Path, into: &Path, now: &str) -> Result<Saved, SaveError> {
    let (names, mut refused) = select(run_dir)?;
    let dir = create_target(into, &compact(now), &suffix(run_dir))?;
    let mut saved = Saved {
        dir,
        ..Saved::default()
    };
    let mut total = 0u64;
    for name in names {
        if saved.copied.len() + saved.truncated.len() == MAX_FILES {
            refused.push((name, format!("more than {MAX_FILES} files")));
            continue;
        }
        let source = run_dir.join(&name);
        let file = match open_run_file_read(&source) {
            Ok(file) => file,
            Err(err) => {
                refused.push((name, err.to_string()));
                continue;
            }
        };
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        if size == 0 && name.ends_with(".err") {
            continue;
        }
        let cap = MAX_FILE_BYTES.min(MAX_TOTAL_BYTES - total);
        let mut bytes = Vec::new();
        if let Err(err) = file.take(cap.saturating_add(1)).read_to_end(&mut bytes) {
            refused.push((name, err.to_string()));
            continue;
        }
        if bytes.is_empty() && name.ends_with(".err") {
            continue;
        }
        let over = bytes.len() as u64 > cap;
        bytes.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
        total += bytes.len() as u64;
        write_new(&saved.dir.join(&name), &bytes)?;
        if over {
            saved.truncated.push((name, bytes.len() as u64));
        } else {
            saved.copied.push(name);
        }
    }
    saved.refused = refused;
    write_new(&saved.dir.join(INDEX), index(&saved).as_bytes())?;
    Ok(saved)
}

/// The `diagnostics.txt` text.
fn index(saved: &Saved) -> String {
    let mut out = String::from(
        "Diagnostics of a gsd-lane review run in which no reviewer produced a review.\n",
    );
    for name in &saved.copied {
        out.push_str(&format!("copied: {name}\n"));
    }
    for (name, kept) in &saved.truncated {
        out.push_str(&format!(
            "cut short: {name} (its first {kept} bytes; it is larger)\n"
        ));
    }
    for (name, why) in &saved.refused {
        out.push_str(&format!("not copied: {name}: {why}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_leaves_out_input_copies_and_odd_names() {
        assert_eq!(wanted("gsd-review-alpha.md"), Some(Ok(())));
        assert_eq!(wanted("gsd-review-alpha.err"), Some(Ok(())));
        assert_eq!(wanted("other.err"), Some(Ok(())));
        for input in [
            "gsd-review-prompt.md",
            "gsd-review-prompt-alpha.md",
            "gsd-review-instructions.md",
            "gsd-review-plan-03-01.md",
            "gsd-review-project.md",
            "gsd-review-roadmap.md",
            "gsd-review-context.md",
            "gsd-review-research.md",
            "gsd-review-requirements.md",
            "gsd-review-journal.jsonl",
            ".plans-manifest.md",
            "run.json",
        ] {
            assert_eq!(wanted(input), None, "{input}");
        }
        assert!(matches!(wanted("gsd-review-a b.md"), Some(Err(_))));
        assert!(matches!(wanted("gsd-review-\u{1b}[2J.md"), Some(Err(_))));
        assert!(matches!(wanted(".x.err"), Some(Err(_))));
        assert_eq!(compact("2026-12-04T15:05:01.123Z"), "20261204T150501123Z");
        assert_eq!(suffix(Path::new("/tmp/gsd-review-Ab3dE9")), "Ab3dE9");
        assert_eq!(suffix(Path::new("/")), "run");
    }

    #[test]
    fn save_copies_what_it_should_and_names_never_collide() {
        let run = tempfile::tempdir().expect("run");
        let phase = tempfile::tempdir().expect("phase");
        std::fs::write(run.path().join("gsd-review-alpha.md"), "stub\n").expect("w");
        std::fs::write(run.path().join("gsd-review-alpha.err"), "boom\n").expect("w");
        std::fs::write(run.path().join("gsd-review-beta.err"), "").expect("w");
        std::fs::write(run.path().join("gsd-review-prompt.md"), "prompt").expect("w");
        let now = "2026-12-04T15:05:01.123Z";
        let first = save(run.path(), phase.path(), now).expect("save");
        let second = save(run.path(), phase.path(), now).expect("save");
        assert_ne!(first.dir, second.dir);
        assert_eq!(
            first.copied,
            ["gsd-review-alpha.err", "gsd-review-alpha.md"]
        );
        let mut listed: Vec<String> = std::fs::read_dir(&first.dir)
            .expect("ls")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        listed.sort();
        assert_eq!(
            listed,
            [INDEX, "gsd-review-alpha.err", "gsd-review-alpha.md"]
        );
        let base = format!("20261204T150501123Z-{}", suffix(run.path()));
        assert_eq!(first.dir, phase.path().join(DIR).join(&base));
        assert_eq!(second.dir, phase.path().join(DIR).join(format!("{base}-2")));
    }
}
