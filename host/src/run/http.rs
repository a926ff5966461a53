//! Bounded HTTP requests to a verified origin.
//!
//! Every request an HTTP lane makes (model discovery, the chat request, the `http-reachable`
//! probe) goes through [`send`], which enforces `trust.md` §6.7 and §7.7 and `invocation.md` §7
//! and §9:
//!
//! - **Every byte to the verified origin.** The request URL is parsed again and its scheme, host
//!   and port must equal the verified [`Origin`]. A URL with userinfo (`host@other`), a scheme
//!   other than `http`/`https`, or any other origin is refused before anything is resolved or
//!   connected ([`check_request_url`]).
//! - **No redirects.** A 3xx is returned as a [`HttpReport::Response`] with its status and body.
//! - **No proxies.** No proxy is configured and none is taken from the environment
//!   (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, …). Name resolution is limited to the verified
//!   origin's `host:port`, so a connection to any other address cannot even be attempted.
//! - **No credentials.** No `Authorization` header is ever sent; `POST` carries
//!   `Content-Type: application/json`.
//! - **One deadline.** `HttpRequest::timeout` covers name resolution, connect, send and the full
//!   body read; connecting alone is also bounded by [`HttpLimits::connect_timeout`].
//! - **Bounded memory.** The body is capped at [`HttpLimits::max_body_bytes`] whatever
//!   `Content-Length` claims; the status line, header lines, header count and chunk-size lines
//!   are capped too. The body is decoded as lossy UTF-8.
//! - Non-2xx statuses are responses, not errors: an OpenAI-compatible server puts its error JSON
//!   in the body, which is returned verbatim.
//!
//! Two engines sit behind the same checks. Plain `http` — every shipped lane, a local server —
//! uses the small HTTP/1.1 client in this module, where every buffer is bounded. `https` uses
//! `ureq` 2 (which brings TLS) configured with redirects 0, no proxy, no environment proxy,
//! no connection pool and a resolver that only resolves the verified origin. `ureq` 2's chunked
//! decoder collects a chunk-size line with no length limit (`src/chunked/decoder.rs`,
//! `read_chunk_size`), so over `https` a hostile server can make it grow until the deadline;
//! the local client caps that line at 4 KiB.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use gsd_lane_sdk::{HttpMethod, HttpReport, HttpRequest};
use url::Url;

/// Default cap on a response body: 16 MiB (`trust.md` §6.7).
pub const DEFAULT_MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;

/// Default bound on establishing the TCP connection: 2 s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Longest status or header line accepted, CRLF included.
const MAX_LINE_BYTES: usize = 8 * 1024;
/// Longest response head (status line plus headers, or the trailer section) accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most header fields accepted in one response head.
const MAX_HEADER_COUNT: usize = 128;
/// Longest chunk-size line (size plus extensions) accepted.
const MAX_CHUNK_LINE_BYTES: usize = 4 * 1024;
/// Most interim (1xx) responses skipped before the final one.
const MAX_INTERIM_RESPONSES: usize = 8;
/// Most resolved addresses tried.
const MAX_ADDRESSES: usize = 16;
/// Largest request bound honoured (a longer one is clamped), so deadline arithmetic never
/// overflows.
const MAX_REQUEST_BOUND: Duration = Duration::from_secs(24 * 60 * 60);
/// Size of the read buffer and of each body read.
const READ_CHUNK: usize = 8 * 1024;
/// `User-Agent` sent with every request.
const USER_AGENT: &str = concat!("gsd-lane/", env!("CARGO_PKG_VERSION"));

/// The scheme, host and port a lane's requests are allowed to reach.
///
/// Built only by [`Origin::of`], so it always names an `http` or `https` origin with a host.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// The origin of an absolute `http`/`https` URL.
    ///
    /// Scheme and host are compared as the URL parser normalizes them (lower case, IDNA, IP
    /// literals canonical, IPv6 in brackets); the port is the explicit one or the scheme's
    /// default (80, 443). Userinfo, path, query and fragment are not part of the origin.
    ///
    /// # Errors
    ///
    /// A description when the text is not an absolute URL, its scheme is not `http` or `https`,
    /// or it has no host.
    pub fn of(url_text: &str) -> Result<Origin, String> {
        let url = Url::parse(url_text).map_err(|e| format!("not an absolute URL ({e})"))?;
        Origin::of_url(&url)
    }

    fn of_url(url: &Url) -> Result<Origin, String> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(format!("scheme '{scheme}' is not http or https"));
        }
        let host = match url.host_str() {
            Some(host) if !host.is_empty() => host,
            _ => return Err("URL has no host".to_owned()),
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| "URL has no port".to_owned())?;
        Ok(Origin {
            scheme: scheme.to_owned(),
            host: host.to_owned(),
            port,
        })
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// Host as the URL parser normalizes it (IPv6 literals keep their brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Explicit port, or the scheme's default.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `host:port`, the only name the resolver will look up.
    fn netloc(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// Size and connect bounds applied to every request (`trust.md` §7.7).
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

/// Checks a request URL against the verified origin, without any network activity.
///
/// This is the `trust.md` §6.7 re-parse: the caller joins the verified host and a lane path by
/// plain concatenation, and the result must still name the verified origin. [`send`] applies it
/// to every request; a planner can apply it ahead of time to report `malformed_lane`.
///
/// # Errors
///
/// A description starting with `refused:` when the URL does not parse, is not `http`/`https`,
/// carries userinfo, or its scheme, host or port differ from `verified`.
pub fn check_request_url(url_text: &str, verified: &Origin) -> Result<Url, String> {
    let url = Url::parse(url_text)
        .map_err(|e| format!("refused: request URL is not an absolute URL ({e})"))?;
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "refused: request URL scheme '{scheme}' is not http or https"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "refused: request URL carries userinfo ('…@'), which can move the authority".to_owned(),
        );
    }
    let origin = Origin::of_url(&url).map_err(|e| format!("refused: {e}"))?;
    if origin != *verified {
        return Err(format!(
            "refused: request origin {origin} differs from the verified origin {verified}"
        ));
    }
    Ok(url)
}

/// Makes one bounded request to the verified origin and reports what came back.
///
/// Nothing is resolved, connected or sent when [`check_request_url`] refuses the URL. Never
/// panics, never waits past `request.timeout` (plus scheduling noise), never holds more than
/// `limits.max_body_bytes` of body.
pub fn send(request: &HttpRequest, verified: &Origin, limits: &HttpLimits) -> HttpReport {
    send_observed(request, verified, limits).0
}

/// [`send`], also returning the response's `Retry-After` value (trimmed, as sent), which the
/// lane runner's rate-limit retry honours (`run::rate_limit`).
pub fn send_observed(
    request: &HttpRequest,
    verified: &Origin,
    limits: &HttpLimits,
) -> (HttpReport, Option<String>) {
    send_with(None, request, verified, limits)
}

/// Which client carries a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    /// The bounded HTTP/1.1 client of this module (plain `http`).
    Wire,
    /// `ureq` 2, configured for §6.7 (`https`).
    Ureq,
}

impl Engine {
    fn for_url(url: &Url) -> Engine {
        if url.scheme() == "https" {
            Engine::Ureq
        } else {
            Engine::Wire
        }
    }
}

/// [`send`] with the engine optionally forced (tests run every scenario through both).
fn send_with(
    engine: Option<Engine>,
    request: &HttpRequest,
    verified: &Origin,
    limits: &HttpLimits,
) -> (HttpReport, Option<String>) {
    let url = match check_request_url(&request.url, verified) {
        Ok(url) => url,
        Err(error) => return (HttpReport::Failed { error }, None),
    };
    let engine = engine.unwrap_or_else(|| Engine::for_url(&url));
    let deadline = Deadline::starting_now(request.timeout);
    if deadline.remaining().is_none() {
        let error = "timeout: the request bound is 0 ms; nothing was sent".to_owned();
        return (HttpReport::Failed { error }, None);
    }
    let outcome = match engine {
        Engine::Wire => wire::exchange(request, &url, verified, limits, &deadline),
        Engine::Ureq => catch_unwind(AssertUnwindSafe(|| {
            via_ureq::exchange(request, &url, verified, limits, &deadline)
        }))
        .unwrap_or_else(|_| {
            Err(Failure::Message(
                "the HTTP client failed internally (panic); no response".to_owned(),
            ))
        }),
    };
    match outcome {
        Ok((status, retry_after, bytes)) => (
            HttpReport::Response {
                status,
                body: lossy_utf8(bytes),
            },
            retry_after,
        ),
        Err(failure) => (
            HttpReport::Failed {
                error: failure.describe(),
            },
            None,
        ),
    }
}

/// Decodes without copying when the bytes are valid UTF-8.
fn lossy_utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The one deadline of a request.
#[derive(Debug, Clone, Copy)]
struct Deadline {
    end: Instant,
    bound: Duration,
}

impl Deadline {
    fn starting_now(bound: Duration) -> Deadline {
        let bound = bound.min(MAX_REQUEST_BOUND);
        let now = Instant::now();
        Deadline {
            end: now.checked_add(bound).unwrap_or(now),
            bound,
        }
    }

    /// Time left, `None` once the deadline has passed.
    fn remaining(&self) -> Option<Duration> {
        self.end
            .checked_duration_since(Instant::now())
            .filter(|left| !left.is_zero())
    }

    fn remaining_io(&self) -> io::Result<Duration> {
        self.remaining().ok_or_else(timed_out)
    }
}

fn timed_out() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "request deadline elapsed")
}

/// Why a request produced no response.
#[derive(Debug)]
enum Failure {
    /// An I/O error during `phase`; timeouts are reported against `bound`.
    Io {
        phase: String,
        bound: Duration,
        error: io::Error,
    },
    /// Anything else, already worded.
    Message(String),
}

impl Failure {
    fn io(phase: impl Into<String>, bound: Duration, error: io::Error) -> Failure {
        Failure::Io {
            phase: phase.into(),
            bound,
            error,
        }
    }

    fn too_large(cap: u64) -> Failure {
        Failure::Message(format!("response body exceeds {cap} bytes"))
    }

    fn describe(self) -> String {
        match self {
            Failure::Message(text) => text,
            Failure::Io {
                phase,
                bound,
                error,
            } => {
                if is_timeout(&error) {
                    format!(
                        "timeout: {phase} did not finish within the {} ms bound",
                        bound.as_millis()
                    )
                } else {
                    match os_error_name(&error) {
                        Some(name) => format!("{phase} failed: {name} ({error})"),
                        None => format!("{phase} failed: {error}"),
                    }
                }
            }
        }
    }
}

fn is_timeout(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
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

/// Resolves `netloc` (`host:port`) within the deadline.
///
/// IP literals are parsed in place. A name is looked up on a helper thread so a slow resolver
/// cannot outlive the deadline; a late answer is dropped with the thread.
fn resolve_bounded(netloc: &str, deadline: &Deadline) -> io::Result<Vec<SocketAddr>> {
    if let Ok(addr) = netloc.parse::<SocketAddr>() {
        return Ok(vec![addr]);
    }
    let wait = deadline.remaining_io()?;
    let (tx, rx) = mpsc::channel();
    let name = netloc.to_owned();
    thread::Builder::new()
        .name("gsd-lane-resolve".to_owned())
        .spawn(move || {
            let found = name
                .to_socket_addrs()
                .map(|addrs| addrs.take(MAX_ADDRESSES).collect::<Vec<_>>());
            // The receiver may have given up at the deadline; nothing else to do then.
            let _ = tx.send(found);
        })?;
    let addrs = match rx.recv_timeout(wait) {
        Ok(found) => found?,
        Err(RecvTimeoutError::Timeout) => return Err(timed_out()),
        Err(RecvTimeoutError::Disconnected) => {
            return Err(io::Error::other("name resolution ended without an answer"))
        }
    };
    if addrs.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no address for {netloc}"),
        ));
    }
    Ok(addrs)
}

/// Reads into `sink` until EOF, or exactly `exact` bytes when given.
///
/// Never reads more than one byte past the sink's room, so an oversized body fails after at most
/// `cap + 1` bytes whatever the server claimed.
fn pump<R: Read>(
    reader: &mut R,
    sink: &mut CappedBody,
    exact: Option<u64>,
    bound: Duration,
) -> Result<(), Failure> {
    const PHASE: &str = "reading the response body";
    let mut buf = [0u8; READ_CHUNK];
    let mut left = exact;
    loop {
        let mut want = READ_CHUNK.min(sink.room().saturating_add(1));
        if let Some(left) = left {
            if left == 0 {
                return Ok(());
            }
            want = want.min(usize::try_from(left).unwrap_or(usize::MAX));
        }
        let n = match reader.read(&mut buf[..want]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::io(PHASE, bound, e)),
        };
        if n == 0 {
            return match left {
                None => Ok(()),
                Some(missing) => Err(Failure::Message(format!(
                    "{PHASE} failed: connection closed with {missing} body bytes still expected"
                ))),
            };
        }
        sink.push(&buf[..n])?;
        if let Some(left) = left.as_mut() {
            *left = left.saturating_sub(n as u64);
        }
    }
}

/// A body buffer that never grows past its cap.
#[derive(Debug)]
struct CappedBody {
    bytes: Vec<u8>,
    cap: usize,
    cap_claimed: u64,
}

impl CappedBody {
    fn new(max_body_bytes: u64) -> CappedBody {
        CappedBody {
            bytes: Vec::new(),
            cap: usize::try_from(max_body_bytes).unwrap_or(usize::MAX),
            cap_claimed: max_body_bytes,
        }
    }

    fn room(&self) -> usize {
        self.cap.saturating_sub(self.bytes.len())
    }

    /// Fails when `len` more bytes would not fit.
    fn check_fits(&self, len: u64) -> Result<(), Failure> {
        if len > self.room() as u64 {
            Err(Failure::too_large(self.cap_claimed))
        } else {
            Ok(())
        }
    }

    fn push(&mut self, data: &[u8]) -> Result<(), Failure> {
        self.check_fits(data.len() as u64)?;
        let needed = self.bytes.len() + data.len();
        if needed > self.bytes.capacity() {
            // Grow geometrically but never past the cap.
            let target = self
                .bytes
                .capacity()
                .saturating_mul(2)
                .max(needed)
                .min(self.cap);
            self.bytes
                .try_reserve_exact(target - self.bytes.len())
                .map_err(|e| Failure::Message(format!("response body: {e}")))?;
        }
        self.bytes.extend_from_slice(data);
        Ok(())
    }

    fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// Parses a `Content-Length` value (a list of identical values is tolerated).
fn parse_content_length(value: &str) -> Option<u64> {
    let mut found: Option<u64> = None;
    for part in value.split(',') {
        let part = part.trim();
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n = part.parse::<u64>().ok()?;
        match found {
            Some(previous) if previous != n => return None,
            _ => found = Some(n),
        }
    }
    found
}

/// The bounded HTTP/1.1 client used for plain `http`.
mod wire {
    use super::*;

    /// How the response body is delimited.
    #[derive(Debug, Default)]
    struct Framing {
        content_length: Option<u64>,
        transfer_encoding: Option<String>,
        retry_after: Option<String>,
    }

    /// A TCP stream whose every read and write is bounded by the request deadline.
    struct TimedStream {
        stream: TcpStream,
        deadline: Deadline,
    }

    impl Read for TimedStream {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let left = self.deadline.remaining_io()?;
            self.stream.set_read_timeout(Some(left))?;
            self.stream.read(buf).map_err(normalize_timeout)
        }
    }

    impl Write for TimedStream {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let left = self.deadline.remaining_io()?;
            self.stream.set_write_timeout(Some(left))?;
            self.stream.write(buf).map_err(normalize_timeout)
        }

        fn flush(&mut self) -> io::Result<()> {
            self.stream.flush()
        }
    }

    /// A socket timeout shows up as `WouldBlock` on Unix; it is a timeout here.
    fn normalize_timeout(error: io::Error) -> io::Error {
        if error.kind() == io::ErrorKind::WouldBlock {
            timed_out()
        } else {
            error
        }
    }

    pub(super) fn exchange(
        request: &HttpRequest,
        url: &Url,
        origin: &Origin,
        limits: &HttpLimits,
        deadline: &Deadline,
    ) -> Result<(u16, Option<String>, Vec<u8>), Failure> {
        let body: &[u8] = match request.method {
            HttpMethod::Get => &[],
            HttpMethod::Post => request.json_body.as_deref().unwrap_or("").as_bytes(),
        };
        let head = request_head(request.method, url, body.len())?;
        let netloc = origin.netloc();
        let bound = deadline.bound;

        let addrs = resolve_bounded(&netloc, deadline)
            .map_err(|e| Failure::io(format!("resolving {netloc}"), bound, e))?;
        let connect_bound = limits.connect_timeout.min(bound);
        let connect_end = Instant::now()
            .checked_add(connect_bound)
            .unwrap_or(deadline.end)
            .min(deadline.end);
        let stream = connect(&addrs, connect_end)
            .map_err(|e| Failure::io(format!("connect to {netloc}"), connect_bound, e))?;
        // Best effort: only affects latency.
        let _ = stream.set_nodelay(true);

        let mut timed = TimedStream {
            stream,
            deadline: *deadline,
        };
        timed
            .write_all(&head)
            .and_then(|()| timed.write_all(body))
            .and_then(|()| timed.flush())
            .map_err(|e| Failure::io("sending the request", bound, e))?;

        let mut reader = BufReader::with_capacity(READ_CHUNK, timed);
        let (status, mut framing) = read_head(&mut reader, bound)?;
        let retry_after = framing.retry_after.take();
        let mut sink = CappedBody::new(limits.max_body_bytes);
        read_body(&mut reader, status, framing, &mut sink, bound)?;
        Ok((status, retry_after, sink.into_bytes()))
    }

    /// Request line and headers. `Connection: close` makes the server end the body by closing.
    pub(super) fn request_head(
        method: HttpMethod,
        url: &Url,
        body_len: usize,
    ) -> Result<Vec<u8>, Failure> {
        let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
        let target = if target.is_empty() { "/" } else { target };
        let host = url.host_str().unwrap_or("");
        let printable = |text: &str| text.bytes().all(|b| (0x21..=0x7e).contains(&b));
        if host.is_empty() || !printable(target) || !printable(host) {
            return Err(Failure::Message(
                "refused: request URL has characters that cannot go on the request line".to_owned(),
            ));
        }
        let host_header = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        let head = match method {
            HttpMethod::Get => format!(
                "GET {target} HTTP/1.1\r\nHost: {host_header}\r\nUser-Agent: {USER_AGENT}\r\n\
                 Accept: */*\r\nConnection: close\r\n\r\n"
            ),
            HttpMethod::Post => format!(
                "POST {target} HTTP/1.1\r\nHost: {host_header}\r\nUser-Agent: {USER_AGENT}\r\n\
                 Accept: */*\r\nConnection: close\r\nContent-Type: application/json\r\n\
                 Content-Length: {body_len}\r\n\r\n"
            ),
        };
        Ok(head.into_bytes())
    }

    /// Tries each address in turn until `connect_end`; an address that is not the last gets half
    /// the time left, so one unresponsive address cannot starve the others.
    fn connect(addrs: &[SocketAddr], connect_end: Instant) -> io::Result<TcpStream> {
        let mut last_error = None;
        for (index, addr) in addrs.iter().enumerate() {
            let left = connect_end
                .checked_duration_since(Instant::now())
                .filter(|left| !left.is_zero())
                .ok_or_else(timed_out)?;
            let share = if index + 1 < addrs.len() {
                left / 2
            } else {
                left
            };
            match TcpStream::connect_timeout(addr, share.max(Duration::from_millis(1))) {
                Ok(stream) => return Ok(stream),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error
            .unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address to connect to")))
    }

    /// Reads one line ending in LF, without the CRLF. `None` on EOF before its first byte.
    fn read_line<R: BufRead>(
        reader: &mut R,
        max: usize,
        phase: &str,
        bound: Duration,
    ) -> Result<Option<Vec<u8>>, Failure> {
        let mut line = Vec::new();
        loop {
            let available = match reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Failure::io(phase, bound, e)),
            };
            if available.is_empty() {
                if line.is_empty() {
                    return Ok(None);
                }
                return Err(Failure::Message(format!(
                    "{phase} failed: connection closed in the middle of a line"
                )));
            }
            let (take, complete) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            if line.len() + take > max {
                return Err(Failure::Message(format!(
                    "{phase} failed: line longer than {max} bytes"
                )));
            }
            line.extend_from_slice(&available[..take]);
            reader.consume(take);
            if complete {
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(line));
            }
        }
    }

    /// Status line and headers of the final response (interim 1xx responses are skipped).
    fn read_head<R: BufRead>(reader: &mut R, bound: Duration) -> Result<(u16, Framing), Failure> {
        const PHASE: &str = "reading the response head";
        for _ in 0..=MAX_INTERIM_RESPONSES {
            let mut budget = MAX_HEAD_BYTES;
            let line = read_line(reader, MAX_LINE_BYTES, PHASE, bound)?.ok_or_else(|| {
                Failure::Message(format!(
                    "{PHASE} failed: connection closed before a response arrived"
                ))
            })?;
            budget = budget.saturating_sub(line.len() + 2);
            let status = parse_status_line(&line)?;
            let framing = read_fields(reader, &mut budget, PHASE, bound)?;
            if (100..200).contains(&status) && status != 101 {
                continue;
            }
            return Ok((status, framing));
        }
        Err(Failure::Message(format!(
            "{PHASE} failed: more than {MAX_INTERIM_RESPONSES} interim (1xx) responses"
        )))
    }

    /// `HTTP/1.x SSS[ reason]` → `SSS`.
    pub(super) fn parse_status_line(line: &[u8]) -> Result<u16, Failure> {
        let invalid = || {
            let shown: String = String::from_utf8_lossy(line).chars().take(64).collect();
            Failure::Message(format!(
                "reading the response head failed: not an HTTP/1.x status line: {:?}",
                shown
            ))
        };
        let version_ok = line.len() >= 12
            && line.starts_with(b"HTTP/1.")
            && line.get(7).is_some_and(u8::is_ascii_digit)
            && line.get(8) == Some(&b' ');
        let digits = line.get(9..12).ok_or_else(invalid)?;
        let rest_ok = matches!(line.get(12), None | Some(b' '));
        if !version_ok || !rest_ok || !digits.iter().all(u8::is_ascii_digit) {
            return Err(invalid());
        }
        let status = digits
            .iter()
            .fold(0u16, |acc, d| acc * 10 + u16::from(d - b'0'));
        if status < 100 {
            return Err(invalid());
        }
        Ok(status)
    }

    /// Header fields up to the empty line; keeps only what framing needs.
    fn read_fields<R: BufRead>(
        reader: &mut R,
        budget: &mut usize,
        phase: &str,
        bound: Duration,
    ) -> Result<Framing, Failure> {
        let mut framing = Framing::default();
        let mut count = 0usize;
        loop {
            let max = (*budget).min(MAX_LINE_BYTES);
            let line = read_line(reader, max, phase, bound)?.ok_or_else(|| {
                Failure::Message(format!(
                    "{phase} failed: connection closed inside the response head"
                ))
            })?;
            *budget = budget.saturating_sub(line.len() + 2);
            if line.is_empty() {
                return Ok(framing);
            }
            count += 1;
            if count > MAX_HEADER_COUNT {
                return Err(Failure::Message(format!(
                    "{phase} failed: more than {MAX_HEADER_COUNT} header fields"
                )));
            }
            apply_field(&mut framing, &line, phase)?;
        }
    }

    fn apply_field(framing: &mut Framing, line: &[u8], phase: &str) -> Result<(), Failure> {
        let malformed = || Failure::Message(format!("{phase} failed: malformed header field"));
        if matches!(line.first(), Some(b' ' | b'\t')) {
            // Obsolete line folding: RFC 9112 §5.2 lets a client reject it.
            return Err(malformed());
        }
        let colon = line.iter().position(|&b| b == b':').ok_or_else(malformed)?;
        let name = &line[..colon];
        if name.is_empty() || name.iter().any(|b| b.is_ascii_whitespace()) {
            return Err(malformed());
        }
        let value = String::from_utf8_lossy(&line[colon + 1..]);
        let value = value.trim_matches(|c| c == ' ' || c == '\t');
        if name.eq_ignore_ascii_case(b"retry-after") {
            framing.retry_after = Some(value.to_owned());
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_content_length(value).ok_or_else(|| {
                Failure::Message(format!("{phase} failed: invalid Content-Length"))
            })?;
            match framing.content_length {
                Some(previous) if previous != n => {
                    return Err(Failure::Message(format!(
                        "{phase} failed: conflicting Content-Length values"
                    )))
                }
                _ => framing.content_length = Some(n),
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            match framing.transfer_encoding.as_mut() {
                Some(codings) => {
                    codings.push_str(", ");
                    codings.push_str(value);
                }
                None => framing.transfer_encoding = Some(value.to_owned()),
            }
        }
        Ok(())
    }

    /// Reads the body as the status and framing say (RFC 9112 §6.3).
    fn read_body<R: BufRead>(
        reader: &mut R,
        status: u16,
        framing: Framing,
        sink: &mut CappedBody,
        bound: Duration,
    ) -> Result<(), Failure> {
        if status == 204 || status == 304 || (100..200).contains(&status) {
            return Ok(());
        }
        if let Some(codings) = framing.transfer_encoding {
            let chunked_only = {
                let mut parts = codings.split(',').map(str::trim).filter(|c| !c.is_empty());
                matches!(
                    (parts.next(), parts.next()),
                    (Some(only), None) if only.eq_ignore_ascii_case("chunked")
                )
            };
            if !chunked_only {
                let shown: String = codings.chars().take(64).collect();
                return Err(Failure::Message(format!(
                    "reading the response body failed: unsupported Transfer-Encoding {shown:?}"
                )));
            }
            return read_chunked(reader, sink, bound);
        }
        match framing.content_length {
            Some(len) => {
                sink.check_fits(len)?;
                pump(reader, sink, Some(len), bound)
            }
            None => pump(reader, sink, None, bound),
        }
    }

    /// Decodes a chunked body; every line involved is length-capped.
    fn read_chunked<R: BufRead>(
        reader: &mut R,
        sink: &mut CappedBody,
        bound: Duration,
    ) -> Result<(), Failure> {
        const PHASE: &str = "reading the chunked response body";
        let closed = || {
            Failure::Message(format!(
                "{PHASE} failed: connection closed inside the chunked body"
            ))
        };
        loop {
            let line = read_line(reader, MAX_CHUNK_LINE_BYTES, PHASE, bound)?.ok_or_else(closed)?;
            let size = parse_chunk_size(&line)?;
            if size == 0 {
                return skip_trailers(reader, bound);
            }
            sink.check_fits(size)?;
            pump(reader, sink, Some(size), bound)?;
            match read_line(reader, 2, PHASE, bound)? {
                Some(end) if end.is_empty() => {}
                Some(_) => {
                    return Err(Failure::Message(format!(
                        "{PHASE} failed: chunk data not followed by CRLF"
                    )))
                }
                None => return Err(closed()),
            }
        }
    }

    /// Chunk size in hex; extensions after `;` are ignored.
    pub(super) fn parse_chunk_size(line: &[u8]) -> Result<u64, Failure> {
        let size_part = line.split(|&b| b == b';').next().unwrap_or(&[]);
        let text = String::from_utf8_lossy(size_part);
        let text = text.trim_matches(|c| c == ' ' || c == '\t');
        if text.is_empty() || text.len() > 16 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Failure::Message(
                "reading the chunked response body failed: invalid chunk size".to_owned(),
            ));
        }
        u64::from_str_radix(text, 16).map_err(|_| {
            Failure::Message(
                "reading the chunked response body failed: invalid chunk size".to_owned(),
            )
        })
    }

    /// Discards the trailer section (bounded like a head); EOF instead of it is accepted.
    fn skip_trailers<R: BufRead>(reader: &mut R, bound: Duration) -> Result<(), Failure> {
        const PHASE: &str = "reading the response trailers";
        let mut budget = MAX_HEAD_BYTES;
        for _ in 0..=MAX_HEADER_COUNT {
            let max = budget.min(MAX_LINE_BYTES);
            match read_line(reader, max, PHASE, bound)? {
                None => return Ok(()),
                Some(line) if line.is_empty() => return Ok(()),
                Some(line) => budget = budget.saturating_sub(line.len() + 2),
            }
        }
        Err(Failure::Message(format!(
            "{PHASE} failed: more than {MAX_HEADER_COUNT} trailer fields"
        )))
    }
}

/// `ureq` 2 configured for `trust.md` §6.7 (used for `https`).
mod via_ureq {
    use super::*;

    /// Resolves only the verified origin's `host:port`, within the deadline.
    ///
    /// `ureq` resolves the proxy's address instead of the target's when a proxy is configured,
    /// and each redirect target's when it follows one; both would be refused here.
    pub(super) struct OriginResolver {
        pub(super) netloc: String,
        pub(super) deadline: Deadline,
    }

    impl ureq::Resolver for OriginResolver {
        fn resolve(&self, netloc: &str) -> io::Result<Vec<SocketAddr>> {
            if netloc != self.netloc {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "refused to resolve {netloc}: only the verified origin {} may be contacted",
                        self.netloc
                    ),
                ));
            }
            resolve_bounded(netloc, &self.deadline)
        }
    }

    /// The agent: redirects 0, no proxy and no proxy from the environment, no pooling (so no
    /// silent retry on a reused connection), bounded connect, origin-only resolver.
    pub(super) fn agent(origin: &Origin, limits: &HttpLimits, deadline: &Deadline) -> ureq::Agent {
        ureq::AgentBuilder::new()
            .redirects(0)
            .try_proxy_from_env(false)
            .max_idle_connections(0)
            .max_idle_connections_per_host(0)
            .timeout_connect(limits.connect_timeout.min(deadline.bound))
            .user_agent(USER_AGENT)
            .resolver(OriginResolver {
                netloc: origin.netloc(),
                deadline: *deadline,
            })
            .build()
    }

    pub(super) fn exchange(
        request: &HttpRequest,
        url: &Url,
        origin: &Origin,
        limits: &HttpLimits,
        deadline: &Deadline,
    ) -> Result<(u16, Option<String>, Vec<u8>), Failure> {
        let bound = deadline.bound;
        let left = deadline
            .remaining_io()
            .map_err(|e| Failure::io("starting the request", bound, e))?;
        let agent = agent(origin, limits, deadline);
        let outcome = match request.method {
            HttpMethod::Get => agent.request_url("GET", url).timeout(left).call(),
            HttpMethod::Post => agent
                .request_url("POST", url)
                .timeout(left)
                .set("Content-Type", "application/json")
                .send_string(request.json_body.as_deref().unwrap_or("")),
        };
        let response = match outcome {
            Ok(response) => response,
            // Non-2xx statuses are responses; their body is read like any other.
            Err(ureq::Error::Status(_, response)) => response,
            Err(ureq::Error::Transport(transport)) => {
                let connect_bound = limits.connect_timeout.min(bound);
                return Err(transport_failure(&transport, bound, connect_bound));
            }
        };
        let status = response.status();
        let retry_after = response.header("retry-after").map(|v| v.trim().to_owned());
        let mut sink = CappedBody::new(limits.max_body_bytes);
        if let Some(len) = response
            .header("content-length")
            .and_then(parse_content_length)
        {
            sink.check_fits(len)?;
        }
        let mut reader = response.into_reader();
        pump(&mut reader, &mut sink, None, bound)?;
        Ok((status, retry_after, sink.into_bytes()))
    }

    fn transport_failure(
        transport: &ureq::Transport,
        bound: Duration,
        connect_bound: Duration,
    ) -> Failure {
        let source = std::error::Error::source(transport)
            .and_then(|source| source.downcast_ref::<io::Error>());
        match source {
            Some(error) if is_timeout(error) => {
                if transport.kind() == ureq::ErrorKind::ConnectionFailed {
                    // TCP connect (bounded by `connect_bound`) or the TLS handshake (bounded by
                    // the request deadline); ureq does not say which.
                    Failure::Message(format!(
                        "timeout: connecting (TCP within {} ms, TLS handshake within the {} ms \
                         request bound) did not finish",
                        connect_bound.as_millis(),
                        bound.as_millis()
                    ))
                } else {
                    Failure::Message(format!(
                        "timeout: the request did not finish within the {} ms bound",
                        bound.as_millis()
                    ))
                }
            }
            Some(error) => match os_error_name(error) {
                Some(name) => Failure::Message(format!("{name}: {transport}")),
                None => Failure::Message(transport.to_string()),
            },
            None => Failure::Message(transport.to_string()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::net::{Shutdown, TcpListener};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::thread::JoinHandle;

    const ENGINES: [Engine; 2] = [Engine::Wire, Engine::Ureq];

    // ---------------------------------------------------------------- test server

    /// What the test server does with each connection, after reading the whole request.
    #[derive(Clone)]
    enum Reply {
        /// Writes these bytes, then closes.
        Canned(Vec<u8>),
        /// Writes nothing and keeps the connection open until the server stops.
        Silent,
        /// Writes `head`, then `body` one byte every `every`.
        Drip {
            head: Vec<u8>,
            body: Vec<u8>,
            every: Duration,
        },
    }

    /// A one-behaviour HTTP server on `127.0.0.1:0` that records requests and counts
    /// connections.
    struct TestServer {
        port: u16,
        stop: Arc<AtomicBool>,
        connections: Arc<AtomicUsize>,
        requests: Arc<Mutex<Vec<Vec<u8>>>>,
        acceptor: Option<JoinHandle<()>>,
    }

    /// What a server saw, once stopped.
    struct Served {
        connections: usize,
        requests: Vec<Vec<u8>>,
    }

    impl TestServer {
        fn start(reply: Reply) -> TestServer {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            listener.set_nonblocking(true).unwrap();
            let port = listener.local_addr().unwrap().port();
            let stop = Arc::new(AtomicBool::new(false));
            let connections = Arc::new(AtomicUsize::new(0));
            let requests = Arc::new(Mutex::new(Vec::new()));
            let acceptor = {
                let (stop, connections, requests) =
                    (stop.clone(), connections.clone(), requests.clone());
                thread::spawn(move || accept_loop(listener, reply, stop, connections, requests))
            };
            TestServer {
                port,
                stop,
                connections,
                requests,
                acceptor: Some(acceptor),
            }
        }

        fn url(&self, path: &str) -> String {
            format!("http://127.0.0.1:{}{}", self.port, path)
        }

        fn origin(&self) -> Origin {
            Origin::of(&self.url("")).unwrap()
        }

        /// Stops the server (accepting any connection already queued) and reports.
        fn finish(mut self) -> Served {
            self.halt();
            Served {
                connections: self.connections.load(Ordering::SeqCst),
                requests: self.requests.lock().unwrap().clone(),
            }
        }

        fn halt(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            if let Some(acceptor) = self.acceptor.take() {
                let _ = acceptor.join();
            }
        }
    }

    impl Drop for TestServer {
        fn drop(&mut self) {
            self.halt();
        }
    }

    fn accept_loop(
        listener: TcpListener,
        reply: Reply,
        stop: Arc<AtomicBool>,
        connections: Arc<AtomicUsize>,
        requests: Arc<Mutex<Vec<Vec<u8>>>>,
    ) {
        let mut handlers = Vec::new();
        loop {
            // Read the flag first so a connection queued before the stop is still counted.
            let stopping = stop.load(Ordering::SeqCst);
            match listener.accept() {
                Ok((stream, _)) => {
                    connections.fetch_add(1, Ordering::SeqCst);
                    let (reply, stop, requests) = (reply.clone(), stop.clone(), requests.clone());
                    handlers.push(thread::spawn(move || serve(stream, reply, stop, requests)));
                }
                Err(_) if stopping => break,
                Err(_) => thread::sleep(Duration::from_millis(5)),
            }
        }
        for handler in handlers {
            let _ = handler.join();
        }
    }

    fn serve(
        mut stream: TcpStream,
        reply: Reply,
        stop: Arc<AtomicBool>,
        requests: Arc<Mutex<Vec<Vec<u8>>>>,
    ) {
        let _ = stream.set_nonblocking(false);
        let request = read_request(&mut stream, &stop);
        requests.lock().unwrap().push(request);
        match reply {
            Reply::Canned(bytes) => {
                let _ = stream.write_all(&bytes);
                let _ = stream.flush();
                let _ = stream.shutdown(Shutdown::Write);
                // Let the client read everything before the socket goes away.
                let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                let mut scratch = [0u8; 1024];
                while matches!(stream.read(&mut scratch), Ok(n) if n > 0) {}
            }
            Reply::Silent => {
                while !stop.load(Ordering::SeqCst) {
                    thread::sleep(Duration::from_millis(10));
                }
            }
            Reply::Drip { head, body, every } => {
                if stream.write_all(&head).is_err() {
                    return;
                }
                for byte in body {
                    if stop.load(Ordering::SeqCst) || stream.write_all(&[byte]).is_err() {
                        return;
                    }
                    thread::sleep(every);
                }
            }
        }
    }

    /// Reads one request head and its `Content-Length` body (gives up when the server stops).
    fn read_request(stream: &mut TcpStream, stop: &AtomicBool) -> Vec<u8> {
        let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
        let started = Instant::now();
        let mut seen = Vec::new();
        let mut scratch = [0u8; 4096];
        let mut wanted: Option<usize> = None;
        while started.elapsed() < Duration::from_secs(3) && !stop.load(Ordering::SeqCst) {
            if wanted.is_none() {
                if let Some(end) = find(&seen, b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    wanted = Some(end + 4 + length);
                }
            }
            if wanted.is_some_and(|w| seen.len() >= w) {
                break;
            }
            match stream.read(&mut scratch) {
                Ok(0) => break,
                Ok(n) => seen.extend_from_slice(&scratch[..n]),
                Err(e) if is_timeout(&e) => {}
                Err(_) => break,
            }
        }
        seen
    }

    fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
        haystack.windows(needle.len()).position(|w| w == needle)
    }

    // ---------------------------------------------------------------- helpers

    fn response(status_line: &str, headers: &[&str], body: &[u8]) -> Vec<u8> {
        let mut out = format!("HTTP/1.1 {status_line}\r\n");
        for header in headers {
            out.push_str(header);
            out.push_str("\r\n");
        }
        out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut out = out.into_bytes();
        out.extend_from_slice(body);
        out
    }

    fn raw(text: &str) -> Vec<u8> {
        text.as_bytes().to_vec()
    }

    fn get(url: &str, timeout_ms: u64) -> HttpRequest {
        HttpRequest {
            method: HttpMethod::Get,
            url: url.to_owned(),
            json_body: None,
            timeout: Duration::from_millis(timeout_ms),
        }
    }

    fn post(url: &str, body: &str) -> HttpRequest {
        HttpRequest {
            method: HttpMethod::Post,
            url: url.to_owned(),
            json_body: Some(body.to_owned()),
            timeout: Duration::from_secs(5),
        }
    }

    fn limits(max_body_bytes: u64) -> HttpLimits {
        HttpLimits {
            max_body_bytes,
            ..HttpLimits::default()
        }
    }

    fn run(
        engine: Engine,
        request: &HttpRequest,
        origin: &Origin,
        limits: &HttpLimits,
    ) -> HttpReport {
        send_with(Some(engine), request, origin, limits).0
    }

    fn failed(report: HttpReport) -> String {
        match report {
            HttpReport::Failed { error } => error,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    fn answered(report: HttpReport) -> (u16, String) {
        match report {
            HttpReport::Response { status, body } => (status, body),
            other => panic!("expected a response, got {other:?}"),
        }
    }

    /// Serves `reply` once per engine and returns each engine's report.
    fn each_engine(
        reply: &Reply,
        request_for: impl Fn(&TestServer) -> HttpRequest,
        limits: &HttpLimits,
    ) -> Vec<(Engine, HttpReport)> {
        ENGINES
            .iter()
            .map(|&engine| {
                let server = TestServer::start(reply.clone());
                let report = run(engine, &request_for(&server), &server.origin(), limits);
                (engine, report)
            })
            .collect()
    }

    // ---------------------------------------------------------------- origin and URL checks

    #[test]
    fn origin_of_applies_scheme_defaults_and_normalizes() {
        let plain = Origin::of("http://localhost:11434").unwrap();
        assert_eq!(
            (plain.scheme(), plain.host(), plain.port()),
            ("http", "localhost", 11434)
        );
        assert_eq!(Origin::of("http://a.com").unwrap().port(), 80);
        assert_eq!(Origin::of("https://a.com/v1").unwrap().port(), 443);
        let upper = Origin::of("HTTP://LocalHost:8080/v1/").unwrap();
        assert_eq!(upper, Origin::of("http://localhost:8080").unwrap());
        assert_eq!(upper.to_string(), "http://localhost:8080");
        assert_eq!(Origin::of("http://[::1]:9").unwrap().host(), "[::1]");
        assert_eq!(
            Origin::of("http://a.com:80").unwrap(),
            Origin::of("http://a.com").unwrap()
        );
    }

    #[test]
    fn origin_of_rejects_non_http_and_hostless_values() {
        for text in [
            "localhost:11434",
            "file:///etc/passwd",
            "ftp://a.com/",
            "not a url",
            "",
            "http://",
        ] {
            assert!(
                Origin::of(text).is_err(),
                "{text:?} should not be an origin"
            );
        }
    }

    #[test]
    fn check_request_url_refuses_authority_tricks_without_network() {
        let verified = Origin::of("http://127.0.0.1:8080").unwrap();
        // The §6.7 join: verified host + a path beginning with '@'.
        let joined = format!("{}{}", "http://127.0.0.1:8080", "@127.0.0.2:8080/x");
        let error = check_request_url(&joined, &verified).unwrap_err();
        assert!(error.contains("userinfo"), "{error}");
        for url in [
            "http://user@127.0.0.1:8080/x",
            "http://127.0.0.2:8080/x",
            "http://localhost:8080/x",
            "https://127.0.0.1:8080/x",
            "http://127.0.0.1:8081/x",
            "http://127.0.0.1/x",
            "ftp://127.0.0.1:8080/x",
            "/v1/models",
        ] {
            let error = check_request_url(url, &verified).unwrap_err();
            assert!(error.starts_with("refused:"), "{url}: {error}");
        }
    }

    #[test]
    fn check_request_url_accepts_the_verified_origin_in_any_spelling() {
        let verified = Origin::of("http://localhost:80").unwrap();
        for url in [
            "http://localhost/v1/models",
            "HTTP://LOCALHOST:80/v1/chat/completions?x=1#f",
            // A backslash is a path separator in http URLs: the authority does not move.
            "http://localhost\\@127.0.0.2/x",
        ] {
            let checked = check_request_url(url, &verified).unwrap();
            assert_eq!(checked.host_str(), Some("localhost"), "{url}");
        }
    }

    #[test]
    fn request_line_never_carries_control_characters() {
        let url = Url::parse("http://127.0.0.1:9/v1\r\nX-Injected: 1 a").unwrap();
        let head = wire::request_head(HttpMethod::Get, &url, 0).unwrap();
        let head = String::from_utf8(head).unwrap();
        let first = head.lines().next().unwrap();
        assert!(
            first.starts_with("GET /v1") && first.ends_with(" HTTP/1.1"),
            "{first}"
        );
        assert!(!head.contains("X-Injected: 1"), "{head}");
    }

    #[test]
    fn status_line_and_chunk_size_parsing() {
        assert_eq!(wire::parse_status_line(b"HTTP/1.1 200 OK").ok(), Some(200));
        assert_eq!(wire::parse_status_line(b"HTTP/1.0 307").ok(), Some(307));
        for bad in [
            &b"HTTP/2 200 OK"[..],
            b"HTTP/1.1 20 OK",
            b"HTTP/1.1 099 x",
            b"ICY 200 OK",
            b"",
        ] {
            assert!(wire::parse_status_line(bad).is_err(), "{bad:?}");
        }
        assert_eq!(wire::parse_chunk_size(b"1a;ext=\"x\"").ok(), Some(26));
        for bad in [&b""[..], b"zz", b"11111111111111111", b"-1"] {
            assert!(wire::parse_chunk_size(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_content_length("10, 10"), Some(10));
        assert_eq!(parse_content_length("10, 11"), None);
        assert_eq!(parse_content_length("+5"), None);
    }

    #[test]
    fn limits_default_to_16_mib_and_2_s() {
        let limits = HttpLimits::default();
        assert_eq!(limits.max_body_bytes, 16 * 1024 * 1024);
        assert_eq!(limits.connect_timeout, Duration::from_secs(2));
    }

    #[test]
    fn https_goes_through_ureq_and_http_through_the_wire_client() {
        assert_eq!(
            Engine::for_url(&Url::parse("https://a.com").unwrap()),
            Engine::Ureq
        );
        assert_eq!(
            Engine::for_url(&Url::parse("http://a.com").unwrap()),
            Engine::Wire
        );
    }

    // ---------------------------------------------------------------- ureq configuration (E17, E18)

    #[test]
    fn ureq_agent_has_no_redirects_and_no_proxy() {
        let origin = Origin::of("https://127.0.0.1:9").unwrap();
        let deadline = Deadline::starting_now(Duration::from_secs(1));
        let agent = via_ureq::agent(&origin, &HttpLimits::default(), &deadline);
        let config = format!("{agent:?}");
        assert!(config.contains("redirects: 0"), "{config}");
        assert!(config.contains("proxy: None"), "{config}");
    }

    #[test]
    fn ureq_resolver_only_resolves_the_verified_origin() {
        use ureq::Resolver as _;
        let resolver = via_ureq::OriginResolver {
            netloc: "127.0.0.1:9".to_owned(),
            deadline: Deadline::starting_now(Duration::from_secs(1)),
        };
        assert_eq!(
            resolver.resolve("127.0.0.1:9").unwrap(),
            vec![SocketAddr::from(([127, 0, 0, 1], 9))]
        );
        let refused = resolver.resolve("127.0.0.1:10").unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied);
    }

    // ---------------------------------------------------------------- exchanges, both engines

    #[test]
    fn get_200_returns_the_body() {
        let reply = Reply::Canned(response("200 OK", &[], br#"{"data":[{"id":"m"}]}"#));
        for (engine, report) in each_engine(
            &reply,
            |s| get(&s.url("/v1/models"), 2000),
            &HttpLimits::default(),
        ) {
            assert_eq!(
                answered(report),
                (200, r#"{"data":[{"id":"m"}]}"#.to_owned()),
                "{engine:?}"
            );
        }
    }

    #[test]
    fn post_sends_exactly_the_json_body_with_content_type_and_no_auth() {
        let body = r#"{"model":"m","messages":[{"role":"user","content":"héllo \"q\""}]}"#;
        for engine in ENGINES {
            let server = TestServer::start(Reply::Canned(response("200 OK", &[], b"{}")));
            let request = post(&server.url("/v1/chat/completions"), body);
            let report = run(engine, &request, &server.origin(), &HttpLimits::default());
            assert_eq!(answered(report), (200, "{}".to_owned()), "{engine:?}");
            let port = server.port;
            let served = server.finish();
            assert_eq!(served.connections, 1, "{engine:?}");
            let captured = &served.requests[0];
            let end = find(captured, b"\r\n\r\n").unwrap();
            let head = String::from_utf8_lossy(&captured[..end]).to_string();
            let lower = head.to_ascii_lowercase();
            assert!(
                head.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"),
                "{engine:?}: {head}"
            );
            assert!(
                lower.contains(&format!("\r\nhost: 127.0.0.1:{port}")),
                "{engine:?}: {head}"
            );
            assert!(
                lower.contains("\r\ncontent-type: application/json"),
                "{engine:?}: {head}"
            );
            assert!(
                lower.contains(&format!("\r\ncontent-length: {}", body.len())),
                "{engine:?}: {head}"
            );
            assert!(!lower.contains("authorization"), "{engine:?}: {head}");
            assert_eq!(&captured[end + 4..], body.as_bytes(), "{engine:?}");
        }
    }

    #[test]
    fn error_status_body_is_returned_verbatim() {
        let error = br#"{"error":{"message":"model not found","type":"invalid_request_error"}}"#;
        let reply = Reply::Canned(response("500 Internal Server Error", &[], error));
        for (engine, report) in each_engine(
            &reply,
            |s| post(&s.url("/v1/chat/completions"), "{}"),
            &HttpLimits::default(),
        ) {
            let expected = String::from_utf8(error.to_vec()).unwrap();
            assert_eq!(answered(report), (500, expected), "{engine:?}");
        }
    }

    #[test]
    fn redirect_is_returned_not_followed() {
        for engine in ENGINES {
            for method in [HttpMethod::Get, HttpMethod::Post] {
                let elsewhere =
                    TestServer::start(Reply::Canned(response("200 OK", &[], b"stolen")));
                let location = format!("Location: {}", elsewhere.url("/steal"));
                let server = TestServer::start(Reply::Canned(response(
                    "307 Temporary Redirect",
                    &[&location],
                    b"moved",
                )));
                let mut request = post(&server.url("/v1/chat/completions"), "{}");
                request.method = method;
                let report = run(engine, &request, &server.origin(), &HttpLimits::default());
                assert_eq!(
                    answered(report),
                    (307, "moved".to_owned()),
                    "{engine:?} {method:?}"
                );
                assert_eq!(elsewhere.finish().connections, 0, "{engine:?} {method:?}");
                assert_eq!(server.finish().connections, 1, "{engine:?} {method:?}");
            }
        }
    }

    #[test]
    fn body_over_the_cap_fails_whatever_the_framing() {
        let eleven = b"0123456789a";
        let replies = [
            Reply::Canned(response("200 OK", &[], eleven)),
            Reply::Canned(raw("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n0123456789a")),
            Reply::Canned(raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n01234\r\n6\r\n56789a\r\n0\r\n\r\n")),
            Reply::Canned(raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n0123456789a\r\n0\r\n\r\n")),
        ];
        for reply in &replies {
            for (engine, report) in each_engine(reply, |s| get(&s.url("/"), 2000), &limits(10)) {
                assert_eq!(
                    failed(report),
                    "response body exceeds 10 bytes",
                    "{engine:?}"
                );
            }
        }
        // Exactly at the cap is fine.
        let at_cap = Reply::Canned(response("200 OK", &[], b"0123456789"));
        for (engine, report) in each_engine(&at_cap, |s| get(&s.url("/"), 2000), &limits(10)) {
            assert_eq!(
                answered(report),
                (200, "0123456789".to_owned()),
                "{engine:?}"
            );
        }
    }

    #[test]
    fn huge_content_length_fails_without_allocating_it() {
        let reply = Reply::Canned(raw(
            "HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\nabc",
        ));
        for (engine, report) in
            each_engine(&reply, |s| get(&s.url("/"), 2000), &HttpLimits::default())
        {
            let error = failed(report);
            assert_eq!(
                error,
                format!("response body exceeds {DEFAULT_MAX_BODY_BYTES} bytes"),
                "{engine:?}"
            );
        }
        // Under the cap but cut short: the connection closes early.
        let short = Reply::Canned(raw("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc"));
        for (engine, report) in
            each_engine(&short, |s| get(&s.url("/"), 2000), &HttpLimits::default())
        {
            failed(report);
            let _ = engine;
        }
    }

    #[test]
    fn silent_server_times_out_within_the_bound() {
        for (engine, report, elapsed) in ENGINES.iter().map(|&engine| {
            let server = TestServer::start(Reply::Silent);
            let started = Instant::now();
            let report = run(
                engine,
                &get(&server.url("/"), 300),
                &server.origin(),
                &HttpLimits::default(),
            );
            (engine, report, started.elapsed())
        }) {
            let error = failed(report);
            assert!(error.contains("timeout"), "{engine:?}: {error}");
            assert!(
                elapsed >= Duration::from_millis(250),
                "{engine:?}: {elapsed:?}"
            );
            assert!(
                elapsed < Duration::from_millis(1500),
                "{engine:?}: {elapsed:?}"
            );
        }
    }

    #[test]
    fn slow_body_times_out_at_the_overall_deadline() {
        let reply = Reply::Drip {
            head: raw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"),
            body: vec![b'x'; 100],
            every: Duration::from_millis(20),
        };
        for engine in ENGINES {
            let server = TestServer::start(reply.clone());
            let started = Instant::now();
            let report = run(
                engine,
                &get(&server.url("/"), 300),
                &server.origin(),
                &HttpLimits::default(),
            );
            let elapsed = started.elapsed();
            let error = failed(report);
            assert!(error.contains("timeout"), "{engine:?}: {error}");
            assert!(
                elapsed < Duration::from_millis(1500),
                "{engine:?}: {elapsed:?}"
            );
        }
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let reply = Reply::Canned(response("200 OK", &[], b"ok \xff\xfe end"));
        for (engine, report) in
            each_engine(&reply, |s| get(&s.url("/"), 2000), &HttpLimits::default())
        {
            assert_eq!(
                answered(report),
                (200, "ok \u{fffd}\u{fffd} end".to_owned()),
                "{engine:?}"
            );
        }
    }

    #[test]
    fn connection_refused_names_econnrefused() {
        let port = {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let url = format!("http://127.0.0.1:{port}/v1/models");
        let origin = Origin::of(&url).unwrap();
        for engine in ENGINES {
            let error = failed(run(
                engine,
                &get(&url, 2000),
                &origin,
                &HttpLimits::default(),
            ));
            assert!(error.contains("ECONNREFUSED"), "{engine:?}: {error}");
        }
    }

    #[test]
    fn other_origin_is_refused_before_connecting() {
        for engine in ENGINES {
            let verified = TestServer::start(Reply::Canned(response("200 OK", &[], b"ok")));
            let other = TestServer::start(Reply::Canned(response("200 OK", &[], b"stolen")));
            let attempts = [
                other.url("/v1/models"),
                // verified host + '@other' path, as a plain concatenation would build it
                format!("{}@127.0.0.1:{}/v1/models", verified.url(""), other.port),
                format!("http://user:pw@127.0.0.1:{}/v1/models", verified.port),
                format!("ftp://127.0.0.1:{}/v1/models", verified.port),
                format!("https://127.0.0.1:{}/v1/models", verified.port),
            ];
            for url in &attempts {
                let error = failed(run(
                    engine,
                    &get(url, 2000),
                    &verified.origin(),
                    &HttpLimits::default(),
                ));
                assert!(error.starts_with("refused:"), "{engine:?} {url}: {error}");
            }
            assert_eq!(other.finish().connections, 0, "{engine:?}");
            assert_eq!(verified.finish().connections, 0, "{engine:?}");
        }
    }

    #[test]
    fn zero_timeout_sends_nothing() {
        let server = TestServer::start(Reply::Canned(response("200 OK", &[], b"ok")));
        let error = failed(send(
            &get(&server.url("/"), 0),
            &server.origin(),
            &HttpLimits::default(),
        ));
        assert!(error.contains("timeout"), "{error}");
        assert_eq!(server.finish().connections, 0);
    }

    #[test]
    fn chunked_and_close_delimited_bodies_are_read() {
        let replies = [
            raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=1\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n"),
            raw("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nWikipedia"),
            raw("HTTP/1.0 200 OK\r\n\r\nWikipedia"),
        ];
        for bytes in replies {
            for (engine, report) in each_engine(
                &Reply::Canned(bytes),
                |s| get(&s.url("/"), 2000),
                &HttpLimits::default(),
            ) {
                assert_eq!(
                    answered(report),
                    (200, "Wikipedia".to_owned()),
                    "{engine:?}"
                );
            }
        }
        for (engine, report) in each_engine(
            &Reply::Canned(raw("HTTP/1.1 204 No Content\r\n\r\n")),
            |s| get(&s.url("/"), 2000),
            &HttpLimits::default(),
        ) {
            assert_eq!(answered(report), (204, String::new()), "{engine:?}");
        }
    }

    #[test]
    fn oversized_heads_fail() {
        let mut flood = String::from("HTTP/1.1 200 OK\r\n");
        for i in 0..300 {
            flood.push_str(&format!("X-H{i}: v\r\n"));
        }
        flood.push_str("Content-Length: 2\r\n\r\nok");
        let long_line = format!(
            "HTTP/1.1 200 OK\r\nX-Long: {}\r\nContent-Length: 2\r\n\r\nok",
            "a".repeat(200_000)
        );
        for reply in [raw(&flood), long_line.into_bytes()] {
            for (engine, report) in each_engine(
                &Reply::Canned(reply),
                |s| get(&s.url("/"), 2000),
                &HttpLimits::default(),
            ) {
                failed(report);
                let _ = engine;
            }
        }
    }

    // ---------------------------------------------------------------- wire client only

    #[test]
    fn endless_chunk_size_line_is_cut_off() {
        let mut bytes = raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        bytes.extend_from_slice(&[b'a'; 64 * 1024]);
        let server = TestServer::start(Reply::Canned(bytes));
        let error = failed(run(
            Engine::Wire,
            &get(&server.url("/"), 2000),
            &server.origin(),
            &HttpLimits::default(),
        ));
        assert!(error.contains("line longer than 4096 bytes"), "{error}");
    }

    #[test]
    fn wire_client_skips_interim_responses_and_trailers() {
        let bytes = raw(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
             2\r\nok\r\n0\r\nX-Trailer: 1\r\n\r\n",
        );
        let server = TestServer::start(Reply::Canned(bytes));
        let report = run(
            Engine::Wire,
            &get(&server.url("/"), 2000),
            &server.origin(),
            &HttpLimits::default(),
        );
        assert_eq!(answered(report), (200, "ok".to_owned()));
    }

    #[test]
    fn wire_client_rejects_malformed_framing() {
        let replies = [
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
            "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\nok",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: a\r\n folded\r\nContent-Length: 2\r\n\r\nok",
            "SSH-2.0-OpenSSH\r\n\r\n",
            "",
        ];
        for text in replies {
            let server = TestServer::start(Reply::Canned(raw(text)));
            let report = run(
                Engine::Wire,
                &get(&server.url("/"), 2000),
                &server.origin(),
                &HttpLimits::default(),
            );
            let error = failed(report);
            assert!(!error.is_empty(), "{text:?}");
        }
    }

    #[test]
    fn https_to_a_plain_listener_fails_cleanly() {
        let server = TestServer::start(Reply::Canned(response("200 OK", &[], b"ok")));
        let url = format!("https://127.0.0.1:{}/v1/models", server.port);
        let origin = Origin::of(&url).unwrap();
        let error = failed(send(&get(&url, 500), &origin, &HttpLimits::default()));
        assert!(!error.is_empty());
        assert_eq!(server.finish().connections, 1);
    }
}
