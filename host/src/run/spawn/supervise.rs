//! Supervision of a started child: both pipes into their sinks, the deadline, the kill grace and
//! the reaping.

use std::io;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use gsd_lane_sdk::SpawnError;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::errors::spawn_error_from_io;
use super::groups::kill_tree;
use super::sink::{Sink, SinkFailure};
use super::{COPY_BUF, KILL_GRACE};

/// What supervision found.
pub(super) struct Supervised {
    /// The child's exit status, when it was reaped.
    pub(super) status: Option<ExitStatus>,
    /// The first error (timeout, overflow, sink failure).
    pub(super) error: Option<SpawnError>,
    /// Time from the start of the call to the end of output.
    pub(super) elapsed: Duration,
}

/// The child's output pipes still being read.
pub(super) struct Pipes {
    /// Stdout, when piped and not yet at EOF.
    pub(super) stdout: Option<tokio::process::ChildStdout>,
    /// Stderr, until EOF.
    pub(super) stderr: Option<tokio::process::ChildStderr>,
}

/// Reads both pipes into their sinks until EOF, the deadline or an overflow, and reaps the child.
pub(super) async fn supervise(
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
                    kill_and_mark(&mut child, group, &mut killed_at);
                }
            }
            read = read_pipe(&mut pipes.stderr, &mut err_buf), if pipes.stderr.is_some() => {
                let outcome = feed(stderr_sink, read, &err_buf);
                if handle_feed(outcome, &mut pipes.stderr, &mut error) {
                    kill_and_mark(&mut child, group, &mut killed_at);
                }
            }
            waited = child.wait(), if !reaped => {
                reaped = true;
                status = waited.ok();
            }
            () = tokio::time::sleep_until(deadline), if killed_at.is_none() => {
                error.get_or_insert(SpawnError::TimedOut);
                kill_and_mark(&mut child, group, &mut killed_at);
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
    finish_abandoned(&mut pipes, stdout_sink, stderr_sink, &mut error);
    Supervised {
        status,
        error,
        elapsed,
    }
}

/// Kills the tree and notes when the kill grace started (at the first kill only).
fn kill_and_mark(
    child: &mut tokio::process::Child,
    group: Option<u32>,
    killed_at: &mut Option<tokio::time::Instant>,
) {
    kill_tree(child, group);
    killed_at.get_or_insert_with(tokio::time::Instant::now);
}

/// Finishes the sinks of pipes abandoned before EOF, flushing the pending bytes of a character
/// they cut off.
fn finish_abandoned(
    pipes: &mut Pipes,
    stdout_sink: Option<&mut Sink>,
    stderr_sink: &mut Sink,
    error: &mut Option<SpawnError>,
) {
    if pipes.stdout.take().is_some() {
        if let Some(sink) = stdout_sink {
            record_failure(sink.finish(), error);
        }
    }
    if pipes.stderr.take().is_some() {
        record_failure(stderr_sink.finish(), error);
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
