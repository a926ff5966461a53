//! Trust rules for third-party lanes that manifest validation does not express (trust.md §6.7,
//! §7.5, §7.12): checked at install and approval (refused), shown by `disclose`, and enforced
//! again on the run path (`malformed_lane`) for every overlay lane.
//!
//! First-party lanes ship inside the distribution and are not subject to these rules.

use std::path::Path;

use gsd_lane_sdk::{HandlerName, Probe, Transport};

use crate::manifest::diagnostic::Code;
use crate::manifest::probe::ProbeKind;
use crate::manifest::{DeclaredLane, LaneSpec};

use crate::refusal::{Reason, Refusal};
use crate::registry::{Lane, Scope};

/// One rule a third-party lane breaks, with the field and the fix (`disclose --json`'s `policy`
/// rows).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// Stable code (`TR-BINARY-PATH`, …).
    pub code: Code,
    /// The field, as a dotted path from the manifest root.
    pub field: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.code, self.field, self.message)
    }
}

/// What the rules look at, read from the declared view of a manifest or from a typed lane.
#[derive(Debug, Default)]
struct Declared<'a> {
    /// `reviewer.transport` as written (for messages).
    transport_text: &'a str,
    /// `reviewer.transport`, when it is a transport exactly.
    transport: Option<Transport>,
    /// `reviewer.invoke.binary`.
    invoke_binary: &'a str,
    /// `reviewer.probe.binary`.
    probe_binary: &'a str,
    /// `reviewer.probe.kind`.
    probe_kind: Option<ProbeKind>,
    /// `reviewer.handler`.
    handler: Option<&'a str>,
    /// `reviewer.invoke.path`.
    invoke_path: &'a str,
    /// `reviewer.probe.path`.
    probe_path: &'a str,
}

impl<'a> Declared<'a> {
    /// From a manifest that may not validate (install, approval and `disclose` subjects).
    fn of_declared(lane: &'a DeclaredLane) -> Declared<'a> {
        Declared {
            transport_text: &lane.transport,
            transport: lane.transport(),
            invoke_binary: &lane.invoke.binary,
            probe_binary: &lane.probe.binary,
            probe_kind: lane.probe.kind,
            handler: Some(lane.handler.as_str()).filter(|name| !name.is_empty()),
            invoke_path: &lane.invoke.path,
            probe_path: &lane.probe.path,
        }
    }

    /// From an accepted, typed lane.
    fn of_lane(lane: &'a LaneSpec) -> Declared<'a> {
        let (probe_binary, probe_path) = match &lane.probe {
            Probe::CommandExists { binary } | Probe::CommandCapability { binary, .. } => {
                (binary.as_str(), "")
            }
            Probe::HttpReachable { path, .. } => ("", path.as_str()),
            Probe::Unusable => ("", ""),
        };
        Declared {
            transport_text: lane.transport().as_str(),
            transport: Some(lane.transport()),
            invoke_binary: lane.spawn().map_or("", |spawn| spawn.binary.as_str()),
            probe_binary,
            probe_kind: ProbeKind::of_probe(&lane.probe),
            handler: lane.handler.map(HandlerName::as_str),
            invoke_path: lane
                .http()
                .and_then(|http| http.path.as_deref())
                .unwrap_or(""),
            probe_path,
        }
    }
}

/// The rules the lane of a manifest that may not validate breaks; `install_root` is the
/// capability folder. A manifest without a lane breaks none.
pub fn violations(lane: Option<&DeclaredLane>, install_root: Option<&Path>) -> Vec<Violation> {
    lane.map(|lane| declared_violations(&Declared::of_declared(lane), install_root))
        .unwrap_or_default()
}

/// The rules a typed third-party lane breaks; `install_root` is the capability folder.
pub fn lane_violations(lane: &LaneSpec, install_root: Option<&Path>) -> Vec<Violation> {
    declared_violations(&Declared::of_lane(lane), install_root)
}

fn declared_violations(declared: &Declared<'_>, install_root: Option<&Path>) -> Vec<Violation> {
    let mut found = Vec::new();
    for (field, binary) in [
        ("reviewer.invoke.binary", declared.invoke_binary),
        ("reviewer.probe.binary", declared.probe_binary),
    ] {
        if let Some(violation) = binary_violation(field, binary, install_root) {
            found.push(violation);
        }
    }
    if declared.transport == Some(Transport::Spawn)
        && declared.probe_kind == Some(ProbeKind::HttpReachable)
    {
        found.push(Violation {
            code: Code::TrSpawnHttpProbe,
            field: "reviewer.probe.kind".into(),
            message: "an http-reachable probe on a spawn lane contacts a destination nothing pins; use command-exists or command-capability".into(),
        });
    }
    if let Some(handler) = declared.handler {
        // The rule comes from the handler registry (each handler declares its transport); an
        // unregistered name is refused on its own (`RB-HANDLER`), never waved through here.
        let drives = crate::registry::handlers::transport_of(handler);
        if drives.is_some_and(|drives| Some(drives) != declared.transport) {
            found.push(Violation {
                code: Code::TrHandlerTransport,
                field: "reviewer.handler".into(),
                message: format!(
                    "handler {handler} does not drive {:?} lanes; declare the transport it drives or another handler ({})",
                    declared.transport_text,
                    crate::registry::handlers::transports_described()
                ),
            });
        }
    }
    for (field, path) in [
        ("reviewer.invoke.path", declared.invoke_path),
        ("reviewer.probe.path", declared.probe_path),
    ] {
        if !path.is_empty() && !path.starts_with('/') {
            found.push(Violation {
                code: Code::TrPathAuthority,
                field: field.into(),
                message: format!(
                    "{:?} must start with \"/\"; anything else can move the request to another host",
                    super::render::escape_text(path)
                ),
            });
        }
    }
    found
}

/// A binary naming a path is allowed only inside the install root (covered by the bundle
/// hash); a relative path would run a file of the working directory, usually the repository.
fn binary_violation(field: &str, binary: &str, install_root: Option<&Path>) -> Option<Violation> {
    if !binary.contains('/') && !binary.contains('\\') {
        return None;
    }
    let path = Path::new(binary);
    let inside = path.is_absolute()
        && install_root.is_some_and(|root| {
            match (std::fs::canonicalize(path), std::fs::canonicalize(root)) {
                (Ok(file), Ok(root)) => file.starts_with(root),
                _ => false,
            }
        });
    if inside {
        return None;
    }
    let message = if crate::registry::program::bundle_relative(binary).is_some() {
        format!(
            "{:?} is a program shipped in the capability folder: it runs only from a global install (gsd-lane install <folder> --global), where it is resolved against the installed folder; a project-scope lane never runs a program from the repository under review, so name a command on PATH there",
            super::render::escape_text(binary)
        )
    } else {
        format!(
            "{:?} is a path outside the capability's global install folder; a third-party lane names a command on PATH (e.g. \"acme\"), a program in its own folder as \"./bin/<name>\" (global installs only), or an absolute path inside its global install folder, so a repository file that any pull request can change is never run",
            super::render::escape_text(binary)
        )
    };
    Some(Violation {
        code: Code::TrBinaryPath,
        field: field.into(),
        message,
    })
}

/// The run-path check of an overlay lane: `malformed_lane` when it breaks a rule.
///
/// # Errors
///
/// A [`Refusal`] with [`Reason::MalformedLane`] naming the first violation.
pub fn check_lane(lane: &Lane) -> Result<(), Refusal> {
    if lane.scope == Scope::FirstParty {
        return Ok(());
    }
    // Only a global install folder may hold the program: a project folder is the repository.
    let root = (lane.scope == Scope::Global)
        .then(|| lane.path.parent())
        .flatten();
    match lane_violations(lane, root).into_iter().next() {
        Some(violation) => Err(Refusal::new(
            Reason::MalformedLane,
            format!("third-party lane refused: {violation}"),
        )),
        None => Ok(()),
    }
}

/// The same rules applied to a resolved plan of a third-party lane, for every caller that plans
/// and probes (the run pipeline and the review pre-flight both pass through the egress check).
///
/// `install_roots` are the folders the capability may live in (its global and project install
/// folders); a binary naming a path must be absolute and inside one of them.
///
/// # Errors
///
/// A [`Refusal`] with [`Reason::MalformedLane`] naming the offending field.
pub fn check_plan(
    plan: &gsd_lane_sdk::LanePlan,
    install_roots: &[std::path::PathBuf],
) -> Result<(), Refusal> {
    let mut binaries: Vec<(&str, &str)> = Vec::new();
    if let Some(spawn) = plan.spawn() {
        binaries.push(("reviewer.invoke.binary", spawn.binary.as_str()));
    }
    match &plan.probe {
        gsd_lane_sdk::Probe::CommandExists { binary }
        | gsd_lane_sdk::Probe::CommandCapability { binary, .. } => {
            binaries.push(("reviewer.probe.binary", binary.as_str()));
        }
        gsd_lane_sdk::Probe::HttpReachable { .. } => {
            if plan.spawn().is_some() {
                return Err(Refusal::new(
                    Reason::MalformedLane,
                    "third-party lane refused: TR-SPAWN-HTTP-PROBE reviewer.probe.kind: an http-reachable probe on a spawn lane contacts a destination nothing pins",
                ));
            }
        }
        gsd_lane_sdk::Probe::Unusable => {}
    }
    for (field, binary) in binaries {
        let inside_a_root = install_roots
            .iter()
            .any(|root| binary_violation(field, binary, Some(root)).is_none());
        if !inside_a_root {
            if let Some(violation) = binary_violation(field, binary, None) {
                return Err(Refusal::new(
                    Reason::MalformedLane,
                    format!("third-party lane refused: {violation}"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn codes(manifest: &Value, root: Option<&Path>) -> Vec<Code> {
        violations(DeclaredLane::of_manifest(manifest).as_ref(), root)
            .into_iter()
            .map(|v| v.code)
            .collect()
    }

    #[test]
    fn w14_repo_relative_binary_is_refused_for_third_party_lanes() {
        let relative = json!({"reviewer": {"transport": "spawn", "invoke": {"binary": "./scripts/review.sh"}}});
        assert_eq!(codes(&relative, None), vec![Code::TrBinaryPath]);
        let climbing = json!({"reviewer": {"transport": "spawn", "probe": {"binary": "../x"}, "invoke": {"binary": "acme"}}});
        assert_eq!(codes(&climbing, None), vec![Code::TrBinaryPath]);
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\n").expect("write");
        let inside = dir.path().join("run.sh").display().to_string();
        let pinned = json!({"reviewer": {"transport": "spawn", "invoke": {"binary": inside}}});
        assert!(codes(&pinned, Some(dir.path())).is_empty());
        let elsewhere = tempfile::tempdir().expect("tempdir");
        assert_eq!(
            codes(&pinned, Some(elsewhere.path())),
            vec![Code::TrBinaryPath]
        );
        let bare = json!({"reviewer": {"transport": "spawn", "invoke": {"binary": "acme"}}});
        assert!(codes(&bare, None).is_empty());
    }

    #[test]
    fn w20_handler_must_fit_the_transport() {
        for (handler, transport, ok) in [
            ("openai-compatible", "spawn", false),
            ("openai-compatible", "openai-http", true),
            ("opencode", "openai-http", false),
            ("antigravity", "openai-http", false),
            ("antigravity", "spawn", true),
            ("kimi-code", "openai-http", false),
            ("kimi-code", "spawn", true),
            ("opencode", "spawn", true),
        ] {
            let m = json!({"reviewer": {"handler": handler, "transport": transport}});
            assert_eq!(codes(&m, None).is_empty(), ok, "{handler} on {transport}");
        }
    }

    #[test]
    fn plans_are_held_to_the_same_rules() {
        use gsd_lane_sdk::{
            EmptyOutputPolicy, LanePlan, OutputTarget, PlanShape, Probe, SpawnPlan, Transport,
        };
        let plan = |binary: &str, probe: Probe| LanePlan {
            slug: "a".into(),
            capability_id: "acme".into(),
            transport: Transport::Spawn,
            prompt_path: String::new(),
            review_path: String::new(),
            err_path: String::new(),
            timeout_ms: 1,
            empty_output: EmptyOutputPolicy::StubWithStderr,
            handler: None,
            requires_binaries: vec![],
            probe,
            shape: PlanShape::Spawn(SpawnPlan {
                binary: binary.into(),
                argv: vec![],
                stdin: None,
                output_target: OutputTarget::Stdout,
            }),
        };
        let exists = |b: &str| Probe::CommandExists { binary: b.into() };
        assert!(check_plan(&plan("acme", exists("acme")), &[]).is_ok());
        assert!(check_plan(&plan("./x.sh", exists("acme")), &[]).is_err());
        assert!(check_plan(&plan("acme", exists("scripts/x")), &[]).is_err());
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("run"), "").expect("write");
        let inside = dir.path().join("run").display().to_string();
        assert!(check_plan(&plan(&inside, exists("acme")), &[dir.path().to_path_buf()]).is_ok());
        let http = Probe::HttpReachable {
            host_config_key: "k".into(),
            path: "/".into(),
            timeout_ms: 1,
        };
        assert!(check_plan(&plan("acme", http), &[]).is_err());
    }

    #[test]
    fn spawn_lane_http_probe_and_relative_paths_are_refused() {
        let m = json!({"reviewer": {"transport": "spawn", "probe": {"kind": "http-reachable", "path": "v1"}}});
        assert_eq!(
            codes(&m, None),
            vec![Code::TrSpawnHttpProbe, Code::TrPathAuthority]
        );
        let m = json!({"reviewer": {"transport": "openai-http", "invoke": {"path": "@evil.example/v1"}}});
        assert_eq!(codes(&m, None), vec![Code::TrPathAuthority]);
    }
}
