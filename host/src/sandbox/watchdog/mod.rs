//! The lane watchdog: one helper process per gsd-lane process that ends every lane's process
//! group when gsd-lane ends, however it ends (`SIGKILL` included).
//!
//! # Why one watchdog and not a parent-death signal or a launcher per lane
//!
//! A parent-death signal reaches only the direct child (the lane's grandchildren would survive)
//! and fires when the *thread* that started the child ends, while gsd-lane starts lanes from
//! short-lived threads; setting it also takes `unsafe` code between fork and exec. A supervising
//! launcher per lane works, but costs a second start of gsd-lane for every lane. The watchdog is
//! started once, before the first lane, and learns each lane's process group as it starts.
//!
//! # Protocol (hidden, between gsd-lane and itself)
//!
//! `gsd-lane __lane-watchdog <token>`, in a process group of its own (a Ctrl-C at the terminal
//! does not reach it), stdout and stderr on `/dev/null`, stdin a pipe whose one write end
//! gsd-lane holds (close-on-exec, so no lane inherits it). gsd-lane writes one line per event:
//!
//! - `s`: a lane is about to start;
//! - `+<group>`: it started, as the leader of process group `<group>`;
//! - `x`: it did not start;
//! - `-<group>`: gsd-lane killed and reaped that group; it is forgotten.
//!
//! End of input means gsd-lane is gone (the kernel closes the pipe when it ends). The watchdog
//! then sends `SIGKILL` to every group still registered and, when a start was announced without
//! its group (gsd-lane died between starting a lane and registering it), to every process whose
//! environment carries [`MARKER`]`=<token>`, which every lane gets. Then it exits. The token is
//! drawn once per gsd-lane process (its pid and 64 random bits), so a process left by another
//! gsd-lane, or named after a reused pid, never matches.
//!
//! A watchdog that died while gsd-lane runs is started again before the next lane, and told the
//! groups still registered.
//!
//! This module is gsd-lane's side; [`process`] is the watchdog's own.

mod process;

use std::ffi::OsStr;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The hidden first argument that turns gsd-lane into the lane watchdog.
pub const WATCHDOG_ARG: &str = "__lane-watchdog";

/// The environment variable every lane gets: this process's watchdog token. The watchdog finds
/// by it a lane that started but was not registered yet when gsd-lane died.
pub const MARKER: &str = "GSD_LANE_WATCHDOG";

/// The executable started as the watchdog, once [`enable`] was called.
static EXECUTABLE: OnceLock<PathBuf> = OnceLock::new();

/// This process's watchdog token (the value of [`MARKER`]), drawn by [`enable`].
static TOKEN: OnceLock<String> = OnceLock::new();

/// Longest token a watchdog accepts.
const MAX_TOKEN: usize = 64;

/// The running watchdog and what it was told.
static STATE: Mutex<State> = Mutex::new(State {
    link: None,
    pending: 0,
    groups: Vec::new(),
});

/// gsd-lane's side of the watchdog.
struct State {
    /// The running watchdog, once started.
    link: Option<Link>,
    /// Starts announced and not yet resolved.
    pending: usize,
    /// Groups registered and not yet forgotten.
    groups: Vec<u32>,
}

/// A started watchdog process.
struct Link {
    /// The process (kept so that a dead one is reaped when it is replaced).
    child: Child,
    /// The write end of its input.
    input: ChildStdin,
}

/// Makes lanes of this process supervised by a watchdog (started with the first lane).
///
/// Called by the `gsd-lane` binary at start-up. A library user (or a unit-test binary) that
/// never calls it starts lanes unwatched, and without confinement.
pub fn enable() {
    if !cfg!(unix) {
        // The watchdog's group kill is Unix-only; elsewhere lanes start unwatched.
        return;
    }
    let exe = if cfg!(target_os = "linux") && Path::new("/proc/self/exe").exists() {
        // Resolved by the kernel in the started child, so it names gsd-lane's own image even if
        // the file on disk was replaced or removed since gsd-lane started.
        Some(PathBuf::from("/proc/self/exe"))
    } else {
        std::env::current_exe().ok()
    };
    if let Some(exe) = exe {
        let _ = TOKEN.set(draw_token());
        let _ = EXECUTABLE.set(exe);
    }
}

/// A token no other process has: this pid and 64 bits from the standard library's randomly
/// seeded hasher keys (uniqueness, not secrecy: a lane reads it in its own environment).
fn draw_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{}-{random:016x}", std::process::id())
}

/// True when `token` could have come from [`draw_token`].
fn is_token(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= MAX_TOKEN
        && token.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// True when lanes of this process are watched.
pub fn is_enabled() -> bool {
    EXECUTABLE.get().is_some()
}

/// A lane start announced to the watchdog ([`announce`]); `x` is sent when it is dropped
/// before [`Pending::started`].
#[derive(Debug)]
pub struct Pending {
    /// True while the start is announced and not yet resolved (never when unwatched).
    announced: bool,
}

/// A lane group registered with the watchdog; forgotten (`-<group>`) when dropped, which must
/// happen only after the group was killed and its leader reaped.
#[derive(Debug)]
pub struct Watched {
    /// The registered group (`None`: unwatched).
    group: Option<u32>,
}

/// Announces that a lane is about to start, starting the watchdog first when none runs.
///
/// # Errors
///
/// A message when lanes are watched here but no watchdog could be started or told: the lane
/// must then not start.
pub fn announce() -> Result<Pending, String> {
    if !is_enabled() {
        return Ok(Pending { announced: false });
    }
    let mut state = STATE
        .lock()
        .map_err(|_| "the lane watchdog's state is poisoned")?;
    state.pending += 1;
    match state.send(b"s\n") {
        Ok(()) => Ok(Pending { announced: true }),
        Err(err) => {
            state.pending -= 1;
            Err(format!("cannot start the lane watchdog: {err}"))
        }
    }
}

impl Pending {
    /// The variable to set in the lane's environment (`None` when unwatched).
    pub fn marker(&self) -> Option<(&'static str, &'static str)> {
        let token = TOKEN.get().filter(|_| self.announced)?;
        Some((MARKER, token.as_str()))
    }

    /// Registers the group the lane leads (`None`: it has no pid any more, nothing to watch).
    pub fn started(mut self, group: Option<u32>) -> Watched {
        if !std::mem::take(&mut self.announced) {
            return Watched { group: None };
        }
        let Ok(mut state) = STATE.lock() else {
            return Watched { group: None };
        };
        state.pending = state.pending.saturating_sub(1);
        let Some(group) = group else {
            let _ = state.send(b"x\n");
            return Watched { group: None };
        };
        state.groups.push(group);
        // A failure here leaves nothing to do: the state replays the group to a new watchdog.
        let _ = state.send(format!("+{group}\n").as_bytes());
        Watched { group: Some(group) }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !std::mem::take(&mut self.announced) {
            return;
        }
        if let Ok(mut state) = STATE.lock() {
            state.pending = state.pending.saturating_sub(1);
            let _ = state.send(b"x\n");
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let (Some(group), Ok(mut state)) = (self.group, STATE.lock()) else {
            return;
        };
        if let Some(at) = state.groups.iter().position(|g| *g == group) {
            state.groups.swap_remove(at);
        }
        let _ = state.send(format!("-{group}\n").as_bytes());
    }
}

impl State {
    /// Writes `line` to the watchdog, starting one (told everything still pending or
    /// registered, which already includes `line`'s event) when none runs or the running one
    /// stopped reading.
    fn send(&mut self, line: &[u8]) -> io::Result<()> {
        if let Some(link) = &mut self.link {
            if link.input.write_all(line).is_ok() {
                return Ok(());
            }
        }
        self.restart()
    }

    /// Replaces the watchdog (a dead one is reaped) with a new one told the whole state.
    fn restart(&mut self) -> io::Result<()> {
        if let Some(mut dead) = self.link.take() {
            let _ = dead.child.kill();
            let _ = dead.child.wait();
        }
        let mut link = start_watchdog()?;
        let mut replay = b"s\n".repeat(self.pending);
        for group in &self.groups {
            replay.extend_from_slice(format!("+{group}\n").as_bytes());
        }
        link.input.write_all(&replay)?;
        self.link = Some(link);
        Ok(())
    }
}

/// Starts the watchdog on a thread of its own, so that its start overlaps with what gsd-lane
/// does before its first lane (called once a command knows it will start a process). Nothing
/// happens when lanes are unwatched or a watchdog already runs; a failure is left for
/// [`announce`] to report.
pub fn start_early() {
    if !is_enabled() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("gsd-lane-watchdog-start".to_owned())
        .spawn(|| {
            if let Ok(mut state) = STATE.lock() {
                if state.link.is_none() {
                    let _ = state.restart();
                }
            }
        });
}

/// Starts the watchdog process.
fn start_watchdog() -> io::Result<Link> {
    let (Some(exe), Some(token)) = (EXECUTABLE.get(), TOKEN.get()) else {
        return Err(io::Error::other("no watchdog executable"));
    };
    let mut command = Command::new(exe);
    command
        .args([WATCHDOG_ARG, token])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn()?;
    let Some(input) = child.stdin.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(io::Error::other("the watchdog has no input pipe"));
    };
    Ok(Link { child, input })
}

/// Runs the watchdog when this process was started as one; `None` otherwise.
///
/// Called first thing by the binary's `main`, before any other parsing.
pub fn run_if_watchdog() -> Option<u8> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != OsStr::new(WATCHDOG_ARG) {
        return None;
    }
    let token = args.next().and_then(|t| t.into_string().ok());
    let Some(token) = token.filter(|t| is_token(t)) else {
        eprintln!("gsd-lane: {WATCHDOG_ARG} is internal: it takes the token gsd-lane draws");
        return Some(2);
    };
    if io::IsTerminal::is_terminal(&io::stdin()) {
        // Typed by hand: it would wait for a protocol nobody writes.
        eprintln!("gsd-lane: {WATCHDOG_ARG} is internal (gsd-lane starts it with a pipe)");
        return Some(2);
    }
    process::watch(io::stdin().lock(), &token);
    Some(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn unwatched_processes_announce_nothing() {
        // Unit-test binaries never call `enable`.
        assert!(!is_enabled());
        let pending = announce().unwrap();
        assert_eq!(pending.marker(), None);
        let watched = pending.started(Some(1234));
        assert_eq!(watched.group, None);
    }

    #[test]
    fn tokens_are_fresh_and_only_drawn_ones_are_accepted() {
        let (one, two) = (draw_token(), draw_token());
        assert_ne!(one, two);
        assert!(is_token(&one) && is_token(&two));
        for bad in ["", "12 34", "1;kill", &"a".repeat(MAX_TOKEN + 1), "GSD"] {
            assert!(!is_token(bad), "{bad:?}");
        }
    }
}
