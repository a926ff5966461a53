//! `flags` and `sections` (review-workflow.md §3).

use serde_json::json;

use super::Context;
use super::SelectArgs;
use crate::error::Failure;
use crate::manifest::vocab;
use crate::output;
use crate::registry::{Lane, Registry};

/// Parses `--selected a,b`: entries trimmed, empties dropped; empty means every lane.
pub fn parse_selected(selected: Option<&str>) -> Vec<String> {
    selected
        .map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|slug| !slug.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The selected lanes in descriptor order, each once; unknown slugs dropped.
pub fn selected_lanes<'r>(registry: &'r Registry, selected: &[String]) -> Vec<&'r Lane> {
    registry
        .lanes
        .iter()
        .filter(|lane| selected.is_empty() || selected.contains(&lane.slug))
        .collect()
}

fn render(lines: &[String]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// `gsd-lane flags`.
///
/// # Errors
///
/// Never fails; the signature matches the other commands.
pub fn flags(context: &Context, args: &SelectArgs) -> Result<u8, Failure> {
    let registry = context.registry();
    let selected = parse_selected(args.selected.as_deref());
    let flags: Vec<String> = selected_lanes(&registry, &selected)
        .iter()
        .flat_map(|lane| lane.flags.iter())
        .filter(|flag| vocab::is_flag(flag))
        .cloned()
        .collect();
    if args.json {
        output::print_json(&json!(flags));
    } else {
        output::print(&render(&flags));
    }
    Ok(0)
}

/// `gsd-lane sections`.
///
/// # Errors
///
/// Never fails; the signature matches the other commands.
pub fn sections(context: &Context, args: &SelectArgs) -> Result<u8, Failure> {
    let registry = context.registry();
    let selected = parse_selected(args.selected.as_deref());
    let lanes = selected_lanes(&registry, &selected);
    if args.json {
        let rows: Vec<_> = lanes
            .iter()
            .map(|lane| json!({"slug": lane.slug, "section": lane.section}))
            .collect();
        output::print_json(&json!(rows));
    } else {
        let lines: Vec<String> = lanes
            .iter()
            .map(|lane| format!("{}\t{}", lane.slug, lane.section))
            .collect();
        output::print(&render(&lines));
    }
    Ok(0)
}
