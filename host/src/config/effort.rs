//! Effort level resolution and per-host effort argv (invocation.md §3.5).

use std::fmt;

use serde_json::{Map, Value};

use super::ProjectConfig;

/// Agent role whose effort a review lane uses.
const AGENT_ROLE: &str = "gsd-plan-checker";

/// Routing tier of [`AGENT_ROLE`].
const ROUTING_TIER: &str = "light";

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

/// Resolves the effort level of the `gsd-plan-checker` role (routing tier `light`).
///
/// With an `effort` object in the config: the agent override, else the `light` tier default,
/// else `effort.default`, each only if valid, else `high`. Without one: the built-in `low`.
pub fn effort_level(config: &ProjectConfig) -> EffortLevel {
    match config.get("effort") {
        Some(Value::Object(effort)) => level_from_effort_object(effort),
        _ => EffortLevel::Low,
    }
}

/// Applies rule 1.1 of invocation.md §3.5 to a present `effort` object.
fn level_from_effort_object(effort: &Map<String, Value>) -> EffortLevel {
    member_level(effort, "agent_overrides", AGENT_ROLE)
        .or_else(|| member_level(effort, "routing_tier_defaults", ROUTING_TIER))
        .or_else(|| effort.get("default").and_then(valid_level))
        .unwrap_or(EffortLevel::High)
}

/// Reads `effort[table][key]` as a valid level when `table` is an object.
fn member_level(effort: &Map<String, Value>, table: &str, key: &str) -> Option<EffortLevel> {
    effort
        .get(table)?
        .as_object()?
        .get(key)
        .and_then(valid_level)
}

/// Returns the level named by a JSON string, or `None` for anything else.
fn valid_level(value: &Value) -> Option<EffortLevel> {
    EffortLevel::parse(value.as_str()?)
}

/// Builds the effort argv for a lane slug used as a host id; unknown hosts get an empty list.
pub fn effort_argv(config: &ProjectConfig, host: &str) -> Vec<String> {
    render_effort(effort_level(config), host)
}

/// Renders `level` for `host` after that host's clamp; unknown hosts get an empty list.
pub fn render_effort(level: EffortLevel, host: &str) -> Vec<String> {
    match host {
        "claude" => pair("--effort", clamp_claude(level).as_str().to_owned()),
        "codex" => pair(
            "-c",
            format!("model_reasoning_effort={}", clamp_codex(level)),
        ),
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

/// Lowers `max` to `xhigh`, the highest level `codex` accepts.
fn clamp_codex(level: EffortLevel) -> EffortLevel {
    match level {
        EffortLevel::Max => EffortLevel::Xhigh,
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
    use serde_json::json;

    fn level(config: Value) -> EffortLevel {
        effort_level(&ProjectConfig::from_value(config))
    }

    fn argv(config: Value, host: &str) -> Vec<String> {
        effort_argv(&ProjectConfig::from_value(config), host)
    }

    #[test]
    fn parse_and_as_str_round_trip() {
        for l in EffortLevel::ALL {
            assert_eq!(EffortLevel::parse(l.as_str()), Some(l));
            assert_eq!(l.to_string(), l.as_str());
        }
        for bad in ["", "LOW", " low", "low ", "x-high", "none", "maximum"] {
            assert_eq!(EffortLevel::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn default_config_is_low() {
        assert_eq!(level(json!({})), EffortLevel::Low);
        assert_eq!(argv(json!({}), "claude"), ["--effort", "low"]);
        assert_eq!(
            argv(json!({}), "codex"),
            ["-c", "model_reasoning_effort=low"]
        );
        assert_eq!(argv(json!({}), "opencode"), ["--variant", "low"]);
    }

    #[test]
    fn non_object_effort_uses_builtin_defaults() {
        for effort in [json!("max"), json!(null), json!([]), json!(3)] {
            assert_eq!(level(json!({"effort": effort})), EffortLevel::Low);
        }
    }

    #[test]
    fn empty_effort_object_is_high() {
        assert_eq!(level(json!({"effort": {}})), EffortLevel::High);
    }

    #[test]
    fn effort_default_applies() {
        assert_eq!(
            level(json!({"effort": {"default": "medium"}})),
            EffortLevel::Medium
        );
    }

    #[test]
    fn light_tier_default_beats_default() {
        let config = json!({"effort": {"default": "medium", "routing_tier_defaults": {"light": "minimal", "heavy": "max"}}});
        assert_eq!(level(config), EffortLevel::Minimal);
    }

    #[test]
    fn agent_override_beats_everything() {
        let config = json!({"effort": {
            "default": "medium",
            "routing_tier_defaults": {"light": "minimal"},
            "agent_overrides": {"gsd-plan-checker": "max", "other": "low"}
        }});
        assert_eq!(level(config), EffortLevel::Max);
    }

    #[test]
    fn invalid_values_fall_through() {
        let config = json!({"effort": {
            "default": "xhigh",
            "routing_tier_defaults": {"light": "LOW"},
            "agent_overrides": {"gsd-plan-checker": 3}
        }});
        assert_eq!(level(config), EffortLevel::Xhigh);
        let config = json!({"effort": {
            "default": "bogus",
            "routing_tier_defaults": {"light": null},
            "agent_overrides": {"gsd-plan-checker": "  high "}
        }});
        assert_eq!(level(config), EffortLevel::High);
        let config = json!({"effort": {"default": "medium", "routing_tier_defaults": ["low"], "agent_overrides": "max"}});
        assert_eq!(level(config), EffortLevel::Medium);
        let config = json!({"effort": {"routing_tier_defaults": {"heavy": "max"}, "agent_overrides": {"gsd-executor": "max"}}});
        assert_eq!(level(config), EffortLevel::High);
    }

    #[test]
    fn flat_dotted_effort_key_is_not_matched() {
        assert_eq!(level(json!({"effort.default": "max"})), EffortLevel::Low);
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
    }

    #[test]
    fn codex_clamps_max_to_xhigh() {
        assert_eq!(
            render_effort(EffortLevel::Max, "codex"),
            ["-c", "model_reasoning_effort=xhigh"]
        );
        assert_eq!(
            render_effort(EffortLevel::Minimal, "codex"),
            ["-c", "model_reasoning_effort=minimal"]
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
            assert!(
                argv(json!({"effort": {"default": "max"}}), host).is_empty(),
                "{host:?}"
            );
        }
    }

    #[test]
    fn config_drives_rendered_argv() {
        let config = json!({"effort": {"agent_overrides": {"gsd-plan-checker": "max"}}});
        assert_eq!(argv(config.clone(), "claude"), ["--effort", "max"]);
        assert_eq!(
            argv(config.clone(), "codex"),
            ["-c", "model_reasoning_effort=xhigh"]
        );
        assert_eq!(argv(config, "opencode"), ["--variant", "max"]);
    }
}
