//! The trust layer (trust.md): disclosure, signature, consent store, egress re-verification.
//!
//! - [`disclosure`]: what a manifest runs or where it sends data (§3), total over any JSON.
//! - [`signature`] and [`stable`]: the byte-exact disclosure signature (§4) and the extended
//!   lane binding (§4.8).
//! - [`render`]: the human rendering, inert and unambiguous (§3.9).
//! - [`consent`]: the shared store format, its lock, atomic writes, bounded reads and the bundle
//!   content hash (§5).
//! - [`pins`]: first-use destination pins for lanes without a consented host (§6.9).
//! - [`egress`]: the per-run host check (§6).
//! - [`policy`]: third-party lane rules (§6.7, §7.5, §7.12).
//! - [`winshim`]: the Windows batch-shim rules (§7.4).
//!
//! The two entry points wired into the commands are [`consent_gate`] (overlay activation) and
//! [`egress_check`] (every lane run).

pub(crate) mod bundle;
pub(crate) mod consent;
pub(crate) mod disclosure;
pub(crate) mod egress;
mod locality;
pub(crate) mod pins;
pub(crate) mod policy;
pub(crate) mod render;
pub(crate) mod signature;
mod stable;
pub(crate) mod winshim;

use crate::manifest::lane::HttpInvoke;
use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::config::ProjectConfig;
use crate::project::HostEnv;
use crate::registry::ConsentGate;
use crate::run::lane::EgressCheck;
use consent::{ConsentStore, Records};

/// The canonical project root used in consent keys (trust.md §1): symlinks resolved, else the
/// plain absolute path.
pub fn canonical_root(project_root: &Path) -> String {
    std::fs::canonicalize(project_root)
        .unwrap_or_else(|_| {
            std::path::absolute(project_root).unwrap_or_else(|_| project_root.to_path_buf())
        })
        .display()
        .to_string()
}

/// The destination an `openai-http` lane of `manifest` resolves to now, with the same function
/// plans use ([`crate::plan::resolve_host`]): `Some((hostConfigKey, host))` for a lane whose
/// transport is exactly `openai-http` and whose `invoke` is an object; the host may be empty.
pub fn lane_host(manifest: &Value, config: &ProjectConfig) -> Option<(String, String)> {
    let body = manifest.get("reviewer")?.as_object()?;
    if body.get("transport").and_then(Value::as_str) != Some("openai-http") {
        return None;
    }
    let invoke: &Map<String, Value> = body.get("invoke")?.as_object()?;
    Some(crate::plan::resolve_host(
        &HttpInvoke::from_object(invoke),
        &with_own_defaults(manifest, config),
    ))
}

/// `config` with the declared defaults of `manifest`'s own config keys, for a manifest that
/// need not be in the registry (install, `disclose --manifest`, `rebind-host`): its lane
/// resolves its keys as it will once active (ADR-2782 D9).
fn with_own_defaults(manifest: &Value, config: &ProjectConfig) -> ProjectConfig {
    let defaults: Vec<(String, Value)> = manifest
        .get("config")
        .and_then(Value::as_object)
        .map(|slices| {
            slices
                .iter()
                .filter_map(|(key, slice)| Some((key.clone(), slice.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default();
    let id = manifest.get("id").and_then(Value::as_str).unwrap_or("");
    config
        .clone()
        .with_lane_defaults([(id, defaults.as_slice())])
}

/// The display resolver of a disclosure: the same function as [`lane_host`], for the lane's key.
pub fn host_resolver<'a>(
    manifest: &'a Value,
    config: &'a ProjectConfig,
) -> impl Fn(&str) -> Option<String> + 'a {
    move |key: &str| {
        let invoke = manifest.get("reviewer")?.get("invoke")?.as_object()?;
        let (declared, host) = crate::plan::resolve_host(
            &HttpInvoke::from_object(invoke),
            &with_own_defaults(manifest, config),
        );
        (declared == key && !host.is_empty()).then_some(host)
    }
}

/// The consent fingerprint shown with a prompt (trust.md §5.9 step 6): the first 12 hex digits
/// of SHA-256 over the signature, the resolved host and the bundle content hash.
pub fn fingerprint(signature: &str, host: &str, content_hash: &str) -> String {
    let digest = Sha256::digest(format!("{signature}\n{host}\n{content_hash}"));
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// Activates project-scope overlays that carry a matching consent record.
///
/// A damaged store activates nothing, and says so once (with the fix) the first time a project
/// overlay asks.
pub struct StoreConsentGate {
    store: Option<ConsentStore>,
    records: OnceCell<Records>,
}

impl ConsentGate for StoreConsentGate {
    fn is_consented(&self, project_root: &Path, id: &str, dir: &Path) -> bool {
        let Some(store) = &self.store else {
            return false;
        };
        if !consent::valid_id(id) {
            return false;
        }
        let root = canonical_root(project_root);
        let records = self.records.get_or_init(|| {
            store.load().unwrap_or_else(|damage| {
                // Every registry load asks (lane flags, then the command): said once.
                crate::output::eprint_once(&format!(
                    "warning: {damage}: project-scope lanes stay inactive until it is repaired; fix: {}",
                    damage.fix()
                ));
                Records::default()
            })
        });
        let Some(record) = records.get(&root, id) else {
            return false;
        };
        match consent::hash::content_hash(dir) {
            Ok(hash) => !hash.is_empty() && record.content_hash() == hash,
            Err(_) => false,
        }
    }
}

/// The consent gate for overlay loading in `project_root`.
pub fn consent_gate(env: &HostEnv, project_root: &Path) -> Box<dyn ConsentGate> {
    let _ = project_root;
    Box::new(StoreConsentGate {
        store: env.gsd_home().map(|home| ConsentStore::new(&home)),
        records: OnceCell::new(),
    })
}

/// The egress check of a read-only command (`doctor`) in `project_root`: it never pins.
pub fn egress_check_read_only(env: &HostEnv, project_root: &Path) -> Box<dyn EgressCheck> {
    let home: Option<PathBuf> = env.gsd_home();
    Box::new(egress::StoreEgressCheck::read_only(
        home.as_deref(),
        canonical_root(project_root),
    ))
}

/// The egress check for lane runs in `project_root`.
pub fn egress_check(env: &HostEnv, project_root: &Path) -> Box<dyn EgressCheck> {
    let home: Option<PathBuf> = env.gsd_home();
    Box::new(egress::StoreEgressCheck::new(
        home.as_deref(),
        canonical_root(project_root),
    ))
}
