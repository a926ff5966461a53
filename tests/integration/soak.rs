//! Fault and soak cases: many runs in one process leak nothing; misbehaving lanes stay bounded.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gsd_lane::api::config::ProjectConfig;
use gsd_lane::api::plan::{PlanInputs, Refusal};
use gsd_lane::api::registry::{ConsentGate, LoadOptions, Registry};
use gsd_lane::api::run::lane::{run_lane, EgressCheck, Outcome, RunSetup};
use serde_json::json;

struct Nobody;
impl ConsentGate for Nobody {
    fn is_consented(&self, _: &Path, _: &str, _: &Path) -> bool {
        false
    }
}

struct AllowAll;
impl EgressCheck for AllowAll {
    fn check(&self, _: &gsd_sdk::LanePlan) -> Result<(), Refusal> {
        Ok(())
    }
}

use gsd_lane_sdk as gsd_sdk;

/// A spawn lane `slug` whose program is the shell script `body`, installed as a global overlay.
fn install_lane(home: &Path, bin: &Path, slug: &str, body: &str, timeout_ms: u64) {
    let script = bin.join(slug);
    fs::write(&script, format!("#!/bin/sh\n{body}\n")).expect("script");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("chmod");
    let folder = home.join(".gsd/capabilities").join(slug);
    fs::create_dir_all(&folder).expect("folder");
    let manifest = json!({
        "id": slug, "role": "reviewer", "version": "1.0.0", "title": slug,
        "description": "Soak lane.", "tier": "full", "requires": [],
        "reviewer": {
            "slug": slug, "flags": [format!("--{slug}")], "transport": "spawn",
            "probe": {"kind": "command-exists", "binary": slug},
            "invoke": {"binary": slug, "args": ["-"], "promptChannel": "stdin",
                       "outputChannel": "stdout", "modelArg": null, "effortChannel": "none"},
            "timeoutFloorMs": timeout_ms, "emptyOutput": "stub-with-stderr",
            "reviewsSection": format!("Soak {slug}"), "evidenceClass": "source-grounded",
            "requiresBinaries": [], "promptBudgetKey": null, "handler": null
        }
    });
    fs::write(folder.join("capability.json"), manifest.to_string()).expect("manifest");
}

struct Bench {
    _root: tempfile::TempDir,
    home: PathBuf,
    bin: PathBuf,
    run: PathBuf,
}

impl Bench {
    fn new() -> Bench {
        let root = tempfile::tempdir().expect("tempdir");
        let home = root.path().join("home");
        let bin = root.path().join("bin");
        let run = root.path().join("run");
        for dir in [&home, &bin, &run] {
            fs::create_dir_all(dir).expect("dir");
        }
        Bench {
            _root: root,
            home,
            bin,
            run,
        }
    }

    fn registry(&self) -> Registry {
        Registry::load(&LoadOptions {
            host_version: "1.12.0".into(),
            global_dir: Some(self.home.join(".gsd/capabilities")),
            project_root: None,
            consent: &Nobody,
        })
    }

    fn run(&self, registry: &Registry, slug: &str) -> Outcome {
        let config = ProjectConfig::empty();
        let path = format!("{}:/usr/bin:/bin", self.bin.display());
        let setup = RunSetup {
            config: &config,
            inputs: PlanInputs {
                run_dir: self.run.display().to_string(),
                repo_root: "/repo".into(),
                ..PlanInputs::default()
            },
            path_var: Some(path.into()),
            home: Some(self.home.clone()),
            lock_dir: self.home.join("locks"),
            egress: &AllowAll,
            handler_override: None,
            sandbox: gsd_lane::api::sandbox::SandboxMode::default(),
            view_proof: gsd_lane::api::sandbox::ViewProof::Probed,
        };
        let lane = registry.lane(slug).expect("lane registered");
        run_lane(lane, &setup).expect("run")
    }
}

fn open_fds() -> usize {
    fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(0)
}

fn live_children() -> Vec<String> {
    let mut children = Vec::new();
    for task in fs::read_dir("/proc/self/task").expect("tasks").flatten() {
        let text = fs::read_to_string(task.path().join("children")).unwrap_or_default();
        children.extend(text.split_whitespace().map(str::to_owned));
    }
    children
}

/// Runs the soak in a fresh process of this test binary, alone, so that other tests' pipes
/// and children do not disturb the counts.
#[test]
fn thousand_runs_leak_no_descriptors_children_or_files() {
    let exe = std::env::current_exe().expect("test binary");
    let output = Command::new(exe)
        .args([
            "--exact",
            "soak::soak_worker",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .output()
        .expect("re-run the test binary");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "soak worker failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
#[ignore = "run by thousand_runs_leak_no_descriptors_children_or_files in its own process"]
fn soak_worker() {
    let bench = Bench::new();
    install_lane(
        &bench.home,
        &bench.bin,
        "quick",
        "cat >/dev/null; echo ok; echo note >&2",
        10_000,
    );
    let registry = bench.registry();
    // Warm up once so lazily opened descriptors (runtime, allocator) are counted as baseline.
    assert!(matches!(
        bench.run(&registry, "quick"),
        Outcome::Completed(_)
    ));
    let fds_before = open_fds();
    for round in 0..1_000 {
        match bench.run(&registry, "quick") {
            Outcome::Completed(done) => assert!(!done.stubbed, "round {round} stubbed"),
            Outcome::Unavailable(refusal) => panic!("round {round}: {refusal}"),
        }
    }
    assert_eq!(open_fds(), fds_before, "file descriptors leaked");
    assert!(
        live_children().is_empty(),
        "children left: {:?}",
        live_children()
    );
    let mut files: Vec<String> = fs::read_dir(&bench.run)
        .expect("run dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["gsd-review-quick.err", "gsd-review-quick.md"]);
}

fn timed_run(bench: &Bench, slug: &str) -> (Duration, Box<gsd_lane::api::run::lane::Completion>) {
    let registry = bench.registry();
    let start = Instant::now();
    match bench.run(&registry, slug) {
        Outcome::Completed(done) => (start.elapsed(), done),
        Outcome::Unavailable(refusal) => panic!("{slug}: {refusal}"),
    }
}

#[test]
fn lane_closing_stdout_early_and_running_on_is_killed_at_its_bound() {
    let bench = Bench::new();
    install_lane(
        &bench.home,
        &bench.bin,
        "closer",
        "echo partial; exec >&-; sleep 30",
        1_000,
    );
    let (elapsed, done) = timed_run(&bench, "closer");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert_eq!(done.spawn_error.as_deref(), Some("ETIMEDOUT"));
    let sidecar = fs::read_to_string(bench.run.join("gsd-review-closer.err")).expect("sidecar");
    assert!(
        sidecar.ends_with("[spawn error: ETIMEDOUT]\n"),
        "{sidecar:?}"
    );
}

#[test]
fn endless_stderr_is_capped_and_the_lane_stopped() {
    let bench = Bench::new();
    install_lane(
        &bench.home,
        &bench.bin,
        "shouty",
        "yes 0123456789abcdef0123456789abcdef >&2",
        60_000,
    );
    let (elapsed, done) = timed_run(&bench, "shouty");
    assert!(elapsed < Duration::from_secs(50), "took {elapsed:?}");
    assert_eq!(done.spawn_error.as_deref(), Some("ENOBUFS"));
    let size = fs::metadata(bench.run.join("gsd-review-shouty.err"))
        .expect("sidecar")
        .len();
    assert!(
        size <= 64 * 1024 * 1024 + 64,
        "sidecar grew to {size} bytes"
    );
    assert!(done.stubbed, "no stdout means a stub");
}

#[test]
fn daemon_escaping_the_process_group_cannot_hang_the_run() {
    // Documented limit: a process that leaves the lane's process group (setsid) is not killed
    // with the tree, but it cannot hold the run past its bound plus a short grace.
    let bench = Bench::new();
    let pid_file = bench.run.join("daemon.pid");
    let body = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 20' & echo started",
        pid_file.display()
    );
    install_lane(&bench.home, &bench.bin, "forker", &body, 1_000);
    let (elapsed, _) = timed_run(&bench, "forker");
    assert!(elapsed < Duration::from_secs(8), "took {elapsed:?}");
    if let Ok(pid) = fs::read_to_string(&pid_file) {
        let _ = Command::new("kill").arg("-9").arg(pid.trim()).status();
    }
}

/// Copies a directory tree.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A complete REVIEWS.md: frontmatter, a lane section and the consensus skeleton.
fn is_complete_reviews(text: &str) -> bool {
    text.starts_with("---\n")
        && text.contains("## Plan Stats Review")
        && text.contains("## Consensus Summary")
}

#[test]
fn reviews_md_survives_sigkill_at_any_point() {
    let root = tempfile::tempdir().expect("tempdir");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let home = root.path().join("home");
    let lane = home.join(".gsd/capabilities/plan-stats");
    copy_tree(&examples.join("lanes/plan-stats"), &lane);
    let project = root.path().join("project");
    copy_tree(&examples.join("sample-project"), &project);
    fs::create_dir_all(project.join(".git")).expect("git");
    let path = format!("{}:/usr/bin:/bin", lane.join("bin").display());
    let review = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_gsd-lane"));
        command
            .args(["review", "--phase", "3", "--plan-stats"])
            .current_dir(&project)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", &home)
            .env("GSD_HOME", &home)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        command
    };
    let status = review().status().expect("first review");
    assert!(status.success(), "first review failed: {status:?}");
    let reviews = project.join(".planning/phases/03-invoices/03-REVIEWS.md");
    assert!(is_complete_reviews(
        &fs::read_to_string(&reviews).expect("REVIEWS.md")
    ));
    // Kill later reviews at spread-out points; the file is always a whole REVIEWS.md.
    for round in 0..24_u64 {
        let mut child = review().spawn().expect("spawn review");
        std::thread::sleep(Duration::from_millis((round * 7) % 60));
        let _ = child.kill();
        let _ = child.wait();
        let text = fs::read_to_string(&reviews).expect("REVIEWS.md still there");
        assert!(
            is_complete_reviews(&text),
            "round {round}: torn REVIEWS.md:\n{text}"
        );
        let stray: Vec<String> = fs::read_dir(reviews.parent().expect("phase dir"))
            .expect("phase dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains("REVIEWS") && name != "03-REVIEWS.md")
            .collect();
        assert!(
            stray.len() <= 1,
            "round {round}: temp files pile up: {stray:?}"
        );
    }
}
