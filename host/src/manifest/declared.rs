//! The lenient typed view of a manifest's lane: what a `reviewer` body declares, as written,
//! for a manifest that may not validate (install, approval, `disclose --manifest`, the
//! disclosure signature of any capability).
//!
//! An accepted lane is read through [`super::LaneSpec`]; this view exists because trust.md §3
//! discloses and signs what a manifest *says* before anything decides whether it is valid: the
//! slug untrimmed, the transport and handler as written (a miscased transport is shown, not
//! refused), every `invoke.args` member (non-strings included) and a `posture` only when it is
//! declared. Reading it is total: a member of another type reads as absent, never as an error.

use gsd_lane_sdk::Transport;
use serde_json::{Map, Value};

use super::lane::HttpInvoke;
use super::probe::ProbeKind;

/// A manifest's lane as declared (see the module documentation).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeclaredLane {
    /// The manifest's `id` (`""` when absent or not a string).
    pub id: String,
    /// `reviewer.slug` as written (untrimmed).
    pub slug: String,
    /// `reviewer.transport` as written.
    pub transport: String,
    /// `reviewer.handler` as written (`""` when null or absent).
    pub handler: String,
    /// `reviewer.invoke`.
    pub invoke: DeclaredInvoke,
    /// `reviewer.probe`.
    pub probe: DeclaredProbe,
    /// `reviewer.posture`, the raw value, `None` when absent.
    pub posture: Option<Value>,
    /// The declared default of each config key the manifest owns, in manifest order.
    pub config_defaults: Vec<(String, Value)>,
}

/// `reviewer.invoke` as declared; every text is `""` when absent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeclaredInvoke {
    /// `invoke.binary`.
    pub binary: String,
    /// `invoke.args`, every member (non-strings included).
    pub raw_args: Vec<Value>,
    /// `invoke.hostConfigKey`.
    pub host_config_key: String,
    /// `invoke.promptChannel`.
    pub prompt_channel: String,
    /// `invoke.path`.
    pub path: String,
    /// Every string-valued entry of `invoke.env`, names unchecked (what disclosure shows and
    /// the signature binds; a lane that runs gets exactly these, since validation refuses any
    /// other entry).
    pub env: std::collections::BTreeMap<String, String>,
    /// The HTTP reading of `invoke` (the one reader plans use), present whenever `invoke` is an
    /// object, whatever the declared transport: what host resolution reads.
    pub http: Option<HttpInvoke>,
}

/// `reviewer.probe` as declared.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeclaredProbe {
    /// `probe.kind`, when it is one of the probe kinds exactly.
    pub kind: Option<ProbeKind>,
    /// `probe.binary` (`""` when absent).
    pub binary: String,
    /// `probe.path` (`""` when absent).
    pub path: String,
}

impl DeclaredLane {
    /// The lane `manifest` declares, or `None` when it has no `reviewer` object.
    pub fn of_manifest(manifest: &Value) -> Option<DeclaredLane> {
        let body = manifest.get("reviewer")?.as_object()?;
        let empty = Map::new();
        let object = |key: &str| body.get(key).and_then(Value::as_object);
        let invoke = object("invoke");
        let probe = object("probe").unwrap_or(&empty);
        let invoke_fields = invoke.unwrap_or(&empty);
        Some(DeclaredLane {
            id: super::DeclaredHeader::of(manifest).id.unwrap_or_default(),
            slug: text(body, "slug"),
            transport: text(body, "transport"),
            handler: text(body, "handler"),
            invoke: DeclaredInvoke {
                binary: text(invoke_fields, "binary"),
                raw_args: invoke_fields
                    .get("args")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
                host_config_key: text(invoke_fields, "hostConfigKey"),
                prompt_channel: text(invoke_fields, "promptChannel"),
                path: text(invoke_fields, "path"),
                env: super::invoke_env::declared(invoke_fields),
                http: invoke.map(HttpInvoke::from_object),
            },
            probe: DeclaredProbe {
                kind: ProbeKind::of_value(probe.get("kind")),
                binary: text(probe, "binary"),
                path: text(probe, "path"),
            },
            posture: body.get("posture").cloned(),
            config_defaults: config_defaults(manifest),
        })
    }

    /// The declared transport, when it is one of the transports exactly.
    pub fn transport(&self) -> Option<Transport> {
        super::lane::transport_named(&self.transport)
    }

    /// The string members of `invoke.args`, in order.
    pub fn args(&self) -> Vec<String> {
        self.invoke
            .raw_args
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    }
}

/// The declared default of each config key `manifest` owns (`config.<key>.default`), in
/// manifest order: the one reading, for the typed lane and the declared view alike.
pub fn config_defaults(manifest: &Value) -> Vec<(String, Value)> {
    manifest
        .get("config")
        .and_then(Value::as_object)
        .map(|config| {
            config
                .iter()
                .filter_map(|(key, slice)| Some((key.clone(), slice.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// A string member (`""` when absent or of another type; never trimmed).
pub fn text(object: &Map<String, Value>, key: &str) -> String {
    object
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_is_written_and_nothing_else() {
        let manifest = json!({"id": "acme", "config": {"review.k": {"default": "h"}, "other": {}},
            "reviewer": {"slug": " a ", "transport": "OpenAI-HTTP", "handler": null, "posture": 3,
                "invoke": {"binary": 7, "args": ["x", 1], "hostConfigKey": "review.k", "path": "v1"},
                "probe": {"kind": "http-reachable", "binary": ["b"], "path": "/m"}}});
        let lane = DeclaredLane::of_manifest(&manifest).expect("a reviewer object");
        assert_eq!(lane.id, "acme");
        assert_eq!(lane.slug, " a ");
        assert_eq!(lane.transport, "OpenAI-HTTP");
        assert_eq!(
            lane.transport(),
            None,
            "a miscased transport is no transport"
        );
        assert_eq!(lane.handler, "");
        assert_eq!(lane.posture, Some(json!(3)));
        assert_eq!(lane.invoke.binary, "");
        assert_eq!(lane.invoke.raw_args, vec![json!("x"), json!(1)]);
        assert_eq!(lane.args(), vec!["x"]);
        assert_eq!(lane.invoke.path, "v1");
        let http = lane.invoke.http.as_ref().expect("invoke is an object");
        assert_eq!(http.host_config_key, "review.k");
        assert_eq!(lane.probe.kind, Some(ProbeKind::HttpReachable));
        assert_eq!(lane.probe.binary, "");
        assert_eq!(lane.probe.path, "/m");
        assert_eq!(
            lane.config_defaults,
            vec![("review.k".to_owned(), json!("h"))]
        );
    }

    #[test]
    fn hostile_shapes_read_as_absent() {
        for manifest in [
            json!(null),
            json!([]),
            json!({"reviewer": 3}),
            json!({"reviewer": []}),
        ] {
            assert_eq!(DeclaredLane::of_manifest(&manifest), None, "{manifest}");
        }
        let lane =
            DeclaredLane::of_manifest(&json!({"id": 1, "reviewer": {"invoke": "x", "probe": 2}}))
                .expect("a reviewer object");
        assert_eq!(lane, DeclaredLane::default());
    }
}
