//! Programs whose name another tool also installs, and how a probe refusal says so.
//!
//! `kimi` is both Kimi Code 2.x (npm `@moonshot-ai/kimi-code`, what the `kimi-code` lane
//! drives) and the legacy Python kimi-cli (PyPI `kimi-cli`). The lane's `command-capability`
//! probe looks for `--output-format <format>`, which only Kimi Code's help prints (kimi-cli
//! 1.51 prints `--output-format [text|stream-json]` and needs `--print` with it, and its text
//! output is wrapped for an 80-column terminal). When that probe says no, the refusal names
//! both tools so the user knows which one to install.
//!
//! `cursor-agent` is being renamed `agent` by Cursor (newer installs ship both names, later
//! ones only `agent`), and `agent` is a name other programs use too. A lane whose program is a
//! renamed one that is not on `PATH` runs the new name instead, but only after a capability
//! probe of it finds what only the vendor's help prints ([`follow_rename`]), the way the
//! kimi-code probe tells Kimi Code from the legacy kimi-cli.

use std::ffi::OsStr;

use gsd_lane_sdk::{LanePlan, PlanShape, Probe};

use super::path_lookup::find_executable;
use crate::refusal::{Reason, Refusal};

/// A program its vendor renamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renamed {
    /// The name lanes declare.
    pub old: &'static str,
    /// The vendor's new name.
    pub new: &'static str,
    /// What only the vendor's program prints in its `--help`.
    pub needle: &'static str,
    /// The vendor's tool, for messages.
    pub tool: &'static str,
}

/// The renamed programs.
pub const RENAMED: &[Renamed] = &[Renamed {
    old: "cursor-agent",
    new: "agent",
    needle: "Start the Cursor Agent",
    tool: "Cursor's CLI (cursor-agent, renamed agent)",
}];

/// Bound on the `--help` of a renamed program's new name (a Node CLI, as kimi's).
const RENAMED_HELP_TIMEOUT_MS: u64 = 20_000;

/// When the plan's program is a renamed one that is not on `PATH` while its new name is, the
/// plan runs the new name and its probe becomes a capability probe of it, so a different
/// program that happens to be called `agent` is refused before it ever gets the prompt. The
/// old name wins when both are installed. Returns the rename applied, if any.
pub fn follow_rename(plan: &mut LanePlan, path_var: Option<&OsStr>) -> Option<&'static Renamed> {
    let PlanShape::Spawn(spawn) = &mut plan.shape else {
        return None;
    };
    let renamed = RENAMED.iter().find(|r| r.old == spawn.binary)?;
    if find_executable(renamed.old, path_var).is_some()
        || find_executable(renamed.new, path_var).is_none()
    {
        return None;
    }
    renamed.new.clone_into(&mut spawn.binary);
    let probes_old = match &plan.probe {
        Probe::CommandExists { binary } => binary == renamed.old,
        Probe::CommandCapability { binary, .. } => binary == renamed.old,
        _ => false,
    };
    if probes_old {
        plan.probe = Probe::CommandCapability {
            binary: renamed.new.to_owned(),
            needle: renamed.needle.to_owned(),
            timeout_ms: RENAMED_HELP_TIMEOUT_MS,
        };
    }
    Some(renamed)
}

/// The program name Kimi Code and the legacy kimi-cli share.
pub const KIMI: &str = "kimi";

/// `refusal`, with the tools named when a capability probe of `kimi` failed.
pub fn explain(plan: &LanePlan, mut refusal: Refusal) -> Refusal {
    let probes_kimi = matches!(
        &plan.probe,
        Probe::CommandCapability { binary, .. } if binary == KIMI
    );
    if probes_kimi && refusal.reason == Reason::ProbeFailed {
        refusal.detail.push_str(
            "; this lane needs Kimi Code 2.x (npm @moonshot-ai/kimi-code); the `kimi` found is \
             another program, such as the legacy Python kimi-cli (PyPI kimi-cli), whose output \
             is formatted for a terminal and is not used",
        );
    }
    explain_renamed(plan, &mut refusal);
    refusal
}

/// A refusal of a renamed program's lane names both names, and, when an `agent` that is not
/// the vendor's was found, says so.
fn explain_renamed(plan: &LanePlan, refusal: &mut Refusal) {
    let probed = match &plan.probe {
        Probe::CommandExists { binary } | Probe::CommandCapability { binary, .. } => binary,
        _ => return,
    };
    for renamed in RENAMED {
        if probed == renamed.old && refusal.reason == Reason::MissingBinary {
            refusal.detail.push_str(&format!(
                " (nor is {}, its newer name); this lane needs {}",
                renamed.new, renamed.tool
            ));
        } else if probed == renamed.new && refusal.reason == Reason::ProbeFailed {
            refusal.detail.push_str(&format!(
                "; this lane needs {}: the `{}` found is another program, and {} is not on PATH",
                renamed.tool, renamed.new, renamed.old
            ));
        }
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use crate::config::ProjectConfig;
    use crate::plan::{resolve_lane, PlanInputs};
    use crate::registry::Registry;

    /// The first-party cursor plan.
    fn cursor_plan() -> LanePlan {
        let registry = Registry::first_party();
        let lane = registry.lane("cursor").expect("cursor is first-party");
        resolve_lane(
            "cursor",
            lane,
            &ProjectConfig::empty(),
            &PlanInputs {
                run_dir: "/run".to_owned(),
                repo_root: "/repo".to_owned(),
                ..PlanInputs::default()
            },
        )
        .expect("cursor plans")
    }

    /// A PATH directory holding executables named `names`.
    fn path_with(names: &[&str]) -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        for name in names {
            let path = dir.path().join(name);
            std::fs::write(&path, "#!/bin/sh\n").expect("write");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        dir
    }

    fn binary(plan: &LanePlan) -> &str {
        plan.spawn().map(|s| s.binary.as_str()).unwrap_or("")
    }

    #[test]
    fn cursor_runs_agent_only_when_cursor_agent_is_missing_and_probes_its_help() {
        let only_new = path_with(&["agent"]);
        let mut plan = cursor_plan();
        let before = plan.spawn().expect("spawn").argv.clone();
        assert!(follow_rename(&mut plan, Some(only_new.path().as_os_str())).is_some());
        assert_eq!(binary(&plan), "agent");
        assert_eq!(plan.spawn().expect("spawn").argv, before, "same arguments");
        assert_eq!(
            plan.probe,
            Probe::CommandCapability {
                binary: "agent".to_owned(),
                needle: "Start the Cursor Agent".to_owned(),
                timeout_ms: RENAMED_HELP_TIMEOUT_MS,
            }
        );

        for names in [&["cursor-agent", "agent"][..], &["cursor-agent"], &[]] {
            let dir = path_with(names);
            let mut plan = cursor_plan();
            assert!(follow_rename(&mut plan, Some(dir.path().as_os_str())).is_none());
            assert_eq!(binary(&plan), "cursor-agent", "{names:?}");
        }
    }

    #[test]
    fn other_lanes_are_untouched() {
        let dir = path_with(&["agent"]);
        let registry = Registry::first_party();
        let lane = registry.lane("claude").expect("claude");
        let mut plan = resolve_lane(
            "claude",
            lane,
            &ProjectConfig::empty(),
            &PlanInputs::default(),
        )
        .expect("plans");
        let before = plan.clone();
        assert!(follow_rename(&mut plan, Some(dir.path().as_os_str())).is_none());
        assert_eq!(plan, before);
    }

    #[test]
    fn refusals_name_both_names() {
        let plan = cursor_plan();
        let missing = explain(
            &plan,
            Refusal::new(Reason::MissingBinary, "cursor-agent is not on PATH"),
        );
        assert!(
            missing.detail.contains("nor is agent"),
            "{}",
            missing.detail
        );
        let dir = path_with(&["agent"]);
        let mut plan = cursor_plan();
        follow_rename(&mut plan, Some(dir.path().as_os_str()));
        let other = explain(
            &plan,
            Refusal::new(Reason::ProbeFailed, "agent --help does not mention …"),
        );
        assert!(
            other
                .detail
                .contains("the `agent` found is another program"),
            "{}",
            other.detail
        );
    }
}
