//! The group guard: what watches a lane's process group after the lane's own process ended.
//!
//! The launcher must end when the lane ends (gsd-lane reads the lane's exit status from it), but
//! a grandchild may still run in the group, holding the lane's output open. gsd-lane kills the
//! group once that output ends or at the deadline; if gsd-lane itself dies in between, nobody
//! would. So when the launcher sees processes the lane started still running (it adopts the
//! lane's orphans, so one `waitid` tells), it starts a guard (gsd-lane re-executed as
//! `gsd-lane __lane-guard <gsd-lane pid> <its start time> <group>`, standard streams on
//! `/dev/null`, in the same group) and ends. The guard polls gsd-lane's liveness and
//! kills the group when gsd-lane is gone; gsd-lane's own kill of the group ends the guard too.
//!
//! gsd-lane is identified by its pid *and* its start time (`/proc/<pid>/stat`), so a reused pid
//! is not mistaken for it; a zombie counts as gone.

use std::ffi::OsString;
use std::process::{Command, Stdio};

use super::protocol::{LAUNCH_FAILED, PARENT_POLL};

/// The hidden first argument that turns gsd-lane into a group guard.
pub const GUARD_ARG: &str = "__lane-guard";

/// The start time of process `pid` in clock ticks since boot (`0` where it cannot be read:
/// another OS, or no `/proc`).
pub fn start_time(pid: u32) -> u64 {
    stat_fields(pid)
        .and_then(|fields| fields.get(19).and_then(|t| t.parse().ok()))
        .unwrap_or(0)
}

/// The fields of `/proc/<pid>/stat` after the command name (state first).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// True while process `pid`, started at `start` ([`start_time`]), still runs.
#[cfg(unix)]
fn is_alive(pid: u32, start: u64) -> bool {
    if std::path::Path::new("/proc/self/stat").exists() {
        return match stat_fields(pid) {
            None => false,
            Some(fields) => {
                let zombie = fields.first().is_some_and(|state| state == "Z");
                let same = fields.get(19).and_then(|t| t.parse::<u64>().ok()) == Some(start);
                same && !zombie
            }
        };
    }
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    rustix::process::test_kill_process(pid).is_ok()
}

/// Makes this process the reaper of its orphaned descendants (Linux), so that
/// [`lane_left_processes`] answers with one `waitid` instead of a scan of `/proc`. Returns
/// whether it took effect.
#[cfg(target_os = "linux")]
pub fn adopt_orphans() -> bool {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
}

/// Makes this process the reaper of its orphaned descendants: not available here.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn adopt_orphans() -> bool {
    false
}

/// True when something the lane started may still run, after the lane itself was reaped.
///
/// When this launcher adopts orphans ([`adopt_orphans`] returned true), every living descendant
/// of the lane is a child of a living descendant or of this launcher, so "any child left" is the
/// answer: `waitid` reaps the children that already ended and says whether any other remains.
/// Otherwise, or when `waitid` fails, the group is scanned ([`group_has_others`]).
#[cfg(unix)]
pub fn lane_left_processes(adopted: bool) -> bool {
    use rustix::process::{waitid, WaitId, WaitIdOptions};

    if !adopted {
        return group_has_others();
    }
    loop {
        match waitid(WaitId::All, WaitIdOptions::EXITED | WaitIdOptions::NOHANG) {
            Ok(Some(_)) => {} // an orphan that had ended, now reaped
            Ok(None) => return true,
            Err(rustix::io::Errno::CHILD) => return false,
            Err(_) => return group_has_others(),
        }
    }
}

/// True when a process other than this one is in this process's group (Linux: a scan of
/// `/proc`; elsewhere always true, which only costs a guard that is not needed).
#[cfg(unix)]
fn group_has_others() -> bool {
    let Ok(listing) = std::fs::read_dir("/proc") else {
        return true;
    };
    let me = std::process::id();
    let group = rustix::process::getpgrp().as_raw_nonzero().to_string();
    listing
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .any(|pid| {
            stat_fields(pid).is_some_and(|fields| fields.get(2).is_some_and(|g| *g == group))
        })
}

/// Starts the guard for this process's group (whose leader is this launcher), watching
/// `parent` started at `parent_start`. Failing to start it is reported and otherwise ignored:
/// gsd-lane still kills the group itself unless it is killed first.
#[cfg(unix)]
pub fn hand_over(parent: u32, parent_start: u64) {
    let exe = if std::path::Path::new("/proc/self/exe").exists() {
        std::path::PathBuf::from("/proc/self/exe")
    } else {
        match std::env::current_exe() {
            Ok(exe) => exe,
            Err(_) => return,
        }
    };
    let group = std::process::id().to_string();
    let started = Command::new(exe)
        .args([
            GUARD_ARG,
            &parent.to_string(),
            &parent_start.to_string(),
            &group,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Err(err) = started {
        eprintln!("gsd-lane sandbox: cannot start the group guard: {err}");
    }
}

/// The guard's main loop; returns only on bad arguments or when it is not in the group it was
/// started for (it never kills a group it was not meant for).
#[cfg(unix)]
pub fn run(mut args: impl Iterator<Item = OsString>) -> u8 {
    use rustix::process::{getpgrp, kill_current_process_group, Signal};

    let mut number = || -> Option<u64> { args.next()?.to_str()?.parse().ok() };
    let (Some(parent), Some(start), Some(group)) = (number(), number(), number()) else {
        return LAUNCH_FAILED;
    };
    let Ok(parent) = u32::try_from(parent) else {
        return LAUNCH_FAILED;
    };
    if u64::from(getpgrp().as_raw_nonzero().get().unsigned_abs()) != group || group <= 1 {
        return LAUNCH_FAILED;
    }
    loop {
        if !is_alive(parent, start) {
            let _ = kill_current_process_group(Signal::KILL);
            return LAUNCH_FAILED;
        }
        std::thread::sleep(PARENT_POLL);
    }
}

#[cfg(not(unix))]
pub fn run(_args: impl Iterator<Item = OsString>) -> u8 {
    LAUNCH_FAILED
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_under_its_start_time_only() {
        let me = std::process::id();
        let start = start_time(me);
        assert!(is_alive(me, start));
        if start != 0 {
            assert!(!is_alive(me, start + 1));
        }
    }
}
