//! Wall-clock time as text: the single UTC timestamp format the host writes
//! (`YYYY-MM-DDTHH:MM:SS.mmmZ`, used by `REVIEWS.md` and the trust records).

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 if the clock reads earlier than the epoch).
pub fn now_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis()
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn iso_now() -> String {
    iso_utc(now_millis())
}

/// Formats milliseconds since the Unix epoch as ISO-8601 UTC with milliseconds,
/// `YYYY-MM-DDTHH:MM:SS.mmmZ` (proleptic Gregorian calendar).
pub fn iso_utc(millis: u128) -> String {
    let ms = millis % 1000;
    let secs = millis / 1000;
    let rem = secs % 86_400;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's civil-from-days).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn ordinary_dates() {
        assert_eq!(iso_utc(1_785_333_785_120), "2026-07-29T14:03:05.120Z");
        assert_eq!(iso_utc(1_785_414_896_789), "2026-07-30T12:34:56.789Z");
    }

    #[test]
    fn leap_days() {
        assert_eq!(iso_utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
        // 2024-02-29T23:59:59.999Z, then the next millisecond is March.
        assert_eq!(iso_utc(1_709_251_199_999), "2024-02-29T23:59:59.999Z");
        assert_eq!(iso_utc(1_709_251_200_000), "2024-03-01T00:00:00.000Z");
    }

    #[test]
    fn after_2100() {
        // 2100 is not a leap year: 28 February is followed by 1 March.
        assert_eq!(iso_utc(4_107_542_399_000), "2100-02-28T23:59:59.000Z");
        assert_eq!(iso_utc(4_107_542_400_000), "2100-03-01T00:00:00.000Z");
        assert_eq!(iso_utc(4_102_444_800_000), "2100-01-01T00:00:00.000Z");
    }

    #[test]
    fn now_is_well_formed() {
        let now = iso_now();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.ends_with('Z'), "{now}");
    }
}
