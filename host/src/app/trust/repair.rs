//! `gsd-lane trust repair`: shows a damaged consent store or pin file and moves it aside.
//!
//! A store that exists but cannot be read or decided blocks every lane whose decision depends
//! on it (`consent_store_unreadable`, `egress_store_unreadable`). Repair never edits such a file:
//! it shows what is there (bounded and escaped, without opening anything that is not a regular
//! file), asks (or takes `--yes`), and renames it to `<name>.damaged-<timestamp>` under the
//! store lock, so nothing is lost and the next run starts from "first use".

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use super::super::Context;
use super::prompt::{ask, Answer};
use crate::error::Failure;
use crate::output::{self, neutralize};
use crate::trust::consent::{lock, ConsentStore, Damage};
use crate::trust::pins::PinStore;
use crate::trust::render::escape_text;

/// Most bytes of a damaged file shown.
const PREVIEW_BYTES: u64 = 2048;

/// `trust repair` options.
#[derive(Debug, Args)]
pub struct RepairArgs {
    /// Move the damaged files aside without asking (for scripts).
    #[arg(long)]
    pub yes: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// The damaged stores of a GSD home.
fn damaged_stores(home: &Path) -> Vec<Damage> {
    let consent = ConsentStore::new(home).load().err();
    let pins = PinStore::new(home).load().err();
    consent.into_iter().chain(pins).collect()
}

/// The first [`PREVIEW_BYTES`] of a regular file, escaped; a description for anything else
/// (a FIFO, device or directory is never opened).
pub fn preview(path: &Path) -> String {
    let kind = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => match std::fs::read_link(path) {
            Ok(target) => format!(
                "a symbolic link to {}",
                escape_text(&target.display().to_string())
            ),
            Err(_) => "a symbolic link".to_owned(),
        },
        Ok(meta) if meta.is_file() => String::new(),
        Ok(meta) if meta.is_dir() => "a directory".to_owned(),
        Ok(_) => "a special file (not opened)".to_owned(),
        Err(err) => format!("cannot be inspected: {err}"),
    };
    if !kind.is_empty() {
        return format!("({kind})");
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let mut bytes = Vec::new();
    match options.open(path) {
        Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => {
            if let Err(err) = file.take(PREVIEW_BYTES + 1).read_to_end(&mut bytes) {
                return format!("(cannot be read: {err})");
            }
        }
        Ok(_) => return "(not a regular file)".to_owned(),
        Err(err) => return format!("(cannot be read: {err})"),
    }
    let cut = bytes.len() as u64 > PREVIEW_BYTES;
    bytes.truncate(usize::try_from(PREVIEW_BYTES).unwrap_or(usize::MAX));
    let mut text = neutralize(&String::from_utf8_lossy(&bytes));
    if bytes.is_empty() {
        text = "(empty)".to_owned();
    } else if cut {
        text.push_str("\n… (cut)");
    }
    text
}

/// `<name>.damaged-<UTC timestamp>` beside `path`.
fn aside_path(path: &Path) -> PathBuf {
    let stamp: String = crate::clock::iso_now()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let name = path
        .file_name()
        .map_or_else(|| "store".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!("{name}.damaged-{stamp}"))
}

/// `trust repair --json`.
#[derive(Debug, Serialize)]
struct Report {
    /// `clean`, `aborted` or `repaired`.
    status: &'static str,
    /// Why nothing was moved (`aborted` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    /// The damaged files.
    files: Vec<DamagedFile>,
}

/// One damaged file of `trust repair --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DamagedFile {
    /// The file.
    path: PathBuf,
    /// What is wrong with it.
    why: String,
    /// Its first bytes, escaped.
    content: String,
    /// Where it was moved (once moved).
    #[serde(skip_serializing_if = "Option::is_none")]
    moved_to: Option<PathBuf>,
}

/// Runs `trust repair`.
///
/// # Errors
///
/// No GSD home, the store lock not acquired, or a rename that fails.
pub fn repair(context: &Context, args: &RepairArgs) -> Result<u8, Failure> {
    let home = context
        .env
        .gsd_home()
        .ok_or_else(|| Failure::new("no GSD home: set GSD_HOME or HOME (the stores live there)"))?;
    let damaged = damaged_stores(&home);
    if damaged.is_empty() {
        if args.json {
            output::print_serialized(&Report {
                status: "clean",
                reason: None,
                files: Vec::new(),
            });
        } else {
            output::print(
                "the consent store and the destination pins are readable: nothing to repair\n",
            );
        }
        return Ok(0);
    }
    let mut files: Vec<DamagedFile> = Vec::new();
    for damage in &damaged {
        let shown = preview(&damage.path);
        if !args.json {
            output::print(&format!(
                "{damage}\n--- content (at most {PREVIEW_BYTES} bytes, escaped) ---\n{shown}\n---\n"
            ));
        }
        files.push(DamagedFile {
            path: damage.path.clone(),
            why: damage.why.clone(),
            content: shown,
            moved_to: None,
        });
    }
    let question = format!(
        "move {} aside (nothing is deleted; the next run pins destinations again on first use)?",
        if damaged.len() == 1 { "it" } else { "them" }
    );
    match ask(&question, args.yes) {
        Answer::Yes => {}
        answer => {
            let reason = if answer == Answer::No {
                "declined"
            } else {
                "no-terminal"
            };
            if args.json {
                output::print_serialized(&Report {
                    status: "aborted",
                    reason: Some(reason),
                    files,
                });
            }
            output::eprint_line(&format!(
                "nothing was moved ({reason}); re-run with --yes to move the damaged files aside"
            ));
            return Ok(1);
        }
    }
    let _guard = lock::acquire(&ConsentStore::new(&home).lock_path())
        .map_err(|err| Failure::new(err.to_string()))?;
    for (damage, file) in damaged.iter().zip(files.iter_mut()) {
        let aside = aside_path(&damage.path);
        std::fs::rename(&damage.path, &aside).map_err(|err| {
            Failure::new(format!(
                "moving {} to {}: {err}",
                damage.path.display(),
                aside.display()
            ))
        })?;
        file.moved_to = Some(aside.clone());
        if !args.json {
            output::print(&format!(
                "moved {} to {}\n",
                escape_text(&damage.path.display().to_string()),
                escape_text(&aside.display().to_string())
            ));
        }
    }
    if args.json {
        output::print_serialized(&Report {
            status: "repaired",
            reason: None,
            files,
        });
    } else {
        output::print("check each lane's host setting (`gsd-lane disclose`) before the next review: its destination is pinned again on first use\n");
    }
    Ok(0)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn preview_is_bounded_escaped_and_never_opens_special_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f");
        std::fs::write(&file, format!("\u{1b}[2J{}", "x".repeat(5000))).expect("write");
        let shown = preview(&file);
        assert!(shown.starts_with("\\u{1b}[2J"), "{shown}");
        assert!(shown.ends_with("(cut)"));
        assert!(shown.len() < 2200);
        assert_eq!(preview(dir.path()), "(a directory)");
        let link = dir.path().join("l");
        std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
        assert_eq!(preview(&link), "(a symbolic link to /dev/zero)");
    }

    #[test]
    fn aside_name_keeps_the_file_name() {
        let aside = aside_path(Path::new("/h/.gsd/egress-pins.json"));
        let name = aside
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with("egress-pins.json.damaged-"), "{name}");
        assert!(name.len() > "egress-pins.json.damaged-".len());
        assert_eq!(aside.parent(), Some(Path::new("/h/.gsd")));
    }
}
