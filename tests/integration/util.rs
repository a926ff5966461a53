//! Shared helpers: an isolated environment per test and a runner for the real binary.
//!
//! Every command runs `gsd-lane` (the binary built by cargo for this test target) with a
//! cleared environment except `PATH`, `HOME` and `GSD_HOME` pointing into a private temporary
//! directory, and the working directory set to a temporary project directory.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

/// Longest a single command may run before the test fails (instead of hanging).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_gsd-lane"))
}

/// The workspace root (`/work/main`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_path_buf()
}

/// `tests/fixtures/<rel>` of the workspace.
pub fn fixture(rel: &str) -> PathBuf {
    workspace_root().join("tests").join("fixtures").join(rel)
}

/// Reads and parses a JSON file.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("reading {}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("parsing {}: {err}", path.display()))
}

/// The valid third-party lane of manifest.md §7e (`acme-review`).
pub fn acme() -> Value {
    read_json(&fixture("overlays/acme-review/capability.json"))
}

/// The acme manifest with `id` replaced (for use in a folder of that name).
pub fn acme_as(id: &str) -> Value {
    let mut value = acme();
    value["id"] = Value::String(id.to_owned());
    value
}

/// Which overlay directory to write into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `$GSD_HOME/.gsd/capabilities`.
    Global,
    /// `<project>/.gsd/capabilities`.
    Project,
}

/// A private environment: `HOME`, `GSD_HOME` and a project directory under one temp dir.
pub struct TestEnv {
    /// Keeps the directory alive for the test's duration.
    pub root: TempDir,
    /// `HOME`.
    pub home: PathBuf,
    /// `GSD_HOME`.
    pub gsd_home: PathBuf,
    /// The working directory of commands (and, with `.planning/`, the project root).
    pub project: PathBuf,
}

impl TestEnv {
    /// A fresh environment; the project has no `.planning/` directory.
    pub fn new() -> TestEnv {
        let root = tempfile::Builder::new()
            .prefix("gsd-lane-it-")
            .tempdir()
            .expect("create temp dir");
        let home = root.path().join("home");
        let gsd_home = root.path().join("gsd-home");
        let project = root.path().join("project");
        for dir in [&home, &gsd_home, &project] {
            std::fs::create_dir_all(dir).expect("create env dirs");
        }
        TestEnv {
            root,
            home,
            gsd_home,
            project,
        }
    }

    /// A fresh environment whose project holds `.planning/`.
    pub fn with_planning() -> TestEnv {
        let env = TestEnv::new();
        std::fs::create_dir_all(env.project.join(".planning")).expect("create .planning");
        env
    }

    /// The overlay directory of `scope`.
    pub fn capabilities_dir(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::Global => self.gsd_home.join(".gsd").join("capabilities"),
            Scope::Project => self.project.join(".gsd").join("capabilities"),
        }
    }

    /// Creates (empty) overlay folder `folder` in `scope` and returns its path.
    pub fn overlay_dir(&self, scope: Scope, folder: &str) -> PathBuf {
        let dir = self.capabilities_dir(scope).join(folder);
        std::fs::create_dir_all(&dir).expect("create overlay folder");
        dir
    }

    /// Writes raw bytes as `<scope dir>/<folder>/capability.json`.
    pub fn write_overlay_bytes(&self, scope: Scope, folder: &str, bytes: &[u8]) -> PathBuf {
        let path = self.overlay_dir(scope, folder).join("capability.json");
        std::fs::write(&path, bytes).expect("write overlay manifest");
        path
    }

    /// Writes a manifest value as `<scope dir>/<folder>/capability.json`.
    pub fn write_overlay(&self, scope: Scope, folder: &str, value: &Value) -> PathBuf {
        let text = serde_json::to_string_pretty(value).expect("serialize manifest");
        self.write_overlay_bytes(scope, folder, text.as_bytes())
    }

    /// Copies the fixture folder `tests/fixtures/<fixture_rel>/capability.json` into an overlay.
    pub fn write_overlay_fixture(&self, scope: Scope, folder: &str, fixture_rel: &str) -> PathBuf {
        let bytes = std::fs::read(fixture(fixture_rel).join("capability.json"))
            .expect("read overlay fixture");
        self.write_overlay_bytes(scope, folder, &bytes)
    }

    /// Installs `examples/lanes/<name>/capability.json` (an example lane overlay, such as the
    /// retired gemini lane) as a global overlay, as `gsd-lane install` would place it.
    pub fn install_example_lane(&self, name: &str) -> PathBuf {
        let path = workspace_root()
            .join("examples")
            .join("lanes")
            .join(name)
            .join("capability.json");
        let bytes = std::fs::read(&path).expect("read example lane");
        self.write_overlay_bytes(Scope::Global, name, &bytes)
    }

    /// A command in this environment (working directory: the project).
    pub fn cmd(&self, args: &[&str]) -> Cmd {
        let mut command = Command::new(bin());
        command
            .env_clear()
            .env("HOME", &self.home)
            .env("GSD_HOME", &self.gsd_home)
            .current_dir(&self.project)
            .args(args);
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        Cmd { command }
    }

    /// Runs `args` in the project directory.
    pub fn run(&self, args: &[&str]) -> Outcome {
        self.cmd(args).run()
    }

    /// `list --json`, checked for success, as rows.
    pub fn list(&self, extra: &[&str]) -> Vec<Value> {
        let mut args = vec!["list", "--json"];
        args.extend_from_slice(extra);
        let out = self.run(&args);
        out.assert_status(0);
        match out.json() {
            Value::Array(rows) => rows,
            other => panic!("list --json is not an array: {other}"),
        }
    }
}

/// A prepared invocation of the binary.
pub struct Cmd {
    command: Command,
}

impl Cmd {
    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.command.args(args);
        self
    }

    /// Changes the working directory.
    pub fn current_dir(mut self, dir: &Path) -> Cmd {
        self.command.current_dir(dir);
        self
    }

    /// Runs to completion (killed after a timeout) and captures everything.
    pub fn run(self) -> Outcome {
        run_bounded(self.command, COMMAND_TIMEOUT).0
    }
}

/// The `PATH` of commands that use the fake CLIs: `tests/fixtures/bin` then `/usr/bin:/bin`.
pub fn fixture_path() -> String {
    format!("{}:/usr/bin:/bin", fixture("bin").display())
}

/// `gsd-lane <args>` with a cleared environment: `PATH` = `path`, `HOME` and `GSD_HOME` of
/// `env`, working directory `dir`. Not started; run it with [`run_bounded`].
pub fn gsd_command(env: &TestEnv, path: &str, dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(bin());
    command
        .env_clear()
        .env("PATH", path)
        .env("HOME", &env.home)
        .env("GSD_HOME", &env.gsd_home)
        .current_dir(dir)
        .args(args);
    command
}

/// Runs `command` (stdin closed, stdout and stderr captured) to completion; fails the test
/// when it has not finished within `timeout` (a hang), after killing it. Returns what it
/// produced and how long it took.
pub fn run_bounded(command: Command, timeout: Duration) -> (Outcome, Duration) {
    let description = format!("{command:?}");
    run_bounded_as(command, description, timeout)
}

/// [`run_bounded`], naming the command `description` in the outcome and in failures.
pub fn run_bounded_as(
    mut command: Command,
    description: String,
    timeout: Duration,
) -> (Outcome, Duration) {
    let started = Instant::now();
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("spawning {description}: {err}"));
    let out = finish_bounded(child, description, timeout);
    (out, started.elapsed())
}

/// Waits at most `timeout` for an already started `child` (stdout and stderr piped), reading
/// both pipes meanwhile; kills it and fails the test when it has not finished by then.
pub fn finish_bounded(mut child: Child, description: String, timeout: Duration) -> Outcome {
    let deadline = Instant::now() + timeout;
    let mut stdout_pipe = child.stdout.take().expect("stdout piped");
    let mut stderr_pipe = child.stderr.take().expect("stderr piped");
    let stdout_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout_pipe.read_to_end(&mut buf);
        buf
    });
    let stderr_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr_pipe.read_to_end(&mut buf);
        buf
    });
    let status = wait_until(&mut child, &description, deadline, timeout);
    let stdout = stdout_reader.join().expect("stdout reader");
    let stderr = stderr_reader.join().expect("stderr reader");
    Outcome {
        description,
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Waits for `child` until `deadline`; kills it and fails the test (naming `description` and
/// `timeout`) when it has not finished by then.
pub fn wait_until(
    child: &mut Child,
    description: &str,
    deadline: Instant,
    timeout: Duration,
) -> std::process::ExitStatus {
    loop {
        match child.try_wait().expect("waiting for gsd-lane") {
            Some(status) => return status,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{description} did not finish within {timeout:?} (hang)");
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Reads a text file, failing the test with the path on error.
pub fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("reading {}: {err}", path.display()))
}

/// Every regular file under `dir`, recursively, sorted (nothing when `dir` is unreadable).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => stack.push(path),
                Ok(kind) if kind.is_file() => found.push(path),
                _ => {}
            }
        }
    }
    found.sort();
    found
}

/// What a finished command produced.
pub struct Outcome {
    /// The command, for messages.
    pub description: String,
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Captured stdout (lossy UTF-8).
    pub stdout: String,
    /// Captured stderr (lossy UTF-8).
    pub stderr: String,
}

impl Outcome {
    /// Fails the test unless the exit code is `expected`.
    pub fn assert_status(&self, expected: i32) -> &Outcome {
        assert_eq!(
            self.code,
            Some(expected),
            "{}\nexit status {:?}, expected {expected}\nstdout:\n{}\nstderr:\n{}",
            self.description,
            self.code,
            self.stdout,
            self.stderr
        );
        self
    }

    /// Fails the test if stderr shows a Rust panic.
    pub fn assert_no_panic(&self) -> &Outcome {
        assert!(
            !self.stderr.contains("panicked"),
            "{} panicked:\n{}",
            self.description,
            self.stderr
        );
        self
    }

    /// Stdout parsed as JSON; a lane result's `sandbox` member (`run --json`, `invoke --json`)
    /// is checked by [`take_sandbox`] and taken out, so that exact comparisons of the other
    /// members stay exact. [`Outcome::json_raw`] keeps it.
    pub fn json(&self) -> Value {
        let mut value = self.json_raw();
        take_sandbox(&mut value);
        value
    }

    /// Stdout parsed as JSON, as printed.
    pub fn json_raw(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|err| {
            panic!(
                "{}: stdout is not JSON ({err}):\n{}\nstderr:\n{}",
                self.description, self.stdout, self.stderr
            )
        })
    }
}

/// Takes the `sandbox` member out of a lane result that ran (`"ok": true`), after checking its
/// shape: `{"mode", "mechanism", "detail"}` with a known mode and a mechanism that fits it (the
/// view or Landlock exactly under `enforce`). Returns it (`None` when there was none).
pub fn take_sandbox(value: &mut Value) -> Option<Value> {
    let map = value.as_object_mut()?;
    if map.get("ok") != Some(&Value::Bool(true)) || !map.contains_key("slug") {
        return None;
    }
    let sandbox = map.remove("sandbox")?;
    let mode = sandbox["mode"].as_str().unwrap_or_default();
    let mechanism = sandbox["mechanism"].as_str().unwrap_or_default();
    let fits = match mode {
        "enforce" => matches!(mechanism, "view" | "landlock"),
        "detect" | "off" => mechanism == "none",
        _ => false,
    };
    assert!(
        fits && sandbox["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with(mode))
            && sandbox.as_object().is_some_and(|m| m.len() == 3),
        "sandbox member of a lane result: {sandbox}"
    );
    Some(sandbox)
}

/// The `validate --json` report: `errors` and `warnings` arrays.
pub struct Report {
    /// Error diagnostics.
    pub errors: Vec<Value>,
    /// Warning diagnostics.
    pub warnings: Vec<Value>,
}

impl Report {
    /// Splits a parsed `validate --json` document.
    pub fn of(value: &Value) -> Report {
        let list = |key: &str| -> Vec<Value> {
            value
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_else(|| panic!("validate --json has no `{key}` array: {value}"))
        };
        Report {
            errors: list("errors"),
            warnings: list("warnings"),
        }
    }

    /// Errors followed by warnings.
    pub fn all(&self) -> impl Iterator<Item = &Value> {
        self.errors.iter().chain(&self.warnings)
    }

    /// The codes of every diagnostic, errors first.
    pub fn codes(&self) -> Vec<String> {
        self.all().map(|d| str_of(d, "code")).collect()
    }
}

/// `validate --json <paths…>` in `env`; returns the outcome and the parsed report.
pub fn validate(env: &TestEnv, paths: &[PathBuf]) -> (Outcome, Report) {
    let out = env.cmd(&["validate", "--json"]).args(paths).run();
    out.assert_no_panic();
    let report = Report::of(&out.json());
    (out, report)
}

/// A string member of a JSON object (`""` when absent or not a string).
pub fn str_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// The `list --json` row of capability `id` in `scope` (`first-party`, `global`, `project`).
pub fn row<'a>(rows: &'a [Value], scope: &str, id: &str) -> &'a Value {
    rows.iter()
        .find(|row| row["scope"] == scope && row["id"] == id)
        .unwrap_or_else(|| {
            panic!(
                "no list row for {scope}:{id}; rows:\n{}",
                serde_json::to_string_pretty(rows).unwrap_or_default()
            )
        })
}

/// Whether `list --json` has any row for `id` in `scope`.
pub fn has_row(rows: &[Value], scope: &str, id: &str) -> bool {
    rows.iter()
        .any(|row| row["scope"] == scope && row["id"] == id)
}

/// The codes of a list row's diagnostics.
pub fn row_diagnostic_codes(row: &Value) -> Vec<(String, String)> {
    row["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| (str_of(d, "code"), str_of(d, "field")))
        .collect()
}

/// One first-party lane as its manifest in `capabilities/` declares it.
#[derive(Debug, Clone)]
pub struct FirstPartyLane {
    /// Capability id (its folder).
    pub id: String,
    /// Lane slug.
    pub slug: String,
    /// Lane flags, in declared order.
    pub flags: Vec<String>,
    /// REVIEWS.md section.
    pub section: String,
    /// The whole manifest.
    pub manifest: Value,
}

/// The first-party roster read from `capabilities_dir`: the ids of its `descriptor-order.txt`
/// (blank and `#` lines ignored), in that order, each with its `<id>/capability.json`. The one
/// reader of the roster every test derives ids, flags, sections and counts from (the host's
/// `build.rs` compiles the same list).
pub fn roster_in(capabilities_dir: &Path) -> Vec<FirstPartyLane> {
    let order = std::fs::read_to_string(capabilities_dir.join("descriptor-order.txt"))
        .unwrap_or_else(|err| panic!("reading {}: {err}", capabilities_dir.display()));
    order
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|id| {
            let manifest = read_json(&capabilities_dir.join(id).join("capability.json"));
            let body = &manifest["reviewer"];
            let flags = body["flags"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            FirstPartyLane {
                id: id.to_owned(),
                slug: str_of(body, "slug"),
                flags,
                section: str_of(body, "reviewsSection"),
                manifest,
            }
        })
        .collect()
}

/// The shipped first-party roster (`capabilities/` of the workspace), in descriptor order.
pub fn first_party() -> Vec<FirstPartyLane> {
    roster_in(&workspace_root().join("capabilities"))
}

/// The first-party capability ids in descriptor order.
pub fn first_party_ids() -> Vec<String> {
    first_party().into_iter().map(|lane| lane.id).collect()
}

/// The first-party slugs in descriptor order.
pub fn first_party_slugs() -> Vec<String> {
    first_party().into_iter().map(|lane| lane.slug).collect()
}

/// `gsd-lane flags` of `lanes`: every flag, one per line.
pub fn flags_text(lanes: &[FirstPartyLane]) -> String {
    lanes
        .iter()
        .flat_map(|lane| lane.flags.iter())
        .map(|flag| format!("{flag}\n"))
        .collect()
}

/// `gsd-lane sections` of `lanes`: `<slug>\t<section>` per line.
pub fn sections_text(lanes: &[FirstPartyLane]) -> String {
    lanes
        .iter()
        .map(|lane| format!("{}\t{}\n", lane.slug, lane.section))
        .collect()
}

/// The default `gsd-lane flags` output (the first-party roster only).
pub fn default_flags() -> String {
    flags_text(&first_party())
}

/// The default `gsd-lane sections` output (the first-party roster only).
pub fn default_sections() -> String {
    sections_text(&first_party())
}

/// Asserts the first-party lanes lead the listing in descriptor order, none skipped.
///
/// A first-party lane is `active`, or `unavailable` only because this build does not
/// implement its handler yet (manifest.md §3.2: accepted; fails closed at run time). Any
/// skip code (`LD-*`) on a first-party lane fails.
pub fn assert_first_party_intact(rows: &[Value]) {
    let first_party = first_party_ids();
    let ids: Vec<String> = rows
        .iter()
        .take(first_party.len())
        .map(|row| format!("{}:{}", str_of(row, "scope"), str_of(row, "id")))
        .collect();
    let expected: Vec<String> = first_party
        .iter()
        .map(|id| format!("first-party:{id}"))
        .collect();
    assert_eq!(ids, expected, "first-party lanes must lead the listing");
    let first_party_rows = rows
        .iter()
        .filter(|row| row["scope"] == "first-party")
        .count();
    assert_eq!(
        first_party_rows,
        first_party.len(),
        "exactly one row per first-party manifest"
    );
    for row in rows.iter().take(first_party.len()) {
        let status = str_of(row, "status");
        let accepted = row["code"].is_null()
            && row["kind"].is_null()
            && (status == "active" && row["active"] == Value::Bool(true)
                || status == "unavailable" && str_of(row, "reason").starts_with("unknown handler"));
        assert!(accepted, "first-party lane not accepted: {row}");
    }
}

/// Host pids of the live processes (zombies left out) whose environment holds `HOME=<home>`:
/// a test's gsd-lane, its watchdog, its lanes and everything they started, whatever PID
/// namespace they run in. A confined lane runs in a PID namespace of its own, so the `$$` it
/// reports is its pid there, not one the test can look up; its `HOME` finds it instead.
pub fn processes_with_home(home: &Path) -> Vec<u32> {
    let wanted = format!("HOME={}", home.display()).into_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            !stat.is_empty() && state != Some('Z')
        })
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == wanted.as_slice()))
        })
        .collect()
}

/// Whether process `pid` is a lane watchdog: a forked copy of gsd-lane named `gsd-watchdog`, or
/// gsd-lane executed again as `gsd-lane __lane-watchdog <token>`.
pub fn is_watchdog(pid: u32) -> bool {
    let forked = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|comm| comm.trim_end() == "gsd-watchdog");
    forked
        || std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|cmd| cmd.windows(16).any(|w| w == b"__lane-watchdog\0"))
}

/// The parent pid of process `pid` (`None` when it is gone or a zombie).
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?;
    if state == "Z" {
        return None;
    }
    fields.next()?.parse().ok()
}

/// Waits up to `bound` until no process of [`processes_with_home`] is left, then kills and
/// returns whatever is (so that a failing test leaves nothing running).
pub fn processes_left_with_home(home: &Path, bound: Duration) -> Vec<u32> {
    let until = Instant::now() + bound;
    loop {
        let left = processes_with_home(home);
        if left.is_empty() || Instant::now() >= until {
            for pid in &left {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The citation stamp's line (upstream #3436): a source-grounded lane's review that cites no
/// `file:line` starts with it, then an empty line.
pub const CITATION_STAMP: &str = "> [reviewed-without-source-citations] This reviewer declared source-grounded evidence but cited no file:line source evidence, so it reviewed the pasted plan text only \u{2014} down-weight its verdict in the Consensus Summary.";

/// `review` as a source-grounded lane leaves it when it cites no source: the stamp, an empty
/// line, the review unchanged.
pub fn uncited(review: &str) -> String {
    format!("{CITATION_STAMP}\n\n{review}")
}
