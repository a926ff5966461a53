//! The resolved model of each reviewer (upstream #3649, spec/upstream-since-2026-08.md §3):
//! `{value, source}` per identity, and the `models:` / `model_sources:` maps of the REVIEWS.md
//! frontmatter.
//!
//! Sources, first match wins (§3.3): for spawn lanes `pinned` (the configured or instance model
//! that went into argv), `transcript`, `banner` (a `model:` line in the first 40 lines of a file-output lane's
//! stdout, else its stderr), else `unknown`; for HTTP lanes `served` (the response's `model`),
//! else `requested` (the model the request carried: configured, discovered or the fallback),
//! else `unknown`. Between pinned and banner, an antigravity lane's `transcript` (the model the
//! handler read from the workspace's transcript, §3.6). A spawn lane whose argv carried an
//! effort gets ` (reasoning=<level>)`, the level that ran (§3.5).

use gsd_lane_sdk::{LanePlan, OutputTarget, PlanShape};

use crate::config::effort::EffortLevel;
use crate::config::is_ecma_whitespace;

use crate::manifest::lane::Invoke;
use crate::manifest::LaneSpec;

/// Longest model value kept (`MODEL_VALUE_MAX`, §3.4).
pub const MODEL_VALUE_MAX: usize = 200;

/// Lines of output the banner rule looks at (`BANNER_SCAN_LINES`, §3.6).
pub const BANNER_SCAN_LINES: usize = 40;

/// What a lane's run showed of its model, besides its plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// The `model` of the HTTP response, normalised.
    pub served: Option<String>,
    /// The `model` the HTTP request carried, normalised.
    pub requested: Option<String>,
    /// The start of a file-output lane's stdout (at least its first 40 lines when it has them).
    pub stdout_head: Option<String>,
    /// The start of its stderr.
    pub stderr_head: Option<String>,
    /// The model the antigravity handler read from the workspace's transcript.
    pub transcript: Option<String>,
}

/// The model of a lane run (§3.3 precedence, §3.5 suffix): `effort` is the level its argv
/// carried, as rendered (clamped) for its host.
pub fn of_run(
    plan: &LanePlan,
    lane: &LaneSpec,
    seen: &Seen,
    effort: Option<EffortLevel>,
) -> ModelRecord {
    let planned = of_plan(plan, lane);
    let record = match &plan.shape {
        PlanShape::Spawn(spawn) => {
            if planned.source == ModelSource::Pinned {
                planned
            } else if let (Some(model), true) = (&seen.transcript, is_antigravity(plan)) {
                ModelRecord::of(model, ModelSource::Transcript)
            } else if matches!(spawn.output_target, OutputTarget::File(_)) {
                banner_of(seen)
            } else {
                ModelRecord::unknown()
            }
        }
        PlanShape::Http(_) => match (&seen.served, &seen.requested) {
            (Some(served), _) => ModelRecord::of(served, ModelSource::Served),
            (None, Some(requested)) => ModelRecord::of(requested, ModelSource::Requested),
            (None, None) => planned,
        },
        _ => planned,
    };
    record.with_effort(effort)
}

/// Whether the plan is driven by the antigravity handler (the transcript rule's lanes).
fn is_antigravity(plan: &LanePlan) -> bool {
    plan.handler.is_some_and(|h| h.as_str() == "antigravity")
}

/// The banner rule: stdout's first 40 lines, then stderr's when stdout gave nothing.
fn banner_of(seen: &Seen) -> ModelRecord {
    [&seen.stdout_head, &seen.stderr_head]
        .into_iter()
        .flatten()
        .find_map(|text| banner(text))
        .map_or_else(ModelRecord::unknown, |model| {
            ModelRecord::of(&model, ModelSource::Banner)
        })
}

/// The model a banner names (§3.6): among the first [`BANNER_SCAN_LINES`] lines (split on
/// `\r?\n`), those matching `^[\s>*|-]*model\s*:\s*(.+)$` (case-insensitive), normalised;
/// exactly one distinct value is the answer, none or two different ones are `None`.
pub fn banner(text: &str) -> Option<String> {
    let mut found: Option<String> = None;
    for line in text.split('\n').take(BANNER_SCAN_LINES) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let Some(value) = banner_line(line).and_then(normalize) else {
            continue;
        };
        match &found {
            Some(seen) if *seen != value => return None,
            _ => found = Some(value),
        }
    }
    found
}

/// The captured value of one banner line, before normalisation.
fn banner_line(line: &str) -> Option<&str> {
    let rest = line
        .trim_start_matches(|c: char| is_ecma_whitespace(c) || matches!(c, '>' | '*' | '|' | '-'));
    let head = rest.get(..5)?;
    if !head.eq_ignore_ascii_case("model") {
        return None;
    }
    let rest = rest.get(5..)?.trim_start_matches(is_ecma_whitespace);
    let value = rest.strip_prefix(':')?;
    // `.` matches no line terminator, and `$` is the end of the line.
    if value.contains(['\r', '\u{2028}', '\u{2029}']) || value.is_empty() {
        return None;
    }
    Some(value)
}

/// Where a recorded model came from (§3.2; the closed upstream set, frozen upstream).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

    /// The value, `None` when unresolved (the JSON `null` of a lane result).
    pub fn resolved(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// The record with ` (reasoning=<level>)` appended to a resolved value (§3.5; outside the
    /// 200-character cap).
    pub fn with_effort(mut self, level: Option<EffortLevel>) -> ModelRecord {
        if let (Some(value), Some(level)) = (self.value.as_mut(), level) {
            value.push_str(&format!(" (reasoning={level})"));
        }
        self
    }

    /// [`ModelRecord`]'s serialization as a JSON value (for result lines built as maps).
    pub fn to_json(&self) -> serde_json::Value {
        // Two string keys: the encoding cannot fail.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// `{"value": <string|null>, "source": <source>}`, the `model` member of a lane result.
impl serde::Serialize for ModelRecord {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("ModelRecord", 2)?;
        out.serialize_field("value", &self.value)?;
        out.serialize_field("source", self.source.as_str())?;
        out.end()
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

/// The record REVIEWS.md shows for an identity: the run's own when it ran here, else what its
/// plan alone tells (a review kept from an earlier run, an interrupted one).
pub fn of_result(ran: Option<&ModelRecord>, plan: &LanePlan, lane: &LaneSpec) -> ModelRecord {
    ran.cloned().unwrap_or_else(|| of_plan(plan, lane))
}

/// Adds `model: {value, source}` to a lane result line (`{null, unknown}` when the lane did
/// not run, §3.2).
pub fn result_member(
    map: &mut serde_json::Map<String, serde_json::Value>,
    record: Option<&ModelRecord>,
) {
    let unknown = ModelRecord::unknown();
    map.insert("model".into(), record.unwrap_or(&unknown).to_json());
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

    #[test]
    fn the_banner_window_is_forty_lines() {
        let at = |n: usize| -> String {
            let mut text: String = (1..n).map(|i| format!("line {i}\n")).collect();
            text.push_str("model: gpt-5.1-codex\n");
            text
        };
        assert_eq!(banner(&at(39)).as_deref(), Some("gpt-5.1-codex"));
        assert_eq!(banner(&at(40)).as_deref(), Some("gpt-5.1-codex"));
        assert_eq!(banner(&at(41)), None);
        // CRLF lines count the same.
        assert_eq!(
            banner(&at(40).replace('\n', "\r\n")).as_deref(),
            Some("gpt-5.1-codex")
        );
    }

    #[test]
    fn banner_lines_follow_the_regex() {
        for (line, want) in [
            ("Model: o3", Some("o3")),
            ("  > * | - MODEL :  llama3:70b  ", Some("llama3:70b")),
            ("model:", None),
            ("model:   ", None),
            ("the model: x", None),
            ("**model**: x", None),
            ("models: x", None),
            ("model\u{3000}: wide", Some("wide")),
        ] {
            assert_eq!(banner(line).as_deref(), want, "{line:?}");
        }
        assert_eq!(banner("model: a\nmodel: a\n").as_deref(), Some("a"));
        assert_eq!(banner("model: a\nmodel: b\n"), None, "ambiguity is refused");
        assert_eq!(banner(&format!("model: {}", "m".repeat(201))), None);
    }

    fn run_record(slug: &str, config: serde_json::Value, seen: &Seen) -> ModelRecord {
        let registry = Registry::first_party();
        let lane = registry.lane(slug).expect("first-party lane");
        let config = ProjectConfig::from_value(config);
        let plan = resolve_lane(
            slug,
            lane,
            &config,
            &PlanInputs {
                run_dir: "/run".to_owned(),
                repo_root: "/repo".to_owned(),
                ..PlanInputs::default()
            },
        )
        .expect("plans");
        of_run(&plan, lane, seen, crate::plan::effort_level(lane, &config))
    }

    #[test]
    fn run_precedence_and_the_effort_suffix() {
        let banner_seen = Seen {
            stdout_head: Some("model: gpt-x\n".to_owned()),
            ..Seen::default()
        };
        // codex writes its review to a file: its stdout banner names the model, at the
        // effort that ran (minimal is clamped to low on codex).
        let r = run_record(
            "codex",
            json!({"review": {"effort": {"codex": "minimal"}}}),
            &banner_seen,
        );
        assert_eq!(
            (r.value(), r.source()),
            ("gpt-x (reasoning=low)", ModelSource::Banner)
        );
        // stderr when stdout gave nothing.
        let r = run_record(
            "codex",
            json!({}),
            &Seen {
                stdout_head: Some("no banner\n".to_owned()),
                stderr_head: Some("> model: gpt-y\n".to_owned()),
                ..Seen::default()
            },
        );
        assert_eq!(r.value(), "gpt-y (reasoning=high)");
        // pinned beats banner.
        let r = run_record(
            "codex",
            json!({"review": {"models": {"codex": "pinned-m"}, "effort": {"codex": "inherit"}}}),
            &banner_seen,
        );
        assert_eq!((r.value(), r.source()), ("pinned-m", ModelSource::Pinned));
        // A stdout lane never reads its review as a banner.
        let r = run_record("qwen", json!({}), &banner_seen);
        assert_eq!(r.source(), ModelSource::Unknown);
        assert_eq!(r.resolved(), None);
        // HTTP: served beats requested; requested when nothing was served; no suffix.
        let served = Seen {
            served: Some("served-m".to_owned()),
            requested: Some("asked-m".to_owned()),
            ..Seen::default()
        };
        let r = run_record("ollama", json!({}), &served);
        assert_eq!((r.value(), r.source()), ("served-m", ModelSource::Served));
        let asked = Seen {
            requested: Some("asked-m".to_owned()),
            ..Seen::default()
        };
        let r = run_record("ollama", json!({}), &asked);
        assert_eq!((r.value(), r.source()), ("asked-m", ModelSource::Requested));
        assert_eq!(
            r.to_json(),
            json!({"value": "asked-m", "source": "requested"})
        );
        assert_eq!(
            ModelRecord::unknown().to_json(),
            json!({"value": null, "source": "unknown"})
        );
    }
}
