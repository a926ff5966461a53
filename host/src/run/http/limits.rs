//! The bounds every request is held to (`trust.md` §6.7, §7.7).

use std::time::Duration;

/// Default cap on a response body: 16 MiB (`trust.md` §6.7).
pub const DEFAULT_MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;

/// Default bound on establishing the connection (TCP, and the TLS handshake for `https`): 2 s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Largest response head (status line and header fields) accepted: 64 KiB. An endless status
/// line or header fails once it passes this.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Most header fields in a response head (the engine's fixed limit, `ureq-proto`).
pub const MAX_HEADER_FIELDS: usize = 128;

/// Read-ahead buffer of a connection: 128 KiB. A framing element that does not end within it
/// (an endless chunk-size line) stops the read instead of growing a buffer.
pub const INPUT_BUFFER_BYTES: usize = 128 * 1024;

/// Largest request bound honoured (a longer one is clamped), so deadline arithmetic never
/// overflows.
pub const MAX_REQUEST_BOUND: Duration = Duration::from_secs(24 * 60 * 60);

/// Size and connect bounds applied to every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Largest response body accepted; a larger one fails the request.
    pub max_body_bytes: u64,
    /// Bound on establishing the connection; the effective bound is the smaller of this and the
    /// request's own timeout.
    pub connect_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }
}
