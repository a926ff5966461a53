//! Registry load + validation: 12 first-party lanes, then 1,000 and 10,000 generated
//! global overlays. A plain `cargo bench` harness: median and spread of repeated runs.

#![allow(clippy::expect_used, missing_docs)]

use std::path::Path;
use std::time::{Duration, Instant};

use gsd_lane::api::registry::{ConsentGate, LoadOptions, Registry};

struct NoConsent;
impl ConsentGate for NoConsent {
    fn is_consented(&self, _: &Path, _: &str, _: &Path) -> bool {
        false
    }
}

fn overlay(id: usize) -> String {
    format!(
        r#"{{"id":"lane-{id}","role":"reviewer","version":"1.0.0","title":"Lane {id}","description":"Generated lane.","tier":"full","requires":[],"engines":{{"gsd":">=1.9.0"}},
"reviewer":{{"slug":"lane-{id}","flags":["--lane-{id}"],"transport":"spawn","probe":{{"kind":"command-exists","binary":"lane{id}"}},
"invoke":{{"binary":"lane{id}","args":["review","{{{{model}}}}","-p","-"],"promptChannel":"stdin","outputChannel":"stdout","modelArg":"--model","effortChannel":"none"}},
"timeoutFloorMs":900000,"emptyOutput":"stub-with-stderr","reviewsSection":"Lane {id}","evidenceClass":"source-grounded","requiresBinaries":[],"promptBudgetKey":null,"modelConfigKey":"review.models.lane-{id}","handler":null}},
"config":{{"review.models.lane-{id}":{{"type":"string","default":"","description":"Model."}}}}}}"#
    )
}

fn measure(label: &str, runs: usize, mut work: impl FnMut() -> usize) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let lanes = work();
            assert!(lanes >= 12, "registry lost lanes");
            start.elapsed()
        })
        .collect();
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "{label:<40} median {:>10.3} ms   min {:>10.3} ms   max {:>10.3} ms   ({runs} runs)",
        median.as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3
    );
}

fn main() {
    measure("first-party (12 lanes)", 50, || {
        Registry::first_party().lanes.len()
    });
    for count in [1_000_usize, 10_000] {
        let dir = tempfile::tempdir().expect("tempdir");
        let caps = dir.path().join(".gsd/capabilities");
        for id in 0..count {
            let folder = caps.join(format!("lane-{id}"));
            std::fs::create_dir_all(&folder).expect("folder");
            std::fs::write(folder.join("capability.json"), overlay(id)).expect("write");
        }
        let runs = if count > 1_000 { 3 } else { 10 };
        measure(&format!("12 + {count} global overlays"), runs, || {
            let registry = Registry::load(&LoadOptions {
                host_version: "1.10.0".into(),
                global_dir: Some(caps.clone()),
                project_root: None,
                consent: &NoConsent,
            });
            assert_eq!(registry.lanes.len(), 12 + count);
            registry.lanes.len()
        });
    }
}
