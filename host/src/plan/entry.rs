//! One lane's entry of `plan --json`: its resolved plan with what the user sees beside it
//! (section, transport, budget, prompt path, settings), or why it cannot be planned. `plan`
//! prints these; `review` records the same bytes in its run dir.

use gsd_lane_sdk::{LanePlan, Transport};
use serde::Serialize;
use serde_json::Value;

use crate::config::{Origin, ProjectConfig};
use crate::plan::{self, PlanInputs};
use crate::refusal::Reason;
use crate::registry::Lane;

/// One entry of `plan --json`: a resolved plan, or why the lane cannot be planned.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum PlanEntry {
    /// The lane resolved.
    Planned(Box<Planned>),
    /// The lane cannot run as declared (or no lane has the slug).
    Refused(Refused),
}

/// `{slug, ok: true, section, transport, promptBudget, promptPath, plan, settings?}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Planned {
    /// The lane's slug.
    slug: String,
    /// Always `true`.
    ok: bool,
    /// Its REVIEWS.md heading.
    section: String,
    /// Its transport.
    transport: Transport,
    /// Its prompt-token budget, when one is configured.
    prompt_budget: Option<serde_json::Number>,
    /// The prompt file the lane reads, when it reads one.
    prompt_path: Option<String>,
    /// The resolved plan, with its evidence class.
    plan: PlanObject,
    /// The lane's keys that have a value (left out when none has).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    settings: Vec<Setting>,
}

/// The `plan` member: the resolved plan, then `evidenceClass` as normalised (upstream #3436:
/// only an exact `diff-only` is exempt from the citation check).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanObject {
    /// The resolved plan.
    #[serde(flatten)]
    plan: LanePlan,
    /// `diff-only` or `source-grounded`.
    evidence_class: &'static str,
}

/// `{slug, ok: false, reason, detail}`.
#[derive(Debug, Serialize)]
pub struct Refused {
    /// The slug asked for.
    pub slug: String,
    /// Always `false`.
    pub ok: bool,
    /// The refusal's reason.
    pub reason: Reason,
    /// What is wrong.
    pub detail: String,
}

/// One of a lane's own config keys that has a value, and where it comes from.
#[derive(Debug, Serialize)]
pub struct Setting {
    /// The dotted key.
    pub key: String,
    /// Its value.
    pub value: Value,
    /// `config file` or `lane default`.
    pub source: &'static str,
    /// The origin, as `plan` and `doctor` say it.
    pub from: String,
}

/// The plan entry of `lane` (see [`PlanEntry`]).
pub fn entry(lane: &Lane, config: &ProjectConfig, inputs: &PlanInputs) -> PlanEntry {
    of_resolution(
        lane,
        config,
        plan::resolve_lane(&lane.capability_id, lane, config, inputs),
    )
}

/// The plan entry of `lane` for a plan already resolved (or refused): what `review` records
/// for the exact plan it admitted and runs, without resolving it again.
pub fn of_resolution(
    lane: &Lane,
    config: &ProjectConfig,
    resolution: Result<LanePlan, crate::refusal::Refusal>,
) -> PlanEntry {
    match resolution {
        Ok(resolved) => {
            let prompt_path = match resolved.spawn() {
                Some(spawn) => spawn.stdin.clone(),
                None => Some(resolved.prompt_path.clone()),
            };
            PlanEntry::Planned(Box::new(Planned {
                slug: lane.slug.clone(),
                ok: true,
                section: lane.section.clone(),
                transport: resolved.transport,
                prompt_budget: plan::prompt_budget(lane, config),
                prompt_path,
                // The lane's keys that have a value, and where it comes from (decisions.md #21).
                settings: setting_rows(lane, config),
                plan: PlanObject {
                    evidence_class: evidence_class(lane),
                    plan: resolved,
                },
            }))
        }
        Err(refusal) => PlanEntry::Refused(Refused {
            slug: lane.slug.clone(),
            ok: false,
            reason: refusal.reason,
            detail: refusal.detail,
        }),
    }
}

/// One plan entry as JSON, for the review's lane file and run record (the bytes of
/// `plan --json`'s entry).
pub fn plan_entry(lane: &Lane, config: &ProjectConfig, inputs: &PlanInputs) -> Value {
    as_value(&entry(lane, config, inputs))
}

/// [`of_resolution`] as JSON, for the review's lane file and run record.
pub fn resolved_entry(lane: &Lane, config: &ProjectConfig, plan: LanePlan) -> Value {
    as_value(&of_resolution(lane, config, Ok(plan)))
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
pub fn setting_rows(lane: &Lane, config: &ProjectConfig) -> Vec<Setting> {
    lane.config_keys
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
            Some(Setting {
                key: key.clone(),
                value: value.clone(),
                source,
                from: origin.to_string(),
            })
        })
        .collect()
}

/// A command-output value as JSON. Every output type here has string keys only, so the
/// conversion cannot fail; `null` would stand for a failure that cannot happen.
fn as_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
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
