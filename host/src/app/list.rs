//! `gsd-lane list`: every discovered lane, active or not, and why not.

use serde_json::{json, Value};

use super::Context;
use crate::error::Failure;
use crate::output;
use crate::registry::{Entry, Registry};
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

fn entry_json(context: &Context, registry: &Registry, entry: &Entry) -> Value {
    let gap = handler_gap(registry, entry);
    let active = entry.skip.is_none() && gap.is_none();
    let reason = entry.skip.as_ref().map(|skip| skip.reason.clone()).or(gap);
    json!({
        "id": entry.id,
        "slug": entry.slug,
        "flags": entry.flags,
        "scope": entry.scope,
        "path": entry.path.display().to_string(),
        "active": active,
        "status": entry.skip.as_ref().map_or(if active { "active" } else { "unavailable" }, |s| s.status()),
        "code": entry.skip.as_ref().map(|skip| skip.code),
        "kind": entry.skip.as_ref().and_then(|skip| skip.kind()),
        "reason": reason,
        "here": presence(context, registry, entry),
        "warnings": entry.warnings.iter().map(|w| format!("{}:{}: {}", entry.scope.as_str(), entry.id, w.detail())).collect::<Vec<_>>(),
        "diagnostics": entry.skip.iter().flat_map(|s| s.diagnostics.iter()).chain(entry.warnings.iter()).map(output::diagnostic_json).collect::<Vec<_>>(),
    })
}

/// Runs `list`.
///
/// # Errors
///
/// Never fails; the signature matches the other commands.
pub fn run(context: &Context, json_output: bool) -> Result<u8, Failure> {
    let registry = context.registry();
    let rows: Vec<Value> = registry
        .entries
        .iter()
        .filter(|entry| entry.slug.is_some() || entry.skip.is_some())
        .map(|entry| entry_json(context, &registry, entry))
        .collect();
    if json_output {
        output::print_json(&Value::Array(rows));
        return Ok(0);
    }
    output::print(&human(&rows));
    Ok(0)
}

/// The table for people. Every cell is overlay- or file-controlled text, neutralised for the
/// terminal on one line (a tab or line feed escaped too, so no cell can forge a row).
fn human(rows: &[Value]) -> String {
    let text_of = |row: &Value, key: &str| {
        row.get(key)
            .and_then(Value::as_str)
            .unwrap_or("-")
            .to_owned()
    };
    let mut text = format!(
        "{:<14} {:<26} {:<12} {:<12} {}\n",
        "SLUG", "FLAGS", "SCOPE", "STATUS", "DETAIL"
    );
    for row in rows {
        let flags: Vec<&str> = row["flags"]
            .as_array()
            .map(|f| f.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let detail = row
            .get("reason")
            .and_then(Value::as_str)
            .or_else(|| row.get("here").and_then(Value::as_str))
            .unwrap_or("");
        text.push_str(&format!(
            "{:<14} {:<26} {:<12} {:<12} {}\n",
            for_terminal(&text_of(row, "slug")),
            for_terminal(&flags.join(" ")),
            text_of(row, "scope"),
            text_of(row, "status"),
            for_terminal(detail),
        ));
        if row["scope"] != "first-party" {
            text.push_str(&format!(
                "{:<14} source: {}\n",
                "",
                for_terminal(&text_of(row, "path"))
            ));
        }
        for warning in row["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            text.push_str(&format!("{:<14} warning: {}\n", "", for_terminal(warning)));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Issue 20 item 10: whatever a row holds, the table has no raw control and no forged row.
    #[test]
    fn the_table_prints_no_raw_control() {
        let hostile = "x\u{1b}]0;pwned\u{7}\r\u{9b}2J\u{202e}\u{200b}\nforged";
        let rows = vec![json!({
            "slug": hostile, "flags": [hostile], "scope": "project", "status": "skipped",
            "reason": hostile, "path": hostile, "warnings": [hostile],
        })];
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
