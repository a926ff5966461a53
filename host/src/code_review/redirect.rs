//! Stdout sent to stderr for a scope: the review stages print their progress and banner on
//! stdout, while a code-review call's stdout is its one result (the upstream reducer reads a
//! single JSON object). The stages run unchanged; their lines reach the user on stderr.
#![allow(unsafe_code)]

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// While alive, file descriptor 1 is a copy of descriptor 2; dropping it restores stdout.
pub struct StdoutToStderr {
    saved: Option<OwnedFd>,
}

impl StdoutToStderr {
    /// Points descriptor 1 at stderr (a no-op when the descriptors cannot be duplicated: the
    /// progress lines then stay on stdout, which only costs a clean result stream).
    pub fn start() -> StdoutToStderr {
        let _ = std::io::stdout().lock().flush();
        // SAFETY: `dup` only reads the descriptor table; a negative result is handled.
        let copy = unsafe { libc::dup(libc::STDOUT_FILENO) };
        if copy < 0 {
            return StdoutToStderr { saved: None };
        }
        // SAFETY: `copy` is a fresh descriptor this process owns and nothing else refers to.
        let saved = unsafe { OwnedFd::from_raw_fd(copy) };
        // SAFETY: both descriptors are open; `dup2` replaces descriptor 1 atomically.
        if unsafe { libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) } < 0 {
            return StdoutToStderr { saved: None };
        }
        StdoutToStderr { saved: Some(saved) }
    }
}

impl Drop for StdoutToStderr {
    fn drop(&mut self) {
        let _ = std::io::stdout().lock().flush();
        if let Some(saved) = &self.saved {
            // SAFETY: `saved` is open (owned here); `dup2` puts the original stdout back on 1.
            unsafe {
                libc::dup2(saved.as_raw_fd(), libc::STDOUT_FILENO);
            }
        }
    }
}
