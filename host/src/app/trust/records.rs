//! `gsd-lane trust list|approve|revoke|rebind-host`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::super::Context;
use super::consent_flow::{
    ask_consent, assess, print_lines, print_result, report_refusal, show_disclosure, Assessment,
    Envelope, Outcome,
};
use super::view::policy_messages;
use super::{IdArgs, IdConsentArgs, ListArgs};
use crate::config::normalize_host;
use crate::error::Failure;
use crate::output;
use crate::registry::{self, read};
use crate::trust::consent::{iso_now, valid_id, ConsentStore, NewRecord, Record};
use crate::trust::disclosure::Disclosure;
use crate::trust::egress::class_of;
use crate::trust::pins::{Pin, PinSource, PinStore};
use crate::trust::render::escape_text;
use crate::trust::signature::{lane_binding_v2, signature_for_manifest};
use crate::trust::{canonical_root, fingerprint, LaneReading};

fn home_store(context: &Context) -> Result<(PathBuf, ConsentStore), Failure> {
    let home = context.env.gsd_home().ok_or_else(|| {
        Failure::new("no GSD home: set GSD_HOME or HOME (the consent store lives there)")
    })?;
    let store = ConsentStore::new(&home);
    Ok((home, store))
}

/// The consent records `trust list` shows (this project's, or every one with `--all`).
fn listed_records(store: &ConsentStore, root: &str, all: bool) -> Vec<Record> {
    store
        .read()
        .all()
        .iter()
        .filter(|r| all || r.project_root() == root)
        .cloned()
        .collect()
}

/// A record as `trust list --json` shows it: every field as stored (a peer's unknown fields
/// included), with the host class and whether it is this project's.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordRow {
    /// The record's fields as stored, without the two computed here.
    #[serde(flatten)]
    stored: serde_json::Map<String, Value>,
    /// `local` or `remote` for the pinned reviewer host, `null` without one.
    reviewer_host_class: Option<&'static str>,
    /// Whether the record is this project's.
    this_project: bool,
}

/// The row of `record` (a stored field of the same name as a computed one is replaced).
fn record_row(record: &Record, root: &str) -> RecordRow {
    let mut stored = match record.to_json() {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    stored.shift_remove("reviewerHostClass");
    stored.shift_remove("thisProject");
    RecordRow {
        stored,
        reviewer_host_class: record.reviewer_host().map(class_of),
        this_project: record.project_root() == root,
    }
}

/// One destination pin of `trust list`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PinRow {
    /// Canonical project root.
    project_root: String,
    /// Capability id.
    id: String,
    /// The pinned host.
    host: String,
    /// When it was pinned.
    pinned_at: String,
    /// How (`first-use`, `approved`).
    source: String,
    /// `local` or `remote`.
    host_class: &'static str,
}

/// The destination pins `trust list` shows (this project's, or every one with `--all`).
fn pin_rows(pins: &PinStore, root: &str, all: bool) -> Vec<PinRow> {
    pins.read()
        .into_iter()
        .filter(|p| all || p.project_root == root)
        .map(|p| PinRow {
            host_class: class_of(&p.host),
            project_root: p.project_root,
            id: p.id,
            host: p.host,
            pinned_at: p.pinned_at,
            source: p.source,
        })
        .collect()
}

/// `trust list --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Listing {
    /// The consent store file.
    store: String,
    /// This project's canonical root.
    project_root: String,
    /// The consent records as stored (every field a peer wrote is kept), with the host class
    /// and whether each is this project's.
    records: Vec<RecordRow>,
    /// The destination pins.
    pins: Vec<PinRow>,
    /// The files that cannot be read.
    damaged: Vec<DamageRow>,
}

/// A damaged file of `trust list --json`.
#[derive(Debug, Serialize)]
struct DamageRow {
    /// The file.
    path: PathBuf,
    /// What is wrong with it.
    why: String,
    /// How to repair it.
    fix: String,
}

/// `trust list` for a person: damage first, then the records, then the pins.
fn list_text(
    store: &ConsentStore,
    damaged: &[crate::trust::consent::Damage],
    records: &[Record],
    pins: &[PinRow],
) -> String {
    let mut text = String::new();
    for damage in damaged {
        text.push_str(&format!(
            "DAMAGED: {damage}; lanes that depend on it are blocked; fix: {}\n",
            damage.fix()
        ));
    }
    text.push_str(&format!("consent records in {}\n", store.path().display()));
    if records.is_empty() {
        text.push_str("  (none)\n");
    }
    for r in records {
        text.push_str(&format!(
            "  {} (project {})\n    consented {}  content {}\n    destination {}\n    signature {}\n",
            escape_text(r.id()),
            escape_text(r.project_root()),
            escape_text(r.consented_at()),
            escape_text(r.content_hash()),
            match r.reviewer_host() {
                Some(h) => format!("{} ({})", escape_text(h), class_of(h)),
                None => "not pinned by this record".to_owned(),
            },
            escape_text(r.disclosure_signature()),
        ));
    }
    text.push_str("destination pins (lanes without a consented host)\n");
    if pins.is_empty() {
        text.push_str("  (none)\n");
    }
    for p in pins {
        text.push_str(&format!(
            "  {} -> {} ({}) {} {}\n",
            escape_text(&p.id),
            escape_text(&p.host),
            p.host_class,
            escape_text(&p.source),
            escape_text(&p.pinned_at)
        ));
    }
    text
}

/// Runs `trust list`.
///
/// # Errors
///
/// No GSD home.
pub fn list(context: &Context, args: &ListArgs) -> Result<u8, Failure> {
    let (home, store) = home_store(context)?;
    let root = canonical_root(&context.project_root);
    let records = listed_records(&store, &root, args.all);
    let pins = pin_rows(&PinStore::new(&home), &root, args.all);
    let damaged: Vec<_> = [store.load().err(), PinStore::new(&home).load().err()]
        .into_iter()
        .flatten()
        .collect();
    if args.json {
        let damaged: Vec<DamageRow> = damaged
            .iter()
            .map(|d| DamageRow {
                path: d.path.clone(),
                why: d.why.clone(),
                fix: d.fix(),
            })
            .collect();
        output::print_serialized(&Listing {
            store: store.path().display().to_string(),
            records: records.iter().map(|r| record_row(r, &root)).collect(),
            project_root: root,
            pins,
            damaged,
        });
        return Ok(0);
    }
    output::print(&list_text(&store, &damaged, &records, &pins));
    Ok(0)
}

/// `trust revoke --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Revoked<'a> {
    /// `revoked` or `not-found`.
    status: &'static str,
    /// Whether a record was removed.
    removed: bool,
    /// The capability id.
    id: &'a str,
    /// This project's canonical root.
    project_root: &'a str,
    /// Always `project`.
    scope: &'static str,
}

/// What `trust approve --json` is about.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Approval<'a> {
    /// The capability id.
    id: &'a str,
    /// This project's canonical root.
    project_root: &'a str,
    /// Always `project`.
    scope: &'static str,
    /// The disclosure summary shown.
    disclosure: &'a [String],
    /// Whether the bundle has an executable surface.
    requires_consent: bool,
    /// The consent fingerprint.
    fingerprint: &'a str,
    /// The bundle's content hash.
    content_hash: &'a str,
    /// The destination consent binds (an openai-http lane).
    reviewer_host: Option<&'a str>,
}

/// What `trust rebind-host --json` is about.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Rebinding<'a> {
    /// The capability id.
    id: &'a str,
    /// The lane's slug.
    slug: &'a str,
    /// The config key naming the destination.
    host_config_key: &'a str,
    /// This project's canonical root.
    project_root: &'a str,
    /// What binds it today (`consent`, `pin`, `none`).
    binding: &'static str,
    /// The destination bound today.
    old: Option<Destination>,
    /// The destination it resolves to now.
    new: Destination,
    /// The fingerprint asked about (once the destinations differ).
    #[serde(skip_serializing_if = "Option::is_none")]
    fingerprint: Option<String>,
}

/// A destination and its class.
#[derive(Debug, Serialize)]
struct Destination {
    /// The host.
    host: String,
    /// Whether it is local.
    local: bool,
}

impl Destination {
    fn of(host: &str) -> Destination {
        Destination {
            host: host.to_owned(),
            local: class_of(host) == "local",
        }
    }
}

/// Runs `trust revoke`: the project root is derived exactly as when recording.
///
/// # Errors
///
/// No GSD home, or a store that cannot be rewritten.
pub fn revoke(context: &Context, args: &IdArgs) -> Result<u8, Failure> {
    let (_, store) = home_store(context)?;
    let root = canonical_root(&context.project_root);
    let removed = store
        .revoke(&root, &args.id)
        .map_err(|err| Failure::new(err.to_string()))?;
    let status = if removed { "revoked" } else { "not-found" };
    if args.json {
        output::print_serialized(&Revoked {
            status,
            removed,
            id: &args.id,
            project_root: &root,
            scope: "project",
        });
    } else if removed {
        output::print(&format!(
            "revoked consent for {} in {root}; its lane is inactive until approved again\n",
            escape_text(&args.id)
        ));
    } else {
        output::print(&format!(
            "nothing to revoke: no consent record for {} in {root}\n",
            escape_text(&args.id)
        ));
    }
    Ok(0)
}

/// The project-scope folder of `id` (or of the lane whose slug is `id`).
fn project_folder(context: &Context, id: &str) -> Option<(String, PathBuf)> {
    let dir = crate::project::project_capabilities(&context.project_root);
    if valid_id(id) && dir.join(id).join("capability.json").is_file() {
        return Some((id.to_owned(), dir.join(id)));
    }
    let registry = context.registry();
    registry
        .entries
        .iter()
        .find(|e| e.scope == registry::Scope::Project && e.slug.as_deref() == Some(id))
        .and_then(|e| Some((e.id.clone(), e.path.parent()?.to_path_buf())))
}

/// The global-scope manifests, sorted: the set an approved project lane must fit into.
fn global_manifests(context: &Context) -> Vec<PathBuf> {
    let Some(global) = context.env.global_capabilities() else {
        return Vec::new();
    };
    let Ok(listing) = std::fs::read_dir(global) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = listing
        .flatten()
        .map(|e| e.path().join("capability.json"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found
}

/// Every reason the project-scope capability in `folder` may not be approved: validation
/// against the global set, the third-party policy, missing declared files.
fn approve_problems(
    context: &Context,
    value: &Value,
    folder: &Path,
    disclosure: &Disclosure,
) -> Vec<String> {
    let manifest_path = folder.join("capability.json");
    let mut problems = Vec::new();
    let mut paths = global_manifests(context);
    paths.push(manifest_path.clone());
    for diagnostic in registry::validate_files(&paths)
        .errors
        .iter()
        .filter(|d| d.file.as_deref() == Some(manifest_path.as_path()))
    {
        problems.push(format!(
            "capability.json {} [{}]: {}",
            diagnostic.field,
            diagnostic.code,
            diagnostic.detail()
        ));
    }
    problems.extend(
        policy_messages(value, None)
            .into_iter()
            .map(|m| format!("capability.json {m}")),
    );
    for artifact in &disclosure.missing_artifacts {
        problems.push(format!(
            "declared file {artifact:?} is missing from the bundle (or escapes it)"
        ));
    }
    problems
}

/// Whether `existing` already binds this content and destination.
fn already_approved(existing: Option<&Record>, assessment: &Assessment) -> bool {
    existing.is_some_and(|r| {
        r.content_hash() == assessment.content_hash
            && r.reviewer_host().map(normalize_host)
                == assessment.host.as_ref().map(|(_, h)| normalize_host(h))
    })
}

/// Runs `trust approve`: activates a project-scope lane already on disk.
///
/// # Errors
///
/// No such project-scope capability, an unreadable manifest, or no GSD home.
pub fn approve(context: &Context, args: &IdConsentArgs) -> Result<u8, Failure> {
    let json_output = args.consent.json;
    let (id, folder) = project_folder(context, &args.id).ok_or_else(|| {
        Failure::new(format!(
            "no project-scope capability {:?} in {}; `trust approve` activates a lane already on disk (use `gsd-lane install --project-scope <folder>` to add one)",
            escape_text(&args.id),
            crate::project::project_capabilities(&context.project_root).display()
        ))
    })?;
    let (_, store) = home_store(context)?;
    let manifest_path = folder.join("capability.json");
    let file = read::read_manifest(&manifest_path)
        .map_err(|err| Failure::new(format!("{}: {err}", manifest_path.display())))?;
    let assessment = assess(context, &file.value, &folder, |disclosure| {
        approve_problems(context, &file.value, &folder, disclosure)
    });
    let root = canonical_root(&context.project_root);
    let (lines, fp) = (&assessment.lines, &assessment.fingerprint);
    let base = Approval {
        id: &id,
        project_root: &root,
        scope: "project",
        disclosure: lines,
        requires_consent: assessment.disclosure.has_executable,
        fingerprint: fp,
        content_hash: &assessment.content_hash,
        reviewer_host: assessment.host.as_ref().map(|(_, h)| h.as_str()),
    };
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
            lines,
            &assessment.problems,
            "nothing was recorded",
        ));
    }
    let existing = store.read().get(&root, &id).cloned();
    if already_approved(existing.as_ref(), &assessment) {
        let envelope = Envelope {
            base: &base,
            outcome: Outcome::AlreadyApproved,
        };
        let text = format!("{id} is already approved for {root}; nothing changed\n");
        print_result(json_output, &envelope, &text);
        return Ok(0);
    }
    show_disclosure(json_output, &assessment);
    let question = format!("activate {id} for {root} and let it run on every review?");
    if let Some(status) = ask_consent(&args.consent, &question, lines, fp, &base) {
        return Ok(status);
    }
    let record = Record::new(NewRecord {
        project_root: root.clone(),
        id: id.clone(),
        integrity: assessment.content_hash.clone(),
        disclosure_signature: assessment.signature.clone(),
        content_hash: assessment.content_hash.clone(),
        consented_at: iso_now(),
        reviewer_host: assessment.host.as_ref().map(|(_, h)| h.clone()),
        lane_binding_v2: lane_binding_v2(&file.value),
    });
    store
        .record(record)
        .map_err(|err| Failure::new(err.to_string()))?;
    let envelope = Envelope {
        base: &base,
        outcome: Outcome::Approved,
    };
    print_result(
        json_output,
        &envelope,
        &format!("approved {id} for {root}\n"),
    );
    Ok(0)
}

/// The capability id and manifest of the lane `rebind-host` names (id or slug): from the
/// registry, else a project-scope folder not yet active.
fn rebind_target(context: &Context, wanted: &str) -> Result<(String, Value, LaneReading), Failure> {
    let registry = context.registry();
    let from_registry = registry
        .lanes
        .iter()
        .find(|l| l.capability_id == wanted || l.slug == wanted)
        .map(|l| {
            let reading = LaneReading::Active(l.clone());
            (l.capability_id.clone(), l.manifest().clone(), reading)
        });
    if let Some(found) = from_registry {
        return Ok(found);
    }
    let (id, folder) = project_folder(context, wanted).ok_or_else(|| {
        Failure::new(format!("no lane with id or slug {:?}", escape_text(wanted)))
    })?;
    let path = folder.join("capability.json");
    let file = read::read_manifest(&path)
        .map_err(|err| Failure::new(format!("{}: {err}", path.display())))?;
    let reading = LaneReading::of_manifest(&file.value);
    Ok((id, file.value, reading))
}

/// What binds the destination of `id` today: its consent record (`"consent"`) or a pin
/// (`"pin"`), and the host it binds.
struct Binding {
    record: Option<Record>,
    kind: &'static str,
    old_host: Option<String>,
}

/// Reads the binding of `id` in `root`; a damaged store stops the command.
fn current_binding(
    store: &ConsentStore,
    pins: &PinStore,
    root: &str,
    id: &str,
) -> Result<Binding, Failure> {
    let damaged = |d: crate::trust::consent::Damage| {
        Failure::new(format!("{d}; nothing was changed; {}", d.fix()))
    };
    let record = store.load().map_err(damaged)?.get(root, id).cloned();
    let pin = pins.get(root, id).map_err(damaged)?;
    let (kind, old_host) = match (&record, pin) {
        (Some(r), _) if r.reviewer_host().is_some() => {
            ("consent", r.reviewer_host().map(str::to_owned))
        }
        (Some(_), pin) => ("consent", pin.map(|p| p.host)),
        (None, pin) => ("pin", pin.map(|p| p.host)),
    };
    Ok(Binding {
        record,
        kind,
        old_host,
    })
}

/// What `rebind-host` shows before asking.
fn rebind_lines(
    slug: &str,
    id: &str,
    key: &str,
    old_host: Option<&String>,
    new_host: &str,
    fp: &str,
) -> Vec<String> {
    vec![
        format!("lane {} ({id}) takes its destination from {}", escape_text(slug), escape_text(key)),
        format!(
            "  approved: {}",
            old_host.map_or_else(|| "(nothing yet)".to_owned(), |h| format!("{} ({})", escape_text(h), class_of(h)))
        ),
        format!("  now:      {} ({})", escape_text(new_host), class_of(new_host)),
        "  every later review sends plan text, requirements, research findings and CONTEXT.md decisions there".to_owned(),
        format!("fingerprint {fp}"),
    ]
}

/// Writes the new destination: into the consent record when there is one, else as a pin.
fn store_rebinding(
    store: &ConsentStore,
    pins: &PinStore,
    binding: &Binding,
    root: &str,
    id: &str,
    new_host: &str,
) -> Result<(), Failure> {
    let now = iso_now();
    if binding.record.is_some() {
        store
            .update(|records| {
                if let Some(mut current) = records.get(root, id).cloned() {
                    current.rebind(new_host, &now);
                    records.put(current)?;
                }
                Ok(())
            })
            .map_err(|err| Failure::new(err.to_string()))
    } else {
        let pin = Pin {
            project_root: root.to_owned(),
            id: id.to_owned(),
            host: new_host.to_owned(),
            pinned_at: now,
            source: PinSource::Approved.as_str().to_owned(),
        };
        pins.set(&store.lock_path(), pin, false)
            .map(|_| ())
            .map_err(|err| Failure::new(err.to_string()))
    }
}

/// Runs `trust rebind-host`: re-approves a changed destination, rewriting only the host.
///
/// # Errors
///
/// No such lane, a lane that is not `openai-http`, an unresolvable destination, or a store that
/// cannot be written.
pub fn rebind_host(context: &Context, args: &IdConsentArgs) -> Result<u8, Failure> {
    let json_output = args.consent.json;
    let (id, manifest, lane) = rebind_target(context, &args.id)?;
    let config = context.config();
    let (key, new_host) = lane.host(&config).ok_or_else(|| {
        Failure::new(format!(
            "{id} is not an openai-http lane: it has no destination to rebind"
        ))
    })?;
    if new_host.is_empty() {
        return Err(Failure::new(format!(
            "{id}: {key} is unset and the manifest has no defaultHost, so there is no destination to approve"
        )));
    }
    let (home, store) = home_store(context)?;
    let root = canonical_root(&context.project_root);
    let pins = PinStore::new(&home);
    let binding = current_binding(&store, &pins, &root, &id)?;
    let old_host = binding.old_host.clone();
    let old_text = old_host.clone().unwrap_or_default();
    let slug = lane.slug().to_owned();
    let mut base = Rebinding {
        id: &id,
        slug: &slug,
        host_config_key: &key,
        project_root: &root,
        binding: binding.kind,
        old: old_host.as_deref().map(Destination::of),
        new: Destination::of(&new_host),
        fingerprint: None,
    };
    if old_host.as_deref().map(normalize_host) == Some(normalize_host(&new_host)) {
        let envelope = Envelope {
            base: &base,
            outcome: Outcome::Unchanged,
        };
        let text = format!(
            "{id}: the approved destination is already {}\n",
            escape_text(&new_host)
        );
        print_result(json_output, &envelope, &text);
        return Ok(0);
    }
    let fp = fingerprint(&signature_for_manifest(&manifest), &new_host, &old_text);
    base.fingerprint = Some(fp.clone());
    let lines = rebind_lines(&slug, &id, &key, old_host.as_ref(), &new_host, &fp);
    if !json_output {
        print_lines(&lines);
    }
    let question = format!("send every future review of {slug} to {new_host}?");
    if let Some(status) = ask_consent(&args.consent, &question, &lines, &fp, &base) {
        return Ok(status);
    }
    store_rebinding(&store, &pins, &binding, &root, &id, &new_host)?;
    let envelope = Envelope {
        base: &base,
        outcome: Outcome::Rebound,
    };
    let text = format!("{id} now sends to {}\n", escape_text(&new_host));
    print_result(json_output, &envelope, &text);
    Ok(0)
}
