//! What the review reads of a lane beyond its slug: its section, evidence class, model key and
//! prompt budget. Every such read of the review pipeline is here, in one place.

use super::budget::{self, Metadata};
use super::reviews_md::{Entry, Fate};
use super::selection::Identity;
use crate::config::ProjectConfig;
use crate::registry::Lane;

/// Whether the lane declares a `modelConfigKey` (an instance's model can reach it).
pub fn accepts_model(lane: &Lane) -> bool {
    lane.model_config_key.is_some()
}

/// The lane's prompt budget `B` when `> 0` (review-workflow.md §8).
pub fn budget_of(lane: &Lane, config: &ProjectConfig) -> Option<i64> {
    crate::plan::prompt_budget(lane, config)
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
        diff_only: lane.evidence_class == crate::manifest::model::EvidenceClass::DiffOnly,
        metadata,
        fate,
        model: None,
        full: None,
    }
}
