//! "Did you mean": the closest known name to a mistyped one (slugs, enum values, field names).

/// Levenshtein distance (small inputs only).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The closest known name, if close enough.
pub fn suggest<'a>(unknown: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    known
        .map(|k| (distance(unknown, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4) || k.starts_with(unknown))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested_far_ones_not() {
        let known = ["spawn", "openai-http"];
        assert_eq!(suggest("spwan", known.iter().copied()), Some("spawn"));
        assert_eq!(suggest("grpc", known.iter().copied()), None);
        assert_eq!(suggest("open", known.iter().copied()), Some("openai-http"));
        assert_eq!(distance("", "abc"), 3);
    }
}
