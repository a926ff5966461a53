//! `gsd-lane disclose [<id>...] [--manifest <file>]`.

use super::super::Context;
use super::view::{capability_view, CapabilityView, Subject};
use super::DiscloseArgs;
use crate::error::Failure;
use crate::manifest::DeclaredHeader;
use crate::output;
use crate::registry::{read, Registry, Scope};
use crate::trust::LaneReading;

/// Every capability that declares a lane, active or not, with its raw manifest.
pub fn subjects(registry: &Registry) -> Vec<Subject> {
    let mut out = Vec::new();
    for entry in &registry.entries {
        if entry.slug.is_none() && entry.skip.is_none() {
            continue;
        }
        let (manifest, reading) = match entry.lane.and_then(|i| registry.lanes.get(i)) {
            Some(lane) => (lane.manifest().clone(), LaneReading::Active(lane.clone())),
            None if entry.scope == Scope::FirstParty => continue,
            None => match read::read_manifest(&entry.path) {
                Ok(file) => {
                    let reading = LaneReading::of_manifest(&file.value);
                    (file.value, reading)
                }
                Err(_) => continue,
            },
        };
        let (status, reason) = match &entry.skip {
            None => ("active".to_owned(), None),
            Some(skip) => (skip.status().to_owned(), Some(skip.reason.clone())),
        };
        out.push(Subject {
            id: entry.id.clone(),
            scope: entry.scope.as_str(),
            path: entry.path.clone(),
            status,
            reason,
            manifest,
            reading,
        });
    }
    out
}

/// Runs `disclose`.
///
/// # Errors
///
/// An unreadable `--manifest` file, or an id that names no capability.
pub fn run(context: &Context, args: &DiscloseArgs) -> Result<u8, Failure> {
    let config = context.config();
    let selected: Vec<Subject> = match &args.manifest {
        Some(file) => {
            let path = context.env.cwd.join(file);
            let path = if path.is_dir() {
                path.join("capability.json")
            } else {
                path
            };
            let parsed = read::read_manifest(&path).map_err(|err| {
                Failure::new(format!(
                    "{}: {err}; disclose reads any JSON manifest, valid or not, but not a file that is not JSON",
                    path.display()
                ))
            })?;
            let header = DeclaredHeader::of(&parsed.value);
            // What the header reading could not use is said, not taken for a missing field.
            let problems: Vec<String> = header.problems.iter().map(ToString::to_string).collect();
            vec![Subject {
                id: header.id.unwrap_or_default(),
                scope: "file",
                path,
                status: "not installed".to_owned(),
                reason: (!problems.is_empty()).then(|| problems.join("; ")),
                reading: LaneReading::of_manifest(&parsed.value),
                manifest: parsed.value,
            }]
        }
        None => {
            let all = subjects(&context.registry());
            if args.ids.is_empty() {
                all
            } else {
                let mut chosen = Vec::new();
                for id in &args.ids {
                    let matches: Vec<&Subject> = all
                        .iter()
                        .filter(|s| &s.id == id || s.reading.slug() == id)
                        .collect();
                    if matches.is_empty() {
                        let known: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
                        return Err(Failure::new(format!(
                            "no capability with id {:?} declares a lane (known: {}); use --manifest <file> for one that is not installed",
                            crate::trust::render::escape_text(id),
                            known.join(", ")
                        )));
                    }
                    chosen.extend(matches.into_iter().cloned());
                }
                chosen
            }
        }
    };
    let views: Vec<(CapabilityView, Vec<String>)> = selected
        .iter()
        .map(|subject| capability_view(context, &config, subject))
        .collect();
    if args.json {
        let objects: Vec<&CapabilityView> = views.iter().map(|(view, _)| view).collect();
        output::print_serialized(&objects);
    } else {
        let text: Vec<String> = views
            .into_iter()
            .map(|(_, lines)| lines.join("\n"))
            .collect();
        // Every field is escaped where the view is made; this holds whatever slipped through.
        output::print(&crate::textsafe::for_terminal_block(&format!(
            "{}\n",
            text.join("\n\n")
        )));
    }
    Ok(0)
}
