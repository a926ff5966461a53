//! A one-behaviour loopback server for the engine tests, over plain TCP or TLS.
//!
//! The TLS side uses a certificate authority made at test time (rcgen) that only these tests
//! trust ([`test_roots`]); production code trusts the Mozilla roots and never sees it.
//!
//! Shared with `benches/http_memory.rs` (included there by path), which uses a subset; the
//! including module provides `Origin` and `TlsRoots`.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

use super::{Origin, TlsRoots};

/// Which scheme a test server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Plain TCP.
    Http,
    /// TLS with a certificate from the test authority.
    Https,
}

/// Every scenario runs over both.
pub const SCHEMES: [Scheme; 2] = [Scheme::Http, Scheme::Https];

impl Scheme {
    fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

/// What the server does with each connection, after reading the whole request.
#[derive(Clone)]
pub enum Reply {
    /// Writes these bytes, then closes.
    Canned(Vec<u8>),
    /// Writes nothing and keeps the connection open until the server stops.
    Silent,
    /// Writes `head`, then `filler` bytes for as long as the client reads (at most 1 GiB).
    Endless { head: Vec<u8>, filler: u8 },
    /// Writes `head`, then one `x` every `every` until the client goes away.
    Drip { head: Vec<u8>, every: Duration },
}

/// The test authority and the server identity it signed (for `127.0.0.1`).
struct Authority {
    ca_der: Vec<u8>,
    server: Arc<ServerConfig>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A fresh authority and a leaf for 127.0.0.1 signed by it.
fn make_authority() -> Authority {
    let ca_key = rcgen::KeyPair::generate().expect("ca key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "gsd-lane test authority");
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key).expect("ca cert");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate().expect("leaf key");
    let mut leaf_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("leaf");
    leaf_params.subject_alt_names = vec![rcgen::SanType::IpAddress(
        std::net::Ipv4Addr::LOCALHOST.into(),
    )];
    leaf_params.use_authority_key_identifier_extension = true;
    leaf_params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let leaf = leaf_params
        .signed_by(&leaf_key, &issuer)
        .expect("leaf cert");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let server = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("tls versions")
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(leaf.der().to_vec())], key)
        .expect("server config");
    Authority {
        ca_der: ca_cert.der().to_vec(),
        server: Arc::new(server),
    }
}

fn authority() -> &'static Authority {
    static AUTHORITY: OnceLock<Authority> = OnceLock::new();
    AUTHORITY.get_or_init(make_authority)
}

/// The roots the tests' client trusts: the test authority, and nothing else.
pub fn test_roots() -> TlsRoots {
    TlsRoots::Only(Arc::new(vec![authority().ca_der.clone()]))
}

/// A server on `127.0.0.1:0` that records requests and counts connections.
pub struct TestServer {
    scheme: Scheme,
    /// The port it listens on.
    pub port: u16,
    stop: Arc<AtomicBool>,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
    acceptor: Option<JoinHandle<()>>,
}

/// What a server saw, once stopped.
pub struct Served {
    /// Connections accepted.
    pub connections: usize,
    /// Each request as read (TLS decrypted).
    pub requests: Vec<Vec<u8>>,
}

impl TestServer {
    /// Starts a server answering every connection with `reply`.
    pub fn start(scheme: Scheme, reply: Reply) -> TestServer {
        let tls = (scheme == Scheme::Https).then(|| Arc::clone(&authority().server));
        TestServer::start_with(scheme, tls, reply)
    }

    /// Starts a TLS server whose certificate comes from an authority no client trusts.
    pub fn start_untrusted(reply: Reply) -> TestServer {
        TestServer::start_with(Scheme::Https, Some(make_authority().server), reply)
    }

    fn start_with(scheme: Scheme, tls: Option<Arc<ServerConfig>>, reply: Reply) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let stop = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let acceptor = {
            let (stop, connections, requests) =
                (stop.clone(), connections.clone(), requests.clone());
            thread::spawn(move || accept_loop(listener, tls, reply, stop, connections, requests))
        };
        TestServer {
            scheme,
            port,
            stop,
            connections,
            requests,
            acceptor: Some(acceptor),
        }
    }

    /// `<scheme>://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("{}://127.0.0.1:{}{}", self.scheme.as_str(), self.port, path)
    }

    /// The server's origin, as verified.
    pub fn origin(&self) -> Origin {
        Origin::of(&self.url("")).expect("origin")
    }

    /// Stops the server (accepting any connection already queued) and reports.
    pub fn finish(mut self) -> Served {
        self.halt();
        Served {
            connections: self.connections.load(Ordering::SeqCst),
            requests: self.requests.lock().expect("requests").clone(),
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
    tls: Option<Arc<ServerConfig>>,
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
                let (tls, reply, stop, requests) =
                    (tls.clone(), reply.clone(), stop.clone(), requests.clone());
                handlers.push(thread::spawn(move || {
                    serve(stream, tls, reply, &stop, &requests)
                }));
            }
            Err(_) if stopping => break,
            Err(_) => thread::sleep(Duration::from_millis(5)),
        }
    }
    for handler in handlers {
        let _ = handler.join();
    }
}

/// The connection, plain or TLS.
enum Conn {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ServerConnection, TcpStream>>),
}

impl Conn {
    fn socket(&self) -> &TcpStream {
        match self {
            Conn::Plain(stream) => stream,
            Conn::Tls(tls) => &tls.sock,
        }
    }

    /// Ends the write side the way the scheme does (TLS `close_notify` first).
    fn close_write(&mut self) {
        if let Conn::Tls(tls) = self {
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
        let _ = self.socket().shutdown(Shutdown::Write);
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(stream) => stream.read(buf),
            Conn::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(stream) => stream.write(buf),
            Conn::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Plain(stream) => stream.flush(),
            Conn::Tls(tls) => tls.flush(),
        }
    }
}

fn serve(
    stream: TcpStream,
    tls: Option<Arc<ServerConfig>>,
    reply: Reply,
    stop: &AtomicBool,
    requests: &Mutex<Vec<Vec<u8>>>,
) {
    let _ = stream.set_nonblocking(false);
    let mut conn = match tls {
        None => Conn::Plain(stream),
        Some(config) => match ServerConnection::new(config) {
            Ok(server) => Conn::Tls(Box::new(StreamOwned::new(server, stream))),
            Err(_) => return,
        },
    };
    let request = read_request(&mut conn, stop);
    requests.lock().expect("requests").push(request);
    let _ = conn.socket().set_read_timeout(None);
    let _ = conn
        .socket()
        .set_write_timeout(Some(Duration::from_secs(5)));
    match reply {
        Reply::Canned(bytes) => {
            let _ = conn.write_all(&bytes);
            let _ = conn.flush();
            conn.close_write();
            // Let the client read everything before the socket goes away.
            let _ = conn
                .socket()
                .set_read_timeout(Some(Duration::from_millis(500)));
            let mut scratch = [0u8; 1024];
            while matches!(conn.read(&mut scratch), Ok(n) if n > 0) {}
        }
        Reply::Silent => {
            while !stop.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(10));
            }
        }
        Reply::Endless { head, filler } => {
            if conn.write_all(&head).is_err() {
                return;
            }
            let block = vec![filler; 16 * 1024];
            for _ in 0..(64 * 1024) {
                if stop.load(Ordering::SeqCst) || conn.write_all(&block).is_err() {
                    return;
                }
            }
        }
        Reply::Drip { head, every } => {
            if conn.write_all(&head).and_then(|()| conn.flush()).is_err() {
                return;
            }
            while !stop.load(Ordering::SeqCst) {
                if conn.write_all(b"x").and_then(|()| conn.flush()).is_err() {
                    return;
                }
                thread::sleep(every);
            }
        }
    }
}

/// Reads one request head and its `Content-Length` body (gives up when the server stops or
/// the client sends nothing usable, e.g. a failed TLS handshake).
fn read_request(conn: &mut Conn, stop: &AtomicBool) -> Vec<u8> {
    let _ = conn
        .socket()
        .set_read_timeout(Some(Duration::from_millis(50)));
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
        match conn.read(&mut scratch) {
            Ok(0) => break,
            Ok(n) => seen.extend_from_slice(&scratch[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    seen
}

/// Where `needle` first occurs in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
