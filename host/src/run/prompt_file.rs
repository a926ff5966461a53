//! Checking a prompt file before any lane starts, so a missing or unreadable one is named
//! with what to fix instead of failing inside a lane.

use std::path::Path;

use crate::output::neutralize;

/// Why a prompt path cannot be used, told apart so the message says what to fix: missing,
/// not examinable, a directory, not a regular file, unreadable. `None` when it can be read.
pub fn unusable_prompt(path: &Path) -> Option<String> {
    let shown = neutralize(&path.display().to_string());
    match std::fs::metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            Some(format!("prompt file {shown} does not exist"))
        }
        Err(err) => Some(format!("prompt file {shown} cannot be examined: {err}")),
        Ok(meta) if meta.is_dir() => {
            Some(format!("prompt file {shown} is a directory, not a file"))
        }
        Ok(meta) if !meta.is_file() => Some(format!(
            "prompt file {shown} is not a regular file (a device, socket or pipe)"
        )),
        Ok(_) => std::fs::File::open(path)
            .err()
            .map(|err| format!("prompt file {shown} cannot be read: {err}")),
    }
}
