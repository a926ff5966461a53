//! `flags` and `sections` (review-workflow.md §3).

use serde::Serialize;

use super::Context;
use super::SelectArgs;
use crate::error::Failure;
use crate::manifest::vocab;
use crate::output;
use crate::registry::{Lane, Registry};
use crate::textsafe::for_terminal;

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
        output::print_serialized(&flags);
    } else {
        output::print(&render(&flags));
    }
    Ok(0)
}

/// One row of `sections --json`.
#[derive(Debug, Serialize)]
struct SectionRow<'a> {
    /// The lane's slug.
    slug: &'a str,
    /// Its REVIEWS.md heading.
    section: &'a str,
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
        let rows: Vec<SectionRow<'_>> = lanes
            .iter()
            .map(|lane| SectionRow {
                slug: &lane.slug,
                section: &lane.section,
            })
            .collect();
        output::print_serialized(&rows);
    } else {
        let rows: Vec<(&str, &str)> = lanes
            .iter()
            .map(|lane| (lane.slug.as_str(), lane.section.as_str()))
            .collect();
        output::print(&section_lines(&rows));
    }
    Ok(0)
}

/// `sections`' text: `<slug>\t<section>` per lane, each field neutralised for the terminal (a
/// tab or line feed in a field escaped too, so no field can forge a column or a row).
fn section_lines(rows: &[(&str, &str)]) -> String {
    let lines: Vec<String> = rows
        .iter()
        .map(|(slug, section)| format!("{}\t{}", for_terminal(slug), for_terminal(section)))
        .collect();
    render(&lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 20 item 10: a section validation did not stop prints neutralised.
    #[test]
    fn sections_print_no_raw_control_and_no_forged_row() {
        let text = section_lines(&[("acme", "Acme\u{1b}]0;pwned\u{7}\u{202e}\nforged\tcol")]);
        assert!(
            !text
                .chars()
                .any(|c| crate::output::is_unsafe_for_terminal(c) && !matches!(c, '\n' | '\t')),
            "{text:?}"
        );
        assert_eq!(text.lines().count(), 1, "{text:?}");
        assert_eq!(text.matches('\t').count(), 1, "{text:?}");
    }
}
