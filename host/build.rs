//! Compiles the first-party roster from `capabilities/` (the roster is data).
//!
//! `capabilities/descriptor-order.txt` lists the first-party capability ids in descriptor order
//! (manifest.md §6.6); every listed id must have `capabilities/<id>/capability.json`, and every
//! folder there holding one must be listed. The script writes `$OUT_DIR/first_party_lanes.rs`, the
//! `LANES` table that `host/src/registry/first_party.rs` includes: adding or removing a
//! first-party lane is its manifest folder and its line in the order file, never host code.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why the roster could not be compiled (the build stops with this message).
enum RosterError {
    /// A file or directory could not be read or written.
    Io(PathBuf, std::io::Error),
    /// A line of the order file is not a well-formed capability id.
    BadId(usize, String),
    /// An id is listed twice.
    Duplicate(String),
    /// A listed id has no manifest.
    Missing(String, PathBuf),
    /// A manifest folder is not listed.
    Unlisted(String),
    /// The order file lists nothing.
    Empty,
    /// A required environment variable is missing.
    Env(&'static str),
}

impl fmt::Debug for RosterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ORDER: &str = "capabilities/descriptor-order.txt";
        match self {
            Self::Io(path, err) => write!(f, "{}: {err}", path.display()),
            Self::BadId(line, id) => write!(
                f,
                "{ORDER}:{line}: {id:?} is not a capability id (lowercase letters, digits, '-')"
            ),
            Self::Duplicate(id) => write!(f, "{ORDER}: {id:?} is listed twice"),
            Self::Missing(id, path) => write!(
                f,
                "{ORDER}: {id:?} is listed but {} does not exist; add the manifest or remove the line",
                path.display()
            ),
            Self::Unlisted(id) => write!(
                f,
                "capabilities/{id}/capability.json is not listed in {ORDER}; add {id:?} at its place \
                 in descriptor order"
            ),
            Self::Empty => write!(f, "{ORDER} lists no lane"),
            Self::Env(name) => write!(f, "the build environment has no {name}"),
        }
    }
}

/// The ids of the order file, in order, checked for shape and duplicates.
fn listed_ids(order: &str) -> Result<Vec<String>, RosterError> {
    let mut seen = BTreeSet::new();
    let mut ids = Vec::new();
    for (index, raw) in order.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let well_formed = line
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !line.starts_with('-');
        if !well_formed {
            return Err(RosterError::BadId(index + 1, line.to_owned()));
        }
        if !seen.insert(line.to_owned()) {
            return Err(RosterError::Duplicate(line.to_owned()));
        }
        ids.push(line.to_owned());
    }
    if ids.is_empty() {
        return Err(RosterError::Empty);
    }
    Ok(ids)
}

/// The folders of `dir` that hold a `capability.json`.
fn manifest_folders(dir: &Path) -> Result<BTreeSet<String>, RosterError> {
    let listing = std::fs::read_dir(dir).map_err(|e| RosterError::Io(dir.to_path_buf(), e))?;
    let mut found = BTreeSet::new();
    for entry in listing {
        let entry = entry.map_err(|e| RosterError::Io(dir.to_path_buf(), e))?;
        if entry.path().join("capability.json").is_file() {
            found.insert(entry.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(found)
}

fn main() -> Result<(), RosterError> {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .ok_or(RosterError::Env("CARGO_MANIFEST_DIR"))?;
    let out_dir = std::env::var_os("OUT_DIR")
        .map(PathBuf::from)
        .ok_or(RosterError::Env("OUT_DIR"))?;
    // `host/capabilities` is a symbolic link to the workspace's `capabilities/`: the path stays
    // inside the crate, so `cargo package` (which follows the link) ships the manifests and the
    // published crate builds on its own.
    let capabilities = manifest_dir.join("capabilities");
    println!("cargo:rerun-if-changed={}", capabilities.display());
    let order_path = capabilities.join("descriptor-order.txt");
    let order =
        std::fs::read_to_string(&order_path).map_err(|e| RosterError::Io(order_path.clone(), e))?;
    let ids = listed_ids(&order)?;
    let folders = manifest_folders(&capabilities)?;
    for id in &ids {
        let path = capabilities.join(id).join("capability.json");
        if !folders.contains(id) {
            return Err(RosterError::Missing(id.clone(), path));
        }
        println!("cargo:rerun-if-changed={}", path.display());
    }
    if let Some(unlisted) = folders.iter().find(|f| !ids.contains(f)) {
        return Err(RosterError::Unlisted(unlisted.clone()));
    }
    let mut table = format!(
        "/// `(id, manifest text)` in descriptor order (manifest.md §6.6), from \
         `capabilities/descriptor-order.txt`.\npub const LANES: [(&str, &str); {}] = [\n",
        ids.len()
    );
    for id in &ids {
        let path = capabilities.join(id).join("capability.json");
        let path = path.to_string_lossy();
        table.push_str(&format!("    ({id:?}, include_str!({path:?})),\n"));
    }
    table.push_str("];\n");
    let target = out_dir.join("first_party_lanes.rs");
    std::fs::write(&target, table).map_err(|e| RosterError::Io(target, e))
}
