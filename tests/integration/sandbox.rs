//! The sandbox of spawned lanes (issue 14, issue 11 point 4) end to end: a fake CLI that tries
//! every way to change the repository under review, run under `enforce`, `detect` and `off`; and
//! `gsd-lane review` killed by `SIGKILL` while three lanes (one with grandchildren) run.
//!
//! The repository is a real git work tree made by the test; "unchanged" means every path, every
//! byte and every mode under it (`.git` included) is the same after the lane as before.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{self, Scope, TestEnv};
use crate::view::view_available;

/// Bound on one gsd-lane command (a hang fails instead of blocking the suite).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Every way the attacking CLI tries to change the repository, in the order it tries them.
const ATTEMPTS: &[&str] = &[
    "create",
    "append",
    "truncate",
    "rename",
    "unlink",
    "mkdir",
    "rmdir",
    "chmod",
    "symlink",
    "hardlink",
    "planning",
    "git-commit",
    "git-checkout",
    "relative-after-cd",
    "through-a-symlinked-sibling",
    "git-dir",
];

/// The directory holding `git` on this machine's `PATH` (the tests need a real git).
pub(crate) fn git_dir() -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|path| std::env::split_paths(&path).find(|dir| dir.join("git").is_file()))
        .expect("git on PATH")
}

/// `git <args>` in `repo`, which must succeed.
pub(crate) fn git(repo: &Path, args: &[&str]) {
    let status = Command::new(git_dir().join("git"))
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(repo)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// Which confinement `enforce` uses: the read-only view where the kernel allows namespaces (the
/// default), or the Landlock fallback (forced with `GSD_LANE_NO_NAMESPACES=1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mechanism {
    Default,
    Landlock,
}

impl Mechanism {
    fn apply(self, command: &mut Command) {
        if self == Mechanism::Landlock {
            command.env("GSD_LANE_NO_NAMESPACES", "1");
        }
    }
}

/// Path → (bytes or link target, mode) for everything under `root`, `.git` included.
fn tree(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir").flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            let content = if meta.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .expect("readlink")
                    .into_os_string()
                    .into_encoded_bytes()
            } else if meta.is_dir() {
                pending.push(path.clone());
                Vec::new()
            } else {
                std::fs::read(&path).expect("read")
            };
            out.insert(rel, (content, meta.permissions().mode()));
        }
    }
    out
}

/// One test's world: a git repository as the project, a run dir and a bin dir outside it.
struct Lab {
    env: TestEnv,
    run_dir: PathBuf,
    bin: PathBuf,
}

impl Lab {
    fn new() -> Lab {
        let env = TestEnv::with_planning();
        let project = &env.project;
        std::fs::write(project.join("tracked.txt"), "tracked\n").expect("write");
        std::fs::write(project.join("other.txt"), "other\n").expect("write");
        std::fs::create_dir_all(project.join("sub")).expect("mkdir");
        std::fs::write(project.join("sub/keep.txt"), "keep\n").expect("write");
        std::fs::create_dir_all(project.join("emptydir")).expect("mkdir");
        std::fs::write(project.join(".planning/config.json"), "{}").expect("write");
        git(project, &["init", "-q"]);
        git(project, &["add", "."]);
        git(project, &["commit", "-q", "-m", "initial"]);
        let run_dir = env.root.path().join("run");
        let bin = env.root.path().join("bin");
        for dir in [&run_dir, &bin] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
        // A sibling of the repository that is a symbolic link to it: granting write beneath the
        // siblings must not follow it.
        std::os::unix::fs::symlink(project, env.root.path().join("alias")).expect("symlink");
        Lab { env, run_dir, bin }
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

    /// `gsd-lane run acme --json` with `extra`.
    fn run(&self, extra: &[&str]) -> Value {
        self.run_under(Mechanism::Default, extra)
    }

    /// [`Lab::run`] with the confinement `mechanism`.
    fn run_under(&self, mechanism: Mechanism, extra: &[&str]) -> Value {
        let path = format!(
            "{}:{}:/usr/bin:/bin",
            self.bin.display(),
            git_dir().display()
        );
        let run_dir = self.run_dir.display().to_string();
        let repo = self.env.project.display().to_string();
        let mut args = vec![
            "run",
            "acme",
            "--run-dir",
            &run_dir,
            "--repo-root",
            &repo,
            "--json",
        ];
        args.extend_from_slice(extra);
        let mut command = util::gsd_command(&self.env, &path, &self.env.project, &args);
        mechanism.apply(&mut command);
        let (out, _) = util::run_bounded(command, COMMAND_TIMEOUT);
        out.assert_no_panic().assert_status(0);
        out.json()
    }

    /// The attempt log the attacking CLI wrote: attempt → `changed` or `refused`.
    fn attempts(&self) -> BTreeMap<String, String> {
        util::read_text(&self.env.home.join("attempts.log"))
            .lines()
            .filter_map(|line| {
                let (verdict, name) = line.split_once(' ')?;
                Some((name.to_owned(), verdict.to_owned()))
            })
            .collect()
    }

    fn review(&self) -> String {
        util::read_text(&self.run_dir.join("gsd-review-acme.md"))
    }
}

/// The attacking CLI: each attempt is logged as `changed <name>` or `refused <name>` under
/// `$HOME` (which stays writable), then it prints a review.
fn attacker(repo: &Path, git: &Path) -> String {
    let alias = repo.parent().expect("repo parent").join("alias");
    let alias = alias.display();
    let repo = repo.display();
    let git = git.join("git").display().to_string();
    format!(
        r##"#!/bin/sh
R='{repo}'
G='{git} -c user.name=x -c user.email=x@example.invalid'
log="$HOME/attempts.log"
: > "$log"
try() {{ name=$1; shift; if "$@" >/dev/null 2>&1; then echo "changed $name" >> "$log"; else echo "refused $name" >> "$log"; fi; }}
try create sh -c "echo x > '$R/new-file'"
try append sh -c "echo x >> '$R/tracked.txt'"
try truncate truncate -s 0 "$R/other.txt"
try rename mv "$R/sub/keep.txt" "$R/renamed.txt"
try unlink rm "$R/other.txt"
try mkdir mkdir "$R/newdir"
try rmdir rmdir "$R/emptydir"
try chmod chmod 600 "$R/tracked.txt"
try symlink ln -s /etc/hostname "$R/link"
try hardlink ln "$R/tracked.txt" "$R/hard"
try planning sh -c "echo x > '$R/.planning/config.json'"
try git-commit sh -c "cd '$R' && $G commit -q --allow-empty -m evil"
try git-checkout sh -c "cd '$R' && $G checkout -q -- ."
try relative-after-cd sh -c "cd '$R/sub' && echo x > ../relative.txt"
try through-a-symlinked-sibling sh -c "echo x > '{alias}/via-alias.txt'"
try git-dir sh -c "echo x > '$R/.git/HEAD'"
cat > /dev/null
echo "# Review"
echo "All attempts logged."
"##
    )
}

#[test]
fn enforce_refuses_every_write_to_the_repository_and_the_review_still_lands() {
    enforce_refuses_every_write(Mechanism::Default);
}

#[test]
fn enforce_under_landlock_refuses_every_write_but_modes_which_it_reports() {
    enforce_refuses_every_write(Mechanism::Landlock);
}

fn enforce_refuses_every_write(mechanism: Mechanism) {
    let lab = Lab::new();
    lab.install(&attacker(&lab.env.project, &git_dir()));
    let before = tree(&lab.env.project);
    let result = lab.run_under(mechanism, &[]);
    let viewed = mechanism == Mechanism::Default && view_available();
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(result["stubbed"], json!(false), "{result}");
    assert!(lab.review().contains("All attempts logged."));

    let attempts = lab.attempts();
    assert_eq!(attempts.len(), ATTEMPTS.len(), "{attempts:?}");
    for name in ATTEMPTS {
        // Landlock does not govern file modes; the mode change is reported instead (below).
        // The read-only view refuses it too.
        let expected = if *name == "chmod" && !viewed {
            "changed"
        } else {
            "refused"
        };
        assert_eq!(attempts[*name], expected, "attempt {name}: {attempts:?}");
    }
    let mut after = tree(&lab.env.project);
    if viewed {
        assert_eq!(before, after, "the repository changed under the view");
        assert!(result.get("repositoryChanges").is_none(), "{result}");
        return;
    }
    // Every byte and every path is unchanged; only the one mode differs.
    let tracked = after.get_mut("tracked.txt").expect("tracked.txt");
    assert_eq!(tracked.1 & 0o777, 0o600);
    tracked.1 = before["tracked.txt"].1;
    assert_eq!(before, after, "the repository changed under enforce");
    assert_eq!(
        result["repositoryChanges"],
        json!(["mode changed tracked.txt"]),
        "{result}"
    );
}

#[test]
fn invoke_with_its_run_dir_in_the_repository_still_refuses_every_write() {
    invoke_with_run_dir_in_the_repository(Mechanism::Default);
}

#[test]
fn invoke_with_its_run_dir_in_the_repository_under_landlock_still_refuses_every_write() {
    invoke_with_run_dir_in_the_repository(Mechanism::Landlock);
}

fn invoke_with_run_dir_in_the_repository(mechanism: Mechanism) {
    // `invoke` defaults to `--run-dir .`: the workflow runs it in the project, so the run dir is
    // the repository root. It must not make the repository writable, and the lane's own files
    // there are not "changes".
    let viewed = mechanism == Mechanism::Default && view_available();
    let lab = Lab::new();
    lab.install(&attacker(&lab.env.project, &git_dir()));
    std::fs::write(lab.env.project.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
    let before = tree(&lab.env.project);
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        lab.bin.display(),
        git_dir().display()
    );
    let mut command = util::gsd_command(
        &lab.env,
        &path,
        &lab.env.project,
        &["invoke", "--slug", "acme"],
    );
    mechanism.apply(&mut command);
    let (out, _) = util::run_bounded(command, COMMAND_TIMEOUT);
    out.assert_no_panic().assert_status(0);
    let result = out.json();
    assert_eq!(result["stubbed"], json!(false), "{result}");
    let attempts = lab.attempts();
    for name in ATTEMPTS.iter().filter(|name| **name != "chmod" || viewed) {
        assert_eq!(attempts[*name], "refused", "attempt {name}: {attempts:?}");
    }
    let mut after = tree(&lab.env.project);
    for own in ["gsd-review-acme.md", "gsd-review-acme.err"] {
        assert!(after.remove(own).is_some(), "{own} missing");
    }
    if viewed {
        assert!(result.get("repositoryChanges").is_none(), "{result}");
        assert_eq!(before, after, "the repository changed under the view");
        return;
    }
    assert_eq!(
        result["repositoryChanges"],
        json!(["mode changed tracked.txt"]),
        "{result}"
    );
    let tracked = after.get_mut("tracked.txt").expect("tracked.txt");
    tracked.1 = before["tracked.txt"].1;
    assert_eq!(before, after, "the repository changed under enforce");
}

#[test]
fn detect_reports_each_change_and_off_reports_nothing() {
    let lab = Lab::new();
    lab.install(&attacker(&lab.env.project, &git_dir()));
    let result = lab.run(&["--sandbox", "detect"]);
    assert_eq!(result["ok"], json!(true), "{result}");
    let attempts = lab.attempts();
    for name in ATTEMPTS {
        assert_eq!(attempts[*name], "changed", "attempt {name}: {attempts:?}");
    }
    let changes: Vec<String> = result["repositoryChanges"]
        .as_array()
        .expect("repositoryChanges")
        .iter()
        .map(|c| c.as_str().expect("text").to_owned())
        .collect();
    let text = changes.join("\n");
    for expected in [
        "created new-file",
        "created renamed.txt",
        "sub/keep.txt",
        "other.txt",
        "created newdir",
        "removed emptydir",
        "created link",
        "created hard",
        "modified .git/HEAD",
        "created relative.txt",
        "created via-alias.txt",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} missing from {changes:?}"
        );
    }
    assert!(
        text.contains("tracked.txt") && text.contains(".planning/config.json"),
        "{changes:?}"
    );

    // The text output says it too.
    let lab = Lab::new();
    lab.install(&attacker(&lab.env.project, &git_dir()));
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        lab.bin.display(),
        git_dir().display()
    );
    let (run_dir, repo) = (
        lab.run_dir.display().to_string(),
        lab.env.project.display().to_string(),
    );
    let args = [
        "run",
        "acme",
        "--run-dir",
        &run_dir,
        "--repo-root",
        &repo,
        "--sandbox",
        "detect",
    ];
    let (out, _) = util::run_bounded(
        util::gsd_command(&lab.env, &path, &lab.env.project, &args),
        COMMAND_TIMEOUT,
    );
    out.assert_status(0);
    assert!(
        out.stdout
            .contains("WARNING   this reviewer modified the repository: "),
        "{}",
        out.stdout
    );
    assert!(
        !out.stderr.contains("sets review.sandbox"),
        "a flag is the user's own choice: {}",
        out.stderr
    );
    assert!(
        out.stdout.contains("sandbox   detect (chosen)"),
        "{}",
        out.stdout
    );

    // `off`: the same changes happen and nothing is reported (the behaviour before).
    let lab = Lab::new();
    lab.install(&attacker(&lab.env.project, &git_dir()));
    let result = lab.run(&["--sandbox", "off"]);
    assert_eq!(lab.attempts()["create"], "changed");
    assert_eq!(
        result,
        json!({"slug": "acme", "ok": true, "stubbed": false, "model": {"value": null, "source": "unknown"}})
    );
}

#[test]
fn a_lane_that_only_writes_its_review_and_its_own_state_reports_nothing() {
    let lab = Lab::new();
    lab.install(
        "#!/bin/sh\nmkdir -p \"$HOME/.cache/acme\" && echo state > \"$HOME/.cache/acme/s\" || exit 3\n\
         t=$(mktemp) && echo tmp > \"$t\" && rm \"$t\" || exit 4\n\
         echo hello > /dev/null || exit 5\ncat > /dev/null\necho '# Review'\necho fine\n",
    );
    let before = tree(&lab.env.project);
    for mode in ["enforce", "detect"] {
        let result = lab.run(&["--sandbox", mode]);
        assert_eq!(
            result,
            json!({"slug": "acme", "ok": true, "stubbed": false, "model": {"value": null, "source": "unknown"}}),
            "{mode}"
        );
        assert!(lab.review().contains("fine"), "{mode}");
        assert_eq!(
            util::read_text(&lab.env.home.join(".cache/acme/s")),
            "state\n",
            "{mode}"
        );
    }
    assert_eq!(before, tree(&lab.env.project));
}

#[test]
fn a_weaker_mode_from_the_repository_config_is_announced() {
    let lab = Lab::new();
    lab.install("#!/bin/sh\ncat > /dev/null\necho '# Review'\n");
    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        r#"{"review": {"sandbox": "off"}}"#,
    )
    .expect("config");
    let path = format!("{}:/usr/bin:/bin", lab.bin.display());
    let (run_dir, repo) = (
        lab.run_dir.display().to_string(),
        lab.env.project.display().to_string(),
    );
    let args = ["run", "acme", "--run-dir", &run_dir, "--repo-root", &repo];
    let (out, _) = util::run_bounded(
        util::gsd_command(&lab.env, &path, &lab.env.project, &args),
        COMMAND_TIMEOUT,
    );
    out.assert_no_panic().assert_status(0);
    assert!(
        out.stderr
            .contains("warning: .planning/config.json sets review.sandbox to off"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("sandbox   off"), "{}", out.stdout);
}

#[test]
fn a_bad_sandbox_mode_stops_the_run_before_anything_starts() {
    let lab = Lab::new();
    lab.install("#!/bin/sh\ntouch \"$HOME/started\"\necho review\n");
    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        r#"{"review": {"sandbox": "of"}}"#,
    )
    .expect("config");
    let path = format!("{}:/usr/bin:/bin", lab.bin.display());
    let (run_dir, repo) = (
        lab.run_dir.display().to_string(),
        lab.env.project.display().to_string(),
    );
    let args = ["run", "acme", "--run-dir", &run_dir, "--repo-root", &repo];
    let (out, _) = util::run_bounded(
        util::gsd_command(&lab.env, &path, &lab.env.project, &args),
        COMMAND_TIMEOUT,
    );
    out.assert_no_panic();
    assert_ne!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("review.sandbox"), "{}", out.stderr);
    assert!(!lab.env.home.join("started").exists());
}

/// True once `pid` is gone or a zombie.
pub(crate) fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// A review project (`tests/fixtures/review/project`) with one fake lane per `(slug, sh body)`.
pub(crate) fn review_lab(scripts: &[(&str, &str)]) -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let project = &env.project;
    std::fs::create_dir_all(project.join(".git")).expect("git marker");
    copy_dir(&util::fixture("review/project"), project);
    let bin = env.root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::create_dir_all(env.home.join("pids")).expect("pids");
    for (slug, body) in scripts {
        let id = format!("fake-{slug}");
        let mut lane = util::read_json(&util::fixture("review/lane/capability.json"));
        lane["id"] = json!(id);
        lane["reviewer"]["slug"] = json!(slug);
        lane["reviewer"]["flags"] = json!([format!("--{slug}")]);
        lane["reviewer"]["probe"]["binary"] = json!(id);
        lane["reviewer"]["invoke"]["binary"] = json!(id);
        lane["reviewer"]["reviewsSection"] = json!(slug);
        lane["reviewer"]["modelConfigKey"] = json!(format!("review.models.{slug}"));
        lane["reviewer"]["timeoutFloorMs"] = json!(600_000);
        lane["config"] = json!({
            format!("review.models.{slug}"): {"type": "string", "default": "", "description": "Model."}
        });
        env.write_overlay(Scope::Global, &id, &lane);
        let script = bin.join(&id);
        std::fs::write(&script, format!("#!/bin/sh\n{body}")).expect("script");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    (env, bin)
}

/// `gsd-lane review <args>` in the review lab, not started.
pub(crate) fn review_command(env: &TestEnv, bin: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(util::bin());
    command
        .env_clear()
        .env("HOME", &env.home)
        .env("GSD_HOME", &env.gsd_home)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .current_dir(&env.project)
        .arg("review")
        .args(args);
    command
}

#[test]
fn reviews_md_says_under_the_lane_that_it_modified_the_repository() {
    let (env, bin) = review_lab(&[(
        "one",
        "echo x > \"$PWD/planted.txt\"\ncat > /dev/null\necho '# Review'\necho fine\n",
    )]);
    let (out, _) = util::run_bounded(
        review_command(
            &env,
            &bin,
            &["--phase", "3", "--one", "--sandbox", "detect"],
        ),
        COMMAND_TIMEOUT,
    );
    out.assert_no_panic().assert_status(0);
    let reviews = util::read_text(
        &env.project
            .join(".planning/phases/03-billing/03-REVIEWS.md"),
    );
    assert!(
        reviews.contains("this reviewer modified the repository: created planted.txt"),
        "{reviews}"
    );
    assert!(
        out.stderr.contains("this reviewer modified the repository"),
        "{}",
        out.stderr
    );
    // `--json`: one `repository_changed` event for the lane.
    std::fs::remove_file(env.project.join("planted.txt")).expect("remove");
    let (out, _) = util::run_bounded(
        review_command(
            &env,
            &bin,
            &["--phase", "3", "--one", "--sandbox", "detect", "--json"],
        ),
        COMMAND_TIMEOUT,
    );
    out.assert_no_panic().assert_status(0);
    let changed: Vec<Value> = out
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["event"] == "repository_changed")
        .collect();
    assert_eq!(
        changed,
        [
            json!({"event": "repository_changed", "identity": "one", "changes": ["created planted.txt"]})
        ],
        "{}",
        out.stdout
    );
}

#[test]
fn sigkill_of_review_leaves_no_lane_process() {
    let scripts = [
        ("one", "echo $$ > \"$HOME/pids/one\"\nexec sleep 300\n"),
        ("two", "echo $$ > \"$HOME/pids/two\"\nsleep 300\n"),
        (
            "three",
            "sleep 300 &\necho $! > \"$HOME/pids/three-child\"\n\
             sh -c 'sleep 300 & echo $! > \"$HOME/pids/three-grandchild\"; wait' &\n\
             echo $$ > \"$HOME/pids/three\"\nwait\n",
        ),
    ];
    let (env, bin) = review_lab(&scripts);
    let pids = env.home.join("pids");
    let mut review = review_command(&env, &bin, &["--phase", "3", "--one", "--two", "--three"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn review");
    let names = ["one", "two", "three", "three-child", "three-grandchild"];
    let until = Instant::now() + COMMAND_TIMEOUT;
    // The pids the lanes recorded are theirs inside their PID namespaces (under the read-only
    // view): the files say they started; their HOME finds them on this side.
    loop {
        let started = names
            .iter()
            .filter(|name| pids.join(name).is_file())
            .count();
        if started == names.len() {
            break;
        }
        assert!(Instant::now() < until, "the lanes did not all start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let running = util::processes_with_home(&env.home);
    // gsd-lane, its watchdog, and at least the five lane processes.
    assert!(running.len() >= names.len() + 2, "{running:?}");
    review.kill().expect("SIGKILL review");
    let _ = review.wait();
    // Bounded poll, not a timing assertion: the watchdog acts as soon as its input ends.
    let alive = util::processes_left_with_home(&env.home, Duration::from_secs(10));
    assert!(
        alive.is_empty(),
        "lane processes outlived gsd-lane: {alive:?}"
    );
}

/// Copies a directory tree.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

#[test]
fn a_writes_repository_lane_runs_only_when_the_user_opted_in_and_its_changes_are_reported() {
    let lab = Lab::new();
    lab.install("#!/bin/sh\necho x > \"$1/edited.txt\"\ncat > /dev/null\necho '# Review'\n");
    let mut lane = util::acme();
    lane["reviewer"]["invoke"]["args"] = json!([lab.env.project.display().to_string()]);
    lane["reviewer"]["posture"] = json!("writes-repository");
    lab.env.write_overlay(Scope::Global, "acme-review", &lane);

    let refused = lab.run(&[]);
    assert_eq!(refused["ok"], json!(false), "{refused}");
    assert_eq!(refused["reason"], json!("repository_writes_not_allowed"));
    assert!(refused["detail"]
        .as_str()
        .is_some_and(|d| d.contains("review.allow_repository_writes")));
    assert!(!lab.env.project.join("edited.txt").exists());

    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        r#"{"review": {"allow_repository_writes": ["acme"]}}"#,
    )
    .expect("config");
    let allowed = lab.run(&[]);
    assert_eq!(allowed["ok"], json!(true), "{allowed}");
    assert_eq!(util::read_text(&lab.env.project.join("edited.txt")), "x\n");
    assert_eq!(allowed["repositoryChanges"], json!(["created edited.txt"]));

    // The disclosure says what the lane does to the repository.
    let out = lab.env.run(&["disclose", "acme"]);
    assert!(
        out.stdout.contains("posture: writes-repository"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_grandchild_left_running_after_the_lane_ended_dies_with_gsd_lane() {
    for mechanism in [Mechanism::Default, Mechanism::Landlock] {
        grandchild_dies_with_gsd_lane(mechanism);
    }
}

fn grandchild_dies_with_gsd_lane(mechanism: Mechanism) {
    let lab = Lab::new();
    // The lane starts a grandchild that keeps its stdout open, then ends at once: gsd-lane keeps
    // reading (up to the deadline) and is killed in that window. (Under the read-only view the
    // grandchild already dies with the lane, PID 1 of its namespace.)
    lab.install(
        "#!/bin/sh\necho $$ > \"$HOME/lane.pid\"\n\
         sh -c 'echo $$ > \"$HOME/grandchild.pid\"; exec sleep 300' &\n\
         while [ ! -s \"$HOME/grandchild.pid\" ]; do sleep 0.05; done\nexit 0\n",
    );
    let path = format!("{}:/usr/bin:/bin", lab.bin.display());
    let (run_dir, repo) = (
        lab.run_dir.display().to_string(),
        lab.env.project.display().to_string(),
    );
    let args = ["run", "acme", "--run-dir", &run_dir, "--repo-root", &repo];
    let mut command = util::gsd_command(&lab.env, &path, &lab.env.project, &args);
    mechanism.apply(&mut command);
    let mut gsd = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gsd-lane");
    let until = Instant::now() + COMMAND_TIMEOUT;
    while !(lab.env.home.join("lane.pid").is_file()
        && lab.env.home.join("grandchild.pid").is_file())
    {
        assert!(
            Instant::now() < until,
            "the lane did not start its grandchild"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    gsd.kill().expect("SIGKILL gsd-lane");
    let _ = gsd.wait();
    let survived = util::processes_left_with_home(&lab.env.home, Duration::from_secs(10));
    assert!(
        survived.is_empty(),
        "{mechanism:?}: the grandchild outlived gsd-lane: {survived:?}"
    );
}
