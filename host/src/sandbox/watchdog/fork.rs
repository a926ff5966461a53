//! Starting the watchdog as a forked copy of gsd-lane, without a second `exec`.
//!
//! Hand-written on purpose, and one of the few places in the host with `unsafe`: `fork` has no
//! safe wrapper. It is used only while gsd-lane has a single thread (checked first, from
//! `/proc/self/status`), so the child is an ordinary single-threaded copy in which any code may
//! run: no lock can be held by a thread that does not exist there. When gsd-lane already has
//! several threads (a watchdog replaced during a review), the caller starts the watchdog by
//! `exec` instead ([`super::start_watchdog`]).
//!
//! Why: the `exec` of gsd-lane as the watchdog (dynamic loading, Rust start-up, the wait for its
//! "ready") was paid by every command that starts a lane, on the path to its first lane; a fork
//! of a process that has just started costs a small fraction of that. The forked watchdog is
//! non-dumpable from its first instruction (the flag is inherited from gsd-lane, which set it in
//! [`super::enable`]), so no "ready" round trip is needed either.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The name a forked watchdog gives itself (`/proc/<pid>/comm`; an exec'd one is named by its
/// command line, `gsd-lane __lane-watchdog <token>`).
const FORKED_NAME: &std::ffi::CStr = c"gsd-watchdog";

/// A watchdog started by [`start`].
#[derive(Debug)]
pub(super) struct Forked {
    /// Its pid (the leader of a process group of its own).
    pub(super) pid: rustix::process::Pid,
    /// The write end of its input (non-blocking, close-on-exec).
    pub(super) input: File,
}

/// Forks the watchdog when this process has a single thread (`Ok(None)` otherwise: the caller
/// starts one by `exec`). The child reads its input until gsd-lane is gone, kills what is left
/// ([`super::process::watch`]) and ends; it never returns here.
///
/// # Errors
///
/// The pipe or the fork failed.
pub(super) fn start(token: &str) -> io::Result<Option<Forked>> {
    if !single_threaded() {
        return Ok(None);
    }
    let (read_end, write_end) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    // SAFETY: this process has one thread (checked above, and nothing here starts one), so the
    // child is a complete copy in which every function may be called.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        drop(write_end);
        watchdog_child(read_end, token);
    }
    drop(read_end);
    // Also set from this side, so that the group exists before any lane is announced (the
    // child may not have run yet); an error means the child already did it.
    // SAFETY: a plain system call on the child this function just made.
    unsafe { libc::setpgid(pid, pid) };
    let input = File::from(write_end);
    super::sys::non_blocking(&input)?;
    let pid = rustix::process::Pid::from_raw(pid)
        .ok_or_else(|| io::Error::other("fork returned no pid"))?;
    Ok(Some(Forked { pid, input }))
}

/// Whether this process has exactly one thread (`/proc/self/status`); false when that cannot
/// be read.
pub(super) fn single_threaded() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Threads:"))
            .is_some_and(|count| count.trim() == "1")
    })
}

/// The forked child: a process group, name and descriptors of its own (its input on 0,
/// `/dev/null` on 1 and 2, nothing else), the default action for the signals gsd-lane may
/// handle, then the watchdog's life. Never returns.
fn watchdog_child(input: OwnedFd, token: &str) -> ! {
    // SAFETY (every block below): plain system calls on descriptors this process owns, on
    // constants, or on NUL-terminated literals.
    unsafe {
        libc::setpgid(0, 0);
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        libc::prctl(
            libc::PR_SET_NAME,
            FORKED_NAME.as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::dup2(input.as_raw_fd(), 0) < 0 {
            libc::_exit(1);
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::dup2(null, 2);
        }
        if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) < 0 {
            for fd in 3..4096 {
                libc::close(fd);
            }
        }
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(signal, libc::SIG_DFL);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    }
    // Descriptor 0 is the input's copy; `input` itself was closed with the others (forgotten
    // here so that its number, perhaps reused, is not closed twice).
    std::mem::forget(input);
    // SAFETY: descriptor 0 is open (the `dup2` above) and owned by nothing else here.
    let input = unsafe { File::from_raw_fd(0) };
    // A panic must not unwind out of here: it would run, in this copy, the destructors of
    // gsd-lane's frames above the fork (a temporary directory's removal among them).
    let watched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        super::process::watch(input, token);
    }));
    // SAFETY: ends this process without running gsd-lane's exit handlers or flushing its
    // buffers, which belong to the parent.
    unsafe { libc::_exit(i32::from(watched.is_err())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_one_the_kernel_keeps_whole() {
        // `comm` holds 15 bytes and a NUL.
        assert!(FORKED_NAME.to_bytes().len() <= 15);
    }

    #[test]
    fn a_process_with_a_second_thread_is_not_forked() {
        // A thread kept alive while the check runs (the harness may run this test on its main
        // thread, alone).
        let (stop, wait) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || wait.recv());
        assert!(!single_threaded());
        assert!(start("1-00").is_ok_and(|forked| forked.is_none()));
        drop(stop);
        let _ = other.join();
    }
}
