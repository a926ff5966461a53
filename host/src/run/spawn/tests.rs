//! Behaviour of [`super::spawn_bounded`]: sinks, caps, stdin, errors, deadlines, whole-tree kills and resource hygiene.

use super::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use gsd_lane_sdk::StdoutSink;

const ERR_ENOBUFS: &str = "\n[spawn error: ENOBUFS]\n";

fn sh(script: &str) -> SpawnRequest {
    SpawnRequest::new(
        "/bin/sh".to_string(),
        vec!["-c".to_string(), script.to_string()],
        StdoutSink::Memory(1 << 20),
        Duration::from_secs(10),
    )
}

fn run_default(request: &SpawnRequest) -> SpawnReport {
    spawn_bounded(request, &ChildEnv::Inherit, &SpawnLimits::default())
}

/// Writes an executable script; spawning retries on ETXTBSY, which a concurrent fork in
/// another test thread can cause briefly after the script was written.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn spawn_retrying(request: &SpawnRequest, env: &ChildEnv, limits: &SpawnLimits) -> SpawnReport {
    for _ in 0..50 {
        let report = spawn_bounded(request, env, limits);
        if report.error != Some(SpawnError::Os("ETXTBSY".to_string())) {
            return report;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("ETXTBSY persisted");
}

/// True once `pid` is gone or a zombie (PID 1 here may not reap orphans).
fn is_dead(pid: &str) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn wait_dead(pid: &str, within: Duration) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if is_dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    is_dead(pid)
}

fn read_pid(path: &Path) -> String {
    for _ in 0..200 {
        if let Ok(text) = fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text.trim().to_string();
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no pid file");
}

#[test]
fn stdout_streams_to_file_and_sidecar_is_written_even_when_empty() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("review.md");
    let err = dir.path().join("review.err");
    let mut request = sh("printf 'hello\\nworld\\n'");
    request.stdout = StdoutSink::File(out.clone());
    request.stderr_path = Some(err.clone());
    let report = run_default(&request);
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(report.exit_code, Some(0));
    assert_eq!(fs::read_to_string(&out).unwrap(), "hello\nworld\n");
    assert_eq!(report.stdout_bytes, 12);
    assert_eq!(report.stdout, "");
    assert_eq!(fs::read_to_string(&err).unwrap(), "");
    assert_eq!(
        fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn stderr_goes_to_sidecar_or_memory() {
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("x.err");
    let mut request = sh("echo oops >&2; echo out");
    request.stderr_path = Some(err.clone());
    let report = run_default(&request);
    assert_eq!(report.stdout, "out\n");
    assert_eq!(report.stderr, "");
    assert_eq!(fs::read_to_string(&err).unwrap(), "oops\n");
    request.stderr_path = None;
    let report = run_default(&request);
    assert_eq!(report.stderr, "oops\n");
    assert_eq!(report.stdout_bytes, 4);
}

#[test]
fn stdout_memory_is_capped_and_the_tree_killed() {
    let mut request = sh("echo small");
    let report = run_default(&request);
    assert_eq!(report.stdout, "small\n");
    request = sh("yes");
    request.stdout = StdoutSink::Memory(1000);
    let report = run_default(&request);
    assert_eq!(report.error, Some(SpawnError::OutputTooLarge));
    assert_eq!(report.stdout.len(), 1000);
    assert_eq!(report.stdout_bytes, 1000);
    // Killed by the group kill (no status) or by the closed pipe first (sh's 141): never a
    // clean exit. How long it took is the bench's business, not a test's.
    assert!(
        matches!(report.exit_code, None | Some(141)),
        "{:?}",
        report.exit_code
    );
}

#[test]
fn stdout_file_cap_keeps_what_fit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let err = dir.path().join("err");
    let mut request = sh("yes abcdefghi");
    request.stdout = StdoutSink::File(out.clone());
    request.stderr_path = Some(err.clone());
    let limits = SpawnLimits {
        stdout_file_bytes: 1005,
        stderr_bytes: 1000,
    };
    let report = spawn_bounded(&request, &ChildEnv::Inherit, &limits);
    assert_eq!(report.error, Some(SpawnError::OutputTooLarge));
    assert_eq!(fs::metadata(&out).unwrap().len(), 1005);
    assert_eq!(fs::read_to_string(&err).unwrap(), ERR_ENOBUFS);
}

#[test]
fn cap_cuts_on_a_character_boundary() {
    let mut request = sh("printf 'a\\342\\202\\254'");
    request.stdout = StdoutSink::Memory(3);
    let report = run_default(&request);
    assert_eq!(report.error, Some(SpawnError::OutputTooLarge));
    assert_eq!(report.stdout, "a");
    assert_eq!(report.stdout_bytes, 1);
}

#[test]
fn stdin_is_streamed_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("prompt.md");
    let content: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    fs::write(&input, &content).unwrap();
    let mut request = sh("cat");
    request.stdin = Some(input);
    request.stdout = StdoutSink::Memory(1 << 24);
    let report = run_default(&request);
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(report.stdout, content);
}

#[test]
fn no_stdin_gives_immediate_eof() {
    let mut request = sh("cat");
    request.timeout = Duration::from_secs(20);
    let report = run_default(&request);
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(report.stdout, "");
    assert!(report.elapsed < Duration::from_secs(5));
}

#[test]
fn missing_stdin_file_gives_empty_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let mut request = sh("cat; echo done");
    request.stdin = Some(dir.path().join("missing"));
    let report = run_default(&request);
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(report.stdout, "done\n");
}

#[test]
fn non_regular_stdin_or_output_is_refused_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let mut request = sh("cat");
    request.stdin = Some(fifo.clone());
    let report = run_default(&request);
    assert_eq!(report.error, Some(SpawnError::Os("EINVAL".to_string())));
    request.stdin = Some(dir.path().to_path_buf());
    let report = run_default(&request);
    assert_eq!(report.error, Some(SpawnError::Os("EINVAL".to_string())));
    // A FIFO without a reader as the review file: refused at open, not a hang.
    request.stdin = None;
    request.stdout = StdoutSink::File(fifo);
    let report = run_default(&request);
    assert_eq!(report.error, Some(SpawnError::Os("ENXIO".to_string())));
    assert_eq!(report.exit_code, None);
}

#[test]
fn missing_program_is_enoent_and_written_to_the_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("lane.err");
    let out = dir.path().join("lane.md");
    let request = SpawnRequest::new(
        "gsd-lane-no-such-program".to_string(),
        vec![],
        StdoutSink::File(out),
        Duration::from_secs(5),
    )
    .with_stderr_path(Some(err.clone()));
    let env = ChildEnv::Minimal {
        vars: vec![("PATH".into(), dir.path().display().to_string())],
    };
    let report = spawn_bounded(&request, &env, &SpawnLimits::default());
    assert_eq!(report.error, Some(SpawnError::NotFound));
    assert_eq!(report.exit_code, None);
    assert_eq!(
        fs::read_to_string(&err).unwrap(),
        "\n[spawn error: ENOENT]\n"
    );
    let mut by_path = request;
    by_path.program = dir.path().join("nope").display().to_string();
    let report = spawn_bounded(&by_path, &ChildEnv::Inherit, &SpawnLimits::default());
    assert_eq!(report.error, Some(SpawnError::NotFound));
}

#[test]
fn non_executable_path_is_eacces() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tool");
    fs::write(&file, "#!/bin/sh\necho hi\n").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
    let err = dir.path().join("tool.err");
    let mut request = sh("");
    request.program = file.display().to_string();
    request.args.clear();
    request.stderr_path = Some(err.clone());
    let report = run_default(&request);
    assert_eq!(report.error, Some(SpawnError::PermissionDenied));
    assert_eq!(
        fs::read_to_string(&err).unwrap(),
        "\n[spawn error: EACCES]\n"
    );
}

#[test]
fn exit_code_is_recorded_and_none_when_signalled() {
    let report = run_default(&sh("exit 7"));
    assert_eq!(report.exit_code, Some(7));
    assert_eq!(report.error, None);
    assert!(!report.succeeded());
    let report = run_default(&sh("kill -9 $$"));
    assert_eq!(report.exit_code, None);
    assert_eq!(report.error, None);
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut request = sh("printf 'a\\377b\\300'");
    request.stdout = StdoutSink::File(out.clone());
    let report = run_default(&request);
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "a\u{FFFD}b\u{FFFD}");
    assert_eq!(report.stdout_bytes, 8);
}

#[test]
fn multibyte_character_split_across_writes_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let err = dir.path().join("err");
    let script = concat!(
        "printf '\\342'; printf '\\342' >&2; sleep 0.2; ",
        "printf '\\202\\254'; printf '\\202\\254' >&2"
    );
    let mut request = sh(script);
    request.stdout = StdoutSink::File(out.clone());
    request.stderr_path = Some(err.clone());
    let report = run_default(&request);
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "€");
    assert_eq!(fs::read_to_string(&err).unwrap(), "€");
}

#[test]
fn timeout_kills_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("err");
    let mut request = sh("echo started; sleep 30");
    request.timeout = Duration::from_millis(500);
    request.stderr_path = Some(err.clone());
    let started = Instant::now();
    let report = run_default(&request);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(report.error, Some(SpawnError::TimedOut));
    assert_eq!(report.exit_code, None);
    assert_eq!(report.stdout, "started\n");
    assert_eq!(
        fs::read_to_string(&err).unwrap(),
        "\n[spawn error: ETIMEDOUT]\n"
    );
}

#[test]
fn grandchild_holding_stdout_is_killed_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let mut request = sh(&format!(
        "sleep 30 & echo $! > '{}'; exit 0",
        pid_file.display()
    ));
    request.timeout = Duration::from_millis(1000);
    let started = Instant::now();
    let report = run_default(&request);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(report.error, Some(SpawnError::TimedOut));
    assert_eq!(report.exit_code, Some(0));
    let pid = read_pid(&pid_file);
    assert!(
        wait_dead(&pid, Duration::from_secs(2)),
        "grandchild {pid} survived"
    );
}

#[test]
fn leftover_group_members_are_killed_after_a_normal_end() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    // The background sleep closes stdout/stderr, so output ends when the child exits.
    let script = format!(
        "sleep 30 >/dev/null 2>&1 & echo $! > '{}'",
        pid_file.display()
    );
    let report = run_default(&sh(&script));
    assert!(report.succeeded(), "{report:?}");
    let pid = read_pid(&pid_file);
    assert!(
        wait_dead(&pid, Duration::from_secs(2)),
        "group member {pid} survived"
    );
}

#[test]
fn escaped_daemon_holding_a_pipe_cannot_hang_the_call() {
    if !Path::new("/usr/bin/setsid").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = format!(
        "/usr/bin/setsid /bin/sh -c 'echo $$ > \"$1\"; exec sleep 30' sh '{}' & \
         sleep 0.1; exit 0",
        pid_file.display()
    );
    let mut request = sh(&script);
    request.timeout = Duration::from_millis(500);
    let started = Instant::now();
    let report = run_default(&request);
    let took = started.elapsed();
    let pid = read_pid(&pid_file);
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid])
        .status();
    assert!(
        took < Duration::from_millis(500) + KILL_GRACE + Duration::from_secs(2),
        "{took:?}"
    );
    assert_eq!(report.error, Some(SpawnError::TimedOut));
}

#[test]
fn endless_stderr_is_capped_with_enobufs() {
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("err");
    let mut request = sh("yes 'stderr noise' >&2");
    request.stderr_path = Some(err.clone());
    let limits = SpawnLimits {
        stdout_file_bytes: 1 << 20,
        stderr_bytes: 100_000,
    };
    let report = spawn_bounded(&request, &ChildEnv::Inherit, &limits);
    assert_eq!(report.error, Some(SpawnError::OutputTooLarge));
    let size = fs::metadata(&err).unwrap().len();
    assert_eq!(size, 100_000 + ERR_ENOBUFS.len() as u64);
    assert!(fs::read_to_string(&err).unwrap().ends_with(ERR_ENOBUFS));
    request.stderr_path = None;
    let limits = SpawnLimits {
        stdout_file_bytes: 1 << 20,
        stderr_bytes: 10_000,
    };
    let report = spawn_bounded(&request, &ChildEnv::Inherit, &limits);
    assert_eq!(report.error, Some(SpawnError::OutputTooLarge));
    assert_eq!(report.stderr.len(), 10_000);
}

#[test]
fn two_hundred_megabytes_of_stdout_reach_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big");
    let mut request = sh("head -c 200000000 /dev/zero");
    request.stdout = StdoutSink::File(out.clone());
    request.timeout = Duration::from_secs(60);
    let report = run_default(&request);
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(report.stdout_bytes, 200_000_000);
    assert_eq!(fs::metadata(&out).unwrap().len(), 200_000_000);
}

#[test]
fn discard_sink_reports_nothing() {
    let mut request = sh("echo gone; echo kept >&2");
    request.stdout = StdoutSink::Discard;
    let report = run_default(&request);
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(report.stdout_bytes, 0);
    assert_eq!(report.stderr, "kept\n");
}

#[test]
fn hostile_argument_arrives_as_one_element() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "fake-reviewer", "printf '%s\\n' \"$#\" \"$1\"");
    let hostile = "; rm -rf /; $(whoami)";
    let request = SpawnRequest::new(
        "fake-reviewer".to_string(),
        vec![hostile.to_string()],
        StdoutSink::Memory(4096),
        Duration::from_secs(10),
    );
    let env = ChildEnv::Minimal {
        vars: vec![("PATH".into(), dir.path().display().to_string())],
    };
    let report = spawn_retrying(&request, &env, &SpawnLimits::default());
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(report.stdout, format!("1\n{hostile}\n"));
}

#[test]
fn nul_byte_in_an_argument_is_a_spawn_failure() {
    let mut request = sh("true");
    request.args.push("a\0b".to_string());
    let report = run_default(&request);
    assert_eq!(report.error, Some(SpawnError::Os("EINVAL".to_string())));
}

#[test]
fn minimal_env_replaces_the_environment() {
    let request = SpawnRequest::new(
        "/usr/bin/env".to_string(),
        vec![],
        StdoutSink::Memory(4096),
        Duration::from_secs(10),
    );
    let vars = vec![
        ("PATH".to_string(), "/usr/bin:/bin".to_string()),
        ("ONLY".to_string(), "1".to_string()),
    ];
    let report = spawn_bounded(
        &request,
        &ChildEnv::Minimal { vars },
        &SpawnLimits::default(),
    );
    assert!(report.succeeded(), "{report:?}");
    let mut lines: Vec<&str> = report.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["ONLY=1", "PATH=/usr/bin:/bin"]);
}

#[test]
fn works_when_called_inside_a_tokio_runtime() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = runtime.block_on(async { run_default(&sh("echo inside")) });
    assert_eq!(report.stdout, "inside\n");
}

#[test]
fn zero_and_huge_timeouts_do_not_panic() {
    let mut request = sh("sleep 5");
    request.timeout = Duration::ZERO;
    let report = run_default(&request);
    assert_eq!(report.error, Some(SpawnError::TimedOut));
    request = sh("echo ok");
    request.timeout = Duration::MAX;
    let report = run_default(&request);
    assert!(report.succeeded(), "{report:?}");
}

fn vm_hwm_kib() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Run alone: `cargo test -p gsd-lane --lib one_gib -- --ignored --test-threads=1`.
#[test]
#[ignore = "slow; measures process-wide peak memory, so run it alone"]
fn one_gib_of_stdout_keeps_memory_flat() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big");
    let before = vm_hwm_kib();
    let mut request = sh("head -c 1073741824 /dev/zero");
    request.stdout = StdoutSink::File(out.clone());
    request.timeout = Duration::from_secs(300);
    let report = run_default(&request);
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(fs::metadata(&out).unwrap().len(), 1 << 30);
    let growth = vm_hwm_kib().saturating_sub(before);
    assert!(growth < 32 * 1024, "peak memory grew by {growth} KiB");
}

fn open_fds() -> usize {
    fs::read_dir("/proc/self/fd").unwrap().count()
}

fn child_pids() -> String {
    let mut all = String::new();
    for task in fs::read_dir("/proc/self/task").unwrap() {
        let path = task.unwrap().path().join("children");
        all.push_str(&fs::read_to_string(path).unwrap_or_default());
    }
    all.trim().to_string()
}

/// Run alone: `cargo test -p gsd-lane --lib no_leaked -- --ignored --test-threads=1`.
#[test]
#[ignore = "counts process-wide descriptors and children, so run it alone"]
fn no_leaked_descriptors_or_zombies() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("in"), "prompt").unwrap();
    // Warm-up: tokio's process-wide signal pipe (two descriptors) is created once, on first use.
    assert!(run_default(&sh("exit 0")).succeeded());
    let fds = open_fds();
    for i in 0..100 {
        // Even rounds: a background process holds stdout, so the call times out.
        // Odd rounds: it does not, so the call ends normally and the leftover is killed.
        let holding = i % 2 == 0;
        let redirect = if holding { "" } else { ">/dev/null 2>&1" };
        let mut request = sh(&format!(
            "echo out; echo err >&2; sleep 5 {redirect} & exit 3"
        ));
        request.stdout = StdoutSink::File(dir.path().join("out"));
        request.stderr_path = Some(dir.path().join("err"));
        request.stdin = Some(dir.path().join("in"));
        request.timeout = Duration::from_millis(if holding { 50 } else { 5_000 });
        let report = run_default(&request);
        if holding {
            assert_eq!(report.error, Some(SpawnError::TimedOut));
        } else {
            assert_eq!((report.exit_code, report.error), (Some(3), None));
        }
    }
    let report = run_default(&sh("exit 0"));
    assert!(report.succeeded());
    assert_eq!(open_fds(), fds);
    assert_eq!(child_pids(), "");
}
