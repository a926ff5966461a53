//! Disclosure of a manifest's executable surfaces (trust.md §3).
//!
//! A pure, total function over the raw JSON value: it never fails and never panics, whatever the
//! manifest holds, because it runs before validation (install, update, `disclose --manifest`).
//! The lane is read through the one lenient typed view, [`DeclaredLane`], for active lanes too:
//! the signature binds what the manifest says (non-string arguments, an undeclared posture, an
//! untrimmed slug), which the accepted [`crate::manifest::LaneSpec`] normalizes away, so one
//! manifest has one signature whichever command asks.
//! Each surface class (hooks, command modules, MCP servers, reviewer lanes) is collected on its
//! own, so a bad value in one class leaves only that class empty.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use serde::Serialize;
use serde_json::{Map, Value};

use super::locality::is_local_destination;
use crate::manifest::declared::text;
use crate::manifest::DeclaredLane;

/// The four egress payload classes every lane discloses, in this order (trust.md §3.7, §10).
pub const EGRESS_PAYLOAD_CLASSES: [&str; 4] = [
    "plan text",
    "requirements",
    "research findings",
    "CONTEXT.md decisions",
];

/// What also leaves with every review prompt, beyond the four classes (trust.md §3.7 `[HARD]`).
pub const ADDITIONAL_EGRESS: [&str; 2] = ["project context", "roadmap section"];

/// Additional egress of spawn lanes only: an agentic CLI can open any file the user can read.
pub const SPAWN_ADDITIONAL_EGRESS: &str = "repository files readable by the tool";

/// The resolved-host value shown when no resolver answered (trust.md §3.5, §10).
pub const UNRESOLVED_HOST_MARKER: &str =
    "(unresolved — no host resolver was supplied at disclosure time)";

/// Keys skipped wherever a manifest map is copied (prototype pollution in the reference).
pub const POISON_KEYS: [&str; 3] = ["__proto__", "constructor", "prototype"];

/// A host resolver: `hostConfigKey -> resolved host`.
///
/// `None` or an empty string leaves the unresolved marker (trust.md §3.5).
pub type Resolver<'a> = &'a dyn Fn(&str) -> Option<String>;

/// One reviewer-lane surface (trust.md §3.3); field names are the wire names.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneSurface {
    /// `reviewer.slug` as read (untrimmed).
    pub slug: String,
    /// `reviewer.transport` as declared.
    pub transport: String,
    /// `invoke.binary` as declared.
    pub binary: String,
    /// The string members of `invoke.args`, in order (the rendered view).
    pub args: Vec<String>,
    /// The whole `invoke.args` array, non-strings included (what the signature binds).
    pub raw_args: Vec<Value>,
    /// `invoke.hostConfigKey`.
    pub host_config_key: String,
    /// The resolved host, the unresolved marker, or `""` for a lane that is not HTTP-shaped.
    pub resolved_host: String,
    /// §3.6 applied to `resolvedHost`.
    pub is_local_destination: bool,
    /// `invoke.promptChannel`.
    pub prompt_channel: String,
    /// `reviewer.handler`, `""` when null.
    pub handler: String,
    /// `reviewer.posture` as declared (raw); `None` when absent, which means read-only and
    /// leaves the signature as it was before the field existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub posture: Option<Value>,
    /// `invoke.env`: every string-valued pair, added to the child's environment (decisions.md
    /// row 18); omitted from JSON when empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The four egress payload classes.
    pub egress_payload_classes: Vec<String>,
    /// What else leaves (trust.md §3.7 `[HARD]`), kept apart from the four classes.
    pub additional_egress: Vec<String>,
}

impl LaneSurface {
    /// Reports whether the lane is HTTP-shaped (trust.md §3.4).
    pub fn is_http_shaped(&self) -> bool {
        is_http_shaped(&self.transport, &self.binary, &self.host_config_key)
    }
}

/// A lane is HTTP-shaped when its transport is exactly `openai-http`, or when it declares no
/// binary but names a host key (trust.md §3.4).
pub fn is_http_shaped(transport: &str, binary: &str, host_config_key: &str) -> bool {
    crate::manifest::lane::transport_named(transport) == Some(gsd_lane_sdk::Transport::OpenAiHttp)
        || (binary.is_empty() && !host_config_key.is_empty())
}

/// One hook surface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookSurface {
    /// The hook event.
    pub event: String,
    /// The script run on that event.
    pub script: String,
}

/// One command-module surface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleSurface {
    /// The command family.
    pub family: String,
    /// The module file.
    pub module: String,
    /// The router export, `""` when undeclared.
    pub router: String,
}

/// One MCP-server surface (trust.md §4.2).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpSurface {
    /// Server name.
    pub name: String,
    /// `config.type`, else `config.transport`, else `""`.
    pub transport: String,
    /// Command started.
    pub command: String,
    /// The declared argument strings.
    pub argv: Vec<String>,
    /// The whole `args` array.
    pub raw_args: Vec<Value>,
    /// URL contacted.
    pub url: String,
    /// String-valued headers.
    pub headers: Map<String, Value>,
    /// String-valued environment entries.
    pub env: Map<String, Value>,
    /// Working directory.
    pub cwd: String,
    /// Every own key of the config but the poison keys.
    pub raw_config: Map<String, Value>,
}

/// The disclosure container (trust.md §3.8).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Disclosure {
    /// Hooks with a non-empty script.
    pub hooks: Vec<HookSurface>,
    /// Command modules with a non-empty module.
    pub command_modules: Vec<ModuleSurface>,
    /// MCP servers.
    pub mcp_servers: Vec<McpSurface>,
    /// Zero or one lane.
    pub reviewer_lanes: Vec<LaneSurface>,
    /// True iff any of the four classes is non-empty.
    pub has_executable: bool,
    /// Declared hook scripts and command modules missing from the staged bundle (or absolute,
    /// or with a `..` segment). A lane binary is never listed.
    pub missing_artifacts: Vec<String>,
}

impl Disclosure {
    /// The lane surface, when the manifest declares one.
    pub fn lane(&self) -> Option<&LaneSurface> {
        self.reviewer_lanes.first()
    }
}

/// Discloses `manifest` (trust.md §3): never fails, never panics.
///
/// `resolver` supplies the display-only resolved host of an HTTP-shaped lane; `staged` is the
/// staged bundle directory against which hook scripts and command modules are checked.
pub fn disclose(
    manifest: &Value,
    resolver: Option<Resolver<'_>>,
    staged: Option<&Path>,
) -> Disclosure {
    let root = manifest.as_object();
    let hooks = root.map(collect_hooks).unwrap_or_default();
    let command_modules = root.map(collect_modules).unwrap_or_default();
    let mcp_servers = root
        .and_then(|r| r.get("mcpServers"))
        .map(collect_mcp)
        .unwrap_or_default();
    let reviewer_lanes: Vec<LaneSurface> = DeclaredLane::of_manifest(manifest)
        .and_then(|lane| lane_surface(&lane, resolver))
        .into_iter()
        .collect();
    let missing_artifacts = staged
        .map(|dir| missing_artifacts(dir, &hooks, &command_modules))
        .unwrap_or_default();
    Disclosure {
        has_executable: !hooks.is_empty()
            || !command_modules.is_empty()
            || !mcp_servers.is_empty()
            || !reviewer_lanes.is_empty(),
        hooks,
        command_modules,
        mcp_servers,
        reviewer_lanes,
        missing_artifacts,
    }
}

/// Lane detection and the lane surface record (trust.md §3.2, §3.3), from the declared view.
fn lane_surface(lane: &DeclaredLane, resolver: Option<Resolver<'_>>) -> Option<LaneSurface> {
    let invoke = &lane.invoke;
    let declared = [
        &lane.slug,
        &lane.transport,
        &lane.handler,
        &invoke.binary,
        &invoke.host_config_key,
        &invoke.prompt_channel,
    ]
    .iter()
    .any(|field| !field.is_empty())
        || !invoke.raw_args.is_empty();
    if !declared {
        return None;
    }
    let http = is_http_shaped(&lane.transport, &invoke.binary, &invoke.host_config_key);
    let (resolved_host, is_local) = if http {
        let resolved = resolver
            .and_then(|resolve| call_resolver(resolve, &invoke.host_config_key))
            .filter(|host| !host.is_empty());
        match resolved {
            Some(host) => {
                let local = is_local_destination(&host);
                (host, local)
            }
            None => (UNRESOLVED_HOST_MARKER.to_owned(), false),
        }
    } else {
        (String::new(), false)
    };
    let mut additional_egress: Vec<String> =
        ADDITIONAL_EGRESS.iter().map(|s| (*s).to_owned()).collect();
    if !http {
        additional_egress.push(SPAWN_ADDITIONAL_EGRESS.to_owned());
    }
    Some(LaneSurface {
        slug: lane.slug.clone(),
        transport: lane.transport.clone(),
        binary: invoke.binary.clone(),
        args: lane.args(),
        raw_args: invoke.raw_args.clone(),
        host_config_key: invoke.host_config_key.clone(),
        resolved_host,
        is_local_destination: is_local,
        prompt_channel: invoke.prompt_channel.clone(),
        handler: lane.handler.clone(),
        posture: lane.posture.clone(),
        env: invoke.env.clone(),
        egress_payload_classes: EGRESS_PAYLOAD_CLASSES
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        additional_egress,
    })
}

/// Calls the resolver; a panic inside it leaves the marker (trust.md §3.5).
fn call_resolver(resolve: Resolver<'_>, key: &str) -> Option<String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| resolve(key)))
        .ok()
        .flatten()
}

fn collect_hooks(root: &Map<String, Value>) -> Vec<HookSurface> {
    root.get("hooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(|hook| HookSurface {
            event: text(hook, "event"),
            script: text(hook, "script"),
        })
        .filter(|hook| !hook.script.is_empty())
        .collect()
}

fn collect_modules(root: &Map<String, Value>) -> Vec<ModuleSurface> {
    root.get("commands")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(|entry| ModuleSurface {
            family: text(entry, "family"),
            module: text(entry, "module"),
            router: text(entry, "router"),
        })
        .filter(|module| !module.module.is_empty())
        .collect()
}

/// `mcpServers`: an object map `{name: config}`, or an array of `{name, config}` or
/// `{name, …fields}`.
fn collect_mcp(value: &Value) -> Vec<McpSurface> {
    let entries: Vec<(String, Map<String, Value>)> = match value {
        Value::Object(map) => map
            .iter()
            .map(|(name, config)| {
                (
                    name.clone(),
                    config.as_object().cloned().unwrap_or_default(),
                )
            })
            .collect(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_object)
            .map(|entry| {
                let name = text(entry, "name");
                let config = match entry.get("config").and_then(Value::as_object) {
                    Some(config) => config.clone(),
                    None => entry
                        .iter()
                        .filter(|(key, _)| key.as_str() != "name")
                        .map(|(key, value)| (key.clone(), value.clone()))
                        .collect(),
                };
                (name, config)
            })
            .collect(),
        _ => Vec::new(),
    };
    entries
        .into_iter()
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, config)| mcp_surface(name, &config))
        .collect()
}

fn string_entries(value: Option<&Value>) -> Map<String, Value> {
    value
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(key, value)| value.is_string() && !POISON_KEYS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

fn mcp_surface(name: String, config: &Map<String, Value>) -> McpSurface {
    let transport = config
        .get("type")
        .and_then(Value::as_str)
        .or_else(|| config.get("transport").and_then(Value::as_str))
        .unwrap_or("")
        .to_owned();
    let raw_args: Vec<Value> = config
        .get("args")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    McpSurface {
        name,
        transport,
        command: text(config, "command"),
        argv: raw_args
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        raw_args,
        url: text(config, "url"),
        headers: string_entries(config.get("headers")),
        env: string_entries(config.get("env")),
        cwd: text(config, "cwd"),
        raw_config: config
            .iter()
            .filter(|(key, _)| !POISON_KEYS.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
    }
}

/// Hook scripts and command modules that are absolute, climb with `..`, or are not files in
/// `staged`.
fn missing_artifacts(
    staged: &Path,
    hooks: &[HookSurface],
    modules: &[ModuleSurface],
) -> Vec<String> {
    let declared = hooks
        .iter()
        .map(|h| h.script.as_str())
        .chain(modules.iter().map(|m| m.module.as_str()));
    let mut missing: Vec<String> = Vec::new();
    for artifact in declared {
        let path = Path::new(artifact);
        let escapes = path.is_absolute()
            || artifact.starts_with('/')
            || artifact.starts_with('\\')
            || artifact.split(['/', '\\']).any(|segment| segment == "..")
            || path
                .components()
                .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)));
        let present =
            !escapes && std::fs::symlink_metadata(staged.join(path)).is_ok_and(|m| m.is_file());
        if !present && !missing.iter().any(|m| m == artifact) {
            missing.push(artifact.to_owned());
        }
    }
    missing
}

/// Reports whether an install of this disclosure needs consent: it is allowed (no policy gate
/// blocks it) and it has an executable surface (trust.md §3.8).
#[cfg(test)]
pub fn requires_consent(disclosure: &Disclosure, allowed: bool) -> bool {
    allowed && disclosure.has_executable
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lane_of(manifest: &Value) -> LaneSurface {
        disclose(manifest, None, None)
            .lane()
            .cloned()
            .expect("a lane")
    }

    #[test]
    fn d01_spawn_lane_discloses_binary_and_args() {
        let lane = lane_of(&json!({"reviewer": {"slug": "a", "transport": "spawn",
            "invoke": {"binary": "acme", "args": ["--json", "--verbose"]}}}));
        assert_eq!(lane.binary, "acme");
        assert_eq!(lane.args, vec!["--json", "--verbose"]);
        assert_eq!(lane.raw_args, vec![json!("--json"), json!("--verbose")]);
    }

    #[test]
    fn d02_non_string_args_stay_in_raw_args() {
        let lane = lane_of(&json!({"reviewer": {"slug": "a", "transport": "spawn",
            "invoke": {"binary": "acme", "args": ["-p", 7, {"mode": "fast"}, true]}}}));
        assert_eq!(lane.args, vec!["-p"]);
        assert_eq!(
            lane.raw_args,
            vec![json!("-p"), json!(7), json!({"mode": "fast"}), json!(true)]
        );
    }

    fn http_manifest(transport: &str) -> Value {
        json!({"id": "example-llm", "reviewer": {"slug": "example_llm", "transport": transport,
            "handler": "openai-compatible",
            "invoke": {"hostConfigKey": "review.example_llm_host", "defaultHost": "http://localhost:8000",
                       "path": "/v1/chat/completions"}}})
    }

    #[test]
    fn d03_http_lane_discloses_key_and_resolved_host() {
        let resolve = |key: &str| {
            (key == "review.example_llm_host").then(|| "http://192.168.1.50:1234".to_owned())
        };
        let d = disclose(&http_manifest("openai-http"), Some(&resolve), None);
        let lane = d.lane().expect("lane");
        assert_eq!(lane.host_config_key, "review.example_llm_host");
        assert_eq!(lane.resolved_host, "http://192.168.1.50:1234");
        assert!(!lane.is_local_destination);
        assert_eq!(lane.binary, "");
    }

    #[test]
    fn d04_unresolved_host_is_the_marker_never_empty() {
        let manifest = http_manifest("openai-http");
        let failing = |_: &str| -> Option<String> { panic!("resolver failure") };
        let blank = |_: &str| Some(String::new());
        let none = |_: &str| None;
        let resolvers: [Option<Resolver<'_>>; 4] =
            [None, Some(&failing), Some(&blank), Some(&none)];
        for resolver in resolvers {
            let d = disclose(&manifest, resolver, None);
            let lane = d.lane().expect("lane");
            assert_eq!(lane.resolved_host, UNRESOLVED_HOST_MARKER);
            assert!(!lane.is_local_destination);
        }
    }

    #[test]
    fn d05_d06_local_flag_follows_the_classifier() {
        for (value, local) in [("http://localhost:8080", true), ("http://8.8.8.8", false)] {
            let resolve = move |_: &str| Some(value.to_owned());
            let d = disclose(&http_manifest("openai-http"), Some(&resolve), None);
            assert_eq!(
                d.lane().expect("lane").is_local_destination,
                local,
                "{value}"
            );
        }
    }

    #[test]
    fn d07_payload_classes_are_fixed_and_copied() {
        let manifest = json!({"reviewer": {"slug": "a", "invoke": {"binary": "b"}}});
        let mut first = disclose(&manifest, None, None);
        assert_eq!(
            first.reviewer_lanes[0].egress_payload_classes,
            vec![
                "plan text",
                "requirements",
                "research findings",
                "CONTEXT.md decisions"
            ]
        );
        first.reviewer_lanes[0]
            .egress_payload_classes
            .push("mutated".into());
        first.reviewer_lanes[0].egress_payload_classes.clear();
        let second = disclose(&manifest, None, None);
        assert_eq!(second.reviewer_lanes[0].egress_payload_classes.len(), 4);
        assert_eq!(EGRESS_PAYLOAD_CLASSES.len(), 4);
    }

    #[test]
    fn d08_lane_only_capabilities_require_consent() {
        let spawn =
            json!({"reviewer": {"slug": "a", "transport": "spawn", "invoke": {"binary": "b"}}});
        for manifest in [spawn, http_manifest("openai-http")] {
            let d = disclose(&manifest, None, None);
            assert!(d.has_executable);
            assert!(requires_consent(&d, true));
        }
    }

    #[test]
    fn d09_empty_or_unknown_body_is_no_lane() {
        for body in [
            json!({}),
            json!({"reviewsSection": "X", "future": 1, "invoke": {"defaultHost": "h"}}),
        ] {
            let d = disclose(&json!({"id": "x", "reviewer": body}), None, None);
            assert!(d.reviewer_lanes.is_empty());
            assert!(!d.has_executable);
            assert!(!requires_consent(&d, true));
        }
    }

    #[test]
    fn d10_any_one_recognised_field_makes_a_lane() {
        let bodies = [
            json!({"slug": "a"}),
            json!({"transport": "spawn"}),
            json!({"handler": "opencode"}),
            json!({"invoke": {"binary": "b"}}),
            json!({"invoke": {"hostConfigKey": "k"}}),
            json!({"invoke": {"promptChannel": "stdin"}}),
            json!({"invoke": {"args": ["--x"]}}),
        ];
        for body in bodies {
            let d = disclose(&json!({"reviewer": body}), None, None);
            assert_eq!(d.reviewer_lanes.len(), 1, "{body}");
            assert!(requires_consent(&d, true), "{body}");
        }
    }

    #[test]
    fn d11_non_object_bodies_and_roots_are_no_lane() {
        for body in [json!(null), json!([]), json!(true), json!(0), json!("x")] {
            let d = disclose(&json!({"reviewer": body}), None, None);
            assert!(d.reviewer_lanes.is_empty());
        }
        for root in [json!(null), json!([1]), json!("m"), json!(3)] {
            assert_eq!(disclose(&root, None, None), Disclosure::default());
        }
    }

    #[test]
    fn d12_odd_invoke_values_leave_empty_fields() {
        for invoke in [
            None,
            Some(json!(null)),
            Some(json!("garbage")),
            Some(json!(42)),
            Some(json!([])),
        ] {
            let mut body = json!({"slug": "a", "transport": "spawn"});
            if let Some(invoke) = invoke {
                body["invoke"] = invoke;
            }
            let lane = lane_of(&json!({"reviewer": body}));
            assert_eq!(lane.binary, "");
            assert!(lane.args.is_empty());
            assert!(lane.raw_args.is_empty());
        }
    }

    #[test]
    fn d13_miscased_transport_with_host_key_is_http_shaped() {
        let manifest = http_manifest("OpenAI-HTTP");
        let resolve = |_: &str| Some("http://remote.example".to_owned());
        let lane = disclose(&manifest, Some(&resolve), None).reviewer_lanes[0].clone();
        assert!(lane.is_http_shaped());
        assert_eq!(lane.resolved_host, "http://remote.example");
        assert_eq!(lane_of(&manifest).resolved_host, UNRESOLVED_HOST_MARKER);
    }

    #[test]
    fn d14_spawn_lane_has_no_destination() {
        let resolve = |_: &str| Some("http://x".to_owned());
        let d = disclose(
            &json!({"reviewer": {"slug": "a", "transport": "spawn", "invoke": {"binary": "b"}}}),
            Some(&resolve),
            None,
        );
        let lane = d.lane().expect("lane");
        assert_eq!(lane.resolved_host, "");
        assert!(!lane.is_local_destination);
    }

    #[test]
    fn d15_lane_binary_is_never_a_missing_artifact() {
        let dir = tempfile::tempdir().expect("tempdir");
        let manifest = json!({
            "hooks": [{"event": "e", "script": "hooks/missing.sh"}, {"event": "e", "script": "/etc/passwd"},
                      {"event": "e", "script": "../x.sh"}],
            "reviewer": {"slug": "a", "invoke": {"binary": "not-in-bundle"}}});
        let d = disclose(&manifest, None, Some(dir.path()));
        assert_eq!(
            d.missing_artifacts,
            vec!["hooks/missing.sh", "/etc/passwd", "../x.sh"]
        );
        let lane_only = json!({"reviewer": {"slug": "a", "invoke": {"binary": "not-in-bundle"}}});
        assert!(disclose(&lane_only, None, Some(dir.path()))
            .missing_artifacts
            .is_empty());
    }

    #[test]
    fn w15_additional_egress_is_disclosed() {
        let spawn = lane_of(
            &json!({"reviewer": {"slug": "a", "transport": "spawn", "invoke": {"binary": "b"}}}),
        );
        assert_eq!(
            spawn.additional_egress,
            vec![
                "project context",
                "roadmap section",
                "repository files readable by the tool"
            ]
        );
        assert_eq!(
            spawn.egress_payload_classes.len(),
            4,
            "the [REF] list is unchanged"
        );
        let http = lane_of(&http_manifest("openai-http"));
        assert_eq!(
            http.additional_egress,
            vec!["project context", "roadmap section"]
        );
    }

    #[test]
    fn p18_hostile_shapes_never_panic_and_classes_stay_independent() {
        let mut deep = json!("leaf");
        for _ in 0..200 {
            deep = json!({"a": [deep]});
        }
        let manifest = json!({
            "hooks": 7, "commands": {"x": 1},
            "mcpServers": [{"name": "srv", "command": 5, "args": "no", "headers": {"__proto__": "x", "h": 1, "ok": "v"}}, 3, {"name": ""}],
            "reviewer": {"slug": 1, "transport": ["spawn"], "handler": {}, "invoke": {"binary": null, "args": [deep, null]}},
        });
        let d = disclose(&manifest, None, None);
        assert!(d.hooks.is_empty());
        assert!(d.command_modules.is_empty());
        assert_eq!(d.mcp_servers.len(), 1);
        assert_eq!(
            d.mcp_servers[0].headers,
            json!({"ok": "v"}).as_object().cloned().unwrap_or_default()
        );
        assert_eq!(d.reviewer_lanes.len(), 1, "rawArgs alone declares a lane");
        assert_eq!(d.reviewer_lanes[0].slug, "");
    }

    #[test]
    fn duplicate_keys_resolve_last_wins_like_execution() {
        let manifest: Value = serde_json::from_str(
            r#"{"reviewer": {"slug": "a", "invoke": {"binary": "safe", "binary": "evil"}}}"#,
        )
        .expect("parse");
        assert_eq!(lane_of(&manifest).binary, "evil");
        assert_eq!(manifest["reviewer"]["invoke"]["binary"], "evil");
    }
}
