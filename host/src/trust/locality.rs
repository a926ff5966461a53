//! Local versus remote classification of a destination (trust.md §3.6).
//!
//! Display only: the result adds a `[local]` tag; it never suppresses disclosure and never
//! decides whether a lane may run. Every comparison is exact (never a substring or suffix test).

use url::Url;

/// The literal loopback names of trust.md §10.
pub const LOOPBACK_NAMES: [&str; 5] = ["localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0"];

/// Reports whether `value` (a resolved host string) names a loopback destination.
///
/// The reference masks oversized non-final IPv4 parts to 8 bits (`383.0.0.1` comes out local);
/// gsd-lane treats any part wider than its field as not local (`[HARD]`).
pub fn is_local_destination(value: &str) -> bool {
    let host = extract_host(value).to_lowercase();
    let host = host.strip_prefix('[').unwrap_or(&host);
    let host = host.strip_suffix(']').unwrap_or(host);
    if LOOPBACK_NAMES.contains(&host) {
        return true;
    }
    if host.contains(':') {
        return is_ipv6_loopback(host);
    }
    is_ipv4_loopback(host)
}

/// Step 1 and 2: the URL parser's host, else the bare host.
fn extract_host(value: &str) -> String {
    if let Ok(url) = Url::parse(value) {
        if let Some(host) = url.host_str().filter(|h| !h.is_empty()) {
            return host.to_owned();
        }
    }
    bare_host(value)
}

fn bare_host(value: &str) -> String {
    let trimmed = value.trim();
    let rest = trimmed
        .split_once("://")
        .map_or(trimmed, |(_, after)| after);
    let cut = rest.find(['/', '?', '#']).map_or(rest, |at| &rest[..at]);
    if let Some(inner) = cut.strip_prefix('[') {
        return match inner.find(']') {
            Some(close) => inner[..close].to_owned(),
            None => cut.to_owned(),
        };
    }
    match cut.matches(':').count() {
        0 => cut.to_owned(),
        1 => cut.split(':').next().unwrap_or("").to_owned(),
        _ => cut.to_owned(),
    }
}

/// Step 5: `::1`, `::ffff:<IPv4 loopback>`, or all-zero groups ending in 1.
fn is_ipv6_loopback(host: &str) -> bool {
    if host == "::1" {
        return true;
    }
    if let Some(mapped) = host.strip_prefix("::ffff:") {
        return !mapped.is_empty() && is_ipv4_loopback(mapped);
    }
    let pieces: Vec<&str> = host.split(':').filter(|p| !p.is_empty()).collect();
    let Some((last, init)) = pieces.split_last() else {
        return false;
    };
    init.iter().all(|p| p.bytes().all(|b| b == b'0')) && last.trim_start_matches('0') == "1"
}

/// Step 6: IPv4 under `inet_aton` rules; local iff the top byte is 127.
fn is_ipv4_loopback(host: &str) -> bool {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return false;
    }
    let mut values = Vec::with_capacity(parts.len());
    for part in &parts {
        match parse_part(part) {
            Some(value) => values.push(value),
            None => return false,
        }
    }
    let Some((last, init)) = values.split_last() else {
        return false;
    };
    // Non-final parts fill one byte each; the last fills the remaining bytes.
    if init.iter().any(|v| *v > 0xFF) {
        return false;
    }
    let remaining_bits = 8 * (4 - init.len() as u32);
    let last_max: u64 = if remaining_bits >= 32 {
        0xFFFF_FFFF
    } else {
        (1u64 << remaining_bits) - 1
    };
    if *last > last_max {
        return false;
    }
    let mut address: u64 = 0;
    for (index, value) in init.iter().enumerate() {
        address |= value << (24 - 8 * index as u32);
    }
    address |= last;
    address <= 0xFFFF_FFFF && address >> 24 == 127
}

/// One `inet_aton` part: hex `0x…`, octal `0…`, or decimal. `None` when malformed or huge.
fn parse_part(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) =
        if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
            if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            (hex, 16)
        } else if part.len() > 1 && part.starts_with('0') {
            if !part.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return None;
            }
            (&part[1..], 8)
        } else {
            if !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (part, 10)
        };
    // Leading zeros cannot overflow; anything longer than u64 is certainly out of range.
    let significant = digits.trim_start_matches('0');
    if significant.len() > 16 {
        return Some(u64::MAX);
    }
    if significant.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(significant, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every "local" value of the §3.6 table (the `[HARD]` row excluded).
    pub(crate) const LOCAL: &[&str] = &[
        "localhost",
        "LOCALHOST",
        "localhost:1234",
        "http://localhost:8080",
        "127.0.0.1",
        "127.0.0.1:1234",
        "http://127.0.0.1:11434",
        "127.1",
        "127.0.1",
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "::1",
        "[::1]",
        "[::1]:8080",
        "http://[::1]",
        "::ffff:127.0.0.1",
        "[::ffff:127.1]",
        "0.0.0.0",
        "http://0.0.0.0:11434",
        "0:0:0:0:0:0:0:1",
        "http://[0:0:0:0:0:0:0:1]:1",
        "http://127.0.0.1.:8080",
        "0000::0001",
    ];

    /// Every "remote" value of the §3.6 table, plus the `[HARD]` oversized parts.
    pub(crate) const REMOTE: &[&str] = &[
        "localhost.evil.com",
        "notlocalhost.example",
        "evil-localhost",
        "http://evil.com#localhost",
        "http://evil.com?x=localhost",
        "http://localhost@evil.com",
        "http://user@localhost@evil.com",
        "http://127.0.0.1.evil.com",
        "192.168.1.5:8080",
        "10.0.0.1",
        "8.8.8.8",
        "128.0.0.1",
        "126.255.255.255",
        "::",
        "http://[::]:1",
        "http://[fe80::1]/",
        "localhost.",
        "foo.localhost",
        "http://[::ffff:127.0.0.1]:8080",
        "4294967296",
        "383.0.0.1",
        "127.0.0.300",
        "http://192.168.1.50:1234",
        "http://remote.example",
    ];

    #[test]
    fn d05_local_table() {
        for value in LOCAL {
            assert!(is_local_destination(value), "{value} should be local");
        }
    }

    #[test]
    fn d06_remote_table() {
        for value in REMOTE {
            assert!(!is_local_destination(value), "{value} should be remote");
        }
    }

    #[test]
    fn never_panics_on_odd_values() {
        for value in [
            "",
            "[",
            "]",
            "[]",
            ":",
            "::::",
            "0x",
            "0",
            "00",
            "09",
            ".",
            "..",
            "1.2.3.4.5",
            "http://",
            "[::ffff:]",
            "99999999999999999999999999",
        ] {
            let _ = is_local_destination(value);
        }
        assert!(!is_local_destination(""));
        assert!(!is_local_destination("99999999999999999999999999"));
    }
}
