//! What the review reads of a lane beyond its slug: its section, evidence class, model key and
//! prompt budget. Every such read of the review pipeline is here, in one place.

use serde_json::Value;

use super::budget::{self, Metadata};
use super::reviews_md::{Entry, Fate};
use super::selection::Identity;
use crate::config::ProjectConfig;
use crate::registry::Lane;

/// Whether the lane declares a `modelConfigKey` (an instance's model can reach it).
pub fn accepts_model(lane: &Lane) -> bool {
    lane.body()
        .get("modelConfigKey")
        .and_then(Value::as_str)
        .is_some()
}

/// The lane's prompt budget `B` when `> 0` (review-workflow.md §8).
pub fn budget_of(lane: &Lane, config: &ProjectConfig) -> Option<i64> {
    crate::plan::prompt_budget(lane.body(), config)
        .map(|n| budget::integer_budget(&n))
        .filter(|b| *b > 0)
}

/// The progress display name of an identity: the lane's section, with the instance name.
pub fn display(identity: &Identity, lane: &Lane) -> String {
    if identity.instance {
        format!("{} ({})", lane.section, identity.id)
    } else {
        lane.section.clone()
    }
}

/// The REVIEWS.md entry of an identity.
pub fn entry(identity: &Identity, lane: &Lane, metadata: Option<Metadata>, fate: Fate) -> Entry {
    Entry {
        id: identity.id.clone(),
        cli: identity.cli.clone(),
        instance: identity.instance,
        section: lane.section.clone(),
        diff_only: lane.body_str("evidenceClass") == "diff-only",
        metadata,
        fate,
    }
}
