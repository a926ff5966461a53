//! The lane watchdog: one helper process per gsd-lane process that ends every lane's process
//! group when gsd-lane ends, however it ends (`SIGKILL` included).
//!
//! # Why one watchdog and not a parent-death signal or a launcher per lane
//!
//! A parent-death signal reaches only the direct child (the lane's grandchildren would survive)
//! and fires when the *thread* that started the child ends, while gsd-lane starts lanes from
//! short-lived threads; setting it also takes `unsafe` code between fork and exec. A supervising
//! launcher per lane works, but costs a second start of gsd-lane for every lane. The watchdog is
//! started once, before the first lane, and learns each lane's process group as it starts. It is
//! a forked copy of gsd-lane when gsd-lane still has a single thread then (every command that
//! starts lanes starts it that early: [`start_early`]), named `gsd-watchdog`; otherwise (a
//! watchdog replaced during a review) gsd-lane executed again.
//!
//! # Protocol (hidden, between gsd-lane and itself)
//!
//! `gsd-lane __lane-watchdog <token>` (or the forked copy, already holding the token), in a
//! process group of its own (a Ctrl-C at the terminal does not reach it), stdout and stderr on
//! `/dev/null`, stdin a pipe whose one write end gsd-lane holds (close-on-exec, so no lane inherits it). gsd-lane writes one line per event:
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
//! # Kept from the lanes
//!
//! A lane runs as the same user, so without care it could reach the pipe through
//! `/proc/<pid>/fd/…` (forging `-<group>` to survive gsd-lane, `+<group>` to have an unrelated
//! group killed) or stop the watchdog and fill the pipe so that gsd-lane blocks. Therefore:
//!
//! - the watchdog makes itself non-dumpable (`PR_SET_DUMPABLE` 0) first thing, and reports that
//!   on its stdout (a pipe) before gsd-lane lets any lane start; gsd-lane makes itself
//!   non-dumpable too when it enables the watchdog. A non-dumpable process's `/proc/<pid>/fd`
//!   entries cannot be opened by another process of the same user (nor can it be traced);
//! - gsd-lane writes the pipe without blocking: when a write would block (the watchdog stopped
//!   reading, its pipe full), that watchdog is killed and a new one is started and told the whole
//!   state, so gsd-lane never waits on it;
//! - under `enforce` on Landlock ABI 6 and later, lanes cannot signal processes outside their
//!   own Landlock domain, gsd-lane and the watchdog included ([`super::landlock`]).
//!
//! This module is gsd-lane's side; [`process`] is the watchdog's own.

#[cfg(target_os = "linux")]
mod fork;
mod process;

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
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

/// What the watchdog writes on its stdout once it is non-dumpable.
const READY: &[u8] = b"r\n";

/// Longest gsd-lane waits for a new watchdog to say it is ready.
const READY_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

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
    process: Process,
    /// The write end of its input (non-blocking).
    input: File,
}

/// How a watchdog was started.
#[derive(Debug)]
enum Process {
    /// gsd-lane executed again as `gsd-lane __lane-watchdog <token>`.
    Executed(Child),
    /// A forked copy of gsd-lane taken while it had a single thread ([`fork`]).
    #[cfg(target_os = "linux")]
    Forked(rustix::process::Pid),
}

impl Process {
    /// Kills the watchdog (it may be dead already) and reaps it.
    fn kill_and_reap(&mut self) {
        match self {
            Process::Executed(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            #[cfg(target_os = "linux")]
            Process::Forked(pid) => {
                let _ = rustix::process::kill_process(*pid, rustix::process::Signal::KILL);
                let _ = rustix::process::waitpid(Some(*pid), rustix::process::WaitOptions::empty());
            }
        }
    }
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
        // The write end of the watchdog's pipe lives here: keep it from same-user processes.
        if sys::make_undumpable().is_err() {
            return;
        }
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
/// Why, when lanes are watched here but no watchdog could be started or told: the lane must
/// then not start.
pub fn announce() -> Result<Pending, super::error::WatchdogError> {
    if !is_enabled() {
        return Ok(Pending { announced: false });
    }
    let mut state = STATE
        .lock()
        .map_err(|_| super::error::WatchdogError::Poisoned)?;
    state.pending += 1;
    match state.send(b"s\n") {
        Ok(()) => Ok(Pending { announced: true }),
        Err(err) => {
            state.pending -= 1;
            Err(super::error::WatchdogError::Start(err))
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
            dead.process.kill_and_reap();
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

/// Starts the watchdog before the command's first lane (called once a command knows it will
/// start a process): at once by a fork while gsd-lane still has a single thread (a fraction of
/// a millisecond), else on a thread of its own, so that its `exec` overlaps with what gsd-lane
/// does before its first lane. Nothing happens when lanes are unwatched or a watchdog already
/// runs; a failure is left for [`announce`] to report.
pub fn start_early() {
    if !is_enabled() {
        return;
    }
    #[cfg(target_os = "linux")]
    if fork::single_threaded() {
        if let Ok(mut state) = STATE.lock() {
            if state.link.is_none() {
                let _ = state.restart();
            }
        }
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

/// Starts the watchdog process: forked while gsd-lane has a single thread ([`fork`]), else
/// executed and waited for (bounded) until it says it is non-dumpable; its input is made
/// non-blocking.
fn start_watchdog() -> io::Result<Link> {
    let (Some(exe), Some(token)) = (EXECUTABLE.get(), TOKEN.get()) else {
        return Err(io::Error::other("no watchdog executable"));
    };
    #[cfg(target_os = "linux")]
    if let Some(forked) = fork::start(token)? {
        return Ok(Link {
            process: Process::Forked(forked.pid),
            input: forked.input,
        });
    }
    let mut command = Command::new(exe);
    command
        .args([WATCHDOG_ARG, token])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn()?;
    let ready = match (child.stdin.take(), child.stdout.take()) {
        (Some(input), Some(output)) => sys::await_ready(output, READY, READY_WAIT)
            .and_then(|()| sys::non_blocking(&input))
            .map(|()| File::from(std::os::fd::OwnedFd::from(input))),
        _ => Err(io::Error::other("the watchdog has no pipes")),
    };
    match ready {
        Ok(input) => Ok(Link {
            process: Process::Executed(child),
            input,
        }),
        Err(err) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(err)
        }
    }
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
    // Before anything else: no other process of this user may open our pipe through /proc.
    if sys::make_undumpable().is_err() {
        return Some(1);
    }
    {
        let mut stdout = io::stdout().lock();
        if stdout
            .write_all(READY)
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return Some(1);
        }
    }
    process::watch(io::stdin().lock(), &token);
    Some(0)
}

#[cfg(unix)]
mod sys {
    //! The pipe and process settings that keep the watchdog's protocol from the lanes.

    use std::io::{self, Read};
    use std::os::fd::AsFd;
    use std::time::{Duration, Instant};

    /// Makes this process non-dumpable (Linux): its `/proc/<pid>/fd` entries can then not be
    /// opened, nor the process traced, by another process of the same user. Elsewhere nothing
    /// is needed (no such `/proc`).
    pub(super) fn make_undumpable() -> io::Result<()> {
        #[cfg(target_os = "linux")]
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)?;
        Ok(())
    }

    /// Makes writes to `pipe` fail with `WouldBlock` instead of waiting.
    pub(super) fn non_blocking(pipe: &impl AsFd) -> io::Result<()> {
        rustix::io::ioctl_fionbio(pipe, true).map_err(io::Error::from)
    }

    /// Reads `output` (made non-blocking) until it has said `ready`, for at most `wait`.
    pub(super) fn await_ready(
        mut output: impl Read + AsFd,
        ready: &[u8],
        wait: Duration,
    ) -> io::Result<()> {
        non_blocking(&output)?;
        let until = Instant::now() + wait;
        let mut seen = Vec::with_capacity(ready.len());
        let mut buf = [0_u8; 8];
        while seen.len() < ready.len() {
            match output.read(&mut buf) {
                Ok(0) => return Err(io::Error::other("the watchdog ended before it was ready")),
                Ok(n) => seen.extend_from_slice(buf.get(..n).unwrap_or_default()),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    if Instant::now() >= until {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the watchdog did not say it was ready",
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        if seen.starts_with(ready) {
            Ok(())
        } else {
            Err(io::Error::other("the watchdog said something unexpected"))
        }
    }
}

#[cfg(not(unix))]
mod sys {
    //! No watchdog on this OS (never enabled here).

    use std::io;
    use std::time::Duration;

    pub(super) fn make_undumpable() -> io::Result<()> {
        Ok(())
    }

    pub(super) fn non_blocking<T>(_pipe: &T) -> io::Result<()> {
        Ok(())
    }

    pub(super) fn await_ready<T>(_output: T, _ready: &[u8], _wait: Duration) -> io::Result<()> {
        Ok(())
    }
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

    #[cfg(unix)]
    #[test]
    fn a_full_pipe_never_blocks_and_the_stopped_watchdog_is_replaced() {
        use std::time::{Duration, Instant};
        // A stand-in watchdog that never reads: its pipe fills as a stopped one's would.
        let mut child = Command::new("sleep")
            .arg("300")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        sys::non_blocking(&input).unwrap();
        let pid = child.id();
        let stopped = Command::new("kill")
            .args(["-STOP", &pid.to_string()])
            .status()
            .unwrap();
        assert!(stopped.success());
        let input = File::from(std::os::fd::OwnedFd::from(input));
        let mut link = Link {
            process: Process::Executed(child),
            input,
        };
        let chunk = [b'x'; 4096];
        let filled = loop {
            if let Err(err) = link.input.write_all(&chunk) {
                break err.kind();
            }
        };
        assert_eq!(filled, io::ErrorKind::WouldBlock);
        let mut state = State {
            link: Some(link),
            pending: 0,
            groups: vec![4242],
        };
        let started = Instant::now();
        // No watchdog executable in a unit-test binary: the replacement fails, at once.
        assert!(state.send(b"s\n").is_err());
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert!(state.link.is_none());
        // The stopped stand-in was killed and reaped.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        assert!(stat.is_err(), "{stat:?}");
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
