//! The effects a handler may use: bounded processes, bounded requests, bounded reads.
//!
//! The host implements [`Effects`]; every call is checked against the lane's verified plan
//! (a handler cannot start another program or talk to another origin) and bounded in time
//! and size. Tests use [`crate::testing::FakeEffects`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::HandlerError;

/// Where a spawned child's stdout goes.
///
/// Exhaustive on purpose: a handler only names a sink, the host implements every one, and a
/// new sink must be handled by the host's match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdoutSink {
    /// Streamed to this file (lossy UTF-8), never held whole in memory.
    File(PathBuf),
    /// Kept in memory, at most this many bytes (used for short help runs).
    Memory(usize),
    /// Discarded.
    Discard,
}

/// One process the handler asks the host to run.
///
/// `#[non_exhaustive]` (a request may gain settings): build it with [`SpawnRequest::new`] or
/// [`SpawnRequest::for_plan`] and the `with_…` methods.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpawnRequest {
    /// Program (the lane's own binary; the host refuses any other).
    pub program: String,
    /// Argument vector, passed without a shell.
    pub args: Vec<String>,
    /// File streamed to stdin; `None` gives an empty, closed stdin.
    pub stdin: Option<PathBuf>,
    /// Where stdout goes.
    pub stdout: StdoutSink,
    /// The stderr sidecar to write (always written, even when empty); `None` keeps stderr in
    /// memory, bounded.
    pub stderr_path: Option<PathBuf>,
    /// Wall-clock bound; on expiry the whole process tree is killed.
    pub timeout: Duration,
}

impl SpawnRequest {
    /// Runs `program` with `args` under `timeout`, stdout to `stdout`; stdin empty and closed,
    /// stderr kept in memory (bounded).
    pub fn new(
        program: impl Into<String>,
        args: Vec<String>,
        stdout: StdoutSink,
        timeout: Duration,
    ) -> SpawnRequest {
        SpawnRequest {
            program: program.into(),
            args,
            stdin: None,
            stdout,
            stderr_path: None,
            timeout,
        }
    }

    /// Streams `stdin` (a file) to the child; `None` keeps stdin empty and closed.
    pub fn with_stdin(mut self, stdin: Option<PathBuf>) -> SpawnRequest {
        self.stdin = stdin;
        self
    }

    /// Writes stderr to the sidecar `stderr_path`; `None` keeps it in memory, bounded.
    pub fn with_stderr_path(mut self, stderr_path: Option<PathBuf>) -> SpawnRequest {
        self.stderr_path = stderr_path;
        self
    }

    /// The plan's own invocation (its binary, argv and stdin, stderr to its sidecar) with
    /// stdout kept in memory up to `stdout_cap` bytes and the given bound: what a handler that
    /// parses the tool's output runs. `None` for a plan that is not a spawn lane.
    pub fn for_plan(
        plan: &crate::LanePlan,
        stdout_cap: usize,
        timeout: Duration,
    ) -> Option<SpawnRequest> {
        let spawn = plan.spawn()?;
        Some(
            SpawnRequest::new(
                spawn.binary.clone(),
                spawn.argv.clone(),
                StdoutSink::Memory(stdout_cap),
                timeout,
            )
            .with_stdin(spawn.stdin.as_ref().map(PathBuf::from))
            .with_stderr_path(Some(PathBuf::from(&plan.err_path))),
        )
    }
}

/// Runs the lane's own invocation ([`SpawnRequest::for_plan`]) under what is left of its bound,
/// stdout kept in memory up to `stdout_cap` bytes: the one process of a handler that reads its
/// tool's output. `handler` names the handler in the error for a lane that is not a spawn lane.
///
/// # Errors
///
/// A malformed-lane [`HandlerError`] when the plan is not a spawn plan; nothing is started.
pub fn spawn_own_invocation(
    effects: &dyn Effects,
    request: &crate::LaneRequest,
    stdout_cap: usize,
    handler: &str,
) -> Result<SpawnReport, HandlerError> {
    let spawn = SpawnRequest::for_plan(&request.plan, stdout_cap, effects.remaining()).ok_or_else(
        || HandlerError::malformed(format!("{handler}: the lane is not a spawn lane")),
    )?;
    Ok(effects.spawn(&spawn))
}

/// Why a spawned process did not end on its own, or could not start.
///
/// `#[non_exhaustive]`: the host may learn to tell more failures apart; a handler matching on
/// it keeps a catch-all arm.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpawnError {
    /// The bound elapsed; the process tree was killed.
    TimedOut,
    /// No such program.
    NotFound,
    /// Permission denied.
    PermissionDenied,
    /// Output exceeded its cap; the process tree was killed.
    OutputTooLarge,
    /// Another operating-system error, by its code name.
    Os(String),
    /// The host refused the request (not the lane's program, outside the run dir, …).
    Refused(String),
}

impl SpawnError {
    /// The error code name written into the sidecar (`ETIMEDOUT`, `ENOENT`, …).
    pub fn code(&self) -> &str {
        match self {
            SpawnError::TimedOut => "ETIMEDOUT",
            SpawnError::NotFound => "ENOENT",
            SpawnError::PermissionDenied => "EACCES",
            SpawnError::OutputTooLarge => "ENOBUFS",
            SpawnError::Os(code) => code,
            SpawnError::Refused(_) => "EPERM",
        }
    }
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::Refused(why) => write!(f, "refused by host: {why}"),
            other => f.write_str(other.code()),
        }
    }
}

/// What happened to a spawned process.
///
/// `#[non_exhaustive]` (the host may report more, e.g. a signal): outside the SDK it is built
/// with [`SpawnReport::exited`] or [`SpawnReport::failed`] (or `default()`) and its fields set.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SpawnReport {
    /// Exit code when the process exited on its own; `None` when killed or never started.
    pub exit_code: Option<i32>,
    /// Set when the process timed out, overflowed, or could not start.
    pub error: Option<SpawnError>,
    /// Stdout when captured in memory (lossy UTF-8), else empty.
    pub stdout: String,
    /// Stderr when kept in memory (lossy UTF-8, bounded), else empty.
    pub stderr: String,
    /// Bytes written to the stdout sink.
    pub stdout_bytes: u64,
    /// Wall time from start to the end of all output.
    pub elapsed: Duration,
}

impl SpawnReport {
    /// A process that exited by itself with `exit_code`, nothing captured yet.
    pub fn exited(exit_code: i32) -> SpawnReport {
        SpawnReport {
            exit_code: Some(exit_code),
            ..SpawnReport::default()
        }
    }

    /// A process that did not end on its own, or never started, because of `error`.
    pub fn failed(error: SpawnError) -> SpawnReport {
        SpawnReport {
            error: Some(error),
            ..SpawnReport::default()
        }
    }

    /// True when the process exited by itself with status 0.
    pub fn succeeded(&self) -> bool {
        self.error.is_none() && self.exit_code == Some(0)
    }
}

/// HTTP method of a request.
///
/// Exhaustive on purpose: a handler only names a method and the host must implement each one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpMethod {
    /// `GET`.
    Get,
    /// `POST` with a JSON body.
    Post,
}

/// One request the handler asks the host to make.
///
/// `#[non_exhaustive]` (a request may gain settings, e.g. headers): build it with
/// [`HttpRequest::get`] or [`HttpRequest::post_json`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpRequest {
    /// Method.
    pub method: HttpMethod,
    /// Absolute URL; the host refuses any origin other than the lane's verified host.
    pub url: String,
    /// JSON body for `POST`.
    pub json_body: Option<String>,
    /// Bound covering connect, send and the full body read.
    pub timeout: Duration,
}

impl HttpRequest {
    /// `GET url`, bounded by `timeout`.
    pub fn get(url: impl Into<String>, timeout: Duration) -> HttpRequest {
        HttpRequest {
            method: HttpMethod::Get,
            url: url.into(),
            json_body: None,
            timeout,
        }
    }

    /// `POST url` with the JSON `body`, bounded by `timeout`.
    pub fn post_json(
        url: impl Into<String>,
        body: impl Into<String>,
        timeout: Duration,
    ) -> HttpRequest {
        HttpRequest {
            method: HttpMethod::Post,
            url: url.into(),
            json_body: Some(body.into()),
            timeout,
        }
    }
}

/// What came back from a request.
///
/// Exhaustive on purpose: a response arrived or it did not; there is no third case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpReport {
    /// A response arrived (any status; redirects are never followed).
    Response {
        /// Status code.
        status: u16,
        /// Body as lossy UTF-8, within the host's size cap.
        body: String,
    },
    /// No response: connection error, timeout, oversized body, refused origin.
    Failed {
        /// Short description with the OS error name or `timeout` where known.
        error: String,
    },
}

/// Result of a bounded file read.
///
/// Exhaustive on purpose: the text, no file, or a file that cannot be read covers every read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRead {
    /// The file's text (lossy UTF-8).
    Text(String),
    /// No such file.
    Missing,
    /// The file exists but could not be read (permissions, not a regular file, too large).
    Unreadable(String),
}

/// An exclusive lock held until dropped.
pub trait LockGuard: Send {}

/// The outside world as the host grants it to a handler.
pub trait Effects {
    /// Runs a process under the request's bound; never through a shell.
    fn spawn(&self, request: &SpawnRequest) -> SpawnReport;

    /// Makes one HTTP request to the lane's verified origin; redirects are not followed.
    fn http(&self, request: &HttpRequest) -> HttpReport;

    /// Reads a text file, at most `max_bytes` (larger files are `Unreadable`).
    fn read_text(&self, path: &Path, max_bytes: u64) -> FileRead;

    /// The user's home directory, if known.
    fn home_dir(&self) -> Option<PathBuf>;

    /// Takes an exclusive, process-death-safe lock named by `key`, waiting at most `wait`.
    ///
    /// # Errors
    ///
    /// [`HandlerError`] when the lock cannot be created or the wait elapses.
    fn lock(&self, key: &str, wait: Duration) -> Result<Box<dyn LockGuard>, HandlerError>;

    /// Writes a warning for the user (stderr in the CLI).
    fn warn(&self, message: &str);

    /// Time left of the lane's outer bound.
    fn remaining(&self) -> Duration;
}
