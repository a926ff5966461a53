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
pub(crate) mod error;
mod locality;
pub(crate) mod pins;
pub(crate) mod policy;
pub(crate) mod render;
pub(crate) mod signature;
mod stable;
pub(crate) mod winshim;

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use gsd_lane_sdk::Transport;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::manifest::lane::HttpInvoke;
use crate::manifest::DeclaredLane;
use crate::registry::Lane;

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

/// How the trust layer reads one capability's lane: typed for an accepted lane, through the one
/// lenient view for a manifest that may not validate (install, approval, `disclose --manifest`,
/// an inactive overlay). Host resolution and the third-party rules ask it; neither reads JSON.
#[derive(Debug, Clone)]
pub enum LaneReading {
    /// An accepted lane of the registry.
    Active(Lane),
    /// The declared view of a manifest (`None`: it declares no `reviewer` object).
    Declared(Option<Box<DeclaredLane>>),
}

impl LaneReading {
    /// The declared view of `manifest`.
    pub fn of_manifest(manifest: &Value) -> LaneReading {
        LaneReading::Declared(DeclaredLane::of_manifest(manifest).map(Box::new))
    }

    /// The lane's slug (`""` when none is declared).
    pub fn slug(&self) -> &str {
        match self {
            LaneReading::Active(lane) => &lane.slug,
            LaneReading::Declared(lane) => lane.as_ref().map_or("", |lane| lane.slug.as_str()),
        }
    }

    /// The destination the lane resolves to now, with the same function plans use
    /// ([`crate::plan::resolve_host`]): `Some((hostConfigKey, host))` for a lane whose transport
    /// is exactly `openai-http` and whose `invoke` is an object; the host may be empty.
    pub fn host(&self, config: &ProjectConfig) -> Option<(String, String)> {
        let (id, http, defaults) = match self {
            LaneReading::Active(lane) => (
                lane.capability_id.as_str(),
                lane.http()?,
                lane.config_defaults.as_slice(),
            ),
            LaneReading::Declared(lane) => {
                let lane = lane.as_ref()?;
                if lane.transport() != Some(Transport::OpenAiHttp) {
                    return None;
                }
                (
                    lane.id.as_str(),
                    lane.invoke.http.as_ref()?,
                    lane.config_defaults.as_slice(),
                )
            }
        };
        Some(resolve_with_defaults(http, id, defaults, config))
    }

    /// The third-party rules the lane breaks; `install_root` is the capability folder.
    pub fn violations(&self, install_root: Option<&Path>) -> Vec<policy::Violation> {
        match self {
            LaneReading::Active(lane) => policy::lane_violations(lane, install_root),
            LaneReading::Declared(lane) => policy::violations(lane.as_deref(), install_root),
        }
    }
}

/// [`crate::plan::resolve_host`] with the declared defaults of the lane's own config keys, for
/// a manifest that need not be in the registry (install, `disclose --manifest`, `rebind-host`):
/// its lane resolves its keys as it will once active (ADR-2782 D9).
fn resolve_with_defaults(
    http: &HttpInvoke,
    id: &str,
    defaults: &[(String, Value)],
    config: &ProjectConfig,
) -> (String, String) {
    let config = config.clone().with_lane_defaults([(id, defaults)]);
    crate::plan::resolve_host(http, &config)
}

/// The display resolver of a disclosure: the host the declared `invoke` of `lane` resolves to,
/// for its own key only (any transport: disclosure decides which lanes are HTTP-shaped).
pub fn host_resolver(
    lane: Option<&DeclaredLane>,
    config: &ProjectConfig,
) -> impl Fn(&str) -> Option<String> {
    let resolved = lane.and_then(|lane| {
        let http = lane.invoke.http.as_ref()?;
        Some(resolve_with_defaults(
            http,
            &lane.id,
            &lane.config_defaults,
            config,
        ))
    });
    move |key: &str| {
        resolved
            .as_ref()
            .filter(|(declared, host)| declared == key && !host.is_empty())
            .map(|(_, host)| host.clone())
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
    /// The records, and the damage that left them empty when the store could not be read.
    records: OnceCell<(Records, Option<String>)>,
}

impl StoreConsentGate {
    /// The store's records, read once; a damaged store is said once and reads as no records.
    fn records(&self, store: &ConsentStore) -> &(Records, Option<String>) {
        self.records.get_or_init(|| match store.load() {
            Ok(records) => (records, None),
            Err(damage) => {
                // Every registry load asks (lane flags, then the command): said once.
                crate::output::eprint_once(&format!(
                    "warning: {damage}: project-scope lanes stay inactive until it is repaired; fix: {}",
                    damage.fix()
                ));
                (Records::default(), Some(format!("{damage}; fix: {}", damage.fix())))
            }
        })
    }
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
        let (records, _) = self.records(store);
        let Some(record) = records.get(&root, id) else {
            return false;
        };
        match consent::hash::content_hash(dir) {
            Ok(hash) => !hash.is_empty() && record.content_hash() == hash,
            Err(_) => false,
        }
    }

    fn store_damage(&self) -> Option<String> {
        let store = self.store.as_ref()?;
        self.records(store).1.clone()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    /// The typed reading of an accepted lane and the declared view of its manifest agree on
    /// everything the trust layer decides with: the destination and the third-party rules.
    #[test]
    fn typed_and_declared_readings_agree_on_accepted_lanes() {
        let registry = Registry::first_party();
        assert!(!registry.lanes.is_empty());
        let config = ProjectConfig::empty();
        let mut http_lanes = 0;
        for lane in &registry.lanes {
            let typed = LaneReading::Active(lane.clone());
            let declared = LaneReading::of_manifest(lane.manifest());
            assert_eq!(typed.slug(), declared.slug(), "{}", lane.slug);
            assert_eq!(typed.host(&config), declared.host(&config), "{}", lane.slug);
            assert_eq!(
                typed.violations(None),
                declared.violations(None),
                "{}",
                lane.slug
            );
            http_lanes += usize::from(typed.host(&config).is_some());
        }
        assert!(http_lanes > 0, "the first-party set has an HTTP lane");
    }
}
