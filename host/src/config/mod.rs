//! Project configuration (`.planning/config.json`), host normalization and effort.
//!
//! [`ProjectConfig`] holds the merged root and workstream config (invocation.md §3.1) and answers
//! dotted-key lookups; [`configured`] applies the "unset" rule for string settings (§3.2);
//! [`normalize_host`] implements §3.4 / trust.md §6.3; [`effort_argv`] implements §3.5. Nothing
//! here reads environment variables: the caller passes the workstream name in.

pub(crate) mod effort;
mod host;
mod load;
mod merge;
mod setting;
mod text;

use std::path::Path;

use serde_json::{Map, Value};

pub use effort::effort_argv;
pub use host::{join_lane_path, normalize_host};
pub use load::Unusable;
pub use setting::configured;
pub use text::{is_ecma_whitespace, trim_ecma_whitespace};

/// Holds the resolved project configuration as one JSON value.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectConfig {
    /// The merged configuration; an empty object when nothing was loaded.
    value: Value,
}

impl Default for ProjectConfig {
    fn default() -> Self {
        ProjectConfig::empty()
    }
}

impl ProjectConfig {
    /// Loads `<root>/.planning/config.json` and the optional workstream overlay.
    ///
    /// Returns the config together with warnings meant for stderr, at most one per file whose
    /// settings were not applied. A missing file is silent. The overlay is only considered when
    /// `workstream` is non-empty and contains no `/`, `\` or `..`.
    pub fn load(project_root: &Path, workstream: Option<&str>) -> (ProjectConfig, Vec<String>) {
        let (merged, unusable) = load::load_merged(project_root, workstream);
        let warnings = unusable.iter().map(Unusable::warning).collect();
        (ProjectConfig::from_value(Value::Object(merged)), warnings)
    }

    /// Loads the config for a command that sends plans somewhere (`review`): a file that exists
    /// but cannot be used (does not parse, is not an object, is unreadable) fails closed
    /// instead of being left out, because leaving it out can widen the reviewer set
    /// (decisions.md #13).
    ///
    /// # Errors
    ///
    /// Every unusable file, with its line:column when it is a syntax error.
    pub fn load_checked(
        project_root: &Path,
        workstream: Option<&str>,
    ) -> Result<ProjectConfig, Vec<Unusable>> {
        let (merged, unusable) = load::load_merged(project_root, workstream);
        if unusable.is_empty() {
            Ok(ProjectConfig::from_value(Value::Object(merged)))
        } else {
            Err(unusable)
        }
    }

    /// Wraps an already resolved JSON value; a non-object makes every key absent.
    pub fn from_value(value: Value) -> ProjectConfig {
        ProjectConfig { value }
    }

    /// Returns a config in which every key is unset.
    pub fn empty() -> ProjectConfig {
        ProjectConfig::from_value(Value::Object(Map::new()))
    }

    /// Returns the whole merged JSON value.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Looks up a dotted key by walking own object members with literal segments.
    ///
    /// Any missing member or non-object intermediate yields `None`; a flat key containing dots
    /// is never matched.
    pub fn get(&self, dotted: &str) -> Option<&Value> {
        dotted
            .split('.')
            .try_fold(&self.value, |node, segment| node.as_object()?.get(segment))
    }

    /// Returns the configured string at a dotted key under the §3.2 "unset" rule.
    pub fn configured_string(&self, dotted: &str) -> Option<String> {
        configured(self.get(dotted))
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config() -> ProjectConfig {
        ProjectConfig::from_value(json!({
            "review": {"models": {"gemini": " g ", "claude": 0, "agy": "null", "kimi-code": "k"}},
            "review.models.codex": "flat",
            "list": [{"a": "x"}],
            "s": "text",
            "": {"": "empty-segments"}
        }))
    }

    #[test]
    fn empty_and_default_have_no_keys() {
        assert_eq!(ProjectConfig::empty().value(), &json!({}));
        assert_eq!(ProjectConfig::default(), ProjectConfig::empty());
        assert_eq!(ProjectConfig::empty().get("review"), None);
    }

    #[test]
    fn get_walks_nested_objects() {
        assert_eq!(config().get("review.models.gemini"), Some(&json!(" g ")));
        assert_eq!(config().get("review.models.kimi-code"), Some(&json!("k")));
        assert_eq!(
            config().get("review.models"),
            config().value().pointer("/review/models")
        );
    }

    #[test]
    fn flat_dotted_key_is_not_matched() {
        assert_eq!(config().get("review.models.codex"), None);
    }

    #[test]
    fn non_object_intermediates_are_absent() {
        assert_eq!(config().get("s.length"), None);
        assert_eq!(config().get("list.0.a"), None);
        assert_eq!(config().get("review.models.gemini.x"), None);
        assert_eq!(config().get("missing.key"), None);
    }

    #[test]
    fn segments_are_literal() {
        assert_eq!(
            config().get(".").and_then(Value::as_str),
            Some("empty-segments")
        );
        assert_eq!(config().get("review..models"), None);
        assert_eq!(config().get("review.models.__proto__"), None);
    }

    #[test]
    fn non_object_root_has_no_keys() {
        let c = ProjectConfig::from_value(json!(["review"]));
        assert_eq!(c.get("review"), None);
        assert_eq!(c.get("0"), None);
    }

    #[test]
    fn configured_string_applies_unset_rule() {
        assert_eq!(
            config()
                .configured_string("review.models.gemini")
                .as_deref(),
            Some("g")
        );
        assert_eq!(config().configured_string("review.models.claude"), None);
        assert_eq!(config().configured_string("review.models.agy"), None);
        assert_eq!(
            config().configured_string("review.models.antigravity"),
            None
        );
    }

    #[test]
    fn load_wraps_the_merged_object() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (c, warnings) = ProjectConfig::load(dir.path(), Some("ws"));
        assert_eq!(c, ProjectConfig::empty());
        assert!(warnings.is_empty());
    }
}
