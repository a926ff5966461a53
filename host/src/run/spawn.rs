//! Bounded process execution: argv only, streamed output, whole-tree kill.
//!
//! This is the one place that starts lane processes (invocation.md §8; trust.md §7.1, §7.7,
//! §7.9). [`spawn_bounded`] resolves the program itself ([`find_executable`], against the *child's*
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

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use gsd_lane_sdk::{SpawnError, SpawnReport, SpawnRequest, StdoutSink};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::path_lookup::find_executable;
use crate::sandbox::launcher;
pub use crate::sandbox::launcher::Confinement;

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

/// The sidecar line appended when the report carries an error.
fn spawn_error_line(error: &SpawnError) -> String {
    format!("\n[spawn error: {}]\n", error.code())
}

/// The environment a child starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEnv {
    /// The child inherits this process's whole environment (first-party lanes).
    Inherit,
    /// The environment is cleared and only these variables are set (third-party lanes,
    /// trust.md §7.9). `PATH` among them is also the `PATH` the program is resolved against.
    Minimal {
        /// Name and value of each variable the child gets.
        vars: Vec<(String, String)>,
    },
}

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

/// The minimal environment of trust.md §7.9, taken from this process's environment.
///
/// Kept: `PATH`, `HOME`, `USERPROFILE`, the locale (`LANG`, `LANGUAGE`, `LC_ALL` and every other
/// `LC_*`), the temp-dir variables (`TMPDIR`, `TMP`, `TEMP`), and on Windows the OS plumbing a
/// process needs to start at all (`SystemRoot`, `ComSpec`, `PATHEXT`). Everything else, notably
/// every credential, is dropped. Variables whose name or value is not valid Unicode are dropped.
/// Sorted by name. A disclosed, signature-bound allow-list (trust.md §7.9) is for the caller to
/// append.
pub fn minimal_env_from_current() -> ChildEnv {
    let mut vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(name, value)| {
            let name = name.into_string().ok()?;
            if !is_minimal_var(&name) {
                return None;
            }
            Some((name, value.into_string().ok()?))
        })
        .collect();
    vars.sort();
    ChildEnv::Minimal { vars }
}

/// True for the names [`minimal_env_from_current`] keeps.
fn is_minimal_var(name: &str) -> bool {
    #[cfg(windows)]
    let upper = name.to_ascii_uppercase();
    #[cfg(windows)]
    let name = upper.as_str();
    let fixed = matches!(
        name,
        "PATH"
            | "HOME"
            | "USERPROFILE"
            | "LANG"
            | "LANGUAGE"
            | "LC_ALL"
            | "TMPDIR"
            | "TMP"
            | "TEMP"
    );
    let locale = name.strip_prefix("LC_").is_some_and(|rest| {
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
    });
    #[cfg(windows)]
    let fixed = fixed || matches!(name, "SYSTEMROOT" | "COMSPEC" | "PATHEXT");
    fixed || locale
}

/// The `PATH` the child will see, which is the one its program is resolved against.
fn child_path_var(env: &ChildEnv) -> Option<OsString> {
    match env {
        ChildEnv::Inherit => std::env::var_os("PATH"),
        ChildEnv::Minimal { vars } => vars
            .iter()
            .rev() // the last assignment wins, as when the variables are applied in order
            .find(|(name, _)| {
                if cfg!(windows) {
                    name.eq_ignore_ascii_case("PATH")
                } else {
                    name == "PATH"
                }
            })
            .map(|(_, value)| OsString::from(value)),
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

/// [`spawn_bounded`] under `confinement`: the child is started through the lane launcher
/// (`sandbox::launcher`) whenever the binary enabled it, which ends the child's process group when
/// gsd-lane dies and applies the read-only posture when `confinement` asks for it.
///
/// A confinement that cannot be applied (no launcher in this process) is a spawn failure
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
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                failed_report(request, SpawnError::Os("EFAULT".to_string()), start)
            }),
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
    SpawnReport {
        error: Some(error),
        elapsed: start.elapsed(),
        ..SpawnReport::default()
    }
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

/// What supervision found.
struct Supervised {
    /// The child's exit status, when it was reaped.
    status: Option<ExitStatus>,
    /// The first error (timeout, overflow, sink failure).
    error: Option<SpawnError>,
    /// Time from the start of the call to the end of output.
    elapsed: Duration,
}

/// Resolves the program, opens stdin and stdout, starts the child and supervises it.
///
/// `stdout_sink` is filled in once the stdout target exists, so that the caller can report what
/// was written even when a later step fails.
fn prepare_and_supervise(
    request: &SpawnRequest,
    env: &ChildEnv,
    limits: &SpawnLimits,
    confinement: &Confinement,
    start: Instant,
    stdout_sink: &mut Option<Sink>,
    stderr_sink: &mut Sink,
) -> Result<Supervised, SpawnError> {
    let path_var = child_path_var(env);
    let program =
        find_executable(&request.program, path_var.as_deref()).ok_or(SpawnError::NotFound)?;
    if !is_executable(&program) {
        // Checked here because a launcher's failure to execute shows only as its exit status.
        return Err(SpawnError::PermissionDenied);
    }
    let (launched, argv) = launcher::command_line(&program, &request.args, confinement)
        .map_err(SpawnError::Refused)?;

    let stdin = match &request.stdin {
        Some(path) => match open_input(path).map_err(|e| spawn_error_from_io(&e))? {
            Some(file) => Stdio::from(file),
            None => Stdio::null(),
        },
        None => Stdio::null(),
    };

    let stdout = match &request.stdout {
        StdoutSink::File(path) => {
            let file = open_output(path).map_err(|e| spawn_error_from_io(&e))?;
            *stdout_sink = Some(Sink::new(Target::File(file), limits.stdout_file_bytes));
            Stdio::piped()
        }
        StdoutSink::Memory(max) => {
            let cap = u64::try_from(*max).unwrap_or(u64::MAX);
            *stdout_sink = Some(Sink::new(Target::Memory(Vec::new()), cap));
            Stdio::piped()
        }
        StdoutSink::Discard => Stdio::null(),
    };

    let timeout = request.timeout.min(MAX_TIMEOUT);
    let deadline = start.checked_add(timeout).unwrap_or(start);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| spawn_error_from_io(&e))?;

    runtime.block_on(async {
        let mut command = tokio::process::Command::new(&launched);
        command
            .args(&argv)
            .stdin(stdin)
            .stdout(stdout)
            .stderr(Stdio::piped());
        if let ChildEnv::Minimal { vars } = env {
            command.env_clear();
            command.envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|e| spawn_error_from_io(&e))?;
        drop(command); // closes our copy of the stdin file
        let live = LiveGroup::register(child.id());
        let pipes = Pipes {
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
        };
        let supervised = supervise(
            child,
            pipes,
            stdout_sink.as_mut(),
            stderr_sink,
            start,
            deadline,
        )
        .await;
        drop(live);
        Ok(supervised)
    })
}

/// Process groups of lane children still being supervised, and whether [`kill_all_live_groups`]
/// was called (after which every newly started group is killed at once).
static LIVE_GROUPS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());
static SHUTTING_DOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A registration in [`LIVE_GROUPS`], removed on drop.
struct LiveGroup(Option<u32>);

impl LiveGroup {
    fn register(group: Option<u32>) -> LiveGroup {
        if let Some(group) = group {
            if let Ok(mut groups) = LIVE_GROUPS.lock() {
                groups.push(group);
            }
            if SHUTTING_DOWN.load(std::sync::atomic::Ordering::SeqCst) {
                #[cfg(unix)]
                sys::kill_process_group(group);
            }
        }
        LiveGroup(group)
    }
}

impl Drop for LiveGroup {
    fn drop(&mut self) {
        if let (Some(group), Ok(mut groups)) = (self.0, LIVE_GROUPS.lock()) {
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

/// The child's output pipes still being read.
struct Pipes {
    /// Stdout, when piped and not yet at EOF.
    stdout: Option<tokio::process::ChildStdout>,
    /// Stderr, until EOF.
    stderr: Option<tokio::process::ChildStderr>,
}

/// Reads both pipes into their sinks until EOF, the deadline or an overflow, and reaps the child.
async fn supervise(
    mut child: tokio::process::Child,
    mut pipes: Pipes,
    mut stdout_sink: Option<&mut Sink>,
    stderr_sink: &mut Sink,
    start: Instant,
    deadline: Instant,
) -> Supervised {
    let group = child.id();
    let deadline = tokio::time::Instant::from_std(deadline);
    let mut out_buf = vec![0_u8; COPY_BUF];
    let mut err_buf = vec![0_u8; COPY_BUF];
    let mut status: Option<ExitStatus> = None;
    let mut reaped = false;
    let mut error: Option<SpawnError> = None;
    let mut killed_at: Option<tokio::time::Instant> = None;
    let mut end_of_output: Option<Instant> = None;

    loop {
        if reaped && pipes.stdout.is_none() && pipes.stderr.is_none() {
            break;
        }
        let grace_end = killed_at.map_or(deadline, |at| at + KILL_GRACE);
        tokio::select! {
            read = read_pipe(&mut pipes.stdout, &mut out_buf), if pipes.stdout.is_some() => {
                let outcome = match stdout_sink.as_deref_mut() {
                    Some(sink) => feed(sink, read, &out_buf),
                    None => Feed::Eof, // cannot happen: stdout is only piped with a sink
                };
                if handle_feed(outcome, &mut pipes.stdout, &mut error) {
                    kill_tree(&mut child, group);
                    killed_at.get_or_insert_with(tokio::time::Instant::now);
                }
            }
            read = read_pipe(&mut pipes.stderr, &mut err_buf), if pipes.stderr.is_some() => {
                let outcome = feed(stderr_sink, read, &err_buf);
                if handle_feed(outcome, &mut pipes.stderr, &mut error) {
                    kill_tree(&mut child, group);
                    killed_at.get_or_insert_with(tokio::time::Instant::now);
                }
            }
            waited = child.wait(), if !reaped => {
                reaped = true;
                status = waited.ok();
            }
            () = tokio::time::sleep_until(deadline), if killed_at.is_none() => {
                error.get_or_insert(SpawnError::TimedOut);
                kill_tree(&mut child, group);
                killed_at = Some(tokio::time::Instant::now());
            }
            () = tokio::time::sleep_until(grace_end), if killed_at.is_some() => {
                // Something outside the group still holds a pipe, or the child is not reaped:
                // stop here (module docs, "Escaped processes").
                break;
            }
        }
        if end_of_output.is_none() && pipes.stdout.is_none() && pipes.stderr.is_none() {
            end_of_output = Some(Instant::now());
        }
    }
    let elapsed = end_of_output
        .unwrap_or_else(Instant::now)
        .saturating_duration_since(start);

    if killed_at.is_none() {
        // Normal end: nothing the lane started may outlive it.
        kill_tree(&mut child, group);
    }
    if !reaped {
        status = child.try_wait().ok().flatten();
    }
    // Pending bytes of a character cut off when the pipes were abandoned.
    if pipes.stdout.take().is_some() {
        if let Some(sink) = stdout_sink {
            record_failure(sink.finish(), &mut error);
        }
    }
    if pipes.stderr.take().is_some() {
        record_failure(stderr_sink.finish(), &mut error);
    }
    Supervised {
        status,
        error,
        elapsed,
    }
}

/// One read from a pipe that is known to be open (the `select!` guard checks it).
async fn read_pipe<R: AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match pipe {
        Some(reader) => reader.read(buf).await,
        None => Ok(0),
    }
}

/// What one read did to its sink.
enum Feed {
    /// Bytes were stored; keep reading.
    More,
    /// The pipe reached EOF (or failed to read); the sink is finished.
    Eof,
    /// The sink refused more (cap or write error); stop reading and kill.
    Stop(SinkFailure),
}

/// Applies one read result to `sink`.
fn feed(sink: &mut Sink, read: io::Result<usize>, buf: &[u8]) -> Feed {
    match read {
        Ok(0) | Err(_) => match sink.finish() {
            Ok(()) => Feed::Eof,
            Err(failure) => Feed::Stop(failure),
        },
        Ok(n) => match sink.push(buf.get(..n).unwrap_or(buf)) {
            Ok(()) => Feed::More,
            Err(failure) => Feed::Stop(failure),
        },
    }
}

/// Closes `pipe` when the feed ended, records a failure; returns true when the tree must die.
fn handle_feed<R>(outcome: Feed, pipe: &mut Option<R>, error: &mut Option<SpawnError>) -> bool {
    match outcome {
        Feed::More => false,
        Feed::Eof => {
            *pipe = None;
            false
        }
        Feed::Stop(failure) => {
            *pipe = None;
            record_failure(Err(failure), error);
            true
        }
    }
}

/// Records a sink failure as the report's error unless an earlier error is already there.
fn record_failure(result: Result<(), SinkFailure>, error: &mut Option<SpawnError>) {
    if let Err(failure) = result {
        error.get_or_insert(match failure {
            SinkFailure::Full => SpawnError::OutputTooLarge,
            SinkFailure::Io(err) => spawn_error_from_io(&err),
        });
    }
}

/// Kills the child's whole process group (Unix) and the child itself.
fn kill_tree(child: &mut tokio::process::Child, group: Option<u32>) {
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

/// Why a sink refused more bytes.
#[derive(Debug)]
enum SinkFailure {
    /// The cap was reached; what fit (up to a character boundary) was written.
    Full,
    /// Writing failed.
    Io(io::Error),
}

/// Where decoded bytes go.
enum Target {
    /// A regular file, written as bytes arrive.
    File(File),
    /// Memory, bounded by the sink's cap.
    Memory(Vec<u8>),
}

/// A capped, incrementally decoding output sink.
struct Sink {
    /// The destination.
    target: Target,
    /// Decoded bytes written so far.
    written: u64,
    /// Most decoded bytes accepted.
    cap: u64,
    /// Incremental lossy decoder.
    decoder: Utf8Stream,
    /// Reused output buffer of the decoder.
    out: Vec<u8>,
    /// Set once the sink stopped (finished, full or failed); later input is ignored.
    closed: bool,
}

impl Sink {
    /// A sink writing to `target`, accepting at most `cap` decoded bytes.
    fn new(target: Target, cap: u64) -> Self {
        Sink {
            target,
            written: 0,
            cap,
            decoder: Utf8Stream::default(),
            out: Vec::new(),
            closed: false,
        }
    }

    /// Decodes and stores one chunk.
    fn push(&mut self, bytes: &[u8]) -> Result<(), SinkFailure> {
        if self.closed {
            return Ok(());
        }
        let mut out = std::mem::take(&mut self.out);
        self.decoder.decode(bytes, &mut out);
        let result = self.emit(&out);
        self.out = out;
        if result.is_err() {
            self.closed = true;
        }
        result
    }

    /// Flushes an incomplete trailing character (as U+FFFD) and closes the sink.
    fn finish(&mut self) -> Result<(), SinkFailure> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let mut out = std::mem::take(&mut self.out);
        self.decoder.finish(&mut out);
        let result = self.emit(&out);
        self.out = out;
        result
    }

    /// Writes decoded bytes, cutting at the cap on a character boundary.
    fn emit(&mut self, decoded: &[u8]) -> Result<(), SinkFailure> {
        let room = self.cap.saturating_sub(self.written);
        let fits = u64::try_from(decoded.len()).is_ok_and(|len| len <= room);
        let take = if fits {
            decoded.len()
        } else {
            char_floor(decoded, usize::try_from(room).unwrap_or(usize::MAX))
        };
        let part = decoded.get(..take).unwrap_or(decoded);
        match &mut self.target {
            Target::File(file) => file.write_all(part).map_err(SinkFailure::Io)?,
            Target::Memory(bytes) => bytes.extend_from_slice(part),
        }
        self.written = self
            .written
            .saturating_add(u64::try_from(part.len()).unwrap_or(u64::MAX));
        if fits {
            Ok(())
        } else {
            Err(SinkFailure::Full)
        }
    }
}

/// The largest index `<= limit` (and `<= text.len()`) that is a character boundary of the valid
/// UTF-8 `text`.
fn char_floor(text: &[u8], limit: usize) -> usize {
    let mut at = limit.min(text.len());
    while at > 0
        && text
            .get(at)
            .is_some_and(|b| (b & 0b1100_0000) == 0b1000_0000)
    {
        at -= 1;
    }
    at
}

/// Incremental lossy UTF-8 decoding with the exact output of [`String::from_utf8_lossy`] on the
/// concatenated input.
#[derive(Default)]
struct Utf8Stream {
    /// The incomplete character at the end of the previous chunk (at most 3 bytes), or, while
    /// decoding, that prefix followed by the current chunk (bounded by the read buffer size).
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// Decodes `input` after any pending partial character into `out` (cleared first).
    fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.clear();
        if self.pending.is_empty() {
            let tail = decode_lossy(input, out);
            self.pending.extend_from_slice(tail);
            return;
        }
        self.pending.extend_from_slice(input);
        let mut data = std::mem::take(&mut self.pending);
        let keep = decode_lossy(&data, out).len();
        let from = data.len().saturating_sub(keep);
        data.copy_within(from.., 0);
        data.truncate(keep);
        self.pending = data;
    }

    /// Ends the stream: an incomplete trailing character becomes one U+FFFD.
    fn finish(&mut self, out: &mut Vec<u8>) {
        out.clear();
        if !self.pending.is_empty() {
            out.extend_from_slice(REPLACEMENT);
            self.pending.clear();
        }
    }
}

/// U+FFFD REPLACEMENT CHARACTER in UTF-8.
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

/// Appends the lossy decoding of `data` to `out`, except for an incomplete character at the very
/// end, which is returned (at most 3 bytes) for the next chunk to complete.
fn decode_lossy<'a>(mut data: &'a [u8], out: &mut Vec<u8>) -> &'a [u8] {
    loop {
        match std::str::from_utf8(data) {
            Ok(text) => {
                out.extend_from_slice(text.as_bytes());
                return &[];
            }
            Err(err) => {
                let (valid, rest) = data.split_at(err.valid_up_to().min(data.len()));
                out.extend_from_slice(valid);
                match err.error_len() {
                    Some(bad) => {
                        out.extend_from_slice(REPLACEMENT);
                        data = rest.get(bad..).unwrap_or(&[]);
                    }
                    None => return rest,
                }
            }
        }
    }
}

/// Bytes produced by the decoder as a `String` (they are valid UTF-8; lossy as a fallback).
fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

/// True when `program` has an execute bit (Unix); always true elsewhere.
fn is_executable(program: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(program).is_ok_and(|meta| meta.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = program;
        true
    }
}

/// The error for a path that is not a regular file.
fn not_regular_file() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

/// Creates or truncates an output file (mode 0600 when created); it must be a regular file with
/// one link, and a symbolic link is never followed ([`crate::private_fs::open_run_file`]).
fn open_output(path: &Path) -> io::Result<File> {
    crate::private_fs::open_run_file(path, crate::private_fs::WriteMode::Truncate)
}

/// Opens the stdin file; `Ok(None)` when it does not exist (the child then gets empty stdin).
fn open_input(path: &Path) -> io::Result<Option<File>> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    match options.open(path) {
        Ok(file) if file.metadata()?.is_file() => Ok(Some(file)),
        Ok(_) => Err(not_regular_file()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Maps an OS error to the report's error (`ENOENT`, `EACCES`, else the errno name).
fn spawn_error_from_io(err: &io::Error) -> SpawnError {
    match err.kind() {
        io::ErrorKind::NotFound => SpawnError::NotFound,
        io::ErrorKind::PermissionDenied => SpawnError::PermissionDenied,
        kind => match err.raw_os_error() {
            Some(code) => SpawnError::Os(os_error_name(code)),
            None if kind == io::ErrorKind::InvalidInput => SpawnError::Os("EINVAL".to_string()),
            None => SpawnError::Os("UNKNOWN".to_string()),
        },
    }
}

/// The symbolic name of an errno value (`ERRNO_<n>` when not in the table).
#[cfg(unix)]
fn os_error_name(code: i32) -> String {
    let name = match code {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::E2BIG => "E2BIG",
        libc::ENOEXEC => "ENOEXEC",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EEXIST => "EEXIST",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ETXTBSY => "ETXTBSY",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::EPIPE => "EPIPE",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ELOOP => "ELOOP",
        libc::EDQUOT => "EDQUOT",
        libc::ENOBUFS => "ENOBUFS",
        libc::ETIMEDOUT => "ETIMEDOUT",
        _ => return format!("ERRNO_{code}"),
    };
    name.to_string()
}

/// The name of a Windows error code.
#[cfg(not(unix))]
fn os_error_name(code: i32) -> String {
    format!("OS_ERROR_{code}")
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    const ERR_ENOBUFS: &str = "\n[spawn error: ENOBUFS]\n";

    fn sh(script: &str) -> SpawnRequest {
        SpawnRequest {
            program: "/bin/sh".to_string(),
            args: vec!["-c".to_string(), script.to_string()],
            stdin: None,
            stdout: StdoutSink::Memory(1 << 20),
            stderr_path: None,
            timeout: Duration::from_secs(10),
        }
    }

    fn run_default(request: &SpawnRequest) -> SpawnReport {
        spawn_bounded(request, &ChildEnv::Inherit, &SpawnLimits::default())
    }

    /// Writes an executable script; spawning retries on ETXTBSY, which a concurrent fork in
    /// another test thread can cause briefly after the script was written.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn spawn_retrying(request: &SpawnRequest, env: &ChildEnv, limits: &SpawnLimits) -> SpawnReport {
        for _ in 0..50 {
            let report = spawn_bounded(request, env, limits);
            if report.error != Some(SpawnError::Os("ETXTBSY".to_string())) {
                return report;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("ETXTBSY persisted");
    }

    /// True once `pid` is gone or a zombie (PID 1 here may not reap orphans).
    fn is_dead(pid: &str) -> bool {
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        }
    }

    fn wait_dead(pid: &str, within: Duration) -> bool {
        let until = Instant::now() + within;
        while Instant::now() < until {
            if is_dead(pid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        is_dead(pid)
    }

    fn read_pid(path: &Path) -> String {
        for _ in 0..200 {
            if let Ok(text) = fs::read_to_string(path) {
                if text.ends_with('\n') {
                    return text.trim().to_string();
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no pid file");
    }

    #[test]
    fn stdout_streams_to_file_and_sidecar_is_written_even_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("review.md");
        let err = dir.path().join("review.err");
        let mut request = sh("printf 'hello\\nworld\\n'");
        request.stdout = StdoutSink::File(out.clone());
        request.stderr_path = Some(err.clone());
        let report = run_default(&request);
        assert!(report.succeeded(), "{report:?}");
        assert_eq!(report.exit_code, Some(0));
        assert_eq!(fs::read_to_string(&out).unwrap(), "hello\nworld\n");
        assert_eq!(report.stdout_bytes, 12);
        assert_eq!(report.stdout, "");
        assert_eq!(fs::read_to_string(&err).unwrap(), "");
        assert_eq!(
            fs::metadata(&out).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn stderr_goes_to_sidecar_or_memory() {
        let dir = tempfile::tempdir().unwrap();
        let err = dir.path().join("x.err");
        let mut request = sh("echo oops >&2; echo out");
        request.stderr_path = Some(err.clone());
        let report = run_default(&request);
        assert_eq!(report.stdout, "out\n");
        assert_eq!(report.stderr, "");
        assert_eq!(fs::read_to_string(&err).unwrap(), "oops\n");
        request.stderr_path = None;
        let report = run_default(&request);
        assert_eq!(report.stderr, "oops\n");
        assert_eq!(report.stdout_bytes, 4);
    }

    #[test]
    fn stdout_memory_is_capped_and_the_tree_killed() {
        let mut request = sh("echo small");
        let report = run_default(&request);
        assert_eq!(report.stdout, "small\n");
        request = sh("yes");
        request.stdout = StdoutSink::Memory(1000);
        let report = run_default(&request);
        assert_eq!(report.error, Some(SpawnError::OutputTooLarge));
        assert_eq!(report.stdout.len(), 1000);
        assert_eq!(report.stdout_bytes, 1000);
        // Killed by the group kill (no status) or by the closed pipe first (sh's 141): never a
        // clean exit. How long it took is the bench's business, not a test's.
        assert!(
            matches!(report.exit_code, None | Some(141)),
            "{:?}",
            report.exit_code
        );
    }

    #[test]
    fn stdout_file_cap_keeps_what_fit() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let err = dir.path().join("err");
        let mut request = sh("yes abcdefghi");
        request.stdout = StdoutSink::File(out.clone());
        request.stderr_path = Some(err.clone());
        let limits = SpawnLimits {
            stdout_file_bytes: 1005,
            stderr_bytes: 1000,
        };
        let report = spawn_bounded(&request, &ChildEnv::Inherit, &limits);
        assert_eq!(report.error, Some(SpawnError::OutputTooLarge));
        assert_eq!(fs::metadata(&out).unwrap().len(), 1005);
        assert_eq!(fs::read_to_string(&err).unwrap(), ERR_ENOBUFS);
    }

    #[test]
    fn cap_cuts_on_a_character_boundary() {
        let mut request = sh("printf 'a\\342\\202\\254'");
        request.stdout = StdoutSink::Memory(3);
        let report = run_default(&request);
        assert_eq!(report.error, Some(SpawnError::OutputTooLarge));
        assert_eq!(report.stdout, "a");
        assert_eq!(report.stdout_bytes, 1);
    }

    #[test]
    fn stdin_is_streamed_from_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("prompt.md");
        let content: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        fs::write(&input, &content).unwrap();
        let mut request = sh("cat");
        request.stdin = Some(input);
        request.stdout = StdoutSink::Memory(1 << 24);
        let report = run_default(&request);
        assert!(report.succeeded(), "{report:?}");
        assert_eq!(report.stdout, content);
    }

    #[test]
    fn no_stdin_gives_immediate_eof() {
        let mut request = sh("cat");
        request.timeout = Duration::from_secs(20);
        let report = run_default(&request);
        assert!(report.succeeded(), "{report:?}");
        assert_eq!(report.stdout, "");
        assert!(report.elapsed < Duration::from_secs(5));
    }

    #[test]
    fn missing_stdin_file_gives_empty_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let mut request = sh("cat; echo done");
        request.stdin = Some(dir.path().join("missing"));
        let report = run_default(&request);
        assert!(report.succeeded(), "{report:?}");
        assert_eq!(report.stdout, "done\n");
    }

    #[test]
    fn non_regular_stdin_or_output_is_refused_without_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let mut request = sh("cat");
        request.stdin = Some(fifo.clone());
        let report = run_default(&request);
        assert_eq!(report.error, Some(SpawnError::Os("EINVAL".to_string())));
        request.stdin = Some(dir.path().to_path_buf());
        let report = run_default(&request);
        assert_eq!(report.error, Some(SpawnError::Os("EINVAL".to_string())));
        // A FIFO without a reader as the review file: refused at open, not a hang.
        request.stdin = None;
        request.stdout = StdoutSink::File(fifo);
        let report = run_default(&request);
        assert_eq!(report.error, Some(SpawnError::Os("ENXIO".to_string())));
        assert_eq!(report.exit_code, None);
    }

    #[test]
    fn missing_program_is_enoent_and_written_to_the_sidecar() {
        let dir = tempfile::tempdir().unwrap();
        let err = dir.path().join("lane.err");
        let out = dir.path().join("lane.md");
        let request = SpawnRequest {
            program: "gsd-lane-no-such-program".to_string(),
            args: vec![],
            stdin: None,
            stdout: StdoutSink::File(out),
            stderr_path: Some(err.clone()),
            timeout: Duration::from_secs(5),
        };
        let env = ChildEnv::Minimal {
            vars: vec![("PATH".into(), dir.path().display().to_string())],
        };
        let report = spawn_bounded(&request, &env, &SpawnLimits::default());
        assert_eq!(report.error, Some(SpawnError::NotFound));
        assert_eq!(report.exit_code, None);
        assert_eq!(
            fs::read_to_string(&err).unwrap(),
            "\n[spawn error: ENOENT]\n"
        );
        let by_path = SpawnRequest {
            program: dir.path().join("nope").display().to_string(),
            ..request
        };
        let report = spawn_bounded(&by_path, &ChildEnv::Inherit, &SpawnLimits::default());
        assert_eq!(report.error, Some(SpawnError::NotFound));
    }

    #[test]
    fn non_executable_path_is_eacces() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tool");
        fs::write(&file, "#!/bin/sh\necho hi\n").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        let err = dir.path().join("tool.err");
        let mut request = sh("");
        request.program = file.display().to_string();
        request.args.clear();
        request.stderr_path = Some(err.clone());
        let report = run_default(&request);
        assert_eq!(report.error, Some(SpawnError::PermissionDenied));
        assert_eq!(
            fs::read_to_string(&err).unwrap(),
            "\n[spawn error: EACCES]\n"
        );
    }

    #[test]
    fn exit_code_is_recorded_and_none_when_signalled() {
        let report = run_default(&sh("exit 7"));
        assert_eq!(report.exit_code, Some(7));
        assert_eq!(report.error, None);
        assert!(!report.succeeded());
        let report = run_default(&sh("kill -9 $$"));
        assert_eq!(report.exit_code, None);
        assert_eq!(report.error, None);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut request = sh("printf 'a\\377b\\300'");
        request.stdout = StdoutSink::File(out.clone());
        let report = run_default(&request);
        assert!(report.succeeded(), "{report:?}");
        assert_eq!(fs::read_to_string(&out).unwrap(), "a\u{FFFD}b\u{FFFD}");
        assert_eq!(report.stdout_bytes, 8);
    }

    #[test]
    fn multibyte_character_split_across_writes_decodes() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let err = dir.path().join("err");
        let script = concat!(
            "printf '\\342'; printf '\\342' >&2; sleep 0.2; ",
            "printf '\\202\\254'; printf '\\202\\254' >&2"
        );
        let mut request = sh(script);
        request.stdout = StdoutSink::File(out.clone());
        request.stderr_path = Some(err.clone());
        let report = run_default(&request);
        assert!(report.succeeded(), "{report:?}");
        assert_eq!(fs::read_to_string(&out).unwrap(), "€");
        assert_eq!(fs::read_to_string(&err).unwrap(), "€");
    }

    #[test]
    fn timeout_kills_the_child() {
        let dir = tempfile::tempdir().unwrap();
        let err = dir.path().join("err");
        let mut request = sh("echo started; sleep 30");
        request.timeout = Duration::from_millis(500);
        request.stderr_path = Some(err.clone());
        let started = Instant::now();
        let report = run_default(&request);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(report.error, Some(SpawnError::TimedOut));
        assert_eq!(report.exit_code, None);
        assert_eq!(report.stdout, "started\n");
        assert_eq!(
            fs::read_to_string(&err).unwrap(),
            "\n[spawn error: ETIMEDOUT]\n"
        );
    }

    #[test]
    fn grandchild_holding_stdout_is_killed_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let mut request = sh(&format!(
            "sleep 30 & echo $! > '{}'; exit 0",
            pid_file.display()
        ));
        request.timeout = Duration::from_millis(1000);
        let started = Instant::now();
        let report = run_default(&request);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(report.error, Some(SpawnError::TimedOut));
        assert_eq!(report.exit_code, Some(0));
        let pid = read_pid(&pid_file);
        assert!(
            wait_dead(&pid, Duration::from_secs(2)),
            "grandchild {pid} survived"
        );
    }

    #[test]
    fn leftover_group_members_are_killed_after_a_normal_end() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        // The background sleep closes stdout/stderr, so output ends when the child exits.
        let script = format!(
            "sleep 30 >/dev/null 2>&1 & echo $! > '{}'",
            pid_file.display()
        );
        let report = run_default(&sh(&script));
        assert!(report.succeeded(), "{report:?}");
        let pid = read_pid(&pid_file);
        assert!(
            wait_dead(&pid, Duration::from_secs(2)),
            "group member {pid} survived"
        );
    }

    #[test]
    fn escaped_daemon_holding_a_pipe_cannot_hang_the_call() {
        if !Path::new("/usr/bin/setsid").exists() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!(
            "/usr/bin/setsid /bin/sh -c 'echo $$ > \"$1\"; exec sleep 30' sh '{}' & \
             sleep 0.1; exit 0",
            pid_file.display()
        );
        let mut request = sh(&script);
        request.timeout = Duration::from_millis(500);
        let started = Instant::now();
        let report = run_default(&request);
        let took = started.elapsed();
        let pid = read_pid(&pid_file);
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status();
        assert!(
            took < Duration::from_millis(500) + KILL_GRACE + Duration::from_secs(2),
            "{took:?}"
        );
        assert_eq!(report.error, Some(SpawnError::TimedOut));
    }

    #[test]
    fn endless_stderr_is_capped_with_enobufs() {
        let dir = tempfile::tempdir().unwrap();
        let err = dir.path().join("err");
        let mut request = sh("yes 'stderr noise' >&2");
        request.stderr_path = Some(err.clone());
        let limits = SpawnLimits {
            stdout_file_bytes: 1 << 20,
            stderr_bytes: 100_000,
        };
        let report = spawn_bounded(&request, &ChildEnv::Inherit, &limits);
        assert_eq!(report.error, Some(SpawnError::OutputTooLarge));
        let size = fs::metadata(&err).unwrap().len();
        assert_eq!(size, 100_000 + ERR_ENOBUFS.len() as u64);
        assert!(fs::read_to_string(&err).unwrap().ends_with(ERR_ENOBUFS));
        request.stderr_path = None;
        let limits = SpawnLimits {
            stdout_file_bytes: 1 << 20,
            stderr_bytes: 10_000,
        };
        let report = spawn_bounded(&request, &ChildEnv::Inherit, &limits);
        assert_eq!(report.error, Some(SpawnError::OutputTooLarge));
        assert_eq!(report.stderr.len(), 10_000);
    }

    #[test]
    fn two_hundred_megabytes_of_stdout_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("big");
        let mut request = sh("head -c 200000000 /dev/zero");
        request.stdout = StdoutSink::File(out.clone());
        request.timeout = Duration::from_secs(60);
        let report = run_default(&request);
        assert!(report.succeeded(), "{report:?}");
        assert_eq!(report.stdout_bytes, 200_000_000);
        assert_eq!(fs::metadata(&out).unwrap().len(), 200_000_000);
    }

    #[test]
    fn discard_sink_reports_nothing() {
        let mut request = sh("echo gone; echo kept >&2");
        request.stdout = StdoutSink::Discard;
        let report = run_default(&request);
        assert!(report.succeeded(), "{report:?}");
        assert_eq!(report.stdout_bytes, 0);
        assert_eq!(report.stderr, "kept\n");
    }

    #[test]
    fn hostile_argument_arrives_as_one_element() {
        let dir = tempfile::tempdir().unwrap();
        script(dir.path(), "fake-reviewer", "printf '%s\\n' \"$#\" \"$1\"");
        let hostile = "; rm -rf /; $(whoami)";
        let request = SpawnRequest {
            program: "fake-reviewer".to_string(),
            args: vec![hostile.to_string()],
            stdin: None,
            stdout: StdoutSink::Memory(4096),
            stderr_path: None,
            timeout: Duration::from_secs(10),
        };
        let env = ChildEnv::Minimal {
            vars: vec![("PATH".into(), dir.path().display().to_string())],
        };
        let report = spawn_retrying(&request, &env, &SpawnLimits::default());
        assert!(report.succeeded(), "{report:?}");
        assert_eq!(report.stdout, format!("1\n{hostile}\n"));
    }

    #[test]
    fn nul_byte_in_an_argument_is_a_spawn_failure() {
        let mut request = sh("true");
        request.args.push("a\0b".to_string());
        let report = run_default(&request);
        assert_eq!(report.error, Some(SpawnError::Os("EINVAL".to_string())));
    }

    #[test]
    fn minimal_env_replaces_the_environment() {
        let request = SpawnRequest {
            program: "/usr/bin/env".to_string(),
            args: vec![],
            stdin: None,
            stdout: StdoutSink::Memory(4096),
            stderr_path: None,
            timeout: Duration::from_secs(10),
        };
        let vars = vec![
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
            ("ONLY".to_string(), "1".to_string()),
        ];
        let report = spawn_bounded(
            &request,
            &ChildEnv::Minimal { vars },
            &SpawnLimits::default(),
        );
        assert!(report.succeeded(), "{report:?}");
        let mut lines: Vec<&str> = report.stdout.lines().collect();
        lines.sort_unstable();
        assert_eq!(lines, ["ONLY=1", "PATH=/usr/bin:/bin"]);
    }

    #[test]
    fn minimal_env_from_current_keeps_only_the_allow_list() {
        let ChildEnv::Minimal { vars } = minimal_env_from_current() else {
            panic!("not minimal");
        };
        for (name, _) in &vars {
            assert!(is_minimal_var(name), "{name}");
        }
        if let Ok(path) = std::env::var("PATH") {
            assert!(vars.contains(&("PATH".to_string(), path)));
        }
        for name in ["LC_MESSAGES", "TMPDIR", "HOME", "LANG"] {
            assert!(is_minimal_var(name));
        }
        for name in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "SECRET_TOKEN",
            "LC_",
            "LC_x",
            "path",
        ] {
            assert!(!is_minimal_var(name), "{name}");
        }
    }

    #[test]
    fn works_when_called_inside_a_tokio_runtime() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let report = runtime.block_on(async { run_default(&sh("echo inside")) });
        assert_eq!(report.stdout, "inside\n");
    }

    #[test]
    fn zero_and_huge_timeouts_do_not_panic() {
        let mut request = sh("sleep 5");
        request.timeout = Duration::ZERO;
        let report = run_default(&request);
        assert_eq!(report.error, Some(SpawnError::TimedOut));
        request = sh("echo ok");
        request.timeout = Duration::MAX;
        let report = run_default(&request);
        assert!(report.succeeded(), "{report:?}");
    }

    fn decode_chunks(chunks: &[&[u8]]) -> Vec<u8> {
        let mut stream = Utf8Stream::default();
        let mut out = Vec::new();
        let mut all = Vec::new();
        for chunk in chunks {
            stream.decode(chunk, &mut out);
            all.extend_from_slice(&out);
        }
        stream.finish(&mut out);
        all.extend_from_slice(&out);
        all
    }

    #[test]
    fn decoder_handles_known_cases() {
        assert_eq!(decode_chunks(&[b"\xe2", b"\x82", b"\xac"]), "€".as_bytes());
        assert_eq!(decode_chunks(&[b"\xe2\x82"]), "\u{FFFD}".as_bytes());
        assert_eq!(decode_chunks(&[b"\xe2", b"A"]), "\u{FFFD}A".as_bytes());
        assert_eq!(
            decode_chunks(&[b"\xf0\x9f", b"\x98", b"\x80!"]),
            "😀!".as_bytes()
        );
        assert_eq!(decode_chunks(&[b"", b"\xff", b""]), "\u{FFFD}".as_bytes());
    }

    proptest::proptest! {
        #[test]
        fn decoder_matches_from_utf8_lossy(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            cuts in proptest::collection::vec(0_usize..200, 0..8),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut at = 0;
            for cut in cuts {
                chunks.push(&bytes[at..cut]);
                at = cut;
            }
            chunks.push(&bytes[at..]);
            let expected = String::from_utf8_lossy(&bytes).into_owned().into_bytes();
            proptest::prop_assert_eq!(decode_chunks(&chunks), expected);
        }

        #[test]
        fn char_floor_is_a_boundary(text in ".{0,40}", limit in 0_usize..200) {
            let at = char_floor(text.as_bytes(), limit);
            proptest::prop_assert!(at <= limit.min(text.len()));
            proptest::prop_assert!(text.is_char_boundary(at));
            proptest::prop_assert!(limit.min(text.len()) - at < 4);
        }
    }

    fn vm_hwm_kib() -> u64 {
        let status = fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Run alone: `cargo test -p gsd-lane --lib one_gib -- --ignored --test-threads=1`.
    #[test]
    #[ignore = "slow; measures process-wide peak memory, so run it alone"]
    fn one_gib_of_stdout_keeps_memory_flat() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("big");
        let before = vm_hwm_kib();
        let mut request = sh("head -c 1073741824 /dev/zero");
        request.stdout = StdoutSink::File(out.clone());
        request.timeout = Duration::from_secs(300);
        let report = run_default(&request);
        assert!(report.succeeded(), "{report:?}");
        assert_eq!(fs::metadata(&out).unwrap().len(), 1 << 30);
        let growth = vm_hwm_kib().saturating_sub(before);
        assert!(growth < 32 * 1024, "peak memory grew by {growth} KiB");
    }

    fn open_fds() -> usize {
        fs::read_dir("/proc/self/fd").unwrap().count()
    }

    fn child_pids() -> String {
        let mut all = String::new();
        for task in fs::read_dir("/proc/self/task").unwrap() {
            let path = task.unwrap().path().join("children");
            all.push_str(&fs::read_to_string(path).unwrap_or_default());
        }
        all.trim().to_string()
    }

    /// Run alone: `cargo test -p gsd-lane --lib no_leaked -- --ignored --test-threads=1`.
    #[test]
    #[ignore = "counts process-wide descriptors and children, so run it alone"]
    fn no_leaked_descriptors_or_zombies() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("in"), "prompt").unwrap();
        // Warm-up: tokio's process-wide signal pipe (two descriptors) is created once, on first use.
        assert!(run_default(&sh("exit 0")).succeeded());
        let fds = open_fds();
        for i in 0..100 {
            // Even rounds: a background process holds stdout, so the call times out.
            // Odd rounds: it does not, so the call ends normally and the leftover is killed.
            let holding = i % 2 == 0;
            let redirect = if holding { "" } else { ">/dev/null 2>&1" };
            let mut request = sh(&format!(
                "echo out; echo err >&2; sleep 5 {redirect} & exit 3"
            ));
            request.stdout = StdoutSink::File(dir.path().join("out"));
            request.stderr_path = Some(dir.path().join("err"));
            request.stdin = Some(dir.path().join("in"));
            request.timeout = Duration::from_millis(if holding { 50 } else { 5_000 });
            let report = run_default(&request);
            if holding {
                assert_eq!(report.error, Some(SpawnError::TimedOut));
            } else {
                assert_eq!((report.exit_code, report.error), (Some(3), None));
            }
        }
        let report = run_default(&sh("exit 0"));
        assert!(report.succeeded());
        assert_eq!(open_fds(), fds);
        assert_eq!(child_pids(), "");
    }
}
