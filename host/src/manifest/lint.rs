//! gsd-lane's lint warnings on a lane body (manifest.md §8.8); they never change acceptance.

use serde_json::{Map, Value};

use super::checker::Checker;
use super::diagnostic::{Code, Diagnostic};
use super::path::FieldPath;
use super::vocab;

/// Runs every lint on a `reviewer` object; `config` is the manifest's `config` value.
pub(crate) fn check_body(
    checker: &mut Checker,
    body: &Map<String, Value>,
    config: Option<&Value>,
    at: &FieldPath,
) {
    let invoke = body.get("invoke").and_then(Value::as_object);
    let probe = body.get("probe").and_then(Value::as_object);
    let transport = body.get("transport").and_then(Value::as_str);
    if let (Some(invoke), Some("spawn")) = (invoke, transport) {
        check_placeholders(checker, invoke, &at.key("invoke"));
        check_model_arg(checker, body, invoke, at);
    }
    check_handler_owned(checker, body, at);
    check_key_references(checker, body, invoke, probe, config, at);
    check_paths(checker, invoke, probe, at);
    check_section(checker, body, at);
}

/// W-MODELKEY-NO-MODELARG: a model key on a spawn lane that can never pass the model.
fn check_model_arg(
    checker: &mut Checker,
    body: &Map<String, Value>,
    invoke: &Map<String, Value>,
    at: &FieldPath,
) {
    let model_key = body.get("modelConfigKey").and_then(Value::as_str);
    if model_key.is_some_and(|key| !key.is_empty()) && invoke.get("modelArg") == Some(&Value::Null)
    {
        let field = at.key("modelConfigKey");
        let message = "is set but invoke.modelArg is null; a configured model can never be passed"
            .to_string();
        checker.push(Diagnostic::warning(
            Code::WModelkeyNoModelarg,
            field,
            message,
        ));
    }
}

/// W-HANDLER-OWNED-NO-HANDLER: handler-owned empty output without a handler.
fn check_handler_owned(checker: &mut Checker, body: &Map<String, Value>, at: &FieldPath) {
    if body.get("emptyOutput").and_then(Value::as_str) == Some("handler-owned")
        && body.get("handler") == Some(&Value::Null)
    {
        let field = at.key("emptyOutput");
        let message = "\"handler-owned\" has no handler; the generic stub is used";
        checker.push(Diagnostic::warning(
            Code::WHandlerOwnedNoHandler,
            field,
            message,
        ));
    }
}

/// W-KEY-UNDECLARED: a configuration key the lane reads that its `config` does not declare.
fn check_key_references(
    checker: &mut Checker,
    body: &Map<String, Value>,
    invoke: Option<&Map<String, Value>>,
    probe: Option<&Map<String, Value>>,
    config: Option<&Value>,
    at: &FieldPath,
) {
    let declared = |key: &str| {
        config
            .and_then(Value::as_object)
            .is_some_and(|slices| slices.contains_key(key))
    };
    let references = [
        (Some(body), "modelConfigKey", at.key("modelConfigKey")),
        (Some(body), "promptBudgetKey", at.key("promptBudgetKey")),
        (Some(body), "timeoutConfigKey", at.key("timeoutConfigKey")),
        (Some(body), "effortConfigKey", at.key("effortConfigKey")),
        (
            invoke,
            "hostConfigKey",
            at.key("invoke").key("hostConfigKey"),
        ),
        (probe, "hostConfigKey", at.key("probe").key("hostConfigKey")),
    ];
    for (object, key, field) in references {
        let Some(name) = object.and_then(|o| o.get(key)).and_then(Value::as_str) else {
            continue;
        };
        if !name.is_empty() && !declared(name) {
            let message = format!(
                "names \"{name}\", which this capability does not declare; the setting will resolve to nothing"
            );
            checker.push(Diagnostic::warning(Code::WKeyUndeclared, field, message));
        }
    }
}

/// W-PATH-SLASH: an invoke or probe path that does not start with `/`.
fn check_paths(
    checker: &mut Checker,
    invoke: Option<&Map<String, Value>>,
    probe: Option<&Map<String, Value>>,
    at: &FieldPath,
) {
    for (object, field) in [
        (invoke, at.key("invoke").key("path")),
        (probe, at.key("probe").key("path")),
    ] {
        let path = object.and_then(|o| o.get("path")).and_then(Value::as_str);
        if path.is_some_and(|path| !path.is_empty() && !path.starts_with('/')) {
            let message = "should start with \"/\" (it is appended to the host)".to_string();
            checker.push(Diagnostic::warning(Code::WPathSlash, field, message));
        }
    }
}

/// W-SECTION-CHARS: a reviewsSection with surrounding whitespace or control characters.
fn check_section(checker: &mut Checker, body: &Map<String, Value>, at: &FieldPath) {
    if let Some(section) = body.get("reviewsSection").and_then(Value::as_str) {
        let bad = section.trim() != section || section.chars().any(char::is_control);
        if !section.is_empty() && bad {
            let field = at.key("reviewsSection");
            let message = "has surrounding whitespace or control characters; headings and tab-separated listings will break".to_string();
            checker.push(Diagnostic::warning(Code::WSectionChars, field, message));
        }
    }
}

fn check_placeholders(checker: &mut Checker, invoke: &Map<String, Value>, at: &FieldPath) {
    let Some(args) = invoke.get("args").and_then(Value::as_array) else {
        return;
    };
    let texts: Vec<&str> = args.iter().filter_map(Value::as_str).collect();
    let has = |token: &str| texts.contains(&token);
    let text_of = |key: &str| invoke.get(key).and_then(Value::as_str);
    let mut missing: Vec<String> = Vec::new();
    if text_of("outputChannel") == Some("file-arg") && !has("{{output}}") {
        missing.push("has no \"{{output}}\" although outputChannel is \"file-arg\"; the tool is never told where to write".into());
    }
    if matches!(text_of("promptChannel"), Some("argv" | "argv-file-ref")) && !has("{{prompt}}") {
        missing.push("has no \"{{prompt}}\" although promptChannel passes the prompt on the command line; the tool never sees it".into());
    }
    if text_of("modelArg").is_some_and(|arg| !arg.is_empty()) && !has("{{model}}") {
        missing.push(
            "has no \"{{model}}\" although modelArg is set; a configured model is never passed"
                .into(),
        );
    }
    if text_of("effortChannel") == Some("argv") && !has("{{effort}}") {
        missing.push(
            "has no \"{{effort}}\" although effortChannel is \"argv\"; effort is never passed"
                .into(),
        );
    }
    let field = at.key("args");
    for what in missing {
        checker.push(Diagnostic::warning(
            Code::WPlaceholderMissing,
            field.clone(),
            what,
        ));
    }
    for (index, arg) in args.iter().enumerate() {
        if let Some(text) = arg.as_str() {
            if text.contains("{{") && !vocab::PLACEHOLDERS.contains(&text) {
                let item = field.index(index);
                let message =
                    "contains `{{` but is not exactly a placeholder; it is passed literally";
                checker.push(Diagnostic::warning(
                    Code::WPlaceholderEmbedded,
                    item,
                    message,
                ));
            }
        }
    }
}
