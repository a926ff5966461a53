//! The error a handler returns when it could not carry out an invocation at all.

use std::fmt;

/// What kind of failure a [`HandlerError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandlerErrorKind {
    /// The lane's plan does not fit this handler (wrong transport, missing fields).
    MalformedLane,
    /// An I/O operation of the host failed.
    Io,
    /// A lock could not be taken in time.
    Lock,
    /// Anything else.
    Other,
}

/// A failure to carry out an invocation, with a message naming what went wrong.
///
/// `#[non_exhaustive]` (it may gain context, such as a source): build it with
/// [`HandlerError::new`] or [`HandlerError::malformed`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HandlerError {
    /// The kind of failure.
    pub kind: HandlerErrorKind,
    /// Lower-case message naming the thing that failed.
    pub message: String,
}

impl HandlerError {
    /// Builds an error of `kind` with `message`.
    pub fn new(kind: HandlerErrorKind, message: impl Into<String>) -> HandlerError {
        HandlerError {
            kind,
            message: message.into(),
        }
    }

    /// The plan does not fit the handler.
    pub fn malformed(message: impl Into<String>) -> HandlerError {
        HandlerError::new(HandlerErrorKind::MalformedLane, message)
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HandlerError {}
