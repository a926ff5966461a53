//! The lane watchdog (`host/src/sandbox/watchdog/`): one per gsd-lane process, shared by every
//! lane, and what it kills when gsd-lane is gone. The SIGKILL tests of whole runs are in
//! `sandbox.rs`; here the watchdog is also driven directly through its protocol, to reach the
//! moment no run can be stopped at on purpose (a lane started, not yet registered).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crate::sandbox::{is_dead, review_command, review_lab};
use crate::util;

/// Bound on anything the tests wait for (a hang fails instead of blocking the suite).
const BOUND: Duration = Duration::from_secs(30);

/// The variable every lane gets, naming its watchdog.
const MARKER: &str = "GSD_LANE_WATCHDOG";

#[test]
fn one_watchdog_serves_every_lane_of_a_review() {
    // Each lane records the token it was given; the last one then waits (bounded) until the
    // test has counted the watchdogs alive, which each live until gsd-lane ends.
    let record = format!("echo \"${MARKER}\" > \"$HOME/pids/$name\"");
    let body = [
        "name=$(basename \"$0\")",
        record.as_str(),
        "if [ \"$name\" = fake-three ]; then",
        "  i=0",
        "  while [ ! -e \"$HOME/go\" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done",
        "fi",
        "cat > /dev/null",
        "echo '# Review'",
        "echo fine",
        "",
    ]
    .join("\n");
    let scripts = [
        ("one", body.as_str()),
        ("two", body.as_str()),
        ("three", body.as_str()),
    ];
    let (env, bin) = review_lab(&scripts);
    let pids = env.home.join("pids");
    let mut review = review_command(
        &env,
        &bin,
        &["--phase", "3", "--one", "--two", "--three", "--jobs", "1"],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn review");
    let until = Instant::now() + BOUND;
    let token = loop {
        // The shell creates the file before it writes the line: wait for the line.
        if let Ok(token) = std::fs::read_to_string(pids.join("fake-three")) {
            if token.ends_with('\n') {
                break token.trim().to_owned();
            }
        }
        assert!(Instant::now() < until, "the third lane did not start");
        std::thread::sleep(Duration::from_millis(10));
    };
    let watchdogs = watchdogs_with(&token);
    std::fs::write(env.home.join("go"), "").expect("go");
    let until = Instant::now() + BOUND;
    while review.try_wait().expect("wait").is_none() {
        assert!(Instant::now() < until, "the review did not end");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!token.is_empty());
    for slug in ["one", "two"] {
        let seen = std::fs::read_to_string(pids.join(format!("fake-{slug}"))).expect("token");
        assert_eq!(seen.trim(), token, "{slug}");
    }
    assert_eq!(watchdogs, 1, "watchdogs alive while the third lane ran");
}

/// How many watchdogs serve the gsd-lane whose lanes got `token` (`<gsd-lane pid>-<random>`):
/// processes running `gsd-lane __lane-watchdog <token>`, and forked ones (`gsd-watchdog`) whose
/// parent is that gsd-lane.
fn watchdogs_with(token: &str) -> usize {
    let wanted = format!("__lane-watchdog\0{token}\0");
    let gsd_lane: Option<u32> = token.split('-').next().and_then(|pid| pid.parse().ok());
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let executed = std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                cmdline
                    .windows(wanted.len())
                    .any(|window| window == wanted.as_bytes())
            });
            executed || (util::is_watchdog(*pid) && util::parent_of(*pid) == gsd_lane)
        })
        .count()
}

/// The token the tests' watchdogs are started with.
const TOKEN: &str = "4242-00c0ffee00c0ffee";

/// `gsd-lane __lane-watchdog <TOKEN>`, as gsd-lane starts it.
fn start_watchdog() -> (Child, ChildStdin) {
    let mut watchdog = Command::new(util::bin())
        .args(["__lane-watchdog", TOKEN])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start the watchdog");
    let input = watchdog.stdin.take().expect("its input");
    (watchdog, input)
}

/// A `sleep 300` leading a process group of its own, with `env` set.
fn sleeper(env: &[(&str, String)]) -> Child {
    sleeper_in(env, 0)
}

/// A `sleep 300` in process group `group` (0: a new one it leads), with `env` set.
fn sleeper_in(env: &[(&str, String)], group: i32) -> Child {
    Command::new("sleep")
        .arg("300")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .process_group(group)
        .spawn()
        .expect("start sleep")
}

/// Closes the watchdog's input (what gsd-lane's end does) and waits, bounded, for it to end.
fn end_of_gsd_lane(mut watchdog: Child, input: ChildStdin) {
    drop(input);
    let until = Instant::now() + BOUND;
    while watchdog.try_wait().expect("wait").is_none() {
        assert!(Instant::now() < until, "the watchdog did not end");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits, bounded, for `child` to end by itself (someone killed it) and reaps it; true when it
/// did, after killing it.
fn was_killed(mut child: Child) -> bool {
    let until = Instant::now() + BOUND;
    while Instant::now() < until {
        if child.try_wait().expect("wait").is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// Asserts that `child` still runs, then kills and reaps it.
fn assert_alive_then_kill(mut child: Child, what: &str) {
    assert!(
        child.try_wait().expect("wait").is_none(),
        "{what} was killed"
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_lane_started_but_not_yet_registered_dies_with_gsd_lane() {
    let (watchdog, mut input) = start_watchdog();
    input.write_all(b"s\n").expect("announce");
    let lane = sleeper(&[(MARKER, TOKEN.to_owned())]);
    // Same shape, but a lane of another gsd-lane (another token): it must be left alone.
    let stranger = sleeper(&[(MARKER, "4242-00c0ffee00c0ffef".to_owned())]);
    end_of_gsd_lane(watchdog, input);
    assert!(was_killed(lane), "the announced lane outlived gsd-lane");
    // The watchdog has ended: whatever it was going to kill is killed by now.
    assert_alive_then_kill(stranger, "a process of no lane");
}

#[test]
fn a_marked_process_in_a_group_it_does_not_lead_takes_only_itself() {
    let (watchdog, mut input) = start_watchdog();
    input.write_all(b"s\n").expect("announce");
    // A bystander leading its group, and a marked process that joined that group.
    let bystander = sleeper(&[]);
    let group = i32::try_from(bystander.id()).expect("pid");
    let marked = sleeper_in(&[(MARKER, TOKEN.to_owned())], group);
    end_of_gsd_lane(watchdog, input);
    assert!(was_killed(marked), "the marked process outlived gsd-lane");
    assert_alive_then_kill(bystander, "the leader of the group a marked process joined");
}

#[test]
fn registered_groups_die_with_gsd_lane_and_forgotten_ones_are_left_alone() {
    let (watchdog, mut input) = start_watchdog();
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("grandchild");
    let lane = Command::new("sh")
        .arg("-c")
        .arg("sleep 300 & echo $! > \"$1\"; wait")
        .arg("sh")
        .arg(&pid_file)
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start the lane");
    let finished = sleeper(&[]);
    for line in [
        "s".to_owned(),
        format!("+{}", lane.id()),
        "s".to_owned(),
        format!("+{}", finished.id()),
        format!("-{}", finished.id()),
    ] {
        input
            .write_all(format!("{line}\n").as_bytes())
            .expect("tell");
    }
    let until = Instant::now() + BOUND;
    let grandchild: u32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            Instant::now() < until,
            "the lane did not start its grandchild"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    end_of_gsd_lane(watchdog, input);
    assert!(was_killed(lane), "a registered lane outlived gsd-lane");
    let until = Instant::now() + BOUND;
    while !is_dead(grandchild) {
        assert!(
            Instant::now() < until,
            "the lane's grandchild outlived gsd-lane"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_alive_then_kill(finished, "a forgotten group");
}

#[test]
fn review_and_run_fork_their_watchdog_which_still_ends_the_lanes() {
    // A lane that says it started, then sleeps until it is killed.
    let scripts = [("one", "echo $$ > \"$HOME/pids/one\"\nexec sleep 300\n")];
    for command in ["review", "run"] {
        let (env, bin) = review_lab(&scripts);
        let pids = env.home.join("pids");
        let mut gsd_lane = if command == "review" {
            review_command(&env, &bin, &["--phase", "3", "--one"])
        } else {
            let path = format!("{}:/usr/bin:/bin", bin.display());
            let run_dir = env.home.join("run").display().to_string();
            let prompt = env.home.join("prompt.md");
            std::fs::write(&prompt, "# Plan\n").expect("prompt");
            let prompt = prompt.display().to_string();
            util::gsd_command(
                &env,
                &path,
                &env.project,
                &[
                    "run",
                    "one",
                    "--run-dir",
                    &run_dir,
                    "--prompt-file",
                    &prompt,
                ],
            )
        }
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gsd-lane");
        let until = Instant::now() + BOUND;
        while !pids.join("one").is_file() {
            assert!(Instant::now() < until, "{command}: the lane did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        let watchdogs: Vec<u32> = util::processes_with_home(&env.home)
            .into_iter()
            .filter(|pid| util::is_watchdog(*pid))
            .collect();
        assert_eq!(watchdogs.len(), 1, "{command}: {watchdogs:?}");
        let watchdog = watchdogs[0];
        // Forked (named, a child of gsd-lane), not gsd-lane executed a second time.
        let comm = std::fs::read_to_string(format!("/proc/{watchdog}/comm")).unwrap_or_default();
        assert_eq!(comm.trim_end(), "gsd-watchdog", "{command}");
        assert_eq!(util::parent_of(watchdog), Some(gsd_lane.id()), "{command}");
        // In a process group of its own, so a Ctrl-C at the terminal does not reach it.
        let group = std::fs::read_to_string(format!("/proc/{watchdog}/stat"))
            .ok()
            .and_then(|stat| {
                let rest = stat.rsplit_once(')')?.1.to_owned();
                rest.split_whitespace().nth(2)?.parse::<u32>().ok()
            });
        assert_eq!(group, Some(watchdog), "{command}");
        // It holds nothing of gsd-lane's but its input (descriptor 0) and /dev/null on 1 and 2
        // (only root can list a non-dumpable process's descriptors).
        if rustix::process::geteuid().is_root() {
            let mut fds: Vec<String> = std::fs::read_dir(format!("/proc/{watchdog}/fd"))
                .map(|dir| {
                    dir.flatten()
                        .map(|entry| entry.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            fds.sort();
            assert_eq!(fds, ["0", "1", "2"], "{command}");
        }
        gsd_lane.kill().expect("SIGKILL gsd-lane");
        let _ = gsd_lane.wait();
        let alive = util::processes_left_with_home(&env.home, Duration::from_secs(10));
        assert!(
            alive.is_empty(),
            "{command}: processes outlived gsd-lane: {alive:?}"
        );
    }
}
