//! `gsd-lane plan`: the resolved plan of each selected lane, as JSON (invocation.md §14).

use serde_json::{json, Value};

use super::roster::parse_selected;
use super::Context;
use super::PlanArgs;
use crate::error::Failure;
use crate::output;
use crate::plan::{self, PlanInputs};
use crate::refusal::Reason;
use crate::registry::Lane;

/// One plan entry: `{slug, ok:true, section, transport, promptBudget, promptPath, plan}` or
/// `{slug, ok:false, reason, detail}`.
pub fn plan_entry(
    lane: &Lane,
    config: &crate::config::ProjectConfig,
    inputs: &PlanInputs,
) -> Value {
    match plan::resolve_lane(&lane.capability_id, lane, config, inputs) {
        Ok(resolved) => {
            let prompt_path = match resolved.spawn() {
                Some(spawn) => spawn.stdin.clone(),
                None => Some(resolved.prompt_path.clone()),
            };
            json!({
                "slug": lane.slug,
                "ok": true,
                "section": lane.section,
                "transport": resolved.transport,
                "promptBudget": plan::prompt_budget(lane, config),
                "promptPath": prompt_path,
                "plan": resolved,
            })
        }
        Err(refusal) => json!({
            "slug": lane.slug,
            "ok": false,
            "reason": refusal.reason,
            "detail": refusal.detail,
        }),
    }
}

/// Runs `plan`.
///
/// # Errors
///
/// Never fails; refusals are entries of the output.
pub fn run(context: &Context, args: &PlanArgs) -> Result<u8, Failure> {
    let registry = context.registry();
    let config = context.config();
    let inputs = PlanInputs {
        run_dir: args.run_dir.clone(),
        repo_root: context.repo_root(args.repo_root.as_deref()),
        ..PlanInputs::default()
    };
    let selected = parse_selected(args.selected.as_deref());
    let entries: Vec<Value> = if selected.is_empty() {
        registry
            .lanes
            .iter()
            .map(|lane| plan_entry(lane, &config, &inputs))
            .collect()
    } else {
        selected
            .iter()
            .map(|slug| match registry.lane(slug) {
                Some(lane) => plan_entry(lane, &config, &inputs),
                None => json!({
                    "slug": slug,
                    "ok": false,
                    "reason": Reason::MalformedLane,
                    "detail": format!("no declared lane has slug {:?}", output::neutralize(slug)),
                }),
            })
            .collect()
    };
    output::print_json(&Value::Array(entries));
    Ok(0)
}
