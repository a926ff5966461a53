//! The registry of live lane process groups, and the whole-group kill.

use crate::sandbox::watchdog::{Pending, Watched};

/// Process groups of lane children still being supervised, and whether [`kill_all_live_groups`]
/// was called (after which every newly started group is killed at once).
static LIVE_GROUPS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());
static SHUTTING_DOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A registration in [`LIVE_GROUPS`] and with the lane watchdog, both removed on drop (after
/// supervision killed the group and reaped its leader).
pub(super) struct LiveGroup {
    group: Option<u32>,
    _watched: Watched,
}

impl LiveGroup {
    /// Registers the group of a child that just started (`group`: its pid, `None` once reaped),
    /// announced to the watchdog by `pending`.
    pub(super) fn register(group: Option<u32>, pending: Pending) -> LiveGroup {
        let watched = pending.started(group);
        if let Some(group) = group {
            if let Ok(mut groups) = LIVE_GROUPS.lock() {
                groups.push(group);
            }
            if SHUTTING_DOWN.load(std::sync::atomic::Ordering::SeqCst) {
                #[cfg(unix)]
                sys::kill_process_group(group);
            }
        }
        LiveGroup {
            group,
            _watched: watched,
        }
    }
}

impl Drop for LiveGroup {
    fn drop(&mut self) {
        if let (Some(group), Ok(mut groups)) = (self.group, LIVE_GROUPS.lock()) {
            if let Some(at) = groups.iter().position(|g| *g == group) {
                groups.swap_remove(at);
            }
        }
    }
}

/// Kills (SIGKILL) the process group of every lane child still being supervised, and every
/// one started from now on (the SIGINT/SIGTERM path of `review`). Each supervising call then
/// sees its child end and returns as after any kill.
pub fn kill_all_live_groups() {
    SHUTTING_DOWN.store(true, std::sync::atomic::Ordering::SeqCst);
    let groups = LIVE_GROUPS.lock().map(|g| g.clone()).unwrap_or_default();
    #[cfg(unix)]
    for group in groups {
        sys::kill_process_group(group);
    }
    #[cfg(not(unix))]
    let _ = groups;
}

/// Kills the child's whole process group (Unix) and the child itself.
pub(super) fn kill_tree(child: &mut tokio::process::Child, group: Option<u32>) {
    #[cfg(unix)]
    if let Some(group) = group {
        sys::kill_process_group(group);
    }
    #[cfg(not(unix))]
    let _ = group;
    // Also the direct child, in case it moved itself to another group. Fails harmlessly when it
    // has already been reaped (tokio never signals a reaped pid).
    let _ = child.start_kill();
}

#[cfg(unix)]
mod sys {
    //! The group kill, through rustix's safe wrapper of `kill(-pgid, SIGKILL)`.

    /// Sends `SIGKILL` to every process in process group `group` (ignoring "no such group").
    ///
    /// `group` > 1 is the child's pid, which became its own process-group id through
    /// `process_group(0)`; 0 (our own group), 1 (which would mean "every process we may signal")
    /// and values beyond `pid_t` are never passed. If the group is already empty the call fails
    /// with ESRCH, which is fine. (POSIX does not reuse a pid while a process group with that id
    /// exists, so signalling after the leader was reaped still targets the lane's group.)
    pub(super) fn kill_process_group(group: u32) {
        let Some(group) = i32::try_from(group)
            .ok()
            .filter(|group| *group > 1)
            .and_then(rustix::process::Pid::from_raw)
        else {
            return;
        };
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
}
