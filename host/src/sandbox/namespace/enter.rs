//! Entering the read-only view, in the child between fork and exec.
//!
//! Hand-written on purpose, and the one place in the host with `unsafe`: the steps must run in
//! the forked child of a multi-threaded process (user namespaces cannot be entered by a process
//! with several threads), where only async-signal-safe calls are allowed: raw system calls through
//! `libc`, no allocation, no lock. Every buffer was made before the fork ([`View`]).
//!
//! The steps, in order (a failure makes the spawn fail with that error, and the lane does not
//! start):
//! 1. new user, mount and PID namespaces; the user's own uid and gid map to themselves;
//! 2. every mount made private, so nothing propagates back;
//! 3. each root bind-mounted onto itself and made read-only recursively (`mount_setattr`, Linux
//!    5.12), then each writable path inside it bind-mounted onto itself and made writable again;
//! 4. a fork: the child is PID 1 of the new PID namespace and becomes the lane; this process
//!    closes every descriptor, waits for it and ends the way it ended (exit status or signal);
//! 5. in the lane: `/proc` of its own namespace mounted, its working directory entered again
//!    (so that it is the read-only one), death with its parent asked for; when the view was not
//!    probed in this process yet, the proof of the probe taken from inside (PID 1, and `EROFS`
//!    from `access(2)` asking to write each read-only root: [`View::prove_at_spawn`]);
//!    no-new-privileges set, and every capability dropped (ambient, bounding, effective,
//!    permitted, inheritable).

#![allow(unsafe_code)]

use std::ffi::CStr;
use std::io;
use std::sync::Arc;

use super::View;

/// `MOUNT_ATTR_RDONLY` of `<linux/mount.h>` (not in the libc crate).
const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// `struct mount_attr` of `<linux/mount.h>`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3`: two data structs, 64 capabilities.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Installs the steps as `command`'s pre-exec hook.
pub(super) fn install(command: &mut tokio::process::Command, view: Arc<View>) {
    // SAFETY: the hook only makes async-signal-safe system calls on memory `view` owns (made
    // before the fork, kept alive by the `Arc` the closure holds); it neither allocates nor takes
    // a lock.
    unsafe {
        command.pre_exec(move || enter(&view));
    }
}

/// The steps of the module documentation. Returns in the lane (PID 1 of the new namespace),
/// ready for exec; never returns in the intermediate process.
fn enter(view: &View) -> io::Result<()> {
    // SAFETY (every block below): plain system calls on NUL-terminated strings and buffers that
    // `view` owns, or on constants.
    check(unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID) })?;
    write_file(c"/proc/self/setgroups", b"deny", true)?;
    write_file(c"/proc/self/uid_map", &view.uid_map, false)?;
    write_file(c"/proc/self/gid_map", &view.gid_map, false)?;
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    })?;
    for root in &view.read_only {
        bind(root, libc::MS_REC)?;
        set_read_only(root, true)?;
    }
    for path in &view.writable {
        bind(path, 0)?;
        set_read_only(path, false)?;
    }
    // SAFETY: fork in the child of a fork: this process is single-threaded.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid > 0 {
        mirror(pid);
    }
    check(unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    })?;
    check(unsafe { libc::chdir(view.cwd.as_ptr()) })?;
    check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) })?;
    if view.prove.load(std::sync::atomic::Ordering::SeqCst) {
        prove(view)?;
    }
    drop_privileges()
}

/// The probe's proof, taken by the lane's own process (PID 1 of its namespace): every read-only
/// root refuses a write with `EROFS`. `access(2)` only asks, so a view that did not hold changes
/// nothing either. Any other answer fails the spawn (the program does not start; the caller's
/// probe then decides).
fn prove(view: &View) -> io::Result<()> {
    if unsafe { libc::getpid() } != 1 {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    for root in &view.read_only {
        let status = unsafe {
            libc::syscall(
                libc::SYS_faccessat,
                libc::AT_FDCWD,
                root.as_ptr(),
                libc::W_OK,
            )
        };
        if status == 0 {
            // Writable: the view did not hold.
            return Err(io::Error::from_raw_os_error(libc::EEXIST));
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EROFS) {
            return Err(err);
        }
    }
    Ok(())
}

/// Bind-mounts `path` onto itself (`extra`: `MS_REC` for a whole tree).
fn bind(path: &CStr, extra: libc::c_ulong) -> io::Result<()> {
    check(unsafe {
        libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | extra,
            std::ptr::null(),
        )
    })
}

/// Makes the mounts at and below `path` read-only (`true`) or writable again (`false`).
fn set_read_only(path: &CStr, read_only: bool) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let flags = libc::AT_RECURSIVE | libc::AT_NO_AUTOMOUNT | libc::AT_SYMLINK_NOFOLLOW;
    // SAFETY: `attr` lives on this stack frame; its size is passed.
    let status = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            std::ptr::addr_of!(attr),
            std::mem::size_of::<MountAttr>(),
        )
    };
    if status < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Writes `bytes` to `path` (a `/proc` control file); `optional`: a missing file is fine.
fn write_file(path: &CStr, bytes: &[u8], optional: bool) -> io::Result<()> {
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        let err = io::Error::last_os_error();
        return if optional && err.raw_os_error() == Some(libc::ENOENT) {
            Ok(())
        } else {
            Err(err)
        };
    }
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let err = io::Error::last_os_error();
    unsafe { libc::close(fd) };
    if usize::try_from(written).ok() == Some(bytes.len()) {
        Ok(())
    } else {
        Err(err)
    }
}

/// No-new-privileges, then no capability of any kind (a lane mapped to uid 0 would otherwise keep
/// them across exec and could remount the view).
fn drop_privileges() -> io::Result<()> {
    check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })?;
    // Older kernels lack ambient capabilities: nothing to clear then.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    for capability in 0..64 {
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0) } < 0 {
            // EINVAL: past the kernel's last capability.
            break;
        }
    }
    let header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let none = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    let status =
        unsafe { libc::syscall(libc::SYS_capset, std::ptr::addr_of!(header), none.as_ptr()) };
    if status < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The intermediate process: closes every descriptor (so that the pipes and the spawn's error
/// channel see only the lane), waits for the lane and ends as it ended.
fn mirror(lane: libc::pid_t) -> ! {
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) < 0 {
            for fd in 0..4096 {
                libc::close(fd);
            }
        }
        let mut status: libc::c_int = 0;
        loop {
            let waited = libc::waitpid(lane, &mut status, 0);
            if waited == lane {
                break;
            }
            if waited < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// A system call's `-1` as the error it set.
fn check(status: libc::c_int) -> io::Result<()> {
    if status < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// What the probe's lane process saw, as it sent it back (see [`probe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    /// A step of entering the view failed with this `errno`.
    Refused(i32),
    /// The view was entered: the process's PID in its namespace, and the `errno` of an exclusive
    /// create under the root (0: the create succeeded, so the view did not hold).
    Entered {
        /// `getpid()` inside the view (1 when the PID namespace holds).
        pid: i32,
        /// The create's `errno` (`EROFS` when the root is read-only).
        write_errno: i32,
    },
}

/// Longest the probe may take before it is killed.
const PROBE_TIMEOUT_MS: libc::c_int = 10_000;

/// Enters `view` in a forked child, exactly as a lane's spawn does ([`enter`]), and instead of
/// starting a program checks from inside that it is PID 1 and that an exclusive create of
/// `target` (a fresh name under the view's root) fails; a create that succeeded is undone at
/// once. Nothing is executed: the probe costs a fork and the namespace set-up, not a second
/// start of gsd-lane.
///
/// # Errors
///
/// The pipe or the fork failed, the probe said nothing, or it did not end within 10 s (then it
/// is killed).
pub(super) fn probe(view: &View, target: &CStr) -> io::Result<Seen> {
    let mut ends = [0 as libc::c_int; 2];
    // SAFETY (every block below): plain system calls on buffers this frame owns, or on
    // descriptors and processes it created.
    check(unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) })?;
    let [read_end, write_end] = ends;
    // SAFETY: the child only makes async-signal-safe system calls on memory made before the fork
    // (`view`, `target`, the stack) and ends with `_exit`; it neither allocates nor takes a lock.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let words = match enter(view) {
            Err(err) => [1, err.raw_os_error().unwrap_or(0), 0],
            Ok(()) => {
                let me = unsafe { libc::getpid() };
                let fd = unsafe {
                    libc::open(
                        target.as_ptr(),
                        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
                        0o600,
                    )
                };
                let write_errno = if fd >= 0 {
                    unsafe {
                        libc::close(fd);
                        libc::unlink(target.as_ptr());
                    }
                    0
                } else {
                    io::Error::last_os_error().raw_os_error().unwrap_or(0)
                };
                [2, me, write_errno]
            }
        };
        unsafe {
            libc::write(
                write_end,
                words.as_ptr().cast(),
                std::mem::size_of_val(&words),
            );
            libc::_exit(0)
        }
    }
    let forked = if pid < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(pid)
    };
    unsafe { libc::close(write_end) };
    let said = forked.and_then(|pid| {
        let said = read_words(read_end);
        if said.is_err() {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let mut status = 0;
        while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
        said
    });
    unsafe { libc::close(read_end) };
    let words = said?;
    Ok(match words {
        [1, errno, _] => Seen::Refused(errno),
        [_, pid, write_errno] => Seen::Entered { pid, write_errno },
    })
}

/// The three words the probe's child wrote on `fd`, waiting at most [`PROBE_TIMEOUT_MS`].
fn read_words(fd: libc::c_int) -> io::Result<[i32; 3]> {
    let mut bytes = [0u8; 12];
    let mut got = 0;
    while got < bytes.len() {
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ready = unsafe { libc::poll(&mut poll, 1, PROBE_TIMEOUT_MS) };
        if ready < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if ready == 0 {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the probe did not finish within 10 s",
            ));
        }
        let rest = bytes.get_mut(got..).unwrap_or_default();
        let n = unsafe { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) };
        match n {
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the probe ended without saying what it saw",
                ))
            }
            n if n < 0 => {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(err);
                }
            }
            n => got += usize::try_from(n).unwrap_or(0),
        }
    }
    let word = |i: usize| {
        let mut four = [0u8; 4];
        four.copy_from_slice(bytes.get(i * 4..i * 4 + 4).unwrap_or(&[0; 4]));
        i32::from_ne_bytes(four)
    };
    Ok([word(0), word(1), word(2)])
}
