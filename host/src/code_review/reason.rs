//! The dispatcher's whole-call reasons (upstream-since-2026-08.md §8.2): why nothing was
//! dispatched. Per-lane reasons are the run pipeline's refusal reasons ([`crate::refusal`])
//! plus the few the dispatcher adds itself ([`LaneReason`]).

use std::fmt;

/// Why a whole `code-review` call was refused before any lane ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WholeReason {
    /// The `(cap-id, point)` step does not declare `supportsReviewerLanes`, or is not active.
    TraitNotEnabled,
    /// No lane was named (no lane flag, empty `--explicit`).
    NoLanesSelected,
    /// The selection could not be made (bad `--explicit`, unusable config, refused request).
    SelectionFailed,
    /// A changed-file path, the repo root, the run dir or `--cwd` is unusable.
    InvalidPaths,
    /// A changed file lies outside the repository root (lexically or after links).
    PathEscapesRepoRoot,
    /// No `--base-sha`.
    MissingProvenance,
    /// The base SHA or the depth is unusable.
    InvalidProvenance,
    /// The prompt could not be written into the run dir.
    PromptWriteFailed,
}

impl WholeReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            WholeReason::TraitNotEnabled => "trait_not_enabled",
            WholeReason::NoLanesSelected => "no_lanes_selected",
            WholeReason::SelectionFailed => "selection_failed",
            WholeReason::InvalidPaths => "invalid_paths",
            WholeReason::PathEscapesRepoRoot => "path_escapes_repo_root",
            WholeReason::MissingProvenance => "missing_provenance",
            WholeReason::InvalidProvenance => "invalid_provenance",
            WholeReason::PromptWriteFailed => "prompt_write_failed",
        }
    }
}

impl fmt::Display for WholeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A whole-call refusal: the reason and what exactly was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The reason.
    pub reason: WholeReason,
    /// What was wrong, naming the value and the fix.
    pub detail: String,
}

impl Rejection {
    /// A rejection for `reason`.
    pub fn new(reason: WholeReason, detail: impl Into<String>) -> Rejection {
        Rejection {
            reason,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.detail)
    }
}

impl std::error::Error for Rejection {}

/// Per-lane reasons the dispatcher adds to the run pipeline's (§8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneReason {
    /// A lane with `promptChannel: none` (coderabbit) cannot read the request.
    PromptChannelUnsupported,
    /// The request is larger than the lane's prompt budget.
    BudgetExceeded,
    /// The lane ran but produced no review (a stub) or failed at run time.
    InvokeFailed,
    /// The named slug is no lane of the merged roster.
    UnknownLane,
    /// The named lane exists but is not active (consent, engines, validation).
    InactiveLane,
    /// The run was interrupted before the lane finished.
    Interrupted,
    /// The lane was not started because another explicitly named one failed.
    Cancelled,
}

impl LaneReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LaneReason::PromptChannelUnsupported => "prompt_channel_unsupported",
            LaneReason::BudgetExceeded => "budget_exceeded",
            LaneReason::InvokeFailed => "invoke_failed",
            LaneReason::UnknownLane => "unknown_lane",
            LaneReason::InactiveLane => "inactive_lane",
            LaneReason::Interrupted => "interrupted",
            LaneReason::Cancelled => "cancelled",
        }
    }
}
