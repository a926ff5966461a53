//! Probes (invocation.md §7): bounded, PATH lookups never spawn anything.

use std::ffi::OsStr;
use std::time::Duration;

use gsd_lane_sdk::{
    Effects, HttpReport, HttpRequest, LanePlan, Probe, SpawnError, SpawnRequest, StdoutSink,
};

use super::path_lookup::find_executable;
use crate::refusal::{Reason, Refusal};

/// Largest help text kept from a `command-capability` probe.
const HELP_BYTES: usize = 1 << 20;

/// Checks `requiresBinaries`, then the declared probe; `Ok` when the lane is available.
///
/// # Errors
///
/// A [`Refusal`] with the probe's reason.
pub fn check(
    plan: &LanePlan,
    path_var: Option<&OsStr>,
    effects: &dyn Effects,
) -> Result<String, Refusal> {
    for binary in &plan.requires_binaries {
        if find_executable(binary, path_var).is_none() {
            return Err(Refusal::new(
                Reason::MissingRequiredBinary,
                format!("{binary} is not on PATH"),
            ));
        }
    }
    match &plan.probe {
        Probe::CommandExists { binary } => match find_executable(binary, path_var) {
            Some(path) => Ok(format!("{binary} found at {}", path.display())),
            None => Err(Refusal::new(
                Reason::MissingBinary,
                format!("{binary} is not on PATH"),
            )),
        },
        Probe::CommandCapability {
            binary,
            needle,
            timeout_ms,
        } => command_capability(binary, needle, *timeout_ms, path_var, effects),
        Probe::HttpReachable {
            path, timeout_ms, ..
        } => http_reachable(plan, path, *timeout_ms, effects),
        Probe::Unusable => Err(Refusal::new(
            Reason::ProbeFailed,
            "the lane declares no usable probe",
        )),
    }
}

/// `<binary> --help` mentions `needle` within `timeout_ms`.
fn command_capability(
    binary: &str,
    needle: &str,
    timeout_ms: u64,
    path_var: Option<&OsStr>,
    effects: &dyn Effects,
) -> Result<String, Refusal> {
    if find_executable(binary, path_var).is_none() {
        return Err(Refusal::new(
            Reason::MissingBinary,
            format!("{binary} is not on PATH"),
        ));
    }
    let report = effects.spawn(&SpawnRequest::new(
        binary.to_owned(),
        vec!["--help".to_owned()],
        StdoutSink::Memory(HELP_BYTES),
        Duration::from_millis(timeout_ms),
    ));
    if report.error == Some(SpawnError::TimedOut) {
        return Err(Refusal::new(
            Reason::ProbeTimeout,
            format!("{binary} --help took longer than {timeout_ms} ms"),
        ));
    }
    let help = format!("{}\n{}", report.stdout, report.stderr);
    if help.contains(needle) {
        Ok(format!("{binary} --help mentions {needle:?}"))
    } else {
        Err(Refusal::new(
            Reason::ProbeFailed,
            format!("{binary} --help does not mention {needle:?}"),
        ))
    }
}

/// `GET <host><path>` on the plan's verified host answers 2xx within `timeout_ms`.
fn http_reachable(
    plan: &LanePlan,
    path: &str,
    timeout_ms: u64,
    effects: &dyn Effects,
) -> Result<String, Refusal> {
    let Some(host) = plan.http().map(|http| http.host.clone()) else {
        return Err(Refusal::new(
            Reason::HostUnreachable,
            "a spawn lane has no verified host to probe",
        ));
    };
    let url = crate::config::join_lane_path(&host, path);
    match effects.http(&HttpRequest::get(
        url.clone(),
        Duration::from_millis(timeout_ms),
    )) {
        HttpReport::Response { status, .. } if (200..300).contains(&status) => {
            Ok(format!("GET {url} answered {status}"))
        }
        HttpReport::Response { status, .. } => Err(Refusal::new(
            Reason::HostUnreachable,
            format!("GET {url} answered {status}"),
        )),
        HttpReport::Failed { error } => Err(Refusal::new(
            Reason::HostUnreachable,
            format!("GET {url}: {error}"),
        )),
    }
}
