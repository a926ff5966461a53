//! The run record of a review, `run.json` (gsd-lane's own copy in the run's ledger entry,
//! `review::ledger`, and a copy in the run dir): everything a later
//! `review --resume` needs to decide whether the run can be continued as it was started —
//! the subject, the original arguments, the selection, the hashes of every input file, and per
//! identity the lane manifest's hash and disclosure signature, the budget and the resolved plan
//! (model, host, effort and argv are all in it).
//!
//! The file is versioned (`"version": 1`); an unknown version, an oversized file or one that
//! does not parse is refused (fail closed): such a run is never resumed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Failure;

/// File name inside the run dir.
pub const FILE_NAME: &str = "run.json";
/// The only version this build reads and writes.
pub const VERSION: u32 = 1;
/// Most bytes of a record read back.
pub const MAX_RECORD_BYTES: u64 = 4 * 1024 * 1024;

/// What the review is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SubjectKey {
    /// A GSD phase.
    Phase {
        /// The `--phase` argument.
        phase: String,
        /// The phase directory (absolute).
        dir: PathBuf,
    },
    /// A prompt file.
    PromptFile {
        /// The prompt file (absolute).
        path: PathBuf,
    },
}

impl SubjectKey {
    /// True when both name the same phase directory or prompt file (`--phase 3` and
    /// `--phase 03` are the same phase).
    pub fn same_target(&self, other: &SubjectKey) -> bool {
        match (self, other) {
            (SubjectKey::Phase { dir: a, .. }, SubjectKey::Phase { dir: b, .. }) => a == b,
            (SubjectKey::PromptFile { path: a }, SubjectKey::PromptFile { path: b }) => a == b,
            _ => false,
        }
    }
}

/// One selected identity as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IdentityRecord {
    /// Identity (slug or instance name).
    pub id: String,
    /// Its lane's slug.
    pub cli: String,
    /// SHA-256 of the lane manifest (compact JSON).
    pub manifest_sha256: String,
    /// The manifest's disclosure signature (trust.md §4).
    pub signature: String,
    /// The identity's plan entry as `gsd-lane plan` prints it (model, host, effort, argv).
    pub plan: Value,
}

/// The record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunRecord {
    /// Always [`VERSION`].
    pub version: u32,
    /// When the run started (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
    pub created: String,
    /// Milliseconds since the epoch at the start (ordering runs).
    pub created_ms: u64,
    /// The subject.
    pub subject: SubjectKey,
    /// Where REVIEWS.md goes.
    pub output: PathBuf,
    /// Working directory of the original command.
    pub cwd: PathBuf,
    /// The run dir (absolute, resolved) this record belongs to.
    pub run_dir: PathBuf,
    /// The original `review` arguments (resume options removed).
    pub args: Vec<String>,
    /// Selection source (`explicit_flags`, …).
    pub source: String,
    /// SHA-256 of every input file written into the run dir (prompt and section files).
    pub inputs: BTreeMap<String, String>,
    /// The selected identities, in run order.
    pub identities: Vec<IdentityRecord>,
}

impl RunRecord {
    /// Writes `run.json`: gsd-lane's own copy in the run's ledger entry (0600, atomically
    /// replaced), when it has one, then the copy in the run dir (0600, never through a
    /// planted link).
    ///
    /// # Errors
    ///
    /// I/O errors, naming the file.
    pub fn write(&self, run_dir: &super::rundir::RunDir) -> Result<(), Failure> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|err| Failure::new(format!("encoding {FILE_NAME}: {err}")))?;
        let text = format!("{text}\n");
        if let Some(ledger) = &run_dir.ledger {
            let path = ledger.record_path();
            crate::fsutil::replace_file(&path, text.as_bytes(), 0o600)
                .map_err(|err| Failure::new(format!("writing {}: {err}", path.display())))?;
        }
        run_dir.write(FILE_NAME, &text)
    }

    /// Reads and validates the record at `path` (gsd-lane's own copy), through the no-follow,
    /// non-blocking opener.
    ///
    /// # Errors
    ///
    /// Missing, unreadable, oversized, malformed or of another version — the message names the
    /// file and says why the run cannot be resumed.
    pub fn read(path: &Path) -> Result<RunRecord, Failure> {
        let fail = |why: String| {
            Failure::new(format!(
                "{}: {why}; this run dir cannot be resumed (start a new review)",
                path.display()
            ))
        };
        let bytes = match crate::private_fs::read_run_file(path, MAX_RECORD_BYTES) {
            Ok(Some((_, true))) => {
                return Err(fail(format!("larger than {MAX_RECORD_BYTES} bytes")))
            }
            Ok(Some((bytes, false))) => bytes,
            Ok(None) => return Err(fail("missing".to_owned())),
            Err(err) => return Err(fail(err.to_string())),
        };
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|err| fail(format!("not valid JSON ({err})")))?;
        match value.get("version").and_then(Value::as_u64) {
            Some(v) if v == u64::from(VERSION) => {}
            Some(v) => {
                return Err(fail(format!(
                    "version {v} is not known to this gsd-lane (it reads version {VERSION})"
                )))
            }
            None => return Err(fail("field version is missing or not a number".to_owned())),
        }
        serde_json::from_value(value).map_err(|err| fail(format!("invalid record ({err})")))
    }
}

/// SHA-256 (hex) of the compact JSON of a manifest.
pub fn manifest_sha256(manifest: &Value) -> String {
    use sha2::{Digest, Sha256};
    super::journal::hex(&Sha256::digest(manifest.to_string().as_bytes()))
}

/// SHA-256 of every regular file directly in `dir` (the input files, before any lane ran).
///
/// # Errors
///
/// The directory or a file cannot be read.
pub fn hash_inputs(dir: &Path) -> Result<BTreeMap<String, String>, Failure> {
    let mut out = BTreeMap::new();
    let entries = std::fs::read_dir(dir)
        .map_err(|err| Failure::new(format!("listing {}: {err}", dir.display())))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let bookkeeping = [
            FILE_NAME,
            super::rundir::LOCK_NAME,
            super::journal::FILE_NAME,
        ];
        if bookkeeping.contains(&name.as_str()) || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let hash = super::journal::file_sha256(&entry.path(), MAX_INPUT_BYTES)
            .ok_or_else(|| Failure::new(format!("reading {}", entry.path().display())))?;
        out.insert(name, hash);
    }
    Ok(out)
}

/// Largest input file hashed.
const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// One difference between a recorded run and the same command now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change(pub String);

/// Compares a recorded run with what the same command resolves to now; every difference is
/// named (input file, selection, a lane's manifest, a lane's plan fields).
pub fn changes(old: &RunRecord, new: &RunRecord) -> Vec<Change> {
    let mut out = Vec::new();
    if old.subject != new.subject {
        out.push(Change(
            "the review subject (phase or prompt file)".to_owned(),
        ));
    }
    if old.output != new.output {
        out.push(Change(format!(
            "the output file (was {}, now {})",
            crate::output::escape_text(&old.output.display().to_string()),
            crate::output::escape_text(&new.output.display().to_string())
        )));
    }
    for (name, hash) in &old.inputs {
        match new.inputs.get(name) {
            Some(now) if now == hash => {}
            Some(_) => out.push(Change(format!("the prompt input {name} changed"))),
            None => out.push(Change(format!("the prompt input {name} is gone"))),
        }
    }
    for name in new.inputs.keys().filter(|n| !old.inputs.contains_key(*n)) {
        out.push(Change(format!("a new prompt input {name} appeared")));
    }
    let ids = |r: &RunRecord| {
        r.identities
            .iter()
            .map(|i| i.id.clone())
            .collect::<Vec<_>>()
    };
    if ids(old) != ids(new) || old.source != new.source {
        out.push(Change(format!(
            "the selection changed (was {} [{}], now {} [{}])",
            old.source,
            ids(old).join(","),
            new.source,
            ids(new).join(",")
        )));
    }
    for before in &old.identities {
        let Some(after) = new.identities.iter().find(|i| i.id == before.id) else {
            continue;
        };
        if before.manifest_sha256 != after.manifest_sha256 {
            let what = if before.signature == after.signature {
                "manifest changed"
            } else {
                "manifest changed, including what it runs or where it sends data"
            };
            out.push(Change(format!("lane {}: {what}", before.cli)));
        }
        let mut paths = Vec::new();
        diff_paths(&before.plan, &after.plan, String::new(), &mut paths);
        if !paths.is_empty() {
            out.push(Change(format!(
                "{}: the resolved plan changed at {} (model, host, effort or budget from the config)",
                before.id,
                paths.join(", ")
            )));
        }
    }
    out
}

/// JSON paths where `a` and `b` differ (at most 8 listed).
fn diff_paths(a: &Value, b: &Value, at: String, out: &mut Vec<String>) {
    if out.len() >= 8 || a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let next = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                diff_paths(
                    x.get(key).unwrap_or(&Value::Null),
                    y.get(key).unwrap_or(&Value::Null),
                    next,
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (index, (p, q)) in x.iter().zip(y).enumerate() {
                diff_paths(p, q, format!("{at}[{index}]"), out);
            }
        }
        _ => out.push(if at.is_empty() {
            "(root)".to_owned()
        } else {
            at
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> RunRecord {
        RunRecord {
            version: VERSION,
            created: "2026-01-01T00:00:00.000Z".into(),
            created_ms: 1,
            subject: SubjectKey::Phase {
                phase: "3".into(),
                dir: "/p/03".into(),
            },
            output: "/p/03/03-REVIEWS.md".into(),
            cwd: "/p".into(),
            run_dir: "/t/gsd-review-x".into(),
            args: vec!["--phase".into(), "3".into()],
            source: "all_flag".into(),
            inputs: BTreeMap::from([("gsd-review-prompt.md".into(), "aa".into())]),
            identities: vec![IdentityRecord {
                id: "alpha".into(),
                cli: "alpha".into(),
                manifest_sha256: "m".into(),
                signature: "s".into(),
                plan: json!({"plan": {"argv": ["--model", "x"]}}),
            }],
        }
    }

    #[test]
    fn write_read_round_trip_and_version_gate() {
        let dir = tempfile::tempdir().expect("dir");
        let run_dir = super::super::rundir::RunDir {
            path: dir.path().to_owned(),
            ledger: None,
            held: super::super::rundir::Held::default(),
        };
        record().write(&run_dir).expect("write");
        let path = dir.path().join(FILE_NAME);
        assert_eq!(RunRecord::read(&path).expect("read"), record());
        let text = std::fs::read_to_string(&path).expect("text");
        std::fs::write(&path, text.replace("\"version\": 1", "\"version\": 2")).expect("edit");
        let err = RunRecord::read(&path).expect_err("v2 refused");
        assert!(
            err.message.contains("version 2 is not known"),
            "{}",
            err.message
        );
        std::fs::write(&path, "{\"version\": 1, \"extra\": true}").expect("edit");
        assert!(RunRecord::read(&path).is_err());
        std::fs::write(&path, [0xff, 0x00]).expect("edit");
        assert!(RunRecord::read(&path).is_err());
    }

    #[test]
    fn changes_name_what_changed() {
        let old = record();
        assert!(changes(&old, &old).is_empty());
        let mut new = record();
        new.inputs
            .insert("gsd-review-prompt.md".into(), "bb".into());
        new.identities[0].manifest_sha256 = "m2".into();
        new.identities[0].plan = json!({"plan": {"argv": ["--model", "y"]}});
        let found: Vec<String> = changes(&old, &new).into_iter().map(|c| c.0).collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].contains("gsd-review-prompt.md changed"));
        assert_eq!(found[1], "lane alpha: manifest changed");
        assert!(found[2].contains("plan.argv[1]"), "{}", found[2]);
    }
}
