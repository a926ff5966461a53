//! The resolved model of each reviewer (upstream #3649, spec/upstream-since-2026-08.md §3):
//! `{value, source}` per identity, and the `models:` / `model_sources:` maps of the REVIEWS.md
//! frontmatter.
//!
//! What this build records: `pinned` (the configured or instance model that went into a spawn
//! lane's argv), `requested` (the model an HTTP lane sends: the configured one, or the fallback
//! of a lane that discovers none), else `unknown`. The `served`, `banner` and `transcript`
//! sources and the ` (reasoning=<level>)` suffix are not recovered yet, so those lanes say
//! `unknown` rather than guess.

use gsd_lane_sdk::{LanePlan, PlanShape};

use crate::manifest::lane::Invoke;
use crate::manifest::LaneSpec;

/// Longest model value kept (`MODEL_VALUE_MAX`, §3.4).
pub const MODEL_VALUE_MAX: usize = 200;

/// Where a recorded model came from (§3.2; the closed upstream set, frozen upstream).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "served, banner and transcript are upstream's; this build does not recover them yet"
    )
)]
pub enum ModelSource {
    /// The configured model went into argv.
    Pinned,
    /// The HTTP response named it.
    Served,
    /// The model an HTTP request asked for.
    Requested,
    /// A `model:` line of a file-output lane's banner.
    Banner,
    /// The antigravity transcript.
    Transcript,
    /// Not resolved.
    Unknown,
}

impl ModelSource {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelSource::Pinned => "pinned",
            ModelSource::Served => "served",
            ModelSource::Requested => "requested",
            ModelSource::Banner => "banner",
            ModelSource::Transcript => "transcript",
            ModelSource::Unknown => "unknown",
        }
    }
}

/// One reviewer's model: `value` is `None` exactly when `source` is `Unknown` (§3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRecord {
    value: Option<String>,
    source: ModelSource,
}

impl ModelRecord {
    /// The unresolved record.
    pub fn unknown() -> ModelRecord {
        ModelRecord {
            value: None,
            source: ModelSource::Unknown,
        }
    }

    /// A record of `raw` from `source`, through the normaliser (unresolved when it refuses).
    pub fn of(raw: &str, source: ModelSource) -> ModelRecord {
        match normalize(raw) {
            Some(value) if source != ModelSource::Unknown => ModelRecord {
                value: Some(value),
                source,
            },
            _ => ModelRecord::unknown(),
        }
    }

    /// The value as written in `models:` (`unknown` when unresolved).
    pub fn value(&self) -> &str {
        self.value.as_deref().unwrap_or("unknown")
    }

    /// The source.
    pub fn source(&self) -> ModelSource {
        self.source
    }
}

/// §3.4: trimmed; unset (empty, `null`, `undefined`), longer than [`MODEL_VALUE_MAX`]
/// characters, or holding any C0, DEL or C1 control character → `None` (rejected, never
/// stripped: a newline cannot inject frontmatter). Colons are fine.
pub fn normalize(raw: &str) -> Option<String> {
    let value = raw.trim();
    if value.is_empty() || value == "null" || value == "undefined" {
        return None;
    }
    if value.chars().count() > MODEL_VALUE_MAX {
        return None;
    }
    if value
        .chars()
        .any(|c| matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'))
    {
        return None;
    }
    Some(value.to_owned())
}

/// The model of one identity's run, from its admitted plan and its lane (§3.3, the sources
/// this build recovers; see the module documentation).
pub fn of_plan(plan: &LanePlan, lane: &LaneSpec) -> ModelRecord {
    match (&plan.shape, &lane.invoke) {
        (PlanShape::Spawn(spawn), Invoke::Spawn(invoke)) => {
            // `{{model}}` expands to `[modelArg, model]`: the element after the first
            // occurrence of the lane's model flag is the pinned model.
            let pinned = invoke.model_arg.as_deref().and_then(|flag| {
                let at = spawn.argv.iter().position(|arg| arg == flag)?;
                spawn.argv.get(at + 1)
            });
            pinned.map_or_else(ModelRecord::unknown, |model| {
                ModelRecord::of(model, ModelSource::Pinned)
            })
        }
        (PlanShape::Http(http), _) => match (&http.model, &http.models_url) {
            (Some(model), _) => ModelRecord::of(model, ModelSource::Requested),
            (None, None) => ModelRecord::of(&http.fallback_model, ModelSource::Requested),
            // Discovery picks the model at run time; not recovered yet.
            (None, Some(_)) => ModelRecord::unknown(),
        },
        _ => ModelRecord::unknown(),
    }
}

/// A double-quoted YAML scalar (`"` and `\` escaped; values hold no control character).
fn quoted(value: &str) -> String {
    format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The `models:` and `model_sources:` maps for `reviewers` (identity, record), in that order,
/// one entry each, `"unknown"` for an unresolved one (§3.1).
pub fn frontmatter(reviewers: &[(&str, &ModelRecord)], key: impl Fn(&str) -> String) -> String {
    if reviewers.is_empty() {
        return "models: {}\nmodel_sources: {}\n".to_owned();
    }
    let mut out = String::from("models:\n");
    for (id, record) in reviewers {
        out.push_str(&format!("  {}: {}\n", key(id), quoted(record.value())));
    }
    out.push_str("model_sources:\n");
    for (id, record) in reviewers {
        out.push_str(&format!(
            "  {}: {}\n",
            key(id),
            quoted(record.source().as_str())
        ));
    }
    out
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use crate::config::ProjectConfig;
    use crate::plan::{resolve_lane, Instance, PlanInputs};
    use crate::registry::Registry;
    use serde_json::json;

    fn record(slug: &str, config: serde_json::Value, model: Option<&str>) -> ModelRecord {
        let registry = Registry::first_party();
        let lane = registry.lane(slug).expect("first-party lane");
        let plan = resolve_lane(
            slug,
            lane,
            &ProjectConfig::from_value(config),
            &PlanInputs {
                run_dir: "/run".to_owned(),
                repo_root: "/repo".to_owned(),
                instance: Instance {
                    model: model.map(str::to_owned),
                    ..Instance::default()
                },
                ..PlanInputs::default()
            },
        )
        .expect("plans");
        of_plan(&plan, lane)
    }

    #[test]
    fn pinned_only_when_the_model_went_into_argv() {
        let r = record(
            "claude",
            json!({"review": {"models": {"claude": "opus-x"}}}),
            None,
        );
        assert_eq!((r.value(), r.source()), ("opus-x", ModelSource::Pinned));
        let r = record("claude", json!({}), Some("sonnet:4"));
        assert_eq!((r.value(), r.source()), ("sonnet:4", ModelSource::Pinned));
        let r = record("claude", json!({}), None);
        assert_eq!((r.value(), r.source()), ("unknown", ModelSource::Unknown));
        // coderabbit has no model key: a configured value is never pinned.
        let r = record(
            "coderabbit",
            json!({"review": {"models": {"coderabbit": "x"}}}),
            None,
        );
        assert_eq!(r.source(), ModelSource::Unknown);
    }

    #[test]
    fn http_lanes_record_the_requested_model() {
        let r = record(
            "ollama",
            json!({"review": {"models": {"ollama": "llama3:70b"}}}),
            None,
        );
        assert_eq!(
            (r.value(), r.source()),
            ("llama3:70b", ModelSource::Requested)
        );
        // Discovery decides at run time: not recovered, so unknown.
        assert_eq!(
            record("ollama", json!({}), None).source(),
            ModelSource::Unknown
        );
    }

    #[test]
    fn the_normaliser_rejects_rather_than_strips() {
        assert_eq!(normalize(&"m".repeat(200)).map(|v| v.len()), Some(200));
        assert_eq!(normalize(&"m".repeat(201)), None);
        for bad in ["a\nb", "a\u{7f}", "a\u{85}b", "", "  ", "null", "undefined"] {
            assert_eq!(normalize(bad), None, "{bad:?}");
        }
        assert_eq!(normalize(" llama3:70b ").as_deref(), Some("llama3:70b"));
        let r = record("claude", json!({}), Some("evil\nreviewers: [x]"));
        assert_eq!(r.source(), ModelSource::Unknown);
    }

    #[test]
    fn the_source_set_is_upstreams_frozen_list() {
        let mut names: Vec<&str> = [
            ModelSource::Pinned,
            ModelSource::Served,
            ModelSource::Requested,
            ModelSource::Banner,
            ModelSource::Transcript,
            ModelSource::Unknown,
        ]
        .iter()
        .map(|s| s.as_str())
        .collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "banner",
                "pinned",
                "requested",
                "served",
                "transcript",
                "unknown"
            ]
        );
    }

    #[test]
    fn frontmatter_maps_have_one_quoted_entry_per_reviewer() {
        let pinned = ModelRecord::of("a\"b\\c", ModelSource::Pinned);
        let unknown = ModelRecord::unknown();
        let text = frontmatter(&[("alpha", &pinned), ("beta", &unknown)], str::to_owned);
        assert_eq!(
            text,
            "models:\n  alpha: \"a\\\"b\\\\c\"\n  beta: \"unknown\"\nmodel_sources:\n  alpha: \"pinned\"\n  beta: \"unknown\"\n"
        );
        assert_eq!(
            frontmatter(&[], str::to_owned),
            "models: {}\nmodel_sources: {}\n"
        );
    }
}
