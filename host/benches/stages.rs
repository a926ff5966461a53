//! In-process stages: plan resolution of the 12 first-party lanes, the disclosure signature of
//! each, and the per-run egress check of an HTTP lane (empty store, then with its first-use pin).
//! A plain `cargo bench` harness printing median and spread.

#![allow(clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use gsd_lane::api::config::ProjectConfig;
use gsd_lane::api::plan::{self, PlanInputs};
use gsd_lane::api::project::HostEnv;
use gsd_lane::api::registry::Registry;

fn measure(label: &str, runs: usize, mut work: impl FnMut()) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "{label:<52} median {:>9.1} µs   min {:>9.1} µs   max {:>9.1} µs   ({runs} runs)",
        times[times.len() / 2].as_secs_f64() * 1e6,
        times[0].as_secs_f64() * 1e6,
        times[times.len() - 1].as_secs_f64() * 1e6
    );
}

fn main() {
    let registry = Registry::first_party();
    let config = ProjectConfig::empty();
    let inputs = PlanInputs {
        run_dir: "/run".into(),
        repo_root: "/repo".into(),
        ..PlanInputs::default()
    };
    measure("plan resolution, 12 first-party lanes", 200, || {
        for lane in &registry.lanes {
            black_box(plan::resolve_lane(&lane.capability_id, lane, &config, &inputs).is_ok());
        }
    });
    measure(
        "disclosure signature, 12 first-party manifests",
        200,
        || {
            for lane in &registry.lanes {
                black_box(gsd_lane::api::trust::signature::signature_for_manifest(
                    lane.manifest(),
                ));
            }
        },
    );
    let home = tempfile::tempdir().expect("home");
    let env = HostEnv {
        cwd: home.path().to_path_buf(),
        home: Some(home.path().to_path_buf()),
        gsd_home: Some(home.path().to_path_buf()),
        ..HostEnv::default()
    };
    let ollama = registry.lane("ollama").expect("ollama");
    let plan = plan::resolve_lane(&ollama.capability_id, ollama, &config, &inputs).expect("plan");
    let check = gsd_lane::api::trust::egress_check(&env, home.path());
    // The first check pins the host (one store write); later checks compare against the pin.
    let first = Instant::now();
    check.check(&plan).expect("first use is allowed");
    println!(
        "{:<52} {:>9.1} µs   (one run)",
        "egress check, first use (writes the pin)",
        first.elapsed().as_secs_f64() * 1e6
    );
    measure("egress check per run (pinned host)", 200, || {
        check.check(&plan).expect("pinned host allowed");
    });
}
