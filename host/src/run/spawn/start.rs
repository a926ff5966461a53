//! Preparing and starting one child: the program resolved against the child's `PATH`, its stdin and
//! stdout opened, its process group announced to the lane watchdog, then supervision.

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use gsd_lane_sdk::{SpawnError, SpawnRequest, StdoutSink};

use super::env::{child_path_var, ChildEnv};
use super::errors::spawn_error_from_io;
use super::files::{is_executable, open_input, open_output};
use super::groups::LiveGroup;
use super::sink::{Sink, Target};
use super::supervise::{supervise, Pipes, Supervised};
use super::{Confinement, SpawnLimits, MAX_TIMEOUT};
use crate::run::path_lookup::find_executable;
use crate::sandbox::confine::confine_current_thread;
#[cfg(target_os = "linux")]
use crate::sandbox::confine::{view_for, Mechanism, ViewProof};
use crate::sandbox::watchdog;

/// Resolves the program, opens stdin and stdout, starts the child and supervises it.
///
/// `stdout_sink` is filled in once the stdout target exists, so that the caller can report what
/// was written even when a later step fails.
pub(super) fn prepare_and_supervise(
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
        return Err(SpawnError::PermissionDenied);
    }
    if confinement.is_restricted() && !watchdog::is_enabled() {
        // A confined lane always has the watchdog too, never a silent half.
        return Err(SpawnError::Refused(
            "the lane watchdog is not available in this process".to_owned(),
        ));
    }

    let stdin = open_stdin(request)?;
    let stdout = open_stdout(request, limits, stdout_sink)?;

    let timeout = request.timeout.min(MAX_TIMEOUT);
    let deadline = start.checked_add(timeout).unwrap_or(start);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| spawn_error_from_io(&e))?;

    runtime.block_on(async {
        let mut command = child_command(&program, &request.args, env, stdin, stdout);
        if let Some(tmpdir) = &confinement.tmpdir {
            command.env("TMPDIR", tmpdir);
        }
        let pending = watchdog::announce().map_err(|err| SpawnError::Refused(err.to_string()))?;
        if let Some((name, value)) = pending.marker() {
            command.env(name, value);
        }
        let mut child = spawn_child(&mut command, confinement)?;
        drop(command); // closes our copy of the stdin file
        let live = LiveGroup::register(child.id(), pending);
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

/// Starts `command`; under a filesystem restriction, from a thread of its own that applies the
/// restriction to itself first (the child inherits it, the rest of gsd-lane stays unrestricted).
///
/// Called inside the supervising runtime, whose handle the confined thread enters so that the
/// child is registered with it.
fn spawn_child(
    command: &mut tokio::process::Command,
    confinement: &Confinement,
) -> Result<tokio::process::Child, SpawnError> {
    if !confinement.is_restricted() {
        return command.spawn().map_err(|e| spawn_error_from_io(&e));
    }
    #[cfg(target_os = "linux")]
    if confinement.mechanism == Mechanism::View {
        let view = view_for(confinement)
            .map_err(|err| SpawnError::Refused(err.to_string()))?
            .ok_or_else(|| SpawnError::Refused("no read-only root for the view".to_owned()))?;
        return spawn_viewed(command, std::sync::Arc::new(view), confinement.proof);
    }
    let runtime = tokio::runtime::Handle::current();
    std::thread::scope(|scope| {
        let confined = std::thread::Builder::new()
            .name("gsd-lane-confined-spawn".to_owned())
            .spawn_scoped(scope, || {
                let _entered = runtime.enter();
                confine_current_thread(confinement)
                    .map_err(|err| SpawnError::Refused(err.to_string()))?;
                command.spawn().map_err(|e| spawn_error_from_io(&e))
            });
        match confined {
            // A panic here is a gsd-lane bug, not an OS error: it keeps unwinding (the lane's
            // thread reports it as an internal error naming the lane).
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|payload| std::panic::resume_unwind(payload)),
            Err(err) => Err(spawn_error_from_io(&err)),
        }
    })
}

/// Starts `command` under the read-only `view`. When the view was not probed in this process
/// yet ([`ViewProof::AtSpawn`]), the lane's own process proves it before its program starts; if
/// that spawn fails, the once-per-process probe decides: where it holds, the lane is started
/// again as any later lane would be; where it is refused, the spawn fails (the program never
/// started) and the caller decides the lane again.
#[cfg(target_os = "linux")]
fn spawn_viewed(
    command: &mut tokio::process::Command,
    view: std::sync::Arc<crate::sandbox::namespace::View>,
    proof: ViewProof,
) -> Result<tokio::process::Child, SpawnError> {
    use crate::sandbox::namespace;
    let proving = match (proof, namespace::known()) {
        (ViewProof::AtSpawn, None) => true,
        // Refused since the lane was decided (a probe elsewhere in this process): never started
        // unproven; the caller decides the lane again.
        (ViewProof::AtSpawn, Some(namespace::Support::Unavailable(why))) => {
            return Err(view_refused(why));
        }
        _ => false,
    };
    view.prove_at_spawn(proving);
    namespace::install(command, std::sync::Arc::clone(&view));
    let first = command.spawn();
    if !proving {
        return first.map_err(|e| spawn_error_from_io(&e));
    }
    if first.is_ok() {
        namespace::proven_by_a_lane();
        return first.map_err(|e| spawn_error_from_io(&e));
    }
    crate::timing::mark("the lane's own spawn did not prove the view: the probe decides");
    match namespace::support() {
        namespace::Support::Available => {
            view.prove_at_spawn(false);
            command.spawn().map_err(|e| spawn_error_from_io(&e))
        }
        namespace::Support::Unavailable(why) => Err(view_refused(why)),
    }
}

/// The spawn error of a lane that was to prove the view when the view is refused here.
#[cfg(target_os = "linux")]
fn view_refused(why: &str) -> SpawnError {
    SpawnError::Refused(format!("the read-only view is not available here ({why})"))
}

/// The child's stdin: the request's file, or `/dev/null` when there is none or it does not exist.
fn open_stdin(request: &SpawnRequest) -> Result<Stdio, SpawnError> {
    let Some(path) = &request.stdin else {
        return Ok(Stdio::null());
    };
    Ok(
        match open_input(path).map_err(|e| spawn_error_from_io(&e))? {
            Some(file) => Stdio::from(file),
            None => Stdio::null(),
        },
    )
}

/// The child's stdout: a pipe into a new sink stored in `stdout_sink`, or `/dev/null` for
/// [`StdoutSink::Discard`].
fn open_stdout(
    request: &SpawnRequest,
    limits: &SpawnLimits,
    stdout_sink: &mut Option<Sink>,
) -> Result<Stdio, SpawnError> {
    Ok(match &request.stdout {
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
    })
}

/// The command that starts `program args` in its own process group (Unix), stderr piped, with
/// the environment `env`.
fn child_command(
    program: &Path,
    args: &[String],
    env: &ChildEnv,
    stdin: Stdio,
    stdout: Stdio,
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped());
    if let ChildEnv::Minimal { vars } = env {
        command.env_clear();
        command.envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    }
    #[cfg(unix)]
    command.process_group(0);
    command
}
