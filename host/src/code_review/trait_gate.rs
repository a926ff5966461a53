//! The `supportsReviewerLanes` trait (upstream-since-2026-08.md §8.1): a capability step may
//! hand its changed files to reviewer lanes only when it declares the trait and its hook is
//! active. The dispatcher derives this itself from `(cap-id, point)`, never from the caller.
//!
//! gsd-lane hosts reviewer lanes, not the steps of feature capabilities, so the steps that may
//! dispatch are a fixed table: the upstream's `code-review` capability declares the trait on its
//! `execute:post` step (#4323), active while `workflow.code_review` is not `false`.

use serde_json::Value;

use super::reason::{Rejection, WholeReason};
use crate::config::ProjectConfig;

/// A capability step that declares `supportsReviewerLanes: true`.
struct Step {
    /// Capability id.
    capability: &'static str,
    /// Loop point.
    point: &'static str,
    /// The config key of the step's `when` (the hook is active unless it is `false`).
    when: &'static str,
}

/// The steps that declare the trait.
const STEPS: &[Step] = &[Step {
    capability: "code-review",
    point: "execute:post",
    when: "workflow.code_review",
}];

/// The warning for a `--cap-id` without `--point` (§8.1).
pub const CAP_WITHOUT_POINT: &str =
    "--cap-id was given without --point: give both (e.g. --cap-id code-review --point execute:post)";

/// Checks that the step `(cap_id, point)` declares the trait and is active under `config`.
///
/// # Errors
///
/// `trait_not_enabled` for a missing or unknown cap-id or point, a step without the trait, or
/// a step whose `when` key is `false`.
pub fn check(
    cap_id: Option<&str>,
    point: Option<&str>,
    config: &ProjectConfig,
) -> Result<(), Rejection> {
    let refuse = |detail: String| Err(Rejection::new(WholeReason::TraitNotEnabled, detail));
    let (Some(cap_id), Some(point)) = (cap_id, point) else {
        return refuse(
            "both --cap-id and --point are needed to find the step that dispatches reviewer lanes (--cap-id code-review --point execute:post)".to_owned(),
        );
    };
    let shown = |text: &str| crate::output::neutralize(&text.chars().take(80).collect::<String>());
    let Some(step) = STEPS
        .iter()
        .find(|s| s.capability == cap_id && s.point == point)
    else {
        return refuse(format!(
            "no step ({}, {}) declares supportsReviewerLanes; only (code-review, execute:post) does",
            shown(cap_id),
            shown(point)
        ));
    };
    if config.get(step.when) == Some(&Value::Bool(false)) {
        return refuse(format!(
            "the step ({}, {}) is not active: {} is false in the project config",
            step.capability, step.point, step.when
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(value: serde_json::Value) -> ProjectConfig {
        ProjectConfig::from_value(value)
    }

    #[test]
    fn only_the_code_review_step_dispatches() {
        let none = config(serde_json::json!({}));
        assert!(check(Some("code-review"), Some("execute:post"), &none).is_ok());
        for (cap, point) in [
            (None, None),
            (Some("code-review"), None),
            (None, Some("execute:post")),
            (Some("security"), Some("execute:post")),
            (Some("code-review"), Some("plan:post")),
        ] {
            let err = check(cap, point, &none).expect_err("refused");
            assert_eq!(
                err.reason,
                WholeReason::TraitNotEnabled,
                "{cap:?} {point:?}"
            );
        }
    }

    #[test]
    fn an_inactive_hook_does_not_dispatch() {
        let off = config(serde_json::json!({"workflow": {"code_review": false}}));
        let err = check(Some("code-review"), Some("execute:post"), &off).expect_err("off");
        assert!(err.detail.contains("workflow.code_review"), "{err}");
        let on = config(serde_json::json!({"workflow": {"code_review": true}}));
        assert!(check(Some("code-review"), Some("execute:post"), &on).is_ok());
    }
}
