//! The quorum: `review.quorum` (an integer ≥ 1, default 2) substantive reviews, capped at the
//! number of reviewers in the file (the larger of the sections found and the frontmatter's
//! `reviewers:` list, so a section hidden by broken Markdown still counts against the panel;
//! at least 1, so an empty panel never meets it).

use serde_json::Value;

use super::model::{Quorum, ReviewerVerdict};
use crate::config::ProjectConfig;

/// The configuration key.
pub const KEY: &str = "review.quorum";
/// Its default.
pub const DEFAULT: u64 = 2;

/// `review.quorum` is set to something other than an integer ≥ 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadQuorum {
    /// The value as JSON.
    pub value: String,
}

impl std::fmt::Display for BadQuorum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            ".planning/config.json: {KEY} is {}, expected an integer of at least 1 (the number of substantive, source-grounded reviews a panel needs; default {DEFAULT})",
            self.value
        )
    }
}

impl std::error::Error for BadQuorum {}

/// The configured quorum.
///
/// # Errors
///
/// The key is set (not `null`) to anything but an integer ≥ 1.
pub fn configured(config: &ProjectConfig) -> Result<u64, BadQuorum> {
    match config.get(KEY) {
        None | Some(Value::Null) => Ok(DEFAULT),
        Some(value) => value.as_u64().filter(|&n| n >= 1).ok_or_else(|| BadQuorum {
            value: value.to_string(),
        }),
    }
}

/// The quorum of `reviewers` under `wanted`, with `listed` reviewers in the frontmatter.
pub fn quorum(wanted: u64, reviewers: &[ReviewerVerdict], listed: usize) -> Quorum {
    let panel = reviewers.len().max(listed).max(1);
    let required = usize::try_from(wanted).unwrap_or(usize::MAX).min(panel);
    let substantive = reviewers.iter().filter(|r| r.substantive()).count();
    Quorum {
        required,
        substantive,
        met: substantive >= required,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_values() {
        let of =
            |v: Value| configured(&ProjectConfig::from_value(json!({"review": {"quorum": v}})));
        assert_eq!(configured(&ProjectConfig::empty()), Ok(2));
        assert_eq!(of(Value::Null), Ok(2));
        assert_eq!(of(json!(3)), Ok(3));
        for bad in [json!(0), json!(-1), json!(1.5), json!("2"), json!(true)] {
            let err = of(bad).expect_err("refused");
            assert!(err.to_string().contains("review.quorum is"), "{err}");
        }
    }
}
