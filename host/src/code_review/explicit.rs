//! The explicit selection of a code-review call (upstream-since-2026-08.md §8.1): lane flags
//! mapped to canonical slugs with the merged roster (`explicit-from-argv`), and the
//! comma-separated `--explicit` list the workflow passes back.

use std::collections::BTreeSet;

use super::hygiene;
use super::reason::{Rejection, WholeReason};
use crate::review::args::LaneFlags;

/// The slugs named by lane flags, and the flags that name a lane which cannot run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Named {
    /// Active lanes' slugs, sorted, each once.
    pub slugs: Vec<String>,
    /// Flags of inactive or retired lanes (said on stderr, never selected).
    pub held: Vec<String>,
}

impl Named {
    /// The slugs comma-joined (`antigravity,codex`), empty when none.
    pub fn csv(&self) -> String {
        self.slugs.join(",")
    }
}

/// Maps every argument of `args` that is a lane flag (exactly, any of the lane's flags) to its
/// slug; every other argument is ignored (it belongs to the code-review command).
pub fn from_argv(args: &[String], lanes: &[LaneFlags]) -> Named {
    let mut slugs = BTreeSet::new();
    let mut held = BTreeSet::new();
    for arg in args {
        let Some(lane) = lanes.iter().find(|l| l.flags.iter().any(|f| f == arg)) else {
            continue;
        };
        if lane.active {
            slugs.insert(lane.slug.clone());
        } else {
            held.insert(arg.clone());
        }
    }
    Named {
        slugs: slugs.into_iter().collect(),
        held: held.into_iter().collect(),
    }
}

/// Warnings for the lanes named both by a lane flag (`flagged`) and in `--explicit`
/// (`listed`): each runs once, and the call says so rather than folding them silently.
pub fn named_twice(flagged: &[String], listed: &[String]) -> Vec<String> {
    listed
        .iter()
        .filter(|slug| flagged.contains(slug))
        .map(|slug| {
            format!("lane {slug} is named both by its lane flag and in --explicit; it runs once")
        })
        .collect()
}

/// Most slugs one `--explicit` list names.
const MAX_SLUGS: usize = 64;

/// Parses `--explicit <csv>`: comma-separated slugs, blanks ignored, each once, in the order
/// given.
///
/// # Errors
///
/// `selection_failed` for control characters, a word that is no slug, or too many.
pub fn parse_csv(csv: &str) -> Result<Vec<String>, Rejection> {
    hygiene::no_control("--explicit", csv, WholeReason::SelectionFailed)?;
    let mut slugs: Vec<String> = Vec::new();
    for word in csv.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if !crate::manifest::vocab::is_slug(word) || word.len() > 64 {
            return Err(Rejection::new(
                WholeReason::SelectionFailed,
                format!(
                    "--explicit names {:?}, which is no lane slug (lower-case letters, digits, - and _)",
                    crate::output::neutralize(&word.chars().take(80).collect::<String>())
                ),
            ));
        }
        if !slugs.iter().any(|s| s == word) {
            slugs.push(word.to_owned());
        }
    }
    if slugs.len() > MAX_SLUGS {
        return Err(Rejection::new(
            WholeReason::SelectionFailed,
            format!(
                "--explicit names {} lanes; at most {MAX_SLUGS}",
                slugs.len()
            ),
        ));
    }
    Ok(slugs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes() -> Vec<LaneFlags> {
        let lane = |slug: &str, flags: &[&str], active| LaneFlags {
            slug: slug.into(),
            section: String::new(),
            flags: flags.iter().map(|f| (*f).to_owned()).collect(),
            active,
        };
        vec![
            lane("codex", &["--codex"], true),
            lane("antigravity", &["--antigravity", "--agy"], true),
            lane("gemini", &["--gemini"], false),
        ]
    }

    fn argv(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn flags_map_to_sorted_slugs() {
        let named = from_argv(
            &argv(&["--codex", "3", "--agy", "--depth", "deep"]),
            &lanes(),
        );
        assert_eq!(named.csv(), "antigravity,codex");
        assert_eq!(from_argv(&argv(&["--depth=deep", "x"]), &lanes()).csv(), "");
        let named = from_argv(&argv(&["--codex", "--codex", "--gemini"]), &lanes());
        assert_eq!(named.slugs, vec!["codex"]);
        assert_eq!(named.held, vec!["--gemini"]);
        // A flag is matched exactly: no prefixes, no values.
        assert_eq!(
            from_argv(&argv(&["--cod", "--codex=1"]), &lanes()).csv(),
            ""
        );
    }

    #[test]
    fn a_lane_named_twice_is_said_once() {
        let flagged = argv(&["codex", "antigravity"]);
        assert_eq!(
            named_twice(&flagged, &argv(&["qwen", "codex"])),
            vec!["lane codex is named both by its lane flag and in --explicit; it runs once"]
        );
        assert!(named_twice(&flagged, &argv(&["qwen"])).is_empty());
    }

    #[test]
    fn the_csv_is_checked() {
        assert_eq!(
            parse_csv("codex, antigravity,,codex").expect("csv"),
            vec!["codex", "antigravity"]
        );
        assert_eq!(parse_csv("").expect("empty"), Vec::<String>::new());
        for bad in ["codex;rm -rf /", "Codex", "../x", "a\u{1b}b"] {
            assert_eq!(
                parse_csv(bad).expect_err(bad).reason,
                WholeReason::SelectionFailed
            );
        }
    }
}
