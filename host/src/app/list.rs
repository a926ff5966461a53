//! `gsd-lane list`: every discovered lane, active or not, and why not.

use serde::Serialize;
use serde_json::Value;

use super::Context;
use crate::error::Failure;
use crate::manifest::diagnostic::Code;
use crate::output;
use crate::registry::{Entry, Registry, Scope};
use crate::run::path_lookup;
use crate::textsafe::for_terminal;

/// Why an accepted lane still cannot run in this build (its handler is not implemented).
fn handler_gap(registry: &Registry, entry: &Entry) -> Option<String> {
    let lane = registry.lanes.get(entry.lane?)?;
    let name = lane.handler?;
    crate::registry::handlers::lookup(name.as_str())
        .err()
        .map(|err| format!("unknown handler: {err}"))
}

/// Whether the lane's program is on PATH (a lookup only; nothing is started).
fn presence(context: &Context, registry: &Registry, entry: &Entry) -> Option<String> {
    let lane = registry.lanes.get(entry.lane?)?;
    match lane.spawn().map(|spawn| spawn.binary.as_str()) {
        Some(binary) => Some(
            match path_lookup::find_executable(binary, context.env.path.as_deref()) {
                Some(path) => format!("{binary} found at {}", path.display()),
                None if binary.contains('/') => format!("{binary} not found"),
                None => format!("{binary} not on PATH"),
            },
        ),
        None => Some("HTTP lane: reachability is probed only when the lane is run".to_owned()),
    }
}

/// One row of `list` (`--json` prints the array of them; the table reads the same fields).
#[derive(Debug, Serialize)]
struct Row {
    /// Capability id.
    id: String,
    /// The lane's slug, when it declares one.
    slug: Option<String>,
    /// Its selection flags.
    flags: Vec<String>,
    /// Where it was found.
    scope: Scope,
    /// Its manifest file.
    path: String,
    /// Whether it runs.
    active: bool,
    /// `active`, `unavailable`, or why it was skipped.
    status: &'static str,
    /// The skip's code.
    code: Option<Code>,
    /// The skip's kind.
    kind: Option<&'static str>,
    /// Why it does not run.
    reason: Option<String>,
    /// Whether its program is here.
    here: Option<String>,
    /// Its warnings, one line each.
    warnings: Vec<String>,
    /// Its diagnostics, as `validate --json` writes them.
    diagnostics: Vec<Value>,
}

fn entry_row(context: &Context, registry: &Registry, entry: &Entry) -> Row {
    let gap = handler_gap(registry, entry);
    let active = entry.skip.is_none() && gap.is_none();
    let reason = entry.skip.as_ref().map(|skip| skip.reason.clone()).or(gap);
    Row {
        id: entry.id.clone(),
        slug: entry.slug.clone(),
        flags: entry.flags.clone(),
        scope: entry.scope,
        path: entry.path.display().to_string(),
        active,
        status: entry
            .skip
            .as_ref()
            .map_or(if active { "active" } else { "unavailable" }, |s| {
                s.status()
            }),
        code: entry.skip.as_ref().map(|skip| skip.code),
        kind: entry.skip.as_ref().and_then(|skip| skip.kind()),
        reason,
        here: presence(context, registry, entry),
        warnings: entry
            .warnings
            .iter()
            .map(|w| format!("{}:{}: {}", entry.scope.as_str(), entry.id, w.detail()))
            .collect(),
        diagnostics: entry
            .skip
            .iter()
            .flat_map(|s| s.diagnostics.iter())
            .chain(entry.warnings.iter())
            .map(output::diagnostic_json)
            .collect(),
    }
}

/// Runs `list`.
///
/// # Errors
///
/// Never fails; the signature matches the other commands.
pub fn run(context: &Context, json_output: bool) -> Result<u8, Failure> {
    let registry = context.registry();
    let rows: Vec<Row> = registry
        .entries
        .iter()
        .filter(|entry| entry.slug.is_some() || entry.skip.is_some())
        .map(|entry| entry_row(context, &registry, entry))
        .collect();
    if json_output {
        output::print_serialized(&rows);
        return Ok(0);
    }
    output::print(&human(&rows));
    Ok(0)
}

/// The table for people. Every cell is overlay- or file-controlled text, neutralised for the
/// terminal on one line (a tab or line feed escaped too, so no cell can forge a row).
fn human(rows: &[Row]) -> String {
    let mut text = format!(
        "{:<14} {:<26} {:<12} {:<12} {}\n",
        "SLUG", "FLAGS", "SCOPE", "STATUS", "DETAIL"
    );
    for row in rows {
        let detail = row.reason.as_deref().or(row.here.as_deref()).unwrap_or("");
        text.push_str(&format!(
            "{:<14} {:<26} {:<12} {:<12} {}\n",
            for_terminal(row.slug.as_deref().unwrap_or("-")),
            for_terminal(&row.flags.join(" ")),
            row.scope.as_str(),
            row.status,
            for_terminal(detail),
        ));
        if row.scope != Scope::FirstParty {
            text.push_str(&format!("{:<14} source: {}\n", "", for_terminal(&row.path)));
        }
        for warning in &row.warnings {
            text.push_str(&format!("{:<14} warning: {}\n", "", for_terminal(warning)));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 20 item 10: whatever a row holds, the table has no raw control and no forged row.
    #[test]
    fn the_table_prints_no_raw_control() {
        let hostile = "x\u{1b}]0;pwned\u{7}\r\u{9b}2J\u{202e}\u{200b}\nforged";
        let rows = vec![Row {
            id: hostile.to_owned(),
            slug: Some(hostile.to_owned()),
            flags: vec![hostile.to_owned()],
            scope: Scope::Project,
            path: hostile.to_owned(),
            active: false,
            status: "skipped",
            code: None,
            kind: None,
            reason: Some(hostile.to_owned()),
            here: None,
            warnings: vec![hostile.to_owned()],
            diagnostics: Vec::new(),
        }];
        let text = human(&rows);
        assert!(
            !text
                .chars()
                .any(|c| crate::output::is_unsafe_for_terminal(c) && c != '\n'),
            "{text:?}"
        );
        assert_eq!(text.lines().count(), 4, "{text}");
    }
}
