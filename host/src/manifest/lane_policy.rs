//! The lane-declared run policy upstream added after 2026-08 (upstream-since-2026-08.md §1, §5,
//! §7): `timeoutConfigKey`, `effortConfigKey` and `defaultEffort`, checked (validation) and
//! typed ([`LanePolicy`]); how they resolve against the config is [`LanePolicy::timeout_ms`] and
//! [`LanePolicy::effort`].

use serde_json::{Map, Value};

use super::checker::Checker;
use super::diagnostic::{Code, Diagnostic};
use super::path::FieldPath;
use super::vocab;
use crate::config::ProjectConfig;

/// The effort levels a config key may hold (upstream #4275: the declarable ones and `inherit`).
pub const CONFIGURABLE_EFFORT: [&str; 7] = [
    "minimal", "low", "medium", "high", "xhigh", "max", "inherit",
];

/// Checks the three optional fields of a `reviewer` object.
pub(crate) fn check(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    for (key, code) in [
        ("timeoutConfigKey", Code::RbTimeoutkey),
        ("effortConfigKey", Code::RbEffortkey),
    ] {
        let value = object.get(key);
        if !matches!(value, None | Some(Value::Null))
            && !matches!(value, Some(Value::String(text)) if !text.is_empty())
        {
            checker.error(
                code,
                at.key(key),
                "must be a dotted config key or null",
                value,
            );
        }
    }
    let default = object.get("defaultEffort");
    match default {
        None | Some(Value::Null) => {}
        Some(value) if vocab::is_member(&vocab::DEFAULT_EFFORT, Some(value)) => {
            if matches!(object.get("effortConfigKey"), None | Some(Value::Null)) {
                checker.push(Diagnostic::error(
                    Code::RbDefaulteffort,
                    at.key("defaultEffort"),
                    "is declared without reviewer.effortConfigKey, so the level could never be \
                     overridden; declare effortConfigKey (review.effort.<slug>) or drop \
                     defaultEffort",
                ));
            }
        }
        Some(value) => checker.push(
            Diagnostic::error(
                Code::RbDefaulteffort,
                at.key("defaultEffort"),
                "must be one of minimal/low/medium/high/xhigh/max or null",
            )
            .got(Some(value)),
        ),
    }
}

/// Where a lane's effort level came from (upstream #4275 §7.3 step 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffortSource {
    /// The config key the lane names held a valid level.
    Config,
    /// The lane's `defaultEffort`.
    LaneDefault,
}

/// The lane-declared policy of one `reviewer` body, typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LanePolicy {
    /// Dotted config key whose positive number of seconds overrides `timeoutFloorMs`.
    pub timeout_config_key: Option<String>,
    /// Dotted config key holding the lane's review effort level.
    pub effort_config_key: Option<String>,
    /// The lane's own effort level when the config sets none (one of [`vocab::DEFAULT_EFFORT`]).
    pub default_effort: Option<String>,
}

impl LanePolicy {
    /// Reads the three fields leniently: anything but a non-empty string (a declarable level
    /// for `defaultEffort`) is absent, as the validator would have refused it.
    pub fn of(body: &Map<String, Value>) -> LanePolicy {
        let key = |name: &str| {
            body.get(name)
                .and_then(Value::as_str)
                .filter(|text| !text.is_empty())
                .map(str::to_owned)
        };
        LanePolicy {
            timeout_config_key: key("timeoutConfigKey"),
            effort_config_key: key("effortConfigKey"),
            default_effort: key("defaultEffort")
                .filter(|level| vocab::DEFAULT_EFFORT.contains(&level.as_str())),
        }
    }

    /// The outer timeout in milliseconds (upstream #4083 §5.2): the configured number of
    /// seconds × 1000 when the key holds a finite JSON number > 0 (fractions allowed), else
    /// `floor_ms`. Strings, booleans, 0 and negatives never count.
    pub fn timeout_ms(&self, floor_ms: u64, config: &ProjectConfig) -> u64 {
        let seconds = self
            .timeout_config_key
            .as_deref()
            .and_then(|key| config.get(key))
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s > 0.0);
        match seconds {
            // Bounded to what the clock and the kill path can represent (about 285 years).
            Some(s) => (s * 1000.0).clamp(1.0, 9_007_199_254_740_991.0) as u64,
            None => floor_ms,
        }
    }

    /// The effort level the lane runs at, with where it came from (upstream #4275 §7.3): a
    /// configured value exactly (case-sensitively) one of [`CONFIGURABLE_EFFORT`], else the
    /// lane default, else none; `inherit` (configured) means none even over a default. `None`
    /// when no effort argument is to be passed.
    pub fn effort(&self, config: &ProjectConfig) -> Option<(String, EffortSource)> {
        let configured = self
            .effort_config_key
            .as_deref()
            .and_then(|key| config.configured_string(key))
            .filter(|level| CONFIGURABLE_EFFORT.contains(&level.as_str()));
        let (level, source) = match configured {
            Some(level) => (level, EffortSource::Config),
            None => (self.default_effort.clone()?, EffortSource::LaneDefault),
        };
        (level != "inherit").then_some((level, source))
    }
}

/// `{{nativeTimeout}}` (upstream #4083 §5.3): `max(1, floor(ms / 1000) - 60)` seconds, written
/// with an `s`.
pub fn native_timeout(timeout_ms: u64) -> String {
    format!("{}s", (timeout_ms / 1000).saturating_sub(60).max(1))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(body: Value) -> LanePolicy {
        LanePolicy::of(body.as_object().expect("object"))
    }

    fn config(value: Value) -> ProjectConfig {
        ProjectConfig::from_value(value)
    }

    #[test]
    fn timeout_resolution_follows_section_5_2() {
        let lane = policy(json!({"timeoutConfigKey": "review.timeouts.x"}));
        let at =
            |v: Value| lane.timeout_ms(600_000, &config(json!({"review": {"timeouts": {"x": v}}})));
        assert_eq!(lane.timeout_ms(600_000, &ProjectConfig::empty()), 600_000);
        assert_eq!(at(json!(900)), 900_000);
        assert_eq!(at(json!(1)), 1_000);
        assert_eq!(at(json!(0.5)), 500);
        for unset in [
            json!(0),
            json!(-5),
            json!("900"),
            json!(true),
            json!({}),
            json!(null),
        ] {
            assert_eq!(at(unset.clone()), 600_000, "{unset}");
        }
        assert_eq!(at(json!(1e300)), 9_007_199_254_740_991);
        // No key declared: the config is never read.
        let keyless = policy(json!({}));
        assert_eq!(
            keyless.timeout_ms(5, &config(json!({"review": {"timeouts": {"x": 9}}}))),
            5
        );
    }

    #[test]
    fn native_timeout_reference_points() {
        assert_eq!(native_timeout(600_000), "540s");
        assert_eq!(native_timeout(900_000), "840s");
        for ms in [30_000, 59_000, 60_000, 61_000, 0, 999] {
            assert_eq!(native_timeout(ms), "1s", "{ms}");
        }
        assert_eq!(native_timeout(121_000), "61s");
        assert_eq!(
            native_timeout(u64::MAX),
            format!("{}s", u64::MAX / 1000 - 60)
        );
    }

    #[test]
    fn effort_resolution_follows_section_7_3() {
        let lane = policy(json!({"effortConfigKey": "review.effort.x", "defaultEffort": "high"}));
        let with = |v: Value| lane.effort(&config(json!({"review": {"effort": {"x": v}}})));
        assert_eq!(
            lane.effort(&ProjectConfig::empty()),
            Some(("high".to_owned(), EffortSource::LaneDefault))
        );
        assert_eq!(
            with(json!("xhigh")),
            Some(("xhigh".to_owned(), EffortSource::Config))
        );
        assert_eq!(with(json!("inherit")), None);
        for invalid in [
            json!("hihg"),
            json!("HIGH"),
            json!(""),
            json!("null"),
            json!(3),
        ] {
            assert_eq!(
                with(invalid.clone()),
                Some(("high".to_owned(), EffortSource::LaneDefault)),
                "{invalid}"
            );
        }
        let no_default = policy(json!({"effortConfigKey": "review.effort.x"}));
        assert_eq!(no_default.effort(&ProjectConfig::empty()), None);
        assert_eq!(
            policy(json!({"defaultEffort": "inherit"})).default_effort,
            None
        );
    }

    fn codes(body: Value) -> Vec<(Code, String)> {
        let mut checker = Checker::new();
        check(
            &mut checker,
            body.as_object().expect("object"),
            &FieldPath::root().key("reviewer"),
        );
        checker
            .found
            .iter()
            .map(|d| (d.code, d.field.to_string()))
            .collect()
    }

    #[test]
    fn validation_refuses_what_section_13_refuses() {
        assert!(codes(json!({})).is_empty());
        assert!(
            codes(json!({"timeoutConfigKey": null, "effortConfigKey": null,
                              "defaultEffort": null}))
            .is_empty()
        );
        assert!(codes(json!({"timeoutConfigKey": "review.timeouts.a",
                              "effortConfigKey": "review.effort.a", "defaultEffort": "max"}))
        .is_empty());
        assert_eq!(
            codes(json!({"timeoutConfigKey": "", "effortConfigKey": 5})),
            [
                (Code::RbTimeoutkey, "reviewer.timeoutConfigKey".to_owned()),
                (Code::RbEffortkey, "reviewer.effortConfigKey".to_owned())
            ]
        );
        for bad in [json!("inherit"), json!("HIGH"), json!(""), json!(1)] {
            assert_eq!(
                codes(json!({"effortConfigKey": "k", "defaultEffort": bad})),
                [(Code::RbDefaulteffort, "reviewer.defaultEffort".to_owned())]
            );
        }
        assert_eq!(
            codes(json!({"defaultEffort": "high"})),
            [(Code::RbDefaulteffort, "reviewer.defaultEffort".to_owned())]
        );
    }
}
