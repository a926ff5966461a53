//! Bounded, non-blocking reading of `.planning/config.json` and its workstream overlay
//! (invocation.md §3.1).

use std::fs::{File, Metadata};
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::merge::deep_merge;

/// Largest config file accepted, in bytes (8 MiB); anything larger is treated as unreadable.
pub const MAX_CONFIG_BYTES: u64 = 8 * 1024 * 1024;

/// A config file that exists but whose settings could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unusable {
    /// The file.
    pub path: PathBuf,
    /// Line and column (1-based) of a JSON syntax error, when that is what is wrong.
    pub position: Option<(usize, usize)>,
    /// What is wrong with it.
    pub reason: Problem,
}

/// What makes a config file unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A directory, FIFO, device or other non-regular file.
    NotRegular,
    /// Larger than the bound, in bytes.
    TooLarge(u64),
    /// An I/O error (the operating system's message).
    Io(String),
    /// Valid JSON whose top-level value is not an object.
    NotObject,
    /// Not JSON (the parser's message without its position, which [`Unusable`] carries).
    InvalidJson(String),
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::NotRegular => f.write_str("not a regular file"),
            Problem::TooLarge(max) => write!(f, "larger than {max} bytes"),
            Problem::Io(detail) => f.write_str(detail),
            Problem::NotObject => f.write_str("the top-level JSON value is not an object"),
            Problem::InvalidJson(detail) => write!(f, "invalid JSON ({detail})"),
        }
    }
}

impl std::error::Error for Problem {}

impl Unusable {
    /// The warning printed by commands that send nothing and go on without the file.
    pub fn warning(&self) -> String {
        format!("warning: could not use {self}; its settings were not applied")
    }
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = crate::output::neutralize(&self.path.display().to_string());
        match self.position {
            Some((line, column)) => write!(f, "{path}:{line}:{column}: {}", self.reason),
            None => write!(f, "{path}: {}", self.reason),
        }
    }
}

/// Reads the root config and the workstream overlay, returning the merged object and the files
/// that exist but could not be used (their settings are left out).
pub(super) fn load_merged(
    project_root: &Path,
    workstream: Option<&str>,
) -> (Map<String, Value>, Vec<Unusable>) {
    let mut unusable = Vec::new();
    let planning = project_root.join(".planning");
    let mut merged =
        read_object_or_note(&planning.join("config.json"), &mut unusable).unwrap_or_default();
    if let Some(path) = workstream_config_path(&planning, workstream) {
        if let Some(overlay) = read_object_or_note(&path, &mut unusable) {
            deep_merge(&mut merged, overlay);
        }
    }
    (merged, unusable)
}

/// Returns the overlay path when `workstream` is a usable name, else `None`.
fn workstream_config_path(planning: &Path, workstream: Option<&str>) -> Option<PathBuf> {
    let name = workstream.filter(|name| is_safe_workstream(name))?;
    Some(planning.join("workstreams").join(name).join("config.json"))
}

/// Reports whether a workstream name is non-empty and free of `/`, `\` and `..`.
fn is_safe_workstream(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && !name.contains('\\') && !name.contains("..")
}

/// Reads a JSON object file; a missing file is `None` silently, any other failure is noted.
fn read_object_or_note(path: &Path, unusable: &mut Vec<Unusable>) -> Option<Map<String, Value>> {
    match read_object(path) {
        Ok(object) => object,
        Err((position, reason)) => {
            unusable.push(Unusable {
                path: path.to_path_buf(),
                position,
                reason,
            });
            None
        }
    }
}

/// Why a file is unusable: the syntax error's position, if any, and the problem.
type Why = (Option<(usize, usize)>, Problem);

/// Reads and parses a file that must hold a JSON object; `Ok(None)` means the file is missing.
fn read_object(path: &Path) -> Result<Option<Map<String, Value>>, Why> {
    match read_regular_file_bounded(path, MAX_CONFIG_BYTES).map_err(|why| (None, why))? {
        Some(bytes) => parse_object(&bytes).map(Some),
        None => Ok(None),
    }
}

/// Parses bytes as JSON whose top level must be an object.
fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, Why> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err((None, Problem::NotObject)),
        Err(err) => {
            let (line, column) = (err.line(), err.column());
            let text = err.to_string();
            let message = text
                .strip_suffix(&format!(" at line {line} column {column}"))
                .unwrap_or(&text)
                .to_owned();
            Err((Some((line, column)), Problem::InvalidJson(message)))
        }
    }
}

/// Reads a regular file of at most `max` bytes without ever blocking on special files.
///
/// Returns `Ok(None)` when the file does not exist. A FIFO, device, directory, oversized file or
/// I/O error is an `Err` carrying its [`Problem`].
fn read_regular_file_bounded(path: &Path, max: u64) -> Result<Option<Vec<u8>>, Problem> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io_problem(&err)),
    };
    check_regular_and_small(&metadata, max)?;
    let file = crate::fsutil::open_nonblocking(path).map_err(|err| io_problem(&err))?;
    let opened = file.metadata().map_err(|err| io_problem(&err))?;
    check_regular_and_small(&opened, max)?;
    read_capped(file, max).map(Some)
}

/// Refuses anything that is not a regular file of at most `max` bytes.
fn check_regular_and_small(metadata: &Metadata, max: u64) -> Result<(), Problem> {
    if !metadata.is_file() {
        return Err(Problem::NotRegular);
    }
    if metadata.len() > max {
        return Err(Problem::TooLarge(max));
    }
    Ok(())
}

/// An I/O failure as a [`Problem`].
fn io_problem(err: &std::io::Error) -> Problem {
    Problem::Io(err.to_string())
}

/// Reads at most `max` bytes, refusing a file that turns out to be longer.
fn read_capped(file: File, max: u64) -> Result<Vec<u8>, Problem> {
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| io_problem(&err))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > max {
        return Err(Problem::TooLarge(max));
    }
    Ok(bytes)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create dirs");
        }
        fs::write(path, text).expect("write file");
    }

    fn load(root: &Path, ws: Option<&str>) -> (Value, Vec<String>) {
        let (map, unusable) = load_merged(root, ws);
        (
            Value::Object(map),
            unusable.iter().map(Unusable::warning).collect(),
        )
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            dir.path(),
            ".planning/config.json",
            "{\n  \"review\": {,}\n}",
        );
        let (_, unusable) = load_merged(dir.path(), None);
        assert_eq!(unusable.len(), 1);
        assert_eq!(unusable[0].position, Some((2, 14)));
        let shown = unusable[0].to_string();
        assert!(
            shown.contains("config.json:2:14: invalid JSON ("),
            "{shown}"
        );
        assert!(!shown.contains("at line"), "{shown}");
    }

    #[test]
    fn missing_file_is_empty_without_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(load(dir.path(), None), (json!({}), vec![]));
    }

    #[test]
    fn valid_file_is_loaded() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            dir.path(),
            ".planning/config.json",
            r#"{"review":{"models":{"gemini":"g"}}}"#,
        );
        assert_eq!(
            load(dir.path(), None),
            (json!({"review": {"models": {"gemini": "g"}}}), vec![])
        );
    }

    #[test]
    fn invalid_json_warns_once_naming_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), ".planning/config.json", "{ not json");
        let (value, warnings) = load(dir.path(), None);
        assert_eq!(value, json!({}));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("config.json"), "{warnings:?}");
        assert!(
            warnings[0].contains("its settings were not applied"),
            "{warnings:?}"
        );
    }

    #[test]
    fn empty_file_and_non_object_warn() {
        for text in ["", "[1,2]", "\"s\"", "null", "3"] {
            let dir = tempfile::tempdir().expect("tempdir");
            write(dir.path(), ".planning/config.json", text);
            let (value, warnings) = load(dir.path(), None);
            assert_eq!(value, json!({}), "{text:?}");
            assert_eq!(warnings.len(), 1, "{text:?}");
        }
    }

    #[test]
    fn deeply_nested_json_warns_instead_of_overflowing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = format!("{{\"a\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        write(dir.path(), ".planning/config.json", &text);
        let (value, warnings) = load(dir.path(), None);
        assert_eq!(value, json!({}));
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn workstream_overlay_merges_over_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            dir.path(),
            ".planning/config.json",
            r#"{"review":{"models":{"gemini":"g","claude":"c"}},"list":[1,2,3],"keep":true}"#,
        );
        write(
            dir.path(),
            ".planning/workstreams/ws1/config.json",
            r#"{"review":{"models":{"claude":"C2"}},"list":[9],"__proto__":{"polluted":1}}"#,
        );
        let (value, warnings) = load(dir.path(), Some("ws1"));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            value,
            json!({"review": {"models": {"gemini": "g", "claude": "C2"}}, "list": [9], "keep": true})
        );
    }

    #[test]
    fn missing_workstream_file_is_silent() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), ".planning/config.json", r#"{"a":1}"#);
        assert_eq!(load(dir.path(), Some("nope")), (json!({"a": 1}), vec![]));
    }

    #[test]
    fn empty_workstream_is_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), ".planning/config.json", r#"{"a":1}"#);
        write(
            dir.path(),
            ".planning/workstreams/config.json",
            r#"{"a":2}"#,
        );
        assert_eq!(load(dir.path(), Some("")), (json!({"a": 1}), vec![]));
    }

    #[test]
    fn unsafe_workstream_names_are_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), ".planning/config.json", r#"{"a":1}"#);
        write(dir.path(), ".planning/evil/config.json", r#"{"a":2}"#);
        write(
            dir.path(),
            ".planning/workstreams/x/config.json",
            r#"{"a":3}"#,
        );
        for name in ["../evil", "..", "x/..", "x\\y", "a/b", "x..y"] {
            assert_eq!(
                load(dir.path(), Some(name)),
                (json!({"a": 1}), vec![]),
                "{name}"
            );
        }
    }

    #[test]
    fn invalid_workstream_overlay_warns_and_keeps_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), ".planning/config.json", r#"{"a":1}"#);
        write(dir.path(), ".planning/workstreams/w/config.json", "[]");
        let (value, warnings) = load(dir.path(), Some("w"));
        assert_eq!(value, json!({"a": 1}));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("workstreams"), "{warnings:?}");
    }

    #[test]
    fn invalid_root_with_valid_overlay_applies_overlay_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), ".planning/config.json", "{");
        write(
            dir.path(),
            ".planning/workstreams/w/config.json",
            r#"{"b":2}"#,
        );
        let (value, warnings) = load(dir.path(), Some("w"));
        assert_eq!(value, json!({"b": 2}));
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn oversized_file_is_refused_with_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(".planning/config.json");
        fs::create_dir_all(dir.path().join(".planning")).expect("mkdir");
        let file = File::create(&path).expect("create");
        file.set_len(MAX_CONFIG_BYTES + 1).expect("set_len");
        let (value, warnings) = load(dir.path(), None);
        assert_eq!(value, json!({}));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("larger than"), "{warnings:?}");
    }

    #[test]
    fn file_of_exactly_the_limit_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut text = String::from("{}");
        text.push_str(&" ".repeat(usize::try_from(MAX_CONFIG_BYTES).unwrap_or(0) - 2));
        write(dir.path(), ".planning/config.json", &text);
        assert_eq!(load(dir.path(), None), (json!({}), vec![]));
    }

    #[test]
    fn directory_is_refused_with_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join(".planning/config.json")).expect("mkdir");
        let (value, warnings) = load(dir.path(), None);
        assert_eq!(value, json!({}));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("not a regular file"), "{warnings:?}");
    }

    #[cfg(unix)]
    #[test]
    fn fifo_does_not_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join(".planning")).expect("mkdir");
        let fifo = dir.path().join(".planning/config.json");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(status.success());
        let root = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(load(&root, None));
        });
        let (value, warnings) = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("loading a FIFO must not block");
        assert_eq!(value, json!({}));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("not a regular file"), "{warnings:?}");
    }

    #[cfg(unix)]
    #[test]
    fn nonblocking_open_of_fifo_returns_promptly() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("pipe");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(status.success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(crate::fsutil::open_nonblocking(&fifo).is_ok());
        });
        assert!(rx.recv_timeout(std::time::Duration::from_secs(10)).is_ok());
    }
}
