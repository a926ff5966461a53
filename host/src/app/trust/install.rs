//! `gsd-lane install <folder>` and `gsd-lane remove <id>`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::super::Context;
use super::consent_flow::{
    ask_consent, assess, print_result, report_refusal, show_disclosure, Assessment, Envelope,
    Outcome,
};
use super::view::policy_messages;
use super::{InstallArgs, RemoveArgs, ScopeArgs};
use crate::error::Failure;
use crate::manifest::diagnostic::Code;
use crate::manifest::{DeclaredHeader, HeaderField};
use crate::output;
use crate::registry::{self, read, Scope};
use crate::trust::consent::{hash, iso_now, valid_id, ConsentStore, NewRecord, Record};
use crate::trust::disclosure::Disclosure;
use crate::trust::pins::{Pin, PinSource, PinStore};
use crate::trust::render::escape_text;
use crate::trust::signature::{lane_binding_v2, signature_for_manifest};
use crate::trust::{bundle, canonical_root};

/// Id prefixes reserved for first-party capabilities (trust.md §2.3).
const RESERVED_PREFIXES: [&str; 3] = ["gsd-", "gsd-core-", "anthropic-"];

/// Ids of the first-party capabilities.
fn first_party_ids() -> Vec<String> {
    registry::Registry::first_party()
        .entries
        .iter()
        .map(|e| e.id.clone())
        .collect()
}

fn scope_of(args: &ScopeArgs) -> Scope {
    if args.project_scope {
        Scope::Project
    } else {
        Scope::Global
    }
}

/// `(capabilities dir, staging root)` of a scope.
fn scope_dirs(context: &Context, scope: Scope) -> Result<(PathBuf, PathBuf), Failure> {
    match scope {
        Scope::Project => {
            let base = context.project_root.join(".gsd");
            Ok((base.join("capabilities"), base.join(".staging")))
        }
        _ => {
            let home = context.env.gsd_home().ok_or_else(|| {
                Failure::new("no GSD home: set GSD_HOME or HOME to install in the global scope")
            })?;
            let base = home.join(".gsd");
            Ok((base.join("capabilities"), base.join(".staging")))
        }
    }
}

/// The manifests of every installed overlay except the folder `skip` and dot-folders.
fn other_overlays(context: &Context, skip: &Path) -> Vec<PathBuf> {
    let mut found = registry::installed_manifests(
        context.env.global_capabilities().as_deref(),
        &context.project_root,
    );
    found.retain(|manifest| {
        manifest.parent().is_some_and(|folder| {
            folder != skip
                && !folder
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
    });
    found
}

/// The installed manifest of another copy of the capability bound for `destination` (an
/// overlay folder of the same name in the other scope).
fn other_copy<'p>(paths: &'p [PathBuf], destination: &Path) -> Option<&'p PathBuf> {
    let name = destination.file_name()?;
    paths.iter().find(|manifest| {
        manifest
            .parent()
            .is_some_and(|folder| folder != destination && folder.file_name() == Some(name))
    })
}

/// Every reason the staged capability may not be installed.
fn gate(
    context: &Context,
    value: &Value,
    scope: Scope,
    staged: &Path,
    destination: &Path,
    header: &DeclaredHeader,
    disclosure: &Disclosure,
) -> Vec<String> {
    let mut problems = Vec::new();
    let staged_manifest = staged.join("capability.json");
    let mut paths = other_overlays(context, destination);
    paths.push(staged_manifest.clone());
    let report = registry::validate_files(&paths);
    for diagnostic in report
        .errors
        .iter()
        .filter(|d| d.file.as_deref() == Some(&staged_manifest))
    {
        let other = (diagnostic.code == Code::XIdDup)
            .then(|| other_copy(&paths, destination))
            .flatten()
            .map_or(String::new(), |path| {
                format!(
                    " (the other copy: {}; remove it first, or install into its scope to replace it)",
                    path.display()
                )
            });
        problems.push(format!(
            "capability.json {} [{}]: {}{other}",
            diagnostic.field,
            diagnostic.code,
            diagnostic.detail()
        ));
    }
    // A program may live only in a global install folder (trust.md §7.5).
    let program_root = (scope == Scope::Global).then_some(staged);
    for message in policy_messages(value, program_root) {
        problems.push(format!("capability.json {message}"));
    }
    for artifact in &disclosure.missing_artifacts {
        problems.push(format!(
            "declared file {artifact:?} is missing from the bundle (or escapes it)"
        ));
    }
    // A wrong-typed `engines` or `engines.gsd` is among the validator's errors above.
    if let Some(range) = header.engines_excluding(&context.compat_version) {
        problems.push(format!(
            "capability.json engines.gsd {range:?} is not satisfied by host version {}",
            context.compat_version
        ));
    }
    problems
}

/// `value` with the programs it ships resolved against `folder` in the global scope; as
/// written in the project scope (where the policy refuses them).
fn shipped_resolved(value: &Value, scope: Scope, folder: &Path) -> Value {
    let mut value = value.clone();
    if scope == Scope::Global {
        registry::program::resolve_shipped(&mut value, folder);
    }
    value
}

/// The capability folder `install` was given: its path, its manifest and the manifest's
/// header.
struct Source {
    folder: PathBuf,
    file: read::ManifestFile,
    header: DeclaredHeader,
}

/// Reads the folder and manifest `install` was given.
fn read_source(context: &Context, args: &InstallArgs) -> Result<Source, Failure> {
    let folder = context.env.cwd.join(&args.folder);
    let manifest_path = folder.join("capability.json");
    if !folder.is_dir() {
        return Err(Failure::new(format!(
            "{}: not a capability folder (give the folder that holds capability.json)",
            folder.display()
        )));
    }
    let file = read::read_manifest(&manifest_path)
        .map_err(|err| Failure::new(format!("{}: {err}", manifest_path.display())))?;
    let header = DeclaredHeader::of(&file.value);
    Ok(Source {
        folder,
        file,
        header,
    })
}

/// Why the capability cannot be installed under its declared id: none (a manifest that is
/// not an object, an `id` of another type or no `id` at all), bad grammar, a reserved prefix,
/// a first-party id.
fn id_problems(header: &DeclaredHeader) -> Vec<String> {
    let Some(id) = header.id.as_deref() else {
        let why = match header.problem_with(HeaderField::Id) {
            Some(problem) if problem.field == HeaderField::Manifest => format!(": {problem}"),
            Some(problem) => format!(" {problem}"),
            None => " id is missing".to_owned(),
        };
        return vec![format!(
            "capability.json{why}; give it an id matching ^[a-z][a-z0-9-]*$"
        )];
    };
    let mut problems = Vec::new();
    if !valid_id(id) {
        problems.push(format!(
            "capability.json id {:?} must match ^[a-z][a-z0-9-]*$",
            escape_text(id)
        ));
    }
    if let Some(prefix) = RESERVED_PREFIXES
        .iter()
        .find(|p| id.to_ascii_lowercase().starts_with(**p))
    {
        problems.push(format!("capability.json id: the prefix {prefix} is reserved for first-party capabilities; choose another id"));
    }
    if first_party_ids().iter().any(|known| known == id) {
        problems.push(format!("capability.json id: {id} is a first-party capability; a third-party capability needs its own id"));
    }
    problems
}

/// The `changes` member: what installing into `destination` changes against the copy
/// installed there and its consent record in `root`.
fn changes(
    context: &Context,
    scope: Scope,
    destination: &Path,
    root: &str,
    id: &str,
    value: &Value,
    assessment: &Assessment,
) -> Changes {
    let previous = read::read_manifest(&destination.join("capability.json"))
        .ok()
        .map(|f| shipped_resolved(&f.value, scope, destination));
    let store = context.env.gsd_home().map(|home| ConsentStore::new(&home));
    let old_record = store.as_ref().and_then(|s| s.read().get(root, id).cloned());
    let host_text = assessment.host_text();
    Changes {
        update: previous.is_some(),
        executable_set_changed: previous
            .as_ref()
            .map(|old| signature_for_manifest(old) != assessment.signature),
        binding_changed: previous
            .as_ref()
            .map(|old| lane_binding_v2(old) != lane_binding_v2(value)),
        host_changed: old_record
            .as_ref()
            .and_then(Record::reviewer_host)
            .map(|old| crate::config::normalize_host(old) != host_text),
    }
}

/// What an install changes against the bundle it replaces (`null`: nothing to compare).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Changes {
    /// Whether a bundle is replaced.
    update: bool,
    /// Whether the disclosure signature differs.
    executable_set_changed: Option<bool>,
    /// Whether the extended lane binding differs.
    binding_changed: Option<bool>,
    /// Whether the consented host differs.
    host_changed: Option<bool>,
}

/// What `install --json` is about; the fields after `scope` are known once the bundle is
/// staged and assessed.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Installation {
    /// The capability id.
    id: String,
    /// The scope installed into.
    scope: &'static str,
    /// The manifest's `version` when it is a string (`null` otherwise; a wrong type is among
    /// the problems validation refuses the bundle for).
    version: Option<String>,
    /// The disclosure summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    disclosure: Option<Vec<String>>,
    /// Whether the bundle has an executable surface.
    #[serde(skip_serializing_if = "Option::is_none")]
    requires_consent: Option<bool>,
    /// The consent fingerprint.
    #[serde(skip_serializing_if = "Option::is_none")]
    fingerprint: Option<String>,
    /// What it changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    changes: Option<Changes>,
    /// Whether consent was recorded (project scope).
    #[serde(skip_serializing_if = "Option::is_none")]
    consent_recorded: Option<bool>,
}

/// Records consent for a project-scope install; `Err` says why it could not be.
fn record_consent(
    store: Option<&ConsentStore>,
    root: &str,
    id: &str,
    value: &Value,
    destination: &Path,
    assessment: &Assessment,
) -> Result<(), NotRecorded> {
    let installed_hash = hash::content_hash(destination);
    match (store, installed_hash) {
        (Some(store), Ok(installed_hash)) => store
            .record(Record::new(NewRecord {
                project_root: root.to_owned(),
                id: id.to_owned(),
                integrity: assessment.content_hash.clone(),
                disclosure_signature: assessment.signature.clone(),
                content_hash: installed_hash,
                consented_at: iso_now(),
                reviewer_host: assessment.host.as_ref().map(|(_, h)| h.clone()),
                lane_binding_v2: lane_binding_v2(value),
            }))
            .map(|_| ())
            .map_err(NotRecorded::Store),
        (None, _) => Err(NotRecorded::NoHome),
        (_, Err(err)) => Err(NotRecorded::Hash(err)),
    }
}

/// Why consent for a project-scope install could not be recorded (the bundle stays inactive).
#[derive(Debug)]
enum NotRecorded {
    /// Neither `GSD_HOME` nor `HOME` names a home for the store.
    NoHome,
    /// The installed bundle cannot be hashed.
    Hash(hash::HashError),
    /// The store refused the record.
    Store(crate::trust::consent::StoreError),
}

impl std::fmt::Display for NotRecorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotRecorded::NoHome => {
                f.write_str("no GSD home (GSD_HOME or HOME) to hold the consent store")
            }
            NotRecorded::Hash(err) => write!(f, "the installed bundle cannot be hashed: {err}"),
            NotRecorded::Store(err) => write!(f, "{err}"),
        }
    }
}

/// Pins the destination of a global-scope openai-http lane; a warning when it cannot.
fn pin_host(context: &Context, root: &str, id: &str, assessment: &Assessment) -> Option<String> {
    let (Some(home), Some((_, resolved))) = (context.env.gsd_home(), &assessment.host) else {
        return None;
    };
    let pins = PinStore::new(&home);
    let pin = Pin {
        project_root: root.to_owned(),
        id: id.to_owned(),
        host: resolved.clone(),
        pinned_at: iso_now(),
        source: PinSource::Approved.as_str().to_owned(),
    };
    pins.set(&ConsentStore::new(&home).lock_path(), pin, false)
        .err()
        .map(|err| format!("the destination could not be pinned ({err})"))
}

/// Prints the result of a finished install.
fn report_installed(
    json_output: bool,
    id: &str,
    destination: &Path,
    base: &Installation,
    warnings: &[String],
) {
    let envelope = Envelope {
        base,
        outcome: Outcome::Installed {
            path: destination.display().to_string(),
            warnings,
        },
    };
    for warning in warnings {
        output::eprint_line(&format!("warning: {warning}"));
    }
    let text = format!("installed {id} into {}\n", destination.display());
    print_result(json_output, &envelope, &text);
}

/// Runs `install`.
///
/// # Errors
///
/// An unreadable folder or manifest, or a failed promotion.
pub fn install(context: &Context, args: &InstallArgs) -> Result<u8, Failure> {
    let json_output = args.consent.json;
    let scope = scope_of(&args.scope);
    let Source {
        folder,
        file,
        header,
    } = read_source(context, args)?;
    let early = id_problems(&header);
    let id = header.id.clone().unwrap_or_default();
    let mut base = Installation {
        id: id.clone(),
        scope: scope.as_str(),
        version: header.version.clone(),
        disclosure: None,
        requires_consent: None,
        fingerprint: None,
        changes: None,
        consent_recorded: None,
    };
    if !early.is_empty() {
        let envelope = Envelope {
            base: &base,
            outcome: Outcome::Refused { problems: &early },
        };
        return Ok(report_refusal(json_output, &envelope, &[], &early, ""));
    }
    let (caps_dir, staging_root) = scope_dirs(context, scope)?;
    let destination = caps_dir.join(&id);
    let staged =
        bundle::stage(&folder, &staging_root, &id).map_err(|err| Failure::new(err.to_string()))?;
    // A program the folder ships (`./bin/x`) is checked inside the staged copy and disclosed
    // and signed at the path it will run from (registry/program.rs).
    let checked = shipped_resolved(&file.value, scope, staged.dir());
    let disclosed = shipped_resolved(&file.value, scope, &destination);
    let assessment = assess(context, &disclosed, staged.dir(), |disclosure| {
        gate(
            context,
            &checked,
            scope,
            staged.dir(),
            &destination,
            &header,
            disclosure,
        )
    });
    let root = canonical_root(&context.project_root);
    base.disclosure = Some(assessment.lines.clone());
    base.requires_consent = Some(assessment.disclosure.has_executable);
    base.fingerprint = Some(assessment.fingerprint.clone());
    base.changes = Some(changes(
        context,
        scope,
        &destination,
        &root,
        &id,
        &disclosed,
        &assessment,
    ));
    if !assessment.problems.is_empty() {
        let envelope = Envelope {
            base: &base,
            outcome: Outcome::Refused {
                problems: &assessment.problems,
            },
        };
        return Ok(report_refusal(
            json_output,
            &envelope,
            &assessment.lines,
            &assessment.problems,
            "nothing was installed",
        ));
    }
    if assessment.disclosure.has_executable {
        show_disclosure(json_output, &assessment);
        let question = format!(
            "install {id} into the {} scope and let it run on every review?",
            scope.as_str()
        );
        let (lines, fp) = (&assessment.lines, &assessment.fingerprint);
        if let Some(status) = ask_consent(&args.consent, &question, lines, fp, &base) {
            return Ok(status);
        }
    }
    bundle::promote(&staged, &destination).map_err(|err| Failure::new(err.to_string()))?;
    drop(staged);
    let mut warnings = Vec::new();
    if scope == Scope::Project {
        let store = context.env.gsd_home().map(|home| ConsentStore::new(&home));
        let recorded = record_consent(
            store.as_ref(),
            &root,
            &id,
            &file.value,
            &destination,
            &assessment,
        );
        base.consent_recorded = Some(recorded.is_ok());
        if let Err(why) = recorded {
            warnings.push(format!(
                "installed but inactive: consent could not be recorded in {} ({why}); run `gsd-lane trust approve {id}`",
                store.as_ref().map_or_else(|| "the consent store".to_owned(), |s| s.path().display().to_string())
            ));
        }
    } else {
        warnings.extend(pin_host(context, &root, &id, &assessment));
    }
    report_installed(json_output, &id, &destination, &base, &warnings);
    Ok(0)
}

/// `remove --json`.
#[derive(Debug, Serialize)]
struct Removed<'a> {
    /// Always `removed`.
    status: &'static str,
    /// The capability id.
    id: &'a str,
    /// The scope it was removed from.
    scope: &'static str,
    /// The folder removed.
    path: String,
    /// Whether a consent record was revoked.
    revoked: bool,
    /// Whether nothing of it is left.
    clean: bool,
    /// What to do about what is left.
    hint: Option<String>,
}

/// The one scope `args.id` is installed in (narrowed by `--global` / `--project`).
fn installed_scope(context: &Context, args: &RemoveArgs) -> Result<Scope, Failure> {
    let candidates: Vec<Scope> = [Scope::Global, Scope::Project]
        .into_iter()
        .filter(|s| match s {
            Scope::Global => !args.scope.project_scope,
            _ => !args.scope.global,
        })
        .filter(|s| {
            scope_dirs(context, *s)
                .map(|(dir, _)| dir.join(&args.id).is_dir())
                .unwrap_or(false)
        })
        .collect();
    match candidates.as_slice() {
        [one] => Ok(*one),
        [] => Err(Failure::new(format!(
            "{} is not installed{}",
            args.id,
            if args.scope.global {
                " in the global scope"
            } else if args.scope.project_scope {
                " in the project scope"
            } else {
                ""
            }
        ))),
        _ => Err(Failure::usage(format!(
            "{} is installed in both scopes: say --global or --project-scope",
            args.id
        ))),
    }
}

/// Revokes the consent record of a removed project-scope capability:
/// `(revoked, clean, hint)`, where a record that could not be revoked is not clean.
fn revoke_consent(context: &Context, scope: Scope, id: &str) -> (bool, bool, Option<String>) {
    if scope != Scope::Project {
        return (false, true, None);
    }
    let root = canonical_root(&context.project_root);
    match context
        .env
        .gsd_home()
        .map(|home| ConsentStore::new(&home).revoke(&root, id))
    {
        Some(Ok(removed)) => (removed, true, None),
        Some(Err(err)) => (
            false,
            false,
            Some(format!(
                "the consent record was not revoked ({err}); run `gsd-lane trust revoke {id}`"
            )),
        ),
        None => (false, true, None),
    }
}

/// Runs `remove`.
///
/// # Errors
///
/// An id installed in no scope (or in both without a scope flag), or a folder that cannot be
/// moved out of the capabilities directory.
pub fn remove(context: &Context, args: &RemoveArgs) -> Result<u8, Failure> {
    if first_party_ids().contains(&args.id) {
        return Err(Failure::new(format!(
            "{} is a first-party lane shipped with gsd-lane; it cannot be removed (leave it unselected instead)",
            args.id
        )));
    }
    if !valid_id(&args.id) {
        return Err(Failure::usage(format!(
            "capability id {:?} must match ^[a-z][a-z0-9-]*$",
            escape_text(&args.id)
        )));
    }
    let scope = installed_scope(context, args)?;
    let (caps_dir, staging_root) = scope_dirs(context, scope)?;
    let folder = caps_dir.join(&args.id);
    bundle::remove(&folder, &staging_root).map_err(|err| Failure::new(err.to_string()))?;
    let (revoked, clean, hint) = revoke_consent(context, scope, &args.id);
    let envelope = Removed {
        status: "removed",
        id: &args.id,
        scope: scope.as_str(),
        path: folder.display().to_string(),
        revoked,
        clean,
        hint: hint.clone(),
    };
    if let Some(hint) = &hint {
        output::eprint_line(&format!("warning: {hint}"));
    }
    if args.json {
        output::print_serialized(&envelope);
    } else {
        output::print(&format!(
            "removed {} from {}{}\n",
            args.id,
            folder.display(),
            if revoked {
                "; its consent record was revoked"
            } else {
                ""
            }
        ));
    }
    Ok(if clean { 0 } else { 1 })
}
