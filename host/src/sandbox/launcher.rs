//! The lane launcher: gsd-lane re-executed as the supervising parent of one lane process.
//!
//! # Why a supervising launcher and not `PR_SET_PDEATHSIG` alone
//!
//! A parent-death signal reaches only the direct child, so the lane's grandchildren would survive
//! a `SIGKILL` of gsd-lane; and it fires when the parent *thread* that forked ends, not the
//! process. The launcher instead stays alive as the lane's parent and process-group leader and
//! polls `getppid()`: the parent *process* id does not change when a thread of gsd-lane ends, and
//! it changes as soon as gsd-lane is gone (the launcher is re-parented). The launcher then kills
//! its whole process group. The parent is named on the command line, so a gsd-lane that died
//! before the launcher even started is caught by the first check, before anything is started.
//!
//! # Protocol (hidden, between gsd-lane and itself)
//!
//! `gsd-lane __lane-launch <parent pid> -- <program> [<arg>...]`
//!
//! The launcher starts already confined: the spawning thread of gsd-lane applied the lane's
//! [`super::confine::Confinement`] to itself before starting it, and the launcher and the lane
//! inherit it.
//!
//! When the lane ends while other processes remain in its group, the launcher starts a
//! [`super::guard`] for the group before ending.
//!
//! Exit status: the lane's own exit code; a lane ended by a signal makes the launcher end by
//! `SIGKILL` (the spawner reports no exit code either way). The launcher's own failures exit
//! with [`LAUNCH_FAILED`], [`EXEC_FAILED`] or [`NOT_FOUND`] (`super::protocol`) after one `gsd-lane sandbox: …` line
//! on stderr (the lane's sidecar).

use std::ffi::{OsStr, OsString};

use super::confine::Confinement;
use super::protocol::{EXEC_FAILED, LAUNCH_FAILED, NOT_FOUND, PARENT_POLL};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The hidden first argument that turns gsd-lane into a launcher.
pub const LAUNCH_ARG: &str = "__lane-launch";

/// The executable that launches lanes, once [`enable`] was called.
static LAUNCHER: OnceLock<PathBuf> = OnceLock::new();

/// Makes this process's own executable the launcher of every lane it spawns.
///
/// Called by the `gsd-lane` binary at start-up. A library user (or a unit-test binary) that
/// never calls it spawns lanes directly, without the launcher and without confinement.
pub fn enable() {
    if !cfg!(unix) {
        // The launcher's supervision is Unix-only; elsewhere lanes start directly.
        return;
    }
    let exe = if cfg!(target_os = "linux") && Path::new("/proc/self/exe").exists() {
        // Resolved by the kernel in the forked child, so it names gsd-lane's own image even if
        // the file on disk was replaced or removed since gsd-lane started.
        Some(PathBuf::from("/proc/self/exe"))
    } else {
        std::env::current_exe().ok()
    };
    if let Some(exe) = exe {
        let _ = LAUNCHER.set(exe);
    }
}

/// True when lanes are started through the launcher.
pub fn is_enabled() -> bool {
    LAUNCHER.get().is_some()
}

/// The program and arguments that start `program args` under `confinement`.
///
/// The confinement itself is applied by the spawning thread before it starts the launcher
/// ([`super::confine`]); the launcher adds the supervision. Without a launcher ([`enable`] not
/// called) the lane is started directly, except that a requested filesystem restriction is then
/// refused: a confined lane always has the supervision too, never a silent half.
///
/// # Errors
///
/// A message when confinement was requested but no launcher is available.
pub fn command_line(
    program: &Path,
    args: &[String],
    confinement: &Confinement,
) -> Result<(PathBuf, Vec<OsString>), String> {
    let Some(launcher) = LAUNCHER.get() else {
        if confinement.read_only.is_some() {
            return Err("the sandbox launcher is not available in this process".to_owned());
        }
        return Ok((
            program.to_path_buf(),
            args.iter().map(OsString::from).collect(),
        ));
    };
    let mut argv: Vec<OsString> = vec![LAUNCH_ARG.into(), std::process::id().to_string().into()];
    argv.push("--".into());
    argv.push(program.as_os_str().to_owned());
    argv.extend(args.iter().map(OsString::from));
    Ok((launcher.clone(), argv))
}

/// A parsed launcher command line.
#[derive(Debug, PartialEq, Eq)]
struct Launch {
    /// The gsd-lane process that started the launcher.
    parent: u32,
    /// The lane's program.
    program: OsString,
    /// The lane's arguments.
    args: Vec<OsString>,
}

/// Parses the arguments after [`LAUNCH_ARG`].
fn parse(mut args: impl Iterator<Item = OsString>) -> Result<Launch, String> {
    let parent = args
        .next()
        .and_then(|pid| pid.to_str().and_then(|pid| pid.parse::<u32>().ok()))
        .ok_or("missing parent pid")?;
    match args.next() {
        Some(separator) if separator == "--" => {}
        Some(other) => return Err(format!("unknown launcher option {other:?}")),
        None => return Err("missing `--`".to_owned()),
    }
    let program = args.next().ok_or("missing program")?;
    Ok(Launch {
        parent,
        program,
        args: args.collect(),
    })
}

/// Runs the launcher when this process was started as one; `None` otherwise.
///
/// Called first thing by the binary's `main`, before any other parsing. Returns the exit status
/// to end with; a lane ended by a signal ends the launcher by `SIGKILL` instead of returning.
pub fn run_if_launcher() -> Option<u8> {
    let mut args = std::env::args_os().skip(1);
    let first = args.next();
    if first.as_deref() == Some(OsStr::new(super::guard::GUARD_ARG)) {
        return Some(super::guard::run(args));
    }
    if first.as_deref() != Some(OsStr::new(LAUNCH_ARG)) {
        return None;
    }
    Some(match parse(args) {
        Ok(launch) => launch_and_supervise(&launch),
        Err(why) => fail(&why, LAUNCH_FAILED),
    })
}

/// Prints one launcher diagnostic and returns `status`.
fn fail(why: &str, status: u8) -> u8 {
    eprintln!("gsd-lane sandbox: {why}");
    status
}

#[cfg(unix)]
fn launch_and_supervise(launch: &Launch) -> u8 {
    use std::os::unix::process::ExitStatusExt;

    if std::os::unix::process::parent_id() != launch.parent {
        return fail("gsd-lane ended before the lane started", LAUNCH_FAILED);
    }
    // Read now, while gsd-lane is known to be our parent (the guard identifies it by this).
    let parent_start = super::guard::start_time(launch.parent);
    // Before the lane starts, so that every orphan it leaves is this launcher's child.
    let adopted = super::guard::adopt_orphans();
    let mut command = std::process::Command::new(&launch.program);
    command.args(&launch.args);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            let status = if err.kind() == io::ErrorKind::NotFound {
                NOT_FOUND
            } else {
                EXEC_FAILED
            };
            let program = Path::new(&launch.program).display();
            return fail(&format!("cannot execute {program}: {err}"), status);
        }
    };
    let child_pid = child.id();
    let watcher = std::thread::Builder::new()
        .name("gsd-lane-parent-watch".to_owned())
        .spawn({
            let parent = launch.parent;
            move || watch_parent(parent, child_pid)
        });
    if let Err(err) = watcher {
        kill_lane(child_pid);
        let _ = child.wait();
        return fail(&format!("cannot watch gsd-lane: {err}"), LAUNCH_FAILED);
    }
    let waited = child.wait();
    if rustix::process::getpgrp() == rustix::process::getpid()
        && super::guard::lane_left_processes(adopted)
    {
        super::guard::hand_over(launch.parent, parent_start);
    }
    match waited {
        Ok(status) => match status.code() {
            Some(code) => u8::try_from(code).unwrap_or(LAUNCH_FAILED),
            None if status.signal().is_some() => end_by_signal(),
            None => LAUNCH_FAILED,
        },
        Err(err) => {
            kill_lane(child_pid);
            fail(&format!("waiting for the lane: {err}"), LAUNCH_FAILED)
        }
    }
}

#[cfg(not(unix))]
fn launch_and_supervise(_launch: &Launch) -> u8 {
    fail("the launcher needs a Unix system", LAUNCH_FAILED)
}

/// Polls the parent process id until gsd-lane is gone, then kills the lane's process group.
#[cfg(unix)]
fn watch_parent(parent: u32, child: u32) {
    loop {
        if std::os::unix::process::parent_id() != parent {
            kill_lane(child);
            // Only reached when this process is not its group's leader (see `kill_lane`).
            std::process::exit(i32::from(LAUNCH_FAILED));
        }
        std::thread::sleep(PARENT_POLL);
    }
}

/// Kills the whole process group when this launcher leads it (the spawner's `process_group(0)`
/// makes it so), which ends the launcher too; otherwise only the lane itself.
#[cfg(unix)]
fn kill_lane(child: u32) {
    use rustix::process::{getpgrp, getpid, kill_current_process_group, kill_process, Pid, Signal};

    if getpgrp() == getpid() {
        let _ = kill_current_process_group(Signal::KILL);
    }
    if let Some(child) = i32::try_from(child).ok().and_then(Pid::from_raw) {
        let _ = kill_process(child, Signal::KILL);
    }
}

/// Ends this process by `SIGKILL`, mirroring a lane that was ended by a signal.
#[cfg(unix)]
fn end_by_signal() -> u8 {
    use rustix::process::{getpid, kill_process, Signal};

    let _ = kill_process(getpid(), Signal::KILL);
    LAUNCH_FAILED
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn os(items: &[&str]) -> Vec<OsString> {
        items.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_what_command_line_builds() {
        let launch = parse(os(&["42", "--", "/bin/tool", "--", "-x"]).into_iter()).unwrap();
        assert_eq!(launch.parent, 42);
        assert_eq!(launch.program, OsString::from("/bin/tool"));
        assert_eq!(launch.args, os(&["--", "-x"]));
    }

    #[test]
    fn malformed_launcher_arguments_are_refused() {
        for bad in [
            &[][..],
            &["x", "--", "p"][..],
            &["1"][..],
            &["1", "--read-only", "/repo", "--", "p"][..],
            &["1", "--what", "--", "p"][..],
            &["1", "--"][..],
        ] {
            assert!(parse(os(bad).into_iter()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn without_a_launcher_only_unconfined_spawns_are_allowed() {
        // Unit-test binaries never call `enable`.
        assert!(!is_enabled());
        let (program, args) = command_line(
            Path::new("/bin/echo"),
            &["a".to_owned()],
            &Confinement::default(),
        )
        .unwrap();
        assert_eq!(program, PathBuf::from("/bin/echo"));
        assert_eq!(args, os(&["a"]));
        let confined = Confinement {
            read_only: Some(PathBuf::from("/repo")),
            ..Confinement::default()
        };
        assert!(command_line(Path::new("/bin/echo"), &[], &confined).is_err());
    }
}
