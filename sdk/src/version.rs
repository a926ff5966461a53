//! The SDK version and its compatibility rule.

/// The version of this SDK, as built.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// True when a handler built against `theirs` can be used by a host built with `ours`.
///
/// Caret rule: same major version; for `0.x`, the same minor version too. Unparseable
/// versions are never compatible.
pub fn is_compatible(ours: &str, theirs: &str) -> bool {
    match (parse(ours), parse(theirs)) {
        (Some((0, ours_minor)), Some((0, their_minor))) => ours_minor == their_minor,
        (Some((ours_major, _)), Some((their_major, _))) => ours_major == their_major,
        _ => false,
    }
}

fn parse(version: &str) -> Option<(u64, u64)> {
    let core = version.split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u64>().ok()?;
    parts.next().is_none().then_some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_compatibility() {
        assert!(is_compatible("0.1.0", "0.1.7"));
        assert!(!is_compatible("0.1.0", "0.2.0"));
        assert!(is_compatible("1.2.0", "1.9.1"));
        assert!(!is_compatible("1.2.0", "2.0.0"));
        assert!(!is_compatible("1.2.0", "garbage"));
        assert!(!is_compatible("1.2.0", "1.2"));
    }
}
