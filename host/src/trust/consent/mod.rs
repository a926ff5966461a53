//! The user-owned consent store (trust.md §5): `<GSD home>/.gsd/consent.json`.
//!
//! The file format is shared with GSD installations and reproduced byte for byte: a
//! `{"version":"1","records":{…}}` object whose keys are the compact JSON of
//! `{"r": projectRoot, "i": id}`, pretty-printed with two spaces and one trailing newline.
//! Reading is bounded. [`ConsentStore::read`] never fails (a bad store is an empty store, which
//! keeps every project overlay inactive); [`ConsentStore::load`] reports a store that exists but
//! cannot be read or decided as [`Damage`], so decisions that depend on it (the egress check)
//! block instead of treating it as "no record". Every write is a read-modify-write under the store lock, replacing the file atomically, and
//! keeps every other record exactly as read, unknown fields included.

pub(crate) mod atomic;
pub(crate) mod hash;
pub(crate) mod lock;

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::disclosure::POISON_KEYS;
use super::error::{FormatError, LockError, WriteError};
use super::stable;
use crate::manifest::vocab;

/// Largest store read (trust.md §5.5).
pub const MAX_STORE_BYTES: u64 = 8 * 1024 * 1024;

/// Most records a store may hold.
pub const MAX_RECORDS: usize = 4096;

/// The schema version written.
pub const STORE_VERSION: &str = "1";

/// Why a store operation failed.
#[derive(Debug)]
pub enum StoreError {
    /// The lock could not be acquired; nothing was written.
    Lock(LockError),
    /// Adding a new record to a store already holding [`MAX_RECORDS`].
    Full {
        /// The store file.
        path: PathBuf,
    },
    /// The file exists but is not a readable store; it is left untouched.
    Unreadable {
        /// The store file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// Writing the new store failed; the old one is intact.
    Write(WriteError),
    /// The capability id does not match `^[a-z][a-z0-9-]*$`.
    InvalidId(String),
}

impl std::error::Error for StoreError {}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Lock(why) => write!(f, "{why}"),
            StoreError::Full { path } => write!(
                f,
                "consent store full: {} already holds {MAX_RECORDS} records; revoke unused ones with `gsd-lane trust revoke <id>`",
                path.display()
            ),
            StoreError::Unreadable { path, why } => write!(
                f,
                "{} is not a readable consent store ({why}); nothing was written — repair it or move it aside",
                path.display()
            ),
            StoreError::Write(why) => write!(f, "{why}"),
            StoreError::InvalidId(id) => write!(
                f,
                "capability id {:?} does not match ^[a-z][a-z0-9-]*$",
                crate::trust::render::escape_text(id)
            ),
        }
    }
}

/// A state file that exists but cannot be read or decided (fail closed, never "first use").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub why: String,
}

impl Damage {
    /// The fix, for messages: the repair command, or the manual step.
    pub fn fix(&self) -> String {
        let path = crate::output::shell_quote(&self.path.display().to_string());
        format!(
            "run `gsd-lane trust repair` (it shows the file and moves it aside), or move it aside yourself: mv {path} {path}.damaged"
        )
    }
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is damaged ({})",
            crate::trust::render::escape_text(&self.path.display().to_string()),
            crate::trust::render::escape_text(&self.why)
        )
    }
}

/// Reports whether `id` is a capability id the store accepts.
pub fn valid_id(id: &str) -> bool {
    vocab::is_id(id) && !POISON_KEYS.contains(&id)
}

/// One consent record; `raw` holds every field as read or written, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    root: String,
    id: String,
    raw: Map<String, Value>,
}

impl Record {
    /// A new project-scope record (the `[REF]` field order; `reviewerHost` only when given).
    pub fn new(fields: NewRecord) -> Record {
        let mut raw = Map::new();
        raw.insert("projectRoot".into(), json!(fields.project_root));
        raw.insert("id".into(), json!(fields.id));
        raw.insert("scope".into(), json!("project"));
        raw.insert("integrity".into(), json!(fields.integrity));
        raw.insert(
            "disclosureSignature".into(),
            json!(fields.disclosure_signature),
        );
        raw.insert("contentHash".into(), json!(fields.content_hash));
        raw.insert("consentedAt".into(), json!(fields.consented_at));
        if let Some(host) = fields.reviewer_host {
            raw.insert("reviewerHost".into(), json!(host));
        }
        if let Some(binding) = fields.lane_binding_v2 {
            raw.insert("laneBindingV2".into(), json!(binding));
        }
        Record {
            root: fields.project_root,
            id: fields.id,
            raw,
        }
    }

    /// Checks a record read from disk (trust.md §5.4); `None` drops it.
    fn from_raw(value: &Value) -> Option<Record> {
        let raw = value.as_object()?;
        let string = |key: &str| raw.get(key).and_then(Value::as_str);
        let non_empty = |key: &str| string(key).filter(|s| !s.is_empty());
        let root = non_empty("projectRoot")?.to_owned();
        let id = string("id").filter(|id| valid_id(id))?.to_owned();
        (string("scope")? == "project").then_some(())?;
        string("integrity")?;
        string("disclosureSignature")?;
        non_empty("contentHash")?;
        non_empty("consentedAt")?;
        if raw.get("reviewerHost").is_some_and(|h| !h.is_string()) {
            return None;
        }
        Some(Record {
            root,
            id,
            raw: raw.clone(),
        })
    }

    fn field(&self, key: &str) -> &str {
        self.raw.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// The canonical project root.
    pub fn project_root(&self) -> &str {
        &self.root
    }

    /// The capability id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The bundle content hash bound by the record.
    pub fn content_hash(&self) -> &str {
        self.field("contentHash")
    }

    /// When consent was given, as stored.
    pub fn consented_at(&self) -> &str {
        self.field("consentedAt")
    }

    /// The disclosure signature bound by the record.
    pub fn disclosure_signature(&self) -> &str {
        self.field("disclosureSignature")
    }

    /// The consented host, when the record carries a non-empty one.
    pub fn reviewer_host(&self) -> Option<&str> {
        self.raw
            .get("reviewerHost")
            .and_then(Value::as_str)
            .filter(|h| !h.is_empty())
    }

    /// Rewrites only `reviewerHost` and `consentedAt` (trust.md §5.11 re-approval).
    pub fn rebind(&mut self, host: &str, consented_at: &str) {
        self.raw.insert("reviewerHost".into(), json!(host));
        self.raw.insert("consentedAt".into(), json!(consented_at));
    }

    /// The record as JSON, every field as stored.
    pub fn to_json(&self) -> Value {
        Value::Object(self.raw.clone())
    }

    /// The on-disk key: compact JSON of `{"r": root, "i": id}`.
    pub fn key(&self) -> String {
        store_key(self.project_root(), self.id())
    }
}

/// The fields of a new record.
#[derive(Debug, Clone, Default)]
pub struct NewRecord {
    /// Canonical project root.
    pub project_root: String,
    /// Capability id.
    pub id: String,
    /// Install-time integrity pin.
    pub integrity: String,
    /// The §4 signature at consent time.
    pub disclosure_signature: String,
    /// The §5.7 bundle hash.
    pub content_hash: String,
    /// ISO-8601 UTC timestamp with milliseconds.
    pub consented_at: String,
    /// Normalized resolved host (openai-http lanes only).
    pub reviewer_host: Option<String>,
    /// Extended lane binding (§4.8), a new optional field.
    pub lane_binding_v2: Option<String>,
}

/// The on-disk key of (root, id).
pub fn store_key(root: &str, id: &str) -> String {
    let mut key = Map::new();
    key.insert("r".into(), json!(root));
    key.insert("i".into(), json!(id));
    stable::compact(&Value::Object(key))
}

/// The records of a store, in file order (later duplicates replace earlier ones in place).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Records {
    records: Vec<Record>,
    /// The (root, id) claimed by each entry dropped as invalid; `None` where it cannot be told.
    dropped: Vec<(Option<String>, Option<String>)>,
}

impl Records {
    /// Every valid record.
    pub fn all(&self) -> &[Record] {
        &self.records
    }

    /// The record for (root, id).
    pub fn get(&self, root: &str, id: &str) -> Option<&Record> {
        self.records
            .iter()
            .find(|r| r.project_root() == root && r.id() == id)
    }

    /// True when an entry dropped as invalid may be the record of (root, id): its own fields or
    /// its on-disk key name that pair, or cannot be read. A decision about (root, id) then
    /// cannot be made from this store.
    pub fn has_damaged_entry_for(&self, root: &str, id: &str) -> bool {
        self.dropped.iter().any(|(r, i)| {
            r.as_deref().is_none_or(|r| r == root) && i.as_deref().is_none_or(|i| i == id)
        })
    }

    /// Inserts or replaces the record for its (root, id).
    ///
    /// # Errors
    ///
    /// [`StoreError::Full`] (carrying an empty path, filled in by the caller) when a new key
    /// would exceed [`MAX_RECORDS`].
    pub fn put(&mut self, record: Record) -> Result<(), StoreError> {
        let existing = self
            .records
            .iter()
            .position(|r| r.project_root() == record.project_root() && r.id() == record.id());
        match existing {
            Some(index) => self.records[index] = record,
            None if self.records.len() >= MAX_RECORDS => {
                return Err(StoreError::Full {
                    path: PathBuf::new(),
                })
            }
            None => self.records.push(record),
        }
        Ok(())
    }

    /// Removes the record for (root, id); true when one was removed.
    pub fn remove(&mut self, root: &str, id: &str) -> bool {
        let before = self.records.len();
        self.records
            .retain(|r| !(r.project_root() == root && r.id() == id));
        before != self.records.len()
    }

    /// The file text: `{"version":"1","records":{…}}`, two-space indentation, one newline.
    pub fn encode(&self) -> String {
        let mut records = Map::new();
        for record in &self.records {
            records.insert(record.key(), record.to_json());
        }
        let mut root = Map::new();
        root.insert("version".into(), json!(STORE_VERSION));
        root.insert("records".into(), Value::Object(records));
        format!("{}\n", stable::pretty(&Value::Object(root)))
    }

    /// Parses store text leniently (trust.md §5.5): invalid records are dropped one by one.
    ///
    /// # Errors
    ///
    /// A [`FormatError`] when the whole store must be treated as empty (invalid JSON, a root or
    /// `records` that is not an object, a `version` other than `"1"`, more than
    /// [`MAX_RECORDS`] keys).
    pub fn decode(text: &str) -> Result<Records, FormatError> {
        if text.trim().is_empty() {
            return Ok(Records::default());
        }
        let value: Value =
            serde_json::from_str(text).map_err(|e| FormatError::InvalidJson(e.to_string()))?;
        let root = value.as_object().ok_or(FormatError::RootNotObject)?;
        check_version(root)?;
        let Some(records) = root.get("records") else {
            return Ok(Records::default());
        };
        let records = records
            .as_object()
            .ok_or(FormatError::NotObject("records"))?;
        if records.len() > MAX_RECORDS {
            return Err(FormatError::TooManyRecords(MAX_RECORDS));
        }
        let mut out = Records::default();
        let mut index: HashMap<(String, String), usize> = HashMap::new();
        for (key, raw) in records {
            if POISON_KEYS.contains(&key.as_str()) {
                continue;
            }
            let Some(record) = Record::from_raw(raw) else {
                out.dropped.push(claimed_pair(key, raw));
                continue;
            };
            let pair = (record.root.clone(), record.id.clone());
            match index.get(&pair) {
                Some(&at) => out.records[at] = record,
                None => {
                    index.insert(pair, out.records.len());
                    out.records.push(record);
                }
            }
        }
        Ok(out)
    }
}

/// Refuses a store whose `version` is present and not the string `"1"` (a format this build
/// cannot read). A missing `version` is accepted, as GSD installations accept it.
///
/// # Errors
///
/// [`FormatError::Version`] with the value found.
pub(crate) fn check_version(root: &Map<String, Value>) -> Result<(), FormatError> {
    match root.get("version") {
        None => Ok(()),
        Some(Value::String(v)) if v == STORE_VERSION => Ok(()),
        Some(other) => Err(FormatError::Version(crate::trust::render::escape_text(
            &stable::compact(other),
        ))),
    }
}

/// The (root, id) an invalid entry claims, from its own fields, else from its on-disk key.
fn claimed_pair(key: &str, raw: &Value) -> (Option<String>, Option<String>) {
    let from_key: Option<Value> = serde_json::from_str(key).ok();
    let text = |value: Option<&Value>, field: &str| {
        value
            .and_then(|v| v.get(field))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    (
        text(Some(raw), "projectRoot").or_else(|| text(from_key.as_ref(), "r")),
        text(Some(raw), "id").or_else(|| text(from_key.as_ref(), "i")),
    )
}

/// Why an empty store file is damage rather than "no records".
const EMPTY_STORE: &str = "the file is empty (truncated?)";

/// What a bounded read found.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadOutcome {
    /// No file.
    Missing,
    /// A regular file holding nothing but whitespace.
    Empty,
    /// The text of a regular file within the cap.
    Text(String),
    /// Something that must be treated as empty: not a regular file, too large, unreadable.
    Refused(String),
}

/// Reads a small state file: a regular file of at most [`MAX_STORE_BYTES`], never blocking on
/// a FIFO or device (the file type is checked before the file is opened, and the open is
/// non-blocking in case it changes in between; the read is capped in any case).
pub fn read_bounded(path: &Path) -> ReadOutcome {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A dangling symlink is not "no store": something is there.
            return match fs::symlink_metadata(path) {
                Ok(_) => ReadOutcome::Refused("a symbolic link to nothing".into()),
                Err(_) => ReadOutcome::Missing,
            };
        }
        Err(e) => return ReadOutcome::Refused(e.to_string()),
    };
    if !meta.is_file() {
        return ReadOutcome::Refused(format!("not a regular file but {}", file_kind(&meta)));
    }
    if meta.len() > MAX_STORE_BYTES {
        return ReadOutcome::Refused(format!("larger than {} MiB", MAX_STORE_BYTES >> 20));
    }
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) => return ReadOutcome::Refused(e.to_string()),
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return ReadOutcome::Refused("not a regular file".into());
    }
    let mut bytes = Vec::new();
    if let Err(e) = file.take(MAX_STORE_BYTES + 1).read_to_end(&mut bytes) {
        return ReadOutcome::Refused(e.to_string());
    }
    if bytes.len() as u64 > MAX_STORE_BYTES {
        return ReadOutcome::Refused(format!("larger than {} MiB", MAX_STORE_BYTES >> 20));
    }
    match String::from_utf8(bytes) {
        Ok(text) if text.trim().is_empty() => ReadOutcome::Empty,
        Ok(text) => ReadOutcome::Text(text),
        Err(_) => ReadOutcome::Refused("not UTF-8".into()),
    }
}

/// What kind of file `meta` describes, for messages.
fn file_kind(meta: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// The consent store of one GSD home.
#[derive(Debug, Clone)]
pub struct ConsentStore {
    dir: PathBuf,
}

impl ConsentStore {
    /// The store under `<gsd_home>/.gsd/`.
    pub fn new(gsd_home: &Path) -> ConsentStore {
        ConsentStore {
            dir: gsd_home.join(".gsd"),
        }
    }

    /// `<GSD home>/.gsd/consent.json`.
    pub fn path(&self) -> PathBuf {
        self.dir.join("consent.json")
    }

    /// `<GSD home>/.gsd/.consent.lock`.
    pub fn lock_path(&self) -> PathBuf {
        self.dir.join(".consent.lock")
    }

    /// The `.gsd` directory of the GSD home.
    #[cfg(test)]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads every valid record; a missing, refused or invalid store is empty (no overlay is
    /// activated by it).
    pub fn read(&self) -> Records {
        self.load().unwrap_or_default()
    }

    /// Reads the store for a decision: a missing file has no records ("first use"); one that
    /// exists but is empty, is not a regular file, cannot be read, does not parse or has the
    /// wrong shape or version is [`Damage`].
    ///
    /// # Errors
    ///
    /// [`Damage`] naming the file and what is wrong.
    pub fn load(&self) -> Result<Records, Damage> {
        let path = self.path();
        let damage = |why: String| Damage {
            path: path.clone(),
            why,
        };
        match read_bounded(&path) {
            ReadOutcome::Missing => Ok(Records::default()),
            // gsd-lane never writes an empty store (every write replaces it whole): an empty
            // file was truncated, and the records it held are unknown, so it is damage.
            ReadOutcome::Empty => Err(damage(EMPTY_STORE.into())),
            ReadOutcome::Text(text) => {
                Records::decode(&text).map_err(|why| damage(why.to_string()))
            }
            ReadOutcome::Refused(why) => Err(damage(why)),
        }
    }

    /// Runs a read-modify-write under the lock and replaces the store atomically.
    ///
    /// # Errors
    ///
    /// [`StoreError`]: lock not acquired, store unreadable (left untouched), store full, write
    /// failed. Nothing is written unless `change` succeeds.
    pub fn update<T>(
        &self,
        change: impl FnOnce(&mut Records) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let _guard = lock::acquire(&self.lock_path()).map_err(StoreError::Lock)?;
        let path = self.path();
        let mut records = match read_bounded(&path) {
            ReadOutcome::Missing => Records::default(),
            ReadOutcome::Empty => {
                return Err(StoreError::Unreadable {
                    path,
                    why: EMPTY_STORE.into(),
                });
            }
            ReadOutcome::Text(text) => {
                Records::decode(&text).map_err(|why| StoreError::Unreadable {
                    path: path.clone(),
                    why: why.to_string(),
                })?
            }
            ReadOutcome::Refused(why) => {
                return Err(StoreError::Unreadable { path, why });
            }
        };
        let result = change(&mut records).map_err(|err| match err {
            StoreError::Full { .. } => StoreError::Full { path: path.clone() },
            other => other,
        })?;
        atomic::replace(&path, records.encode().as_bytes()).map_err(StoreError::Write)?;
        Ok(result)
    }

    /// Records consent (idempotent per (root, id)).
    ///
    /// # Errors
    ///
    /// See [`ConsentStore::update`]; also [`StoreError::InvalidId`].
    pub fn record(&self, record: Record) -> Result<(), StoreError> {
        if !valid_id(record.id()) {
            return Err(StoreError::InvalidId(record.id().to_owned()));
        }
        self.update(|records| records.put(record))
    }

    /// Revokes (root, id); `Ok(true)` when a record was removed. An invalid id removes nothing.
    ///
    /// # Errors
    ///
    /// See [`ConsentStore::update`].
    pub fn revoke(&self, root: &str, id: &str) -> Result<bool, StoreError> {
        if !valid_id(id) {
            return Ok(false);
        }
        if self.read().get(root, id).is_none() {
            // Nothing to remove: the file is not rewritten at all.
            return Ok(false);
        }
        self.update(|records| Ok(records.remove(root, id)))
    }

    /// True iff `id` is valid, `hash` is non-empty and the record for (root, id) binds exactly
    /// that hash (trust.md §5.12).
    #[cfg(test)]
    pub fn has_project_consent(&self, root: &str, id: &str, hash: &str) -> bool {
        valid_id(id)
            && !hash.is_empty()
            && self
                .read()
                .get(root, id)
                .is_some_and(|r| r.content_hash() == hash)
    }

    /// The record's non-empty `reviewerHost` for (root, id), if any (trust.md §5.12).
    #[cfg(test)]
    pub fn read_consented_reviewer_host(&self, root: &str, id: &str) -> Option<String> {
        if !valid_id(id) {
            return None;
        }
        self.read()
            .get(root, id)
            .and_then(Record::reviewer_host)
            .map(str::to_owned)
    }
}

/// Now as an ISO-8601 UTC timestamp with milliseconds (`2026-07-30T12:34:56.789Z`).
pub fn iso_now() -> String {
    crate::clock::iso_now()
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)]
mod tests;
