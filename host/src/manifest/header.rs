//! The lenient typed view of a manifest's header: `id`, `version` and `engines.gsd` as written,
//! for any JSON value (a manifest that does not validate, an overlay being loaded, a folder
//! being installed).
//!
//! The validator ([`super::validate_value`]) is the strict reading and says everything that is
//! wrong; this view is what the commands read the header through before (or without) it.
//! Reading it never fails and never panics: a field of another type reads as absent and is
//! kept as a [`HeaderProblem`] that the caller shows (install refuses with it, `disclose
//! --manifest` lists it), so a wrong type is never taken for a missing field silently. Only
//! the top two levels are looked at and no value is copied except the strings read, so a huge
//! or deeply nested member costs nothing.

use std::fmt;

use serde_json::{Map, Value};

use super::diagnostic::type_name;

/// A manifest's header as declared (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeclaredHeader {
    /// `id`, when it is a string (untrimmed, unchecked).
    pub id: Option<String>,
    /// `version`, when it is a string (not checked as semver).
    pub version: Option<String>,
    /// `engines.gsd`, when `engines` is an object and `gsd` in it a string.
    pub engines_gsd: Option<String>,
    /// Each member above (or the manifest itself) that is present with the wrong type.
    pub problems: Vec<HeaderProblem>,
}

/// A header member the view reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderField {
    /// The manifest itself (it must be an object).
    Manifest,
    /// `id`.
    Id,
    /// `version`.
    Version,
    /// `engines`.
    Engines,
    /// `engines.gsd`.
    EnginesGsd,
}

impl HeaderField {
    /// The member's path as messages name it (`engines.gsd`; `the manifest` for the root).
    pub fn path(self) -> &'static str {
        match self {
            HeaderField::Manifest => "the manifest",
            HeaderField::Id => "id",
            HeaderField::Version => "version",
            HeaderField::Engines => "engines",
            HeaderField::EnginesGsd => "engines.gsd",
        }
    }

    /// The JSON type the member must have.
    fn expected(self) -> &'static str {
        match self {
            HeaderField::Manifest | HeaderField::Engines => "an object",
            HeaderField::Id | HeaderField::Version | HeaderField::EnginesGsd => "a string",
        }
    }

    /// Whether a problem with `self` leaves `field` unread (`engines` hides `engines.gsd`, the
    /// manifest hides everything).
    fn hides(self, field: HeaderField) -> bool {
        self == field
            || self == HeaderField::Manifest
            || (self == HeaderField::Engines && field == HeaderField::EnginesGsd)
    }
}

/// A header member present with the wrong JSON type (it reads as absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderProblem {
    /// The member.
    pub field: HeaderField,
    /// The JSON type found (`number`, `array`, …).
    pub found: &'static str,
}

impl fmt::Display for HeaderProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} must be {} (found {})",
            self.field.path(),
            self.field.expected(),
            self.found
        )
    }
}

impl DeclaredHeader {
    /// Reads the header of `manifest`; total on any value.
    pub fn of(manifest: &Value) -> DeclaredHeader {
        let mut header = DeclaredHeader::default();
        let Some(root) = manifest.as_object() else {
            header.problem(HeaderField::Manifest, manifest);
            return header;
        };
        header.id = header.string(root, HeaderField::Id, "id");
        header.version = header.string(root, HeaderField::Version, "version");
        match root.get("engines") {
            None => {}
            Some(Value::Object(engines)) => {
                header.engines_gsd = header.string(engines, HeaderField::EnginesGsd, "gsd");
            }
            Some(other) => header.problem(HeaderField::Engines, other),
        }
        header
    }

    /// The problem that left `field` unread, if any (a wrong-typed `engines` or manifest
    /// counts for the members inside it).
    pub fn problem_with(&self, field: HeaderField) -> Option<&HeaderProblem> {
        self.problems
            .iter()
            .find(|problem| problem.field.hides(field))
    }

    /// The declared `engines.gsd` range when it is not empty and `host_version` does not
    /// satisfy it; `None` when it admits the host or is absent (a malformed range is the
    /// validator's to report).
    pub fn engines_excluding(&self, host_version: &str) -> Option<&str> {
        self.engines_gsd.as_deref().filter(|range| {
            !range.trim().is_empty() && !super::semver::range_satisfied(range, host_version)
        })
    }

    /// The string member `key` of `object`, or `None` (a problem when it has another type).
    fn string(
        &mut self,
        object: &Map<String, Value>,
        field: HeaderField,
        key: &str,
    ) -> Option<String> {
        match object.get(key)? {
            Value::String(text) => Some(text.clone()),
            other => {
                self.problem(field, other);
                None
            }
        }
    }

    fn problem(&mut self, field: HeaderField, found: &Value) {
        self.problems.push(HeaderProblem {
            field,
            found: type_name(found),
        });
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_strings_as_written() {
        let header = DeclaredHeader::of(&json!({"id": " Acme ", "version": "1.x",
            "engines": {"gsd": ">=1.8.0", "node": 3}, "title": 7}));
        assert_eq!(header.id.as_deref(), Some(" Acme "));
        assert_eq!(header.version.as_deref(), Some("1.x"));
        assert_eq!(header.engines_gsd.as_deref(), Some(">=1.8.0"));
        assert!(header.problems.is_empty(), "{:?}", header.problems);
    }

    #[test]
    fn missing_members_are_absent_without_a_problem() {
        for manifest in [
            json!({}),
            json!({"engines": {}}),
            json!({"engines": {"node": "x"}}),
        ] {
            assert_eq!(
                DeclaredHeader::of(&manifest),
                DeclaredHeader::default(),
                "{manifest}"
            );
        }
    }

    #[test]
    fn wrong_types_read_as_absent_and_are_kept_as_problems() {
        let header = DeclaredHeader::of(
            &json!({"id": 7, "version": ["1.0.0"], "engines": {"gsd": {"range": ">=1"}}}),
        );
        assert_eq!(
            (&header.id, &header.version, &header.engines_gsd),
            (&None, &None, &None)
        );
        let said: Vec<String> = header.problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "id must be a string (found number)",
                "version must be a string (found array)",
                "engines.gsd must be a string (found object)",
            ]
        );
        assert_eq!(
            header.problem_with(HeaderField::Id).map(|p| p.found),
            Some("number")
        );
        let null_id = DeclaredHeader::of(&json!({"id": null}));
        assert_eq!(null_id.id, None);
        assert_eq!(
            null_id
                .problem_with(HeaderField::Id)
                .map(ToString::to_string),
            Some("id must be a string (found null)".to_owned()),
            "null is a wrong type, not a missing member"
        );
    }

    #[test]
    fn a_wrong_container_hides_what_is_inside_it() {
        let engines = DeclaredHeader::of(&json!({"id": "acme", "engines": ">=1.0.0"}));
        assert_eq!(engines.id.as_deref(), Some("acme"));
        assert_eq!(engines.engines_gsd, None);
        assert_eq!(
            engines
                .problem_with(HeaderField::EnginesGsd)
                .map(ToString::to_string),
            Some("engines must be an object (found string)".to_owned())
        );
        assert_eq!(engines.problem_with(HeaderField::Id), None);
        for (manifest, found) in [
            (json!(null), "null"),
            (json!([{"id": "acme"}]), "array"),
            (json!("acme"), "string"),
            (json!(1), "number"),
        ] {
            let header = DeclaredHeader::of(&manifest);
            assert_eq!(header.id, None, "{manifest}");
            let problem = header.problem_with(HeaderField::Id).expect("a problem");
            assert_eq!(
                problem.to_string(),
                format!("the manifest must be an object (found {found})")
            );
            assert_eq!(header.problems.len(), 1, "{manifest}");
        }
    }

    #[test]
    fn huge_and_deeply_nested_members_cost_nothing() {
        // As deep as the manifest reader's JSON parser lets a value be, in every member.
        let deep = format!("{}{}", "[".repeat(120), "]".repeat(120));
        let text = format!(r#"{{"id": {deep}, "version": {deep}, "engines": {{"gsd": {deep}}}}}"#);
        let manifest = crate::registry::read::parse_json(&text).expect("within the depth limit");
        let header = DeclaredHeader::of(&manifest);
        assert_eq!(header.problems.len(), 3);
        assert!(header.problems.iter().all(|p| p.found == "array"));
        // A deeper value built in memory is read without recursing into it.
        let mut nested = json!("bottom");
        for _ in 0..10_000 {
            nested = Value::Array(vec![nested]);
        }
        // Assembled by hand: `json!` would serialize (recurse into) an interpolated value.
        let mut engines = Map::new();
        engines.insert("gsd".to_owned(), nested);
        let mut root = Map::new();
        root.insert("id".to_owned(), Value::String("x".repeat(8 << 20)));
        root.insert("engines".to_owned(), Value::Object(engines));
        let manifest = Value::Object(root);
        let header = DeclaredHeader::of(&manifest);
        assert_eq!(header.id.as_ref().map(String::len), Some(8 << 20));
        assert_eq!(
            header.problems,
            [HeaderProblem {
                field: HeaderField::EnginesGsd,
                found: "array"
            }]
        );
        // Dropping 10,000 levels recursively could overflow a test thread's stack; leak it
        // (the test is about reading, not dropping).
        std::mem::forget(manifest);
    }

    #[test]
    fn engines_excluding_names_a_range_that_refuses_the_host() {
        let of = |range: &str| DeclaredHeader::of(&json!({"engines": {"gsd": range}}));
        assert_eq!(of(">=9.0.0").engines_excluding("1.9.0"), Some(">=9.0.0"));
        assert_eq!(of(">=1.0.0").engines_excluding("1.9.0"), None);
        assert_eq!(of("  ").engines_excluding("1.9.0"), None);
        assert_eq!(DeclaredHeader::default().engines_excluding("1.9.0"), None);
    }
}
