//! Reviewer selection (review-workflow.md §4-§6): config normalization, the precedence
//! branches, detection candidates, run order, the shared-adapter caveat and self-skip.
//!
//! Pure: detection results come in as a map; messages come out as data.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::config::ProjectConfig;
use crate::refusal::{Reason, Refusal};

/// Which branch of §5.1 chose the reviewers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// At least one lane flag.
    ExplicitFlags,
    /// `--all`.
    AllFlag,
    /// `review.default_reviewers`.
    ConfigDefault,
    /// Nothing asked for: every detected lane.
    NoConfigAllDetected,
}

impl Source {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::ExplicitFlags => "explicit_flags",
            Source::AllFlag => "all_flag",
            Source::ConfigDefault => "config_default",
            Source::NoConfigAllDetected => "no_config_all_detected",
        }
    }
}

/// One selected reviewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Lane slug or instance name.
    pub id: String,
    /// True for a reviewer instance.
    pub instance: bool,
    /// The lane it runs through (= `id` for a built-in identity).
    pub cli: String,
    /// Instance model.
    pub model: Option<String>,
    /// Instance agent.
    pub agent: Option<String>,
}

impl Identity {
    /// The plan overrides of this identity (instance name, model, agent).
    pub fn overrides(&self) -> crate::plan::Instance {
        crate::plan::Instance {
            name: self.instance.then(|| self.id.clone()),
            model: self.model.clone(),
            agent: self.agent.clone(),
        }
    }
}

/// A valid `review.reviewer_instances` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceSpec {
    /// Instance name.
    pub name: String,
    /// Lane slug.
    pub cli: String,
    /// Model.
    pub model: Option<String>,
    /// Agent.
    pub agent: Option<String>,
}

/// The two config keys after §5.2.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Normalized {
    /// `review.default_reviewers`: `None` when absent or null.
    pub defaults: Option<Vec<String>>,
    /// Valid instances in key order.
    pub instances: Vec<InstanceSpec>,
    /// Config-shape errors (exit 1).
    pub errors: Vec<String>,
}

fn is_reviewer_slug(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn is_instance_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Normalizes `review.default_reviewers` and `review.reviewer_instances` (§5.2).
pub fn normalize(config: &ProjectConfig, lanes: &[String]) -> Normalized {
    let mut out = Normalized::default();
    match config.get("review.default_reviewers") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            let mut list: Vec<String> = Vec::new();
            if items.is_empty() {
                out.errors
                    .push("review.default_reviewers cannot be empty".to_owned());
            }
            for item in items {
                match item {
                    Value::String(s) if is_reviewer_slug(s) => {
                        let lower = s.to_ascii_lowercase();
                        if !list.contains(&lower) {
                            list.push(lower);
                        }
                    }
                    Value::String(s) => out.errors.push(format!(
                        "invalid reviewer slug in review.default_reviewers: {s}"
                    )),
                    _ => out
                        .errors
                        .push("review.default_reviewers must contain only string slugs".to_owned()),
                }
            }
            out.defaults = Some(list);
        }
        Some(_) => {
            out.errors
                .push("review.default_reviewers must be a JSON array of reviewer slugs".to_owned());
            out.defaults = Some(Vec::new());
        }
    }
    match config.get("review.reviewer_instances") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, spec) in map {
                match instance(name, spec, lanes) {
                    Ok(spec) => out.instances.push(spec),
                    Err(error) => out.errors.push(error.to_string()),
                }
            }
        }
        Some(_) => out.errors.push(
            "review.reviewer_instances must be a JSON object mapping instance names to {cli,model,agent}"
                .to_owned(),
        ),
    }
    out
}

/// Why one entry of `review.reviewer_instances` is unusable (§5.2); its text is the config
/// error the review prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstanceError {
    /// The name does not match `^[a-z0-9][a-z0-9-]*$`.
    BadName(String),
    /// The name is a built-in reviewer's slug.
    SlugName(String),
    /// The entry is not an object.
    NotObject(String),
    /// `cli` names no reviewer adapter (`got` is its JSON, or `undefined`).
    UnknownCli {
        /// The instance name.
        name: String,
        /// What `cli` held.
        got: String,
    },
    /// `model` or `agent` is not a string.
    NotString {
        /// The instance name.
        name: String,
        /// The key.
        key: &'static str,
    },
}

impl std::fmt::Display for InstanceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstanceError::BadName(name) => write!(
                f,
                "invalid reviewer instance name '{name}': must match ^[a-z0-9][a-z0-9-]*$"
            ),
            InstanceError::SlugName(name) => write!(
                f,
                "reviewer instance name '{name}' must not equal a built-in reviewer slug"
            ),
            InstanceError::NotObject(name) => write!(
                f,
                "reviewer_instances.{name} must be an object with at least {{cli}}"
            ),
            InstanceError::UnknownCli { name, got } => write!(
                f,
                "reviewer_instances.{name}.cli must be a known reviewer adapter (got: {got})"
            ),
            InstanceError::NotString { name, key } => {
                write!(f, "reviewer_instances.{name}.{key} must be a string")
            }
        }
    }
}

impl std::error::Error for InstanceError {}

fn instance(name: &str, spec: &Value, lanes: &[String]) -> Result<InstanceSpec, InstanceError> {
    if !is_instance_name(name) {
        return Err(InstanceError::BadName(name.to_owned()));
    }
    if lanes.iter().any(|slug| slug == name) {
        return Err(InstanceError::SlugName(name.to_owned()));
    }
    let Some(object) = spec.as_object() else {
        return Err(InstanceError::NotObject(name.to_owned()));
    };
    let cli = match object.get("cli") {
        Some(Value::String(cli)) if lanes.contains(cli) => cli.clone(),
        other => {
            return Err(InstanceError::UnknownCli {
                name: name.to_owned(),
                got: other.map_or_else(|| "undefined".to_owned(), Value::to_string),
            })
        }
    };
    let text = |key: &'static str| -> Result<Option<String>, InstanceError> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(InstanceError::NotString {
                name: name.to_owned(),
                key,
            }),
        }
    };
    Ok(InstanceSpec {
        name: name.to_owned(),
        cli,
        model: text("model")?,
        agent: text("agent")?,
    })
}

/// Whether the lane flags of a `--resume` (`given`) ask for the recorded run's selection
/// (`recorded`): none given, or the same lanes in any order. The error names the setting and
/// both values.
///
/// # Errors
///
/// The description of a different selection.
pub fn same_lanes(recorded: &[String], given: &[String]) -> Result<(), LaneMismatch> {
    if given.is_empty() {
        return Ok(());
    }
    let set = |lanes: &[String]| lanes.iter().cloned().collect::<BTreeSet<String>>();
    if set(recorded) == set(given) {
        return Ok(());
    }
    Err(LaneMismatch {
        given: set(given),
        recorded: set(recorded),
    })
}

/// A `--resume` whose lane flags select other lanes than the recorded run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneMismatch {
    /// The lanes the flags select.
    pub given: BTreeSet<String>,
    /// The lanes the recorded run selected (none: the configured or detected reviewers).
    pub recorded: BTreeSet<String>,
}

impl std::fmt::Display for LaneMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |lanes: &BTreeSet<String>| {
            if lanes.is_empty() {
                "none (the configured or detected reviewers)".to_owned()
            } else {
                lanes.iter().cloned().collect::<Vec<_>>().join(",")
            }
        };
        write!(
            f,
            "--resume: the lane flags select {} but the recorded run selected {}; give the same lane flags (or none) to continue it, or start a new review",
            show(&self.given),
            show(&self.recorded)
        )
    }
}

impl std::error::Error for LaneMismatch {}

/// The branch of §5.1 for a request.
pub fn branch(explicit: &[String], all: bool, normalized: &Normalized) -> Source {
    if !explicit.is_empty() {
        Source::ExplicitFlags
    } else if all {
        Source::AllFlag
    } else if normalized.defaults.is_some() {
        Source::ConfigDefault
    } else {
        Source::NoConfigAllDetected
    }
}

/// The lanes detection must probe for this branch (§4), in descriptor order.
pub fn candidates(
    source: Source,
    explicit: &[String],
    normalized: &Normalized,
    lanes: &[String],
) -> Vec<String> {
    let wanted: BTreeSet<String> = match source {
        Source::ExplicitFlags => explicit.iter().cloned().collect(),
        Source::AllFlag | Source::NoConfigAllDetected => lanes.iter().cloned().collect(),
        Source::ConfigDefault => {
            let mut set = BTreeSet::new();
            for entry in normalized.defaults.iter().flatten() {
                if let Some(spec) = normalized.instances.iter().find(|i| &i.name == entry) {
                    set.insert(spec.cli.clone());
                } else if lanes.contains(entry) {
                    set.insert(entry.clone());
                }
            }
            set
        }
    };
    lanes
        .iter()
        .filter(|slug| wanted.contains(*slug))
        .cloned()
        .collect()
}

/// What kind of error stopped the selection (for the exit status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A §5.2 config-shape error (exit 1).
    Config,
    /// A selection or availability error (exit 2).
    Selection,
}

/// The selection's result (§5.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The branch.
    pub source: Source,
    /// Selected identities in run order.
    pub identities: Vec<Identity>,
    /// `warning: ` messages.
    pub warnings: Vec<String>,
    /// `info: ` messages.
    pub infos: Vec<String>,
    /// `error: ` messages with their kind.
    pub errors: Vec<(ErrorKind, String)>,
    /// Candidates excluded with `egress_host_changed`, in descriptor order, with the reason.
    pub not_run: Vec<(String, Reason)>,
    /// Entries of `review.default_reviewers` skipped because their lane is not available
    /// here, with why: said, never a silent `REVIEW COMPLETE`.
    pub skipped: Vec<(Identity, Refusal)>,
}

impl Selection {
    /// Whether ≥2 selected instances share one `cli`.
    #[cfg(test)]
    pub fn shared_adapter(&self) -> bool {
        let mut seen = BTreeSet::new();
        self.identities
            .iter()
            .filter(|i| i.instance)
            .any(|i| !seen.insert(i.cli.clone()))
    }
}

/// The install hints printed when branches 2 or 4 find no detected lane.
pub const NO_CLI_MESSAGE: &str = "No external AI CLIs found. Install at least one:
  gemini: https://github.com/google-gemini/gemini-cli
  codex: https://github.com/openai/codex
  claude: https://github.com/anthropics/claude-code
  opencode: https://opencode.ai (uses GitHub Copilot subscription models)
  qwen: https://github.com/nicepkg/qwen-code
  cursor: https://cursor.com
  antigravity (agy): curl -fsSL https://antigravity.google/cli/install.sh | bash";

/// The built-in identity of lane `slug` (no instance).
pub fn builtin(slug: &str) -> Identity {
    Identity {
        id: slug.to_owned(),
        instance: false,
        cli: slug.to_owned(),
        model: None,
        agent: None,
    }
}

/// Detection results by lane slug.
type Detected = BTreeMap<String, Result<String, Refusal>>;

/// Resolves the selection (§5.1, §5.3) from detection results (`detected[slug]`).
pub fn select(
    source: Source,
    explicit: &[String],
    normalized: &Normalized,
    lanes: &[String],
    detected: &Detected,
) -> Selection {
    let mut sel = Selection {
        source,
        identities: Vec::new(),
        warnings: Vec::new(),
        infos: Vec::new(),
        errors: normalized
            .errors
            .iter()
            .map(|e| (ErrorKind::Config, e.clone()))
            .collect(),
        not_run: Vec::new(),
        skipped: Vec::new(),
    };
    for slug in lanes {
        if let Some(Err(refusal)) = detected.get(slug) {
            // Installed but held back by a safety gate: said in REVIEWS.md, not silently dropped.
            if refusal.reason.is_safety_gate() {
                sel.not_run.push((slug.clone(), refusal.reason));
            }
        }
    }
    let picked = match source {
        Source::ExplicitFlags => pick_explicit(&mut sel, explicit, detected),
        Source::AllFlag | Source::NoConfigAllDetected => {
            let picked: Vec<Identity> = lanes
                .iter()
                .filter(|s| is_detected(detected, s))
                .map(|s| builtin(s))
                .collect();
            if picked.is_empty() {
                sel.errors
                    .push((ErrorKind::Selection, NO_CLI_MESSAGE.to_owned()));
            }
            picked
        }
        Source::ConfigDefault => pick_defaults(&mut sel, normalized, lanes, detected),
    };
    sel.identities = run_order(lanes, &picked);
    sel
}

fn is_detected(detected: &Detected, slug: &str) -> bool {
    matches!(detected.get(slug), Some(Ok(_)))
}

/// Branch 1 (§5.1): every named lane, each of which must be detected.
fn pick_explicit(sel: &mut Selection, explicit: &[String], detected: &Detected) -> Vec<Identity> {
    let errors_before = !sel.errors.is_empty();
    let mut picked = Vec::new();
    let named: BTreeSet<&String> = explicit.iter().collect();
    for slug in &named {
        match detected.get(slug.as_str()) {
            Some(Ok(_)) => picked.push(builtin(slug)),
            Some(Err(refusal)) => sel.errors.push((
                ErrorKind::Selection,
                format!(
                    "explicit reviewer '{slug}' is not available on this host ({}: {})",
                    refusal.reason,
                    crate::output::neutralize(&refusal.detail)
                ),
            )),
            None => sel.errors.push((
                ErrorKind::Selection,
                format!("explicit reviewer '{slug}' is not available on this host"),
            )),
        }
    }
    if picked.is_empty() && !errors_before && sel.errors.is_empty() {
        sel.errors.push((
            ErrorKind::Selection,
            "no selected reviewers are available for explicit flags".to_owned(),
        ));
    }
    picked
}

/// Branch 3 (§5.1): the detected entries of `review.default_reviewers`, lanes and instances.
fn pick_defaults(
    sel: &mut Selection,
    normalized: &Normalized,
    lanes: &[String],
    detected: &Detected,
) -> Vec<Identity> {
    let errors_before = !sel.errors.is_empty();
    let errors_before_branch = sel.errors.len();
    let mut picked = Vec::new();
    for entry in normalized.defaults.iter().flatten() {
        if let Some(spec) = normalized.instances.iter().find(|i| &i.name == entry) {
            let identity = Identity {
                id: spec.name.clone(),
                instance: true,
                cli: spec.cli.clone(),
                model: spec.model.clone(),
                agent: spec.agent.clone(),
            };
            pick_or_skip(sel, &mut picked, identity, detected);
        } else if lanes.contains(entry) {
            pick_or_skip(sel, &mut picked, builtin(entry), detected);
        } else if !normalized.instances.is_empty() {
            sel.errors.push((
                ErrorKind::Selection,
                format!("reviewer instance '{entry}' referenced in review.default_reviewers is not defined in review.reviewer_instances"),
            ));
        } else {
            sel.warnings.push(format!(
                "unknown reviewer slug in review.default_reviewers: {entry}"
            ));
        }
    }
    if picked.is_empty() && sel.errors.len() == errors_before_branch && !errors_before {
        sel.errors.push((
            ErrorKind::Selection,
            "all configured default reviewers are unavailable on this host".to_owned(),
        ));
    }
    picked
}

/// A configured default identity: picked when its lane was detected, else skipped with why.
fn pick_or_skip(
    sel: &mut Selection,
    picked: &mut Vec<Identity>,
    identity: Identity,
    detected: &Detected,
) {
    match detected.get(&identity.cli) {
        Some(Ok(_)) => picked.push(identity),
        // A lane held back by a safety gate is already listed as not run (with its fix).
        Some(Err(refusal)) if refusal.reason.is_safety_gate() => {}
        Some(Err(refusal)) => sel.skipped.push((identity, refusal.clone())),
        None => {
            let detail = format!("lane {} was not probed", identity.cli);
            sel.skipped
                .push((identity, Refusal::new(Reason::MissingBinary, detail)));
        }
    }
}

/// Run order: lanes in descriptor order; the built-in identity first, then instances in
/// default_reviewers order (the order they were picked in).
fn run_order(lanes: &[String], picked: &[Identity]) -> Vec<Identity> {
    let mut ordered = Vec::new();
    for slug in lanes {
        ordered.extend(
            picked
                .iter()
                .filter(|i| !i.instance && &i.cli == slug)
                .cloned(),
        );
        ordered.extend(
            picked
                .iter()
                .filter(|i| i.instance && &i.cli == slug)
                .cloned(),
        );
    }
    ordered
}

/// `SELF` from the environment (§6): `ANTIGRAVITY_AGENT=1` → none, `CURSOR_SESSION_ID` →
/// cursor, `CLAUDE_CODE_ENTRYPOINT` → claude, else auto; `--self` overrides.
pub fn self_identity(
    flag: Option<&str>,
    antigravity_agent: Option<&str>,
    cursor_session: Option<&str>,
    claude_entrypoint: Option<&str>,
) -> Option<String> {
    if let Some(flag) = flag {
        return (flag != "none" && flag != "auto").then(|| flag.to_owned());
    }
    if antigravity_agent == Some("1") {
        return None;
    }
    if cursor_session.is_some_and(|v| !v.is_empty()) {
        return Some("cursor".to_owned());
    }
    if claude_entrypoint.is_some_and(|v| !v.is_empty()) {
        return Some("claude".to_owned());
    }
    None
}

/// Removes every identity whose `cli` is `SELF` (§6); warns for an explicitly named lane;
/// errors when nothing remains.
pub fn apply_self_skip(sel: &mut Selection, self_slug: Option<&str>, explicit: &[String]) {
    let Some(me) = self_slug else {
        return;
    };
    let before = sel.identities.len();
    sel.identities.retain(|i| i.cli != me);
    if sel.identities.len() == before {
        return;
    }
    if explicit.iter().any(|s| s == me) {
        sel.warnings.push(format!(
            "skipping explicitly named reviewer '{me}': it is the agent driving this review (independence policy, not unavailability)"
        ));
    }
    if sel.identities.is_empty() {
        sel.errors.push((
            ErrorKind::Selection,
            format!("at least one reviewer different from the driving agent ({me}) is required"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lanes() -> Vec<String> {
        ["gemini", "claude", "codex", "opencode"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    }

    fn detected(ok: &[&str]) -> BTreeMap<String, Result<String, Refusal>> {
        lanes()
            .into_iter()
            .map(|slug| {
                let result = if ok.contains(&slug.as_str()) {
                    Ok(String::new())
                } else {
                    Err(Refusal::new(
                        Reason::MissingBinary,
                        format!("{slug} is not on PATH"),
                    ))
                };
                (slug, result)
            })
            .collect()
    }

    fn config(value: Value) -> ProjectConfig {
        ProjectConfig::from_value(value)
    }

    #[test]
    fn normalization_errors() {
        let n = normalize(
            &config(
                json!({"review": {"default_reviewers": ["Gemini", 3, "a b", "gemini"],
                "reviewer_instances": {"Bad": {}, "codex": {"cli": "codex"}, "x": 1,
                 "y": {"cli": "nope"}, "z": {"cli": "opencode", "model": 5},
                 "ok": {"cli": "opencode", "model": "m"}}}}),
            ),
            &lanes(),
        );
        assert_eq!(n.defaults, Some(vec!["gemini".to_owned()]));
        assert_eq!(n.instances.len(), 1);
        assert_eq!(
            n.errors,
            vec![
                "review.default_reviewers must contain only string slugs",
                "invalid reviewer slug in review.default_reviewers: a b",
                "invalid reviewer instance name 'Bad': must match ^[a-z0-9][a-z0-9-]*$",
                "reviewer instance name 'codex' must not equal a built-in reviewer slug",
                "reviewer_instances.x must be an object with at least {cli}",
                "reviewer_instances.y.cli must be a known reviewer adapter (got: \"nope\")",
                "reviewer_instances.z.model must be a string",
            ]
        );
        let empty = normalize(
            &config(json!({"review": {"default_reviewers": []}})),
            &lanes(),
        );
        assert_eq!(
            empty.errors,
            vec!["review.default_reviewers cannot be empty"]
        );
    }

    #[test]
    fn explicit_missing_is_an_error_even_with_others() {
        let n = Normalized::default();
        let explicit = vec!["qwen".to_owned(), "gemini".to_owned()];
        let mut det = detected(&["gemini"]);
        det.insert(
            "qwen".into(),
            Err(Refusal::new(Reason::MissingBinary, "qwen is not on PATH")),
        );
        let sel = select(Source::ExplicitFlags, &explicit, &n, &lanes(), &det);
        assert_eq!(
            sel.errors,
            vec![(
                ErrorKind::Selection,
                "explicit reviewer 'qwen' is not available on this host (missing_binary: qwen is not on PATH)".to_owned()
            )]
        );
    }

    #[test]
    fn config_default_instances_in_run_order() {
        let n = normalize(
            &config(
                json!({"review": {"default_reviewers": ["op-b", "codex", "op-a", "opencode", "ghost-x"],
                "reviewer_instances": {"op-a": {"cli": "opencode"}, "op-b": {"cli": "opencode"}}}}),
            ),
            &lanes(),
        );
        let sel = select(
            Source::ConfigDefault,
            &[],
            &n,
            &lanes(),
            &detected(&["codex", "opencode"]),
        );
        let ids: Vec<&str> = sel.identities.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["codex", "opencode", "op-b", "op-a"]);
        assert!(sel.shared_adapter());
        assert_eq!(
            sel.errors,
            vec![(ErrorKind::Selection, "reviewer instance 'ghost-x' referenced in review.default_reviewers is not defined in review.reviewer_instances".to_owned())]
        );
    }

    #[test]
    fn config_default_all_unavailable() {
        let n = normalize(
            &config(json!({"review": {"default_reviewers": ["gemini", "nobody"]}})),
            &lanes(),
        );
        let sel = select(Source::ConfigDefault, &[], &n, &lanes(), &detected(&[]));
        let skipped: Vec<&str> = sel.skipped.iter().map(|(i, _)| i.id.as_str()).collect();
        assert_eq!(skipped, ["gemini"]);
        assert_eq!(
            sel.warnings,
            vec!["unknown reviewer slug in review.default_reviewers: nobody"]
        );
        assert_eq!(sel.errors.len(), 1);
        assert!(sel.errors[0]
            .1
            .starts_with("all configured default reviewers"));
    }

    #[test]
    fn resume_lane_flags_must_name_the_recorded_selection() {
        let v = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(same_lanes(&v(&["alpha", "beta"]), &v(&[])).is_ok());
        assert!(same_lanes(&v(&["alpha", "beta"]), &v(&["beta", "alpha"])).is_ok());
        let err = same_lanes(&v(&["alpha", "beta"]), &v(&["alpha", "gamma"]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("select alpha,gamma but the recorded run selected alpha,beta"),
            "{err}"
        );
        assert!(same_lanes(&v(&[]), &v(&["alpha"])).is_err());
    }

    #[test]
    fn self_skip_rules() {
        assert_eq!(self_identity(None, Some("1"), Some("c"), Some("x")), None);
        assert_eq!(
            self_identity(None, None, Some("c"), Some("x")).as_deref(),
            Some("cursor")
        );
        assert_eq!(
            self_identity(None, None, None, Some("x")).as_deref(),
            Some("claude")
        );
        assert_eq!(
            self_identity(Some("codex"), Some("1"), None, None).as_deref(),
            Some("codex")
        );
        assert_eq!(self_identity(None, None, None, None), None);
        let n = Normalized::default();
        let mut sel = select(Source::AllFlag, &[], &n, &lanes(), &detected(&["claude"]));
        apply_self_skip(&mut sel, Some("claude"), &[]);
        assert!(sel.identities.is_empty());
        assert_eq!(sel.errors.len(), 1);
    }
}
