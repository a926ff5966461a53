//! Strict SemVer versions and `engines.gsd` ranges (manifest.md §1.3, §1.4).
//!
//! Range satisfaction follows the §1.4 table exactly; it deliberately differs from npm and from
//! the `semver` crate (for example `^0` means `>=0.0.0 <0.0.1`, and pre-release tags are ignored).

/// The host's GSD-compatibility version that `engines.gsd` ranges are checked against: the
/// upstream release whose reviewer-lane vocabulary this tree speaks. 1.12.0 is the release the
/// addendum (`spec/upstream-since-2026-08.md` §10.5) names as shipping the post-August lane
/// changes this tree implements (spec/CHANGES.md, 2026-12-04).
pub const HOST_COMPAT_VERSION: &str = "1.12.0";

/// What `gsd-lane --version` prints after the program name: this build's version and the GSD
/// lane-vocabulary version it implements, the one `engines.gsd` ranges are checked against.
pub fn version_line() -> String {
    format!(
        "{} (GSD lane vocabulary {HOST_COMPAT_VERSION}: manifests' engines.gsd is checked against it)",
        env!("CARGO_PKG_VERSION")
    )
}

/// A version as `(major, minor, patch)`, widened so that "next major/minor/patch" never overflows.
type Tuple = (u128, u128, u128);

/// Reports whether `text` is a strict SemVer 2.0.0 version (§1.3).
pub fn is_strict_semver(text: &str) -> bool {
    let (rest, build) = split_off(text, '+');
    let (core, prerelease) = split_off(rest, '-');
    core_ok(core) && prerelease.into_iter().all(prerelease_ok) && build.into_iter().all(build_ok)
}

/// Splits at the first `separator`, returning the part after it when there is one.
fn split_off(text: &str, separator: char) -> (&str, Option<&str>) {
    match text.split_once(separator) {
        Some((head, tail)) => (head, Some(tail)),
        None => (text, None),
    }
}

/// Checks `MAJOR.MINOR.PATCH`: exactly three numeric identifiers.
fn core_ok(core: &str) -> bool {
    core.split('.').count() == 3 && core.split('.').all(numeric_identifier_ok)
}

/// Checks a numeric identifier: `0` or digits without a leading zero.
fn numeric_identifier_ok(part: &str) -> bool {
    is_digits(part) && (part == "0" || !part.starts_with('0'))
}

/// Checks dot-separated pre-release identifiers (numeric ones may not have leading zeros).
fn prerelease_ok(prerelease: &str) -> bool {
    prerelease
        .split('.')
        .all(|id| identifier_chars_ok(id) && (!is_digits(id) || numeric_identifier_ok(id)))
}

/// Checks dot-separated build identifiers (leading zeros allowed).
fn build_ok(build: &str) -> bool {
    build.split('.').all(identifier_chars_ok)
}

/// Reports whether `id` is non-empty and uses only `[0-9A-Za-z-]`.
fn identifier_chars_ok(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Reports whether `text` is a non-empty string of ASCII digits.
fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// Reports whether `text` passes the §1.4 range shape check (validation, not satisfiability).
pub fn range_shape_ok(text: &str) -> bool {
    let trimmed = text.trim_matches(' ');
    text.chars().all(is_range_char)
        && !trimmed.is_empty()
        && (trimmed.bytes().any(|b| b.is_ascii_digit()) || matches!(trimmed, "*" | "x" | "X"))
}

/// Reports whether `c` may appear in a range string.
fn is_range_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || " .-+|<>=~^*()".contains(c)
}

/// Reports whether `version` satisfies `range` under the §1.4 semantics.
///
/// Any alternative (split on `||`) must have every comparator parse and hold; a comparator
/// that does not parse fails its alternative closed.
pub fn range_satisfied(range: &str, version: &str) -> bool {
    let host = version_tuple(version);
    range
        .split("||")
        .map(str::trim)
        .filter(|alternative| !alternative.is_empty())
        .any(|alternative| {
            // Hyphen ranges (`1.2.3 - 2.0.0`) are not supported and never satisfy: a bare `-`
            // would otherwise read as an empty, wildcard token.
            alternative
                .split_whitespace()
                .all(|c| c != "-" && comparator_holds(c, host))
        })
}

/// Converts a version to its tuple: leading digits of each of the first three parts, `0` if none.
///
/// A part too large for `u64` saturates at `u64::MAX` rather than failing.
fn version_tuple(version: &str) -> Tuple {
    let version = strip_suffix_tags(version.strip_prefix('v').unwrap_or(version));
    let mut numbers = [0u128; 3];
    for (slot, part) in numbers.iter_mut().zip(version.split('.')) {
        *slot = u128::from(leading_number(part));
    }
    (numbers[0], numbers[1], numbers[2])
}

/// Reads the leading decimal digits of `part`, saturating at `u64::MAX`; `0` if there are none.
fn leading_number(part: &str) -> u64 {
    part.bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0u64, |n, digit| {
            n.saturating_mul(10).saturating_add(u64::from(digit - b'0'))
        })
}

/// Drops everything from the first `-` or `+` (pre-release and build tags).
fn strip_suffix_tags(text: &str) -> &str {
    text.split(['-', '+']).next().unwrap_or_default()
}

/// The comparison a comparator makes; "no operator" behaves as `=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Caret,
    Tilde,
    Ge,
    Le,
    Gt,
    Lt,
}

/// Operators in longest-match-first order.
const OPERATORS: [(&str, Op); 7] = [
    (">=", Op::Ge),
    ("<=", Op::Le),
    (">", Op::Gt),
    ("<", Op::Lt),
    ("=", Op::Eq),
    ("^", Op::Caret),
    ("~", Op::Tilde),
];

/// A parsed version token: its tuple (unspecified parts 0) and how many leading parts are numeric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Partial {
    tuple: Tuple,
    specified: usize,
}

/// Reports whether one comparator parses and holds for `host`.
fn comparator_holds(comparator: &str, host: Tuple) -> bool {
    let (op, token) = split_operator(comparator);
    parse_token(token).is_some_and(|partial| op_holds(op, partial, host))
}

/// Splits a leading operator off a comparator (none behaves as `=`).
fn split_operator(comparator: &str) -> (Op, &str) {
    OPERATORS
        .iter()
        .find_map(|(symbol, op)| comparator.strip_prefix(symbol).map(|rest| (*op, rest)))
        .unwrap_or((Op::Eq, comparator))
}

/// Parses a version token; `None` when it has 4+ parts, a non-numeric part, a number beyond
/// `u64`, or a numeric part after a wildcard part.
fn parse_token(token: &str) -> Option<Partial> {
    let token = strip_suffix_tags(token.strip_prefix('v').unwrap_or(token));
    if matches!(token, "" | "*" | "x" | "X") {
        return Some(Partial {
            tuple: (0, 0, 0),
            specified: 0,
        });
    }
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() > 3 {
        return None;
    }
    let mut numbers = [0u128; 3];
    let mut specified = 0;
    let mut seen_wildcard = false;
    for (slot, part) in numbers.iter_mut().zip(&parts) {
        if matches!(*part, "x" | "X" | "*") {
            seen_wildcard = true;
        } else if seen_wildcard {
            return None;
        } else {
            *slot = u128::from(parse_number(part)?);
            specified += 1;
        }
    }
    Some(Partial {
        tuple: (numbers[0], numbers[1], numbers[2]),
        specified,
    })
}

/// Parses a part made only of ASCII digits that fits in `u64`.
fn parse_number(part: &str) -> Option<u64> {
    if is_digits(part) {
        part.parse().ok()
    } else {
        None
    }
}

/// Applies one cell of the §1.4 table (operator × specified count) to `host`.
fn op_holds(op: Op, partial: Partial, host: Tuple) -> bool {
    let t = partial.tuple;
    match (op, partial.specified) {
        (Op::Ge | Op::Le | Op::Gt | Op::Lt, 0) => false,
        (Op::Ge, _) => host >= t,
        (Op::Le, _) => host <= t,
        (Op::Gt, _) => host > t,
        (Op::Lt, _) => host < t,
        (Op::Eq, 0) => true,
        (Op::Eq, 3) => host == t,
        (Op::Eq | Op::Tilde, 0 | 1) => within(host, t, next_major(t)),
        (Op::Eq | Op::Tilde, _) => within(host, t, next_minor(t)),
        (Op::Caret, _) => within(host, t, caret_upper(t)),
    }
}

/// Reports whether `lower <= host < upper`.
fn within(host: Tuple, lower: Tuple, upper: Tuple) -> bool {
    lower <= host && host < upper
}

/// Returns `(M+1).0.0`.
fn next_major(t: Tuple) -> Tuple {
    (t.0.saturating_add(1), 0, 0)
}

/// Returns `M.(m+1).0`.
fn next_minor(t: Tuple) -> Tuple {
    (t.0, t.1.saturating_add(1), 0)
}

/// Returns the `^` upper bound: the next version that changes the left-most non-zero part.
fn caret_upper(t: Tuple) -> Tuple {
    if t.0 > 0 {
        next_major(t)
    } else if t.1 > 0 {
        next_minor(t)
    } else {
        (t.0, t.1, t.2.saturating_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Asserts each `(range, version)` pair is satisfied.
    fn assert_sat(cases: &[(&str, &str)]) {
        for (range, version) in cases {
            assert!(
                range_satisfied(range, version),
                "{range:?} should accept {version:?}"
            );
        }
    }

    /// Asserts each `(range, version)` pair is not satisfied.
    fn assert_unsat(cases: &[(&str, &str)]) {
        for (range, version) in cases {
            assert!(
                !range_satisfied(range, version),
                "{range:?} should reject {version:?}"
            );
        }
    }

    #[test]
    fn strict_semver_accepts_spec_examples() {
        for text in [
            "1.2.3",
            "1.10.0",
            "1.2.3-rc.1",
            "1.2.3-dev.0",
            "1.2.3+build.5",
        ] {
            assert!(is_strict_semver(text), "{text}");
        }
    }

    #[test]
    fn strict_semver_rejects_spec_examples() {
        for text in [
            "1.0",
            "v1.0.0",
            "01.2.3",
            "1.2.3-01",
            "1.2.3-..",
            "1.2.3-a b",
            "1.2.3-é",
        ] {
            assert!(!is_strict_semver(text), "{text}");
        }
    }

    #[test]
    fn strict_semver_edge_cases() {
        for text in [
            "0.0.0",
            "1.2.3+001",
            "1.2.3-0",
            "1.2.3-0a",
            "1.2.3-a-b.c+x-y.07",
            "1.2.3--",
        ] {
            assert!(is_strict_semver(text), "{text}");
        }
        for text in [
            "",
            "1.2.3-",
            "1.2.3+",
            "1.2.3+a..b",
            "1.2.3.4",
            " 1.2.3",
            "1.2.-3",
            "1.2.3-a+b+c",
        ] {
            assert!(!is_strict_semver(text), "{text}");
        }
    }

    #[test]
    fn shape_check_follows_the_three_rules() {
        for text in [
            "*",
            " x ",
            "X",
            ">= 1.8.0",
            "(1.2)",
            "1.x || 2",
            "=>1.8.0",
            "1.2.3 - 2.0.0",
        ] {
            assert!(range_shape_ok(text), "{text:?}");
        }
        for text in [
            "",
            "   ",
            "latest",
            ">=1.8\t",
            ">=1.8.0\n",
            "é1",
            "xx",
            "^",
            "1,2",
        ] {
            assert!(!range_shape_ok(text), "{text:?}");
        }
    }

    #[test]
    fn spec_consequences_hold_for_the_host_version() {
        let host = HOST_COMPAT_VERSION;
        for range in [">=1.8.0", ">=1.6.0 <3.0.0", "^1.9", "1.x", ">=1.9.0 || ^2"] {
            assert!(range_satisfied(range, host), "{range}");
        }
        for range in [">= 1.8.0", "=>1.8.0", "1.2.3 - 2.0.0", "(1.2)", ">=99.0.0"] {
            assert!(!range_satisfied(range, host), "{range}");
        }
        assert!(range_shape_ok("(1.2)"));
        assert_sat(&[(">1.2", "1.2.1")]);
        assert_unsat(&[(">1.2", "1.2.0")]);
    }

    #[test]
    fn equals_or_no_operator_cells() {
        assert_sat(&[
            ("=*", "0.0.0"),
            ("=", "99.0.0"),
            ("x", "5.5.5"),
            ("v", "3.0.0"),
        ]);
        assert_sat(&[
            ("1", "1.0.0"),
            ("=1", "1.99.0"),
            ("1.2", "1.2.0"),
            ("1.2", "1.2.9"),
        ]);
        assert_unsat(&[
            ("1", "2.0.0"),
            ("=1", "0.9.9"),
            ("1.2", "1.3.0"),
            ("1.2", "1.1.9"),
        ]);
        assert_sat(&[("1.2.3", "1.2.3"), ("=1.2.3", "1.2.3")]);
        assert_unsat(&[("1.2.3", "1.2.4"), ("=1.2.3", "1.2.2")]);
    }

    #[test]
    fn caret_cells() {
        assert_sat(&[("^", "0.0.0"), ("^*", "0.0.0")]);
        assert_unsat(&[("^", "0.0.1"), ("^x", "1.0.0")]);
        assert_sat(&[("^1", "1.0.0"), ("^1", "1.9.9"), ("^0", "0.0.0")]);
        assert_unsat(&[("^1", "2.0.0"), ("^1", "0.9.0"), ("^0", "0.0.1")]);
        assert_sat(&[
            ("^1.2", "1.2.0"),
            ("^1.2", "1.9.0"),
            ("^0.2", "0.2.5"),
            ("^0.0", "0.0.0"),
        ]);
        assert_unsat(&[
            ("^1.2", "2.0.0"),
            ("^1.2", "1.1.9"),
            ("^0.2", "0.3.0"),
            ("^0.0", "0.0.1"),
        ]);
        assert_sat(&[
            ("^1.2.3", "1.2.3"),
            ("^1.2.3", "1.99.0"),
            ("^0.2.3", "0.2.9"),
            ("^0.0.3", "0.0.3"),
        ]);
        assert_unsat(&[
            ("^1.2.3", "1.2.2"),
            ("^1.2.3", "2.0.0"),
            ("^0.2.3", "0.3.0"),
        ]);
        assert_unsat(&[("^0.0.3", "0.0.4"), ("^0.0.3", "0.0.2")]);
    }

    #[test]
    fn tilde_cells() {
        assert_sat(&[
            ("~", "0.9.9"),
            ("~1", "1.9.0"),
            ("~1.2", "1.2.0"),
            ("~1.2", "1.2.9"),
        ]);
        assert_unsat(&[
            ("~", "1.0.0"),
            ("~1", "2.0.0"),
            ("~1", "0.9.0"),
            ("~1.2", "1.3.0"),
        ]);
        assert_unsat(&[("~1.2", "1.1.0")]);
        assert_sat(&[("~1.2.3", "1.2.3"), ("~1.2.3", "1.2.9")]);
        assert_unsat(&[("~1.2.3", "1.3.0"), ("~1.2.3", "1.2.2")]);
    }

    #[test]
    fn ordering_operators_need_a_number() {
        for range in [">=", ">=*", "<x", ">", "<=", "<", ">=v", "<X.X"] {
            for version in ["0.0.0", "1.10.0", "99.0.0"] {
                assert!(!range_satisfied(range, version), "{range} {version}");
            }
        }
    }

    #[test]
    fn ordering_operator_cells() {
        assert_sat(&[
            (">=2", "2.0.0"),
            (">1", "1.0.1"),
            ("<2", "1.99.0"),
            ("<=2", "2.0.0"),
        ]);
        assert_unsat(&[
            (">=2", "1.99.99"),
            (">1", "1.0.0"),
            ("<2", "2.0.0"),
            ("<=2", "2.0.1"),
        ]);
        assert_sat(&[
            (">=1.2", "1.2.0"),
            (">1.2", "1.2.1"),
            ("<1.2", "1.1.9"),
            ("<=1.2", "1.2.0"),
        ]);
        assert_unsat(&[
            (">=1.2", "1.1.9"),
            (">1.2", "1.2.0"),
            ("<1.2", "1.2.0"),
            ("<=1.2", "1.2.1"),
        ]);
        assert_sat(&[
            (">=1.2.3", "1.2.3"),
            (">1.2.3", "1.2.4"),
            ("<1.2.3", "1.2.2"),
            ("<=1.2.3", "1.2.3"),
        ]);
        assert_unsat(&[
            (">=1.2.3", "1.2.2"),
            (">1.2.3", "1.2.3"),
            ("<1.2.3", "1.2.3"),
            ("<=1.2.3", "1.2.4"),
        ]);
    }

    #[test]
    fn version_tokens_and_wildcards() {
        assert_sat(&[
            (">=v1.8.0", "1.10.0"),
            (">=1.8.0-beta.1", "1.8.0"),
            ("1.10.0+b", "1.10.0"),
        ]);
        assert_sat(&[
            ("1.x.x", "1.4.0"),
            ("1.*", "1.0.0"),
            ("*.*.*", "7.0.0"),
            ("1.2.X", "1.2.7"),
        ]);
        assert_unsat(&[
            ("1.2.3.4", "1.2.3"),
            ("x.1", "1.1.0"),
            ("1.x.2", "1.0.2"),
            ("1..2", "1.0.2"),
        ]);
        assert_unsat(&[
            ("V1", "1.0.0"),
            (">=+1", "1.0.0"),
            ("1a", "1.0.0"),
            ("vv1", "1.0.0"),
        ]);
    }

    #[test]
    fn alternatives_and_fail_closed() {
        assert_sat(&[("foo || >=1.0.0", "1.10.0"), (" || 1.x ||", "1.10.0")]);
        assert_unsat(&[
            ("1 - 1", "1.3.0"),
            ("1 - 2", "1.3.0"),
            ("1.2.3 - 2.0.0", "1.10.0"),
        ]);
        assert_unsat(&[
            (">=1.0.0 foo", "1.10.0"),
            ("", "1.0.0"),
            ("||", "1.0.0"),
            (" ", "1.0.0"),
        ]);
        assert_unsat(&[(">=1.0.0 <1.5.0", "1.10.0"), ("|| ||", "0.0.0")]);
    }

    #[test]
    fn prerelease_of_the_host_is_ignored() {
        let host = "1.10.0-rc.1";
        assert_sat(&[
            (">=1.10.0", host),
            ("1.10.0", host),
            ("~1.10.0", host),
            ("v1.10.0", host),
        ]);
        assert_unsat(&[("<1.10.0", host), (">1.10.0", host)]);
        assert_sat(&[
            ("1.10.0", "v1.10.0+build"),
            ("1.0.0", "1"),
            ("1.2.0", "1.2.x"),
            ("0.0.0", ""),
        ]);
        assert_sat(&[("2.3.4", "2a.3b.4c.5")]);
    }

    #[test]
    fn huge_numbers_do_not_overflow() {
        let thirty = "123456789012345678901234567890";
        assert_unsat(&[
            (&format!(">={thirty}"), "1.0.0"),
            (&format!("<{thirty}"), "1.0.0"),
        ]);
        assert_unsat(&[(&format!("^1.{thirty}"), "1.0.0")]);
        assert_sat(&[
            (">=2", &format!("{thirty}.0.0")),
            ("<2", &format!("1.{thirty}.{thirty}")),
        ]);
        let max = u64::MAX;
        assert_sat(&[(&format!("{max}.x"), &format!("{thirty}.0.0"))]);
        assert_sat(&[(
            &format!("^{max}.{max}.{max}"),
            &format!("{thirty}.{thirty}.{thirty}"),
        )]);
        assert_sat(&[(&format!("~0.{max}"), &format!("0.{thirty}.7"))]);
        assert_unsat(&[(&format!("~0.{max}"), &format!("1.{thirty}.7"))]);
    }

    proptest! {
        #[test]
        fn arbitrary_strings_never_panic(range in any::<String>(), version in any::<String>()) {
            let _ = is_strict_semver(&range);
            let _ = range_shape_ok(&range);
            let _ = range_satisfied(&range, &version);
        }

        #[test]
        fn range_like_strings_never_panic(
            range in "[0-9xX*.vV<>=~^|() +-]{0,40}",
            version in "[0-9xv.+-]{0,20}",
        ) {
            let _ = is_strict_semver(&version);
            let _ = range_shape_ok(&range);
            let _ = range_satisfied(&range, &version);
        }
    }
}
