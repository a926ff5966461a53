//! `gsd-lane plan`: the resolved plan of each selected lane, as JSON (invocation.md §14).

use super::roster::parse_selected;
use super::Context;
use super::PlanArgs;
use crate::error::Failure;
use crate::output;
use crate::plan::entry::{entry, PlanEntry, Refused};
use crate::plan::PlanInputs;
use crate::refusal::Reason;

/// Runs `plan`.
///
/// # Errors
///
/// Never fails; refusals are entries of the output.
pub fn run(context: &Context, args: &PlanArgs) -> Result<u8, Failure> {
    let registry = context.registry();
    let config = context.lane_config(&registry);
    let inputs = PlanInputs {
        run_dir: args.run_dir.clone(),
        repo_root: context.repo_root(args.repo_root.as_deref()),
        ..PlanInputs::default()
    };
    let selected = parse_selected(args.selected.as_deref());
    let entries: Vec<PlanEntry> = if selected.is_empty() {
        registry
            .lanes
            .iter()
            .map(|lane| entry(lane, &config, &inputs))
            .collect()
    } else {
        selected
            .iter()
            .map(|slug| match registry.lane(slug) {
                Some(lane) => entry(lane, &config, &inputs),
                None => PlanEntry::Refused(Refused {
                    slug: slug.clone(),
                    ok: false,
                    reason: Reason::MalformedLane,
                    detail: format!("no declared lane has slug {:?}", output::neutralize(slug)),
                }),
            })
            .collect()
    };
    output::print_serialized(&entries);
    Ok(0)
}
