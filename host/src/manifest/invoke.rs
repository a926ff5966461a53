//! `reviewer.invoke` rules (manifest.md §2.3), applied in the order the spec gives.

use gsd_lane_sdk::Transport;
use serde_json::{Map, Value};

use super::checker::Checker;
use super::diagnostic::{Code, Diagnostic};
use super::path::FieldPath;
use super::vocab;

/// Validates `invoke` for the declared transport (`None` when the transport is invalid).
pub(crate) fn check(
    checker: &mut Checker,
    invoke: Option<&Value>,
    transport: Option<Transport>,
    at: &FieldPath,
) {
    let Some(object) = invoke.and_then(Value::as_object) else {
        checker.error(Code::InvType, at.clone(), "must be an object", invoke);
        return;
    };
    let has_any = |fields: &[&str]| fields.iter().any(|field| object.contains_key(*field));
    if has_any(vocab::SPAWN_ONLY) && has_any(vocab::HTTP_ONLY) {
        let message = format!(
            "combines fields of both transports — spawn-only [{}] and openai-http-only [{}]; a lane uses exactly one transport",
            vocab::SPAWN_ONLY.join(", "),
            vocab::HTTP_ONLY.join(", ")
        );
        checker.push(Diagnostic::error(Code::InvMixed, at.clone(), message));
    }
    match transport {
        Some(Transport::Spawn) => {
            forbid(checker, object, vocab::HTTP_ONLY, Transport::Spawn, at);
            check_spawn(checker, object, at);
        }
        Some(Transport::OpenAiHttp) => {
            forbid(
                checker,
                object,
                vocab::SPAWN_ONLY,
                Transport::OpenAiHttp,
                at,
            );
            check_http(checker, object, at);
        }
        None => {}
    }
    let mut unknown: Vec<&String> = object
        .keys()
        .filter(|key| {
            let key = key.as_str();
            !vocab::SPAWN_ONLY.contains(&key)
                && !vocab::HTTP_ONLY.contains(&key)
                && key != "effortChannel"
        })
        .collect();
    unknown.sort();
    for key in unknown {
        let field = at.key(key);
        let message = "unrecognised invoke field, ignored";
        checker.push(Diagnostic::warning(Code::WInvokeUnknown, field, message));
    }
}

fn forbid(
    checker: &mut Checker,
    object: &Map<String, Value>,
    fields: &[&str],
    transport: Transport,
    at: &FieldPath,
) {
    let transport = transport.as_str();
    for field in fields {
        if object.contains_key(*field) {
            checker.error(
                Code::InvForbidden,
                at.key(field),
                &format!("is not allowed when transport is \"{transport}\""),
                None,
            );
        }
    }
}

/// The spawn fields, in the order the spec gives.
fn check_spawn(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    super::invoke_env::check(checker, object, at);
    checker.non_empty_string(
        object,
        "binary",
        at,
        Code::SpBinary,
        "must be given as a non-empty string when transport is \"spawn\"",
    );
    check_args(checker, object, at);
    checker.member(
        object,
        "promptChannel",
        at,
        Code::SpPromptchannel,
        &vocab::PROMPT_CHANNEL,
    );
    let output = checker.member(
        object,
        "outputChannel",
        at,
        Code::SpOutputchannel,
        &vocab::OUTPUT_CHANNEL,
    );
    check_output_arg(checker, object, output, at);
    check_model_arg(checker, object, at);
    checker.member(
        object,
        "effortChannel",
        at,
        Code::SpEffort,
        &vocab::EFFORT_CHANNEL,
    );
}

/// `args`: a list of strings.
fn check_args(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    let args = object.get("args");
    match args.and_then(Value::as_array) {
        Some(entries) => {
            for (index, entry) in entries.iter().enumerate() {
                if !entry.is_string() {
                    checker.error(
                        Code::SpArgsEntry,
                        at.key("args").index(index),
                        "must be a string",
                        Some(entry),
                    );
                }
            }
        }
        None => checker.error(
            Code::SpArgs,
            at.key("args"),
            "must be a list of strings (write [] for none)",
            args,
        ),
    }
}

/// `outputArg`: required with outputChannel `file-arg`, forbidden with any other channel.
fn check_output_arg(
    checker: &mut Checker,
    object: &Map<String, Value>,
    output: Option<&str>,
    at: &FieldPath,
) {
    let output_arg = object.get("outputArg");
    let output_arg_given = output_arg
        .and_then(Value::as_str)
        .is_some_and(|arg| !arg.is_empty());
    match output {
        Some("file-arg") if !output_arg_given => checker.error(
            Code::SpOutputargRequired,
            at.key("outputArg"),
            "must be a non-empty string because outputChannel is \"file-arg\"",
            output_arg,
        ),
        Some("file-arg") => {}
        Some(other) if output_arg.is_some() => checker.error(
            Code::SpOutputargForbidden,
            at.key("outputArg"),
            &format!("is allowed only together with outputChannel \"file-arg\" (outputChannel is \"{other}\")"),
            None,
        ),
        _ => {}
    }
}

/// `modelArg`: a non-empty string or null.
fn check_model_arg(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    let model_arg = object.get("modelArg");
    let model_arg_ok = match model_arg {
        Some(Value::Null) => true,
        Some(Value::String(text)) => !text.is_empty(),
        _ => false,
    };
    if !model_arg_ok {
        checker.error(
            Code::SpModelarg,
            at.key("modelArg"),
            "must be a non-empty string or null",
            model_arg,
        );
    }
}

fn check_http(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    checker.non_empty_string(
        object,
        "hostConfigKey",
        at,
        Code::HtHostkey,
        "must name the configuration key that holds the base URL (non-empty) when transport is \"openai-http\"",
    );
    optional_text(checker, object, "defaultHost", at, Code::HtDefaulthost);
    checker.non_empty_string(
        object,
        "path",
        at,
        Code::HtPath,
        "must be given as a non-empty string, such as \"/v1/chat/completions\", when transport is \"openai-http\"",
    );
    checker.member(
        object,
        "modelDiscovery",
        at,
        Code::HtDiscovery,
        &vocab::MODEL_DISCOVERY,
    );
    optional_text(checker, object, "fallbackModel", at, Code::HtFallbackmodel);
    let effort = object.get("effortChannel");
    if effort.and_then(Value::as_str) != Some("none") {
        checker.error(
            Code::HtEffort,
            at.key("effortChannel"),
            "must be exactly \"none\" when transport is \"openai-http\"",
            effort,
        );
    }
}

fn optional_text(
    checker: &mut Checker,
    object: &Map<String, Value>,
    key: &str,
    at: &FieldPath,
    code: Code,
) {
    if object.contains_key(key) {
        checker.non_empty_string(object, key, at, code, "must be a non-empty string");
    }
}
