//! The facts cross-capability rules need from each member of a merged set.

use serde_json::Value;

/// The uniqueness keys of a lane (only well-formed values take part).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LaneKeys {
    /// `reviewer.slug`, when a non-empty string.
    pub slug: Option<String>,
    /// `reviewer.flags` entries that are non-empty strings.
    pub flags: Vec<String>,
    /// `reviewer.reviewsSection`, when a non-empty string.
    pub section: Option<String>,
}

/// What one capability contributes to cross-capability checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapabilityFacts {
    /// Capability id (`(unknown)` when not a string).
    pub id: String,
    /// Tier rank: core 0, standard 1, full 2 (`None` when invalid).
    pub tier: Option<u8>,
    /// `requires` entries that are strings.
    pub requires: Vec<String>,
    /// Config keys the capability declares.
    pub config_keys: Vec<String>,
    /// Lane keys, when `reviewer` is an object.
    pub lane: Option<LaneKeys>,
}

fn tier_rank(tier: Option<&str>) -> Option<u8> {
    match tier? {
        "core" => Some(0),
        "standard" => Some(1),
        "full" => Some(2),
        _ => None,
    }
}

/// The string elements of an array value (anything else, and non-string elements, left out).
pub fn string_items(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn non_empty(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

impl CapabilityFacts {
    /// Extracts the facts from any manifest value; wrong types are simply left out.
    pub fn of(manifest: &Value) -> CapabilityFacts {
        let lane = manifest
            .get("reviewer")
            .filter(|body| body.is_object())
            .map(|body| LaneKeys {
                slug: non_empty(body.get("slug")),
                flags: string_items(body.get("flags"))
                    .into_iter()
                    .filter(|flag| !flag.is_empty())
                    .collect(),
                section: non_empty(body.get("reviewsSection")),
            });
        CapabilityFacts {
            id: super::DeclaredHeader::of(manifest)
                .id
                .unwrap_or_else(|| "(unknown)".to_owned()),
            tier: tier_rank(manifest.get("tier").and_then(Value::as_str)),
            requires: string_items(manifest.get("requires")),
            config_keys: manifest
                .get("config")
                .and_then(Value::as_object)
                .map(|slices| slices.keys().cloned().collect())
                .unwrap_or_default(),
            lane,
        }
    }

    fn indexed(id: &str, tier: &str, requires: &[&str], keys: &[&str]) -> CapabilityFacts {
        CapabilityFacts {
            id: id.to_owned(),
            tier: tier_rank(Some(tier)),
            requires: requires.iter().map(|s| (*s).to_owned()).collect(),
            config_keys: keys.iter().map(|s| (*s).to_owned()).collect(),
            lane: None,
        }
    }
}

/// `(id, tier, requires, owned config keys)` of the first-party capabilities that are not
/// lanes (manifest.md Appendix A); the twelve lanes are compiled in as full manifests.
const NON_LANE_INDEX: &[(&str, &str, &[&str], &[&str])] = &[
    (
        "ai-integration",
        "full",
        &[],
        &[
            "workflow.ai_integration_phase",
            "workflow.api_coverage_gate",
        ],
    ),
    (
        "assumption-delta",
        "full",
        &[],
        &["workflow.assumption_delta"],
    ),
    ("audit", "full", &[], &[]),
    ("augment", "core", &[], &[]),
    ("broken-windows", "full", &[], &["workflow.windows_enforce"]),
    (
        "claude-orchestration",
        "full",
        &[],
        &[
            "claude_orchestration.enabled",
            "claude_orchestration.execution_backend",
            "claude_orchestration.min_agent_sdk_version",
        ],
    ),
    ("cline", "core", &[], &[]),
    (
        "code-review",
        "full",
        &[],
        &["workflow.code_review", "workflow.code_review_depth"],
    ),
    ("codebuddy", "core", &[], &[]),
    ("copilot", "core", &[], &[]),
    (
        "drift",
        "full",
        &[],
        &[
            "workflow.drift_threshold",
            "workflow.drift_action",
            "workflow.schema_drift_gate",
            "workflow.plan_drift_precheck",
        ],
    ),
    (
        "external-job",
        "full",
        &[],
        &[
            "external_job.enabled",
            "external_job.backend",
            "external_job.artifact_dir",
            "external_job.submit_timeout_ms",
            "external_job.poll_timeout_ms",
        ],
    ),
    (
        "gap-analysis",
        "standard",
        &[],
        &["workflow.post_planning_gaps"],
    ),
    ("graphify", "full", &[], &["graphify.enabled"]),
    ("hermes", "core", &[], &[]),
    ("intel", "full", &[], &["intel.enabled"]),
    ("kilo", "core", &[], &[]),
    ("kimi", "core", &[], &[]),
    (
        "mempalace",
        "full",
        &[],
        &[
            "mempalace.enabled",
            "mempalace.memory_mode",
            "mempalace.wing",
            "mempalace.recall_on_discuss",
            "mempalace.recall_on_plan",
            "mempalace.capture_artifacts",
            "mempalace.mirror_kg",
            "mempalace.cross_project_tunnels",
            "mempalace.diary_journal",
            "mempalace.auto_capture_hooks",
        ],
    ),
    ("nyquist", "full", &[], &["workflow.nyquist_validation"]),
    (
        "pattern-mapper",
        "full",
        &["research"],
        &["workflow.pattern_mapper"],
    ),
    ("pi", "core", &[], &[]),
    (
        "profile-pipeline",
        "full",
        &[],
        &["profile-pipeline.enabled"],
    ),
    ("research", "standard", &[], &["workflow.research"]),
    (
        "schema-gate",
        "full",
        &[],
        &["workflow.schema_push_detection"],
    ),
    (
        "security",
        "full",
        &[],
        &[
            "workflow.security_enforcement",
            "workflow.security_asvs_level",
            "workflow.security_block_on",
        ],
    ),
    ("tdd", "full", &[], &["workflow.tdd_mode"]),
    ("trae", "core", &[], &[]),
    (
        "ui",
        "full",
        &[],
        &[
            "workflow.ui_phase",
            "workflow.ui_review",
            "workflow.ui_safety_gate",
        ],
    ),
    ("vscode", "core", &[], &[]),
    ("windsurf", "core", &[], &[]),
    ("zcode", "core", &[], &[]),
];

/// Facts of the 32 first-party capabilities that are not lanes.
pub fn non_lane_first_party() -> Vec<CapabilityFacts> {
    NON_LANE_INDEX
        .iter()
        .map(|(id, tier, requires, keys)| CapabilityFacts::indexed(id, tier, requires, keys))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_has_the_thirty_two_non_lane_capabilities() {
        let index = non_lane_first_party();
        assert_eq!(index.len(), 32);
        let keys: usize = index.iter().map(|facts| facts.config_keys.len()).sum();
        // 58 owned keys in all, 15 of them owned by the lanes.
        assert_eq!(keys, 58 - 15);
    }
}
