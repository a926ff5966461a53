//! First-use destination pins (trust.md §6.9 `[HARD]`): `<GSD home>/.gsd/egress-pins.json`.
//!
//! An `openai-http` lane without a consent record (first-party, global scope, or a legacy record
//! without `reviewerHost`) is pinned to the normalized host of its first run, keyed by
//! (canonical project root, capability id). Later runs compare against the pin exactly as
//! against a consented host. Pins live in the user's GSD home, never in a repository, in a file
//! of their own (a GSD installation rewriting `consent.json` cannot drop them), and they are not
//! consent records: they never activate a project overlay. The file shares the store's lock and
//! its atomic replacement.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::consent::{
    atomic, check_version, lock, read_bounded, store_key, Damage, ReadOutcome, StoreError,
    MAX_RECORDS,
};
use super::error::{FormatError, PinError};
use super::stable;

/// How a pin came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinSource {
    /// Recorded by the first run of the lane.
    FirstUse,
    /// Set by an explicit re-approval (`trust rebind-host`) or at install.
    Approved,
}

impl PinSource {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PinSource::FirstUse => "first-use",
            PinSource::Approved => "approved",
        }
    }
}

/// One pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Canonical project root.
    pub project_root: String,
    /// Capability id.
    pub id: String,
    /// Normalized host.
    pub host: String,
    /// When it was set (ISO-8601 UTC).
    pub pinned_at: String,
    /// `first-use` or `approved`.
    pub source: String,
}

impl Pin {
    /// Checks one pin read from disk; every field must be a string (the three keys non-empty).
    fn from_raw(value: &Value) -> Result<Pin, PinError> {
        let text = |key: &'static str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or(PinError::NotText(key))
        };
        let non_empty = |key: &'static str| {
            text(key).and_then(|s| {
                if s.is_empty() {
                    Err(PinError::Empty(key))
                } else {
                    Ok(s)
                }
            })
        };
        if !value.is_object() {
            return Err(PinError::NotObject);
        }
        let id = non_empty("id")?;
        if !super::consent::valid_id(&id) {
            return Err(PinError::InvalidId);
        }
        Ok(Pin {
            project_root: non_empty("projectRoot")?,
            id,
            host: non_empty("host")?,
            pinned_at: text("pinnedAt")?,
            source: text("source")?,
        })
    }

    /// The pin as JSON.
    pub fn to_json(&self) -> Value {
        json!({"projectRoot": self.project_root, "id": self.id, "host": self.host,
               "pinnedAt": self.pinned_at, "source": self.source})
    }
}

/// The pin file of one GSD home.
#[derive(Debug, Clone)]
pub struct PinStore {
    dir: PathBuf,
}

impl PinStore {
    /// The pins under `<gsd_home>/.gsd/`.
    pub fn new(gsd_home: &Path) -> PinStore {
        PinStore {
            dir: gsd_home.join(".gsd"),
        }
    }

    /// `<GSD home>/.gsd/egress-pins.json`.
    pub fn path(&self) -> PathBuf {
        self.dir.join("egress-pins.json")
    }

    /// Decodes the file strictly: this build is its only writer, so anything but
    /// `{"version":"1","pins":{…}}` with every pin well-formed is damage (a dropped pin would
    /// let the next run pin a moved host as if it were the first).
    fn decode(text: &str) -> Result<Vec<Pin>, FormatError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| FormatError::InvalidJson(e.to_string()))?;
        let root = value.as_object().ok_or(FormatError::RootNotObject)?;
        if root.get("version").is_none() {
            return Err(FormatError::VersionMissing);
        }
        check_version(root)?;
        let pins = root
            .get("pins")
            .ok_or(FormatError::Missing("pins"))?
            .as_object()
            .ok_or(FormatError::NotObject("pins"))?;
        if pins.len() > MAX_RECORDS {
            return Err(FormatError::TooManyPins(MAX_RECORDS));
        }
        let mut out: Vec<Pin> = Vec::new();
        for (key, raw) in pins {
            let pin = Pin::from_raw(raw).map_err(|why| FormatError::Pin {
                key: crate::trust::render::escape_text(&super::stable::string_literal(key)),
                why,
            })?;
            out.retain(|p| !(p.project_root == pin.project_root && p.id == pin.id));
            out.push(pin);
        }
        Ok(out)
    }

    /// Reads the pins for a decision: a missing file has none ("first use"); one that exists
    /// but is empty, not a regular file, unreadable, unparsable or of the wrong shape, version
    /// or types is [`Damage`].
    ///
    /// # Errors
    ///
    /// [`Damage`] naming the file and what is wrong.
    pub fn load(&self) -> Result<Vec<Pin>, Damage> {
        let path = self.path();
        let damage = |why: String| Damage {
            path: path.clone(),
            why,
        };
        match read_bounded(&path) {
            ReadOutcome::Missing => Ok(Vec::new()),
            ReadOutcome::Empty => Err(damage("the file is empty (truncated?)".into())),
            ReadOutcome::Text(text) => {
                PinStore::decode(&text).map_err(|why| damage(why.to_string()))
            }
            ReadOutcome::Refused(why) => Err(damage(why)),
        }
    }

    /// Every pin, for listings; a damaged file lists none (see [`PinStore::load`]).
    pub fn read(&self) -> Vec<Pin> {
        self.load().unwrap_or_default()
    }

    /// The pin of (root, id), for a decision.
    ///
    /// # Errors
    ///
    /// [`Damage`] when the file cannot be decided.
    pub fn get(&self, root: &str, id: &str) -> Result<Option<Pin>, Damage> {
        Ok(self
            .load()?
            .into_iter()
            .find(|p| p.project_root == root && p.id == id))
    }

    /// Sets the pin of (root, id) under the store lock.
    ///
    /// With `only_if_absent`, an existing pin is kept and returned instead (two first runs
    /// racing cannot replace each other's pin).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the lock is not acquired, the file is unreadable (left untouched),
    /// full, or cannot be written.
    pub fn set(&self, lock_path: &Path, pin: Pin, only_if_absent: bool) -> Result<Pin, StoreError> {
        let _guard = lock::acquire(lock_path).map_err(StoreError::Lock)?;
        let path = self.path();
        let mut pins = self.load().map_err(|d| StoreError::Unreadable {
            path: d.path,
            why: d.why,
        })?;
        let existing = pins
            .iter()
            .position(|p| p.project_root == pin.project_root && p.id == pin.id);
        match existing {
            Some(index) if only_if_absent => return Ok(pins[index].clone()),
            Some(index) => pins[index] = pin.clone(),
            None if pins.len() >= MAX_RECORDS => return Err(StoreError::Full { path }),
            None => pins.push(pin.clone()),
        }
        let mut map = Map::new();
        for p in &pins {
            map.insert(store_key(&p.project_root, &p.id), p.to_json());
        }
        let text = format!(
            "{}\n",
            stable::pretty(&json!({"version": "1", "pins": Value::Object(map)}))
        );
        atomic::replace(&path, text.as_bytes()).map_err(StoreError::Write)?;
        Ok(pin)
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn pin(host: &str) -> Pin {
        Pin {
            project_root: "/p".into(),
            id: "ollama".into(),
            host: host.into(),
            pinned_at: "t".into(),
            source: PinSource::FirstUse.as_str().into(),
        }
    }

    #[test]
    fn decode_errors_are_typed_and_name_the_pin_and_field() {
        let key = store_key("/p", "ollama");
        let text = json!({"version": "1", "pins": {key.clone(): {"projectRoot": "/p",
            "id": "ollama", "host": "", "pinnedAt": "t", "source": "first-use"}}})
        .to_string();
        let err = PinStore::decode(&text).expect_err("an empty host");
        assert!(
            matches!(&err, FormatError::Pin { why: PinError::Empty("host"), key: shown } if shown.contains("ollama")),
            "{err:?}"
        );
        assert!(err.to_string().ends_with(": host is empty"), "{err}");
        assert_eq!(
            PinStore::decode("{\"version\": 2, \"pins\": {}}"),
            Err(FormatError::Version("2".to_owned()))
        );
    }

    #[test]
    fn a_file_that_is_not_a_whole_pin_store_is_damage_and_a_missing_one_is_first_use() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pins = PinStore::new(dir.path());
        assert_eq!(pins.load(), Ok(Vec::new()));
        let lock = dir.path().join(".gsd/.consent.lock");
        pins.set(&lock, pin("http://localhost:11434"), true)
            .expect("pin");
        let good = std::fs::read_to_string(pins.path()).expect("pins");
        let key = store_key("/p", "ollama");
        let pin_json = |host: Value| {
            json!({"version": "1", "pins": {key.clone(): {"projectRoot": "/p", "id": "ollama",
                "host": host, "pinnedAt": "t", "source": "first-use"}}})
            .to_string()
        };
        for (text, why) in [
            (String::new(), "empty"),
            (good[..good.len() / 2].to_owned(), "invalid JSON"),
            ("[]".to_owned(), "not an object"),
            ("{\"pins\": {}}".to_owned(), "version is missing"),
            ("{\"version\": \"2\", \"pins\": {}}".to_owned(), "version"),
            ("{\"version\": 1, \"pins\": {}}".to_owned(), "version"),
            ("{\"version\": \"1\"}".to_owned(), "pins is missing"),
            (
                "{\"version\": \"1\", \"pins\": []}".to_owned(),
                "not an object",
            ),
            (pin_json(json!(5)), "host"),
            (pin_json(json!("")), "host is empty"),
        ] {
            std::fs::write(pins.path(), &text).expect("write");
            let damage = pins.load().expect_err(why);
            assert!(damage.why.contains(why), "{why}: {}", damage.why);
            assert_eq!(damage.path, pins.path());
            assert!(
                pins.set(&lock, pin("http://x"), true).is_err(),
                "{why}: rewritten"
            );
            assert_eq!(std::fs::read_to_string(pins.path()).expect("kept"), text);
        }
    }

    #[test]
    fn first_use_keeps_the_existing_pin_and_approval_replaces_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pins = PinStore::new(dir.path());
        let lock = dir.path().join(".gsd/.consent.lock");
        assert_eq!(pins.get("/p", "ollama"), Ok(None));
        pins.set(&lock, pin("http://localhost:11434"), true)
            .expect("pin");
        let kept = pins
            .set(&lock, pin("https://evil.example"), true)
            .expect("pin");
        assert_eq!(kept.host, "http://localhost:11434");
        pins.set(&lock, pin("http://127.0.0.1:9"), false)
            .expect("rebind");
        assert_eq!(
            pins.get("/p", "ollama").expect("readable").map(|p| p.host),
            Some("http://127.0.0.1:9".to_owned())
        );
        assert!(
            !dir.path().join(".gsd/consent.json").exists(),
            "pins are not consent records"
        );
    }
}
