//! The disclosure signature (trust.md §4) and the extended lane binding (§4.8).
//!
//! [`signature_for_manifest`] is the one function every component calls, so recording and
//! checking can never disagree. It is a pure function of the manifest: no config, no resolver,
//! no staged directory.

use serde_json::{json, Value};

use super::disclosure::{disclose, Disclosure};
use super::stable::{compact, stable, utf16_cmp};

/// Returns the signature of a disclosure (trust.md §4.2-§4.4).
///
/// Each surface is one canonical JSON line; each class's lines are sorted by UTF-16 code units;
/// the lane class is appended only when non-empty (the absent-safe rule).
pub fn disclosure_signature(disclosure: &Disclosure) -> String {
    let sorted = |mut lines: Vec<String>| {
        lines.sort_by(|a, b| utf16_cmp(a, b));
        Value::Array(lines.into_iter().map(Value::String).collect())
    };
    let hooks = sorted(
        disclosure
            .hooks
            .iter()
            .map(|h| stable(&json!(["hook", h.event, h.script])))
            .collect(),
    );
    let mods = sorted(
        disclosure
            .command_modules
            .iter()
            .map(|m| stable(&json!(["mod", m.family, m.module, m.router])))
            .collect(),
    );
    let mcp = sorted(
        disclosure
            .mcp_servers
            .iter()
            .map(|s| {
                stable(&json!([
                    "mcp",
                    s.name,
                    s.transport,
                    s.command,
                    s.raw_args,
                    s.url,
                    s.headers,
                    s.env,
                    s.cwd,
                    s.raw_config
                ]))
            })
            .collect(),
    );
    let lanes: Vec<String> = disclosure
        .reviewer_lanes
        .iter()
        .map(|l| {
            let mut tuple = json!([
                "lane",
                l.slug,
                l.transport,
                l.binary,
                l.raw_args,
                l.host_config_key,
                l.prompt_channel,
                l.handler
            ]);
            // `invoke.env` (decisions.md row 18, upstream #2493): one object appended only when
            // the lane declares a pair, so a lane without one keeps its exact signature. Only
            // `{env}` is appended, not upstream's `{env, defaultHost, residual, laneResidual}`:
            // every HTTP lane has a defaultHost and would lose its consent (spec/CHANGES.md).
            if let (false, Some(items)) = (l.env.is_empty(), tuple.as_array_mut()) {
                items.push(json!({ "env": l.env }));
            }
            // Bound only when declared: an absent posture leaves every existing signature
            // byte-identical, so no installed lane needs consent again.
            if let (Some(posture), Some(items)) = (&l.posture, tuple.as_array_mut()) {
                items.push(json!(["posture", posture]));
            }
            stable(&tuple)
        })
        .collect();
    let outer = if lanes.is_empty() {
        json!([hooks, mods, mcp])
    } else {
        json!([hooks, mods, mcp, sorted(lanes)])
    };
    compact(&outer)
}

/// `disclosure_signature(disclose(manifest, no resolver))`: the signature of a manifest.
pub fn signature_for_manifest(manifest: &Value) -> String {
    disclosure_signature(&disclose(manifest, None, None))
}

/// An executable-set change: the signatures of two manifest versions differ (trust.md §4.6).
#[cfg(test)]
pub fn executable_set_changed(old: &Value, new: &Value) -> bool {
    signature_for_manifest(old) != signature_for_manifest(new)
}

/// The extended lane tuple of trust.md §4.8 (stored as `laneBindingV2`), or `None` when the
/// manifest declares no lane.
///
/// It adds to the `[REF]` tuple the fields that decide where data goes or shape argv:
/// `invoke.defaultHost`, `invoke.path`, `modelArg`, `outputArg`, `outputChannel`,
/// `effortChannel`, `modelConfigKey` and the probe's `kind`, `binary`, `hostConfigKey` and
/// `path`. Raw JSON values are bound (a missing field is `null`), so a type change is a change.
pub fn lane_binding_v2(manifest: &Value) -> Option<String> {
    let disclosure = disclose(manifest, None, None);
    let lane = disclosure.lane()?;
    let body = manifest.get("reviewer");
    let invoke = body.and_then(|b| b.get("invoke")).filter(|v| v.is_object());
    let probe = body.and_then(|b| b.get("probe")).filter(|v| v.is_object());
    let field = |object: Option<&Value>, key: &str| {
        object
            .and_then(|o| o.get(key))
            .cloned()
            .unwrap_or(Value::Null)
    };
    Some(stable(&json!([
        "lane-v2",
        lane.slug,
        lane.transport,
        lane.binary,
        lane.raw_args,
        lane.host_config_key,
        lane.prompt_channel,
        lane.handler,
        field(invoke, "defaultHost"),
        field(invoke, "path"),
        field(invoke, "modelArg"),
        field(invoke, "outputArg"),
        field(invoke, "outputChannel"),
        field(invoke, "effortChannel"),
        field(body, "modelConfigKey"),
        field(probe, "kind"),
        field(probe, "binary"),
        field(probe, "hostConfigKey"),
        field(probe, "path"),
    ])))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use crate::trust::disclosure::{LaneSurface, EGRESS_PAYLOAD_CLASSES};

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("golden manifest parses")
    }

    /// The §4.5 golden table, verbatim.
    const GOLDEN: [(&str, &str); 5] = [
        (
            r#"{"id":"bare","role":"feature","version":"1.0.0"}"#,
            r#"[[],[],[]]"#,
        ),
        (
            r#"{"id":"bare","role":"feature","version":"1.0.0","reviewer":{}}"#,
            r#"[[],[],[]]"#,
        ),
        (
            r#"{"id":"acme-reviewer","reviewer":{"slug":"acme","transport":"spawn","handler":null,"invoke":{"binary":"acme","args":["review","{{model}}","-"],"modelArg":"--model","outputChannel":"stdout","promptChannel":"stdin","effortChannel":"none"},"reviewsSection":"Acme Review","timeoutFloorMs":900000}}"#,
            r#"[[],[],[],["[\"lane\",\"acme\",\"spawn\",\"acme\",[\"review\",\"{{model}}\",\"-\"],\"\",\"stdin\",\"\"]"]]"#,
        ),
        (
            r#"{"id":"example-llm","reviewer":{"slug":"example_llm","transport":"openai-http","handler":"openai-compatible","invoke":{"hostConfigKey":"review.example_llm_host","defaultHost":"http://localhost:8000","path":"/v1/chat/completions"}}}"#,
            r#"[[],[],[],["[\"lane\",\"example_llm\",\"openai-http\",\"\",[],\"review.example_llm_host\",\"\",\"openai-compatible\"]"]]"#,
        ),
        (
            r#"{"id":"x","reviewer":{"slug":"a","invoke":{"binary":"b","args":[7,{"b":1,"a":2},true,null,1e21,0.1,-0,12345678901234567890]}}}"#,
            r#"[[],[],[],["[\"lane\",\"a\",\"\",\"b\",[7,{\"a\":2,\"b\":1},true,null,1e+21,0.1,0,12345678901234567000],\"\",\"\",\"\"]"]]"#,
        ),
    ];

    #[test]
    fn s01_bare_manifest_signature() {
        assert_eq!(signature_for_manifest(&parse(GOLDEN[0].0)), "[[],[],[]]");
    }

    #[test]
    fn s02_golden_signatures_match_byte_for_byte() {
        for (manifest, signature) in GOLDEN {
            assert_eq!(
                signature_for_manifest(&parse(manifest)),
                signature,
                "{manifest}"
            );
        }
    }

    fn spawn(edit: impl FnOnce(&mut Value)) -> Value {
        let mut value = parse(GOLDEN[2].0);
        edit(&mut value);
        value
    }

    #[test]
    fn s03_adding_or_removing_a_lane_changes() {
        let none = parse(GOLDEN[0].0);
        let lane = spawn(|_| {});
        assert!(executable_set_changed(&none, &lane));
        assert!(executable_set_changed(&lane, &none));
        for removed in [json!(null), json!([]), json!({}), json!("x")] {
            let gone = spawn(|v| v["reviewer"] = removed.clone());
            assert!(executable_set_changed(&lane, &gone));
        }
    }

    #[test]
    fn s04_binary_change() {
        let a = spawn(|v| v["reviewer"]["invoke"]["binary"] = json!("my-lane"));
        let b = spawn(|v| v["reviewer"]["invoke"]["binary"] = json!("other-binary"));
        assert!(executable_set_changed(&a, &b));
    }

    #[test]
    fn s05_args_change_on_the_same_binary() {
        let a = spawn(|v| {
            v["reviewer"]["invoke"]["binary"] = json!("python3");
            v["reviewer"]["invoke"]["args"] = json!(["--version"]);
        });
        let b = spawn(|v| {
            v["reviewer"]["invoke"]["binary"] = json!("python3");
            v["reviewer"]["invoke"]["args"] = json!(["-c", "import os; os.system('curl evil')"]);
        });
        assert!(executable_set_changed(&a, &b));
    }

    #[test]
    fn s06_non_string_and_reordered_args_change() {
        let seven = spawn(|v| v["reviewer"]["invoke"]["args"] = json!(["a", 7]));
        let eight = spawn(|v| v["reviewer"]["invoke"]["args"] = json!(["a", 8]));
        let reordered = spawn(|v| v["reviewer"]["invoke"]["args"] = json!([7, "a"]));
        assert!(executable_set_changed(&seven, &eight));
        assert!(executable_set_changed(&seven, &reordered));
    }

    #[test]
    fn s07_every_tuple_field_changes() {
        let base = parse(GOLDEN[3].0);
        let edits: [(&str, Value); 5] = [
            ("/reviewer/invoke/hostConfigKey", json!("review.other_host")),
            ("/reviewer/invoke/promptChannel", json!("argv")),
            ("/reviewer/handler", json!("antigravity")),
            ("/reviewer/slug", json!("renamed")),
            ("/reviewer/transport", json!("spawn")),
        ];
        for (pointer, value) in edits {
            let mut changed = base.clone();
            let (parent, key) = pointer.rsplit_once('/').expect("pointer");
            changed
                .pointer_mut(parent)
                .and_then(Value::as_object_mut)
                .expect("parent object")
                .insert(key.to_owned(), value);
            assert!(executable_set_changed(&base, &changed), "{pointer}");
        }
        let null_handler = spawn(|_| {});
        let named = spawn(|v| v["reviewer"]["handler"] = json!("antigravity"));
        assert!(executable_set_changed(&null_handler, &named));
    }

    #[test]
    fn s08_cosmetic_fields_do_not_change() {
        let base = spawn(|_| {});
        for (key, value) in [
            ("reviewsSection", json!("Other")),
            ("timeoutFloorMs", json!(999_999)),
            ("flags", json!(["--other"])),
            ("emptyOutput", json!("handler-owned")),
            ("requiresBinaries", json!(["x"])),
            (
                "rateLimit",
                json!({"exitCodes": [75], "stderrPatterns": ["quota exceeded"]}),
            ),
        ] {
            let changed = spawn(|v| v["reviewer"][key] = value.clone());
            assert!(!executable_set_changed(&base, &changed), "{key}");
        }
        let titled = spawn(|v| {
            v["title"] = json!("t");
            v["version"] = json!("9.9.9");
        });
        assert!(!executable_set_changed(&base, &titled));
    }

    #[test]
    fn s11_env_pairs_are_bound_only_when_declared() {
        let golden = parse(GOLDEN[2].0);
        let with = |env: Value| spawn(|m| m["reviewer"]["invoke"]["env"] = env);
        // Absent, empty, or holding no string value: the golden signature, byte for byte.
        for env in [json!({}), json!({"A": 1}), json!(null), json!(["A=1"])] {
            assert_eq!(
                signature_for_manifest(&with(env.clone())),
                GOLDEN[2].1,
                "{env}"
            );
        }
        let one = with(json!({"ACME_MODE": "safe"}));
        assert_eq!(
            signature_for_manifest(&one),
            r#"[[],[],[],["[\"lane\",\"acme\",\"spawn\",\"acme\",[\"review\",\"{{model}}\",\"-\"],\"\",\"stdin\",\"\",{\"env\":{\"ACME_MODE\":\"safe\"}}]"]]"#
        );
        assert!(executable_set_changed(&golden, &one));
        assert!(executable_set_changed(
            &one,
            &with(json!({"ACME_MODE": "unsafe"}))
        ));
        assert!(executable_set_changed(
            &one,
            &with(json!({"ACME_MODE": "safe", "B": ""}))
        ));
        assert!(executable_set_changed(
            &one,
            &with(json!({"acme_mode": "safe"}))
        ));
        // Key order is not a change.
        let ab =
            parse(r#"{"reviewer":{"slug":"a","invoke":{"binary":"b","env":{"A":"1","B":"2"}}}}"#);
        let ba =
            parse(r#"{"reviewer":{"slug":"a","invoke":{"binary":"b","env":{"B":"2","A":"1"}}}}"#);
        assert!(!executable_set_changed(&ab, &ba));
    }

    #[test]
    fn s09_object_key_order_and_lane_order_do_not_change() {
        let a: Value =
            parse(r#"{"reviewer":{"slug":"a","invoke":{"binary":"b","args":[{"a":1,"b":2}]}}}"#);
        let b: Value =
            parse(r#"{"reviewer":{"slug":"a","invoke":{"binary":"b","args":[{"b":2,"a":1}]}}}"#);
        assert!(!executable_set_changed(&a, &b));
        let lane = |slug: &str| LaneSurface {
            slug: slug.into(),
            transport: "spawn".into(),
            binary: "b".into(),
            args: vec![],
            raw_args: vec![],
            host_config_key: String::new(),
            resolved_host: String::new(),
            is_local_destination: false,
            prompt_channel: String::new(),
            handler: String::new(),
            posture: None,
            env: std::collections::BTreeMap::new(),
            egress_payload_classes: EGRESS_PAYLOAD_CLASSES.iter().map(|s| (*s).into()).collect(),
            additional_egress: vec![],
        };
        let one = Disclosure {
            reviewer_lanes: vec![lane("x"), lane("y")],
            has_executable: true,
            ..Disclosure::default()
        };
        let two = Disclosure {
            reviewer_lanes: vec![lane("y"), lane("x")],
            has_executable: true,
            ..Disclosure::default()
        };
        assert_eq!(disclosure_signature(&one), disclosure_signature(&two));
    }

    #[test]
    fn s10_resolver_and_staged_directory_do_not_change() {
        let manifest = parse(GOLDEN[3].0);
        let resolve = |_: &str| Some("http://elsewhere.example".to_owned());
        let dir = tempfile::tempdir().expect("tempdir");
        let plain = disclosure_signature(&disclose(&manifest, None, None));
        assert_eq!(
            disclosure_signature(&disclose(&manifest, Some(&resolve), None)),
            plain
        );
        assert_eq!(
            disclosure_signature(&disclose(&manifest, None, Some(dir.path()))),
            plain
        );
        assert_eq!(signature_for_manifest(&manifest), plain);
    }

    #[test]
    fn s12_argv_shaping_fields_change_the_extended_binding_only() {
        let base = spawn(|_| {});
        let edits: [(&str, Value); 4] = [
            ("/reviewer/invoke/modelArg", json!("-c")),
            (
                "/reviewer/invoke/defaultHost",
                json!("https://evil.example"),
            ),
            ("/reviewer/invoke/path", json!("@evil.example/x")),
            ("/reviewer/invoke/outputArg", json!("-o")),
        ];
        for (pointer, value) in edits {
            let mut changed = base.clone();
            let (parent, key) = pointer.rsplit_once('/').expect("pointer");
            changed
                .pointer_mut(parent)
                .and_then(Value::as_object_mut)
                .expect("parent")
                .insert(key.to_owned(), value);
            assert!(
                !executable_set_changed(&base, &changed),
                "[REF] unchanged: {pointer}"
            );
            assert_ne!(
                lane_binding_v2(&base),
                lane_binding_v2(&changed),
                "{pointer}"
            );
        }
        assert_eq!(lane_binding_v2(&parse(GOLDEN[0].0)), None);
    }

    #[test]
    fn posture_is_bound_only_when_declared() {
        let plain: Value = parse(r#"{"reviewer":{"slug":"a","invoke":{"binary":"b"}}}"#);
        let mut declared = plain.clone();
        declared["reviewer"]["posture"] = json!("read-only");
        let mut writes = plain.clone();
        writes["reviewer"]["posture"] = json!("writes-repository");
        // Absent: the tuple is the one from before the field existed.
        assert_eq!(
            signature_for_manifest(&plain),
            r#"[[],[],[],["[\"lane\",\"a\",\"\",\"b\",[],\"\",\"\",\"\"]"]]"#
        );
        assert!(executable_set_changed(&plain, &declared));
        assert!(executable_set_changed(&declared, &writes));
        assert!(executable_set_changed(&plain, &writes));
    }
}
