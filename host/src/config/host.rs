//! Host normalization for `openai-http` lanes (invocation.md §3.4, trust.md §6.3).

use std::fmt::Write as _;

use url::Url;

use super::text::trim_ecma_whitespace;

/// Normalizes a configured or default host into the form that is compared and requested.
///
/// The input is trimmed of ECMAScript whitespace. A value that does not parse as an absolute
/// WHATWG URL, or parses without a host (`localhost:11434`), is returned verbatim minus trailing
/// `/`. Otherwise the result is `<scheme>://<host>[:<port>]<path>` with scheme and host in lower
/// case, the scheme's default port dropped, trailing `/` removed from the path, and userinfo,
/// query and fragment dropped.
pub fn normalize_host(raw: &str) -> String {
    let trimmed = trim_ecma_whitespace(raw);
    if trimmed.is_empty() {
        return String::new();
    }
    match Url::parse(trimmed) {
        // Only http and https are rebuilt: they are the only schemes a lane may use, and their
        // rebuilt form is stable. Other schemes (`file:` with drive-letter paths, found by
        // fuzzing) can re-parse to another host or path, so they stay verbatim and fail
        // visibly as `malformed_lane`.
        Ok(url) if matches!(url.scheme(), "http" | "https") => {
            match url.host_str().filter(|host| !host.is_empty()) {
                Some(host) => {
                    let rebuilt = rebuild(&url, host);
                    if same_origin(&url, &rebuilt) {
                        rebuilt
                    } else {
                        verbatim(trimmed)
                    }
                }
                None => verbatim(trimmed),
            }
        }
        Ok(_) => verbatim(trimmed),
        Err(_) => verbatim(trimmed),
    }
}

/// The last path segment a base URL may carry that every OpenAI-compatible lane path repeats.
const API_VERSION_SEGMENT: &str = "/v1";

/// Joins a normalized host and a lane path (`invoke.path`, `probe.path`, `/v1/models`) into the
/// request URL.
///
/// Plain concatenation (invocation.md §4.4), except that a host ending in `/v1`, as server
/// documentation writes base URLs (`http://localhost:11434/v1`), does not repeat the segment when
/// the path starts with it: `http://localhost:11434/v1` + `/v1/models` is
/// `http://localhost:11434/v1/models`, never `/v1/v1/models`. The host itself (what is disclosed,
/// consented, pinned and compared) is left as configured; only the request URL is joined this way,
/// and it is checked against the verified origin like any other.
pub fn join_lane_path(host: &str, path: &str) -> String {
    let repeats = path == API_VERSION_SEGMENT
        || path
            .strip_prefix(API_VERSION_SEGMENT)
            .is_some_and(|rest| rest.starts_with('/'));
    match host.strip_suffix(API_VERSION_SEGMENT) {
        Some(base) if repeats && host_has_path_segment(host) => format!("{base}{path}"),
        _ => format!("{host}{path}"),
    }
}

/// True when the `/v1` at the end of `host` is a path segment, not part of the authority
/// (`http://a.com/v1`, not `http://v1` or `localhost:1/v1` without a scheme).
fn host_has_path_segment(host: &str) -> bool {
    Url::parse(host).is_ok_and(|url| {
        matches!(url.scheme(), "http" | "https")
            && url.host_str().is_some()
            && url.path().ends_with(API_VERSION_SEGMENT)
    })
}

/// True when `rebuilt` parses to the scheme, host and port of `original`.
fn same_origin(original: &Url, rebuilt: &str) -> bool {
    Url::parse(rebuilt).is_ok_and(|again| {
        again.scheme() == original.scheme()
            && again.host_str().map(str::to_ascii_lowercase)
                == original.host_str().map(str::to_ascii_lowercase)
            && again.port_or_known_default() == original.port_or_known_default()
    })
}

/// The origin a host value sends to: `<scheme>://<host>[:<port>]` of its normalized form (the
/// path dropped), or the whole normalized value when it is not an http(s) URL with a host.
/// First-use pins bind this: a path change on the same server is not an egress change, a
/// different scheme, host or port is.
pub fn origin_of(raw: &str) -> String {
    let normalized = normalize_host(raw);
    match Url::parse(&normalized) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => {
            match url.host_str().filter(|host| !host.is_empty()) {
                Some(host) => {
                    let mut out = format!("{}://{host}", url.scheme());
                    if let Some(port) = url.port() {
                        let _ = write!(out, ":{port}");
                    }
                    out
                }
                None => normalized,
            }
        }
        _ => normalized,
    }
}

/// Returns a value that is not a URL with a host, minus its trailing `/`.
fn verbatim(trimmed: &str) -> String {
    trimmed.trim_end_matches('/').to_owned()
}

/// Rebuilds a parsed URL as `<scheme>://<host>[:<port>]<path>`.
fn rebuild(url: &Url, host: &str) -> String {
    let mut out = String::with_capacity(url.as_str().len());
    out.push_str(&url.scheme().to_ascii_lowercase());
    out.push_str("://");
    out.push_str(&host.to_ascii_lowercase());
    if let Some(port) = url.port() {
        // Writing to a String cannot fail.
        let _ = write!(out, ":{port}");
    }
    out.push_str(url.path().trim_end_matches('/'));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(rows: &[(&str, &str)]) {
        for (input, expected) in rows {
            assert_eq!(normalize_host(input), *expected, "input {input:?}");
        }
    }

    #[test]
    fn origins_drop_the_path_and_keep_scheme_host_and_port() {
        for (a, b, same) in [
            ("http://host:11434/v1", "http://host:11434", true),
            ("http://host:11434/v1/", "HTTP://Host:11434/api", true),
            ("http://host:80/v1", "http://host", true),
            ("http://host:11434/v1", "http://host:11435/v1", false),
            ("http://host:11434", "https://host:11434", false),
            ("http://host:11434", "http://other:11434", false),
            ("http://u:p@host:11434/v1?x#y", "http://host:11434", true),
            ("localhost:11434", "localhost:11434/v1", false),
        ] {
            assert_eq!(origin_of(a) == origin_of(b), same, "{a} vs {b}");
        }
    }

    #[test]
    fn r_fuzz_file_url_with_drive_letter_path_keeps_its_origin() {
        // Found by fuzz/host_normalization: rebuilt, this `file:` URL lost its host.
        let raw = "file://httyyyzyyyyyy\t\t\t\t\t\t\t\t/A:\t\t\t\t\t\t\t\t\t\t\tyypsRee/:li_\u{0}f\t\u{0}(e\n*\tfile:/A:\t\t\t\t\t\t\t\t\t\t\tyypsRee/:li_\u{0}f\t\u{0}(e\n*:#";
        let input = Url::parse(raw.trim()).expect("the input parses with a host");
        let out = normalize_host(raw);
        let parsed = Url::parse(&out).expect("the output re-parses");
        assert_eq!(parsed.scheme(), input.scheme());
        assert_eq!(parsed.host_str(), input.host_str());
        assert_eq!(normalize_host(&out), out);
    }

    #[test]
    fn r_fuzz_non_http_schemes_stay_verbatim_and_idempotent() {
        // Found by fuzz/host_normalization: a `file:` URL with dot segments and a drive letter
        // re-parsed to another path each time it was rebuilt.
        let raw = "file://.///\u{fffd}\0/..///S:/\u{fffd}/\0......///,.///R\0 ///";
        let out = normalize_host(raw);
        // Verbatim, as for any value that is not an http(s) URL with a host (which is then
        // refused as `malformed_lane`); the spec's trim-then-strip is not idempotent on such
        // text (`"x /"` → `"x "` → `"x"`), and no comparison relies on it being so.
        assert_eq!(out, raw.trim_end_matches('/'));
        assert_eq!(
            normalize_host("ftp://Host.example/x/"),
            "ftp://Host.example/x"
        );
    }

    #[test]
    fn a_base_url_ending_in_v1_never_repeats_the_segment() {
        for (host, path, url) in [
            (
                "http://localhost:11434/v1",
                "/v1/models",
                "http://localhost:11434/v1/models",
            ),
            (
                "http://localhost:11434/v1",
                "/v1/chat/completions",
                "http://localhost:11434/v1/chat/completions",
            ),
            (
                "https://a.com/api/v1",
                "/v1/models",
                "https://a.com/api/v1/models",
            ),
            (
                "http://localhost:11434",
                "/v1/models",
                "http://localhost:11434/v1/models",
            ),
            // Only a whole `/v1` segment on both sides is folded.
            ("http://a.com/v1", "/v10/x", "http://a.com/v1/v10/x"),
            ("http://a.com/v1", "/api/tags", "http://a.com/v1/api/tags"),
            (
                "http://a.com/xv1",
                "/v1/models",
                "http://a.com/xv1/v1/models",
            ),
            ("http://a.com/V1", "/v1/models", "http://a.com/V1/v1/models"),
            // Not a URL with a path: concatenated as written (and refused later).
            ("localhost:1/v1", "/v1/models", "localhost:1/v1/v1/models"),
        ] {
            assert_eq!(join_lane_path(host, path), url, "{host} + {path}");
        }
    }

    #[test]
    fn invocation_table_rows() {
        check(&[
            ("http://localhost:8080/", "http://localhost:8080"),
            ("http://LOCALHOST:8080", "http://localhost:8080"),
            ("http://a.com:80", "http://a.com"),
            ("https://a.com:443", "https://a.com"),
            ("http://a.com/v1/", "http://a.com/v1"),
            ("http://LocalHost:8080/", "http://localhost:8080"),
            ("localhost:11434", "localhost:11434"),
            ("example.com:8080", "example.com:8080"),
            ("not a url", "not a url"),
            ("", ""),
        ]);
    }

    #[test]
    fn trust_table_rows() {
        check(&[
            ("http://localhost:11434/", "http://localhost:11434"),
            ("HTTP://LOCALHOST:11434", "http://localhost:11434"),
            ("http://localhost:11434//", "http://localhost:11434"),
            ("http://localhost:80", "http://localhost"),
            ("https://a.com:443/v1/", "https://a.com/v1"),
            ("http://a.com/V1", "http://a.com/V1"),
            ("http://user:pw@a.com", "http://a.com"),
            ("http://a.com?x=1#f", "http://a.com"),
            ("http://localhost:11434@evil.example", "http://evil.example"),
            ("http://127.1", "http://127.0.0.1"),
            ("http://0x7f000001:11434", "http://127.0.0.1:11434"),
            ("http://a.com/./v1/../v2", "http://a.com/v2"),
            ("http://ΑΒΓ.com", "http://xn--mxacd.com"),
            ("http://a.com.", "http://a.com."),
            ("http://[::1]:80", "http://[::1]"),
            ("localhost:11434/", "localhost:11434"),
            ("  http://a.com  ", "http://a.com"),
            ("   ", ""),
            ("\t\n\u{feff}\u{3000}", ""),
        ]);
    }

    #[test]
    fn extra_rows() {
        check(&[
            ("http://[::1]:8080/", "http://[::1]:8080"),
            ("http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080"),
            ("HtTpS://A.COM/X", "https://a.com/X"),
            ("https://a.com:8443/x//", "https://a.com:8443/x"),
            ("http://a.com/a%2Fb/", "http://a.com/a%2Fb"),
            ("http://a.com/a b", "http://a.com/a%20b"),
            ("\u{a0} http://a.com:8080/v1/ \n", "http://a.com:8080/v1"),
            ("http://a.com:8080?q", "http://a.com:8080"),
            ("https://a.com:80", "https://a.com:80"),
            ("http://a.com:443", "http://a.com:443"),
            ("example.com:8080/", "example.com:8080"),
            ("example.com:8080///", "example.com:8080"),
            ("/", ""),
            ("http://", "http:"),
            ("file:///tmp/x/", "file:///tmp/x"),
            ("\u{85}http://a.com", "\u{85}http://a.com"),
        ]);
    }

    #[test]
    fn distinct_destinations_stay_distinct() {
        let hosts = [
            "http://a.com",
            "https://a.com",
            "http://a.com:8080",
            "http://b.com",
        ];
        for (i, a) in hosts.iter().enumerate() {
            for b in &hosts[i + 1..] {
                assert_ne!(normalize_host(a), normalize_host(b));
            }
        }
    }

    fn host_parts(text: &str) -> Option<(String, String, Option<u16>)> {
        let url = Url::parse(text).ok()?;
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())?
            .to_ascii_lowercase();
        Some((url.scheme().to_owned(), host, url.port_or_known_default()))
    }

    fn url_like() -> impl Strategy<Value = String> {
        prop_oneof![
            ".{0,40}",
            "[ \t]{0,2}(?i:https?|wss?|ftp|file|foo|localhost)(:|://)[a-zA-Z0-9.:@%/?#\\[\\] _-]{0,30}[ \t]{0,2}",
            "(?i:https?)://\\[[0-9a-fA-F:.]{0,20}\\](:[0-9]{0,6})?[/.%a-z0-9]{0,12}",
        ]
    }

    #[test]
    fn verbatim_fallback_keeps_whitespace_exposed_by_slash_removal() {
        // Spec-exact: the trimmed input minus trailing `/` is returned as is, so the result of a
        // value that failed to parse can itself parse (and normalize differently) later.
        assert_eq!(normalize_host("HTTP:A /"), "HTTP:A ");
        assert_eq!(normalize_host("HTTP:A "), "http://a");
    }

    proptest! {
        #[test]
        fn rebuilt_urls_are_stable(input in url_like()) {
            // Only http/https values are rebuilt; others stay verbatim (see the test above).
            let original = host_parts(trim_ecma_whitespace(&input))
                .filter(|(scheme, _, _)| scheme == "http" || scheme == "https");
            let out = normalize_host(&input);
            if let Some(original) = original {
                prop_assert_eq!(host_parts(&out), Some(original));
                prop_assert_eq!(normalize_host(&out), out);
            }
        }

        #[test]
        fn unparsed_values_are_verbatim_minus_trailing_slash(input in url_like()) {
            let trimmed = trim_ecma_whitespace(&input);
            if host_parts(trimmed).is_none() {
                prop_assert_eq!(normalize_host(&input), trimmed.trim_end_matches('/'));
            }
        }

        #[test]
        fn never_panics_on_arbitrary_text(input in any::<String>()) {
            let _ = normalize_host(&input);
        }
    }
}
