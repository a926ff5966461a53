//! The code-review request (upstream-since-2026-08.md §8.3): bounded and metadata-only (the
//! repository root, the depth, the base and the changed paths; never a file's content), with
//! the four operating rules, the citation rule and the line format gsd-lane reads findings
//! from ([`super::findings`]).

/// The file name of the request in the run dir (§8.3).
pub const PROMPT_FILE: &str = "gsd-review-prompt.md";

/// How deep the lanes look (`--depth`); an unknown depth is treated as standard (§8.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// The changed lines only.
    Quick,
    /// The changed files in full.
    Standard,
    /// The changes and what they reach.
    Deep,
}

impl Depth {
    /// Parses `--depth`: `quick`, `standard` or `deep` (ASCII case ignored); anything else is
    /// `None` (the caller warns and uses [`Depth::Standard`]).
    pub fn parse(text: &str) -> Option<Depth> {
        match text.to_ascii_lowercase().as_str() {
            "quick" => Some(Depth::Quick),
            "standard" => Some(Depth::Standard),
            "deep" => Some(Depth::Deep),
            _ => None,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Depth::Quick => "quick",
            Depth::Standard => "standard",
            Depth::Deep => "deep",
        }
    }

    /// What the depth asks of a reviewer.
    fn gloss(self) -> &'static str {
        match self {
            Depth::Quick => {
                "a quick pass: read the changed lines and report clear defects (wrong logic, crashes, security holes)"
            }
            Depth::Standard => {
                "a standard pass: read every changed file in full and check each change against the code around it"
            }
            Depth::Deep => {
                "a deep pass: read every changed file in full and follow each change into the code that calls it and the code it calls"
            }
        }
    }
}

/// What the request names.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The repository root (absolute).
    pub repo_root: &'a str,
    /// The depth.
    pub depth: Depth,
    /// The base commit (hex, checked).
    pub base_sha: &'a str,
    /// Repository-relative changed paths (checked: no control characters, inside the root).
    pub files: &'a [String],
}

/// The request text. Its size is bounded by the checked inputs: at most
/// [`super::hygiene::MAX_FILES`] paths of at most [`super::hygiene::MAX_PATH_BYTES`] bytes, read from a list
/// of at most [`super::hygiene::MAX_LIST_BYTES`].
pub fn render(request: &Request<'_>) -> String {
    let mut text = String::from("## Source Review Request\n\n");
    text.push_str(&format!("Repository root: {}\n", request.repo_root));
    text.push_str(&format!(
        "Depth: {} ({})\n",
        request.depth.as_str(),
        request.depth.gloss()
    ));
    text.push_str(&format!("Base commit: {}\n\n", request.base_sha));
    text.push_str(&format!(
        "Changed files since the base commit ({}):\n",
        request.files.len()
    ));
    for file in request.files {
        text.push_str(&format!("- {file}\n"));
    }
    text.push_str(
        "\nRules for this review:\n\
         1. Do not modify any source file.\n\
         2. Do not run tests.\n\
         3. Do not start background processes.\n\
         4. Do not poll or wait: make one read-only pass and return your findings.\n\
         \n\
         Every claim needs a `file:line` citation. Performance is out of scope.\n\
         \n\
         Write each finding on its own line, in this form:\n\
         - [critical|warning|info] path/from/the/root:LINE — what is wrong and why\n\
         Use `critical` for defects that break behaviour or security, `warning` for likely bugs \
         and `info` for the rest. Say so in one line if you find nothing.\n",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_holds_the_metadata_and_the_rules() {
        let files = vec!["src/a.rs".to_owned(), "docs/b.md".to_owned()];
        let text = render(&Request {
            repo_root: "/repo",
            depth: Depth::Deep,
            base_sha: "abc123",
            files: &files,
        });
        assert!(text.starts_with("## Source Review Request\n"), "{text}");
        for needle in [
            "Repository root: /repo",
            "Depth: deep (a deep pass",
            "Base commit: abc123",
            "(2):\n- src/a.rs\n- docs/b.md\n",
            "Do not modify any source file.",
            "Do not run tests.",
            "Do not start background processes.",
            "Do not poll or wait",
            "`file:line`",
            "Performance is out of scope.",
            "- [critical|warning|info] ",
        ] {
            assert!(text.contains(needle), "{needle:?} missing from\n{text}");
        }
    }

    #[test]
    fn depth_parses_three_words_and_nothing_else() {
        assert_eq!(Depth::parse("quick"), Some(Depth::Quick));
        assert_eq!(Depth::parse("DEEP"), Some(Depth::Deep));
        assert_eq!(Depth::parse("standard"), Some(Depth::Standard));
        assert_eq!(Depth::parse("thorough"), None);
        assert_eq!(Depth::parse(""), None);
    }
}
