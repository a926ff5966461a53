//! The host's implementation of the SDK's effects: the one choke point for handlers.

use std::cell::RefCell;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gsd_lane_sdk::{
    Effects, FileRead, HandlerError, HandlerErrorKind, HttpReport, HttpRequest, LockGuard,
    SpawnError, SpawnReport, SpawnRequest,
};

use super::http::{self, HttpLimits, Origin};
use super::spawn::{self, ChildEnv, Confinement, SpawnLimits};

/// What the effects saw of the last process or response of an attempt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// Exit status of the last process started through the effects.
    pub last_exit: Option<i32>,
    /// Status of the last HTTP response.
    pub http_status: Option<u16>,
    /// Its `Retry-After` value, when sent.
    pub retry_after: Option<String>,
    /// How the last process ended (the stub's `Diagnosis:` line); `None`: none was started.
    pub last_end: Option<super::diagnosis::ProcessEnd>,
    /// The `model` the last HTTP request with a body carried, normalised (the recorded model's
    /// `requested` source, kept even when the request failed).
    pub requested_model: Option<String>,
    /// The `model` of the last 2xx HTTP answer, normalised (the `served` source).
    pub served_model: Option<String>,
}

/// The top-level `model` string of a JSON object, normalised (`None` for anything else).
fn model_of_json(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct ModelField {
        model: Option<serde_json::Value>,
    }
    let field: ModelField = serde_json::from_str(text).ok()?;
    crate::lane_result::model_record::normalize(field.model?.as_str()?)
}

/// Effects granted to one lane invocation.
pub struct HostEffects {
    /// Programs the lane may start (its own binary and probe binary).
    pub allowed_programs: Vec<String>,
    /// The verified origin of an HTTP lane; `None` refuses every request.
    pub origin: Option<Origin>,
    /// The child environment.
    pub env: ChildEnv,
    /// The lane's outer deadline.
    pub deadline: Instant,
    /// The user's home directory.
    pub home: Option<PathBuf>,
    /// Where lock files live.
    pub lock_dir: PathBuf,
    /// Output caps.
    pub spawn_limits: SpawnLimits,
    /// Body cap and connect bound.
    pub http_limits: HttpLimits,
    /// Warnings written so far (also printed to stderr as they happen).
    pub warnings: RefCell<Vec<String>>,
    /// The last exit status and HTTP answer seen (rate-limit classification).
    pub observed: RefCell<Observed>,
    /// How every process of this lane is confined (sandbox/confine.rs).
    pub confinement: Confinement,
}

struct FileLock(#[allow(dead_code)] fs::File);
impl LockGuard for FileLock {}

/// A short stable file name for a lock key (FNV-1a, 64 bits).
fn lock_file_name(key: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}.lock")
}

/// Windows: a batch shim (`.cmd`/`.bat`, found through `PATHEXT`) is never handed an argument
/// that no `cmd.exe` escaping can carry (CR, LF, NUL); the spawn fails with `EINVAL`, recorded in
/// the sidecar, and is never retried another way (trust.md §7.4). Every other argument is left to
/// the standard library's batch escaping.
#[cfg(windows)]
fn refuse_unsafe_batch_args(request: &SpawnRequest, env: &ChildEnv) -> Option<SpawnReport> {
    let path_var = match env {
        ChildEnv::Inherit => std::env::var_os("PATH"),
        ChildEnv::Minimal { vars } => vars
            .iter()
            .rev()
            .find(|(name, _)| name.eq_ignore_ascii_case("PATH"))
            .map(|(_, value)| std::ffi::OsString::from(value)),
    };
    let program = super::path_lookup::find_executable(&request.program, path_var.as_deref())?;
    if !crate::trust::winshim::is_batch_script(&program) {
        return None;
    }
    let refusal = crate::trust::winshim::batch_arg_refusal(&request.args)?;
    let error = SpawnError::Os("EINVAL".to_owned());
    if let Some(path) = &request.stderr_path {
        let _ = fs::write(
            path,
            format!("{refusal}\n[spawn error: {}]\n", error.code()),
        );
    }
    Some(SpawnReport::failed(error))
}

impl Effects for HostEffects {
    fn spawn(&self, request: &SpawnRequest) -> SpawnReport {
        if !self.allowed_programs.contains(&request.program) {
            return SpawnReport::failed(SpawnError::Refused(format!(
                "{:?} is not this lane's program",
                request.program
            )));
        }
        #[cfg(windows)]
        if let Some(report) = refuse_unsafe_batch_args(request, &self.env) {
            return report;
        }
        let mut bounded = request.clone();
        bounded.timeout = request.timeout.min(self.remaining());
        let report =
            spawn::spawn_confined(&bounded, &self.env, &self.spawn_limits, &self.confinement);
        let mut observed = self.observed.borrow_mut();
        observed.last_exit = report.exit_code;
        observed.last_end = Some(super::diagnosis::ProcessEnd::of(
            report.exit_code,
            report.error.as_ref().map(SpawnError::code),
        ));
        drop(observed);
        report
    }

    fn http(&self, request: &HttpRequest) -> HttpReport {
        let Some(origin) = &self.origin else {
            return HttpReport::Failed {
                error: "refused: this lane has no verified HTTP origin".into(),
            };
        };
        let mut bounded = request.clone();
        bounded.timeout = request.timeout.min(self.remaining());
        let (report, retry_after) = http::send_observed(&bounded, origin, &self.http_limits);
        let mut observed = self.observed.borrow_mut();
        if let Some(model) = request.json_body.as_deref().and_then(model_of_json) {
            observed.requested_model = Some(model);
        }
        observed.served_model = match &report {
            HttpReport::Response { status, body } if (200..300).contains(status) => {
                model_of_json(body)
            }
            _ => None,
        };
        observed.http_status = match &report {
            HttpReport::Response { status, .. } => Some(*status),
            HttpReport::Failed { .. } => None,
        };
        observed.retry_after = retry_after;
        report
    }

    fn read_text(&self, path: &Path, max_bytes: u64) -> FileRead {
        if crate::private_fs::in_held_run_dir(path) {
            // A run-dir file (the prompt, a sidecar): through the held descriptor only.
            return match crate::private_fs::read_run_file(path, max_bytes) {
                Ok(None) => FileRead::Missing,
                Ok(Some((_, true))) => {
                    FileRead::Unreadable(format!("larger than {max_bytes} bytes"))
                }
                Ok(Some((bytes, false))) => {
                    FileRead::Text(String::from_utf8_lossy(&bytes).into_owned())
                }
                Err(err) => FileRead::Unreadable(err.to_string()),
            };
        }
        let metadata = match fs::metadata(path) {
            Ok(metadata) => metadata,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return FileRead::Missing,
            Err(err) => return FileRead::Unreadable(err.to_string()),
        };
        if !metadata.is_file() {
            return FileRead::Unreadable("not a regular file".into());
        }
        if metadata.len() > max_bytes {
            return FileRead::Unreadable(format!("larger than {max_bytes} bytes"));
        }
        let mut bytes = Vec::new();
        match fs::File::open(path).and_then(|f| f.take(max_bytes).read_to_end(&mut bytes)) {
            Ok(_) => FileRead::Text(String::from_utf8_lossy(&bytes).into_owned()),
            Err(err) => FileRead::Unreadable(err.to_string()),
        }
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    fn lock(&self, key: &str, wait: Duration) -> Result<Box<dyn LockGuard>, HandlerError> {
        let fail = |why: String| HandlerError::new(HandlerErrorKind::Lock, why);
        fs::create_dir_all(&self.lock_dir)
            .map_err(|e| fail(format!("creating {}: {e}", self.lock_dir.display())))?;
        let path = self.lock_dir.join(lock_file_name(key));
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| fail(format!("opening {}: {e}", path.display())))?;
        let until = Instant::now() + wait.min(self.remaining());
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Box::new(FileLock(file))),
                Err(fs::TryLockError::WouldBlock) if Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(25));
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(fail(format!("lock {key:?} still held by another run")))
                }
                Err(fs::TryLockError::Error(err)) => {
                    return Err(fail(format!("locking {}: {err}", path.display())))
                }
            }
        }
    }

    fn warn(&self, message: &str) {
        crate::output::eprint_line(&format!("warning: {}", crate::output::neutralize(message)));
        self.warnings.borrow_mut().push(message.to_owned());
    }

    fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }
}
