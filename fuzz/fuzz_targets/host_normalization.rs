//! Host normalization: every normalized http(s) URL with a host re-parses to the same scheme,
//! host and port, and normalization is idempotent on such output; anything else is kept
//! verbatim (trimmed, trailing `/` removed).
#![no_main]
use libfuzzer_sys::fuzz_target;
use gsd_lane::api::config::normalize_host;

fuzz_target!(|data: &[u8]| {
    let raw = String::from_utf8_lossy(data);
    let normalized = normalize_host(&raw);
    // The same trim the product uses (ECMAScript whitespace: U+0085 is not trimmed).
    let trimmed = gsd_lane::api::config::trim_ecma_whitespace(&raw);
    let parsed_input = url::Url::parse(trimmed)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .filter(|u| u.host_str().is_some_and(|h| !h.is_empty()));
    if parsed_input.is_none() {
        assert_eq!(normalized, trimmed.trim_end_matches('/'));
    }
    if let Some(input) = parsed_input {
        let output = url::Url::parse(&normalized).expect("normalized URL re-parses");
        assert_eq!(output.scheme(), input.scheme());
        assert_eq!(output.host_str().map(str::to_ascii_lowercase), input.host_str().map(str::to_ascii_lowercase));
        assert_eq!(output.port_or_known_default(), input.port_or_known_default());
        assert_eq!(normalize_host(&normalized), normalized);
    }
});
