//! `gsd-lane validate`: manifests as one merged set; exit 1 on any error.

use std::path::PathBuf;

use serde_json::json;

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

/// Runs `validate`.
///
/// # Errors
///
/// Never fails; errors in manifests are reported and give status 1.
pub fn run(context: &Context, args: &crate::cli::ValidateArgs) -> Result<u8, Failure> {
    let paths = if args.paths.is_empty() {
        discovered_overlays(context)
    } else {
        args.paths.iter().map(|p| context.env.cwd.join(p)).collect()
    };
    let report: ValidationReport = registry::validate_files(&paths);
    if args.json {
        output::print_json(&json!({
            "errors": report.errors.iter().map(output::diagnostic_json).collect::<Vec<_>>(),
            "warnings": report.warnings.iter().map(output::diagnostic_json).collect::<Vec<_>>(),
        }));
    } else {
        let mut text = String::new();
        for diagnostic in report.errors.iter().chain(&report.warnings) {
            text.push_str(&output::diagnostic_line(diagnostic));
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
