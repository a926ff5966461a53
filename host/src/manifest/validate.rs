//! Per-capability validation (manifest.md §1, §2, §5.1): a JSON value in, diagnostics out.
//!
//! Total by construction: every access is checked, recursion never exceeds the schema's fixed
//! depth, and values are rendered through bounded helpers.

use gsd_lane_sdk::Transport;
use serde_json::{Map, Value};

use super::checker::Checker;
use super::diagnostic::{type_name, Code, Diagnostic};
use super::path::FieldPath;
use super::{lint, semver, vocab};

/// Validates one manifest value; `folder` is the name of the folder it sits in, when known.
pub fn validate_value(value: &Value, folder: Option<&str>) -> Vec<Diagnostic> {
    let mut checker = Checker::new();
    let root = FieldPath::root();
    let Some(manifest) = value.as_object() else {
        checker.push(
            Diagnostic::error(
                Code::EnvObject,
                root,
                "the manifest root has to be a JSON object",
            )
            .got(Some(value)),
        );
        return finish(checker, value);
    };
    check_envelope(&mut checker, manifest, folder);
    let role = manifest.get("role").and_then(Value::as_str);
    match role {
        Some("reviewer") => check_reviewer_role(&mut checker, manifest),
        Some("runtime") => {
            if let Some(body) = manifest.get("reviewer") {
                check_body(&mut checker, body, manifest);
            }
        }
        Some("feature") => {
            if manifest.contains_key("reviewer") {
                checker.error(
                    Code::RoleFeatureReviewer,
                    root.key("reviewer"),
                    "is only allowed on roles runtime and reviewer",
                    None,
                );
            }
        }
        // An unknown role is the role error only; no body is examined.
        _ => return finish(checker, value),
    }
    if let Some(config) = manifest.get("config") {
        super::config_slice::check(&mut checker, config);
    }
    finish(checker, value)
}

fn finish(checker: Checker, value: &Value) -> Vec<Diagnostic> {
    let id = value
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| "(unknown)".to_owned(), str::to_owned);
    checker
        .found
        .into_iter()
        .map(|mut diagnostic| {
            diagnostic.capability.clone_from(&id);
            diagnostic
        })
        .collect()
}

fn check_envelope(checker: &mut Checker, manifest: &Map<String, Value>, folder: Option<&str>) {
    let root = FieldPath::root();
    let id = manifest.get("id");
    match id.and_then(Value::as_str) {
        Some(text) if vocab::is_id(text) => {
            if let Some(folder) = folder.filter(|folder| *folder != text) {
                checker.error(
                    Code::EnvIdFolder,
                    root.key("id"),
                    &format!("\"{text}\" does not match its folder \"{folder}\""),
                    None,
                );
            }
        }
        _ => checker.error(
            Code::EnvId,
            root.key("id"),
            "must be lower-case kebab text matching ^[a-z][a-z0-9-]*$",
            id,
        ),
    }
    checker.member(manifest, "role", &root, Code::EnvRole, &vocab::ROLE);
    let version = manifest.get("version");
    if !version
        .and_then(Value::as_str)
        .is_some_and(semver::is_strict_semver)
    {
        checker.error(
            Code::EnvVersion,
            root.key("version"),
            "must be a strict semver string, e.g. \"1.2.3\"",
            version,
        );
    }
    if let Some(title) = checker.non_empty_string(
        manifest,
        "title",
        &root,
        Code::EnvTitle,
        "must be a non-empty string",
    ) {
        check_shown_text(checker, title, root.key("title"));
    }
    checker.non_empty_string(
        manifest,
        "description",
        &root,
        Code::EnvDescription,
        "must be a non-empty string",
    );
    checker.member(manifest, "tier", &root, Code::EnvTier, &vocab::TIER);
    check_requires(checker, manifest.get("requires"));
    check_engines(checker, manifest.get("engines"));
    check_compat(checker, manifest.get("compatVersions"));
    check_integrity(checker, manifest.get("integrity"));
    check_provenance(checker, manifest.get("provenance"));
}

fn check_requires(checker: &mut Checker, requires: Option<&Value>) {
    let at = FieldPath::root().key("requires");
    let Some(entries) = requires.and_then(Value::as_array) else {
        checker.error(
            Code::EnvRequires,
            at,
            "must be a list of capability ids (write [] for none)",
            requires,
        );
        return;
    };
    for (index, entry) in entries.iter().enumerate() {
        if !entry.is_string() {
            checker.error(
                Code::EnvRequiresEntry,
                at.index(index),
                "must be a string",
                Some(entry),
            );
        }
    }
}

fn check_engines(checker: &mut Checker, engines: Option<&Value>) {
    let Some(engines) = engines else { return };
    let at = FieldPath::root().key("engines");
    let Some(object) = engines.as_object() else {
        checker.error(
            Code::EnvEngines,
            at,
            "must be a JSON object such as {\"gsd\": \">=1.8.0\"}",
            Some(engines),
        );
        return;
    };
    if let Some(range) = object.get("gsd") {
        if !range.as_str().is_some_and(semver::range_shape_ok) {
            checker.error(
                Code::EnvEnginesGsd,
                at.key("gsd"),
                "must be a semver range string",
                Some(range),
            );
        }
    }
}

fn check_compat(checker: &mut Checker, compat: Option<&Value>) {
    let Some(compat) = compat else { return };
    let at = FieldPath::root().key("compatVersions");
    let Some(object) = compat.as_object() else {
        checker.error(
            Code::EnvCompat,
            at,
            "must be an object of version → range",
            Some(compat),
        );
        return;
    };
    for (key, value) in object {
        if !semver::is_strict_semver(key) {
            checker.error(
                Code::EnvCompat,
                at.key(key),
                "key must be a strict semver version",
                None,
            );
        } else if !value.as_str().is_some_and(semver::range_shape_ok) {
            checker.error(
                Code::EnvCompat,
                at.key(key),
                "value must be a semver range string",
                Some(value),
            );
        }
    }
}

fn check_integrity(checker: &mut Checker, integrity: Option<&Value>) {
    let Some(integrity) = integrity else { return };
    let valid = integrity
        .as_str()
        .and_then(|text| text.strip_prefix("sha512-"))
        .and_then(|rest| rest.strip_suffix("=="))
        .is_some_and(|body| {
            body.len() == 86
                && body
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        });
    if !valid {
        checker.error(
            Code::EnvIntegrity,
            FieldPath::root().key("integrity"),
            "must be \"sha512-\" followed by 86 base64 characters and \"==\"",
            Some(integrity),
        );
    }
}

fn check_provenance(checker: &mut Checker, provenance: Option<&Value>) {
    let Some(provenance) = provenance else { return };
    let at = FieldPath::root().key("provenance");
    let Some(object) = provenance.as_object() else {
        checker.error(
            Code::EnvProvenance,
            at,
            "must be an object with non-empty sourceRepo and commit",
            Some(provenance),
        );
        return;
    };
    for key in ["sourceRepo", "commit"] {
        checker.non_empty_string(
            object,
            key,
            &at,
            Code::EnvProvenance,
            "must be a non-empty string",
        );
    }
}

fn check_reviewer_role(checker: &mut Checker, manifest: &Map<String, Value>) {
    let root = FieldPath::root();
    match manifest.get("reviewer") {
        Some(body) => check_body(checker, body, manifest),
        None => checker.error(
            Code::RoleReviewerNobody,
            root.key("reviewer"),
            "is missing, but role \"reviewer\" declares a lane",
            None,
        ),
    }
    if manifest.contains_key("runtime") {
        checker.error(
            Code::RoleReviewerRuntime,
            root.key("runtime"),
            "is not allowed: lane-only capabilities have no runtime body",
            None,
        );
    }
    for key in vocab::FEATURE_ONLY {
        if manifest.contains_key(*key) {
            checker.error(
                Code::RoleReviewerFeaturefield,
                root.key(key),
                "is a feature-only field, not allowed on role reviewer",
                None,
            );
        }
    }
}

/// Validates the `reviewer` body (§2).
fn check_body(checker: &mut Checker, body: &Value, manifest: &Map<String, Value>) {
    let at = FieldPath::root().key("reviewer");
    let Some(object) = body.as_object() else {
        let message = format!(
            "must be a JSON object (got: {}); to declare no lane, leave the key out",
            type_name(body)
        );
        checker.push(Diagnostic::error(Code::RbType, at, message));
        return;
    };
    check_slug(checker, object, &at);
    check_flags(checker, object, &at);
    let transport = checker
        .member(
            object,
            "transport",
            &at,
            Code::RbTransport,
            &vocab::TRANSPORT,
        )
        .and_then(super::lane::transport_named);
    super::probe::check(checker, object.get("probe"), &at.key("probe"));
    super::invoke::check(checker, object.get("invoke"), transport, &at.key("invoke"));
    check_lane_scalars(checker, object, &at);
    check_required_binaries(checker, object, &at);
    check_config_key(
        checker,
        object,
        "promptBudgetKey",
        &at,
        Code::RbBudgetkey,
        super::model::reviewer_field_required("promptBudgetKey"),
    );
    check_config_key(
        checker,
        object,
        "modelConfigKey",
        &at,
        Code::RbModelkey,
        super::model::reviewer_field_required("modelConfigKey"),
    );
    check_handler(checker, object, &at);
    check_handler_transport(checker, object, transport, &at);
    check_host_options(checker, object, &at);
    super::lane_policy::check(checker, object, &at);
    warn_unknown_fields(checker, object, &at);
    lint::check_body(checker, object, manifest.get("config"), &at);
}

/// `timeoutFloorMs`, `emptyOutput`, `reviewsSection` and `evidenceClass`.
fn check_lane_scalars(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    let timeout = object.get("timeoutFloorMs");
    if vocab::positive_integer(timeout).is_none() {
        checker.error(
            Code::RbTimeout,
            at.key("timeoutFloorMs"),
            "must be an integer number of milliseconds ≥ 1",
            timeout,
        );
    }
    checker.member(
        object,
        "emptyOutput",
        at,
        Code::RbEmptyoutput,
        &vocab::EMPTY_OUTPUT,
    );
    if let Some(section) = checker.non_empty_string(
        object,
        "reviewsSection",
        at,
        Code::RbSection,
        "must be a non-empty string",
    ) {
        check_shown_text(checker, section, at.key("reviewsSection"));
    }
    checker.member(
        object,
        "evidenceClass",
        at,
        Code::RbEvidence,
        &vocab::EVIDENCE_CLASS,
    );
}

/// TXT-UNSAFE (manifest.md §8.10): a name every listing, help page, completion and progress
/// line shows may hold no control character (ESC, CR, line feed, tab, C1, DEL), bidi control
/// or invisible format character: one could retitle the window, move the cursor, reorder or
/// hide what the user reads, or forge a line or a heading. The message names the first one by
/// code point; the value itself is never echoed.
fn check_shown_text(checker: &mut Checker, text: &str, field: FieldPath) {
    if let Some((index, c)) = crate::textsafe::first_unsafe_for_terminal(text) {
        let message = format!(
            "holds U+{:04X} at character {}; it is shown on terminals and in REVIEWS.md, where \
             a control, bidi or invisible character could rewrite or hide what people read; \
             remove it",
            u32::from(c),
            index + 1
        );
        checker.push(Diagnostic::error(Code::TxtUnsafe, field, message));
    }
}

/// gsd-lane's optional body fields: `rateLimit` and `posture`.
fn check_host_options(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    if let Some(value) = object.get("rateLimit") {
        for (field, message) in super::rate_limit::validate(value) {
            let mut path = at.key("rateLimit");
            if !field.is_empty() {
                path = path.key(&field);
            }
            checker.push(Diagnostic::error(Code::RbRatelimit, path, message).got(Some(value)));
        }
    }
    if object.contains_key("posture") {
        checker.member(object, "posture", at, Code::RbPosture, &vocab::POSTURE);
    }
}

/// W-BODY-UNKNOWN for every unrecognised body field, in key order.
fn warn_unknown_fields(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    let mut unknown: Vec<&String> = object
        .keys()
        .filter(|key| !vocab::BODY_FIELDS.contains(&key.as_str()))
        .collect();
    unknown.sort();
    for key in unknown {
        let field = at.key(key);
        let message = format!(
            "unrecognised reviewer field, ignored by this version; recognised fields are {}",
            vocab::BODY_FIELDS.join(", ")
        );
        checker.push(Diagnostic::warning(Code::WBodyUnknown, field, message));
    }
}

fn check_slug(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    let value = object.get("slug");
    let field = at.key("slug");
    match value.and_then(Value::as_str) {
        None | Some("") => checker.error(Code::RbSlug, field, "must be a non-empty string", value),
        Some(slug) if vocab::RESERVED_WORDS.contains(&slug) => checker.error(
            Code::RbSlugReserved,
            field,
            &format!("may not be \"{slug}\" (reserved)"),
            None,
        ),
        Some(slug) if !vocab::is_slug(slug) => checker.error(
            Code::RbSlugGrammar,
            field,
            "must match ^[a-z0-9][a-z0-9_-]*$ (slug grammar; differs from the id and flag grammars)",
            value,
        ),
        Some(_) => {}
    }
}

fn check_flags(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    let value = object.get("flags");
    let field = at.key("flags");
    let Some(flags) = value.and_then(Value::as_array) else {
        checker.error(Code::RbFlags, field, "must be an array of flags", value);
        return;
    };
    if flags.is_empty() {
        checker.error(
            Code::RbFlagsEmpty,
            field,
            "is empty; at least one flag is needed so the lane can be requested",
            None,
        );
        return;
    }
    let mut seen: Vec<&str> = Vec::new();
    for (index, flag) in flags.iter().enumerate() {
        match flag.as_str() {
            Some(text) if vocab::is_flag(text) => {
                if seen.contains(&text) {
                    checker.error(
                        Code::RbFlagDup,
                        field.index(index),
                        &format!("repeats \"{text}\"; each flag may appear once"),
                        None,
                    );
                } else {
                    seen.push(text);
                }
            }
            _ => checker.error(
                Code::RbFlagGrammar,
                field.index(index),
                "must match ^--[a-z0-9][a-z0-9-]*$, e.g. \"--acme\"",
                Some(flag),
            ),
        }
    }
}

fn check_required_binaries(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    let value = object.get("requiresBinaries");
    let field = at.key("requiresBinaries");
    let Some(entries) = value.and_then(Value::as_array) else {
        checker.error(
            Code::RbReqbin,
            field,
            "must be a list of executable names (write [] for none; capability ids belong in the envelope's `requires`)",
            value,
        );
        return;
    };
    for (index, entry) in entries.iter().enumerate() {
        if entry.as_str().is_none_or(|text| text.is_empty()) {
            checker.error(
                Code::RbReqbinEntry,
                field.index(index),
                "must be a non-empty string",
                Some(entry),
            );
        }
    }
}

pub(super) fn check_config_key(
    checker: &mut Checker,
    object: &Map<String, Value>,
    key: &str,
    at: &FieldPath,
    code: Code,
    required: bool,
) {
    let value = object.get(key);
    let valid = match value {
        None => !required,
        Some(Value::Null) => true,
        Some(Value::String(text)) => !text.is_empty(),
        Some(_) => false,
    };
    if !valid {
        let what = if required {
            "must be null or a non-empty dotted configuration key (the key is required)"
        } else {
            "must be null or a non-empty dotted configuration key"
        };
        checker.error(code, at.key(key), what, value);
    }
}

/// A registered handler on a transport it does not drive (the rule each handler declares in
/// the registry, [`crate::registry::handlers::transport_of`]).
fn check_handler_transport(
    checker: &mut Checker,
    object: &Map<String, Value>,
    transport: Option<Transport>,
    at: &FieldPath,
) {
    let (Some(handler), Some(transport)) =
        (object.get("handler").and_then(Value::as_str), transport)
    else {
        return;
    };
    let Some(drives) = crate::registry::handlers::transport_of(handler) else {
        return;
    };
    if drives != transport {
        let message = format!(
            "handler {handler} does not drive {:?} lanes; it drives {:?} (registered handlers: {})",
            transport.as_str(),
            drives.as_str(),
            crate::registry::handlers::transports_described()
        );
        checker.push(Diagnostic::error(
            Code::TrHandlerTransport,
            at.key("handler"),
            message,
        ));
    }
}

fn check_handler(checker: &mut Checker, object: &Map<String, Value>, at: &FieldPath) {
    let value = object.get("handler");
    let valid = match value {
        None => !super::model::reviewer_field_required("handler"),
        Some(Value::Null) => true,
        Some(_) => vocab::is_member(vocab::handler_names(), value),
    };
    if !valid {
        let field = at.key("handler");
        checker.push(
            Diagnostic::error(
                Code::RbHandler,
                field,
                "must be null or a built-in module name",
            )
            .members(vocab::handler_members())
            .got(value),
        );
    }
}
