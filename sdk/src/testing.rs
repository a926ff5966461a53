//! A scripted stand-in for the host's effects and a minimal request, so a handler test is a few
//! lines.
//!
//! ```
//! use gsd_lane_sdk::testing::FakeEffects;
//! use gsd_lane_sdk::{Effects, HttpReport, HttpRequest};
//! use std::time::Duration;
//!
//! let fx = FakeEffects::new().http_answer("http://h/v1/models", 200, r#"{"data":[]}"#);
//! let report = fx.http(&HttpRequest::get("http://h/v1/models", Duration::from_secs(1)));
//! assert_eq!(report, HttpReport::Response { status: 200, body: r#"{"data":[]}"#.into() });
//! assert_eq!(fx.http_calls().len(), 1);
//! ```

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::effects::{
    Effects, FileRead, HttpReport, HttpRequest, LockGuard, SpawnReport, SpawnRequest, StdoutSink,
};
use crate::error::HandlerError;
use crate::plan::{
    EmptyOutputPolicy, LanePlan, LaneRequest, OutputTarget, PlanShape, Probe, SpawnPlan, Transport,
};

/// Builds a minimal spawn-lane request for handler tests and examples.
///
/// The plan runs `binary` with no arguments, prompt and artifacts under `/run`, repository at
/// `/repo`, and a 60-second bound.
pub fn request_spawn(slug: &str, binary: &str) -> LaneRequest {
    let plan = LanePlan {
        slug: slug.to_owned(),
        capability_id: slug.to_owned(),
        transport: Transport::Spawn,
        prompt_path: "/run/gsd-review-prompt.md".to_owned(),
        review_path: format!("/run/gsd-review-{slug}.md"),
        err_path: format!("/run/gsd-review-{slug}.err"),
        timeout_ms: 60_000,
        empty_output: EmptyOutputPolicy::StubWithStderr,
        handler: None,
        requires_binaries: Vec::new(),
        probe: Probe::CommandExists {
            binary: binary.to_owned(),
        },
        shape: PlanShape::Spawn(SpawnPlan {
            binary: binary.to_owned(),
            argv: Vec::new(),
            stdin: None,
            output_target: OutputTarget::Stdout,
        }),
    };
    LaneRequest::new(plan, "/repo")
}

/// A scripted child process: what it prints and how it ends.
///
/// `#[non_exhaustive]` (a script may learn more, e.g. a delay): start from
/// [`FakeProcess::prints`] and the builder methods.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct FakeProcess {
    /// Text written to stdout.
    pub stdout: String,
    /// Text written to stderr.
    pub stderr: String,
    /// The report's exit code and error.
    pub report: SpawnReport,
}

impl FakeProcess {
    /// A process that prints `stdout` and exits 0.
    pub fn prints(stdout: &str) -> FakeProcess {
        FakeProcess {
            stdout: stdout.to_owned(),
            report: SpawnReport::exited(0),
            ..FakeProcess::default()
        }
    }

    /// Sets the exit code.
    pub fn exit(mut self, code: i32) -> FakeProcess {
        self.report.exit_code = Some(code);
        self
    }

    /// Sets stderr.
    pub fn stderr(mut self, text: &str) -> FakeProcess {
        self.stderr = text.to_owned();
        self
    }

    /// Marks the process as killed by its bound.
    pub fn timed_out(mut self) -> FakeProcess {
        self.report.exit_code = None;
        self.report.error = Some(crate::SpawnError::TimedOut);
        self
    }
}

struct NoLock;
impl LockGuard for NoLock {}

/// Scripted [`Effects`]: answers from queues and maps, records every call.
#[derive(Default)]
pub struct FakeEffects {
    processes: RefCell<VecDeque<FakeProcess>>,
    http: RefCell<HashMap<String, VecDeque<HttpReport>>>,
    files: HashMap<PathBuf, FileRead>,
    staged: Vec<(usize, PathBuf, FileRead)>,
    home: Option<PathBuf>,
    spawn_calls: RefCell<Vec<SpawnRequest>>,
    http_calls: RefCell<Vec<HttpRequest>>,
    warnings: RefCell<Vec<String>>,
    locks: RefCell<Vec<String>>,
}

impl FakeEffects {
    /// An empty script: no processes, no answers, no files.
    pub fn new() -> FakeEffects {
        FakeEffects::default()
    }

    /// Queues the next spawned process.
    pub fn process(self, process: FakeProcess) -> FakeEffects {
        self.processes.borrow_mut().push_back(process);
        self
    }

    /// Queues an HTTP answer for `url`.
    pub fn http_answer(self, url: &str, status: u16, body: &str) -> FakeEffects {
        self.http_report(
            url,
            HttpReport::Response {
                status,
                body: body.to_owned(),
            },
        )
    }

    /// Queues any HTTP report for `url`.
    pub fn http_report(self, url: &str, report: HttpReport) -> FakeEffects {
        self.http
            .borrow_mut()
            .entry(url.to_owned())
            .or_default()
            .push_back(report);
        self
    }

    /// Makes `path` readable with `text`.
    pub fn file(mut self, path: impl Into<PathBuf>, text: &str) -> FakeEffects {
        self.files
            .insert(path.into(), FileRead::Text(text.to_owned()));
        self
    }

    /// Makes `path` exist but be unreadable.
    pub fn unreadable_file(mut self, path: impl Into<PathBuf>) -> FakeEffects {
        self.files.insert(
            path.into(),
            FileRead::Unreadable("permission denied".into()),
        );
        self
    }

    /// From the `spawns`-th spawn on, `path` reads as `read` (what a tool writes while it runs).
    ///
    /// Stages for one path apply in the order given; the last one whose spawn count has been
    /// reached wins, and before any of them the plain [`FakeEffects::file`] answer applies.
    /// Handler tests use it for files the lane's own process changes, e.g. a transcript that
    /// gains a line during the second spawn (after a `--help` probe):
    ///
    /// ```
    /// use gsd_lane_sdk::testing::{FakeEffects, FakeProcess};
    /// use gsd_lane_sdk::{Effects, FileRead, SpawnRequest, StdoutSink};
    /// use std::path::Path;
    /// use std::time::Duration;
    ///
    /// let fx = FakeEffects::new()
    ///     .file("/t", "old\n")
    ///     .after_spawn(1, "/t", FileRead::Text("old\nnew\n".into()))
    ///     .process(FakeProcess::prints(""));
    /// assert_eq!(fx.read_text(Path::new("/t"), 100), FileRead::Text("old\n".into()));
    /// fx.spawn(&SpawnRequest::new("tool", vec![], StdoutSink::Discard, Duration::from_secs(1)));
    /// assert_eq!(fx.read_text(Path::new("/t"), 100), FileRead::Text("old\nnew\n".into()));
    /// ```
    pub fn after_spawn(
        mut self,
        spawns: usize,
        path: impl Into<PathBuf>,
        read: FileRead,
    ) -> FakeEffects {
        self.staged.push((spawns, path.into(), read));
        self
    }

    /// Sets the home directory.
    pub fn home(mut self, home: impl Into<PathBuf>) -> FakeEffects {
        self.home = Some(home.into());
        self
    }

    /// Every spawn request made so far.
    pub fn spawn_calls(&self) -> Vec<SpawnRequest> {
        self.spawn_calls.borrow().clone()
    }

    /// Every HTTP request made so far.
    pub fn http_calls(&self) -> Vec<HttpRequest> {
        self.http_calls.borrow().clone()
    }

    /// Every warning written so far.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.borrow().clone()
    }

    /// Every lock key taken so far.
    pub fn locks(&self) -> Vec<String> {
        self.locks.borrow().clone()
    }
}

impl Effects for FakeEffects {
    fn spawn(&self, request: &SpawnRequest) -> SpawnReport {
        self.spawn_calls.borrow_mut().push(request.clone());
        let Some(process) = self.processes.borrow_mut().pop_front() else {
            return SpawnReport {
                error: Some(crate::SpawnError::NotFound),
                ..SpawnReport::default()
            };
        };
        let mut report = process.report;
        match &request.stdout {
            StdoutSink::Memory(max) => {
                let mut text = process.stdout;
                text.truncate(floor_char_boundary(&text, *max));
                report.stdout = text;
            }
            StdoutSink::File(path) => {
                // A fake that cannot write its file reports it like the host would.
                if let Err(err) = std::fs::write(path, process.stdout.as_bytes()) {
                    report.error = Some(crate::SpawnError::Os(err.to_string()));
                }
                report.stdout_bytes = process.stdout.len() as u64;
            }
            StdoutSink::Discard => {}
        }
        match &request.stderr_path {
            Some(path) => {
                let mut sidecar = process.stderr;
                if let Some(error) = &report.error {
                    sidecar.push_str(&format!("\n[spawn error: {}]\n", error.code()));
                }
                if let Err(err) = std::fs::write(path, sidecar) {
                    report.error = Some(crate::SpawnError::Os(err.to_string()));
                }
            }
            None => report.stderr = process.stderr,
        }
        report
    }

    fn http(&self, request: &HttpRequest) -> HttpReport {
        self.http_calls.borrow_mut().push(request.clone());
        self.http
            .borrow_mut()
            .get_mut(&request.url)
            .and_then(VecDeque::pop_front)
            .unwrap_or_else(|| HttpReport::Failed {
                error: "ECONNREFUSED".to_owned(),
            })
    }

    fn read_text(&self, path: &Path, _max_bytes: u64) -> FileRead {
        let spawned = self.spawn_calls.borrow().len();
        self.staged
            .iter()
            .rev()
            .find(|(after, staged, _)| spawned >= *after && staged == path)
            .map(|(_, _, read)| read.clone())
            .or_else(|| self.files.get(path).cloned())
            .unwrap_or(FileRead::Missing)
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    fn lock(&self, key: &str, _wait: Duration) -> Result<Box<dyn LockGuard>, HandlerError> {
        self.locks.borrow_mut().push(key.to_owned());
        Ok(Box::new(NoLock))
    }

    fn warn(&self, message: &str) {
        self.warnings.borrow_mut().push(message.to_owned());
    }

    fn remaining(&self) -> Duration {
        Duration::from_secs(600)
    }
}

/// A directory for a handler test's real files (the stderr sidecar [`FakeEffects`] writes),
/// `gsd-lane-handlers-tests/<tag>` under the system temp dir, created if missing.
///
/// Handler crates may not touch the file system themselves (their clippy configuration
/// disallows `std::fs` and `std::env`), so their tests ask for the directory here.
///
/// # Errors
///
/// The I/O error when the directory cannot be created.
pub fn scratch_dir(tag: &str) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir()
        .join("gsd-lane-handlers-tests")
        .join(tag);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn floor_char_boundary(text: &str, max: usize) -> usize {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}
