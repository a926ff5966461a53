//! Wording for a request that produced no response: the phase, the bound that stopped it,
//! the conventional errno name of a network error.

use std::io;
use std::time::Duration;

use ureq::Timeout;

use super::limits::{INPUT_BUFFER_BYTES, MAX_HEADER_FIELDS};

/// Describes `error` for the diagnostic stub. `bound` is the request's overall deadline and
/// `connect_bound` the connect bound within it.
pub fn describe(error: &ureq::Error, bound: Duration, connect_bound: Duration, cap: u64) -> String {
    match error {
        ureq::Error::Timeout(which) => {
            let (phase, within) = timeout_phase(*which, bound, connect_bound);
            format!(
                "timeout: {phase} did not finish within the {} ms bound",
                within.as_millis()
            )
        }
        ureq::Error::BodyExceedsLimit(_) => body_too_large(cap),
        ureq::Error::LargeResponseHeader(_, limit) => format!(
            "reading the response head failed: status line and headers exceed {limit} bytes"
        ),
        ureq::Error::Io(io_error) => io_failure(io_error),
        ureq::Error::Protocol(protocol) => {
            let why = protocol.to_string();
            if why.contains("too many headers") {
                format!(
                    "reading the response head failed: more than {MAX_HEADER_FIELDS} header fields"
                )
            } else {
                format!("reading the response failed: malformed HTTP ({why})")
            }
        }
        // The framing parser made no progress with a full read-ahead buffer: a chunk-size line
        // (or another framing element) longer than the buffer.
        ureq::Error::BodyStalled => format!(
            "reading the response body failed: a chunk-size line or other framing element did \
             not end within the {INPUT_BUFFER_BYTES}-byte read buffer"
        ),
        ureq::Error::HostNotFound => "resolving the host failed: no address found".to_owned(),
        ureq::Error::ConnectionFailed => "connect failed: no address accepted".to_owned(),
        ureq::Error::Tls(why) => format!("TLS failed: {why}"),
        ureq::Error::Rustls(why) => format!("TLS failed: {why}"),
        ureq::Error::BadUri(why) => format!("refused: request URL is not usable ({why})"),
        other => format!("the request failed: {other}"),
    }
}

/// The error text of a body over the cap (also used when `Content-Length` claims more).
pub fn body_too_large(cap: u64) -> String {
    format!("response body exceeds {cap} bytes")
}

fn timeout_phase(
    which: Timeout,
    bound: Duration,
    connect_bound: Duration,
) -> (&'static str, Duration) {
    match which {
        Timeout::Connect => ("connecting (TCP and TLS)", connect_bound),
        Timeout::Resolve => ("resolving the host", bound),
        Timeout::SendRequest | Timeout::SendBody => ("sending the request", bound),
        Timeout::RecvResponse => ("reading the response head", bound),
        Timeout::RecvBody => ("reading the response body", bound),
        _ => ("the request", bound),
    }
}

/// An I/O error with its errno name where known; an early close is said in words.
fn io_failure(error: &io::Error) -> String {
    if let Some(tls) = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        return format!("TLS failed: {tls}");
    }
    if error.kind() == io::ErrorKind::UnexpectedEof {
        return format!("the connection closed before the response was complete ({error})");
    }
    if error.kind() == io::ErrorKind::PermissionDenied && error.to_string().starts_with("refused") {
        return error.to_string();
    }
    if matches!(
        error.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    ) {
        return format!("timeout: {error}");
    }
    match os_error_name(error) {
        Some(name) => format!("{name} ({error})"),
        None => format!("I/O error ({error})"),
    }
}

/// The conventional errno name of a network error, where known.
fn os_error_name(error: &io::Error) -> Option<&'static str> {
    use io::ErrorKind as K;
    let by_kind = match error.kind() {
        K::ConnectionRefused => Some("ECONNREFUSED"),
        K::ConnectionReset => Some("ECONNRESET"),
        K::ConnectionAborted => Some("ECONNABORTED"),
        K::NotConnected => Some("ENOTCONN"),
        K::AddrInUse => Some("EADDRINUSE"),
        K::AddrNotAvailable => Some("EADDRNOTAVAIL"),
        K::BrokenPipe => Some("EPIPE"),
        K::PermissionDenied => Some("EACCES"),
        K::TimedOut => Some("ETIMEDOUT"),
        _ => None,
    };
    by_kind.or_else(|| raw_os_error_name(error))
}

#[cfg(unix)]
fn raw_os_error_name(error: &io::Error) -> Option<&'static str> {
    match error.raw_os_error()? {
        libc::ENETUNREACH => Some("ENETUNREACH"),
        libc::EHOSTUNREACH => Some("EHOSTUNREACH"),
        libc::ENETDOWN => Some("ENETDOWN"),
        libc::EHOSTDOWN => Some("EHOSTDOWN"),
        libc::ENETRESET => Some("ENETRESET"),
        libc::ECONNREFUSED => Some("ECONNREFUSED"),
        libc::ECONNRESET => Some("ECONNRESET"),
        libc::ETIMEDOUT => Some("ETIMEDOUT"),
        libc::EMFILE => Some("EMFILE"),
        libc::ENFILE => Some("ENFILE"),
        libc::ENOBUFS => Some("ENOBUFS"),
        _ => None,
    }
}

#[cfg(not(unix))]
fn raw_os_error_name(_error: &io::Error) -> Option<&'static str> {
    None
}
