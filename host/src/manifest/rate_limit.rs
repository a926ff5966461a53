//! The `reviewer.rateLimit` declaration: its closed shape (checked by validation) and the typed
//! rule a lane carries. What a rate-limited attempt is, and how it is retried, is
//! `run::rate_limit`'s.

use serde_json::Value;

/// Most entries of each `rateLimit` list.
pub const MAX_ENTRIES: usize = 16;
/// Longest `stderrPatterns` entry, in characters.
pub const MAX_PATTERN_CHARS: usize = 200;

/// A lane's declared rate-limit answer (`reviewer.rateLimit`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rule {
    /// Exit statuses that mean "rate-limited" (empty: any non-zero status).
    pub exit_codes: Vec<i32>,
    /// Plain substrings of stderr that mean "rate-limited" (empty: any stderr).
    pub stderr_patterns: Vec<String>,
}

impl Rule {
    /// The rule a validated lane body declares, if any.
    pub fn of(body: &Value) -> Option<Rule> {
        let object = body.get("rateLimit")?.as_object()?;
        let list = |key: &str| {
            object
                .get(key)
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .take(MAX_ENTRIES)
        };
        Some(Rule {
            exit_codes: list("exitCodes")
                .filter_map(Value::as_i64)
                .filter_map(|n| i32::try_from(n).ok())
                .collect(),
            stderr_patterns: list("stderrPatterns")
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        })
    }

    /// True when an attempt that exited with `exit` and wrote `stderr` is rate-limited by this
    /// rule (an absent list matches anything; patterns are ASCII case-insensitive).
    pub fn matches(&self, exit: Option<i32>, stderr: &str) -> bool {
        let code = match exit {
            Some(code) if self.exit_codes.is_empty() => code != 0,
            Some(code) => self.exit_codes.contains(&code),
            None => false,
        };
        let lower = stderr.to_ascii_lowercase();
        let text = if self.stderr_patterns.is_empty() {
            !stderr.trim().is_empty()
        } else {
            self.stderr_patterns
                .iter()
                .any(|p| lower.contains(&p.to_ascii_lowercase()))
        };
        code && text
    }
}

/// Checks the closed shape of `reviewer.rateLimit`; each problem is `(field, message)`.
pub fn validate(value: &Value) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    let Some(object) = value.as_object() else {
        problems.push((
            String::new(),
            "must be an object {exitCodes: [integer], stderrPatterns: [string]}".to_owned(),
        ));
        return problems;
    };
    for key in object.keys() {
        if key != "exitCodes" && key != "stderrPatterns" {
            problems.push((
                key.clone(),
                "is not a rateLimit field (known: exitCodes, stderrPatterns)".to_owned(),
            ));
        }
    }
    let mut declared = false;
    for key in ["exitCodes", "stderrPatterns"] {
        let Some(item) = object.get(key) else {
            continue;
        };
        let Some(items) = item.as_array() else {
            problems.push((key.to_owned(), "must be an array".to_owned()));
            continue;
        };
        declared |= !items.is_empty();
        if items.len() > MAX_ENTRIES {
            problems.push((
                key.to_owned(),
                format!("has more than {MAX_ENTRIES} entries"),
            ));
        }
        for (index, entry) in items.iter().enumerate().take(MAX_ENTRIES + 1) {
            let ok = if key == "exitCodes" {
                entry.as_i64().is_some_and(|n| (1..=255).contains(&n))
            } else {
                entry
                    .as_str()
                    .is_some_and(|s| !s.trim().is_empty() && s.chars().count() <= MAX_PATTERN_CHARS)
            };
            if !ok {
                let what = if key == "exitCodes" {
                    "must be an integer exit status from 1 to 255".to_owned()
                } else {
                    format!(
                        "must be a non-empty plain substring of at most {MAX_PATTERN_CHARS} characters"
                    )
                };
                problems.push((format!("{key}[{index}]"), what));
            }
        }
    }
    if !declared && problems.is_empty() {
        problems.push((
            String::new(),
            "declares nothing: give at least one exit status or stderr pattern".to_owned(),
        ));
    }
    problems
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_vocabulary_is_a_closed_shape() {
        assert!(validate(&json!({"exitCodes": [75], "stderrPatterns": ["quota"]})).is_empty());
        assert!(validate(&json!({"stderrPatterns": ["rate limit"]})).is_empty());
        let fields = |v: Value| -> Vec<String> { validate(&v).into_iter().map(|p| p.0).collect() };
        assert_eq!(fields(json!("quota")), vec![""]);
        assert_eq!(fields(json!({})), vec![""]);
        assert_eq!(fields(json!({"regex": ".*"})), vec!["regex"]);
        assert_eq!(
            fields(json!({"exitCodes": [0, 256, "75"]})),
            vec!["exitCodes[0]", "exitCodes[1]", "exitCodes[2]"]
        );
        assert_eq!(
            fields(json!({"stderrPatterns": ["", " "]})),
            vec!["stderrPatterns[0]", "stderrPatterns[1]"]
        );
        assert_eq!(
            fields(json!({"stderrPatterns": "quota"})),
            vec!["stderrPatterns"]
        );
        let many: Vec<i64> = (1..=17).collect();
        assert_eq!(fields(json!({"exitCodes": many})), vec!["exitCodes"]);
    }
}
