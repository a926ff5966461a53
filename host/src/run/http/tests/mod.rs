//! The engine over both schemes: every scenario, hostile or not, runs against a plain and a
//! TLS loopback server. No wall-clock thresholds: a bounded failure is asserted by the error
//! naming the bound that stopped it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod server;

use std::net::TcpListener;
use std::time::Duration;

use gsd_lane_sdk::{HttpMethod, HttpReport, HttpRequest};

use super::agent::agent;
use super::limits::{INPUT_BUFFER_BYTES, MAX_HEAD_BYTES};
use super::origin::check_request_url;
use super::resolver::OriginResolver;
use super::*;
use server::{find, test_roots, Reply, Scheme, TestServer, SCHEMES};

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
    HttpRequest::get(url.to_owned(), Duration::from_millis(timeout_ms))
}

fn post(url: &str, body: &str) -> HttpRequest {
    HttpRequest::post_json(url.to_owned(), body.to_owned(), Duration::from_secs(5))
}

fn limits(max_body_bytes: u64) -> HttpLimits {
    HttpLimits {
        max_body_bytes,
        ..HttpLimits::default()
    }
}

/// Sends through the one engine, trusting the test authority (and nothing else) for https.
fn run(request: &HttpRequest, origin: &Origin, limits: &HttpLimits) -> HttpReport {
    send_trusting(request, origin, limits, &test_roots())
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

/// Serves `reply` once per scheme and returns each scheme's report.
fn each_scheme(
    reply: &Reply,
    request_for: impl Fn(&TestServer) -> HttpRequest,
    limits: &HttpLimits,
) -> Vec<(Scheme, HttpReport)> {
    SCHEMES
        .iter()
        .map(|&scheme| {
            let server = TestServer::start(scheme, reply.clone());
            let report = run(&request_for(&server), &server.origin(), limits);
            (scheme, report)
        })
        .collect()
}

/// Asserts that `reply` fails over both schemes with an error containing every `needle`.
fn fails_naming(reply: Reply, timeout_ms: u64, limits: &HttpLimits, needles: &[&str]) {
    for (scheme, report) in each_scheme(&reply, |s| get(&s.url("/"), timeout_ms), limits) {
        let error = failed(report);
        for needle in needles {
            assert!(
                error.contains(needle),
                "{scheme:?}: {needle:?} not in {error:?}"
            );
        }
    }
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
    let error = check_request_url(&joined, &verified)
        .unwrap_err()
        .to_string();
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
        let error = check_request_url(url, &verified).unwrap_err().to_string();
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

// ---------------------------------------------------------------- agent configuration (E17, E18)

#[test]
fn agent_has_no_redirects_no_proxy_and_a_capped_head() {
    let origin = Origin::of("https://127.0.0.1:9").unwrap();
    let agent = agent(
        &origin,
        &HttpLimits::default(),
        Duration::from_secs(1),
        &TlsRoots::Mozilla,
    );
    let config = agent.config();
    assert_eq!(config.max_redirects(), 0);
    assert!(!config.max_redirects_will_error());
    assert!(
        config.proxy().is_none(),
        "no proxy, none from the environment"
    );
    assert!(!config.http_status_as_error());
    assert_eq!(config.max_response_header_size(), MAX_HEAD_BYTES);
    assert_eq!(config.max_idle_connections(), 0);
    assert!(matches!(
        config.tls_config().root_certs(),
        ureq::tls::RootCerts::WebPki
    ));
}

#[test]
fn resolver_only_allows_the_verified_origin() {
    let resolver = OriginResolver::new(Origin::of("http://127.0.0.1:9").unwrap());
    let uri = |text: &str| text.parse::<ureq::http::Uri>().unwrap();
    assert!(resolver.allows(&uri("http://127.0.0.1:9/v1")));
    for other in [
        "http://127.0.0.1:10/",
        "https://127.0.0.1:9/",
        "http://127.0.0.2:9/",
        "http://localhost:9/",
        "http://127.0.0.1/",
    ] {
        assert!(!resolver.allows(&uri(other)), "{other}");
    }
    let default_port = OriginResolver::new(Origin::of("https://a.example").unwrap());
    assert!(default_port.allows(&uri("https://a.example/x")));
    assert!(default_port.allows(&uri("https://A.EXAMPLE:443/x")));
}

#[test]
fn limits_default_to_16_mib_and_2_s() {
    let limits = HttpLimits::default();
    assert_eq!(limits.max_body_bytes, 16 * 1024 * 1024);
    assert_eq!(limits.connect_timeout, Duration::from_secs(2));
}

// ---------------------------------------------------------------- exchanges over both schemes

#[test]
fn get_200_returns_the_body() {
    let reply = Reply::Canned(response("200 OK", &[], br#"{"data":[{"id":"m"}]}"#));
    for (scheme, report) in each_scheme(
        &reply,
        |s| get(&s.url("/v1/models"), 2000),
        &HttpLimits::default(),
    ) {
        assert_eq!(
            answered(report),
            (200, r#"{"data":[{"id":"m"}]}"#.to_owned()),
            "{scheme:?}"
        );
    }
}

#[test]
fn post_sends_exactly_the_json_body_with_content_type_and_no_auth() {
    let body = r#"{"model":"m","messages":[{"role":"user","content":"héllo \"q\""}]}"#;
    for scheme in SCHEMES {
        let server = TestServer::start(scheme, Reply::Canned(response("200 OK", &[], b"{}")));
        let request = post(&server.url("/v1/chat/completions"), body);
        let report = run(&request, &server.origin(), &HttpLimits::default());
        assert_eq!(answered(report), (200, "{}".to_owned()), "{scheme:?}");
        let port = server.port;
        let served = server.finish();
        assert_eq!(served.connections, 1, "{scheme:?}");
        let captured = &served.requests[0];
        let end = find(captured, b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&captured[..end]).to_string();
        let lower = head.to_ascii_lowercase();
        assert!(
            head.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"),
            "{scheme:?}: {head}"
        );
        assert!(
            lower.contains(&format!("\r\nhost: 127.0.0.1:{port}")),
            "{scheme:?}: {head}"
        );
        assert!(
            lower.contains("\r\ncontent-type: application/json"),
            "{scheme:?}: {head}"
        );
        assert!(
            lower.contains(&format!("\r\ncontent-length: {}", body.len())),
            "{scheme:?}: {head}"
        );
        assert!(!lower.contains("authorization"), "{scheme:?}: {head}");
        assert_eq!(&captured[end + 4..], body.as_bytes(), "{scheme:?}");
    }
}

#[test]
fn request_line_never_carries_control_characters() {
    for scheme in SCHEMES {
        let server = TestServer::start(scheme, Reply::Canned(response("200 OK", &[], b"ok")));
        let url = server.url("/v1\r\nX-Injected: 1 a");
        let _ = run(&get(&url, 2000), &server.origin(), &HttpLimits::default());
        let served = server.finish();
        for request in &served.requests {
            let text = String::from_utf8_lossy(request);
            assert!(!text.contains("\r\nX-Injected: 1"), "{scheme:?}: {text}");
        }
    }
}

#[test]
fn error_status_body_is_returned_verbatim() {
    let error = br#"{"error":{"message":"model not found","type":"invalid_request_error"}}"#;
    let reply = Reply::Canned(response("500 Internal Server Error", &[], error));
    for (scheme, report) in each_scheme(
        &reply,
        |s| post(&s.url("/v1/chat/completions"), "{}"),
        &HttpLimits::default(),
    ) {
        let expected = String::from_utf8(error.to_vec()).unwrap();
        assert_eq!(answered(report), (500, expected), "{scheme:?}");
    }
}

#[test]
fn redirect_is_returned_not_followed() {
    for scheme in SCHEMES {
        for method in [HttpMethod::Get, HttpMethod::Post] {
            let elsewhere =
                TestServer::start(scheme, Reply::Canned(response("200 OK", &[], b"stolen")));
            let location = format!("Location: {}", elsewhere.url("/steal"));
            let server = TestServer::start(
                scheme,
                Reply::Canned(response("307 Temporary Redirect", &[&location], b"moved")),
            );
            let mut request = post(&server.url("/v1/chat/completions"), "{}");
            request.method = method;
            let report = run(&request, &server.origin(), &HttpLimits::default());
            assert_eq!(
                answered(report),
                (307, "moved".to_owned()),
                "{scheme:?} {method:?}"
            );
            assert_eq!(elsewhere.finish().connections, 0, "{scheme:?} {method:?}");
            assert_eq!(server.finish().connections, 1, "{scheme:?} {method:?}");
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
        for (scheme, report) in each_scheme(reply, |s| get(&s.url("/"), 2000), &limits(10)) {
            assert_eq!(
                failed(report),
                "response body exceeds 10 bytes",
                "{scheme:?}"
            );
        }
    }
    // Exactly at the cap is fine.
    let at_cap = Reply::Canned(response("200 OK", &[], b"0123456789"));
    for (scheme, report) in each_scheme(&at_cap, |s| get(&s.url("/"), 2000), &limits(10)) {
        assert_eq!(
            answered(report),
            (200, "0123456789".to_owned()),
            "{scheme:?}"
        );
    }
}

#[test]
fn chunked_and_close_delimited_bodies_are_read() {
    let replies = [
        raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=1\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n"),
        raw("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nWikipedia"),
        raw("HTTP/1.0 200 OK\r\n\r\nWikipedia"),
        raw("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nWikipedia"),
    ];
    for bytes in replies {
        for (scheme, report) in each_scheme(
            &Reply::Canned(bytes),
            |s| get(&s.url("/"), 2000),
            &HttpLimits::default(),
        ) {
            assert_eq!(
                answered(report),
                (200, "Wikipedia".to_owned()),
                "{scheme:?}"
            );
        }
    }
    for (scheme, report) in each_scheme(
        &Reply::Canned(raw("HTTP/1.1 204 No Content\r\n\r\n")),
        |s| get(&s.url("/"), 2000),
        &HttpLimits::default(),
    ) {
        assert_eq!(answered(report), (204, String::new()), "{scheme:?}");
    }
}

#[test]
fn malformed_framing_fails() {
    let replies = [
        "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n",
        "SSH-2.0-OpenSSH\r\n\r\n",
        "",
    ];
    for text in replies {
        for (scheme, report) in each_scheme(
            &Reply::Canned(raw(text)),
            |s| get(&s.url("/"), 2000),
            &HttpLimits::default(),
        ) {
            assert!(!failed(report).is_empty(), "{scheme:?} {text:?}");
        }
    }
}

// ---------------------------------------------------------------- hostile responses

#[test]
fn endless_chunk_size_line_is_cut_off() {
    let reply = Reply::Endless {
        head: raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
        filler: b'a',
    };
    fails_naming(
        reply,
        10_000,
        &HttpLimits::default(),
        &["chunk-size line", &INPUT_BUFFER_BYTES.to_string()],
    );
}

#[test]
fn endless_header_is_cut_off_at_the_head_cap() {
    let reply = Reply::Endless {
        head: raw("HTTP/1.1 200 OK\r\nX-Endless: "),
        filler: b'a',
    };
    fails_naming(
        reply,
        10_000,
        &HttpLimits::default(),
        &["response head", &MAX_HEAD_BYTES.to_string()],
    );
}

#[test]
fn endless_status_line_is_cut_off_at_the_head_cap() {
    let reply = Reply::Endless {
        head: raw("HTTP/1.1 200 "),
        filler: b'O',
    };
    fails_naming(
        reply,
        10_000,
        &HttpLimits::default(),
        &["response head", &MAX_HEAD_BYTES.to_string()],
    );
}

#[test]
fn many_headers_fail_at_the_head_cap() {
    let mut flood = String::from("HTTP/1.1 200 OK\r\n");
    for i in 0..20_000 {
        flood.push_str(&format!("X-H{i}: v\r\n"));
    }
    flood.push_str("Content-Length: 2\r\n\r\nok");
    fails_naming(
        Reply::Canned(raw(&flood)),
        10_000,
        &HttpLimits::default(),
        &["response head", "more than 128 header fields"],
    );
}

#[test]
fn ten_gb_content_length_fails_before_reading_the_body() {
    let reply = Reply::Endless {
        head: raw("HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n"),
        filler: b'a',
    };
    fails_naming(
        reply,
        10_000,
        &HttpLimits::default(),
        &[&format!(
            "response body exceeds {DEFAULT_MAX_BODY_BYTES} bytes"
        )],
    );
}

#[test]
fn endless_body_fails_at_the_body_cap() {
    let reply = Reply::Endless {
        head: raw("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"),
        filler: b'a',
    };
    fails_naming(
        reply,
        30_000,
        &limits(1024 * 1024),
        &["response body exceeds 1048576 bytes"],
    );
}

#[test]
fn close_mid_body_fails() {
    let reply = Reply::Canned(raw("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc"));
    fails_naming(reply, 5_000, &HttpLimits::default(), &["closed"]);
    let chunked = Reply::Canned(raw(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc",
    ));
    fails_naming(chunked, 5_000, &HttpLimits::default(), &["closed"]);
}

#[test]
fn byte_by_byte_body_stops_at_the_overall_deadline() {
    let reply = Reply::Drip {
        head: raw("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"),
        every: Duration::from_millis(5),
    };
    fails_naming(reply, 400, &HttpLimits::default(), &["timeout", "400 ms"]);
}

#[test]
fn silent_server_stops_at_the_overall_deadline() {
    fails_naming(
        Reply::Silent,
        300,
        &HttpLimits::default(),
        &["timeout", "300 ms"],
    );
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let reply = Reply::Canned(response("200 OK", &[], b"ok \xff\xfe end"));
    for (scheme, report) in each_scheme(&reply, |s| get(&s.url("/"), 2000), &HttpLimits::default())
    {
        assert_eq!(
            answered(report),
            (200, "ok \u{fffd}\u{fffd} end".to_owned()),
            "{scheme:?}"
        );
    }
}

// ---------------------------------------------------------------- connecting

#[test]
fn connection_refused_names_econnrefused() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    for scheme in ["http", "https"] {
        let url = format!("{scheme}://127.0.0.1:{port}/v1/models");
        let origin = Origin::of(&url).unwrap();
        let error = failed(run(&get(&url, 2000), &origin, &HttpLimits::default()));
        assert!(error.contains("ECONNREFUSED"), "{scheme}: {error}");
    }
}

#[test]
fn other_origin_is_refused_before_connecting() {
    for scheme in SCHEMES {
        let verified = TestServer::start(scheme, Reply::Canned(response("200 OK", &[], b"ok")));
        let other = TestServer::start(scheme, Reply::Canned(response("200 OK", &[], b"stolen")));
        let attempts = [
            other.url("/v1/models"),
            // verified host + '@other' path, as a plain concatenation would build it
            format!("{}@127.0.0.1:{}/v1/models", verified.url(""), other.port),
            format!("http://user:pw@127.0.0.1:{}/v1/models", verified.port),
            format!("ftp://127.0.0.1:{}/v1/models", verified.port),
            match scheme {
                Scheme::Http => format!("https://127.0.0.1:{}/v1/models", verified.port),
                Scheme::Https => format!("http://127.0.0.1:{}/v1/models", verified.port),
            },
        ];
        for url in &attempts {
            let error = failed(run(
                &get(url, 2000),
                &verified.origin(),
                &HttpLimits::default(),
            ));
            assert!(error.starts_with("refused:"), "{scheme:?} {url}: {error}");
        }
        assert_eq!(other.finish().connections, 0, "{scheme:?}");
        assert_eq!(verified.finish().connections, 0, "{scheme:?}");
    }
}

#[test]
fn zero_timeout_sends_nothing() {
    for scheme in SCHEMES {
        let server = TestServer::start(scheme, Reply::Canned(response("200 OK", &[], b"ok")));
        let error = failed(run(
            &get(&server.url("/"), 0),
            &server.origin(),
            &HttpLimits::default(),
        ));
        assert!(error.contains("timeout"), "{error}");
        assert_eq!(server.finish().connections, 0);
    }
}

#[test]
fn production_roots_do_not_trust_the_test_authority() {
    let server = TestServer::start(Scheme::Https, Reply::Canned(response("200 OK", &[], b"ok")));
    let (report, _) = send_observed(
        &get(&server.url("/"), 2000),
        &server.origin(),
        &HttpLimits::default(),
    );
    let error = failed(report);
    assert!(error.contains("TLS"), "{error}");
    let served = server.finish();
    assert!(
        served.requests.iter().all(Vec::is_empty),
        "nothing was sent"
    );
}

#[test]
fn a_certificate_from_another_authority_is_refused() {
    let server = TestServer::start_untrusted(Reply::Canned(response("200 OK", &[], b"ok")));
    let error = failed(run(
        &get(&server.url("/"), 2000),
        &server.origin(),
        &HttpLimits::default(),
    ));
    assert!(error.contains("TLS"), "{error}");
    assert!(server.finish().requests.iter().all(Vec::is_empty));
}

#[test]
fn https_to_a_plain_listener_fails_cleanly() {
    let server = TestServer::start(Scheme::Http, Reply::Canned(response("200 OK", &[], b"ok")));
    let url = format!("https://127.0.0.1:{}/v1/models", server.port);
    let origin = Origin::of(&url).unwrap();
    let error = failed(run(&get(&url, 500), &origin, &HttpLimits::default()));
    assert!(!error.is_empty());
    assert_eq!(server.finish().connections, 1);
}
