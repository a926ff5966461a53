//! The read-only view (issue 25 item 1) under attack: a lane confined by `enforce` on a machine
//! that allows user namespaces runs with the repository bind-mounted read-only in namespaces of
//! its own. A hostile lane tries what Landlock cannot refuse (modes, times), the ways back to a
//! writable view (`/proc/<pid>/root`, a remount, a namespace of its own), and outliving the run;
//! a CLI's first run creates its state directly in `$HOME` with the repository under it.
//!
//! Where this machine refuses user namespaces the tests say so on stderr and check the fallback
//! instead: they never pass for something they did not observe.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::util::{self, Scope, TestEnv};

const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether this machine allows the namespaces the view needs (the same ones, through util-linux).
pub(crate) fn view_available() -> bool {
    Command::new("unshare")
        .args([
            "--user",
            "--mount",
            "--pid",
            "--fork",
            "--map-current-user",
            "true",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// A project under `$HOME/code/proj` (the common layout), a run dir and a bin dir outside it.
struct Lab {
    env: TestEnv,
    repo: PathBuf,
    run_dir: PathBuf,
    bin: PathBuf,
}

impl Lab {
    fn new() -> Lab {
        let env = TestEnv::new();
        let repo = env.home.join("code/proj");
        std::fs::create_dir_all(repo.join(".git/hooks")).expect("repo");
        std::fs::create_dir_all(repo.join(".planning")).expect("planning");
        std::fs::write(repo.join("tracked.txt"), "tracked\n").expect("write");
        let run_dir = env.root.path().join("run");
        let bin = env.root.path().join("bin");
        for dir in [&run_dir, &bin] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
        Lab {
            env,
            repo,
            run_dir,
            bin,
        }
    }

    /// Installs lane `acme` whose CLI is the sh `script`.
    fn install(&self, script: &str) {
        let path = self.bin.join("acme");
        std::fs::write(&path, script).expect("write script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let mut lane = util::acme();
        lane["reviewer"]["invoke"]["args"] = json!(["-"]);
        self.env.write_overlay(Scope::Global, "acme-review", &lane);
    }

    /// `gsd-lane run acme` (human output) from inside the repository.
    fn run(&self) -> util::Outcome {
        let path = format!("{}:/usr/bin:/bin:/usr/sbin:/sbin", self.bin.display());
        let run_dir = self.run_dir.display().to_string();
        let command = util::gsd_command(
            &self.env,
            &path,
            &self.repo,
            &["run", "acme", "--run-dir", &run_dir],
        );
        let (out, _) = util::run_bounded(command, COMMAND_TIMEOUT);
        out.assert_no_panic().assert_status(0);
        out
    }

    /// The attempt log: name → `changed` or `refused`.
    fn attempts(&self) -> Vec<(String, String)> {
        util::read_text(&self.env.home.join("attempts.log"))
            .lines()
            .filter_map(|line| {
                let (verdict, name) = line.split_once(' ')?;
                Some((name.to_owned(), verdict.to_owned()))
            })
            .collect()
    }
}

/// The hostile CLI: every attempt logged as `changed <name>` or `refused <name>` under `$HOME`.
fn attacker(repo: &Path) -> String {
    let repo = repo.display();
    format!(
        r##"#!/bin/sh
R='{repo}'
log="$HOME/attempts.log"
: > "$log"
try() {{ name=$1; shift; if "$@" >/dev/null 2>&1; then echo "changed $name" >> "$log"; else echo "refused $name" >> "$log"; fi; }}
try chmod chmod 600 "$R/tracked.txt"
try utime touch -m -d 2001-01-01 "$R/tracked.txt"
try hook sh -c "echo evil > '$R/.git/hooks/pre-commit'"
try remount sh -c "mount -o remount,bind,rw '$R' && echo x > '$R/via-remount.txt'"
try umount sh -c "umount -l '$R' && echo x > '$R/via-umount.txt'"
try own-namespace-remount unshare --user --map-root-user --mount sh -c "mount -o remount,bind,rw '$R' && echo x > '$R/via-userns.txt'"
try own-namespace-umount unshare --user --map-root-user --mount sh -c "umount -l '$R' && echo x > '$R/via-userns-umount.txt'"
for p in /proc/[0-9]*; do
  try "proc-root-${{p#/proc/}}" sh -c "echo x > '$p/root$R/via-proc.txt'"
done
try pid-one test "$$" = 1
try home-state mkdir "$HOME/.first-run-state"
cat > /dev/null
echo "# Review"
echo "All attempts logged."
"##
    )
}

#[test]
fn the_view_refuses_metadata_proc_and_remount_escapes_and_lets_home_state_be_made() {
    let lab = Lab::new();
    lab.install(&attacker(&lab.repo));
    let mode = std::fs::metadata(lab.repo.join("tracked.txt"))
        .expect("stat")
        .permissions()
        .mode();
    let out = lab.run();
    let attempts = lab.attempts();
    let verdict = |name: &str| {
        attempts
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("attempt {name} missing: {attempts:?}"))
    };
    if !view_available() {
        eprintln!("view: user namespaces are refused here; checking the Landlock fallback only");
        assert!(
            out.stdout.contains("sandbox   enforce (Landlock"),
            "{}",
            out.stdout
        );
        assert_eq!(verdict("hook"), "refused");
        return;
    }
    assert!(
        out.stdout
            .contains("sandbox   enforce (read-only mount in the lane's own namespaces)"),
        "{}",
        out.stdout
    );
    for name in [
        "chmod",
        "utime",
        "hook",
        "remount",
        "umount",
        "own-namespace-remount",
        "own-namespace-umount",
    ] {
        assert_eq!(verdict(name), "refused", "attempt {name}: {attempts:?}");
    }
    let proc_roots: Vec<&(String, String)> = attempts
        .iter()
        .filter(|(name, _)| name.starts_with("proc-root-"))
        .collect();
    assert!(!proc_roots.is_empty(), "{attempts:?}");
    for (name, verdict) in &proc_roots {
        assert_eq!(verdict, "refused", "attempt {name}: {attempts:?}");
    }
    assert_eq!(
        verdict("pid-one"),
        "changed",
        "the lane is PID 1 of its namespace"
    );
    assert_eq!(
        verdict("home-state"),
        "changed",
        "a first run's state directly in $HOME"
    );
    assert!(lab.env.home.join(".first-run-state").is_dir());
    let after = std::fs::metadata(lab.repo.join("tracked.txt")).expect("stat");
    assert_eq!(after.permissions().mode(), mode);
    for planted in [
        ".git/hooks/pre-commit",
        "via-userns.txt",
        "via-umount.txt",
        "via-proc.txt",
    ] {
        assert!(!lab.repo.join(planted).exists(), "{planted} was written");
    }
}

#[test]
fn a_daemon_that_leaves_the_lane_s_group_dies_with_the_lane_under_the_view() {
    if !view_available() {
        eprintln!("view: user namespaces are refused here; nothing to check");
        return;
    }
    let lab = Lab::new();
    // A daemon in a session of its own (out of the lane's process group), then the lane ends.
    lab.install(
        "#!/bin/sh\nsetsid sh -c 'echo up > \"$HOME/daemon.up\"; exec sleep 300' < /dev/null > /dev/null 2>&1 &\n\
         while [ ! -s \"$HOME/daemon.up\" ]; do sleep 0.05; done\ncat > /dev/null\necho '# Review'\n",
    );
    lab.run();
    assert!(
        lab.env.home.join("daemon.up").is_file(),
        "the daemon started"
    );
    let left = util::processes_left_with_home(&lab.env.home, Duration::from_secs(5));
    assert!(left.is_empty(), "the daemon outlived its lane: {left:?}");
}

/// `invoke` runs in the repository (its run dir is `.`): a repository that ships the lane's own
/// review file as a symbolic link to its pre-commit hook must not get the hook made writable.
#[test]
fn a_lane_file_planted_as_a_link_never_makes_its_target_writable() {
    let lab = Lab::new();
    std::fs::write(
        lab.repo.join(".git/hooks/pre-commit"),
        "#!/bin/sh\nexit 0\n",
    )
    .expect("hook");
    std::os::unix::fs::symlink(".git/hooks/pre-commit", lab.repo.join("gsd-review-acme.md"))
        .expect("link");
    std::fs::write(lab.repo.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
    lab.install(&format!(
        "#!/bin/sh\ncat > /dev/null\necho evil > '{}/.git/hooks/pre-commit' 2>/dev/null\necho '# Review'\n",
        lab.repo.display()
    ));
    let path = format!("{}:/usr/bin:/bin", lab.bin.display());
    let command = util::gsd_command(&lab.env, &path, &lab.repo, &["invoke", "--slug", "acme"]);
    let (out, _) = util::run_bounded(command, COMMAND_TIMEOUT);
    out.assert_no_panic();
    assert_eq!(
        util::read_text(&lab.repo.join(".git/hooks/pre-commit")),
        "#!/bin/sh\nexit 0\n",
        "the hook was written: {}\n{}",
        out.stdout,
        out.stderr
    );
}

#[test]
fn where_the_kernel_refuses_namespaces_run_falls_back_to_landlock_and_the_lane_runs_once() {
    // `run` leaves the view's proof to the lane's own spawn; here the kernel refuses the
    // namespaces (a user namespace of the test's own whose limit of nested ones is 0), so that
    // spawn fails, the probe refuses the view, and the lane is decided again: Landlock, with
    // detection walking the repository before the lane. The lane must start exactly once.
    let refusing = Command::new("unshare")
        .args(["--user", "--map-root-user", "sh", "-c"])
        .arg("echo 0 > /proc/sys/user/max_user_namespaces && ! unshare --user true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !refusing {
        eprintln!("view: cannot make a namespace refuse nested user namespaces here; skipped");
        return;
    }
    let lab = Lab::new();
    let repo = lab.repo.display();
    // Logs outside `$HOME`: under Landlock nothing can be created directly in an ancestor of
    // the repository (here `$HOME`), which is why the view is preferred.
    let logs = lab.env.root.path().join("logs");
    std::fs::create_dir_all(&logs).expect("logs");
    let shown = logs.display();
    lab.install(&format!(
        "#!/bin/sh\nR='{repo}'\nL='{shown}'\necho started >> \"$L/starts.log\"\n\
         if echo x > \"$R/planted.txt\" 2>/dev/null; then echo changed write; else echo refused write; fi > \"$L/attempts.log\"\n\
         chmod 600 \"$R/tracked.txt\" 2>/dev/null\n\
         cat > /dev/null\necho '# Review'\necho 'Looked at tracked.txt:1.'\n"
    ));
    let path = format!("{}:/usr/bin:/bin:/usr/sbin:/sbin", lab.bin.display());
    let run_dir = lab.run_dir.display().to_string();
    let gsd_lane = util::bin().display().to_string();
    let mut command = util::gsd_command(
        &lab.env,
        &path,
        &lab.repo,
        &[
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"",
            "sh",
            &gsd_lane,
            "run",
            "acme",
            "--json",
            "--run-dir",
            &run_dir,
        ],
    );
    // The same environment, with `unshare` as the program.
    command = rebase(command, "unshare");
    let (out, _) = util::run_bounded(command, COMMAND_TIMEOUT);
    out.assert_no_panic().assert_status(0);
    let result: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("json");
    assert_eq!(result["sandbox"]["mechanism"], "landlock", "{}", out.stdout);
    assert_eq!(
        util::read_text(&logs.join("starts.log")),
        "started\n",
        "the lane must start exactly once"
    );
    assert_eq!(
        util::read_text(&logs.join("attempts.log")).trim(),
        "refused write"
    );
    assert!(!lab.repo.join("planted.txt").exists());
    // Landlock cannot refuse the chmod: the detection that started before the lane reports it.
    let review = util::read_text(&lab.run_dir.join("gsd-review-acme.md"));
    assert!(
        review.contains("this reviewer modified the repository") && review.contains("tracked.txt"),
        "{review}\n{}",
        out.stderr
    );
}

/// `command` (made by [`util::gsd_command`]) with another program, everything else kept.
fn rebase(command: Command, program: &str) -> Command {
    let mut rebased = Command::new(program);
    rebased.env_clear();
    for (name, value) in command.get_envs() {
        if let Some(value) = value {
            rebased.env(name, value);
        }
    }
    if let Some(dir) = command.get_current_dir() {
        rebased.current_dir(dir);
    }
    rebased.args(command.get_args());
    rebased
}

#[test]
fn a_lane_whose_own_check_cannot_prove_the_view_is_started_again_once_the_probe_proves_it() {
    // The repository belongs to another user and is not writable for this one: inside the
    // lane's namespace that user is not mapped, so `access(2)` answers EACCES, not EROFS, and
    // the lane's own spawn cannot prove the view. The program must not start then; the probe
    // proves the view (on the temporary directory) and the lane is started again, once, under
    // the view. Only root can give the repository away.
    if !view_available() || !rustix::process::geteuid().is_root() {
        eprintln!("view: needs user namespaces and root (to chown the repository); skipped");
        return;
    }
    let lab = Lab::new();
    let logs = lab.env.root.path().join("logs");
    std::fs::create_dir_all(&logs).expect("logs");
    let shown = logs.display();
    let repo = lab.repo.display();
    lab.install(&format!(
        "#!/bin/sh\nL='{shown}'\necho started >> \"$L/starts.log\"\n\
         if echo x > '{repo}/planted.txt' 2>/dev/null; then echo changed; else echo refused; fi > \"$L/write.log\"\n\
         cat > /dev/null\necho '# Review'\necho 'Looked at tracked.txt:1.'\n"
    ));
    std::os::unix::fs::chown(&lab.repo, Some(65534), Some(65534)).expect("chown");
    std::fs::set_permissions(&lab.repo, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!("{}:/usr/bin:/bin:/usr/sbin:/sbin", lab.bin.display());
    let run_dir = lab.run_dir.display().to_string();
    let mut command = util::gsd_command(
        &lab.env,
        &path,
        &lab.repo,
        &["run", "acme", "--json", "--run-dir", &run_dir],
    );
    // The phase marks say which way the spawn went.
    command.env("GSD_LANE_TRACE_TIMING", "1");
    let (out, _) = util::run_bounded(command, COMMAND_TIMEOUT);
    out.assert_no_panic().assert_status(0);
    assert!(
        out.stderr
            .contains("the lane's own spawn did not prove the view: the probe decides"),
        "{}",
        out.stderr
    );
    let result: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("json");
    assert_eq!(result["sandbox"]["mechanism"], "view", "{}", out.stdout);
    assert_eq!(result["ok"], true, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        util::read_text(&logs.join("starts.log")),
        "started\n",
        "the lane must start exactly once"
    );
    assert_eq!(util::read_text(&logs.join("write.log")).trim(), "refused");
    assert!(!lab.repo.join("planted.txt").exists());
}
