//! The trust layer end to end (trust.md §9; the 20 weaknesses of the issue): the real binary,
//! a private HOME/GSD_HOME, fixture manifests from `tests/fixtures/trust/` and loopback
//! listeners on `127.0.0.1:0` that count every connection.
//!
//! Tests are named after the case they pin: `d17_…`, `c01_…`, `e01_…`, `p01_…` for trust.md
//! §9, `wNN_…` for the weaknesses. Every assertion is on reason codes, records and connection
//! counts, not on prose. No address other than 127.0.0.1 is ever contacted: cases about other
//! hosts (`127.0.0.2`, `evil.example`) assert that the lane is refused before any connection.
//!
//! # W1-W20 of `weaknesses.md` and the tests that fail without each fix
//!
//! The `wNN_` test names keep the project's own, older numbering; `spec_wNN_` names and this
//! table use `weaknesses.md`'s. "unit:" tests live in `host/src/…`. The fix of W11 "no lane
//! outlives gsd-lane" (SIGKILL) and the https half of W12 belong to other branches (issue 11
//! points 4 and 3).
//!
//! | W | weakness | tests (this file unless marked unit) |
//! |---|---|---|
//! | W1 | `invoke.path`/`probe.path` move the authority | `w01_path_cannot_move_authority`, `e14_path_cannot_move_the_authority`, `e15_probe_key_must_be_the_invoke_key` |
//! | W2 | consent looked up by slug | `w02_consent_is_looked_up_by_capability_id`, `e12_id_differs_from_slug_and_is_still_checked`, `e13_each_lane_is_checked_against_its_own_record` |
//! | W3 | an update re-binds the host silently | `w08_update_cannot_launder_a_host_change`, `c14_update_without_consent_keeps_the_old_host_and_the_run_blocks`, `c15_default_host_only_update_needs_consent` |
//! | W4 | redirects followed | `w03_redirects_are_not_followed`, `e16_redirect_is_not_followed`, `e17_agent_has_redirects_disabled` |
//! | W5 | consent without seeing the host | `w05_consent_shows_the_host_it_binds`, `d17_prompt_shows_the_host_the_record_binds` |
//! | W6 | the probe escapes the egress check | `w04_probe_uses_the_verified_host`, `e01_config_edit_blocks_before_any_byte`, `w12_environment_proxies_are_ignored`, `e18_environment_proxies_are_ignored` |
//! | W7 | first-party and global lanes never pinned | `w11_unrecorded_http_lanes_are_pinned_on_first_use`, `e21_first_use_pin_blocks_a_later_edit`; a damaged pin or consent store fails closed: `s01_…`, `s02_…`, `s03_…`, `s04_…` |
//! | W8 | argv-shaping fields not signature-bound | `w16_argv_shaping_fields_are_bound`; unit: `trust::signature::tests::s12_argv_shaping_fields_change_the_extended_binding_only` |
//! | W9 | consent and run resolve the host differently | `w06_one_resolver_for_consent_and_run`, `c16_literal_null_resolves_the_same_at_consent_and_run`, `w07_unresolvable_host_fails_consent_loudly` |
//! | W10 | Windows `.cmd`/`.bat` re-parsing | `p15_batch_argument_rules_hold_on_every_platform`, `p15_windows_batch_shim_value_is_inert`; unit: `trust::winshim::tests::w10_batch_shim_arguments_stay_inert` |
//! | W11 | timeout kills only the direct child | `w18_timeout_kills_the_whole_process_tree`, `p09_timeout_kills_the_whole_tree`, `p06_slow_capability_probe_times_out_and_dies` |
//! | W12 | unbounded bodies and spawn buffers | `e20_oversized_body_is_a_bounded_failure`, `w19_only_http_and_https_with_a_bounded_body`, `p08_oversized_capture_is_a_bounded_spawn_error` |
//! | W13 | third-party lanes inherit the environment | `w17_third_party_spawn_gets_a_minimal_environment`, `p17_third_party_spawn_lane_gets_a_minimal_environment` |
//! | W14 | repository-relative binaries run | `w14_repo_relative_binary_is_refused_for_third_party_lanes`, `p16_repo_relative_binary_is_refused`; unit: `trust::policy::tests::w14_repo_relative_binary_is_refused_for_third_party_lanes` |
//! | W15 | not every payload class disclosed | `spec_w15_disclosure_names_every_payload_class`; unit: `trust::disclosure::tests::w15_additional_egress_is_disclosed`, `d07_payload_classes_are_fixed_and_copied` |
//! | W16 | a spoofable consent prompt | `t01_review_text_printed_by_run_escapes_bidi_and_invisible_controls`, `q01_rendered_command_lines_paste_back_as_the_json_argv`; unit: `trust::render::tests::d16_rendering_is_inert_and_unambiguous`, `w13_disclosure_rendering_is_inert_and_unambiguous`, `output::tests::quoted_lines_paste_back_into_sh_as_the_same_argv`, `output::tests::bidi_and_invisible_controls_are_escaped` |
//! | W17 | weak `trust list`/`revoke` | `w09_revoke_walks_to_the_project_root_and_reports_removal`, `first_party_lanes_cannot_be_removed_and_list_shows_pins` |
//! | W18 | local/remote classification quirks | `spec_w18_locality_is_classified_by_the_parsed_host_not_its_spelling`, `e06_localhost_and_127_0_0_1_are_different_destinations`; unit: `trust::locality::tests::d05_local_table`, `d06_remote_table` |
//! | W19 | non-http(s) hosts not rejected early | `e19_non_http_destinations_are_malformed`, `w19_only_http_and_https_with_a_bounded_body` |
//! | W20 | a handler not checked against its transport | `spec_w20_a_handler_of_another_transport_is_refused_before_anything_runs` (two layers, the manifest policy and the plan-time fit in `run/lane.rs`: it fails when both are removed); unit: `trust::policy::tests::w20_handler_must_fit_the_transport` |
//!
//! Issue 11's other trust fixes: run-dir safety `r01_…`-`r03_…`, a broken config stops
//! `review` `k01_…`, a symlinked capability folder `l01_…`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::http_server::{json_text_reply, redirect_reply, Reply, Seen, Server as Listener};
use crate::util::{self, Outcome, Scope, TestEnv};

const PROMPT: &str = "Please review PLAN-1.\n";
const TIMEOUT: Duration = Duration::from_secs(40);

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

struct Lab {
    env: TestEnv,
    run_dir: PathBuf,
}

fn fixture_manifest(case: &str, id: &str) -> Value {
    util::read_json(&util::fixture(&format!(
        "trust/{case}/{id}/capability.json"
    )))
}

impl Lab {
    fn new() -> Lab {
        let env = TestEnv::with_planning();
        let run_dir = env.root.path().join("run");
        std::fs::create_dir_all(&run_dir).expect("run dir");
        // A private run dir whatever the umask (a group-writable one is refused).
        std::fs::set_permissions(
            &run_dir,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .expect("chmod run dir");
        std::fs::write(run_dir.join("gsd-review-prompt.md"), PROMPT).expect("prompt");
        Lab { env, run_dir }
    }

    fn root(&self) -> String {
        std::fs::canonicalize(&self.env.project)
            .expect("canonical project")
            .display()
            .to_string()
    }

    fn path_var(&self) -> String {
        format!(
            "{}:{}:/usr/bin:/bin",
            util::fixture("bin").display(),
            util::fixture("trust/bin").display()
        )
    }

    /// `gsd-lane <args>` in `dir` with extra environment variables.
    fn gsd_full(&self, dir: &Path, args: &[&str], extra: &[(&str, &str)]) -> Outcome {
        let mut command = util::gsd_command(&self.env, &self.path_var(), dir, args);
        for (name, value) in extra {
            command.env(name, value);
        }
        util::run_bounded(command, TIMEOUT).0
    }

    fn gsd(&self, args: &[&str]) -> Outcome {
        self.gsd_full(&self.env.project, args, &[])
    }

    /// `install --global --yes --json` of the `spawn-lane` fixture changed by `edit`, which
    /// must be refused (exit 1).
    fn install_refused(&self, edit: impl Fn(&mut Value)) -> Outcome {
        let source = self.source("spawn-lane", "acme-spawn", edit);
        let out = self.gsd(&[
            "install",
            "--global",
            "--yes",
            "--json",
            source.to_str().expect("utf8"),
        ]);
        out.assert_no_panic().assert_status(1);
        out
    }

    /// `disclose --json --manifest <folder>`, checked for success: the one view it prints.
    fn disclose_manifest(&self, folder: &Path) -> Value {
        let out = self.gsd(&[
            "disclose",
            "--json",
            "--manifest",
            folder.to_str().expect("utf8"),
        ]);
        out.assert_status(0);
        out.json()[0].clone()
    }

    fn config(&self, value: &Value) {
        std::fs::write(
            self.env.project.join(".planning/config.json"),
            value.to_string(),
        )
        .expect("config");
    }

    /// Writes fixture `case/id` (after `edit`) as an overlay folder named after its id.
    fn overlay(
        &self,
        scope: Scope,
        case: &str,
        id: &str,
        edit: impl FnOnce(&mut Value),
    ) -> PathBuf {
        let mut manifest = fixture_manifest(case, id);
        edit(&mut manifest);
        let folder = manifest["id"].as_str().expect("id").to_owned();
        self.env.write_overlay(scope, &folder, &manifest);
        self.env.capabilities_dir(scope).join(folder)
    }

    /// A source folder outside every scope, for `install`.
    fn source(&self, case: &str, id: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
        let mut manifest = fixture_manifest(case, id);
        edit(&mut manifest);
        let folder = self
            .env
            .root
            .path()
            .join("sources")
            .join(format!("{id}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder).expect("source folder");
        std::fs::write(
            folder.join("capability.json"),
            serde_json::to_string_pretty(&manifest).expect("json"),
        )
        .expect("write source");
        folder
    }

    /// `run <slug> --json` (plus `extra`); returns the JSON result and the outcome.
    fn run_lane(&self, slug: &str, extra: &[&str]) -> (Value, Outcome) {
        self.run_lane_env(slug, extra, &[])
    }

    /// `run <slug> --json` (plus `extra`) when the command may fail without a JSON result.
    fn run_raw(&self, slug: &str, extra: &[&str]) -> Outcome {
        let run_dir = self.run_dir.display().to_string();
        let mut args = vec!["run", slug, "--json", "--run-dir", &run_dir];
        args.extend_from_slice(extra);
        let out = self.gsd(&args);
        out.assert_no_panic();
        out
    }

    fn run_lane_env(&self, slug: &str, extra: &[&str], env: &[(&str, &str)]) -> (Value, Outcome) {
        let run_dir = self.run_dir.display().to_string();
        let repo = self.env.project.display().to_string();
        let mut args = vec![
            "run",
            slug,
            "--json",
            "--run-dir",
            &run_dir,
            "--repo-root",
            &repo,
        ];
        args.extend_from_slice(extra);
        let out = self.gsd_full(&self.env.project, &args, env);
        out.assert_no_panic();
        (out.json(), out)
    }

    fn review_path(&self, slug: &str) -> PathBuf {
        self.run_dir.join(format!("gsd-review-{slug}.md"))
    }

    fn store_path(&self) -> PathBuf {
        self.env.gsd_home.join(".gsd/consent.json")
    }

    fn store(&self) -> Value {
        std::fs::read_to_string(self.store_path())
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null)
    }

    fn record(&self, id: &str) -> Option<Value> {
        let root = self.root();
        self.store()["records"]
            .as_object()?
            .values()
            .find(|r| r["id"] == id && r["projectRoot"] == root.as_str())
            .cloned()
    }

    fn pins(&self) -> Value {
        std::fs::read_to_string(self.env.gsd_home.join(".gsd/egress-pins.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null)
    }

    /// Writes a consent record straight into the store (a fixture, as in §9 E1).
    fn plant_record(&self, id: &str, host: Option<&str>, content_hash: &str) {
        let root = self.root();
        let mut record = json!({"projectRoot": root, "id": id, "scope": "project", "integrity": "",
            "disclosureSignature": "", "contentHash": content_hash,
            "consentedAt": "2026-07-30T12:34:56.789Z"});
        if let Some(host) = host {
            record["reviewerHost"] = json!(host);
        }
        let mut store = self.store();
        if !store.is_object() {
            store = json!({"version": "1", "records": {}});
        }
        let key = json!({"r": root, "i": id}).to_string();
        store["records"][key] = record;
        std::fs::create_dir_all(self.env.gsd_home.join(".gsd")).expect("gsd dir");
        std::fs::write(
            self.store_path(),
            serde_json::to_string_pretty(&store).expect("json"),
        )
        .expect("write store");
    }

    /// `install --project-scope --json <source>` without `--yes`: expects exit 1 and an
    /// `aborted` envelope (consent needed), which it returns.
    fn install_without_consent(&self, source: &Path) -> Value {
        let out = self.gsd(&[
            "install",
            "--project-scope",
            "--json",
            source.to_str().expect("utf8"),
        ]);
        out.assert_status(1);
        let envelope = out.json();
        assert_eq!(envelope["status"], "aborted");
        envelope
    }

    /// `trust approve <id> --yes --json`, expecting approval.
    fn approve(&self, id: &str) -> Value {
        let out = self.gsd(&["trust", "approve", id, "--yes", "--json"]);
        out.assert_no_panic().assert_status(0);
        let result = out.json();
        assert_eq!(result["status"], "approved", "{result}");
        result
    }
}

fn assert_reason(result: &Value, reason: &str) {
    assert_eq!(result["ok"], json!(false), "{result}");
    assert_eq!(result["reason"], json!(reason), "{result}");
}

fn assert_ran(result: &Value, stubbed: bool) {
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(result["stubbed"], json!(stubbed), "{result}");
}

// ---------------------------------------------------------------------------------------------
// Loopback listeners that count connections
// ---------------------------------------------------------------------------------------------

/// Trust-case servers (an inherent impl of the shared server, private to this module).
impl Listener {
    /// A listener that only counts (every request gets 404).
    fn counting() -> Listener {
        Listener::start(&[])
    }

    /// An OpenAI-compatible server answering the probe, discovery and chat.
    fn openai() -> Listener {
        Listener::start(&[
            (
                "GET",
                "/v1/models",
                json_text_reply(200, json!({"data": [{"id": "acme-7b"}]}).to_string()),
            ),
            (
                "POST",
                "/v1/chat/completions",
                json_text_reply(200, completion("looks fine")),
            ),
        ])
    }
}

fn completion(text: &str) -> String {
    json!({"model": "acme-7b", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// Scenario helpers
// ---------------------------------------------------------------------------------------------

/// The project-scope HTTP lane `acme` (capability `acme-reviewer`), approved with its key set
/// to `host`.
fn approved_http_lane(host: &str) -> Lab {
    let lab = Lab::new();
    lab.overlay(Scope::Project, "http-lane", "acme-reviewer", |_| {});
    lab.config(&json!({"review": {"acme_host": host}}));
    lab.approve("acme-reviewer");
    lab
}

/// Asserts the lane was blocked before anything was sent anywhere.
fn assert_blocked_silently(lab: &Lab, slug: &str, result: &Value, listeners: &[&Listener]) {
    assert_reason(result, "egress_host_changed");
    for listener in listeners {
        assert_eq!(
            listener.connections(),
            0,
            "a blocked lane connected to {}",
            listener.url()
        );
    }
    assert!(
        !lab.review_path(slug).exists(),
        "a blocked lane wrote a review"
    );
    assert!(!lab.run_dir.join(format!("gsd-review-{slug}.err")).exists());
}

// ---------------------------------------------------------------------------------------------
// §9.1 disclosure and the commands
// ---------------------------------------------------------------------------------------------

#[test]
fn d17_prompt_shows_the_host_the_record_binds() {
    let lab = Lab::new();
    lab.overlay(Scope::Project, "http-lane", "acme-reviewer", |_| {});
    lab.config(&json!({"review": {"acme_host": "http://10.1.2.3:8000/"}}));
    let asked = lab.gsd(&["trust", "approve", "acme-reviewer", "--json"]);
    asked.assert_status(1);
    let envelope = asked.json();
    assert_eq!(envelope["status"], "aborted");
    assert_eq!(envelope["reason"], "no-terminal");
    let shown = envelope["disclosure"].to_string();
    assert!(
        shown.contains("review.acme_host => http://10.1.2.3:8000\""),
        "{shown}"
    );
    assert_eq!(envelope["reviewerHost"], "http://10.1.2.3:8000");
    assert!(
        lab.record("acme-reviewer").is_none(),
        "nothing recorded without consent"
    );
    let fp = envelope["fingerprint"]
        .as_str()
        .expect("fingerprint")
        .to_owned();
    let out = lab.gsd(&[
        "trust",
        "approve",
        "acme-reviewer",
        "--yes",
        "--fingerprint",
        &fp,
        "--json",
    ]);
    out.assert_status(0);
    let record = lab.record("acme-reviewer").expect("record");
    assert_eq!(record["reviewerHost"], "http://10.1.2.3:8000");
}

#[test]
fn disclose_json_carries_records_and_signature_for_every_lane() {
    let lab = Lab::new();
    let out = lab.gsd(&["disclose", "--json"]);
    out.assert_status(0);
    let all = out.json();
    let rows = all.as_array().expect("array");
    assert_eq!(
        rows.len(),
        util::first_party().len(),
        "the first-party lanes"
    );
    let ollama = rows.iter().find(|r| r["id"] == "ollama").expect("ollama");
    let lane = &ollama["disclosure"]["reviewerLanes"][0];
    assert_eq!(lane["hostConfigKey"], "review.ollama_host");
    assert_eq!(lane["resolvedHost"], "http://localhost:11434");
    assert_eq!(lane["isLocalDestination"], true);
    assert_eq!(ollama["requiresConsent"], true);
    assert_eq!(
        ollama["disclosureSignature"],
        "[[],[],[],[\"[\\\"lane\\\",\\\"ollama\\\",\\\"openai-http\\\",\\\"\\\",[],\\\"review.ollama_host\\\",\\\"\\\",\\\"openai-compatible\\\"]\"]]"
    );
    assert_eq!(ollama["run"]["binding"]["kind"], "none");
    let codex = lab.gsd(&["disclose", "codex", "--json"]).json();
    let lane = &codex[0]["disclosure"]["reviewerLanes"][0];
    assert_eq!(lane["binary"], "codex");
    assert_eq!(
        lane["rawArgs"],
        json!([
            "exec",
            "--ephemeral",
            "{{model}}",
            "{{effort}}",
            "--skip-git-repo-check",
            "{{output}}",
            "-"
        ])
    );
    assert_eq!(codex[0]["run"]["environment"]["kind"], "inherited");
}

#[test]
fn disclose_manifest_reads_invalid_manifests_and_refuses_non_json() {
    let lab = Lab::new();
    let folder = lab.source("spawn-lane", "acme-spawn", |m| {
        m["reviewer"]["transport"] = json!("grpc");
        m["reviewer"]["invoke"]["args"] = json!(["-p", 7, {"mode": "fast"}, true]);
    });
    let view = &lab.disclose_manifest(&folder);
    assert_eq!(view["scope"], "file");
    assert_eq!(
        view["disclosure"]["reviewerLanes"][0]["args"],
        json!(["-p"])
    );
    assert_eq!(view["run"]["reason"], "unknown_transport");
    let bad = folder.join("capability.json");
    std::fs::write(&bad, "{ not json").expect("write");
    lab.gsd(&["disclose", "--manifest", bad.to_str().expect("utf8")])
        .assert_status(1);
    lab.gsd(&["disclose", "no-such-capability"])
        .assert_status(1);
}

// ---------------------------------------------------------------------------------------------
// §9.3 consent records through the commands
// ---------------------------------------------------------------------------------------------

#[test]
fn c01_recorded_host_is_normalized() {
    let lab = approved_http_lane("HTTP://LocalHost:8080/");
    assert_eq!(
        lab.record("acme-reviewer").expect("record")["reviewerHost"],
        "http://localhost:8080"
    );
}

#[test]
fn c02_unset_key_records_the_default_host() {
    let lab = Lab::new();
    lab.overlay(Scope::Project, "http-lane", "acme-reviewer", |m| {
        m["reviewer"]["invoke"]["defaultHost"] = json!("http://localhost:8000");
    });
    lab.approve("acme-reviewer");
    assert_eq!(
        lab.record("acme-reviewer").expect("record")["reviewerHost"],
        "http://localhost:8000"
    );
}

#[test]
fn c03_spawn_and_non_lane_records_have_no_host_key() {
    let lab = Lab::new();
    lab.overlay(Scope::Project, "spawn-lane", "acme-spawn", |_| {});
    lab.overlay(Scope::Project, "no-lane", "acme-notes", |_| {});
    lab.approve("acme-spawn");
    lab.approve("acme-notes");
    for id in ["acme-spawn", "acme-notes"] {
        let record = lab.record(id).expect("record");
        assert!(record.get("reviewerHost").is_none(), "{record}");
        assert_eq!(record["scope"], "project");
    }
    assert_eq!(
        lab.record("acme-notes").expect("record")["disclosureSignature"],
        "[[],[],[]]"
    );
}

#[test]
fn c11_revoked_lane_leaves_the_roster_and_an_explicit_run_fails() {
    let lab = Lab::new();
    lab.overlay(Scope::Project, "spawn-lane", "acme-spawn", |_| {});
    lab.approve("acme-spawn");
    let rows = lab.gsd(&["list", "--json"]).json();
    let row = |rows: &Value| {
        rows.as_array()
            .expect("rows")
            .iter()
            .find(|r| r["id"] == "acme-spawn")
            .cloned()
            .expect("row")
    };
    assert_eq!(row(&rows)["status"], "active");
    let revoked = lab.gsd(&["trust", "revoke", "acme-spawn", "--json"]);
    revoked.assert_status(0);
    assert_eq!(revoked.json()["removed"], true);
    let rows = lab.gsd(&["list", "--json"]).json();
    assert_eq!(row(&rows)["status"], "inactive");
    assert_eq!(row(&rows)["kind"], "unconsented");
    let (result, out) = lab.run_lane("acme_spawn", &["--explicit"]);
    assert_eq!(out.code, Some(2));
    assert_reason(&result, "malformed_lane");
    assert!(!lab.review_path("acme_spawn").exists());
}

#[test]
fn c12_changed_bundle_deactivates_the_overlay() {
    let lab = Lab::new();
    let folder = lab.overlay(Scope::Project, "spawn-lane", "acme-spawn", |_| {});
    lab.approve("acme-spawn");
    std::fs::create_dir(folder.join("empty")).expect("mkdir");
    let rows = lab.gsd(&["list", "--json"]).json();
    let row = rows
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["id"] == "acme-spawn")
        .cloned()
        .expect("row");
    assert_eq!(row["status"], "inactive");
    assert_eq!(row["code"], "LD-UNCONSENTED");
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_reason(&result, "malformed_lane");
}

#[test]
fn c14_update_without_consent_keeps_the_old_host_and_the_run_blocks() {
    let a = Listener::openai();
    let b = Listener::openai();
    let lab = approved_http_lane(&a.url());
    lab.config(&json!({"review": {"acme_host": b.url()}}));
    let source = lab.source("http-lane", "acme-reviewer", |_| {});
    let envelope = lab.install_without_consent(&source);
    assert_eq!(envelope["changes"]["hostChanged"], true);
    assert_eq!(envelope["changes"]["executableSetChanged"], false);
    assert_eq!(
        lab.record("acme-reviewer").expect("record")["reviewerHost"],
        a.url()
    );
    let (result, _) = lab.run_lane("acme", &[]);
    assert_blocked_silently(&lab, "acme", &result, &[&a, &b]);
}

#[test]
fn c15_default_host_only_update_needs_consent() {
    let old = Listener::openai();
    let lab = Lab::new();
    lab.overlay(Scope::Project, "http-lane", "acme-reviewer", |m| {
        m["reviewer"]["invoke"]["defaultHost"] = json!(old.url());
    });
    lab.approve("acme-reviewer");
    let source = lab.source("http-lane", "acme-reviewer", |m| {
        m["reviewer"]["invoke"]["defaultHost"] = json!("https://evil.example");
    });
    let envelope = lab.install_without_consent(&source);
    assert_eq!(
        envelope["changes"]["executableSetChanged"], false,
        "[REF] signature unchanged"
    );
    assert_eq!(envelope["changes"]["bindingChanged"], true);
    assert_eq!(envelope["changes"]["hostChanged"], true);
    let (result, _) = lab.run_lane("acme", &[]);
    assert_ran(&result, false);
    assert_eq!(
        old.post_count(),
        1,
        "the approved destination still gets the review"
    );
    // Copying the new version in by hand does not help: the bundle hash no longer matches.
    std::fs::copy(
        source.join("capability.json"),
        lab.env
            .capabilities_dir(Scope::Project)
            .join("acme-reviewer/capability.json"),
    )
    .expect("copy");
    let (result, _) = lab.run_lane("acme", &[]);
    assert_reason(&result, "malformed_lane");
    assert_eq!(old.post_count(), 1);
}

#[test]
fn c16_literal_null_resolves_the_same_at_consent_and_run() {
    let server = Listener::openai();
    let lab = Lab::new();
    lab.overlay(Scope::Project, "http-lane", "acme-reviewer", |m| {
        m["reviewer"]["invoke"]["defaultHost"] = json!(server.url());
    });
    lab.config(&json!({"review": {"acme_host": "null"}}));
    lab.approve("acme-reviewer");
    assert_eq!(
        lab.record("acme-reviewer").expect("record")["reviewerHost"],
        server.url()
    );
    let (result, _) = lab.run_lane("acme", &[]);
    assert_ran(&result, false);
    assert_eq!(server.post_count(), 1);
}

// ---------------------------------------------------------------------------------------------
// §9.4 egress re-verification
// ---------------------------------------------------------------------------------------------

/// The first-party `ollama` lane with a planted record binding `consented`, config at `current`.
fn ollama_lab(consented: Option<&str>, current: &str) -> Lab {
    let lab = Lab::new();
    lab.config(&json!({"review": {"ollama_host": current, "models": {"ollama": "acme-7b"}}}));
    if let Some(host) = consented {
        lab.plant_record("ollama", Some(host), "sha512-not-a-bundle");
    }
    lab
}

#[test]
fn e01_config_edit_blocks_before_any_byte() {
    let consented = Listener::openai();
    let moved = Listener::openai();
    let lab = ollama_lab(Some(&consented.url()), &moved.url());
    let (result, out) = lab.run_lane("ollama", &[]);
    assert_blocked_silently(&lab, "ollama", &result, &[&consented, &moved]);
    for part in [
        "ollama",
        consented.url().as_str(),
        moved.url().as_str(),
        "review.ollama_host",
    ] {
        assert!(
            out.stderr.contains(part),
            "stderr lacks {part}: {}",
            out.stderr
        );
    }
    // The same with a remote name: refused before any lookup or connection.
    let lab = ollama_lab(Some(&consented.url()), "https://evil.example");
    let (result, out) = lab.run_lane("ollama", &[]);
    assert_blocked_silently(&lab, "ollama", &result, &[&consented]);
    assert!(
        out.stderr.contains("https://evil.example (remote)"),
        "{}",
        out.stderr
    );
}

#[test]
fn e02_trailing_slash_is_the_same_destination() {
    let server = Listener::openai();
    let lab = ollama_lab(Some(&server.url()), &format!("{}/", server.url()));
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_ran(&result, false);
    let posts: Vec<Seen> = server
        .seen()
        .into_iter()
        .filter(|s| s.method == "POST")
        .collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].target, "/v1/chat/completions");
}

#[test]
fn e03_loopback_case_and_slash_edits_do_not_block() {
    let server = Listener::openai();
    let consented = format!("http://localhost:{}", server.port());
    for current in [
        format!("{}//", server.url()),
        format!("HTTP://127.0.0.1:{}/", server.port()),
    ] {
        let lab = ollama_lab(Some(&server.url()), &current);
        let (result, _) = lab.run_lane("ollama", &[]);
        assert_ran(&result, false);
    }
    // Different spellings of the same machine are different destinations (E6) …
    let lab = ollama_lab(Some(&consented), &server.url());
    let before = server.connections();
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_reason(&result, "egress_host_changed");
    assert_eq!(server.connections(), before);
}

#[test]
fn e04_userinfo_and_query_never_travel() {
    let server = Listener::openai();
    let current = format!("http://u:p@127.0.0.1:{}?x=1#f", server.port());
    let lab = ollama_lab(Some(&server.url()), &current);
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_ran(&result, false);
    for seen in server.seen() {
        assert!(
            !seen.target.contains('?') && !seen.target.contains('@'),
            "{seen:?}"
        );
        let host = seen
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("host"))
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        assert_eq!(host, format!("127.0.0.1:{}", server.port()));
        assert!(!seen
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("authorization")));
    }
}

#[test]
fn e05_userinfo_authority_trick_is_blocked_without_connecting() {
    let consented = Listener::openai();
    let current = format!("{}@127.0.0.2:{}", consented.url(), consented.port());
    let lab = ollama_lab(Some(&consented.url()), &current);
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_blocked_silently(&lab, "ollama", &result, &[&consented]);
}

#[test]
fn e06_localhost_and_127_0_0_1_are_different_destinations() {
    let server = Listener::openai();
    let lab = ollama_lab(
        Some(&format!("http://localhost:{}", server.port())),
        &server.url(),
    );
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_blocked_silently(&lab, "ollama", &result, &[&server]);
}

#[test]
fn e07_scheme_port_and_path_changes_block() {
    let consented = Listener::openai();
    let other = Listener::openai();
    for current in [
        format!("https://127.0.0.1:{}", consented.port()),
        other.url(),
        format!("{}/v1", consented.url()),
    ] {
        let lab = ollama_lab(Some(&consented.url()), &current);
        let (result, _) = lab.run_lane("ollama", &[]);
        assert_blocked_silently(&lab, "ollama", &result, &[&consented, &other]);
    }
}

#[test]
fn e08_first_party_lane_without_record_runs() {
    let server = Listener::openai();
    let lab = ollama_lab(None, &server.url());
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_ran(&result, false);
    assert_eq!(server.post_count(), 1);
}

#[test]
fn e09_records_without_a_host_allow() {
    let server = Listener::openai();
    for host in [None, Some("")] {
        let lab = ollama_lab(None, &server.url());
        lab.plant_record("ollama", host, "sha512-x");
        let (result, _) = lab.run_lane("ollama", &[]);
        assert_ran(&result, false);
    }
    assert_eq!(server.post_count(), 2);
}

#[test]
fn e10_spawn_lane_skips_the_host_check() {
    let lab = Lab::new();
    let folder = lab.overlay(Scope::Project, "spawn-lane", "acme-spawn", |_| {});
    lab.approve("acme-spawn");
    let hash = gsd_lane::api::trust::consent::hash::content_hash(&folder).expect("hash");
    lab.plant_record("acme-spawn", Some("https://evil.example"), &hash);
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_ran(&result, false);
}

#[test]
fn e11_explicit_blocked_lane_is_an_error() {
    let consented = Listener::openai();
    let moved = Listener::openai();
    let lab = ollama_lab(Some(&consented.url()), &moved.url());
    let (result, out) = lab.run_lane("ollama", &["--explicit"]);
    assert_eq!(out.code, Some(2));
    assert_blocked_silently(&lab, "ollama", &result, &[&consented, &moved]);
}

#[test]
fn e12_id_differs_from_slug_and_is_still_checked() {
    let consented = Listener::openai();
    let moved = Listener::openai();
    let lab = approved_http_lane(&consented.url());
    assert_eq!(
        lab.record("acme-reviewer").expect("record")["id"],
        "acme-reviewer"
    );
    lab.config(&json!({"review": {"acme_host": moved.url()}}));
    let (result, _) = lab.run_lane("acme", &[]);
    assert_blocked_silently(&lab, "acme", &result, &[&consented, &moved]);
}

#[test]
fn e13_each_lane_is_checked_against_its_own_record() {
    let a = Listener::openai();
    let b = Listener::openai();
    let lab = Lab::new();
    lab.overlay(Scope::Project, "http-lane", "acme-reviewer", |m| {
        m["id"] = json!("acme")
    });
    lab.overlay(Scope::Project, "http-lane", "acme-reviewer", |m| {
        m["id"] = json!("acme-http");
        m["reviewer"]["slug"] = json!("acme_http");
        m["reviewer"]["flags"] = json!(["--acme-http"]);
        m["reviewer"]["reviewsSection"] = json!("Acme HTTP");
        m["reviewer"]["invoke"]["hostConfigKey"] = json!("review.acme_http_host");
        m["reviewer"]["probe"]["hostConfigKey"] = json!("review.acme_http_host");
        m["config"] = json!({"review.acme_http_host": {"type": "string", "default": "", "description": "Base URL."}});
        m["reviewer"]["modelConfigKey"] = Value::Null;
    });
    lab.config(&json!({"review": {"acme_host": a.url(), "acme_http_host": b.url()}}));
    lab.approve("acme");
    lab.approve("acme-http");
    assert_eq!(lab.record("acme").expect("record")["reviewerHost"], a.url());
    assert_eq!(
        lab.record("acme-http").expect("record")["reviewerHost"],
        b.url()
    );
    let (result, _) = lab.run_lane("acme_http", &[]);
    assert_ran(&result, false);
    let (result, _) = lab.run_lane("acme", &[]);
    assert_ran(&result, false);
    assert_eq!((a.post_count(), b.post_count()), (1, 1));
}

#[test]
fn e14_path_cannot_move_the_authority() {
    let verified = Listener::openai();
    for path in [
        format!("@127.0.0.2:{}/v1/chat/completions", verified.port()),
        ".evil.example/x".to_owned(),
    ] {
        let lab = Lab::new();
        lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |m| {
            m["reviewer"]["invoke"]["path"] = json!(path);
        });
        lab.config(&json!({"review": {"acme_host": verified.url()}}));
        let (result, _) = lab.run_lane("acme", &[]);
        assert_reason(&result, "malformed_lane");
    }
    // A port-less host, so that `.evil.example` would have extended the host name.
    let lab = Lab::new();
    lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |m| {
        m["reviewer"]["invoke"]["path"] = json!(".evil.example/x");
    });
    lab.config(&json!({"review": {"acme_host": "http://localhost"}}));
    let (result, _) = lab.run_lane("acme", &[]);
    assert_reason(&result, "malformed_lane");
    assert_eq!(verified.connections(), 0);
}

#[test]
fn e15_probe_key_must_be_the_invoke_key() {
    let verified = Listener::openai();
    let probed = Listener::openai();
    let lab = Lab::new();
    lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |m| {
        m["reviewer"]["probe"]["hostConfigKey"] = json!("review.acme_probe_host");
        m["config"]["review.acme_probe_host"] =
            json!({"type": "string", "default": "", "description": "Probe."});
    });
    lab.config(&json!({"review": {"acme_host": verified.url(), "acme_probe_host": probed.url()}}));
    let (result, _) = lab.run_lane("acme", &[]);
    assert_reason(&result, "malformed_lane");
    assert_eq!(probed.connections(), 0);
    assert_eq!(verified.connections(), 0);
}

/// A verified host answering the chat POST with a redirect to a second listener.
fn redirect_case(status: u16) {
    let elsewhere = Listener::counting();
    let verified = Listener::start(&[
        (
            "GET",
            "/v1/models",
            json_text_reply(200, "{\"data\":[]}".into()),
        ),
        (
            "POST",
            "/v1/chat/completions",
            redirect_reply(status, format!("{}/steal", elsewhere.url())),
        ),
    ]);
    let lab = Lab::new();
    lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |_| {});
    lab.config(&json!({"review": {"acme_host": verified.url()}}));
    let (result, _) = lab.run_lane("acme", &[]);
    assert_ran(&result, true);
    let stub = std::fs::read_to_string(lab.review_path("acme")).expect("stub");
    assert!(stub.contains(&status.to_string()), "{stub}");
    assert_eq!(elsewhere.connections(), 0, "the redirect was followed");
    assert_eq!(verified.post_count(), 1);
}

#[test]
fn e16_redirect_is_not_followed() {
    redirect_case(307);
}

#[test]
fn e17_agent_has_redirects_disabled() {
    redirect_case(308);
    redirect_case(302);
}

#[test]
fn e18_environment_proxies_are_ignored() {
    let proxy = Listener::counting();
    let server = Listener::openai();
    let lab = Lab::new();
    lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |_| {});
    lab.config(&json!({"review": {"acme_host": server.url()}}));
    let proxy_url = proxy.url();
    let env: Vec<(&str, &str)> = [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ]
    .into_iter()
    .map(|name| (name, proxy_url.as_str()))
    .collect();
    let (result, _) = lab.run_lane_env("acme", &[], &env);
    assert_ran(&result, false);
    assert_eq!(proxy.connections(), 0);
    assert_eq!(server.post_count(), 1);
}

#[test]
fn e19_non_http_destinations_are_malformed() {
    let listener = Listener::openai();
    for host in [
        format!("localhost:{}", listener.port()),
        "file:///home/u/notes.txt".to_owned(),
    ] {
        let lab = Lab::new();
        lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |_| {});
        lab.config(&json!({"review": {"acme_host": host}}));
        let (result, _) = lab.run_lane("acme", &[]);
        assert_reason(&result, "malformed_lane");
    }
    assert_eq!(listener.connections(), 0);
}

#[test]
fn e20_oversized_body_is_a_bounded_failure() {
    let server = Listener::start(&[
        (
            "GET",
            "/v1/models",
            json_text_reply(200, "{\"data\":[]}".into()),
        ),
        ("POST", "/v1/chat/completions", Reply::Big(17 * 1024 * 1024)),
    ]);
    let lab = Lab::new();
    lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |_| {});
    lab.config(&json!({"review": {"acme_host": server.url()}}));
    let (result, _) = lab.run_lane("acme", &[]);
    assert_ran(&result, true);
    let size = std::fs::metadata(lab.review_path("acme"))
        .expect("stub")
        .len();
    assert!(size <= 16 * 1024 * 1024 + 64 * 1024, "stub of {size} bytes");
}

#[test]
fn e21_first_use_pin_blocks_a_later_edit() {
    let first = Listener::openai();
    let moved = Listener::openai();
    let lab = ollama_lab(None, &first.url());
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_ran(&result, false);
    let pins = lab.pins();
    let pin = pins["pins"]
        .as_object()
        .expect("pins")
        .values()
        .next()
        .cloned()
        .expect("a pin");
    assert_eq!(pin["id"], "ollama");
    assert_eq!(pin["host"], first.url());
    assert_eq!(pin["source"], "first-use");
    assert!(
        lab.record("ollama").is_none(),
        "a pin is not a consent record"
    );
    let before = first.connections();
    lab.config(&json!({"review": {"ollama_host": moved.url(), "models": {"ollama": "acme-7b"}}}));
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_reason(&result, "egress_host_changed");
    assert_eq!(moved.connections(), 0);
    assert_eq!(first.connections(), before);
    assert!(
        !lab.env.project.join(".gsd").exists(),
        "nothing is written into the repository"
    );
}

#[test]
fn e22_no_host_is_malformed() {
    let listener = Listener::openai();
    let lab = Lab::new();
    lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |m| {
        m["reviewer"]["invoke"]
            .as_object_mut()
            .expect("invoke")
            .remove("defaultHost");
    });
    let (result, _) = lab.run_lane("acme", &[]);
    assert_reason(&result, "malformed_lane");
    assert_eq!(listener.connections(), 0);
}

// ---------------------------------------------------------------------------------------------
// §9.5 process and filesystem rules
// ---------------------------------------------------------------------------------------------

/// The global spawn lane `acme_spawn` (binary `acme-args`), edited by `edit`.
fn spawn_lab(edit: impl FnOnce(&mut Value)) -> Lab {
    let lab = Lab::new();
    lab.overlay(Scope::Global, "spawn-lane", "acme-spawn", edit);
    lab
}

/// The argv `acme-args` printed (its first line is the count).
fn printed_argv(lab: &Lab, identity: &str) -> Vec<String> {
    let review = std::fs::read_to_string(lab.review_path(identity)).expect("review");
    // A count and arguments cite no file:line: the lane's text follows the citation stamp.
    let review = review
        .strip_prefix(&crate::util::uncited(""))
        .unwrap_or(&review)
        .to_owned();
    let mut lines = review.lines();
    let count: usize = lines.next().expect("count").parse().expect("number");
    let argv: Vec<String> = lines.take(count).map(str::to_owned).collect();
    assert_eq!(argv.len(), count, "{review}");
    argv
}

#[test]
fn p01_hostile_model_is_one_inert_argument() {
    let hostile = "x; rm -rf ~ && $(id) \"a b\"";
    let lab = spawn_lab(|_| {});
    lab.config(&json!({"review": {"models": {"acme_spawn": hostile}}}));
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_ran(&result, false);
    assert_eq!(
        printed_argv(&lab, "acme_spawn"),
        vec!["review", "--model", hostile, "-p", "-"]
    );
}

#[test]
fn p02_non_string_and_unset_models_emit_nothing() {
    for model in [
        json!(42),
        json!({}),
        json!(true),
        json!("null"),
        json!("   "),
    ] {
        let lab = spawn_lab(|_| {});
        lab.config(&json!({"review": {"models": {"acme_spawn": model}}}));
        let (result, _) = lab.run_lane("acme_spawn", &[]);
        assert_ran(&result, false);
        assert_eq!(
            printed_argv(&lab, "acme_spawn"),
            vec!["review", "-p", "-"],
            "{model}"
        );
    }
}

#[test]
fn p03_traversal_slug_never_reaches_a_path() {
    let lab = spawn_lab(|m| m["reviewer"]["slug"] = json!("../../outside/evil"));
    let (result, _) = lab.run_lane("../../outside/evil", &[]);
    assert_reason(&result, "malformed_lane");
    let planned = gsd_lane::api::plan::resolve(
        "acme-spawn",
        &json!({"slug": "../../outside/evil", "transport": "spawn", "invoke": {"binary": "acme-args", "promptChannel": "stdin"}}),
        &gsd_lane::api::config::ProjectConfig::empty(),
        &gsd_lane::api::plan::PlanInputs::default(),
    );
    assert_eq!(
        planned.map(|_| ()).map_err(|r| r.reason),
        Err(gsd_lane::api::plan::Reason::MalformedLane)
    );
    assert!(!lab.env.root.path().join("outside").exists());
}

#[test]
fn p04_shell_facing_flags_are_shape_filtered() {
    let lab = Lab::new();
    let out = lab.gsd(&["flags", "--selected", "lm_studio"]);
    out.assert_status(0);
    assert_eq!(out.stdout, "--lm-studio\n");
    let kept: Vec<&str> = ["--lm-studio", "--foo bar", "--*", "-x", "--Foo"]
        .into_iter()
        .filter(|f| gsd_lane::api::manifest::vocab::is_flag(f))
        .collect();
    assert_eq!(kept, vec!["--lm-studio"]);
}

#[test]
fn p05_instance_name_is_sanitized_inside_the_run_dir() {
    let lab = spawn_lab(|_| {});
    let (result, _) = lab.run_lane("acme_spawn", &["--as", "../../evil name"]);
    assert_ran(&result, false);
    assert!(lab.run_dir.join("gsd-review-..-..-evil-name.md").is_file());
    assert!(lab.run_dir.join("gsd-review-..-..-evil-name.err").is_file());
}

#[test]
fn p06_slow_capability_probe_times_out_and_dies() {
    let lab = spawn_lab(|m| {
        m["reviewer"]["probe"] = json!({"kind": "command-capability", "binary": "acme-sleepy", "needle": "--x", "timeoutMs": 500});
        m["reviewer"]["invoke"]["binary"] = json!("acme-sleepy");
    });
    let started = Instant::now();
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_reason(&result, "probe_timeout");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        lab.env.home.join("acme-sleepy.pid").is_file(),
        "the probe started"
    );
    let left = util::processes_left_with_home(&lab.env.home, Duration::from_secs(3));
    assert!(left.is_empty(), "the probe survived: {left:?}");
}

#[test]
fn p07_probe_without_the_needle_fails() {
    let lab = spawn_lab(|m| {
        m["reviewer"]["probe"] = json!({"kind": "command-capability", "binary": "acme-help-plain", "needle": "--acme-needle", "timeoutMs": 5000});
    });
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_reason(&result, "probe_failed");
}

#[test]
fn p08_oversized_capture_is_a_bounded_spawn_error() {
    let lab = spawn_lab(|m| {
        m["reviewer"]["probe"]["binary"] = json!("acme-flood");
        m["reviewer"]["invoke"]["binary"] = json!("acme-flood");
    });
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_eq!(result["ok"], true, "{result}");
    let sidecar = lab.run_dir.join("gsd-review-acme_spawn.err");
    let size = std::fs::metadata(&sidecar).expect("sidecar").len();
    assert!(size <= 64 * 1024 * 1024 + 64, "sidecar of {size} bytes");
    let mut tail = vec![0u8; 64];
    let mut file = std::fs::File::open(&sidecar).expect("open");
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::End(-64)).expect("seek");
    file.read_exact(&mut tail).expect("tail");
    assert!(String::from_utf8_lossy(&tail).contains("[spawn error: ENOBUFS]"));
}

#[test]
fn p09_timeout_kills_the_whole_tree() {
    let lab = spawn_lab(|m| {
        m["reviewer"]["probe"]["binary"] = json!("acme-hang");
        m["reviewer"]["invoke"]["binary"] = json!("acme-hang");
        m["reviewer"]["timeoutFloorMs"] = json!(1000);
    });
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_ran(&result, true);
    assert!(
        lab.env.home.join("acme-hang.pid").is_file(),
        "the lane started its grandchild"
    );
    let left = util::processes_left_with_home(&lab.env.home, Duration::from_secs(3));
    assert!(left.is_empty(), "the grandchild survived: {left:?}");
}

fn plan_reason(body: Value) -> Option<gsd_lane::api::plan::Reason> {
    gsd_lane::api::plan::resolve(
        "acme",
        &body,
        &gsd_lane::api::config::ProjectConfig::empty(),
        &gsd_lane::api::plan::PlanInputs::default(),
    )
    .err()
    .map(|r| r.reason)
}

#[test]
fn p10_unknown_handler_fails_closed() {
    assert_eq!(
        plan_reason(
            json!({"slug": "a", "transport": "spawn", "handler": "frobnicate", "invoke": {"binary": "acme-review", "promptChannel": "stdin"}})
        ),
        Some(gsd_lane::api::plan::Reason::UnknownHandler)
    );
    let lab = spawn_lab(|m| {
        m["reviewer"]["handler"] = json!("frobnicate");
        m["reviewer"]["invoke"]["binary"] = json!("acme-review");
    });
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_eq!(result["ok"], false);
    assert!(
        !lab.env.home.join("acme-review.ran").exists(),
        "nothing was spawned"
    );
}

#[test]
fn p11_unknown_transport() {
    assert_eq!(
        plan_reason(json!({"slug": "a", "transport": "grpc", "invoke": {"binary": "b"}})),
        Some(gsd_lane::api::plan::Reason::UnknownTransport)
    );
}

#[test]
fn p12_overlay_cannot_take_a_first_party_name() {
    let lab = Lab::new();
    for (i, (slug, flag, section)) in [
        ("ollama", "--x-one", "X One"),
        ("x_two", "--ollama", "X Two"),
        ("x_three", "--x-three", "Ollama"),
    ]
    .into_iter()
    .enumerate()
    {
        lab.overlay(Scope::Global, "spawn-lane", "acme-spawn", |m| {
            m["id"] = json!(format!("acme-spawn{i}"));
            m["reviewer"]["slug"] = json!(slug);
            m["reviewer"]["flags"] = json!([flag]);
            m["reviewer"]["reviewsSection"] = json!(section);
            m["config"] = json!({});
            m["reviewer"]["modelConfigKey"] = Value::Null;
        });
    }
    let rows = lab.gsd(&["list", "--json"]).json();
    for i in 0..3 {
        let id = format!("acme-spawn{i}");
        let row = rows
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["id"] == id.as_str())
            .cloned()
            .expect("row");
        assert_eq!(row["active"], false, "{row}");
    }
    let plan = lab.gsd(&["plan", "--selected", "ollama"]).json();
    assert_eq!(plan[0]["plan"]["capabilityId"], "ollama");
}

#[test]
fn p13_prompt_content_never_reaches_argv() {
    let sentinel = "SENTINEL-7f3a";
    for channel in ["stdin", "argv", "argv-file-ref", "none"] {
        let lab = spawn_lab(|m| {
            m["reviewer"]["invoke"]["promptChannel"] = json!(channel);
            m["reviewer"]["invoke"]["args"] = json!(["review", "{{prompt}}"]);
        });
        std::fs::write(
            lab.run_dir.join("gsd-review-prompt.md"),
            format!("plan {sentinel}\n"),
        )
        .expect("prompt");
        let (result, _) = lab.run_lane("acme_spawn", &[]);
        assert_ran(&result, false);
        let argv = printed_argv(&lab, "acme_spawn");
        assert!(
            argv.iter().all(|a| !a.contains(sentinel)),
            "{channel}: {argv:?}"
        );
        if channel == "argv-file-ref" {
            assert_eq!(argv.len(), 2);
            assert!(argv[1].contains(&lab.env.project.display().to_string()));
            assert!(argv[1].contains(
                &lab.run_dir
                    .join("gsd-review-prompt.md")
                    .display()
                    .to_string()
            ));
        }
    }
}

#[test]
fn p14_whitespace_output_is_a_stub_with_stderr() {
    let lab = spawn_lab(|m| {
        m["reviewer"]["probe"]["binary"] = json!("acme-blank");
        m["reviewer"]["invoke"]["binary"] = json!("acme-blank");
    });
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_ran(&result, true);
    let stub = std::fs::read_to_string(lab.review_path("acme_spawn")).expect("stub");
    assert!(stub.contains("acme: nothing to say"), "{stub}");
}

#[test]
fn p15_batch_argument_rules_hold_on_every_platform() {
    use gsd_lane::api::trust::winshim::{
        batch_arg_refusal, candidates, is_batch_script, pathext_list,
    };
    let exts = pathext_list(None);
    let found = candidates(Path::new("bin"), "fake", &exts);
    assert!(found.iter().any(|p| is_batch_script(p)));
    assert_eq!(
        batch_arg_refusal(&["a\" & echo PWNED & \"".to_owned()]),
        None
    );
    assert!(batch_arg_refusal(&["a\r\necho PWNED".to_owned()]).is_some());
}

#[cfg(windows)]
#[test]
fn p15_windows_batch_shim_value_is_inert() {
    // Unverified here (no Windows CI): a `fake.cmd` found through PATHEXT from a bare name
    // receives the hostile model verbatim, or the spawn fails with EINVAL.
    let lab = spawn_lab(|m| m["reviewer"]["invoke"]["binary"] = json!("fake"));
    let bin = lab.env.root.path().join("winbin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::write(bin.join("fake.cmd"), "@echo off\r\necho %*\r\n").expect("cmd");
    lab.config(&json!({"review": {"models": {"acme_spawn": "a\" & echo PWNED & \""}}}));
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    let review = std::fs::read_to_string(lab.review_path("acme_spawn")).unwrap_or_default();
    assert!(
        !review.lines().any(|l| l.trim() == "PWNED"),
        "{result} {review}"
    );
}

#[test]
fn p16_repo_relative_binary_is_refused() {
    let lab = Lab::new();
    let scripts = lab.env.project.join("scripts");
    std::fs::create_dir_all(&scripts).expect("scripts");
    let marker = lab.env.home.join("repo-script.ran");
    std::fs::write(
        scripts.join("review.sh"),
        format!("#!/bin/sh\n: > {}\necho hi\n", marker.display()),
    )
    .expect("script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            scripts.join("review.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
    }
    let edit = |m: &mut Value| {
        m["reviewer"]["invoke"]["binary"] = json!("./scripts/review.sh");
        m["reviewer"]["probe"]["binary"] = json!("./scripts/review.sh");
    };
    let source = lab.source("spawn-lane", "acme-spawn", edit);
    let out = lab.gsd(&[
        "install",
        "--global",
        "--yes",
        "--json",
        source.to_str().expect("utf8"),
    ]);
    out.assert_status(1);
    assert_eq!(out.json()["status"], "refused");
    assert!(out.json()["problems"]
        .to_string()
        .contains("TR-BINARY-PATH"));
    lab.overlay(Scope::Global, "spawn-lane", "acme-spawn", edit);
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_reason(&result, "malformed_lane");
    assert!(!marker.exists(), "the repository script ran");
}

#[test]
fn p17_third_party_spawn_lane_gets_a_minimal_environment() {
    let lab = spawn_lab(|m| {
        m["reviewer"]["probe"]["binary"] = json!("acme-env");
        m["reviewer"]["invoke"]["binary"] = json!("acme-env");
    });
    let (result, _) = lab.run_lane_env(
        "acme_spawn",
        &[],
        &[("SECRET_TOKEN", "hunter2"), ("OPENAI_API_KEY", "sk-x")],
    );
    assert_ran(&result, false);
    let names = std::fs::read_to_string(lab.review_path("acme_spawn")).expect("env");
    let names: Vec<&str> = names.lines().collect();
    assert!(
        !names.contains(&"SECRET_TOKEN") && !names.contains(&"OPENAI_API_KEY"),
        "{names:?}"
    );
    assert!(
        names.contains(&"PATH") && names.contains(&"HOME"),
        "{names:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The twenty weaknesses (w10, w13, w14, w15 and w20 also have unit tests in `host/src/trust/`)
// ---------------------------------------------------------------------------------------------

#[test]
fn w01_path_cannot_move_authority() {
    let verified = Listener::openai();
    for (field, path) in [
        ("invoke", "@127.0.0.2:1/v1/chat/completions"),
        ("probe", "@127.0.0.2:1/v1/models"),
    ] {
        let lab = Lab::new();
        lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |m| {
            m["reviewer"][field]["path"] = json!(path)
        });
        lab.config(&json!({"review": {"acme_host": verified.url()}}));
        let (result, _) = lab.run_lane("acme", &[]);
        assert_reason(&result, "malformed_lane");
    }
    // The plan refuses it on its own too (first-party lanes skip the third-party policy).
    let body = json!({"slug": "a", "transport": "openai-http",
        "invoke": {"hostConfigKey": "k", "defaultHost": verified.url(), "path": "@127.0.0.2:1/v1"}});
    assert_eq!(
        plan_reason(body),
        Some(gsd_lane::api::plan::Reason::MalformedLane)
    );
    assert_eq!(verified.connections(), 0);
}

#[test]
fn w02_consent_is_looked_up_by_capability_id() {
    e12_id_differs_from_slug_and_is_still_checked();
}

#[test]
fn w03_redirects_are_not_followed() {
    redirect_case(308);
}

#[test]
fn w04_probe_uses_the_verified_host() {
    let verified = Listener::openai();
    let lab = Lab::new();
    lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |_| {});
    lab.config(&json!({"review": {"acme_host": verified.url()}}));
    let (result, _) = lab.run_lane("acme", &[]);
    assert_ran(&result, false);
    let gets: Vec<String> = verified
        .seen()
        .into_iter()
        .filter(|s| s.method == "GET")
        .map(|s| s.target)
        .collect();
    assert_eq!(
        gets,
        vec!["/v1/models"],
        "the probe went to the verified host"
    );
    // An http-reachable probe on a spawn lane pins nothing: refused.
    let probed = Listener::openai();
    let lab = spawn_lab(|m| {
        m["reviewer"]["probe"] = json!({"kind": "http-reachable", "hostConfigKey": "review.models.acme_spawn", "path": "/v1/models", "timeoutMs": 500});
    });
    lab.config(&json!({"review": {"models": {"acme_spawn": probed.url()}}}));
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_reason(&result, "malformed_lane");
    assert_eq!(probed.connections(), 0);
}

#[test]
fn w05_consent_shows_the_host_it_binds() {
    let lab = Lab::new();
    lab.overlay(Scope::Project, "http-lane", "acme-reviewer", |_| {});
    lab.config(&json!({"review": {"acme_host": "http://10.1.2.3:8000"}}));
    let shown = lab
        .gsd(&["trust", "approve", "acme-reviewer", "--json"])
        .json();
    let fp = shown["fingerprint"].as_str().expect("fp").to_owned();
    // The destination changes between showing and confirming: the confirmation is refused.
    lab.config(&json!({"review": {"acme_host": "http://10.9.9.9:8000"}}));
    let out = lab.gsd(&[
        "trust",
        "approve",
        "acme-reviewer",
        "--yes",
        "--fingerprint",
        &fp,
        "--json",
    ]);
    out.assert_status(1);
    assert_eq!(out.json()["reason"], "fingerprint-mismatch");
    assert!(lab.record("acme-reviewer").is_none());
    let disclosed = lab.gsd(&["disclose", "acme-reviewer", "--json"]).json();
    assert_eq!(
        disclosed[0]["disclosure"]["reviewerLanes"][0]["resolvedHost"],
        "http://10.9.9.9:8000"
    );
}

#[test]
fn w06_one_resolver_for_consent_and_run() {
    c16_literal_null_resolves_the_same_at_consent_and_run();
    // Consent and run from a subdirectory use the project root's config and key.
    let server = Listener::openai();
    let lab = Lab::new();
    lab.overlay(Scope::Project, "http-lane", "acme-reviewer", |_| {});
    lab.config(&json!({"review": {"acme_host": server.url()}}));
    let sub = lab.env.project.join("src/deep");
    std::fs::create_dir_all(&sub).expect("sub");
    lab.gsd_full(
        &sub,
        &["trust", "approve", "acme-reviewer", "--yes", "--json"],
        &[],
    )
    .assert_status(0);
    assert_eq!(
        lab.record("acme-reviewer").expect("record")["reviewerHost"],
        server.url()
    );
    let run_dir = lab.run_dir.display().to_string();
    let out = lab.gsd_full(&sub, &["run", "acme", "--json", "--run-dir", &run_dir], &[]);
    assert_ran(&out.json(), false);
}

#[test]
fn w07_unresolvable_host_fails_consent_loudly() {
    let lab = Lab::new();
    lab.overlay(Scope::Project, "http-lane", "acme-reviewer", |m| {
        m["reviewer"]["invoke"]
            .as_object_mut()
            .expect("invoke")
            .remove("defaultHost");
    });
    let out = lab.gsd(&["trust", "approve", "acme-reviewer", "--yes", "--json"]);
    out.assert_status(1);
    assert_eq!(out.json()["status"], "refused");
    assert!(
        lab.record("acme-reviewer").is_none(),
        "no record without a host"
    );
}

#[test]
fn w08_update_cannot_launder_a_host_change() {
    c14_update_without_consent_keeps_the_old_host_and_the_run_blocks();
    c15_default_host_only_update_needs_consent();
}

#[test]
fn w09_revoke_walks_to_the_project_root_and_reports_removal() {
    let lab = Lab::new();
    lab.overlay(Scope::Project, "spawn-lane", "acme-spawn", |_| {});
    lab.approve("acme-spawn");
    let sub = lab.env.project.join("a/b");
    std::fs::create_dir_all(&sub).expect("sub");
    let first = lab.gsd_full(&sub, &["trust", "revoke", "acme-spawn", "--json"], &[]);
    first.assert_status(0);
    assert_eq!(first.json()["removed"], true);
    assert_eq!(first.json()["projectRoot"], lab.root());
    assert!(lab.record("acme-spawn").is_none());
    let again = lab.gsd_full(&sub, &["trust", "revoke", "acme-spawn", "--json"], &[]);
    assert_eq!(again.json()["removed"], false);
    assert_eq!(again.json()["status"], "not-found");
}

#[test]
fn w11_unrecorded_http_lanes_are_pinned_on_first_use() {
    e21_first_use_pin_blocks_a_later_edit();
    // A global-scope overlay, and a legacy record without a host, are pinned the same way.
    let first = Listener::openai();
    let moved = Listener::openai();
    let lab = Lab::new();
    lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |_| {});
    lab.config(&json!({"review": {"acme_host": first.url()}}));
    assert_ran(&lab.run_lane("acme", &[]).0, false);
    lab.config(&json!({"review": {"acme_host": moved.url()}}));
    std::fs::remove_file(lab.review_path("acme")).expect("first review");
    std::fs::remove_file(lab.run_dir.join("gsd-review-acme.err")).expect("first sidecar");
    let (result, _) = lab.run_lane("acme", &[]);
    assert_blocked_silently(&lab, "acme", &result, &[&moved]);
    // Re-approval moves the pin.
    let out = lab.gsd(&["trust", "rebind-host", "acme", "--yes", "--json"]);
    out.assert_status(0);
    let rebound = out.json();
    assert_eq!(rebound["status"], "rebound");
    assert_eq!(rebound["binding"], "pin");
    assert_eq!(rebound["old"]["host"], first.url());
    assert_eq!(rebound["new"]["host"], moved.url());
    assert_ran(&lab.run_lane("acme", &[]).0, false);
    assert_eq!(moved.post_count(), 1);

    let legacy = ollama_lab(None, &first.url());
    legacy.plant_record("ollama", None, "sha512-x");
    let (result, out) = legacy.run_lane("ollama", &[]);
    assert_ran(&result, false);
    assert!(
        out.stderr.contains("warning:"),
        "legacy records warn: {}",
        out.stderr
    );
    legacy
        .config(&json!({"review": {"ollama_host": moved.url(), "models": {"ollama": "acme-7b"}}}));
    let (result, _) = legacy.run_lane("ollama", &[]);
    assert_reason(&result, "egress_host_changed");
}

#[test]
fn w12_environment_proxies_are_ignored() {
    e18_environment_proxies_are_ignored();
}

#[test]
fn w14_repo_relative_binary_is_refused_for_third_party_lanes() {
    p16_repo_relative_binary_is_refused();
}

#[test]
fn w16_argv_shaping_fields_are_bound() {
    let lab = Lab::new();
    lab.overlay(Scope::Project, "spawn-lane", "acme-spawn", |_| {});
    lab.approve("acme-spawn");
    let record = lab.record("acme-spawn").expect("record");
    assert!(
        record["laneBindingV2"]
            .as_str()
            .is_some_and(|b| b.contains("--model")),
        "{record}"
    );
    let source = lab.source("spawn-lane", "acme-spawn", |m| {
        m["reviewer"]["invoke"]["modelArg"] = json!("-c")
    });
    let envelope = lab.install_without_consent(&source);
    assert_eq!(envelope["changes"]["executableSetChanged"], false);
    assert_eq!(envelope["changes"]["bindingChanged"], true);
    assert_eq!(
        lab.record("acme-spawn"),
        Some(record),
        "nothing recorded without consent"
    );
}

#[test]
fn w17_third_party_spawn_gets_a_minimal_environment() {
    p17_third_party_spawn_lane_gets_a_minimal_environment();
}

#[test]
fn w18_timeout_kills_the_whole_process_tree() {
    p09_timeout_kills_the_whole_tree();
}

#[test]
fn w19_only_http_and_https_with_a_bounded_body() {
    e19_non_http_destinations_are_malformed();
    e20_oversized_body_is_a_bounded_failure();
}

// ---------------------------------------------------------------------------------------------
// install / remove
// ---------------------------------------------------------------------------------------------

#[test]
fn install_project_scope_records_consent_and_remove_revokes_it() {
    let lab = Lab::new();
    let source = lab.source("spawn-lane", "acme-spawn", |_| {});
    let refused = lab.install_without_consent(&source);
    assert_eq!(refused["requiresConsent"], true);
    assert!(!lab
        .env
        .capabilities_dir(Scope::Project)
        .join("acme-spawn")
        .exists());
    let out = lab.gsd(&[
        "install",
        "--project-scope",
        "--yes",
        "--json",
        source.to_str().expect("utf8"),
    ]);
    out.assert_status(0);
    let envelope = out.json();
    assert_eq!(envelope["status"], "installed");
    assert_eq!(envelope["consentRecorded"], true);
    assert!(lab.record("acme-spawn").is_some());
    assert_ran(&lab.run_lane("acme_spawn", &[]).0, false);
    let removed = lab.gsd(&["remove", "acme-spawn", "--json"]);
    removed.assert_status(0);
    assert_eq!(removed.json()["revoked"], true);
    assert!(lab.record("acme-spawn").is_none());
    assert!(!lab
        .env
        .capabilities_dir(Scope::Project)
        .join("acme-spawn")
        .exists());
}

#[test]
fn install_refuses_reserved_ids_collisions_and_invalid_manifests() {
    let lab = Lab::new();
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "reserved",
            Box::new(|m: &mut Value| m["id"] = json!("gsd-evil")),
        ),
        (
            "first-party",
            Box::new(|m: &mut Value| m["id"] = json!("ollama")),
        ),
        (
            "slug collision",
            Box::new(|m: &mut Value| m["reviewer"]["slug"] = json!("codex")),
        ),
        (
            "invalid",
            Box::new(|m: &mut Value| m["reviewer"]["transport"] = json!("grpc")),
        ),
        (
            "handler mismatch",
            Box::new(|m: &mut Value| m["reviewer"]["handler"] = json!("openai-compatible")),
        ),
    ];
    for (name, edit) in cases {
        let out = lab.install_refused(|m| edit(m));
        assert_eq!(out.json()["status"], "refused", "{name}: {}", out.stdout);
    }
    assert!(
        !lab.env.capabilities_dir(Scope::Global).exists()
            || std::fs::read_dir(lab.env.capabilities_dir(Scope::Global))
                .expect("dir")
                .count()
                == 0
    );
}

/// The manifest's header is read through the lenient view: an `id` of another type, a missing
/// `id` or a manifest that is not an object is refused with the field and what was found
/// (never read as an empty id), and a wrong-typed `version` or `engines.gsd` is refused by
/// validation while `--json` reports no version instead of echoing the value.
#[test]
fn install_refuses_a_header_of_the_wrong_type_naming_the_field() {
    let lab = Lab::new();
    type Edit = Box<dyn Fn(&mut Value)>;
    let grammar = "give it an id matching ^[a-z][a-z0-9-]*$";
    let refused = |edit: &Edit| {
        let out = lab.install_refused(|m| edit(m));
        let envelope = out.json();
        (out, envelope)
    };
    let early: Vec<(Edit, String)> = vec![
        (
            Box::new(|m: &mut Value| m["id"] = json!(7)),
            format!("capability.json id must be a string (found number); {grammar}"),
        ),
        (
            Box::new(|m: &mut Value| m["id"] = json!({"name": "acme-spawn"})),
            format!("capability.json id must be a string (found object); {grammar}"),
        ),
        (
            Box::new(|m: &mut Value| {
                m.as_object_mut().expect("object").remove("id");
            }),
            format!("capability.json id is missing; {grammar}"),
        ),
        (
            Box::new(|m: &mut Value| *m = json!([m.clone()])),
            format!("capability.json: the manifest must be an object (found array); {grammar}"),
        ),
    ];
    for (edit, said) in early {
        let (out, envelope) = refused(&edit);
        assert_eq!(envelope["status"], "refused", "{said}: {}", out.stdout);
        assert_eq!(envelope["problems"], json!([said]), "{}", out.stdout);
        assert_eq!(envelope["id"], "", "{}", out.stdout);
        assert!(
            out.stderr.contains(&format!("refused: {said}")),
            "{}",
            out.stderr
        );
    }
    let late: Vec<(Edit, &str)> = vec![
        (
            Box::new(|m: &mut Value| m["version"] = json!(7)),
            "capability.json version ",
        ),
        (
            Box::new(|m: &mut Value| m["engines"] = json!({"gsd": [">=1.0.0"]})),
            "capability.json engines.gsd ",
        ),
        (
            Box::new(|m: &mut Value| m["engines"] = json!(">=1.0.0")),
            "capability.json engines ",
        ),
    ];
    for (edit, field) in late {
        let (out, envelope) = refused(&edit);
        assert_eq!(envelope["status"], "refused", "{field}: {}", out.stdout);
        assert_eq!(envelope["id"], "acme-spawn");
        let problems = envelope["problems"].as_array().expect("problems");
        assert!(
            problems
                .iter()
                .any(|p| p.as_str().is_some_and(|p| p.starts_with(field))),
            "{field}: {problems:?}"
        );
        if field.contains("version") {
            assert_eq!(envelope["version"], Value::Null, "{}", out.stdout);
        } else {
            assert_eq!(envelope["version"], "1.0.0", "{}", out.stdout);
        }
    }
    assert!(!lab
        .env
        .capabilities_dir(Scope::Global)
        .join("acme-spawn")
        .exists());
    // `disclose --manifest` reads the same manifest and says what it could not use.
    let folder = lab.source("spawn-lane", "acme-spawn", |m| m["id"] = json!(7));
    let view = lab.disclose_manifest(&folder);
    assert_eq!(view["id"], "");
    assert_eq!(view["reason"], "id must be a string (found number)");
    let text = lab.gsd(&["disclose", "--manifest", folder.to_str().expect("utf8")]);
    text.assert_status(0);
    assert!(
        text.stdout
            .contains("not active: id must be a string (found number)"),
        "{}",
        text.stdout
    );
}

#[test]
fn first_party_lanes_cannot_be_removed_and_list_shows_pins() {
    let lab = Lab::new();
    lab.gsd(&["remove", "ollama"]).assert_status(1);
    let out = lab.gsd(&["trust", "list", "--json"]);
    out.assert_status(0);
    assert_eq!(out.json()["records"], json!([]));
    assert_eq!(out.json()["pins"], json!([]));
}

// ---------------------------------------------------------------------------------------------
// Damaged stores fail closed (issue 11 point 1)
// ---------------------------------------------------------------------------------------------

/// The ways a store file can be damaged.
#[derive(Debug, Clone, Copy)]
enum StoreDamage {
    InvalidJson,
    Truncated,
    Empty,
    Fifo,
    Directory,
    SymlinkToDevZero,
    WrongVersion,
    WrongShape,
    WrongTypes,
    Unreadable,
}

const STORE_DAMAGES: [StoreDamage; 10] = [
    StoreDamage::InvalidJson,
    StoreDamage::Truncated,
    StoreDamage::Empty,
    StoreDamage::Fifo,
    StoreDamage::Directory,
    StoreDamage::SymlinkToDevZero,
    StoreDamage::WrongVersion,
    StoreDamage::WrongShape,
    StoreDamage::WrongTypes,
    StoreDamage::Unreadable,
];

/// True when this process runs as root (file modes do not stop it reading).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile::NamedTempFile::new().expect("temp file");
    probe.as_file().metadata().expect("meta").uid() == 0
}

/// Damages the store at `path` (which holds a valid store) in the way `kind` says; `records`
/// is the top-level key holding the entries (`pins` or `records`). False when the damage
/// cannot be made here (an unreadable file, as root).
fn damage_store(path: &Path, records: &str, kind: StoreDamage) -> bool {
    let text = std::fs::read_to_string(path).expect("a valid store to damage");
    let mut value: Value = serde_json::from_str(&text).expect("valid store");
    let replace = |bytes: &[u8]| std::fs::write(path, bytes).expect("write damaged store");
    match kind {
        StoreDamage::InvalidJson => replace(b"{\"version\": \"1\", \"pins\": {"),
        StoreDamage::Truncated => replace(&text.as_bytes()[..text.len() / 2]),
        StoreDamage::Empty => replace(b""),
        StoreDamage::Fifo => {
            std::fs::remove_file(path).expect("remove");
            let made = std::process::Command::new("mkfifo")
                .arg(path)
                .status()
                .expect("mkfifo");
            assert!(made.success());
        }
        StoreDamage::Directory => {
            std::fs::remove_file(path).expect("remove");
            std::fs::create_dir(path).expect("directory");
        }
        StoreDamage::SymlinkToDevZero => {
            std::fs::remove_file(path).expect("remove");
            std::os::unix::fs::symlink("/dev/zero", path).expect("symlink");
        }
        StoreDamage::WrongVersion => {
            value["version"] = json!("2");
            replace(value.to_string().as_bytes());
        }
        StoreDamage::WrongShape => {
            value[records] = json!([value[records].clone()]);
            replace(value.to_string().as_bytes());
        }
        StoreDamage::WrongTypes => {
            for entry in value[records]
                .as_object_mut()
                .expect("entries")
                .values_mut()
            {
                let field = if records == "pins" {
                    "host"
                } else {
                    "reviewerHost"
                };
                entry[field] = json!(5);
            }
            replace(value.to_string().as_bytes());
        }
        StoreDamage::Unreadable => {
            if running_as_root() {
                return false;
            }
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000)).expect("chmod");
        }
    }
    true
}

/// Asserts a damaged-store block: the reason, nothing sent, nothing written, the path and the
/// fix named.
fn assert_store_block(
    lab: &Lab,
    result: &Value,
    out: &Outcome,
    reason: &str,
    store: &Path,
    moved: &Listener,
    what: &str,
) {
    assert_reason(result, reason);
    assert_eq!(
        moved.connections(),
        0,
        "{what}: the moved host was contacted"
    );
    assert!(
        !lab.review_path("ollama").exists(),
        "{what}: a review was written"
    );
    let detail = result["detail"].as_str().unwrap_or("");
    for part in [
        store.display().to_string().as_str(),
        "gsd-lane trust repair",
        "nothing was sent",
    ] {
        assert!(
            detail.contains(part),
            "{what}: detail lacks {part}: {detail}"
        );
        assert!(
            out.stderr.contains(part),
            "{what}: stderr lacks {part}: {}",
            out.stderr
        );
    }
}

#[test]
fn s01_damaged_pin_store_blocks_the_moved_host_before_any_connection() {
    for kind in STORE_DAMAGES {
        let first = Listener::openai();
        let moved = Listener::counting();
        let lab = ollama_lab(None, &first.url());
        let (result, _) = lab.run_lane("ollama", &[]);
        assert_ran(&result, false);
        std::fs::remove_file(lab.review_path("ollama")).expect("first review");
        let pins = lab.env.gsd_home.join(".gsd/egress-pins.json");
        if !damage_store(&pins, "pins", kind) {
            eprintln!("skipped {kind:?}: running as root, file modes do not stop reads");
            continue;
        }
        let before = first.connections();
        lab.config(
            &json!({"review": {"ollama_host": moved.url(), "models": {"ollama": "acme-7b"}}}),
        );
        let (result, out) = lab.run_lane("ollama", &[]);
        let what = format!("{kind:?}");
        assert_store_block(
            &lab,
            &result,
            &out,
            "egress_store_unreadable",
            &pins,
            &moved,
            &what,
        );
        assert_eq!(first.connections(), before, "{what}");
        assert!(
            std::fs::symlink_metadata(&pins).is_ok(),
            "{what}: the damaged file is left for repair"
        );
    }
}

#[test]
fn s02_damaged_consent_store_blocks_the_moved_host_before_any_connection() {
    for kind in STORE_DAMAGES {
        let consented = Listener::openai();
        let moved = Listener::counting();
        let lab = ollama_lab(Some(&consented.url()), &moved.url());
        let store = lab.store_path();
        if !damage_store(&store, "records", kind) {
            eprintln!("skipped {kind:?}: running as root, file modes do not stop reads");
            continue;
        }
        let (result, out) = lab.run_lane("ollama", &[]);
        let what = format!("{kind:?}");
        // An empty store blocks too: gsd-lane never writes one, so it was truncated and the
        // host it recorded is unknown (README, Trust model; spec/CHANGES.md on trust.md §5.5).
        assert_store_block(
            &lab,
            &result,
            &out,
            "consent_store_unreadable",
            &store,
            &moved,
            &what,
        );
        assert_eq!(consented.connections(), 0, "{what}");
        assert!(
            !lab.env.gsd_home.join(".gsd/egress-pins.json").exists(),
            "{what}: a damaged consent store must not be replaced by a first-use pin"
        );
    }
}

#[test]
fn s03_damaged_store_block_shows_in_run_invoke_and_review_preflight() {
    let first = Listener::openai();
    let moved = Listener::counting();
    let lab = ollama_lab(None, &first.url());
    crate::review::copy_dir(
        &util::fixture("review/project/.planning"),
        &lab.env.project.join(".planning"),
    );
    lab.config(&json!({"review": {"ollama_host": first.url(), "models": {"ollama": "acme-7b"}}}));
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_ran(&result, false);
    let pins = lab.env.gsd_home.join(".gsd/egress-pins.json");
    assert!(damage_store(&pins, "pins", StoreDamage::InvalidJson));
    lab.config(&json!({"review": {"ollama_host": moved.url(), "models": {"ollama": "acme-7b"}}}));
    let run_dir = lab.run_dir.display().to_string();

    let human = lab.gsd(&["run", "ollama", "--run-dir", &run_dir]);
    human.assert_no_panic();
    assert!(
        human
            .stdout
            .contains("unavailable (egress_store_unreadable)"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains(&pins.display().to_string()),
        "{}",
        human.stdout
    );

    let invoke = lab.gsd(&["invoke", "--slug", "ollama", "--run-dir", &run_dir]);
    invoke.assert_no_panic();
    assert_reason(&invoke.json(), "egress_store_unreadable");

    let review = lab.gsd(&["review", "--phase", "3", "--ollama"]);
    review.assert_no_panic().assert_status(2);
    assert!(
        review.stderr.contains("egress_store_unreadable"),
        "{}",
        review.stderr
    );
    assert!(
        review.stderr.contains("gsd-lane trust repair"),
        "{}",
        review.stderr
    );
    assert_eq!(moved.connections(), 0, "nothing reached the moved host");
}

#[test]
fn s04_trust_repair_shows_and_moves_the_damaged_file_aside() {
    let first = Listener::openai();
    let lab = ollama_lab(None, &first.url());
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_ran(&result, false);
    let pins = lab.env.gsd_home.join(".gsd/egress-pins.json");
    std::fs::write(&pins, "{\"version\": \"1\", \u{1b}[2J").expect("damage");

    // Without a terminal and without --yes nothing moves.
    let declined = lab.gsd(&["trust", "repair"]);
    declined.assert_no_panic().assert_status(1);
    assert!(
        declined.stdout.contains("\\u{1b}[2J"),
        "shown escaped: {}",
        declined.stdout
    );
    assert!(!declined.stdout.contains('\u{1b}'));
    assert!(pins.exists());

    let out = lab.gsd(&["trust", "repair", "--yes", "--json"]);
    out.assert_no_panic().assert_status(0);
    let report = out.json();
    assert_eq!(report["status"], "repaired", "{report}");
    let moved_to = PathBuf::from(report["files"][0]["movedTo"].as_str().expect("movedTo"));
    assert!(moved_to
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("egress-pins.json.damaged-")));
    assert_eq!(
        std::fs::read_to_string(&moved_to).expect("kept"),
        "{\"version\": \"1\", \u{1b}[2J"
    );
    assert!(!pins.exists());
    let clean = lab.gsd(&["trust", "repair", "--json"]);
    clean.assert_status(0);
    assert_eq!(clean.json()["status"], "clean");
    // A missing store is "first use" again.
    let (result, _) = lab.run_lane("ollama", &[]);
    assert_ran(&result, false);
    assert_eq!(lab.pins()["pins"].as_object().map(|p| p.len()), Some(1));
}

// ---------------------------------------------------------------------------------------------
// Run-dir safety (issue 11 point 2)
// ---------------------------------------------------------------------------------------------

/// Plants `run_dir/name` as a symlink to a victim file outside the run dir; returns the victim.
fn plant_symlink(lab: &Lab, name: &str) -> PathBuf {
    let victim = lab.env.root.path().join(format!("victim-{name}"));
    std::fs::write(&victim, "victim content\n").expect("victim");
    let entry = lab.run_dir.join(name);
    let _ = std::fs::remove_file(&entry);
    std::os::unix::fs::symlink(&victim, &entry).expect("plant symlink");
    victim
}

#[test]
fn r01_planted_symlinks_in_the_run_dir_are_refused_by_name() {
    for name in ["gsd-review-acme_spawn.md", "gsd-review-acme_spawn.err"] {
        let lab = spawn_lab(|_| {});
        let victim = plant_symlink(&lab, name);
        let out = lab.run_raw("acme_spawn", &[]);
        assert_ne!(out.code, Some(0), "{name}: {}", out.stderr);
        assert!(out.stderr.contains(name), "{name}: {}", out.stderr);
        assert!(
            out.stderr.contains("symbolic link"),
            "{name}: {}",
            out.stderr
        );
        assert_eq!(
            std::fs::read_to_string(&victim).expect("victim"),
            "victim content\n",
            "{name}: written through the link"
        );
    }
    // The prompt read from stdin is written into the run dir the same way.
    let lab = spawn_lab(|_| {});
    let victim = plant_symlink(&lab, "gsd-review-prompt.md");
    let out = lab.run_raw("acme_spawn", &["--prompt", "-"]);
    assert_ne!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("gsd-review-prompt.md"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "victim content\n"
    );
}

#[test]
fn r02_run_creates_private_run_dirs() {
    let lab = spawn_lab(|_| {});
    // The default run dir (a fresh temporary one) and a given one that does not exist yet.
    let given = lab.env.root.path().join("fresh/run");
    let given_text = given.display().to_string();
    let prompt = lab.env.root.path().join("prompt.md");
    std::fs::write(&prompt, "Review this plan.\n").expect("prompt");
    let prompt_text = prompt.display().to_string();
    for extra in [vec![], vec!["--run-dir", given_text.as_str()]] {
        let mut args = vec!["run", "acme_spawn", "--prompt-file", prompt_text.as_str()];
        args.extend(extra.iter().copied());
        let out = lab.gsd(&args);
        out.assert_no_panic().assert_status(0);
        let review = out
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("review    "))
            .unwrap_or_else(|| panic!("no review line: {}", out.stdout));
        let dir = Path::new(review).parent().expect("run dir").to_path_buf();
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&dir).expect("run dir").permissions(),
        );
        assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
        if extra.is_empty() {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[test]
fn r03_shared_or_foreign_run_dirs_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let lab = spawn_lab(|_| {});
    for (mode, word) in [(0o770, "group"), (0o777, "everyone"), (0o1777, "everyone")] {
        std::fs::set_permissions(&lab.run_dir, std::fs::Permissions::from_mode(mode))
            .expect("chmod");
        let out = lab.run_raw("acme_spawn", &[]);
        assert_eq!(out.code, Some(1), "{mode:o}: {}", out.stderr);
        assert!(out.stderr.contains("writable by"), "{}", out.stderr);
        assert!(out.stderr.contains(word), "{}", out.stderr);
        assert!(!lab.review_path("acme_spawn").exists());
    }
    std::fs::set_permissions(&lab.run_dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    if running_as_root() {
        let chown = std::process::Command::new("chown")
            .args(["65534", lab.run_dir.to_str().expect("utf8")])
            .status()
            .expect("chown");
        assert!(chown.success());
        let out = lab.run_raw("acme_spawn", &[]);
        assert_eq!(out.code, Some(1), "{}", out.stderr);
        assert!(
            out.stderr.contains("owned by another user"),
            "{}",
            out.stderr
        );
        assert!(!lab.review_path("acme_spawn").exists());
    } else {
        eprintln!("skipped the foreign-owner case: it needs root to chown");
    }
}

// ---------------------------------------------------------------------------------------------
// A broken config fails closed for `review` (issue 11 point 6, decisions.md #13)
// ---------------------------------------------------------------------------------------------

#[test]
fn k01_unparsable_config_stops_review_before_any_lane_and_names_line_and_column() {
    let lab = spawn_lab(|_| {});
    crate::review::copy_dir(
        &util::fixture("review/project/.planning"),
        &lab.env.project.join(".planning"),
    );
    let config = lab.env.project.join(".planning/config.json");
    // The user restricted the reviewers; the file then lost a comma.
    std::fs::write(
        &config,
        "{\n  \"review\": {\n    \"default_reviewers\": [\"nobody\"]\n    \"models\": {}\n  }\n}\n",
    )
    .expect("config");
    let reviews = lab
        .env
        .project
        .join(".planning/phases/03-billing/03-REVIEWS.md");
    let out = lab.gsd(&["review", "--phase", "3"]);
    out.assert_no_panic().assert_status(1);
    let at = format!("{}:4:5:", config.display());
    assert!(out.stderr.contains(&at), "no {at} in {}", out.stderr);
    assert!(out.stderr.contains("invalid JSON"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("review: selection"),
        "a selection was made: {}",
        out.stderr
    );
    assert!(!reviews.exists(), "a lane ran and REVIEWS.md was written");
    // A command that sends nothing warns and goes on.
    let out = lab.gsd(&["plan"]);
    out.assert_no_panic().assert_status(0);
    assert!(
        out.stderr.contains("its settings were not applied"),
        "{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// A symlinked project capability folder (issue 11 point 7, trust.md §5.7)
// ---------------------------------------------------------------------------------------------

#[test]
fn l01_symlinked_project_capability_folder_is_refused_and_never_approvable() {
    let listener = Listener::openai();
    let lab = Lab::new();
    let real = lab.source("http-lane", "acme-reviewer", |_| {});
    let dir = lab.env.capabilities_dir(Scope::Project);
    std::fs::create_dir_all(&dir).expect("capabilities dir");
    std::os::unix::fs::symlink(&real, dir.join("acme-reviewer")).expect("symlink folder");
    lab.config(&json!({"review": {"acme_host": listener.url()}}));

    let out = lab.gsd(&["trust", "approve", "acme-reviewer", "--yes", "--json"]);
    out.assert_no_panic().assert_status(1);
    let envelope = out.json();
    assert_eq!(envelope["status"], "refused", "{envelope}");
    assert!(
        envelope["problems"].to_string().contains("symbolic link"),
        "{envelope}"
    );
    assert!(lab.record("acme-reviewer").is_none(), "approved a symlink");

    let rows = lab.env.list(&[]);
    let row = util::row(&rows, "project", "acme-reviewer");
    assert_eq!(row["active"], json!(false), "{row}");
    assert_eq!(row["code"], "LD-SYMLINK", "{row}");

    let out = lab.run_raw("acme", &["--explicit"]);
    assert_ne!(out.code, Some(0), "{}", out.stdout);
    assert_eq!(listener.connections(), 0);
}

// ---------------------------------------------------------------------------------------------
// Review text on a terminal (issue 11 point 8)
// ---------------------------------------------------------------------------------------------

#[test]
fn t01_review_text_printed_by_run_escapes_bidi_and_invisible_controls() {
    // The fake CLI prints its argv as the review, so the model value is review text.
    let hostile =
        "ok\u{202e}txt.exe\u{202c} \u{2066}x\u{2069} \u{200b}\u{feff}\u{e0041}\r \u{1b}[2J";
    let lab = spawn_lab(|_| {});
    lab.config(&json!({"review": {"models": {"acme_spawn": hostile}}}));
    let run_dir = lab.run_dir.display().to_string();
    let out = lab.gsd(&["run", "acme_spawn", "--run-dir", &run_dir]);
    out.assert_no_panic().assert_status(0);
    let review = std::fs::read_to_string(lab.review_path("acme_spawn")).expect("review");
    assert!(
        review.contains('\u{202e}') && review.contains('\u{1b}'),
        "the review file keeps the text as written: {review:?}"
    );
    for (raw, shown) in [
        ('\u{202e}', "\\u{202e}"),
        ('\u{202c}', "\\u{202c}"),
        ('\u{2066}', "\\u{2066}"),
        ('\u{2069}', "\\u{2069}"),
        ('\u{200b}', "\\u{200b}"),
        ('\u{feff}', "\\u{feff}"),
        ('\u{e0041}', "\\u{e0041}"),
        ('\u{1b}', "\\u{1b}"),
        ('\r', "\\u{d}"),
    ] {
        assert!(
            !out.stdout.contains(raw),
            "{raw:?} reached the terminal raw"
        );
        assert!(out.stdout.contains(shown), "no {shown} in {}", out.stdout);
    }
}

// ---------------------------------------------------------------------------------------------
// Copy-paste-safe command lines (issue 11 point 9)
// ---------------------------------------------------------------------------------------------

/// Pastes `line` into `sh` (as `printf '%s\0' <line>`) and returns the argv it passes.
fn pasted_argv(line: &str) -> Vec<String> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\0' {line}"))
        .output()
        .expect("sh");
    assert!(out.status.success(), "{line}");
    String::from_utf8_lossy(&out.stdout)
        .split_terminator('\0')
        .map(str::to_owned)
        .collect()
}

/// The text after `label` on the first line that has it.
fn labelled<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?} line in {text}"))
        .trim()
}

#[test]
fn q01_rendered_command_lines_paste_back_as_the_json_argv() {
    let tricky = [
        "a\\", "b", "$(id)", "`id`", "it's", "", "x y", "~", "--k=v*",
    ];
    let lab = spawn_lab(|m| {
        let mut args: Vec<Value> = tricky.iter().map(|a| json!(a)).collect();
        args.extend([json!("-p"), json!("-")]);
        m["reviewer"]["invoke"]["args"] = Value::Array(args);
    });
    let mut expected: Vec<String> = vec!["acme-args".to_owned()];
    expected.extend(tricky.iter().map(|a| (*a).to_owned()));
    expected.extend(["-p".to_owned(), "-".to_owned()]);

    let out = lab.gsd(&["disclose", "acme-spawn"]);
    out.assert_no_panic().assert_status(0);
    let json_argv: Vec<String> =
        serde_json::from_str(labelled(&out.stdout, "argv (JSON):")).expect("JSON argv");
    assert_eq!(json_argv, expected, "{}", out.stdout);
    assert_eq!(
        pasted_argv(labelled(&out.stdout, "runs now:")),
        expected,
        "{}",
        out.stdout
    );

    let run_dir = lab.run_dir.display().to_string();
    let out = lab.gsd(&["run", "acme_spawn", "--run-dir", &run_dir]);
    out.assert_no_panic().assert_status(0);
    let json_argv: Vec<String> =
        serde_json::from_str(labelled(&out.stdout, "argv ")).expect("JSON argv");
    assert_eq!(json_argv, expected, "{}", out.stdout);
    assert_eq!(
        pasted_argv(labelled(&out.stdout, "command ")),
        expected,
        "{}",
        out.stdout
    );
    // What the lane really received.
    assert_eq!(printed_argv(&lab, "acme_spawn"), expected[1..].to_vec());
}

// ---------------------------------------------------------------------------------------------
// Weaknesses whose only tests were unit tests (W15, W18, W20): end to end too
// ---------------------------------------------------------------------------------------------

/// `disclose <id> --json` for one capability.
fn disclosed(lab: &Lab, id: &str) -> Value {
    let out = lab.gsd(&["disclose", id, "--json"]);
    out.assert_no_panic().assert_status(0);
    out.json()[0].clone()
}

#[test]
fn spec_w15_disclosure_names_every_payload_class() {
    let lab = ollama_lab(None, "http://localhost:11434");
    let row = disclosed(&lab, "ollama");
    let lane = &row["disclosure"]["reviewerLanes"][0];
    assert_eq!(
        lane["egressPayloadClasses"],
        json!([
            "plan text",
            "requirements",
            "research findings",
            "CONTEXT.md decisions"
        ]),
        "{row}"
    );
    assert_eq!(
        lane["additionalEgress"],
        json!(["project context", "roadmap section"])
    );
    let summary = row["summary"].to_string();
    assert!(
        summary.contains("sends: plan text, requirements, research findings, CONTEXT.md decisions"),
        "{summary}"
    );
    assert!(summary.contains("also reaches it: project context, roadmap section"));
}

#[test]
fn spec_w18_locality_is_classified_by_the_parsed_host_not_its_spelling() {
    for (host, local) in [
        ("http://127.1:11434", true),
        ("http://[::1]:11434", true),
        ("http://LOCALHOST:11434", true),
        ("http://localhost.:11434", false),
        ("http://localhost.evil.example", false),
        ("http://127.0.0.1.evil.example", false),
        ("http://localhost@evil.example", false),
        ("http://[::ffff:127.0.0.1]:11434", false),
    ] {
        let lab = ollama_lab(None, host);
        let row = disclosed(&lab, "ollama");
        assert_eq!(
            row["disclosure"]["reviewerLanes"][0]["isLocalDestination"],
            json!(local),
            "{host}: {row}"
        );
        let summary = row["summary"].to_string();
        assert_eq!(summary.contains("[local]"), local, "{host}: {summary}");
    }
}

#[test]
fn spec_w20_a_handler_of_another_transport_is_refused_before_anything_runs() {
    let lab = spawn_lab(|m| m["reviewer"]["handler"] = json!("openai-compatible"));
    let out = lab.run_raw("acme_spawn", &["--explicit"]);
    assert_ne!(out.code, Some(0), "{}", out.stdout);
    assert!(
        out.stdout.contains("malformed_lane") || out.stderr.contains("malformed_lane"),
        "{}{}",
        out.stdout,
        out.stderr
    );
    assert!(
        !lab.review_path("acme_spawn").exists(),
        "the lane's program ran"
    );
}

/// Issue 21 item 8: the handler-to-transport rule comes from the handler registry, with no
/// catch-all: `kimi-code` drives spawn lanes only, so on the HTTP transport `validate` refuses
/// the manifest and `disclose` says the lane cannot run.
#[test]
fn issue21_kimi_code_on_http_is_refused_by_validate_and_disclose() {
    let lab = Lab::new();
    let folder = lab.overlay(Scope::Global, "http-lane", "acme-reviewer", |m| {
        m["reviewer"]["handler"] = json!("kimi-code");
    });
    let manifest = folder.join("capability.json");
    let out = lab.gsd(&["validate", manifest.to_str().expect("utf8")]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(text.contains("TR-HANDLER-TRANSPORT"), "{text}");
    assert!(
        text.contains("kimi-code does not drive \\\"openai-http\\\"")
            || text.contains("kimi-code does not drive \"openai-http\""),
        "{text}"
    );
    let view = lab.gsd(&[
        "disclose",
        "--json",
        "--manifest",
        folder.to_str().expect("utf8"),
    ]);
    view.assert_status(0);
    let row = &view.json()[0];
    assert_eq!(
        row["policy"][0]["code"], "TR-HANDLER-TRANSPORT",
        "{}",
        view.stdout
    );
    assert_eq!(row["run"]["reason"], "malformed_lane", "{}", view.stdout);
}

/// Issue 21 item 7: `install --project-scope` refusing a duplicate id names the other copy,
/// and `trust approve`'s hint spells the flag as it is (`--project-scope`).
#[test]
fn issue21_duplicate_install_names_the_other_copy_and_hints_spell_the_flag() {
    let lab = Lab::new();
    let source = lab.source("spawn-lane", "acme-spawn", |_| {});
    let folder = source.to_str().expect("utf8");
    lab.gsd(&["install", "--global", "--yes", folder])
        .assert_status(0);
    let out = lab.gsd(&["install", "--project-scope", "--yes", folder]);
    assert_ne!(out.code, Some(0), "{}", out.stdout);
    let other = lab
        .env
        .capabilities_dir(Scope::Global)
        .join("acme-spawn/capability.json");
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(
        text.contains(&format!("the other copy: {}", other.display())),
        "{text}"
    );
    let out = lab.gsd(&["trust", "approve", "no-such-lane", "--yes"]);
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(text.contains("install --project-scope <folder>"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// `invoke.env` on third-party lanes (decisions.md row 18): disclosed before consent, bound by
// the signature only when non-empty
// ---------------------------------------------------------------------------------------------

/// A value that would retitle the terminal, return the cursor and reverse the line if printed.
const HOSTILE_ENV_VALUE: &str = "\u{1b}]0;pwned\u{7}\r\u{202e}fast";

#[test]
fn env1_disclose_shows_a_lanes_env_pairs_inert_with_the_code_warning() {
    let lab = Lab::new();
    let folder = lab.overlay(Scope::Global, "spawn-lane", "acme-spawn", |m| {
        m["reviewer"]["invoke"]["env"] =
            json!({"ACME_MODE": HOSTILE_ENV_VALUE, "GIT_ASKPASS": "/opt/acme/askpass"});
    });
    let text = lab.gsd(&["disclose", "acme-spawn"]);
    text.assert_status(0);
    let env_line = text
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("env: "))
        .unwrap_or_else(|| panic!("no env line in {}", text.stdout));
    assert_eq!(
        env_line.trim_start(),
        "env: ACME_MODE='\\u{1b}]0;pwned\\u{7}\\u{d}\\u{202e}fast', GIT_ASKPASS=/opt/acme/askpass"
    );
    assert!(
        !text.stdout.contains('\u{1b}') && !text.stdout.contains('\u{202e}'),
        "{:?}",
        text.stdout
    );
    assert!(
        text.stdout.contains(
            "WARNING — GIT_ASKPASS can make this lane run code of the capability's choosing"
        ),
        "{}",
        text.stdout
    );
    // The same from the file, as JSON: the exact pairs, and the same lines in the summary.
    for args in [
        vec!["disclose", "acme-spawn", "--json"],
        vec![
            "disclose",
            "--json",
            "--manifest",
            folder.to_str().expect("utf8"),
        ],
    ] {
        let out = lab.gsd(&args);
        out.assert_status(0);
        assert!(!out.stdout.contains('\u{1b}') && !out.stdout.contains('\u{202e}'));
        let view = &out.json()[0];
        assert_eq!(
            view["disclosure"]["reviewerLanes"][0]["env"],
            json!({"ACME_MODE": HOSTILE_ENV_VALUE, "GIT_ASKPASS": "/opt/acme/askpass"}),
            "{args:?}"
        );
        let summary = view["summary"].to_string();
        assert!(summary.contains("env: ACME_MODE="), "{summary}");
        assert!(summary.contains("WARNING — GIT_ASKPASS"), "{summary}");
    }
}

#[test]
fn env2_an_env_edit_needs_consent_again_and_the_consented_pairs_reach_the_child() {
    let lab = Lab::new();
    let env_lane = |mode: &'static str| {
        move |m: &mut Value| {
            m["reviewer"]["probe"]["binary"] = json!("acme-env");
            m["reviewer"]["invoke"]["binary"] = json!("acme-env");
            m["reviewer"]["invoke"]["env"] = json!({ "ACME_MODE": mode });
        }
    };
    lab.overlay(Scope::Project, "spawn-lane", "acme-spawn", env_lane("safe"));
    let approved = lab.approve("acme-spawn");
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_ran(&result, false);
    let names = std::fs::read_to_string(lab.review_path("acme_spawn")).expect("env names");
    assert!(names.lines().any(|n| n == "ACME_MODE"), "{names}");
    let before = lab.record("acme-spawn").expect("record")["disclosureSignature"].clone();
    assert!(
        before.as_str().expect("signature").contains("ACME_MODE"),
        "{before}"
    );
    // An update that changes only the value is an executable-set change: not installed
    // without consent, and the installed lane keeps running with what was approved.
    let source = lab.source("spawn-lane", "acme-spawn", env_lane("unsafe"));
    let envelope = lab.install_without_consent(&source);
    assert_eq!(envelope["requiresConsent"], true, "{envelope}");
    assert_eq!(
        envelope["changes"]["executableSetChanged"], true,
        "{envelope}"
    );
    assert!(
        envelope["disclosure"]
            .to_string()
            .contains("env: ACME_MODE=unsafe"),
        "{envelope}"
    );
    // Editing the installed manifest by hand deactivates it until approved again.
    let installed = lab
        .env
        .capabilities_dir(Scope::Project)
        .join("acme-spawn/capability.json");
    std::fs::copy(source.join("capability.json"), &installed).expect("copy");
    let _ = std::fs::remove_file(lab.review_path("acme_spawn"));
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_reason(&result, "malformed_lane");
    assert!(!lab.review_path("acme_spawn").exists());
    let again = lab.approve("acme-spawn");
    assert_ne!(again["fingerprint"], approved["fingerprint"], "{again}");
    let after = lab.record("acme-spawn").expect("record")["disclosureSignature"].clone();
    assert_ne!(before, after, "the record binds the new pairs");
    assert!(
        after.as_str().expect("signature").contains("unsafe"),
        "{after}"
    );
    let (result, _) = lab.run_lane("acme_spawn", &[]);
    assert_ran(&result, false);
}

#[test]
fn env3_a_lane_without_env_keeps_its_exact_signature() {
    let lab = Lab::new();
    let expected = "[[],[],[],[\"[\\\"lane\\\",\\\"acme_spawn\\\",\\\"spawn\\\",\\\"acme-args\\\",[\\\"review\\\",\\\"{{model}}\\\",\\\"-p\\\",\\\"-\\\"],\\\"\\\",\\\"stdin\\\",\\\"\\\"]\"]]";
    for env in [None, Some(json!({})), Some(json!({"N": 7}))] {
        let folder = lab.source("spawn-lane", "acme-spawn", |m| {
            if let Some(env) = env.clone() {
                m["reviewer"]["invoke"]["env"] = env;
            }
        });
        let view = &lab.disclose_manifest(&folder);
        assert_eq!(view["disclosureSignature"], expected, "{env:?}");
        assert!(
            view["disclosure"]["reviewerLanes"][0].get("env").is_none(),
            "{view}"
        );
        assert!(!view["summary"].to_string().contains("env:"), "{view}");
    }
}
