//! CONTRIBUTING.md, "Adding a handler", done the documented way in a test: one handler type
//! implementing the SDK trait, registered by listing it with the others as
//! `handlers/src/lib.rs` does. The host library then validates a lane that names it, lists it
//! in the schema and the vocabulary, plans it and runs it through the handler.
//!
//! Its own test binary: the handler set is fixed once per process.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::time::Duration;

use gsd_lane::api::config::ProjectConfig;
use gsd_lane::api::plan::{PlanInputs, Refusal};
use gsd_lane::api::registry::{handlers, ConsentGate, LoadOptions, Registry};
use gsd_lane::api::run::lane::{self, EgressCheck, Outcome, RunSetup};
use gsd_lane::api::sandbox::{SandboxMode, ViewProof};
use gsd_lane_sdk::{
    Effects, Handler, HandlerError, HandlerName, HandlerOutput, LanePlan, LaneRequest,
    SpawnRequest, StdoutSink, Transport,
};
use serde_json::{json, Value};

/// The new handler (what `handlers/src/echo.rs` would hold): runs the lane's command through
/// the effects and prefixes its output.
struct Echo;

impl Handler for Echo {
    fn name(&self) -> HandlerName {
        HandlerName::new("echo")
    }

    fn describe(&self) -> &'static str {
        "prefixes the lane's output with `echo:`"
    }

    fn transport(&self) -> Transport {
        Transport::Spawn
    }

    fn run(&self, fx: &dyn Effects, req: &LaneRequest) -> Result<HandlerOutput, HandlerError> {
        let spawn = req
            .plan
            .spawn()
            .ok_or_else(|| HandlerError::malformed("not a spawn lane"))?;
        let report = fx.spawn(&SpawnRequest::new(
            spawn.binary.clone(),
            spawn.argv.clone(),
            StdoutSink::Memory(1 << 16),
            Duration::from_millis(req.plan.timeout_ms),
        ));
        Ok(HandlerOutput::review(
            format!("echo: {}", report.stdout.trim()),
            "stdout",
        ))
    }
}

/// The registration: every first-party handler, then the new one (the list of lib.rs).
fn register() {
    let mut set: Vec<&'static dyn Handler> = gsd_lane_handlers::HANDLERS.to_vec();
    set.push(&Echo);
    handlers::install(Vec::leak(set)).expect("installed before first use");
}

/// A global overlay declaring a lane driven by `handler`.
fn manifest(handler: &str) -> Value {
    json!({
        "id": "acme-echo",
        "role": "reviewer",
        "version": "1.0.0",
        "title": "Acme echo",
        "description": "A lane driven by the echo handler.",
        "tier": "full",
        "requires": [],
        "reviewer": {
            "slug": "acme_echo",
            "flags": ["--acme-echo"],
            "transport": "spawn",
            "probe": {"kind": "command-exists", "binary": "acme-echo-cli"},
            "invoke": {
                "binary": "acme-echo-cli",
                "args": ["hello"],
                "promptChannel": "none",
                "outputChannel": "stdout",
                "modelArg": null,
                "effortChannel": "none"
            },
            "timeoutFloorMs": 20000,
            "emptyOutput": "handler-owned",
            "reviewsSection": "Acme Echo Review",
            "evidenceClass": "source-grounded",
            "requiresBinaries": [],
            "promptBudgetKey": null,
            "modelConfigKey": null,
            "handler": handler
        }
    })
}

struct NoConsent;

impl ConsentGate for NoConsent {
    fn is_consented(&self, _: &Path, _: &str, _: &Path) -> bool {
        false
    }
}

struct AllowAll;

impl EgressCheck for AllowAll {
    fn check(&self, _: &LanePlan) -> Result<(), Refusal> {
        Ok(())
    }
}

fn errors(manifest: &Value) -> Vec<&'static str> {
    gsd_lane::api::manifest::validate_value(manifest, Some("acme-echo"))
        .into_iter()
        .filter(gsd_lane::api::manifest::Diagnostic::is_error)
        .map(|diagnostic| diagnostic.code.as_str())
        .collect()
}

#[test]
fn a_handler_added_the_documented_way_is_validated_listed_planned_and_run() {
    register();
    let echo = HandlerName::new("echo");

    // Validated: the new name is accepted; a name nobody registered still is not.
    assert_eq!(errors(&manifest("echo")), Vec::<&str>::new());
    assert_eq!(errors(&manifest("frobnicate")), ["RB-HANDLER"]);

    // Listed: the vocabulary and the JSON Schema name it.
    assert!(gsd_lane::api::manifest::vocab::handler_names().contains(&"echo"));
    let schema: Value =
        serde_json::from_str(&gsd_lane::api::manifest::model::schema_json()).expect("schema");
    let listed: Vec<Value> = schema["definitions"]["HandlerName"]["oneOf"]
        .as_array()
        .expect("oneOf")
        .iter()
        .map(|member| member["enum"][0].clone())
        .collect();
    assert!(listed.contains(&json!("echo")), "{listed:?}");

    // Loaded: an overlay naming it is an active lane.
    let home = tempfile::tempdir().expect("home");
    let capabilities = home.path().join(".gsd").join("capabilities");
    let folder = capabilities.join("acme-echo");
    std::fs::create_dir_all(&folder).expect("folder");
    let text = serde_json::to_string_pretty(&manifest("echo")).expect("json");
    std::fs::write(folder.join("capability.json"), text).expect("manifest");
    let registry = Registry::load(&LoadOptions {
        host_version: "1.8.0".to_owned(),
        global_dir: Some(capabilities),
        project_root: None,
        consent: &NoConsent,
    });
    let lane = registry
        .lane("acme_echo")
        .unwrap_or_else(|| panic!("the lane is not active: {:?}", registry.entries.last()));
    assert_eq!(lane.handler, Some(echo));
    assert!(handlers::lookup("echo").is_ok());

    // Planned: the plan carries the handler.
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let cli = bin.join("acme-echo-cli");
    std::fs::write(&cli, "#!/bin/sh\nprintf '%s\\n' \"$1\"\n").expect("cli");
    set_executable(&cli);
    let run_dir = home.path().join("run");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    let config = ProjectConfig::empty();
    let inputs = PlanInputs {
        run_dir: run_dir.display().to_string(),
        repo_root: home.path().display().to_string(),
        ..PlanInputs::default()
    };
    let plan = gsd_lane::api::plan::resolve_lane(&lane.capability_id, lane, &config, &inputs)
        .expect("plans");
    assert_eq!(plan.handler, Some(echo));

    // Run: the echo handler drives the lane and writes its review.
    let setup = RunSetup {
        config: &config,
        inputs,
        path_var: Some(format!("{}:/usr/bin:/bin", bin.display()).into()),
        home: Some(home.path().to_path_buf()),
        lock_dir: home.path().join("locks"),
        egress: &AllowAll,
        handler_override: None,
        sandbox: SandboxMode::Off,
        view_proof: ViewProof::Probed,
    };
    let outcome = lane::run_lane(lane, &setup).expect("runs");
    let Outcome::Completed(completion) = outcome else {
        panic!("the lane did not run: {outcome:?}");
    };
    assert!(!completion.stubbed, "{completion:?}");
    let review = std::fs::read_to_string(&completion.plan.review_path).expect("review");
    // The echo cites no file:line, so the citation stamp (upstream #3436) comes first.
    let (stamp, text) = review
        .split_once("\n\n")
        .expect("stamp, blank line, review");
    assert!(
        stamp.starts_with("> [reviewed-without-source-citations] "),
        "{review}"
    );
    assert_eq!(text.trim(), "echo: hello");
}

fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
