//! Bounded process execution: argv only, streamed output, whole-tree kill.
//!
//! This is the one place that starts lane processes (invocation.md §8; trust.md §7.1, §7.7,
//! §7.9). [`spawn_confined`] resolves the program itself ([`find_executable`], against the *child's*
//! `PATH`), starts it from an argument vector (never a shell), and supervises it until the end of
//! its output or the deadline.
//!
//! # Guarantees
//!
//! - **No shell.** The resolved path and `args` go to the OS as an argv array; an argument with an
//!   interior NUL byte is a spawn failure (`EINVAL`), never a panic.
//! - **Own process group** (Unix, `process_group(0)`); every kill is `SIGKILL` to the whole group,
//!   so grandchildren die with the child. After a normal end, whatever is still in the group is
//!   killed too, so nothing started by the lane outlives the call.
//! - **stdin** is a file opened by us and handed to the child (the OS streams it), or `/dev/null`
//!   (empty and closed, never the terminal). A missing stdin file gives empty stdin.
//! - **Streamed, bounded output.** Pipes are read with fixed 64 KiB buffers; bytes are decoded as
//!   lossy UTF-8 incrementally (a character split across reads decodes correctly, invalid bytes
//!   become U+FFFD exactly as [`String::from_utf8_lossy`] would on the whole stream) and written to
//!   the sink at once. Caps count *decoded* bytes written to the sink and are cut on a character
//!   boundary; exceeding one kills the group and records `ENOBUFS`. Memory use does not depend on
//!   how much the child prints (beyond an in-memory sink's own cap).
//! - **Deadline.** `request.timeout` bounds the whole call, from the start to the end of output.
//!   A child that exits while a grandchild still holds its stdout or stderr is read until EOF or
//!   the deadline; at the deadline the group is killed and the result is `ETIMEDOUT`.
//! - **Escaped processes cannot hang us.** After any kill we wait at most [`KILL_GRACE`] for the
//!   pipes to reach EOF and the child to be reaped. A process that left the group (`setsid`) and
//!   still holds a pipe is then abandoned: we close our ends and return. The call therefore returns
//!   by `timeout + KILL_GRACE` (plus scheduling noise) whatever the child does. A child that
//!   is not reaped within the grace (stuck in the kernel after `SIGKILL`) is left to tokio's
//!   background reaper.
//! - **Sidecar.** When `stderr_path` is set, that file is always written (created before anything
//!   else, even when the program cannot be found); when the report carries an error, the line
//!   `\n[spawn error: <CODE>]\n` is appended after the captured stderr (invocation.md §8).
//!
//! Output files (stdout file, sidecar) are created with mode 0600 and must be regular files; the
//! stdin file must be a regular file. These are opened with `O_NONBLOCK` so that a FIFO put in
//! their place cannot block the call (the flag has no effect on regular files); a non-regular file
//! is a spawn failure with `EINVAL` (or with the error of opening it, e.g. `ENXIO` for a FIFO that
//! nobody reads).
//!
//! Windows: the program is resolved through `PATHEXT` and the full path is spawned, letting the
//! standard library apply its batch-file escaping (trust.md §7.4); an argument it cannot pass
//! safely (`InvalidInput`) is a spawn failure with `EINVAL`. Only the direct child is killed there
//! (no Job Object yet).
//!
//! Implementation: each call builds a small current-thread tokio runtime and drives one `select!`
//! loop over the two pipes, the child's exit and the timers. Called from inside a tokio runtime,
//! the work moves to a scoped helper thread instead of panicking.

mod decode;
mod env;
mod errors;
mod files;
mod groups;
mod sink;
mod start;
mod supervise;

use std::io::Write;
use std::time::{Duration, Instant};

use gsd_lane_sdk::{SpawnError, SpawnReport, SpawnRequest};

pub use self::env::{minimal_env_from_current, ChildEnv};
use self::errors::{spawn_error_from_io, spawn_error_line};
use self::files::open_output;
pub use self::groups::kill_all_live_groups;
use self::sink::{into_string, Sink, Target};
use self::start::prepare_and_supervise;
pub use crate::sandbox::confine::Confinement;

/// Default cap on stdout streamed to a file: 2 GiB.
///
/// Deliberately above the spec's 64 MiB capture cap: the review file is on disk, not in memory,
/// and a 1 GiB review must still be handled.
pub const DEFAULT_STDOUT_FILE_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// Default cap on stderr (sidecar file or memory): 64 MiB (trust.md §7.7).
pub const DEFAULT_STDERR_BYTES: u64 = 64 * 1024 * 1024;

/// How long, after killing the process group, we still wait for EOF and for the child to be
/// reaped before abandoning the pipes (see the module docs).
pub const KILL_GRACE: Duration = Duration::from_secs(1);

/// Size of each pipe read buffer.
const COPY_BUF: usize = 64 * 1024;

/// Longest deadline honoured; longer timeouts are clamped (keeps instant arithmetic and the timer
/// wheel in range).
const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// Output caps of one spawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpawnLimits {
    /// Cap on stdout streamed to a [`StdoutSink::File`] (an in-memory sink has its own cap).
    pub stdout_file_bytes: u64,
    /// Cap on stderr, whether streamed to the sidecar or kept in memory.
    pub stderr_bytes: u64,
}

impl Default for SpawnLimits {
    fn default() -> Self {
        SpawnLimits {
            stdout_file_bytes: DEFAULT_STDOUT_FILE_BYTES,
            stderr_bytes: DEFAULT_STDERR_BYTES,
        }
    }
}

/// Runs `request` under its bound and the given caps; never through a shell, never panics.
///
/// See the module documentation for the exact guarantees. The report's `exit_code` is the exit
/// status when the child exited by itself (even if the call later timed out waiting for a
/// grandchild's output), and `None` when it was killed by a signal or never started.
#[cfg(test)]
pub fn spawn_bounded(request: &SpawnRequest, env: &ChildEnv, limits: &SpawnLimits) -> SpawnReport {
    spawn_confined(request, env, limits, &Confinement::default())
}

/// [`spawn_bounded`] under `confinement`: the child's process group is registered with the lane
/// watchdog (`sandbox::watchdog`) whenever the binary enabled it, which ends the group when
/// gsd-lane dies; when `confinement` asks for the read-only posture, the child is started from
/// a thread that applied it to itself first (`sandbox::confine`), so the lane inherits it.
///
/// A confinement that cannot be applied (no watchdog in this process) is a spawn failure
/// (`Refused`), never an unconfined run.
pub fn spawn_confined(
    request: &SpawnRequest,
    env: &ChildEnv,
    limits: &SpawnLimits,
    confinement: &Confinement,
) -> SpawnReport {
    let start = Instant::now();
    let run = |start| run(request, env, limits, confinement, start);
    if tokio::runtime::Handle::try_current().is_err() {
        return run(start);
    }
    // Blocking on a runtime from inside another one would panic: use a helper thread.
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("gsd-lane-spawn".to_string())
            .spawn_scoped(scope, || run(start));
        match spawned {
            // A panic in the helper is a gsd-lane bug, not an OS error: it goes on unwinding
            // into the lane's thread, which reports it as an internal error naming the lane.
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|payload| std::panic::resume_unwind(payload)),
            Err(err) => failed_report(request, spawn_error_from_io(&err), start),
        }
    })
}

/// A report for a call that failed before any supervision, with the sidecar written.
fn failed_report(request: &SpawnRequest, error: SpawnError, start: Instant) -> SpawnReport {
    if let Some(path) = &request.stderr_path {
        if let Ok(mut file) = open_output(path) {
            // Best effort: nothing more can be done when the sidecar cannot be written.
            let _ = file.write_all(spawn_error_line(&error).as_bytes());
        }
    }
    let mut report = SpawnReport::failed(error);
    report.elapsed = start.elapsed();
    report
}

/// The whole call on the current thread.
fn run(
    request: &SpawnRequest,
    env: &ChildEnv,
    limits: &SpawnLimits,
    confinement: &Confinement,
    start: Instant,
) -> SpawnReport {
    let mut report = SpawnReport::default();

    // The sidecar first, so that it exists whatever happens next.
    let mut stderr_sink = match &request.stderr_path {
        Some(path) => match open_output(path) {
            Ok(file) => Sink::new(Target::File(file), limits.stderr_bytes),
            Err(err) => {
                report.error = Some(spawn_error_from_io(&err));
                report.elapsed = start.elapsed();
                return report;
            }
        },
        None => Sink::new(Target::Memory(Vec::new()), limits.stderr_bytes),
    };

    let mut stdout_sink = None;
    let outcome = prepare_and_supervise(
        request,
        env,
        limits,
        confinement,
        start,
        &mut stdout_sink,
        &mut stderr_sink,
    );
    match outcome {
        Ok(supervised) => {
            report.exit_code = supervised.status.and_then(|s| s.code());
            report.error = supervised.error;
            report.elapsed = supervised.elapsed;
        }
        Err(error) => {
            report.error = Some(error);
            report.elapsed = start.elapsed();
        }
    }

    if let Some(sink) = stdout_sink {
        report.stdout_bytes = sink.written;
        if let Target::Memory(bytes) = sink.target {
            report.stdout = into_string(bytes);
        }
    }
    match stderr_sink.target {
        Target::Memory(bytes) => report.stderr = into_string(bytes),
        Target::File(mut file) => {
            if let Some(error) = &report.error {
                // Best effort: a sidecar that cannot be appended to (disk full) has already
                // failed in a way the report shows.
                let _ = file.write_all(spawn_error_line(error).as_bytes());
            }
        }
    }
    report
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
