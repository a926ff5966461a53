//! The result of a code-review call (upstream-since-2026-08.md §8.2, §8.4): the JSON object the
//! workflow's reducer reads (`ok`, the whole-call `reason`, one entry per lane with its
//! `reviewPath` or its reason), its human form, and the exit status.

use std::path::PathBuf;

use serde::Serialize;

use super::findings::{Finding, Refused};
use super::reason::Rejection;
use crate::output::{self, neutralize};
use crate::review::notice::{Level, Notice, Notices};

/// One lane's outcome.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneOutcome {
    /// The lane's slug (or instance name).
    pub slug: String,
    /// True when it produced a real review.
    pub ok: bool,
    /// Why not (`prompt_channel_unsupported`, `budget_exceeded`, `invoke_failed`, a refusal
    /// reason of the run pipeline, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What exactly went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Its review, copied into the call's run dir (untrusted: the lane wrote it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_path: Option<PathBuf>,
    /// Findings read from the review (unverified).
    pub findings: Vec<Finding>,
    /// Finding lines refused, with why.
    pub refused_findings: Vec<Refused>,
}

impl LaneOutcome {
    /// A lane that did not produce a review.
    pub fn failed(slug: &str, reason: &str, detail: impl Into<String>) -> LaneOutcome {
        LaneOutcome {
            slug: slug.to_owned(),
            ok: false,
            reason: Some(reason.to_owned()),
            detail: Some(detail.into()),
            ..LaneOutcome::default()
        }
    }
}

/// The whole call's result.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Dispatch {
    /// True when every named lane produced a real review and the findings file was written
    /// (exit 0).
    pub ok: bool,
    /// The whole-call reason when nothing was dispatched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// What was wrong with the call, or what went wrong after dispatch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The call's run dir (the request and the lanes' review copies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_dir: Option<PathBuf>,
    /// The request the lanes were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_path: Option<PathBuf>,
    /// The findings file (REVIEWS.md form, with the panel verdict), when written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings_path: Option<PathBuf>,
    /// The command that continues this call (only the lanes without a finished review run
    /// again), when some lane did not finish.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_with: Option<String>,
    /// Every named lane, in the order named.
    pub lanes: Vec<LaneOutcome>,
    /// The exit status.
    pub status: u8,
}

impl Dispatch {
    /// A call refused as a whole (exit 2).
    pub fn rejected(rejection: Rejection) -> Dispatch {
        Dispatch {
            ok: false,
            reason: Some(rejection.reason.as_str()),
            detail: Some(rejection.detail),
            status: 2,
            ..Dispatch::default()
        }
    }

    /// Prints the result: the JSON object on stdout, or the human form (the reducer's lines
    /// of §8.4: warnings and how to resume said through `notices`, printed on stderr before
    /// the `- <slug>: <reviewPath>` lines on stdout).
    pub fn print(&self, json: bool, notices: &Notices) {
        if let Some(command) = &self.resume_with {
            notices.say(Notice::new(
                Level::CodeReview,
                format!("resume with: {command}"),
            ));
        }
        if json {
            notices.flush();
            output::print_json(&serde_json::to_value(self).unwrap_or_default());
            return;
        }
        if let (Some(reason), Some(detail)) = (self.reason, &self.detail) {
            notices.warn(format!(
                "external reviewer dispatch rejected ({reason}): {}",
                neutralize(detail)
            ));
        }
        let mut text = String::new();
        for lane in &self.lanes {
            match (&lane.review_path, &lane.reason) {
                (Some(path), _) if lane.ok => text.push_str(&format!(
                    "- {}: {} ({} findings, {} refused)\n",
                    neutralize(&lane.slug),
                    neutralize(&path.display().to_string()),
                    lane.findings.len(),
                    lane.refused_findings.len()
                )),
                (_, reason) => notices.warn(format!(
                    "external reviewer lane '{}' failed ({}: {})",
                    neutralize(&lane.slug),
                    reason.as_deref().unwrap_or("failed"),
                    neutralize(lane.detail.as_deref().unwrap_or(""))
                )),
            }
        }
        if let Some(path) = &self.findings_path {
            text.push_str(&format!(
                "Findings (UNVERIFIED: re-open each cited line before accepting it): {}\n",
                neutralize(&path.display().to_string())
            ));
        }
        notices.flush();
        output::print(&text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code_review::reason::WholeReason;

    #[test]
    fn a_refused_call_has_the_reducer_shape() {
        let refused = Dispatch::rejected(Rejection::new(WholeReason::InvalidPaths, "bad path"));
        assert_eq!(refused.status, 2);
        assert_eq!(
            serde_json::to_value(&refused).expect("json"),
            serde_json::json!({"ok": false, "reason": "invalid_paths", "detail": "bad path",
                               "lanes": [], "status": 2})
        );
    }

    #[test]
    fn lane_entries_use_the_workflow_key_names() {
        let lane = LaneOutcome {
            slug: "codex".into(),
            ok: true,
            review_path: Some(PathBuf::from("/run/gsd-code-review-codex.md")),
            ..LaneOutcome::default()
        };
        let value = serde_json::to_value(&lane).expect("json");
        assert_eq!(
            value,
            serde_json::json!({"slug": "codex", "ok": true,
                               "reviewPath": "/run/gsd-code-review-codex.md",
                               "findings": [], "refusedFindings": []})
        );
        let failed = LaneOutcome::failed("coderabbit", "prompt_channel_unsupported", "none");
        let value = serde_json::to_value(&failed).expect("json");
        assert_eq!(value["reason"], "prompt_channel_unsupported");
        assert!(value.get("reviewPath").is_none());
    }
}
