//! Rate limits: recognising a rate-limited or out-of-quota answer and retrying it within
//! bounds, above the transport (the lane runner calls [`run_lane_retrying`] instead of
//! [`lane::run_lane`]).
//!
//! A lane's attempt is **rate-limited** when it produced no review (a stub) and
//!
//! - HTTP lanes: the last response was `429`, or `503` with a usable `Retry-After`;
//! - spawn lanes (and handler lanes that spawn): the manifest declares
//!   `reviewer.rateLimit: {exitCodes: [..], stderrPatterns: [..]}` (data, never code) and the
//!   last exit status is one of `exitCodes` (any non-zero status when the list is empty) and
//!   the stderr sidecar contains one of `stderrPatterns` (plain substrings, ASCII
//!   case-insensitive; any stderr when the list is empty).
//!
//! A rate-limited attempt is retried at most [`MAX_RETRIES`] times. The wait honours
//! `Retry-After` (delta-seconds or an IMF-fixdate); without one it is [`FIRST_BACKOFF`],
//! doubling per retry, capped at [`MAX_BACKOFF`]. A retry whose wait would reach the lane's
//! outer deadline (its `timeoutFloorMs`-derived bound, counted from the first attempt) is not
//! made. Every other failure is never retried. The review file says what happened:
//! `rate-limited, retried N times` after a success, or the final rate-limit failure.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gsd_lane_sdk::{LanePlan, Transport};

use super::effects::Observed;
use super::lane::{self, Completion, Outcome, RunSetup};
use crate::error::Failure;
use crate::manifest::rate_limit::Rule;
use crate::registry::Lane;

/// Most retries of one identity in one run.
pub const MAX_RETRIES: u32 = 3;
/// Wait before the first retry when the answer carries no `Retry-After`.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// Longest computed backoff (a `Retry-After` is honoured up to the lane's deadline).
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Longest `Retry-After` value looked at.
const MAX_RETRY_AFTER_CHARS: usize = 64;
/// How much of the stderr sidecar is searched for the patterns.
const MAX_STDERR_BYTES: u64 = 1024 * 1024;

/// Parses a `Retry-After` value: delta-seconds, or an IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`) taken relative to `now` (a past date is 0).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() || value.chars().count() > MAX_RETRY_AFTER_CHARS {
        return None;
    }
    if value.bytes().all(|b| b.is_ascii_digit()) {
        let secs = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(secs.min(86_400 * 365)));
    }
    let at = imf_fixdate_secs(value)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since the epoch of an IMF-fixdate (RFC 9110 §5.6.7).
fn imf_fixdate_secs(text: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let parts: Vec<&str> = text.split(' ').collect();
    let [weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    if weekday.len() != 4 || !weekday.ends_with(',') || day.len() != 2 || year.len() != 4 {
        return None;
    }
    let day: u64 = day.parse().ok()?;
    let month = MONTHS.iter().position(|m| m == month)? as u64 + 1;
    let year: u64 = year.parse().ok()?;
    let hms: Vec<u64> = time
        .split(':')
        .map(|p| (p.len() == 2).then(|| p.parse().ok()).flatten())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *s > 60 || year < 1970 {
        return None;
    }
    // Days from civil (Howard Hinnant), for years ≥ 1970.
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
}

/// Why an attempt counts as rate-limited, and the server's requested wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    /// Short description (`HTTP 429`, `exit status 75 with a declared rate-limit message`).
    pub why: String,
    /// The wait the answer asked for.
    pub retry_after: Option<Duration>,
}

/// Classifies one finished attempt (see the module documentation).
pub fn classify(
    transport: Transport,
    stubbed: bool,
    observed: &Observed,
    rule: Option<&Rule>,
    stderr: &str,
    now: SystemTime,
) -> Option<Signal> {
    if !stubbed {
        return None;
    }
    let retry_after = observed
        .retry_after
        .as_deref()
        .and_then(|v| parse_retry_after(v, now));
    match (transport, observed.http_status) {
        (Transport::OpenAiHttp, Some(429)) => {
            return Some(Signal {
                why: "HTTP 429 Too Many Requests".to_owned(),
                retry_after,
            })
        }
        (Transport::OpenAiHttp, Some(503)) if retry_after.is_some() => {
            return Some(Signal {
                why: "HTTP 503 with Retry-After".to_owned(),
                retry_after,
            })
        }
        (Transport::OpenAiHttp, _) => return None,
        (Transport::Spawn, _) => {}
    }
    let rule = rule?;
    rule.matches(observed.last_exit, stderr).then(|| Signal {
        why: format!(
            "exit status {} with a rate-limit or quota message",
            observed.last_exit.unwrap_or_default()
        ),
        retry_after: None,
    })
}

/// The wait before retry number `retry` (1-based).
pub fn backoff(retry: u32, signal: &Signal) -> Duration {
    signal.retry_after.unwrap_or_else(|| {
        FIRST_BACKOFF
            .saturating_mul(1 << retry.saturating_sub(1).min(16))
            .min(MAX_BACKOFF)
    })
}

/// One rate-limited attempt that will be retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retrying {
    /// Why it was rate-limited.
    pub why: String,
    /// How long the runner waits before the next attempt.
    pub wait: Duration,
}

/// The result of an identity's attempts.
#[derive(Debug)]
pub struct Attempts {
    /// The last attempt's outcome.
    pub outcome: Result<Outcome, Failure>,
    /// How many retries were made.
    pub retries: u32,
}

/// Runs a lane whose `plan` pre-flight admitted and whose `probe` found it available, like
/// [`lane::run_lane`] without planning or probing again (each attempt re-verifies the egress,
/// [`lane::admit_plan`]), retrying rate-limited attempts within the bounds of the module
/// documentation. `on_retry` sees each attempt that is about to be retried (the journal records
/// it); `stop` ends a wait early (SIGINT/SIGTERM) and makes no further attempt.
pub fn run_lane_retrying(
    lane: &Lane,
    plan: &LanePlan,
    probe: &str,
    setup: &RunSetup<'_>,
    on_retry: &mut dyn FnMut(&Retrying),
    stop: &dyn Fn() -> bool,
) -> Attempts {
    crate::sandbox::policy::warm(
        setup.sandbox,
        setup.view_proof,
        Path::new(&setup.inputs.repo_root),
        Path::new(&setup.inputs.run_dir),
    );
    let rule = lane.rate_limit.clone();
    let mut deadline: Option<Instant> = None;
    let mut retries = 0;
    loop {
        let mut admitted = match lane::admit_plan(plan.clone(), setup) {
            Ok(admitted) => admitted,
            Err(refusal) => return finished(Ok(Outcome::Unavailable(refusal)), retries),
        };
        let end = *deadline.get_or_insert_with(|| {
            Instant::now() + Duration::from_millis(admitted.plan.timeout_ms)
        });
        // Later attempts get only what is left of the lane's one outer bound.
        let left = end.saturating_duration_since(Instant::now());
        admitted.plan.timeout_ms = admitted
            .plan
            .timeout_ms
            .min(u64::try_from(left.as_millis()).unwrap_or(u64::MAX));
        let completion = match lane::execute(lane, admitted, probe.to_owned(), setup) {
            Ok(done) => done,
            Err(failure) => return finished(Err(failure), retries),
        };
        let stderr = read_bounded(Path::new(&completion.plan.err_path));
        let signal = classify(
            completion.plan.transport,
            completion.stubbed,
            &completion.observed,
            rule.as_ref(),
            &stderr,
            SystemTime::now(),
        );
        let Some(signal) = signal else {
            if retries > 0 {
                note(
                    &completion,
                    &format!("rate-limited, retried {retries} times"),
                );
            }
            return finished(Ok(Outcome::Completed(Box::new(completion))), retries);
        };
        let left = end.saturating_duration_since(Instant::now());
        let wait = backoff(retries + 1, &signal);
        if let Some(why_not) = give_up_reason(retries, wait, left) {
            note_final_failure(&completion, retries, &signal.why, &why_not);
            return finished(Ok(Outcome::Completed(Box::new(completion))), retries);
        }
        on_retry(&Retrying {
            why: signal.why.clone(),
            wait,
        });
        if !sleep_unless(wait, stop) {
            note_final_failure(
                &completion,
                retries,
                &signal.why,
                "interrupted while waiting",
            );
            return finished(Ok(Outcome::Completed(Box::new(completion))), retries);
        }
        retries += 1;
    }
}

/// Why no further attempt is made after `retries` retries, when the next would wait `wait` with
/// `left` of the lane's bound; `None` when it may be made.
fn give_up_reason(retries: u32, wait: Duration, left: Duration) -> Option<String> {
    if retries >= MAX_RETRIES {
        Some(format!("no retry left (at most {MAX_RETRIES})"))
    } else if wait >= left {
        Some(format!(
            "waiting {} s would pass the lane's deadline ({} s left)",
            wait.as_secs(),
            left.as_secs()
        ))
    } else {
        None
    }
}

/// Notes on the lane's review that its last rate-limited attempt stands, and why.
fn note_final_failure(completion: &Completion, retries: u32, why: &str, why_not: &str) {
    note(
        completion,
        &format!("rate-limited, retried {retries} times; final failure: {why} ({why_not})"),
    );
}

fn finished(outcome: Result<Outcome, Failure>, retries: u32) -> Attempts {
    Attempts { outcome, retries }
}

/// Sleeps `wait` in short steps; `false` when `stop` turned true first.
fn sleep_unless(wait: Duration, stop: &dyn Fn() -> bool) -> bool {
    let until = Instant::now() + wait;
    loop {
        if stop() {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// Appends `> [gsd-lane] <text>` to the attempt's review file (best effort: the review or stub
/// is already written; a failed note is printed, never fatal). The file is opened with the
/// run dir's no-follow, non-blocking opener: a link or FIFO a lane put in its place is refused,
/// never written through.
fn note(completion: &Completion, text: &str) {
    let path = Path::new(&completion.plan.review_path);
    let written = crate::private_fs::write_run_file(
        path,
        format!("\n> [gsd-lane] {text}\n").as_bytes(),
        crate::private_fs::WriteMode::Append,
    );
    if let Err(err) = written {
        crate::output::eprint_line(&format!("warning: writing {}: {err}", path.display()));
    }
}

fn read_bounded(path: &Path) -> String {
    let bytes = crate::private_fs::read_run_file(path, MAX_STDERR_BYTES)
        .ok()
        .flatten()
        .map(|(bytes, _)| bytes)
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn epoch(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = epoch(784_111_770); // Sun, 06 Nov 1994 08:49:30 GMT
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after(" 120 ", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO),
            "a past date means now"
        );
        assert_eq!(
            parse_retry_after("Thu, 29 Feb 2024 23:59:59 GMT", epoch(0)),
            Some(Duration::from_secs(1_709_251_199))
        );
        for bad in [
            "",
            "-1",
            "1.5",
            "soon",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:49:37 GMT",
            &"9".repeat(65),
        ] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad:?}");
        }
        assert_eq!(
            parse_retry_after("99999999999999999999999", now),
            Some(Duration::from_secs(86_400 * 365))
        );
    }

    #[test]
    fn http_statuses_classify() {
        let seen = |status, retry_after: Option<&str>| Observed {
            http_status: Some(status),
            retry_after: retry_after.map(str::to_owned),
            ..Observed::default()
        };
        let now = epoch(0);
        let http = Transport::OpenAiHttp;
        let signal = classify(http, true, &seen(429, Some("1")), None, "", now).expect("429");
        assert_eq!(signal.retry_after, Some(Duration::from_secs(1)));
        assert!(classify(http, true, &seen(429, None), None, "", now).is_some());
        assert!(classify(http, true, &seen(503, Some("2")), None, "", now).is_some());
        assert!(classify(http, true, &seen(503, None), None, "", now).is_none());
        assert!(classify(http, true, &seen(500, Some("2")), None, "", now).is_none());
        assert!(
            classify(http, false, &seen(429, None), None, "", now).is_none(),
            "a review is never retried"
        );
    }

    #[test]
    fn declared_cli_answers_classify() {
        let rule = Rule::of(
            &json!({"rateLimit": {"exitCodes": [75], "stderrPatterns": ["quota exceeded"]}}),
        )
        .expect("rule");
        let exit = |code| Observed {
            last_exit: Some(code),
            ..Observed::default()
        };
        let spawn = Transport::Spawn;
        let now = epoch(0);
        let quota = "Error: Quota exceeded for requests";
        assert!(classify(spawn, true, &exit(75), Some(&rule), quota, now).is_some());
        assert!(classify(spawn, true, &exit(1), Some(&rule), quota, now).is_none());
        assert!(classify(spawn, true, &exit(75), Some(&rule), "segfault", now).is_none());
        assert!(classify(spawn, true, &exit(75), None, quota, now).is_none());
        let any_code = Rule {
            exit_codes: vec![],
            stderr_patterns: vec!["429".into()],
        };
        assert!(classify(spawn, true, &exit(2), Some(&any_code), "HTTP 429", now).is_some());
        assert!(classify(spawn, true, &exit(0), Some(&any_code), "HTTP 429", now).is_none());
    }

    #[test]
    fn backoff_doubles_and_honours_retry_after() {
        let plain = Signal {
            why: String::new(),
            retry_after: None,
        };
        assert_eq!(backoff(1, &plain), Duration::from_secs(1));
        assert_eq!(backoff(3, &plain), Duration::from_secs(4));
        assert_eq!(backoff(30, &plain), MAX_BACKOFF);
        let asked = Signal {
            why: String::new(),
            retry_after: Some(Duration::from_secs(90)),
        };
        assert_eq!(backoff(1, &asked), Duration::from_secs(90));
    }
}
