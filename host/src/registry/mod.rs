//! The lane registry: first-party lanes, then accepted overlays, in descriptor order.
//!
//! Loading never fails: a bad overlay is skipped with a recorded reason, and a failure of
//! overlay loading as a whole falls back to the first-party set (manifest.md §3.5, §6).

mod first_party;
pub(crate) mod handlers;
pub(crate) mod inactive;
mod overlay;
pub(crate) mod program;
pub(crate) mod read;
pub(crate) mod retired;
mod validate_set;

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use crate::manifest::cross::MergedIndex;
use crate::manifest::diagnostic::Code;
use crate::manifest::facts::CapabilityFacts;
use crate::manifest::{self, Diagnostic, LaneSpec};

pub use overlay::{installed_manifests, ConsentGate};
pub use validate_set::{validate_files, validate_files_for_host, ValidationReport};

/// Where a capability came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Compiled into gsd-lane.
    FirstParty,
    /// `<GSD_HOME>/.gsd/capabilities`.
    Global,
    /// `<project root>/.gsd/capabilities`.
    Project,
}

impl Scope {
    /// The scope as written in listings and diagnostics prefixes.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::FirstParty => "first-party",
            Scope::Global => "global",
            Scope::Project => "project",
        }
    }
}

/// Why a discovered capability was not activated (manifest.md §8.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// Load-time code (`LD-ENGINES`, `LD-UNCONSENTED`, …).
    pub code: Code,
    /// Human-readable reason.
    pub reason: String,
    /// The diagnostics behind the skip (validation or cross-capability errors).
    pub diagnostics: Vec<Diagnostic>,
}

impl Skip {
    /// The listing status: `inactive` (awaiting consent), `incompatible` (engines gate) or
    /// `skipped`.
    pub fn status(&self) -> &'static str {
        match self.code {
            Code::LdUnconsented => "inactive",
            Code::LdEngines => "incompatible",
            _ => "skipped",
        }
    }

    /// `unconsented` for the consent case, else `None`.
    pub fn kind(&self) -> Option<&'static str> {
        (self.code == Code::LdUnconsented).then_some("unconsented")
    }
}

/// One accepted lane: its typed descriptor and where it came from.
///
/// It dereferences to its [`LaneSpec`] (`lane.slug`, `lane.invoke`, …); the manifest JSON is kept
/// only for the trust layer (signature, manifest hash, disclosure), behind [`Lane::manifest`].
#[derive(Debug, Clone)]
pub struct Lane {
    /// Declaring capability id (consent is looked up by it).
    pub capability_id: String,
    /// Where it came from.
    pub scope: Scope,
    /// Its manifest file (a `capabilities/<id>/capability.json` label for first-party).
    pub path: PathBuf,
    /// The typed lane, converted once from the validated manifest (shared, as the manifest is).
    spec: std::sync::Arc<LaneSpec>,
    /// Warnings recorded on the accepted capability.
    pub warnings: Vec<Diagnostic>,
    /// The whole manifest as accepted; read only through [`Lane::manifest`] (shared, so that a
    /// registry built on the first-party set does not copy its manifests).
    manifest: std::sync::Arc<Value>,
}

impl Lane {
    /// The accepted manifest, for what must hash or sign the declaration itself (the trust
    /// layer's signature, the manifest hash of a run record, disclosure). Nothing else reads it.
    pub fn manifest(&self) -> &Value {
        &self.manifest
    }
}

impl std::ops::Deref for Lane {
    type Target = LaneSpec;

    fn deref(&self) -> &LaneSpec {
        &self.spec
    }
}

/// One discovered capability that declares (or tried to declare) a lane.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Scope.
    pub scope: Scope,
    /// Capability id (the folder name for overlays).
    pub id: String,
    /// Manifest file.
    pub path: PathBuf,
    /// The slug declared, best effort (also for skipped manifests).
    pub slug: Option<String>,
    /// The flags declared, best effort.
    pub flags: Vec<String>,
    /// `None` when active; why not otherwise.
    pub skip: Option<Skip>,
    /// Index into [`Registry::lanes`] when active.
    pub lane: Option<usize>,
    /// Warnings of an accepted capability.
    pub warnings: Vec<Diagnostic>,
}

/// What to load.
pub struct LoadOptions<'a> {
    /// The host's GSD compatibility version (manifest.md §1.4).
    pub host_version: String,
    /// The global overlay directory, if any.
    pub global_dir: Option<PathBuf>,
    /// The project root, if any.
    pub project_root: Option<PathBuf>,
    /// Decides whether a project-scope overlay is activated.
    pub consent: &'a dyn ConsentGate,
}

/// The merged set: every discovered lane entry and the accepted lanes in descriptor order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    /// Every capability that declares a lane (first-party and overlays), active or not.
    pub entries: Vec<Entry>,
    /// Accepted lanes: first-party in §7 order, then overlays in acceptance order.
    pub lanes: Vec<Lane>,
    /// Every accepted capability (lanes, the non-lane first-party index, non-lane overlays),
    /// indexed for cross-capability checks of the next candidate.
    merged: MergedIndex,
}

impl Registry {
    /// `config` with the declared defaults of the keys this registry's active lanes own (a key
    /// no config sets resolves to its lane's default: ADR-2782 D9).
    #[must_use]
    pub fn with_lane_defaults(
        &self,
        config: crate::config::ProjectConfig,
    ) -> crate::config::ProjectConfig {
        config.with_lane_defaults(
            self.lanes
                .iter()
                .map(|lane| (lane.capability_id.as_str(), lane.config_defaults.as_slice())),
        )
    }

    /// Loads first-party lanes and overlays.
    ///
    /// Total (manifest.md §3.5): an overlay that cannot be read or validated is a skipped
    /// entry, and each candidate is admitted inside the loader's per-candidate panic backstop,
    /// so the first-party lanes always load.
    pub fn load(options: &LoadOptions<'_>) -> Registry {
        let mut registry = Registry::first_party();
        overlay::load_overlays(&mut registry, options);
        registry
    }

    /// The first-party lanes only.
    pub fn first_party() -> Registry {
        static FIRST_PARTY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
        FIRST_PARTY.get_or_init(Registry::read_first_party).clone()
    }

    /// True when `id` names a first-party capability (without loading anything).
    pub fn is_first_party(id: &str) -> bool {
        first_party::LANES.iter().any(|(lane, _)| *lane == id)
    }

    /// Parses the compiled-in manifests (once per process, [`Registry::first_party`]).
    ///
    /// They are not validated here: they are fixed when gsd-lane is built, and the test
    /// `first_party_manifests_validate_without_a_diagnostic` proves that each one validates
    /// without an error or a warning, so validating them again at every start would only cost
    /// time (about 1 M instructions, a fifth of a `run`).
    fn read_first_party() -> Registry {
        let mut registry = Registry::default();
        for (id, text) in first_party::LANES {
            let path = PathBuf::from(first_party::display_path(id));
            let value = read::parse_json(text).unwrap_or(Value::Null);
            registry.push(Scope::FirstParty, id, path, value, None, Vec::new());
        }
        for facts in manifest::facts::non_lane_first_party() {
            registry.merged.add(facts);
        }
        registry
    }

    /// Records a discovered capability; activates it when `skip` is `None` and it has a body.
    fn push(
        &mut self,
        scope: Scope,
        id: &str,
        path: PathBuf,
        manifest: Value,
        skip: Option<Skip>,
        warnings: Vec<Diagnostic>,
    ) {
        let body = manifest.get("reviewer");
        let slug = body
            .and_then(|b| b.get("slug"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let flags = crate::manifest::facts::string_items(body.and_then(|b| b.get("flags")));
        let declares_lane = body
            .and_then(|b| b.get("reviewsSection"))
            .is_some_and(Value::is_string);
        let (skip, spec) = match skip {
            Some(skip) => (Some(skip), None),
            None => {
                self.merged.add(CapabilityFacts::of(&manifest));
                match (declares_lane, slug.is_some()) {
                    (true, true) => match LaneSpec::from_manifest(&manifest) {
                        Ok(spec) => (None, Some(spec)),
                        Err(refusal) => (Some(unplannable(&refusal)), None),
                    },
                    _ => (None, None),
                }
            }
        };
        let lane = spec.map(|spec| {
            self.lanes.push(Lane {
                capability_id: id.to_owned(),
                scope,
                path: path.clone(),
                spec: std::sync::Arc::new(spec),
                warnings: warnings.clone(),
                manifest: std::sync::Arc::new(manifest),
            });
            self.lanes.len() - 1
        });
        self.entries.push(Entry {
            scope,
            id: id.to_owned(),
            path,
            slug,
            flags,
            skip,
            lane,
            warnings,
        });
    }

    /// Finds an accepted lane by slug.
    pub fn lane(&self, slug: &str) -> Option<&Lane> {
        self.lanes.iter().find(|lane| lane.slug == slug)
    }

    /// Finds an accepted lane by one of its flags.
    pub fn lane_by_flag(&self, flag: &str) -> Option<&Lane> {
        self.lanes
            .iter()
            .find(|lane| lane.flags.iter().any(|f| f == flag))
    }
}

/// The skip of an accepted manifest whose lane cannot be typed (never happens to a manifest the
/// validator accepted; kept total rather than trusted).
fn unplannable(refusal: &crate::refusal::Refusal) -> Skip {
    Skip {
        code: Code::LdInvalid,
        reason: refusal.to_string(),
        diagnostics: Vec::new(),
    }
}

/// Joins the first `max` error messages with `; `.
pub(crate) fn join_errors(errors: &[Diagnostic], max: usize) -> String {
    errors
        .iter()
        .take(max)
        .map(Diagnostic::detail)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    /// What lets [`Registry::read_first_party`] skip validation: every compiled-in manifest
    /// validates without a diagnostic, and becomes an active lane.
    #[test]
    fn first_party_manifests_validate_without_a_diagnostic() {
        for (id, text) in first_party::LANES {
            let value = read::parse_json(text).expect("first-party manifests parse");
            let diagnostics = manifest::validate_value(&value, Some(id));
            assert!(diagnostics.is_empty(), "{id}: {diagnostics:?}");
        }
        let registry = Registry::first_party();
        assert_eq!(registry.lanes.len(), first_party::LANES.len());
        assert!(registry.entries.iter().all(|entry| entry.skip.is_none()));
    }
}
