//! `gsd-lane plan`: the resolved plan of each selected lane, as JSON (invocation.md §14).

use serde_json::{json, Value};

use super::roster::parse_selected;
use super::Context;
use super::PlanArgs;
use crate::config::{Origin, ProjectConfig};
use crate::error::Failure;
use crate::output;
use crate::plan::{self, PlanInputs};
use crate::refusal::Reason;
use crate::registry::Lane;

/// One plan entry: `{slug, ok:true, section, transport, promptBudget, promptPath, plan}` or
/// `{slug, ok:false, reason, detail}`.
pub fn plan_entry(lane: &Lane, config: &ProjectConfig, inputs: &PlanInputs) -> Value {
    match plan::resolve_lane(&lane.capability_id, lane, config, inputs) {
        Ok(resolved) => {
            let prompt_path = match resolved.spawn() {
                Some(spawn) => spawn.stdin.clone(),
                None => Some(resolved.prompt_path.clone()),
            };
            let mut entry = json!({
                "slug": lane.slug,
                "ok": true,
                "section": lane.section,
                "transport": resolved.transport,
                "promptBudget": plan::prompt_budget(lane, config),
                "promptPath": prompt_path,
                "plan": resolved,
            });
            // The evidence class as normalised (upstream #3436): only an exact `diff-only`
            // is exempt from the citation check.
            entry["plan"]["evidenceClass"] = json!(evidence_class(lane));
            // The lane's keys that have a value, and where it comes from (decisions.md #21).
            let settings = settings(lane, config);
            if settings.as_array().is_some_and(|rows| !rows.is_empty()) {
                entry["settings"] = settings;
            }
            entry
        }
        Err(refusal) => json!({
            "slug": lane.slug,
            "ok": false,
            "reason": refusal.reason,
            "detail": refusal.detail,
        }),
    }
}

/// `evidenceClass` of a plan object: `diff-only` or `source-grounded` (upstream #3436).
fn evidence_class(lane: &Lane) -> &'static str {
    match lane.evidence_class {
        crate::manifest::model::EvidenceClass::DiffOnly => "diff-only",
        crate::manifest::model::EvidenceClass::SourceGrounded => "source-grounded",
    }
}

/// The lane's own config keys that have a value, each with where it comes from (the config
/// file, or the default the lane declares: ADR-2782 D9).
pub fn settings(lane: &Lane, config: &ProjectConfig) -> Value {
    let rows: Vec<Value> = lane
        .config_keys
        .iter()
        .filter_map(|key| {
            let origin = config.origin(key);
            let value = config.get(key)?;
            let source = match origin {
                Origin::ConfigFile => "config file",
                // A default that means "unset" (`""`, the `-1` budget sentinel) says nothing.
                Origin::LaneDefault(_) if is_unset_default(value) => return None,
                Origin::LaneDefault(_) => "lane default",
                Origin::Unset => return None,
            };
            Some(json!({
                "key": key,
                "value": value,
                "source": source,
                "from": origin.to_string(),
            }))
        })
        .collect();
    Value::Array(rows)
}

/// A declared default that leaves its key unset (manifest.md §5.3, §5.4).
fn is_unset_default(value: &Value) -> bool {
    match value {
        Value::String(_) => crate::config::configured(Some(value)).is_none(),
        Value::Number(n) => n.as_f64() == Some(-1.0),
        Value::Null => true,
        _ => false,
    }
}

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
