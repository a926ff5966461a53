//! `reviewer.invoke.env` (upstream #2493; decisions.md row 18): environment pairs added for the
//! lane's child process only. Spawn lanes only; names follow `^[A-Za-z_][A-Za-z0-9_]*$`; values
//! are strings; `__proto__` and a case-insensitive denylist of names that let a manifest run
//! code of its choosing (a loader, an interpreter's start-up hook, `PATH`) are refused.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::checker::Checker;
use super::diagnostic::{Code, Diagnostic};
use super::path::FieldPath;

/// Names no lane may set (compared case-insensitively: Windows looks names up that way).
pub const DENYLIST: [&str; 20] = [
    "PATH",
    "NODE_OPTIONS",
    "NODE_REPL_EXTERNAL_MODULE",
    "NODE_PATH",
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "BASH_ENV",
    "ENV",
    "PERL5OPT",
    "RUBYOPT",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "CLASSPATH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
];

/// Names outside [`DENYLIST`] that validation accepts but that make common tools (git, ssh,
/// editors and pagers, interpreters) start a program or load code or configuration the value
/// names, which a capability can ship in its own bundle: the disclosure warns about them
/// before consent. A warning list, not a complete one; consent is the control.
pub const CODE_STEERING: [&str; 23] = [
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_DIR",
    "GIT_SSH",
    "GIT_TEMPLATE_DIR",
    "SHELL",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_PROXY_COMMAND",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "PYTHONHOME",
    "PERL5LIB",
    "PERLLIB",
    "RUBYLIB",
];

/// True for a name that can make the lane's child run code of the manifest's choosing: a
/// denylisted name (refused at validation, still warned about when disclosed) or one of
/// [`CODE_STEERING`], in any case.
pub fn steers_code(name: &str) -> bool {
    denied(name) || CODE_STEERING.iter().any(|d| d.eq_ignore_ascii_case(name))
}

/// Every string-valued entry of `invoke.env`, names unchecked (the disclosed view); empty when
/// absent or not an object.
pub fn declared(invoke: &Map<String, Value>) -> BTreeMap<String, String> {
    invoke
        .get("env")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_owned())))
        .collect()
}

/// Most pairs one lane may declare (a bound on what a manifest makes gsd-lane hold).
pub const MAX_PAIRS: usize = 64;

/// True for a name of the environment-variable grammar.
fn well_formed(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// True for a denylisted name, in any case.
pub fn denied(name: &str) -> bool {
    DENYLIST.iter().any(|d| d.eq_ignore_ascii_case(name))
}

/// Why `name` may not be declared, if it may not.
fn refusal(name: &str) -> Option<String> {
    if name == "__proto__" {
        return Some(
            "\"__proto__\" is refused: the upstream's loader would silently drop it".to_owned(),
        );
    }
    if !well_formed(name) {
        return Some(format!(
            "{name:?} is not a valid environment variable name (letters, digits and _, not \
             starting with a digit)"
        ));
    }
    if denied(name) {
        return Some(format!(
            "{name} can make the spawned reviewer run code the manifest picks; declare an \
             absolute invoke.binary instead"
        ));
    }
    None
}

/// Checks a present `invoke.env` of a spawn lane.
pub(crate) fn check(checker: &mut Checker, invoke: &Map<String, Value>, at: &FieldPath) {
    let Some(value) = invoke.get("env") else {
        return;
    };
    let field = at.key("env");
    let Some(pairs) = value.as_object() else {
        checker.error(
            Code::SpEnv,
            field,
            "must be an object of environment name/value pairs",
            Some(value),
        );
        return;
    };
    if pairs.len() > MAX_PAIRS {
        checker.error(
            Code::SpEnv,
            field.clone(),
            &format!("declares more than {MAX_PAIRS} variables"),
            None,
        );
    }
    for (name, value) in pairs {
        if let Some(why) = refusal(name) {
            checker.push(Diagnostic::error(Code::SpEnv, field.key(name), why));
        } else if !value.is_string() {
            checker.error(
                Code::SpEnv,
                field.key(name),
                "must be a string",
                Some(value),
            );
        }
    }
}

/// The pairs a lane's child gets: the object's string-valued entries with an acceptable name
/// (non-strings dropped, not coerced); empty when absent or unusable.
pub fn pairs(invoke: &Map<String, Value>) -> BTreeMap<String, String> {
    invoke
        .get("env")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .take(MAX_PAIRS)
        .filter(|(name, _)| refusal(name).is_none())
        .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_owned())))
        .collect()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codes(invoke: Value) -> Vec<String> {
        let mut checker = Checker::new();
        check(
            &mut checker,
            invoke.as_object().expect("object"),
            &FieldPath::root().key("reviewer").key("invoke"),
        );
        checker.found.iter().map(|d| d.field.to_string()).collect()
    }

    #[test]
    fn the_section_9_2_refusals() {
        assert!(codes(json!({})).is_empty());
        assert!(
            codes(json!({"env": {"CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1", "_X1": ""}})).is_empty()
        );
        assert_eq!(codes(json!({"env": ["A"]})), ["reviewer.invoke.env"]);
        for bad in [
            "1A",
            "A-B",
            "",
            "A B",
            "__proto__",
            "path",
            "Ld_Preload",
            "ENV",
        ] {
            assert_eq!(
                codes(json!({"env": {bad: "x"}})),
                [FieldPath::root()
                    .key("reviewer")
                    .key("invoke")
                    .key("env")
                    .key(bad)
                    .to_string()],
                "{bad}"
            );
        }
        assert_eq!(codes(json!({"env": {"A": 1}})), ["reviewer.invoke.env.A"]);
    }

    #[test]
    fn pairs_keep_only_acceptable_string_entries() {
        let invoke =
            json!({"env": {"A": "1", "B": 2, "PATH": "/evil", "__proto__": "x", "C": "3"}});
        let pairs = pairs(invoke.as_object().expect("object"));
        assert_eq!(
            pairs.into_iter().collect::<Vec<_>>(),
            [
                ("A".to_owned(), "1".to_owned()),
                ("C".to_owned(), "3".to_owned())
            ]
        );
    }

    #[test]
    fn no_shipped_capability_declares_a_denylisted_name() {
        let registry = crate::registry::Registry::first_party();
        for lane in &registry.lanes {
            if let Some(spawn) = lane.spawn() {
                for name in spawn.env.keys() {
                    assert!(!denied(name), "{}: {name}", lane.slug);
                }
            }
        }
    }
}
