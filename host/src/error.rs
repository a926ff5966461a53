//! The host's error type and the exit-status policy.
//!
//! Exit statuses: 0 success; 1 a command failed (validation errors, I/O); 2 usage errors and
//! explicitly requested lanes that cannot run; 130 interrupted.

use std::fmt;

/// A command failure: a message for stderr and the exit status.
#[derive(Debug)]
pub struct Failure {
    /// Lower-case message naming what failed, with context.
    pub message: String,
    /// Exit status.
    pub status: u8,
}

impl Failure {
    /// A failure with status 1.
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            status: 1,
        }
    }

    /// A usage error (status 2).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            status: 2,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// Adds context to I/O errors: `with_path("writing", path)`.
pub trait Context<T> {
    /// Wraps the error as a [`Failure`] whose message names the action and the path.
    ///
    /// # Errors
    ///
    /// The wrapped error.
    fn context(self, what: impl FnOnce() -> String) -> Result<T, Failure>;
}

impl<T, E: fmt::Display> Context<T> for Result<T, E> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, Failure> {
        self.map_err(|err| Failure::new(format!("{}: {err}", what())))
    }
}
