//! `review.parallel_lanes` (upstream #3822; decisions.md row 17): how many lanes run at once.
//!
//! gsd-lane stays concurrent by default (bounded by `--jobs`, one request per provider at a
//! time). An explicit `false` runs lanes one at a time, as `--jobs 1`; `true` or absence keeps
//! the default. Any other value is not an opt-in (upstream reads only an exact `true` as one),
//! so it runs sequentially too, with a warning naming the key. `--jobs` on the command line wins.

use serde_json::Value;

use crate::config::ProjectConfig;

/// The config key.
pub const KEY: &str = "review.parallel_lanes";

/// How many lanes may run at once, and why (for `-v`), plus a warning for an unusable value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concurrency {
    /// The bound: `--jobs`, 1 for sequential lanes, else the default of [`crate::limits`].
    pub max_jobs: usize,
    /// The sentence `-v` prints.
    pub why: String,
    /// Set when the key holds something other than a boolean.
    pub warning: Option<String>,
}

/// The bound from `--jobs` (if given) and `review.parallel_lanes`.
pub fn concurrency(jobs: Option<u32>, config: &ProjectConfig) -> Concurrency {
    if let Some(n) = jobs {
        return Concurrency {
            max_jobs: usize::try_from(n).unwrap_or(usize::MAX),
            why: format!("lanes run at most {n} at a time (--jobs {n})"),
            warning: None,
        };
    }
    let sequential = |why: String, warning: Option<String>| Concurrency {
        max_jobs: 1,
        why,
        warning,
    };
    match config.get(KEY) {
        None | Some(Value::Null) | Some(Value::Bool(true)) => {
            let bound = crate::limits::default_jobs_here();
            Concurrency {
                max_jobs: bound,
                why: format!(
                    "lanes run concurrently, at most {bound} at once from the cores and the \
                     open-file limit ({KEY} is {}; --jobs N sets the bound)",
                    if config.get(KEY) == Some(&Value::Bool(true)) {
                        "true"
                    } else {
                        "not set"
                    }
                ),
                warning: None,
            }
        }
        Some(Value::Bool(false)) => sequential(
            format!("lanes run one at a time ({KEY} is false, as --jobs 1)"),
            None,
        ),
        Some(other) => sequential(
            format!("lanes run one at a time ({KEY} is not a boolean)"),
            Some(format!(
                "{KEY} is {other}, not true or false; lanes run one at a time (set it to true or \
                 false, or remove it)"
            )),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(value: Value) -> Concurrency {
        concurrency(
            None,
            &ProjectConfig::from_value(json!({"review": {"parallel_lanes": value}})),
        )
    }

    #[test]
    fn false_is_sequential_true_and_absence_are_concurrent() {
        assert_eq!(with(json!(false)).max_jobs, 1);
        let default = crate::limits::default_jobs_here();
        assert_eq!(with(json!(true)).max_jobs, default);
        assert_eq!(with(Value::Null).max_jobs, default);
        assert_eq!(concurrency(None, &ProjectConfig::empty()).max_jobs, default);
        assert!(with(json!(false)).warning.is_none());
    }

    #[test]
    fn anything_else_is_sequential_with_a_warning() {
        for value in [json!("true"), json!(1), json!("yes"), json!({})] {
            let c = with(value.clone());
            assert_eq!(c.max_jobs, 1, "{value}");
            assert!(
                c.warning.as_deref().is_some_and(|w| w.contains(KEY)),
                "{value}"
            );
        }
    }

    #[test]
    fn jobs_on_the_command_line_wins() {
        let config = ProjectConfig::from_value(json!({"review": {"parallel_lanes": false}}));
        assert_eq!(concurrency(Some(3), &config).max_jobs, 3);
        let config = ProjectConfig::from_value(json!({"review": {"parallel_lanes": true}}));
        assert_eq!(concurrency(Some(1), &config).max_jobs, 1);
    }
}
