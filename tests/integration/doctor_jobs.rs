//! `doctor` probes lanes in parallel (issue 25 item 4): at most `--jobs` programs answer
//! `--version` at once (default: `review`'s bound), and the report keeps the order the lanes
//! were named in, whatever order the probes finish in.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{self, Scope, TestEnv};

const SLUGS: [&str; 4] = ["p0", "p1", "p2", "p3"];

/// Lane `slug` whose program, asked `--version`, marks itself started in `marks`, counts the
/// programs running beside it (in `running`), waits (up to 1.5 s) until all four have started,
/// and answers `together` when they all did, else `alone`, with the most it saw running.
fn install(env: &TestEnv, bin: &Path, slug: &str) {
    let (marks, running) = (
        env.root.path().join("marks"),
        env.root.path().join("running"),
    );
    let script = format!(
        r#"#!/bin/sh
[ "$1" = --version ] || {{ cat >/dev/null; echo ok; exit 0; }}
touch '{running}/{slug}' '{marks}/{slug}'
most=$(ls '{running}' | wc -l)
n=0
while [ "$(ls '{marks}' | wc -l)" -lt 4 ] && [ $n -lt 15 ]; do
  sleep 0.1; n=$((n+1))
  now=$(ls '{running}' | wc -l); [ "$now" -gt "$most" ] && most=$now
done
sleep 0.3
now=$(ls '{running}' | wc -l); [ "$now" -gt "$most" ] && most=$now
rm -f '{running}/{slug}'
if [ "$(ls '{marks}' | wc -l)" -ge 4 ]; then echo "together $most"; else echo "alone $most"; fi
"#,
        running = running.display(),
        marks = marks.display(),
    );
    for dir in [&marks, &running] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    let path = bin.join(slug);
    std::fs::write(&path, script).expect("program");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut lane = util::acme_as(&format!("{slug}-review"));
    lane["reviewer"]["slug"] = json!(slug);
    lane["reviewer"]["flags"] = json!([format!("--{slug}")]);
    lane["reviewer"]["probe"]["binary"] = json!(slug);
    lane["reviewer"]["invoke"]["binary"] = json!(slug);
    lane["reviewer"]["modelConfigKey"] = json!(null);
    lane["reviewer"]["reviewsSection"] = json!(slug.to_uppercase());
    lane["config"] = json!({});
    env.write_overlay(Scope::Global, &format!("{slug}-review"), &lane);
}

fn doctor(env: &TestEnv, bin: &Path, jobs: &str) -> Vec<Value> {
    std::fs::remove_dir_all(env.root.path().join("marks")).expect("reset");
    std::fs::create_dir_all(env.root.path().join("marks")).expect("mkdir");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let mut args = vec!["doctor", "--json", "--jobs", jobs];
    // Named out of order: the report keeps this order.
    args.extend(["p2", "p0", "p3", "p1"]);
    let command = util::gsd_command(env, &path, &env.project, &args);
    let (out, _) = util::run_bounded(command, Duration::from_secs(90));
    out.assert_no_panic().assert_status(0);
    out.json_raw().as_array().expect("rows").clone()
}

#[test]
fn doctor_probes_at_most_jobs_at_once_and_keeps_the_named_order() {
    let env = TestEnv::new();
    let bin = env.root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    for slug in SLUGS {
        install(&env, &bin, slug);
    }
    let versions = |rows: &[Value]| -> Vec<(String, String)> {
        rows.iter()
            .map(|row| {
                (
                    row["slug"].as_str().unwrap_or_default().to_owned(),
                    row["program"]["version"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                )
            })
            .collect()
    };
    // Four at once: every program saw the other three start.
    let rows = doctor(&env, &bin, "4");
    let found = versions(&rows);
    let slugs: Vec<&str> = found.iter().map(|(slug, _)| slug.as_str()).collect();
    assert_eq!(slugs, ["p2", "p0", "p3", "p1"], "the named order");
    for (slug, version) in &found {
        assert!(version.starts_with("together "), "{slug}: {version}");
    }
    // Two at once: no program ever saw more than two running (the first two wait for the
    // others in vain, until their bound).
    for (slug, version) in versions(&doctor(&env, &bin, "2")) {
        let most: u32 = version
            .split(' ')
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{slug}: {version}"));
        assert!((1..=2).contains(&most), "{slug}: {version}");
    }
}

/// A `--version` that does not answer within its bound (as under heavy load with many probes
/// at once) is said, in the row and the report, never shown as a program without a version.
#[test]
fn a_version_query_past_its_bound_is_said() {
    let env = TestEnv::new();
    let bin = env.root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    install(&env, &bin, "p0");
    std::fs::write(bin.join("p0"), "#!/bin/sh\nexec sleep 30\n").expect("program");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let run = |args: &[&str]| {
        let command = util::gsd_command(&env, &path, &env.project, args);
        let (out, took) = util::run_bounded(command, Duration::from_secs(60));
        out.assert_no_panic().assert_status(0);
        assert!(took < Duration::from_secs(25), "bounded: {took:?}");
        out
    };
    let rows = run(&["doctor", "p0", "--json"]).json_raw();
    let program = &rows[0]["program"];
    assert_eq!(program["version"], Value::Null, "{program}");
    assert_eq!(program["version_error"], "ETIMEDOUT", "{program}");
    let text = run(&["doctor", "p0"]);
    assert!(
        text.stdout.contains(" (--version failed: ETIMEDOUT)\n"),
        "{}",
        text.stdout
    );
}
