//! `gsd-lane validate`: manifests as one merged set; exit 1 on any error.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::Context;
use crate::error::Failure;
use crate::output;
use crate::registry::{self, ValidationReport};

/// Every overlay manifest on disk (global, then project), for `validate` without paths.
fn discovered_overlays(context: &Context) -> Vec<PathBuf> {
    let mut found = registry::installed_manifests(
        context.env.global_capabilities().as_deref(),
        &context.project_root,
    );
    found.dedup();
    found
}

/// Largest manifest whose lines are shown under its diagnostics.
const SOURCE_LIMIT: u64 = 16 << 20;

/// Manifest texts read once each for the snippets (`None`: unreadable, too large, not UTF-8).
#[derive(Default)]
struct Sources(HashMap<PathBuf, Option<String>>);

impl Sources {
    fn get(&mut self, path: &Path) -> Option<&str> {
        self.0
            .entry(path.to_path_buf())
            .or_insert_with(|| {
                let file = std::fs::File::open(path).ok()?;
                let mut text = String::new();
                file.take(SOURCE_LIMIT).read_to_string(&mut text).ok()?;
                Some(text)
            })
            .as_deref()
    }
}

/// `validate --json`: every diagnostic, errors first.
#[derive(Debug, Serialize)]
struct Report {
    /// The errors, as diagnostics.
    errors: Vec<Value>,
    /// The warnings, as diagnostics.
    warnings: Vec<Value>,
}

/// Runs `validate`.
///
/// # Errors
///
/// Never fails; errors in manifests are reported and give status 1.
pub fn run(context: &Context, args: &super::ValidateArgs) -> Result<u8, Failure> {
    let paths = if args.paths.is_empty() {
        discovered_overlays(context)
    } else {
        args.paths.iter().map(|p| context.env.cwd.join(p)).collect()
    };
    let report: ValidationReport =
        registry::validate_files_for_host(&paths, &context.compat_version);
    if args.json {
        output::print_serialized(&Report {
            errors: report.errors.iter().map(output::diagnostic_json).collect(),
            warnings: report
                .warnings
                .iter()
                .map(output::diagnostic_json)
                .collect(),
        });
    } else {
        let color = context.colored(report.errors.is_empty());
        let mut sources = Sources::default();
        let mut text = String::new();
        for diagnostic in report.errors.iter().chain(&report.warnings) {
            let source = diagnostic.file.as_deref().and_then(|f| sources.get(f));
            text.push_str(&super::snippet::render(diagnostic, source, color));
            text.push('\n');
        }
        text.push_str(&format!(
            "{} manifest(s) checked with the first-party set: {} error(s), {} warning(s)\n",
            paths.len(),
            report.errors.len(),
            report.warnings.len()
        ));
        if report.errors.is_empty() {
            output::print(&text);
        } else {
            output::eprint_line(text.trim_end());
        }
    }
    Ok(u8::from(!report.errors.is_empty()))
}
