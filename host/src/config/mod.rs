//! Project configuration (`.planning/config.json`), host normalization and effort.
//!
//! [`ProjectConfig`] holds the merged root and workstream config (invocation.md §3.1) and answers
//! dotted-key lookups; [`configured`] applies the "unset" rule for string settings (§3.2);
//! [`normalize_host`] implements §3.4 / trust.md §6.3; `effort` renders §3.5 effort argv. Nothing
//! here reads environment variables: the caller passes the workstream name in.

pub(crate) mod effort;
mod host;
mod load;
mod merge;
mod setting;
mod text;

use std::path::Path;

use serde_json::{Map, Value};

pub use host::{join_lane_path, normalize_host, origin_of};
pub use load::Unusable;
pub use setting::configured;
pub use text::{is_ecma_whitespace, trim_ecma_whitespace};

/// Holds the resolved project configuration as one JSON value, and the declared defaults of
/// the keys active lanes own.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectConfig {
    /// The merged configuration; an empty object when nothing was loaded.
    value: Value,
    /// Lane-owned keys' declared defaults: key → (default, owning capability id).
    defaults: std::collections::BTreeMap<String, (Value, String)>,
}

/// Where a key's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin<'c> {
    /// The project's config file (or its workstream overlay).
    ConfigFile,
    /// The declared default of the lane capability that owns the key (its id).
    LaneDefault(&'c str),
    /// Nothing sets it.
    Unset,
}

impl std::fmt::Display for Origin<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::ConfigFile => f.write_str("set in the config file"),
            Origin::LaneDefault(id) => write!(f, "the default {id} declares"),
            Origin::Unset => f.write_str("unset"),
        }
    }
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
        ProjectConfig {
            value,
            defaults: std::collections::BTreeMap::new(),
        }
    }

    /// Adds the declared defaults of the keys each capability owns (`(id, defaults)`): a key
    /// no config sets (absent or `null`) resolves to its owner's default (ADR-2782 D9,
    /// decisions.md #21). Ownership is exclusive (manifest.md §5.5: a key declared twice, or a
    /// central key, keeps its candidate out of the registry); the first owner wins regardless.
    #[must_use]
    pub fn with_lane_defaults<'a>(
        mut self,
        owners: impl IntoIterator<Item = (&'a str, &'a [(String, Value)])>,
    ) -> ProjectConfig {
        for (id, defaults) in owners {
            for (key, value) in defaults {
                self.defaults
                    .entry(key.clone())
                    .or_insert_with(|| (value.clone(), id.to_owned()));
            }
        }
        self
    }

    /// Where `dotted` gets its value from.
    pub fn origin(&self, dotted: &str) -> Origin<'_> {
        match self.file_value(dotted) {
            Some(value) if !value.is_null() => Origin::ConfigFile,
            _ => match self.defaults.get(dotted) {
                Some((_, owner)) => Origin::LaneDefault(owner),
                None => Origin::Unset,
            },
        }
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
    ///
    /// A key the file leaves absent or `null` falls back to the declared default of the lane
    /// that owns it ([`ProjectConfig::with_lane_defaults`]).
    pub fn get(&self, dotted: &str) -> Option<&Value> {
        match self.file_value(dotted) {
            Some(value) if !value.is_null() => Some(value),
            found => self.defaults.get(dotted).map(|(value, _)| value).or(found),
        }
    }

    /// The value the config files give `dotted`, without lane defaults.
    fn file_value(&self, dotted: &str) -> Option<&Value> {
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

    /// Issue 21 item 5: a lane's declared default applies when no config sets the key.
    #[test]
    fn lane_defaults_apply_only_when_the_file_leaves_the_key_unset() {
        let defaults = vec![("review.models.x".to_owned(), json!("m-default"))];
        let with = |value: Value| {
            ProjectConfig::from_value(value).with_lane_defaults([("x-lane", defaults.as_slice())])
        };
        let unset = with(json!({}));
        assert_eq!(
            unset.configured_string("review.models.x").as_deref(),
            Some("m-default")
        );
        assert_eq!(
            unset.origin("review.models.x"),
            Origin::LaneDefault("x-lane")
        );
        let null = with(json!({"review": {"models": {"x": null}}}));
        assert_eq!(
            null.configured_string("review.models.x").as_deref(),
            Some("m-default")
        );
        let set = with(json!({"review": {"models": {"x": "mine"}}}));
        assert_eq!(
            set.configured_string("review.models.x").as_deref(),
            Some("mine")
        );
        assert_eq!(set.origin("review.models.x"), Origin::ConfigFile);
        assert_eq!(set.origin("review.models.y"), Origin::Unset);
        assert_eq!(
            ProjectConfig::from_value(json!({})).configured_string("review.models.x"),
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
