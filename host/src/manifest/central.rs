//! The central configuration schema (manifest.md Appendix B): keys no capability may own.

/// Exact central keys.
pub const EXACT: &[&str] = &[
    "mode",
    "granularity",
    "parallelization",
    "commit_docs",
    "model_profile",
    "search_gitignored",
    "brave_search",
    "firecrawl",
    "exa_search",
    "tavily_search",
    "ref_search",
    "perplexity",
    "jina",
    "workflow.plan_check",
    "workflow.verifier",
    "workflow.auto_advance",
    "workflow.node_repair",
    "workflow.node_repair_budget",
    "workflow.smart_zone_tokens",
    "workflow.human_verify_mode",
    "workflow.text_mode",
    "workflow.research_before_questions",
    "workflow.discuss_mode",
    "workflow.skip_discuss",
    "workflow.auto_prune_state",
    "workflow.use_worktrees",
    "workflow.worktree_skip_hooks",
    "workflow.code_review_command",
    "workflow.plan_bounce",
    "workflow.plan_bounce_script",
    "workflow.plan_bounce_passes",
    "workflow.plan_chunked",
    "workflow.specless_probe_fallback",
    "workflow.plan_review_convergence",
    "code_quality.fallow.enabled",
    "code_quality.fallow.scope",
    "code_quality.fallow.profile",
    "code_quality.fallow.mcp",
    "ship.pr_body_sections",
    "git.branching_strategy",
    "git.base_branch",
    "git.create_tag",
    "git.phase_branch_template",
    "git.milestone_branch_template",
    "git.quick_branch_template",
    "planning.commit_docs",
    "planning.search_gitignored",
    "planning.sub_repos",
    "review.default_reviewers",
    "review.max_prompt_tokens",
    "review.max_prompt_tokens_per_reviewer",
    // How much of each review REVIEWS.md shows (gsd-lane; issue 25 item 3).
    "review.max_inline_bytes",
    // The lane sandbox (gsd-lane): no capability may own or default these.
    "review.sandbox",
    "review.allow_repository_writes",
    // Read by gsd-lane itself: a lane owning one could give it a default (lower the panel's
    // quorum, lift the lane bound).
    "review.parallel_lanes",
    "review.quorum",
    "workflow.cross_ai_execution",
    "workflow.cross_ai_command",
    "workflow.cross_ai_timeout",
    "workflow.subagent_timeout",
    "workflow.test_gate_timeout",
    "workflow.test_command",
    "workflow.build_command",
    "workflow.mvp_mode",
    "workflow.context_guard_mode",
    "executor.stall_detect_interval_minutes",
    "executor.stall_threshold_minutes",
    "planner.stall_detect_interval_minutes",
    "planner.stall_threshold_minutes",
    "workflow.inline_plan_threshold",
    "hooks.context_warnings",
    "hooks.workflow_guard",
    "workflow.context_coverage_gate",
    "statusline.show_last_command",
    "statusline.context_position",
    "statusline.show_context_tokens",
    "statusline.state_format",
    "statusline.show_git",
    "workflow.max_discuss_passes",
    "features.thinking_partner",
    "context",
    "features.global_learnings",
    "learnings.max_inject",
    "project_code",
    "phase_id_convention",
    "phase_naming",
    "manager.flags.discuss",
    "manager.flags.plan",
    "manager.flags.execute",
    "response_language",
    "context_window",
    "graphify.build_timeout",
    "graphify.auto_update",
    "graphify.graph_path",
    "claude_md_path",
    "claude_md_assembly.mode",
    "runtime",
    "resolve_model_ids",
    "effort.default",
    "fast_mode.enabled",
    "plan_review.source_grounding",
    "plan_review.source_grounding_authority",
    "model_policy.provider",
    "model_policy.budget",
    "model_policy.high",
    "model_policy.medium",
    "model_policy.low",
    "agent_skills_security.trusted_global_roots",
    "capabilities.strict_known_registries",
    "capabilities.auto_update",
    "security.injection_blocking",
];

/// One dot-separated segment of a central pattern.
#[derive(Debug, Clone, Copy)]
enum Part {
    /// Exactly this text.
    Lit(&'static str),
    /// One or more of `[a-zA-Z0-9_]`, plus `-` when the flag is set.
    Word { dash: bool },
    /// One of these words.
    OneOf(&'static [&'static str]),
}

use Part::{Lit, OneOf, Word};

const PHASES: &[&str] = &[
    "planning",
    "discuss",
    "research",
    "execution",
    "verification",
    "completion",
];
const TIERS: &[&str] = &["light", "standard", "heavy"];
const MODEL_TIERS: &[&str] = &["opus", "sonnet", "haiku"];
const ANY: Part = Word { dash: true };
const UNDERSCORE_WORD: Part = Word { dash: false };

/// The 14 central patterns of Appendix B, one alternative per row (the `dynamic_routing`
/// pattern has two shapes).
const PATTERNS: &[&[Part]] = &[
    &[Lit("agent_skills"), ANY],
    &[Lit("features"), UNDERSCORE_WORD],
    &[Lit("claude_md_assembly"), Lit("blocks"), UNDERSCORE_WORD],
    &[Lit("model_profile_overrides"), ANY, OneOf(MODEL_TIERS)],
    &[Lit("models"), OneOf(PHASES)],
    &[Lit("granularities"), OneOf(PHASES)],
    &[
        Lit("dynamic_routing"),
        OneOf(&[
            "enabled",
            "escalate_on_failure",
            "max_escalations",
            "provider_escalation",
        ]),
    ],
    &[Lit("dynamic_routing"), Lit("tier_models"), OneOf(TIERS)],
    &[Lit("model_overrides"), ANY],
    &[Lit("effort"), Lit("routing_tier_defaults"), OneOf(TIERS)],
    &[Lit("effort"), Lit("agent_overrides"), ANY],
    &[Lit("fast_mode"), Lit("routing_tier_defaults"), OneOf(TIERS)],
    &[Lit("fast_mode"), Lit("agent_overrides"), ANY],
    &[
        Lit("review"),
        Lit("reviewer_instances"),
        ANY,
        OneOf(&["cli", "model", "agent"]),
    ],
    &[
        Lit("model_policy"),
        Lit("runtime_tiers"),
        ANY,
        OneOf(MODEL_TIERS),
    ],
];

fn part_matches(part: Part, segment: &str) -> bool {
    match part {
        Lit(text) => segment == text,
        Word { dash } => {
            !segment.is_empty()
                && segment
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || (dash && c == '-'))
        }
        OneOf(words) => words.contains(&segment),
    }
}

/// True when `key` is an exact central key.
pub fn is_exact(key: &str) -> bool {
    EXACT.contains(&key)
}

/// True when `key` is matched by a central pattern.
pub fn matches_pattern(key: &str) -> bool {
    let segments: Vec<&str> = key.split('.').collect();
    PATTERNS.iter().any(|pattern| {
        pattern.len() == segments.len()
            && pattern
                .iter()
                .zip(&segments)
                .all(|(part, segment)| part_matches(*part, segment))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_appendix() {
        // Appendix B's 106 keys, the two keys of the lane sandbox and three more keys gsd-lane
        // reads (the lane bound, the quorum, the inline bound of REVIEWS.md).
        assert_eq!(EXACT.len(), 111);
        assert!(EXACT.contains(&"review.max_inline_bytes"));
        assert!(EXACT.contains(&"review.sandbox"));
        assert!(EXACT.contains(&"review.allow_repository_writes"));
    }

    #[test]
    fn every_key_the_host_reads_is_reserved() {
        for key in [
            crate::review::parallel::KEY,
            crate::verdict::quorum::KEY,
            crate::review::captured::KEY,
            "review.max_prompt_tokens",
            "review.sandbox",
            "review.allow_repository_writes",
        ] {
            assert!(is_exact(key), "{key} must be a central key");
        }
    }

    #[test]
    fn patterns() {
        assert!(matches_pattern("review.reviewer_instances.acme.cli"));
        assert!(matches_pattern("dynamic_routing.tier_models.heavy"));
        assert!(matches_pattern("dynamic_routing.enabled"));
        assert!(matches_pattern("features.x_y"));
        assert!(!matches_pattern("features.x-y"));
        assert!(!matches_pattern("review.reviewer_instances.acme.binary"));
        assert!(!matches_pattern("review.models.acme"));
        assert!(matches_pattern("model_profile_overrides.claude.opus"));
    }
}
