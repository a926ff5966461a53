//! Peak memory of the HTTP engine against hostile responses, over `http` and `https`.
//!
//! Each scenario runs in a fresh process (this binary re-executed with `--one <scheme>
//! <scenario>`): a loopback server (plain, or TLS with a test authority the client alone
//! trusts) plays the hostile part; the process resets its peak RSS (`/proc/self/clear_refs`),
//! makes one request through `gsd_lane::api::run::http::send_trusting` with the default limits
//! (16 MiB body cap), and reports how far its peak RSS rose and the error that ended the
//! request. Linux only (it reads `/proc/self/status`).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, missing_docs)]

use std::process::Command;
use std::time::{Duration, Instant};

use gsd_lane::api::run::http::{
    send_trusting, HttpLimits, Origin, TlsRoots, DEFAULT_MAX_BODY_BYTES,
};
use gsd_lane_sdk::{HttpReport, HttpRequest};

#[path = "../src/run/http/tests/server.rs"]
mod server;

use server::{test_roots, Reply, Scheme, TestServer, SCHEMES};

/// The hostile responses, by name.
const SCENARIOS: [&str; 8] = [
    "endless-chunk-size-line",
    "endless-header",
    "endless-status-line",
    "10gb-content-length",
    "endless-body",
    "close-mid-body",
    "byte-by-byte-body",
    "invalid-utf8-body",
];

fn reply(scenario: &str) -> (Reply, Duration) {
    let endless = |head: &str, filler: u8| Reply::Endless {
        head: head.as_bytes().to_vec(),
        filler,
    };
    let ten = Duration::from_secs(10);
    match scenario {
        "endless-chunk-size-line" => (
            endless(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                b'a',
            ),
            ten,
        ),
        "endless-header" => (endless("HTTP/1.1 200 OK\r\nX-Endless: ", b'a'), ten),
        "endless-status-line" => (endless("HTTP/1.1 200 ", b'O'), ten),
        "10gb-content-length" => (
            endless(
                "HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n",
                b'a',
            ),
            ten,
        ),
        "endless-body" => (
            endless("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", b'a'),
            ten,
        ),
        "close-mid-body" => {
            // Promises the whole cap, sends 1 MiB, closes.
            let mut bytes =
                format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", 16 << 20).into_bytes();
            bytes.extend_from_slice(&[b'a'; 1 << 20]);
            (Reply::Canned(bytes), ten)
        }
        "byte-by-byte-body" => (
            Reply::Drip {
                head: b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n".to_vec(),
                every: Duration::from_millis(1),
            },
            Duration::from_secs(2),
        ),
        "invalid-utf8-body" => (
            endless("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", 0xff),
            ten,
        ),
        other => panic!("unknown scenario {other}"),
    }
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

fn get(url: String, timeout: Duration) -> HttpRequest {
    HttpRequest::get(url, timeout)
}

/// One scenario in this process; prints `scheme scenario growth_kib ms error`.
fn one(scheme: Scheme, scenario: &str) {
    let roots: TlsRoots = test_roots();
    let limits = HttpLimits::default();
    // Warm up every code path (TLS, agent, resolver) on a well-behaved server first.
    let fine = TestServer::start(
        scheme,
        Reply::Canned(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec()),
    );
    let warm = send_trusting(
        &get(fine.url("/"), Duration::from_secs(5)),
        &fine.origin(),
        &limits,
        &roots,
    );
    assert!(
        matches!(warm, HttpReport::Response { status: 200, .. }),
        "{warm:?}"
    );
    drop(fine);
    let (reply, timeout) = reply(scenario);
    let server = TestServer::start(scheme, reply);
    let origin: Origin = server.origin();
    let request = get(server.url("/v1/chat/completions"), timeout);
    std::fs::write("/proc/self/clear_refs", "5").expect("reset peak RSS");
    let before = status_kib("VmRSS:");
    let started = Instant::now();
    let report = send_trusting(&request, &origin, &limits, &roots);
    let elapsed = started.elapsed();
    let peak = status_kib("VmHWM:");
    let error = match report {
        HttpReport::Failed { error } => error,
        HttpReport::Response { status, body } => {
            format!("answered {status} ({} bytes)", body.len())
        }
    };
    drop(server);
    println!(
        "{:?}\t{scenario}\t{}\t{}\t{}",
        scheme,
        peak.saturating_sub(before),
        elapsed.as_millis(),
        error.chars().take(110).collect::<String>()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--one") {
        let scheme = match args[at + 1].as_str() {
            "http" => Scheme::Http,
            _ => Scheme::Https,
        };
        one(scheme, &args[at + 2]);
        return;
    }
    let me = std::env::current_exe().expect("current exe");
    let cap_kib = DEFAULT_MAX_BODY_BYTES / 1024;
    println!(
        "HTTP engine vs hostile responses: peak RSS growth per request (body cap {} MiB; within = cap + 1 MiB)",
        cap_kib / 1024
    );
    println!(
        "{:<6} {:<26} {:>12} {:>8} {:>7}  error",
        "scheme", "scenario", "peak growth", "time", "within"
    );
    for scheme in SCHEMES {
        let name = match scheme {
            Scheme::Http => "http",
            Scheme::Https => "https",
        };
        for scenario in SCENARIOS {
            let out = Command::new(&me)
                .args(["--one", name, scenario])
                .output()
                .expect("run scenario");
            let text = String::from_utf8_lossy(&out.stdout);
            let fields: Vec<&str> = text.trim_end().splitn(5, '\t').collect();
            let [_, _, growth, ms, error] = fields[..] else {
                println!(
                    "{name:<6} {scenario:<26} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                continue;
            };
            let growth: u64 = growth.parse().unwrap_or(u64::MAX);
            let within = if growth <= cap_kib + 1024 {
                "yes"
            } else {
                "NO"
            };
            println!(
                "{name:<6} {scenario:<26} {:>8.1} MiB {:>5} ms {within:>7}  {error}",
                growth as f64 / 1024.0,
                ms
            );
        }
    }
}
