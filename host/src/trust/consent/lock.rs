//! The consent-store lock (trust.md §5.6 step 1): a lockfile created exclusively, holding
//! `{token, pid, hostname, startTime, ts}`, shared with GSD installations that use the same
//! store.
//!
//! Acquisition retries up to [`ATTEMPTS`] times with a 25 ms backoff plus up to 25 ms of
//! jitter. A lock older than [`STALE_MS`] is taken over only when its holder is on this host and
//! provably dead (its pid is gone, or the pid now belongs to a process that started later); a
//! holder on another host, or whose liveness cannot be checked, only after [`DEADMAN_MS`]. A
//! verified-live holder is never taken over. Failing to acquire is an error: nothing is ever
//! written unlocked.
//!
//! Liveness is read from `/proc` (Linux). Elsewhere it cannot be checked, so a stale lock from
//! a crashed process is taken over after the deadman period.

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::trust::error::LockError;

/// Acquisition attempts before giving up.
pub const ATTEMPTS: u32 = 50;

/// Age after which a provably dead local holder may be replaced.
pub const STALE_MS: u64 = 60_000;

/// Age after which any holder whose liveness cannot be verified may be replaced.
pub const DEADMAN_MS: u64 = 600_000;

/// A held lock; dropping it removes the lockfile if it is still ours.
#[derive(Debug)]
pub struct LockGuard {
    path: PathBuf,
    token: String,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if read_body(&self.path).and_then(|b| b.token) == Some(self.token.clone()) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// What a lockfile says about its holder.
#[derive(Debug, Default, Clone, PartialEq)]
struct Body {
    token: Option<String>,
    pid: Option<u32>,
    hostname: Option<String>,
    start_time: Option<f64>,
    ts: Option<f64>,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A fresh random-looking token (time, pid, a counter, hashed).
pub fn token() -> String {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let thread = format!("{:?}", std::thread::current().id());
    let digest = Sha256::digest(format!("{nanos}-{}-{count}-{thread}", std::process::id()));
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Acquires the lock at `path`.
///
/// # Errors
///
/// A [`LockError`] naming the lockfile and its holder when it stays held after every attempt,
/// or when the lockfile cannot be created.
pub fn acquire(path: &Path) -> Result<LockGuard, LockError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|source| LockError::CreateDir {
            dir: dir.to_path_buf(),
            source,
        })?;
    }
    let token = token();
    let mut last_holder = String::from("unknown");
    for attempt in 0..ATTEMPTS {
        match try_create(path, &token) {
            Ok(()) => {
                return Ok(LockGuard {
                    path: path.to_path_buf(),
                    token,
                })
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let body = read_body_full(path);
                last_holder = describe(&body);
                if let Some(body) = body {
                    if may_take_over(&body) {
                        take_over(path, &body);
                        continue;
                    }
                }
            }
            Err(source) => {
                return Err(LockError::Create {
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
        if attempt + 1 < ATTEMPTS {
            std::thread::sleep(Duration::from_millis(25 + jitter_ms()));
        }
    }
    Err(LockError::Held {
        path: path.to_path_buf(),
        holder: last_holder,
    })
}

fn jitter_ms() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    u64::from(nanos % 26)
}

fn try_create(path: &Path, token: &str) -> std::io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    let body = json!({
        "token": token,
        "pid": std::process::id(),
        "hostname": hostname(),
        "startTime": process_start_ms(std::process::id()).unwrap_or_else(now_ms),
        "ts": now_ms(),
    });
    let written = file
        .write_all(body.to_string().as_bytes())
        .and_then(|()| file.sync_all());
    if let Err(err) = written {
        drop(file);
        let _ = fs::remove_file(path);
        return Err(err);
    }
    Ok(())
}

fn describe(body: &Option<(Body, u64)>) -> String {
    match body {
        Some((body, age)) => format!(
            "pid {} on {}, {} s old",
            body.pid.map_or_else(|| "?".to_owned(), |p| p.to_string()),
            body.hostname.clone().unwrap_or_else(|| "?".to_owned()),
            age / 1000
        ),
        None => "holder unknown".to_owned(),
    }
}

fn read_body(path: &Path) -> Option<Body> {
    let mut text = String::new();
    fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    Some(Body {
        token: value
            .get("token")
            .and_then(Value::as_str)
            .map(str::to_owned),
        pid: value
            .get("pid")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok()),
        hostname: value
            .get("hostname")
            .and_then(Value::as_str)
            .map(str::to_owned),
        start_time: value.get("startTime").and_then(Value::as_f64),
        ts: value.get("ts").and_then(Value::as_f64),
    })
}

/// The body and its age in ms (from `ts`, else the file's modification time).
fn read_body_full(path: &Path) -> Option<(Body, u64)> {
    let body = read_body(path)?;
    let now = now_ms();
    let created = match body.ts {
        Some(ts) if ts.is_finite() && ts >= 0.0 => {
            // Clamped to u64 range by the guard above and by `min`.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let ts = ts.min(u64::MAX as f64) as u64;
            ts
        }
        _ => fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(now, |d| u64::try_from(d.as_millis()).unwrap_or(now)),
    };
    Some((body, now.saturating_sub(created)))
}

/// Holder liveness as far as this host can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Liveness {
    Alive,
    Dead,
    Unknown,
}

/// Whether process `pid` exists on this host: `None` where that cannot be read (no `/proc`).
pub fn process_exists(pid: u32) -> Option<bool> {
    if !Path::new("/proc/self").exists() {
        return None;
    }
    Some(Path::new(&format!("/proc/{pid}")).exists())
}

fn liveness(body: &Body) -> Liveness {
    let (Some(pid), Some(host)) = (body.pid, body.hostname.as_deref()) else {
        return Liveness::Unknown;
    };
    let here = hostname();
    if here.is_empty() || host != here {
        return Liveness::Unknown;
    }
    if !Path::new("/proc/self").exists() {
        return Liveness::Unknown;
    }
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    if !proc_dir.exists() {
        return Liveness::Dead;
    }
    match (process_start_ms(pid), body.start_time) {
        // The pid now belongs to a process that started well after the holder did.
        (Some(actual), Some(recorded)) if (actual as f64 - recorded).abs() > 2_000.0 => {
            Liveness::Dead
        }
        (Some(_), Some(_)) => Liveness::Alive,
        _ => Liveness::Unknown,
    }
}

fn may_take_over(body: &(Body, u64)) -> bool {
    let (body, age) = body;
    match liveness(body) {
        Liveness::Alive => false,
        Liveness::Dead => *age > STALE_MS,
        Liveness::Unknown => *age > DEADMAN_MS,
    }
}

/// Replaces a stale lock: move it aside under a unique name, and delete it only if it is still
/// the lock that was judged stale (otherwise put it back).
fn take_over(path: &Path, stale: &(Body, u64)) {
    let aside = path.with_extension(format!("lock.stale-{}", token()));
    if fs::rename(path, &aside).is_err() {
        return;
    }
    let moved = read_body(&aside);
    if moved.as_ref().map(|b| &b.token) == Some(&stale.0.token) {
        let _ = fs::remove_file(&aside);
    } else {
        // Someone else's fresh lock: restore it unless a newer one already exists.
        let _ = fs::hard_link(&aside, path);
        let _ = fs::remove_file(&aside);
    }
}

/// This host's name, as far as it can be read without a system call wrapper.
pub fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| fs::read_to_string("/etc/hostname").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

/// The start time of process `pid` in ms since the epoch (Linux `/proc`; 100 ticks a second).
fn process_start_ms(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is parenthesised and may contain spaces: fields follow the last ')'.
    let after = stat.rsplit_once(')')?.1;
    let ticks: u64 = after.split_whitespace().nth(19)?.parse().ok()?;
    let boot: u64 = fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(boot * 1000 + ticks * 10)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn lock_is_exclusive_and_released() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(".consent.lock");
        let guard = acquire(&path).expect("first");
        let body = read_body(&path).expect("body");
        assert_eq!(body.pid, Some(std::process::id()));
        assert!(body.token.is_some() && body.ts.is_some() && body.start_time.is_some());
        assert!(try_create(&path, "other").is_err());
        drop(guard);
        assert!(!path.exists());
    }

    #[test]
    fn a_live_holder_is_never_taken_over_and_a_dead_stale_one_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(".consent.lock");
        let old = now_ms() - STALE_MS - 1_000;
        // Our own pid: alive whatever the age (on Linux), unknown elsewhere (deadman not reached).
        let me = json!({"token": "t1", "pid": std::process::id(), "hostname": hostname(),
            "startTime": process_start_ms(std::process::id()).unwrap_or(0), "ts": old});
        fs::write(&path, me.to_string()).expect("write");
        let body = read_body_full(&path).expect("body");
        assert!(!may_take_over(&body));
        // A pid that cannot exist: dead on Linux, so a 61 s old lock is taken over.
        let dead = json!({"token": "t2", "pid": 4_194_304u32 + 7, "hostname": hostname(),
            "startTime": 0, "ts": old});
        fs::write(&path, dead.to_string()).expect("write");
        let body = read_body_full(&path).expect("body");
        if Path::new("/proc/self").exists() {
            assert!(may_take_over(&body));
            let guard = acquire(&path).expect("taken over");
            drop(guard);
        }
        // Another host: only after the deadman period.
        let remote = json!({"token": "t3", "pid": 1, "hostname": "elsewhere.invalid", "ts": old});
        fs::write(&path, remote.to_string()).expect("write");
        assert!(!may_take_over(&read_body_full(&path).expect("body")));
        let ancient = json!({"token": "t4", "pid": 1, "hostname": "elsewhere.invalid",
            "ts": now_ms() - DEADMAN_MS - 1});
        fs::write(&path, ancient.to_string()).expect("write");
        assert!(may_take_over(&read_body_full(&path).expect("body")));
    }
}
