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
//! may mask `/proc`) is probed once per process by a forked child that takes the same steps and,
//! instead of starting a program, checks from inside that it is PID 1 and cannot create a file
//! under its read-only root ([`support`]); where it is refused the sandbox falls back to
//! Landlock.

mod enter;

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

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
    /// Whether the lane's own process checks the view from inside before its program starts
    /// ([`View::prove_at_spawn`]). Read in the child, so it can be cleared between two spawns
    /// of the same command.
    prove: AtomicBool,
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
            prove: AtomicBool::new(false),
        })
    }

    /// Makes the lane's own process prove the view before its program starts, the way the
    /// once-per-process probe does ([`support`]): it must be PID 1 of its namespace, and a write
    /// to every read-only root must be refused with `EROFS` (asked with `access(2)`, which
    /// changes nothing). When it is not, the program does not start and the spawn fails.
    pub fn prove_at_spawn(&self, prove: bool) {
        self.prove.store(prove, Ordering::SeqCst);
    }
}

/// Makes `command` start its program under `view` (shared, so that the caller can still
/// change [`View::prove_at_spawn`] before another spawn of the same command).
pub fn install(command: &mut tokio::process::Command, view: Arc<View>) {
    enter::install(command, view);
}

/// What this process already knows of the view: `None` until the probe ran or a lane's spawn
/// proved it ([`proven_by_a_lane`]).
pub fn known() -> Option<&'static Support> {
    SUPPORT.get()
}

/// Records that a lane's own process proved the view ([`View::prove_at_spawn`]): the same
/// proof as the probe's, so the probe is not needed any more in this process.
pub fn proven_by_a_lane() {
    let _ = SUPPORT.set(Support::Available);
}

/// What the probe, or a lane's spawn, found (once per process).
static SUPPORT: OnceLock<Support> = OnceLock::new();

/// Whether the view can be had in this process (probed once: a forked child enters a view of the
/// temporary directory the way a lane's spawn does, and checks it from inside).
pub fn support() -> &'static Support {
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
    /// The view could not be described, or the probe could not be forked or read.
    Io(io::Error),
    /// The temporary directory's path holds a NUL byte.
    NulPath,
    /// The kernel refused a step of entering the view (its `errno`).
    Refused(io::Error),
    /// The view was entered but did not hold: the probe's PID in its namespace and the `errno`
    /// of its exclusive create under the read-only root (0: it succeeded, and was removed).
    DidNotHold {
        /// `getpid()` inside the view.
        pid: i32,
        /// The create's `errno`.
        write_errno: i32,
    },
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeError::TempDir(err) => write!(f, "the temporary directory: {err}"),
            ProbeError::Io(err) => write!(f, "{err}"),
            ProbeError::NulPath => f.write_str("the temporary directory's path holds NUL"),
            ProbeError::Refused(err) => f.write_str(&refused(err)),
            ProbeError::DidNotHold { pid, write_errno } => write!(
                f,
                "the view did not hold: pid {pid} in its namespace, a write under the root gave {}",
                if *write_errno == 0 {
                    "success (the file was removed again)".to_owned()
                } else {
                    io::Error::from_raw_os_error(*write_errno).to_string()
                }
            ),
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
    let view = View::new(std::slice::from_ref(&dir), &[], &dir).map_err(ProbeError::Io)?;
    // A fresh name, created exclusively: if the view did not hold, the probe made it and
    // removes it again at once, and says so.
    let target = dir.join(format!(
        "gsd-lane-view-probe-{}-{}",
        std::process::id(),
        crate::clock::now_millis()
    ));
    let target = CString::new(target.as_os_str().as_bytes()).map_err(|_| ProbeError::NulPath)?;
    verdict(enter::probe(&view, &target).map_err(ProbeError::Io)?)
}

/// Whether what the probe saw from inside proves the view: refused when a step failed, or when
/// the probe was not PID 1 of its namespace or could create a file under the read-only root.
fn verdict(seen: enter::Seen) -> Result<(), ProbeError> {
    match seen {
        enter::Seen::Refused(errno) => {
            Err(ProbeError::Refused(io::Error::from_raw_os_error(errno)))
        }
        enter::Seen::Entered {
            pid: 1,
            write_errno: libc::EROFS,
        } => Ok(()),
        enter::Seen::Entered { pid, write_errno } => {
            Err(ProbeError::DidNotHold { pid, write_errno })
        }
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// Whether this machine lets an unprivileged process enter the view at all.
    fn namespaces_allowed() -> bool {
        matches!(support(), Support::Available)
    }

    /// A fresh name under `dir`, as the probe makes it.
    fn target(dir: &Path) -> CString {
        CString::new(dir.join("probe-target").as_os_str().as_bytes()).unwrap()
    }

    #[test]
    fn the_probe_proves_a_read_only_root_and_pid_one_from_inside() {
        if !namespaces_allowed() {
            eprintln!("user namespaces are refused here: {:?}", support());
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let view = View::new(std::slice::from_ref(&root), &[], &root).unwrap();
        let seen = enter::probe(&view, &target(&root)).unwrap();
        assert_eq!(
            seen,
            enter::Seen::Entered {
                pid: 1,
                write_errno: libc::EROFS
            }
        );
        assert!(verdict(seen).is_ok());
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    }

    #[test]
    fn a_view_that_does_not_hold_is_refused_and_leaves_no_file() {
        if !namespaces_allowed() {
            return;
        }
        // The root made writable again inside the view: the create succeeds, so the probe must
        // refuse the view (and remove what it made).
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let view = View::new(
            std::slice::from_ref(&root),
            std::slice::from_ref(&root),
            &root,
        )
        .unwrap();
        let seen = enter::probe(&view, &target(&root)).unwrap();
        assert_eq!(
            seen,
            enter::Seen::Entered {
                pid: 1,
                write_errno: 0
            }
        );
        let said = verdict(seen).unwrap_err().to_string();
        assert!(said.contains("the view did not hold"), "{said}");
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
        // Not PID 1: refused too.
        let said = verdict(enter::Seen::Entered {
            pid: 7,
            write_errno: libc::EROFS,
        })
        .unwrap_err()
        .to_string();
        assert!(said.contains("pid 7"), "{said}");
    }

    /// Spawns `true` under `view`, its own process proving the view or not.
    fn spawn_true(view: View, prove: bool) -> io::Result<std::process::ExitStatus> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let view = Arc::new(view);
            view.prove_at_spawn(prove);
            let mut command = tokio::process::Command::new("/bin/true");
            install(&mut command, view);
            command.spawn()?.wait().await
        })
    }

    #[test]
    fn a_lane_s_own_spawn_proves_the_view_or_does_not_start_its_program() {
        if !namespaces_allowed() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        // A view that holds: proven from inside, the program starts.
        let holds = View::new(std::slice::from_ref(&root), &[], &root).unwrap();
        assert!(spawn_true(holds, true).unwrap().success());
        // The root made writable again: the view does not hold, so the proving spawn fails and
        // the program never starts; unproven, the same view would have started it.
        let broken = || {
            View::new(
                std::slice::from_ref(&root),
                std::slice::from_ref(&root),
                &root,
            )
            .unwrap()
        };
        let refused = spawn_true(broken(), true).unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(libc::EEXIST), "{refused}");
        assert!(spawn_true(broken(), false).unwrap().success());
        // `access(2)` only asked: nothing was created under the root either way.
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    }

    #[test]
    fn a_step_that_fails_is_said_with_its_error() {
        if !namespaces_allowed() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().canonicalize().unwrap().join("missing");
        let view = View::new(std::slice::from_ref(&missing), &[], dir.path()).unwrap();
        let seen = enter::probe(&view, &target(&missing)).unwrap();
        assert_eq!(seen, enter::Seen::Refused(libc::ENOENT));
        let said = verdict(seen).unwrap_err().to_string();
        assert!(said.contains("could not be entered"), "{said}");
        let said = verdict(enter::Seen::Refused(libc::EPERM))
            .unwrap_err()
            .to_string();
        assert!(
            said.contains("user namespaces are not allowed here"),
            "{said}"
        );
    }
}
