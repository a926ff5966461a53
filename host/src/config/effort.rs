//! Effort levels and their per-host effort argv (invocation.md §3.5 step 2, with the clamps
//! of upstream #4275 / #3765, `spec/upstream-since-2026-08.md` §7.3).
//!
//! Which level a lane runs at is the lane's own business (`effortConfigKey`, `defaultEffort`,
//! [`crate::manifest::lane_policy::LanePolicy::effort`]); no agent's effort settings are read.

use std::fmt;

/// Reasoning effort level accepted in `effort.*` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EffortLevel {
    /// `minimal`.
    Minimal,
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
    /// `xhigh`.
    Xhigh,
    /// `max`.
    Max,
}

impl EffortLevel {
    /// Lists every level from lowest to highest.
    pub const ALL: [EffortLevel; 6] = [
        EffortLevel::Minimal,
        EffortLevel::Low,
        EffortLevel::Medium,
        EffortLevel::High,
        EffortLevel::Xhigh,
        EffortLevel::Max,
    ];

    /// Parses an exact, case-sensitive level name; anything else is `None`.
    pub fn parse(text: &str) -> Option<EffortLevel> {
        EffortLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == text)
    }

    /// Returns the level's config and argv spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EffortLevel::Minimal => "minimal",
            EffortLevel::Low => "low",
            EffortLevel::Medium => "medium",
            EffortLevel::High => "high",
            EffortLevel::Xhigh => "xhigh",
            EffortLevel::Max => "max",
        }
    }
}

impl fmt::Display for EffortLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Renders `level` for `host` after that host's clamp; unknown hosts get an empty list.
pub fn render_effort(level: EffortLevel, host: &str) -> Vec<String> {
    rendered(level, host).map_or_else(Vec::new, |(argv, _)| argv)
}

/// The level `host` actually runs at when asked for `level` (its clamp), or `None` for a host
/// that takes no effort argument: what REVIEWS.md records as ` (reasoning=<level>)`.
pub fn rendered_level(level: EffortLevel, host: &str) -> Option<EffortLevel> {
    rendered(level, host).map(|(_, ran)| ran)
}

/// The argv and the clamped level of `level` on `host`.
fn rendered(level: EffortLevel, host: &str) -> Option<(Vec<String>, EffortLevel)> {
    let ran = match host {
        "claude" => clamp_claude(level),
        "codex" => clamp_codex(level),
        "opencode" => level,
        _ => return None,
    };
    Some((render_clamped(ran, host), ran))
}

/// The argv of an already clamped level.
fn render_clamped(level: EffortLevel, host: &str) -> Vec<String> {
    match host {
        "claude" => pair("--effort", level.as_str().to_owned()),
        "codex" => pair("-c", format!("model_reasoning_effort={level}")),
        "opencode" => pair("--variant", level.as_str().to_owned()),
        _ => Vec::new(),
    }
}

/// Raises `minimal` to `low`, the lowest level the `claude` CLI accepts.
fn clamp_claude(level: EffortLevel) -> EffortLevel {
    match level {
        EffortLevel::Minimal => EffortLevel::Low,
        other => other,
    }
}

/// Raises `minimal` to `low`, the lowest level `codex` accepts; `max` passes (upstream #3765
/// removed the baseline `max`→`xhigh` clamp).
fn clamp_codex(level: EffortLevel) -> EffortLevel {
    match level {
        EffortLevel::Minimal => EffortLevel::Low,
        other => other,
    }
}

/// Builds a flag and its value as two argv elements.
fn pair(flag: &str, value: String) -> Vec<String> {
    vec![flag.to_owned(), value]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_as_str_round_trip() {
        for l in EffortLevel::ALL {
            assert_eq!(EffortLevel::parse(l.as_str()), Some(l));
            assert_eq!(l.to_string(), l.as_str());
        }
        for bad in [
            "", "LOW", " low", "low ", "x-high", "none", "maximum", "inherit",
        ] {
            assert_eq!(EffortLevel::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn claude_clamps_minimal_to_low() {
        assert_eq!(
            render_effort(EffortLevel::Minimal, "claude"),
            ["--effort", "low"]
        );
        assert_eq!(
            render_effort(EffortLevel::Max, "claude"),
            ["--effort", "max"]
        );
        assert_eq!(
            render_effort(EffortLevel::Xhigh, "claude"),
            ["--effort", "xhigh"]
        );
        assert_eq!(
            rendered_level(EffortLevel::Minimal, "claude"),
            Some(EffortLevel::Low)
        );
    }

    #[test]
    fn codex_clamps_minimal_to_low_and_passes_max() {
        // upstream #4275 / #3765: the baseline max→xhigh clamp is gone.
        assert_eq!(
            render_effort(EffortLevel::Max, "codex"),
            ["-c", "model_reasoning_effort=max"]
        );
        assert_eq!(
            render_effort(EffortLevel::Minimal, "codex"),
            ["-c", "model_reasoning_effort=low"]
        );
        assert_eq!(
            render_effort(EffortLevel::Xhigh, "codex"),
            ["-c", "model_reasoning_effort=xhigh"]
        );
        assert_eq!(
            rendered_level(EffortLevel::Minimal, "codex"),
            Some(EffortLevel::Low)
        );
        assert_eq!(
            rendered_level(EffortLevel::Max, "codex"),
            Some(EffortLevel::Max)
        );
    }

    #[test]
    fn opencode_does_not_clamp() {
        assert_eq!(
            render_effort(EffortLevel::Minimal, "opencode"),
            ["--variant", "minimal"]
        );
        assert_eq!(
            render_effort(EffortLevel::Max, "opencode"),
            ["--variant", "max"]
        );
    }

    #[test]
    fn other_hosts_get_nothing() {
        for host in ["gemini", "Claude", "", "kimi-code", "ollama", "opencode "] {
            assert!(
                render_effort(EffortLevel::High, host).is_empty(),
                "{host:?}"
            );
            assert_eq!(rendered_level(EffortLevel::High, host), None, "{host:?}");
        }
    }
}
