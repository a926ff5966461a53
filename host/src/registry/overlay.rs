//! Overlay discovery and the candidate pipeline (manifest.md §6.1-§6.4).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::read::{self, ManifestFile};
use super::{join_errors, LoadOptions, Registry, Scope, Skip};
use crate::manifest::diagnostic::Code;
use crate::manifest::facts::CapabilityFacts;
use crate::manifest::{self, DeclaredHeader, Diagnostic, FieldPath};

/// Id prefixes reserved for first-party capabilities.
const RESERVED_PREFIXES: [&str; 3] = ["gsd-", "gsd-core-", "anthropic-"];

/// Decides whether a project-scope overlay may be activated on this machine.
pub trait ConsentGate {
    /// True when the user consented to capability `id` found in `dir` under `project_root`.
    fn is_consented(&self, project_root: &Path, id: &str, dir: &Path) -> bool;

    /// Why no consent could be read at all (the store is damaged: what is wrong and the fix),
    /// so a lane left inactive says that rather than "no consent recorded".
    fn store_damage(&self) -> Option<String> {
        None
    }
}

/// Loads global overlays, then project overlays, into `registry`.
pub(super) fn load_overlays(registry: &mut Registry, options: &LoadOptions<'_>) {
    for (scope, dir, scope_root) in scopes(options) {
        let pending = pending_ids(&scope_root);
        for (name, folder) in candidates(&dir) {
            let manifest_path = folder.join("capability.json");
            let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                admit(
                    registry,
                    options,
                    scope,
                    &name,
                    &folder,
                    &manifest_path,
                    &pending,
                )
            }));
            let (value, skip, warnings) = step.unwrap_or_else(|_| {
                let diagnostic = Diagnostic::error(
                    Code::RbInternal,
                    manifest::FieldPath::root().key("reviewer"),
                    "internal validator failure on the reviewer body",
                );
                (Value::Null, Some(invalid(vec![diagnostic])), Vec::new())
            });
            registry.push(scope, &name, manifest_path, value, skip, warnings);
        }
    }
}

/// The scopes to scan, with their directory and ledger root, global first (§6.1).
fn scopes(options: &LoadOptions<'_>) -> Vec<(Scope, PathBuf, PathBuf)> {
    let global = options
        .global_dir
        .as_ref()
        .map(|dir| (Scope::Global, dir.clone(), ledger_root(dir)));
    let project = options.project_root.as_ref().map(|root| {
        (
            Scope::Project,
            crate::project::project_capabilities(root),
            root.clone(),
        )
    });
    match (global, project) {
        (Some(global), Some(project)) if same_directory(&global.1, &project.1) => {
            let root = project.2.clone();
            let is_project = root.join(".planning").is_dir() || root.join(".git").exists();
            let canonical_failed =
                fs::canonicalize(&global.1).is_err() || fs::canonicalize(&project.1).is_err();
            if is_project || canonical_failed {
                vec![project]
            } else {
                vec![global]
            }
        }
        (global, project) => global.into_iter().chain(project).collect(),
    }
}

/// `<GSD_HOME>` for `<GSD_HOME>/.gsd/capabilities`.
fn ledger_root(dir: &Path) -> PathBuf {
    dir.parent()
        .and_then(Path::parent)
        .map_or_else(|| dir.to_path_buf(), Path::to_path_buf)
}

fn same_directory(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        // If canonicalization fails while the project directory exists, the global
        // directory is treated as project scope (consent required).
        _ => b.is_dir() && a == b,
    }
}

/// The `capability.json` path of every installed overlay folder: the global capabilities
/// directory `global` first, then `<project_root>/.gsd/capabilities`, each in ascending byte
/// order of folder name (the order the loader reads them in). Unreadable directories are
/// skipped; nothing is filtered out, dot-folders included.
pub fn installed_manifests(global: Option<&Path>, project_root: &Path) -> Vec<PathBuf> {
    let project = crate::project::project_capabilities(project_root);
    global
        .into_iter()
        .chain([project.as_path()])
        .flat_map(candidates)
        .map(|(_, folder)| folder.join("capability.json"))
        .collect()
}

/// Immediate sub-directories, in ascending byte order of their names.
fn candidates(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(listing) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(Vec<u8>, String, PathBuf)> = listing
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .map(|entry| {
            let name = entry.file_name();
            let bytes = name.as_encoded_bytes().to_vec();
            (bytes, name.to_string_lossy().into_owned(), entry.path())
        })
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|(_, name, path)| (name, path))
        .collect()
}

/// Ids whose ledger entry carries a truthy `_pending`.
fn pending_ids(scope_root: &Path) -> Vec<String> {
    let Ok(ledger) = read::read_manifest(&scope_root.join(".gsd-capabilities.json")) else {
        return Vec::new();
    };
    let Some(entries) = ledger.value.get("entries").and_then(Value::as_object) else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|(_, entry)| entry.get("_pending").is_some_and(truthy))
        .map(|(id, _)| id.clone())
        .collect()
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

type Admission = (Value, Option<Skip>, Vec<Diagnostic>);

fn skip(code: Code, reason: impl Into<String>) -> Option<Skip> {
    Some(Skip {
        code,
        reason: reason.into(),
        diagnostics: Vec::new(),
    })
}

fn invalid(errors: Vec<Diagnostic>) -> Skip {
    Skip {
        code: Code::LdInvalid,
        reason: format!(
            "rejected by validation: {}",
            join_errors(&errors, usize::MAX)
        ),
        diagnostics: errors,
    }
}

/// True when `path` itself is a symbolic link (whatever it points to).
fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Runs the §6.2 pipeline for one candidate.
fn admit(
    registry: &Registry,
    options: &LoadOptions<'_>,
    scope: Scope,
    name: &str,
    folder: &Path,
    manifest_path: &Path,
    pending: &[String],
) -> Admission {
    if let Some(skip) = folder_gate(scope, name, folder, pending) {
        return (Value::Null, Some(skip), Vec::new());
    }
    let mut file: ManifestFile = match read::read_manifest(manifest_path) {
        Ok(file) => file,
        Err(err) => return (Value::Null, skip(err.code(), err.to_string()), Vec::new()),
    };
    if let Some(prefix) = RESERVED_PREFIXES.iter().find(|p| name.starts_with(**p)) {
        let reason = format!("ids starting with {prefix} (gsd-, gsd-core- or anthropic-) are reserved for first-party capabilities");
        return (file.value, skip(Code::LdReserved, reason), Vec::new());
    }
    let mut diagnostics = manifest::validate_value(&file.value, Some(name));
    read::locate(&mut diagnostics, &file);
    let (errors, warnings): (Vec<_>, Vec<_>) =
        diagnostics.into_iter().partition(Diagnostic::is_error);
    if !errors.is_empty() {
        return (file.value, Some(invalid(errors)), Vec::new());
    }
    // Programs shipped in the capability folder (`./bin/x`): resolved against a global
    // install, never run from a project folder, which is the repository under review.
    let shipped = super::program::shipped_programs(&file.value);
    if !shipped.is_empty() {
        if scope == Scope::Project {
            let reason = super::program::project_refusal(&shipped);
            return (
                file.value,
                skip(Code::LdProgramInRepository, reason),
                Vec::new(),
            );
        }
        super::program::resolve_shipped(&mut file.value, folder);
    }
    let mut findings = registry
        .merged
        .check_candidate(&CapabilityFacts::of(&file.value));
    read::locate(&mut findings, &file);
    // Steps 5 and 6: id collision, config key already owned.
    let gate = cross_skip(&[Code::XIdDup], &findings)
        .or_else(|| cross_skip(&[Code::XConfigOwned], &findings))
        // Step 7: engines.gsd.
        .or_else(|| engines_gate(&file.value, &options.host_version))
        // Step 8: consent gate for project scope.
        .or_else(|| consent_gate(options, scope, name, folder))
        // Step 9: every other cross-capability rule.
        .or_else(|| {
            let all: Vec<Code> = findings.iter().map(|d| d.code).collect();
            cross_skip(&all, &findings)
        });
    if let Some(skip) = gate {
        return (file.value, Some(skip), Vec::new());
    }
    (file.value, None, warnings)
}

/// Steps 1 and 2: a pending install of the id, a project folder that is a symbolic link.
fn folder_gate(scope: Scope, name: &str, folder: &Path, pending: &[String]) -> Option<Skip> {
    if pending.iter().any(|id| id == name) {
        return skip(
            Code::LdPending,
            "an install or upgrade of this id is still pending; not loaded",
        );
    }
    if scope == Scope::Project && is_symlink(folder) {
        return skip(
            Code::LdSymlink,
            "the capability folder is a symbolic link: refused and never approvable (trust.md §5.7); install the capability as a real folder",
        );
    }
    None
}

/// The cross-capability skip for the findings whose code is in `codes`, if any.
fn cross_skip(codes: &[Code], findings: &[Diagnostic]) -> Option<Skip> {
    let hits: Vec<Diagnostic> = findings
        .iter()
        .filter(|d| codes.contains(&d.code))
        .cloned()
        .collect();
    (!hits.is_empty()).then(|| Skip {
        code: Code::LdCross,
        reason: format!(
            "rejected by cross-capability checks: {}",
            join_errors(&hits, 3)
        ),
        diagnostics: hits,
    })
}

/// Step 7: `engines.gsd` must admit the host version.
fn engines_gate(manifest: &Value, host_version: &str) -> Option<Skip> {
    let header = DeclaredHeader::of(manifest);
    let range = header.engines_excluding(host_version)?;
    skip(
        Code::LdEngines,
        format!("engines.gsd {}", engines_unsatisfied(range, host_version)),
    )
}

/// Why `engines.gsd` `range` excludes `host_version`, after the field name: the words `list`
/// shows for an incompatible overlay (`engines.gsd "…" is not …`) and `validate` warns with
/// (`engines.gsd: "…" is not …`).
pub(crate) fn engines_unsatisfied(range: &str, host_version: &str) -> String {
    format!("\"{range}\" is not satisfied by host version {host_version}")
}

/// The `LD-ENGINES` warning `validate` gives a manifest whose `engines.gsd` excludes
/// `host_version` (it would load as `incompatible`); `None` when it admits it or is unusable
/// (the validator reports an unusable range itself).
pub(crate) fn engines_warning(manifest: &Value, host_version: &str) -> Option<Diagnostic> {
    let header = DeclaredHeader::of(manifest);
    let range = header.engines_excluding(host_version)?;
    let mut warning = Diagnostic::warning(
        Code::LdEngines,
        FieldPath::root().key("engines").key("gsd"),
        format!(
            "{}; this gsd-lane speaks the GSD lane vocabulary {host_version} (`gsd-lane --version`), \
             so the lane would load as incompatible",
            engines_unsatisfied(range, host_version)
        ),
    );
    if let Some(id) = &header.id {
        id.clone_into(&mut warning.capability);
    }
    Some(warning)
}

/// Step 8: a project-scope overlay needs the user's consent.
fn consent_gate(
    options: &LoadOptions<'_>,
    scope: Scope,
    name: &str,
    folder: &Path,
) -> Option<Skip> {
    if scope != Scope::Project {
        return None;
    }
    let root = options.project_root.as_deref().unwrap_or(folder);
    if options.consent.is_consented(root, name, folder) {
        return None;
    }
    if let Some(damage) = options.consent.store_damage() {
        return skip(
            Code::LdUnconsented,
            format!("found but not activated: the consent store cannot be read: {damage}"),
        );
    }
    skip(
        Code::LdUnconsented,
        "found but not activated: no consent recorded for this project",
    )
}
