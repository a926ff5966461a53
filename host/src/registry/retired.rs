//! First-party lanes the upstream retired (decisions.md row 16): their flags, slugs and config
//! keys are answered with why the lane went, what replaces it and how to keep it, never with
//! "unknown option" or a silent drop.
//!
//! Only while no lane of that slug or flag is loaded: once the example overlay is installed and
//! active, the lane is an ordinary third-party lane and nothing here applies.

use serde_json::Value;

use super::Registry;

/// One retired first-party lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retired {
    /// The slug it had.
    pub slug: &'static str,
    /// The flags it had.
    pub flags: &'static [&'static str],
    /// Why it was retired (with the date).
    pub why: &'static str,
    /// The lane that replaces it, with its flags.
    pub successor: &'static str,
    /// The overlay folder, relative to the source tree, that keeps it working.
    pub example: &'static str,
}

/// The retired lanes.
pub const RETIRED: &[Retired] = &[Retired {
    slug: "gemini",
    flags: &["--gemini"],
    why: "Google stopped serving Gemini CLI to free, Pro and Ultra accounts on 2026-06-18 \
          (the sunset), so the upstream retired the lane",
    successor: "antigravity (--antigravity or --agy)",
    example: "examples/lanes/gemini",
}];

impl Retired {
    /// The explanation: why, the successor, and how to keep the lane where the account still
    /// answers. `examples/` is not installed with gsd-lane, so the sentence says where the
    /// folder is for an installed copy too.
    pub fn explain(&self) -> String {
        format!(
            "the {slug} lane was retired from the first-party roster: {why}; its successor is \
             {successor}; where your account still answers, keep {slug} as an overlay: \
             `gsd-lane install {example}` (run from a gsd-lane checkout; an installed gsd-lane \
             has the folder in the source archive of version {version}, at {example}/)",
            slug = self.slug,
            why = self.why,
            successor = self.successor,
            example = self.example,
            version = env!("CARGO_PKG_VERSION"),
        )
    }

    /// True when no loaded capability (active or not) declares this slug or one of its flags.
    fn absent_from(&self, registry: &Registry) -> bool {
        !registry.entries.iter().any(|entry| {
            entry.slug.as_deref() == Some(self.slug)
                || entry.flags.iter().any(|f| self.flags.contains(&f.as_str()))
        })
    }
}

/// The retired lane `slug` names, unless a loaded capability declares that slug now.
pub fn by_slug(registry: &Registry, slug: &str) -> Option<&'static Retired> {
    RETIRED
        .iter()
        .find(|r| r.slug == slug && r.absent_from(registry))
}

/// The retired lanes whose flags no loaded capability declares (their flags are still parsed,
/// hidden, so that they can be answered).
pub fn unclaimed(registry: &Registry) -> impl Iterator<Item = &'static Retired> + '_ {
    RETIRED.iter().filter(|r| r.absent_from(registry))
}

/// The retired lane `flag` belonged to, unless a loaded capability declares it now.
pub fn by_flag(registry: &Registry, flag: &str) -> Option<&'static Retired> {
    unclaimed(registry).find(|r| r.flags.contains(&flag))
}

/// One warning per leftover `review.<family>.<slug>` key of a retired, unclaimed lane in
/// `config` (the project config as loaded), each naming the key and the explanation.
pub fn leftover_config_keys(registry: &Registry, config: &Value) -> Vec<String> {
    let Some(review) = config.get("review").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    for retired in unclaimed(registry) {
        for (family, value) in review {
            if value
                .as_object()
                .is_some_and(|family| family.contains_key(retired.slug))
            {
                warnings.push(format!(
                    "review.{family}.{slug} is set but has no effect: {}; remove the key, or \
                     install the overlay, which declares it again",
                    retired.explain(),
                    slug = retired.slug,
                ));
            }
        }
    }
    warnings
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gemini_is_retired_and_answered_while_nothing_declares_it() {
        let registry = Registry::first_party();
        let retired = by_flag(&registry, "--gemini").expect("--gemini is answered");
        assert_eq!(by_slug(&registry, "gemini"), Some(retired));
        let text = retired.explain();
        for needle in [
            "2026-06-18",
            "antigravity",
            "gsd-lane install examples/lanes/gemini",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        assert_eq!(by_flag(&registry, "--claude"), None);
        assert_eq!(by_slug(&registry, "claude"), None);
    }

    #[test]
    fn every_leftover_review_family_key_is_named() {
        let registry = Registry::first_party();
        let config = json!({"review": {
            "models": {"gemini": "g", "claude": "c"},
            "timeouts": {"gemini": 5},
            "max_prompt_tokens_per_reviewer": {"gemini": 9},
            "default_reviewers": ["gemini"],
            "gemini": {"x": 1}
        }});
        let warnings = leftover_config_keys(&registry, &config);
        let keys: Vec<&str> = warnings
            .iter()
            .map(|w| w.split(' ').next().unwrap_or(""))
            .collect();
        assert_eq!(
            keys,
            [
                "review.models.gemini",
                "review.timeouts.gemini",
                "review.max_prompt_tokens_per_reviewer.gemini"
            ]
        );
        assert!(leftover_config_keys(&registry, &json!({"review": 3})).is_empty());
        assert!(leftover_config_keys(&registry, &json!([])).is_empty());
    }
}
