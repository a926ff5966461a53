//! Build-time validation of a set of manifest files merged with the first-party set.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::first_party;
use super::read::{self, ManifestFile};
use crate::manifest::cross;
use crate::manifest::diagnostic::Code;
use crate::manifest::facts::{self, CapabilityFacts};
use crate::manifest::{self, Diagnostic};

/// The findings of `validate`, split by severity.
#[derive(Debug, Clone, Default)]
pub struct ValidationReport {
    /// Findings that reject a capability.
    pub errors: Vec<Diagnostic>,
    /// Findings that do not.
    pub warnings: Vec<Diagnostic>,
}

impl ValidationReport {
    fn add(&mut self, diagnostic: Diagnostic) {
        if diagnostic.is_error() {
            self.errors.push(diagnostic);
        } else {
            self.warnings.push(diagnostic);
        }
    }
}

/// Resolves a command-line path: a folder stands for its `capability.json`.
pub fn manifest_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("capability.json")
    } else {
        path.to_path_buf()
    }
}

fn folder_name(path: &Path) -> Option<String> {
    path.parent()?
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
}

/// Validates `paths` as one merged set with the first-party capabilities; a given manifest
/// whose id equals a first-party id replaces that capability.
pub fn validate_files(paths: &[PathBuf]) -> ValidationReport {
    validate_files_with(paths, None)
}

/// [`validate_files`] for `gsd-lane validate`: also warns (`LD-ENGINES`) about each given
/// manifest whose `engines.gsd` excludes `host_version`, with the words `list` uses.
pub fn validate_files_for_host(paths: &[PathBuf], host_version: &str) -> ValidationReport {
    validate_files_with(paths, Some(host_version))
}

fn validate_files_with(paths: &[PathBuf], host_version: Option<&str>) -> ValidationReport {
    let mut report = ValidationReport::default();
    let mut given: Vec<ManifestFile> = Vec::new();
    for path in paths.iter().map(|p| manifest_path(p)) {
        match read::read_manifest(&path) {
            Ok(file) => {
                let folder = folder_name(&path);
                let mut diagnostics = manifest::validate_value(&file.value, folder.as_deref());
                let range_refused = diagnostics
                    .iter()
                    .any(|d| matches!(d.code, Code::EnvEngines | Code::EnvEnginesGsd));
                if !range_refused {
                    diagnostics.extend(
                        host_version.and_then(|v| super::overlay::engines_warning(&file.value, v)),
                    );
                }
                read::locate(&mut diagnostics, &file);
                diagnostics.into_iter().for_each(|d| report.add(d));
                given.push(file);
            }
            Err(err) => report.add(err.to_diagnostic(&path)),
        }
    }
    let replaced: HashSet<String> = given
        .iter()
        .filter_map(|file| crate::manifest::DeclaredHeader::of(&file.value).id)
        .collect();
    let mut members: Vec<CapabilityFacts> = Vec::new();
    let mut labels: Vec<Option<&ManifestFile>> = Vec::new();
    for (id, text) in first_party::LANES {
        if !replaced.contains(id) {
            members.push(CapabilityFacts::of(
                &read::parse_json(text).unwrap_or(Value::Null),
            ));
            labels.push(None);
        }
    }
    for facts in facts::non_lane_first_party() {
        if !replaced.contains(&facts.id) {
            members.push(facts);
            labels.push(None);
        }
    }
    for file in &given {
        members.push(CapabilityFacts::of(&file.value));
        labels.push(Some(file));
    }
    for finding in cross::check(&members) {
        let mut diagnostic = finding.diagnostic;
        match labels.get(finding.member).copied().flatten() {
            Some(file) => read::locate(std::slice::from_mut(&mut diagnostic), file),
            None => {
                diagnostic.file = Some(PathBuf::from(first_party::display_path(
                    &diagnostic.capability,
                )))
            }
        }
        report.add(diagnostic);
    }
    report
}
