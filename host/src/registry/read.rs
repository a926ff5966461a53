//! Reading one `capability.json`: bounded, never blocking on special files, positions kept.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::jsonpos;
use crate::manifest::diagnostic::Code;
use crate::manifest::{Diagnostic, FieldPath};

/// Largest manifest read (manifest.md §6.2 step 2).
pub const MAX_MANIFEST_BYTES: u64 = 8 * 1024 * 1024;

/// A manifest file read and parsed.
#[derive(Debug, Clone)]
pub struct ManifestFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// The text, for positions in diagnostics.
    pub text: String,
    /// The parsed value.
    pub value: Value,
}

/// Why a manifest file could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Missing, not a regular file, unreadable or larger than 8 MiB (`LD-MISSING`).
    Missing(String),
    /// Not parseable JSON (`LD-PARSE`), with the parser's line and column.
    Parse {
        /// The parser's message.
        message: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
}

impl ReadError {
    /// The load-time code.
    pub fn code(&self) -> Code {
        match self {
            ReadError::Missing(_) => Code::LdMissing,
            ReadError::Parse { .. } => Code::LdParse,
        }
    }

    /// A diagnostic for `validate`, located in `path`.
    pub fn to_diagnostic(&self, path: &Path) -> Diagnostic {
        let mut diagnostic = Diagnostic::error(self.code(), FieldPath::root(), self.to_string());
        diagnostic.file = Some(path.to_path_buf());
        if let ReadError::Parse { line, column, .. } = self {
            diagnostic.position = Some(jsonpos::Position {
                line: *line,
                column: *column,
            });
        }
        diagnostic
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Missing(why) => write!(f, "no readable capability.json ({why})"),
            ReadError::Parse { message, .. } => {
                write!(f, "capability.json could not be parsed: {message}")
            }
        }
    }
}

/// Reads and parses a manifest, refusing what §0.2 and §6.2 refuse.
///
/// # Errors
///
/// [`ReadError`] for a missing, special, oversized, non-UTF-8 or unparseable file.
pub fn read_manifest(path: &Path) -> Result<ManifestFile, ReadError> {
    let metadata = fs::metadata(path).map_err(|err| ReadError::Missing(err.kind().to_string()))?;
    if !metadata.is_file() {
        return Err(ReadError::Missing("not a regular file".into()));
    }
    if metadata.len() > MAX_MANIFEST_BYTES {
        return Err(ReadError::Missing(format!(
            "larger than {} MiB",
            MAX_MANIFEST_BYTES >> 20
        )));
    }
    let file = fs::File::open(path).map_err(|err| ReadError::Missing(err.kind().to_string()))?;
    let mut bytes = Vec::new();
    // The file may grow between the size check and the read; the cap holds regardless.
    file.take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| ReadError::Missing(err.kind().to_string()))?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(ReadError::Missing(format!(
            "larger than {} MiB",
            MAX_MANIFEST_BYTES >> 20
        )));
    }
    let text = parse_text(bytes)?;
    let value = parse_json(&text)?;
    Ok(ManifestFile {
        path: path.to_path_buf(),
        text,
        value,
    })
}

fn parse_text(bytes: Vec<u8>) -> Result<String, ReadError> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(ReadError::Parse {
            message: "a byte-order mark is not allowed".into(),
            line: 1,
            column: 1,
        });
    }
    String::from_utf8(bytes).map_err(|err| {
        let valid = err.utf8_error().valid_up_to();
        let prefix = String::from_utf8_lossy(&err.as_bytes()[..valid]).into_owned();
        let line = prefix.matches('\n').count() + 1;
        let column = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ReadError::Parse {
            message: format!("invalid UTF-8 at byte {valid}"),
            line,
            column,
        }
    })
}

/// Parses manifest text; an empty file or one with trailing garbage is an error.
///
/// # Errors
///
/// [`ReadError::Parse`] with serde_json's position.
pub fn parse_json(text: &str) -> Result<Value, ReadError> {
    serde_json::from_str(text).map_err(|err| ReadError::Parse {
        message: err.to_string(),
        line: err.line().max(1),
        column: err.column().max(1),
    })
}

/// Attaches the file and the line:column of each diagnostic's field.
pub fn locate(diagnostics: &mut [Diagnostic], file: &ManifestFile) {
    for diagnostic in diagnostics {
        diagnostic.file = Some(file.path.clone());
        diagnostic.position = Some(jsonpos::locate(&file.text, &diagnostic.field));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_bom_garbage_and_empty() {
        assert!(matches!(
            parse_text(b"\xEF\xBB\xBF{}".to_vec()),
            Err(ReadError::Parse { .. })
        ));
        assert!(matches!(
            parse_text(b"{\n\"a\": \"\xff\"}".to_vec()),
            Err(ReadError::Parse { line: 2, .. })
        ));
        assert!(parse_json("").is_err());
        assert!(parse_json("{} x").is_err());
        assert!(parse_json("1e400").is_err());
        let deep = "[".repeat(100_000);
        assert!(parse_json(&deep).is_err());
    }

    #[test]
    fn refuses_directories_and_missing_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(matches!(
            read_manifest(dir.path()),
            Err(ReadError::Missing(_))
        ));
        assert!(matches!(
            read_manifest(&dir.path().join("nope.json")),
            Err(ReadError::Missing(_))
        ));
    }
}
