//! The read-only view: each confined lane runs in user, mount and PID namespaces of its own, in
//! which the confined roots are bind-mounted read-only and everything else is as the user has it.
//!
//! Under that view every write under a root fails with `EROFS` (create, write, truncate, rename,
//! link, delete, and also `chmod`, `chown`, `utime` and extended attributes, which Landlock cannot
//! refuse), while a CLI creates its state in `$HOME` on its first run as usual (Landlock's
//! allow-list cannot grant a new entry directly in an ancestor of the repository). The lane gets
//! a `/proc` of its own PID namespace, so no other process's `/proc/<pid>/root` or `/cwd` leads
//! back to the writable view, and when the lane ends every process it left in its namespace ends
//! with it. Before the lane's program starts, every capability is dropped and no-new-privileges is
//! set, so the lane cannot remount; the mounts it inherits into any namespace it creates itself
//! are locked by the kernel.
//!
//! The steps run in the child between fork and exec ([`enter`]); everything they need is computed
//! here first ([`View`]), since that child may not allocate. Whether this kernel allows them at
//! all (unprivileged user namespaces can be disabled: `kernel.unprivileged_userns_clone=0`,
//! `user.max_user_namespaces=0`, or an AppArmor policy such as Ubuntu's since 23.10; a container
//! may mask `/proc`) is probed once per process by starting gsd-lane itself under a view
//! ([`support`]); where it is refused the sandbox falls back to Landlock.

mod enter;

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The hidden first argument that makes gsd-lane the namespace probe (see [`run_if_probe`]).
pub const PROBE_ARG: &str = "__lane-view-probe";

/// Whether the read-only view can be had here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// The probe ran under a view: writes under its root failed with `EROFS` and it was PID 1.
    Available,
    /// The view was refused; the reason, as shown to the user.
    Unavailable(String),
}

/// Everything the child needs to enter the view, computed before the fork.
#[derive(Debug)]
pub struct View {
    read_only: Vec<CString>,
    writable: Vec<CString>,
    cwd: CString,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl View {
    /// A view in which `read_only` (directories) are read-only except `writable` (files or
    /// directories inside them, made writable again), and the lane starts in `cwd` (entered again
    /// after the mounts, so that a working directory inside a root is the read-only one).
    ///
    /// # Errors
    ///
    /// A path holds a NUL byte.
    pub fn new(read_only: &[PathBuf], writable: &[PathBuf], cwd: &Path) -> io::Result<View> {
        let to_c = |path: &Path| {
            CString::new(path.as_os_str().as_bytes())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds NUL"))
        };
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        Ok(View {
            read_only: read_only
                .iter()
                .map(|p| to_c(p))
                .collect::<io::Result<_>>()?,
            writable: writable
                .iter()
                .map(|p| to_c(p))
                .collect::<io::Result<_>>()?,
            cwd: to_c(cwd)?,
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
        })
    }
}

/// Makes `command` start its program under `view`.
pub fn install(command: &mut tokio::process::Command, view: View) {
    enter::install(command, Arc::new(view));
}

/// Whether the view can be had in this process (probed once: gsd-lane started under a view of a
/// private temporary directory).
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(probe)
}

fn probe() -> Support {
    match probe_once() {
        Ok(()) => Support::Available,
        Err(reason) => Support::Unavailable(reason.to_string()),
    }
}

/// Why the namespace probe did not show a working view.
#[derive(Debug)]
enum ProbeError {
    /// The temporary directory (the probe's root) could not be resolved.
    TempDir(io::Error),
    /// gsd-lane's own executable could not be found.
    OwnPath(io::Error),
    /// The view could not be described, or the probe's runtime or wait failed.
    Io(io::Error),
    /// The kernel refused to start the probe in the namespaces.
    Refused(io::Error),
    /// The probe did not finish within its bound.
    TimedOut,
    /// The probe ran but the view did not hold (what it said, controls stripped).
    DidNotHold(String),
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeError::TempDir(err) => write!(f, "the temporary directory: {err}"),
            ProbeError::OwnPath(err) => write!(f, "gsd-lane's own path: {err}"),
            ProbeError::Io(err) => write!(f, "{err}"),
            ProbeError::Refused(err) => f.write_str(&refused(err)),
            ProbeError::TimedOut => f.write_str("the probe did not finish within 10 s"),
            ProbeError::DidNotHold(said) => f.write_str(said),
        }
    }
}

impl std::error::Error for ProbeError {}

fn probe_once() -> Result<(), ProbeError> {
    // The temporary directory itself is the probe's read-only root: under a view that holds,
    // nothing is written anywhere (a probe must not leave a trace: `doctor` writes nothing).
    let dir = std::env::temp_dir()
        .canonicalize()
        .map_err(ProbeError::TempDir)?;
    let exe = std::env::current_exe().map_err(ProbeError::OwnPath)?;
    let view = View::new(std::slice::from_ref(&dir), &[], &dir).map_err(ProbeError::Io)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ProbeError::Io)?;
    runtime.block_on(async {
        let mut command = tokio::process::Command::new(exe);
        command
            .arg(PROBE_ARG)
            .arg(&dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        install(&mut command, view);
        let child = command.spawn().map_err(ProbeError::Refused)?;
        let out =
            tokio::time::timeout(std::time::Duration::from_secs(10), child.wait_with_output())
                .await
                .map_err(|_| ProbeError::TimedOut)?
                .map_err(ProbeError::Io)?;
        if out.status.success() {
            Ok(())
        } else {
            let said = String::from_utf8_lossy(&out.stderr);
            Err(ProbeError::DidNotHold(crate::textsafe::strip_controls(
                said.trim(),
            )))
        }
    })
}

/// The reason shown when the kernel refused a step.
fn refused(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => format!(
            "user namespaces are not allowed here ({err}); see kernel.unprivileged_userns_clone, \
             user.max_user_namespaces or the AppArmor userns policy"
        ),
        Some(libc::ENOSYS | libc::EINVAL) => {
            format!("this kernel lacks a namespace or mount call the view needs ({err})")
        }
        _ => format!("the read-only view could not be entered ({err})"),
    }
}

/// When gsd-lane was started as the namespace probe: checks the view from inside and returns the
/// exit status (0: a write under the root failed with `EROFS` and this process is PID 1 of its
/// namespace).
pub fn run_if_probe() -> Option<u8> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != PROBE_ARG {
        return None;
    }
    let root = PathBuf::from(args.next()?);
    let pid_one = std::process::id() == 1;
    // A fresh name, created exclusively: if the view did not hold, the probe made it and removes
    // it again at once, and says so.
    let probe = root.join(format!(
        "gsd-lane-view-probe-{}-{}",
        std::process::id(),
        crate::clock::now_millis()
    ));
    let write = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe);
    if write.is_ok() {
        let _ = std::fs::remove_file(&probe);
    }
    let read_only = matches!(&write, Err(err) if err.raw_os_error() == Some(libc::EROFS));
    if pid_one && read_only {
        Some(0)
    } else {
        eprintln!(
            "the view did not hold: pid {} in its namespace, a write under the root gave {write:?}",
            std::process::id()
        );
        Some(1)
    }
}
