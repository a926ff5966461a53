//! A loopback HTTP/1.1 server with canned replies, for lanes that talk HTTP.
//!
//! It listens on `127.0.0.1:<ephemeral>`, serves each connection on its own thread, records
//! every request it read and counts every connection it accepted. Routes are
//! `(method, path)`; the query string is ignored for routing; anything else gets a JSON 404.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// What the server does for a route.
#[derive(Clone)]
pub enum Reply {
    /// Answer with this status, extra headers and body.
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Read the request, then never answer (the connection stays open for a while).
    Stall,
    /// A `200` JSON answer of `size` bytes of `a`, written in 64 KiB chunks.
    Big(usize),
    /// One reply per request, in order; the last one repeats (shared by clones).
    Sequence(Arc<Mutex<Vec<Reply>>>),
}

/// A [`Reply::Sequence`] of `replies`.
pub fn sequence(replies: Vec<Reply>) -> Reply {
    Reply::Sequence(Arc::new(Mutex::new(replies)))
}

/// A JSON answer: `status` with `Content-Type: application/json` and `body`.
pub fn json_reply(status: u16, body: &Value) -> Reply {
    json_text_reply(status, body.to_string())
}

/// A chat completion (model `m`) whose one choice answers `content`.
pub fn chat_reply(content: &str) -> Reply {
    json_reply(
        200,
        &serde_json::json!({"id": "c", "object": "chat.completion", "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}]}),
    )
}

/// A JSON answer whose body is the literal text `body`.
pub fn json_text_reply(status: u16, body: String) -> Reply {
    Reply::Respond {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.into_bytes(),
    }
}

/// A redirect: `status` with `Location: location` and no body.
pub fn redirect_reply(status: u16, location: String) -> Reply {
    Reply::Respond {
        status,
        headers: vec![("Location".into(), location)],
        body: Vec::new(),
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The request target as sent (path and query).
    pub target: String,
    /// The target without its query.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A canned-response HTTP/1.1 server on 127.0.0.1:<ephemeral>, one thread per connection.
pub struct Server {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    connections: Arc<AtomicUsize>,
}

impl Server {
    /// Routes are `(method, path)`; anything else gets 404.
    pub fn start(routes: &[(&str, &str, Reply)]) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let routes: Arc<HashMap<(String, String), Reply>> = Arc::new(
            routes
                .iter()
                .map(|(m, p, r)| (((*m).to_owned(), (*p).to_owned()), r.clone()))
                .collect(),
        );
        let seen = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let (seen_t, conns_t) = (Arc::clone(&seen), Arc::clone(&connections));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                conns_t.fetch_add(1, Ordering::SeqCst);
                let (routes, seen) = (Arc::clone(&routes), Arc::clone(&seen_t));
                std::thread::spawn(move || serve(stream, &routes, &seen));
            }
        });
        Server {
            addr,
            seen,
            connections,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.addr.port())
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Connections accepted so far (after giving one on its way a moment to be counted).
    pub fn connections(&self) -> usize {
        std::thread::sleep(Duration::from_millis(20));
        self.connections.load(Ordering::SeqCst)
    }

    /// Every request read so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("seen lock").clone()
    }

    /// `(method, path)` of every request.
    pub fn requests(&self) -> Vec<(String, String)> {
        self.seen()
            .into_iter()
            .map(|s| (s.method, s.path))
            .collect()
    }

    /// The `POST` requests.
    pub fn posts(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method == "POST")
            .collect()
    }

    /// How many `POST` requests arrived.
    pub fn post_count(&self) -> usize {
        self.posts().len()
    }
}

fn serve(stream: TcpStream, routes: &HashMap<(String, String), Reply>, seen: &Mutex<Vec<Seen>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let target = parts.next().unwrap_or("").to_owned();
    let path = target.split('?').next().unwrap_or("").to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 {
            return;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    seen.lock().expect("seen lock").push(Seen {
        method: method.clone(),
        target,
        path: path.clone(),
        headers,
        body,
    });
    let reply = routes
        .get(&(method, path))
        .cloned()
        .unwrap_or_else(|| json_reply(404, &json!({"error": "no such route"})));
    let reply = match reply {
        Reply::Sequence(steps) => {
            let mut steps = steps.lock().expect("sequence lock");
            if steps.len() > 1 {
                steps.remove(0)
            } else {
                steps
                    .first()
                    .cloned()
                    .unwrap_or_else(|| json_reply(500, &json!({"error": "empty sequence"})))
            }
        }
        other => other,
    };
    let mut stream = stream;
    match reply {
        Reply::Sequence(_) => {}
        Reply::Stall => std::thread::sleep(Duration::from_secs(20)),
        Reply::Big(size) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes());
            let chunk = vec![b'a'; 64 * 1024];
            let mut left = size;
            while left > 0 {
                let n = left.min(chunk.len());
                if stream.write_all(&chunk[..n]).is_err() {
                    return;
                }
                left -= n;
            }
        }
        Reply::Respond {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Canned\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = stream
                .write_all(head.as_bytes())
                .and_then(|()| stream.write_all(&body));
            let _ = stream.flush();
            let _ = stream.shutdown(std::net::Shutdown::Write);
            // Drain until the client closes so the close is orderly.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        }
    }
}
