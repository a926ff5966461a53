//! Attacks on what the sandbox confines (issue 20, items 3, 4, 5, 7, 11 and 12), each through
//! the real binary with a fake lane (a sh script) that tries the write or the signal and logs
//! whether it worked:
//!
//! - the project stays read-only wherever gsd-lane was started from (a subdirectory, `--project`
//!   from elsewhere, a GSD project without `.git`), and a linked worktree's git dir too;
//! - a run dir inside the repository grants only the lane's own files, and detection still
//!   covers the rest of it;
//! - each reviewer of a review writes only its own files, never another's review or the prompt;
//! - gsd-lane's own trust state (`$GSD_HOME/.gsd`) is read-only for lanes;
//! - the watchdog's pipe cannot be reached through `/proc`, and under `enforce` (Landlock ABI 6)
//!   a lane cannot stop gsd-lane or the watchdog.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::sandbox::{git, git_dir, review_command, review_lab};
use crate::util::{self, Outcome, Scope, TestEnv};

/// Bound on one gsd-lane command (a hang fails instead of blocking the suite).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// One test's world: a project, a bin dir with the attacking lane, a run dir outside the
/// project, a neutral directory to start from.
struct World {
    env: TestEnv,
    bin: PathBuf,
    run_dir: PathBuf,
    elsewhere: PathBuf,
}

impl World {
    /// A GSD project (`.planning/`, a `src/` and a `docs/PLAN.md`), a git work tree when `git`.
    fn new(with_git: bool) -> World {
        let env = TestEnv::with_planning();
        let project = &env.project;
        std::fs::write(project.join(".planning/config.json"), "{}").expect("config");
        std::fs::create_dir_all(project.join("src")).expect("src");
        std::fs::write(project.join("src/main.rs"), "fn main() {}\n").expect("main");
        std::fs::create_dir_all(project.join("docs")).expect("docs");
        std::fs::write(project.join("docs/PLAN.md"), "# Plan\n").expect("plan");
        if with_git {
            git(project, &["init", "-q"]);
            git(project, &["add", "."]);
            git(project, &["commit", "-q", "-m", "initial"]);
        }
        let world = World {
            bin: env.root.path().join("bin"),
            run_dir: env.root.path().join("run"),
            elsewhere: env.root.path().join("elsewhere"),
            env,
        };
        for dir in [&world.bin, &world.run_dir, &world.elsewhere] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(world.run_dir.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
        world
    }

    /// Installs lane `acme` whose CLI tries each `(name, sh command)` and logs `changed <name>`
    /// or `refused <name>` to `$HOME/attempts.log`, then prints a review.
    fn install(&self, attempts: &[(&str, String)]) {
        let path = self.bin.join("acme");
        std::fs::write(&path, attacker(attempts)).expect("write script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let mut lane = util::acme();
        lane["reviewer"]["invoke"]["args"] = json!(["-"]);
        self.env.write_overlay(Scope::Global, "acme-review", &lane);
    }

    /// `gsd-lane <args>` started in `dir`, bounded.
    fn run_in(&self, dir: &Path, args: &[&str]) -> Outcome {
        let path = format!(
            "{}:{}:/usr/bin:/bin",
            self.bin.display(),
            git_dir().display()
        );
        let (out, _) = util::run_bounded(
            util::gsd_command(&self.env, &path, dir, args),
            COMMAND_TIMEOUT,
        );
        out.assert_no_panic();
        out
    }

    /// `run acme --json --run-dir <outside> <extra>` in `dir`, which must succeed.
    fn run_acme(&self, dir: &Path, extra: &[&str]) -> Value {
        let run_dir = self.run_dir.display().to_string();
        let mut args = vec!["run", "acme", "--json", "--run-dir", &run_dir];
        args.extend_from_slice(extra);
        let out = self.run_in(dir, &args);
        out.assert_status(0);
        out.json()
    }

    /// The attempt log: attempt → `changed` or `refused`.
    fn attempts(&self) -> BTreeMap<String, String> {
        read_attempts(&self.env.home.join("attempts.log"))
    }
}

/// The attempt log at `path`: attempt → `changed` or `refused`.
fn read_attempts(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let (verdict, name) = line.split_once(' ')?;
            Some((name.to_owned(), verdict.to_owned()))
        })
        .collect()
}

/// The attacking CLI's script: each attempt in a subshell, logged under `$HOME` (writable).
fn attacker(attempts: &[(&str, String)]) -> String {
    let mut script = String::from(
        "#!/bin/sh\nlog=\"$HOME/attempts.log\"\n: > \"$log\"\n\
         try() { name=$1; shift; if sh -c \"$1\" >/dev/null 2>&1; then echo \"changed $name\" >> \"$log\"; else echo \"refused $name\" >> \"$log\"; fi; }\n",
    );
    for (name, command) in attempts {
        script.push_str(&format!(
            "try {name} '{}'\n",
            command.replace('\'', "'\\''")
        ));
    }
    script.push_str("echo \"done all\" >> \"$log\"\ncat > /dev/null\necho '# Review'\necho 'All attempts logged.'\n");
    script
}

/// The writes a hostile lane makes to plant code or change the plans of `project`.
fn project_attacks(project: &Path) -> Vec<(&'static str, String)> {
    let p = project.display();
    vec![
        (
            "hook",
            format!("mkdir -p '{p}/.git/hooks' && echo evil > '{p}/.git/hooks/pre-commit'"),
        ),
        ("planning", format!("echo x > '{p}/.planning/config.json'")),
        ("plan", format!("echo forged >> '{p}/docs/PLAN.md'")),
    ]
}

/// Asserts every attempt named in `names` was `verdict`.
fn assert_all(attempts: &BTreeMap<String, String>, names: &[&str], verdict: &str) {
    assert_eq!(
        attempts.get("all").map(String::as_str),
        Some("done"),
        "{attempts:?}"
    );
    for name in names {
        assert_eq!(
            attempts.get(*name).map(String::as_str),
            Some(verdict),
            "attempt {name}: {attempts:?}"
        );
    }
}

/// The `repositoryChanges` of a `run --json` line, joined.
fn changes(result: &Value) -> String {
    result["repositoryChanges"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn run_from_a_subdirectory_keeps_the_whole_project_read_only() {
    let world = World::new(true);
    world.install(&project_attacks(&world.env.project));
    let src = world.env.project.join("src");
    let result = world.run_acme(&src, &[]);
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_all(&world.attempts(), &["hook", "planning", "plan"], "refused");
    assert!(!world.env.project.join(".git/hooks/pre-commit").exists());

    // Under detect the same writes happen and are reported, named in full.
    let result = world.run_acme(&src, &["--sandbox", "detect"]);
    assert_all(&world.attempts(), &["hook", "planning", "plan"], "changed");
    let text = changes(&result);
    for expected in [
        ".git/hooks/pre-commit",
        ".planning/config.json",
        "docs/PLAN.md",
    ] {
        assert!(text.contains(expected), "{expected} missing from {text}");
    }
}

#[test]
fn run_with_the_project_given_from_elsewhere_keeps_it_read_only() {
    let world = World::new(true);
    world.install(&project_attacks(&world.env.project));
    let project = world.env.project.display().to_string();
    let run_dir = world.run_dir.display().to_string();
    let out = world.run_in(
        &world.elsewhere,
        &[
            "--project",
            &project,
            "run",
            "acme",
            "--json",
            "--run-dir",
            &run_dir,
        ],
    );
    out.assert_status(0);
    assert_all(&world.attempts(), &["hook", "planning", "plan"], "refused");
}

#[test]
fn a_gsd_project_without_git_is_read_only_from_a_subdirectory_and_changes_are_reported() {
    let world = World::new(false);
    world.install(&project_attacks(&world.env.project));
    let src = world.env.project.join("src");
    world.run_acme(&src, &[]);
    assert_all(&world.attempts(), &["hook", "planning", "plan"], "refused");
    assert!(!world.env.project.join(".git").exists());

    let result = world.run_acme(&src, &["--sandbox", "detect"]);
    assert_all(&world.attempts(), &["hook", "planning", "plan"], "changed");
    let text = changes(&result);
    for expected in [
        ".git/hooks/pre-commit",
        ".planning/config.json",
        "docs/PLAN.md",
    ] {
        assert!(text.contains(expected), "{expected} missing from {text}");
    }
}

#[test]
fn a_review_started_in_a_subdirectory_keeps_the_whole_project_read_only() {
    let (env, bin) = review_lab(&[(
        "one",
        "if mkdir -p \"$PROJ/.git/hooks\" 2>/dev/null && echo evil > \"$PROJ/.git/hooks/pre-commit\" 2>/dev/null; then echo changed > \"$HOME/hook\"; else echo refused > \"$HOME/hook\"; fi\n\
         if echo forged >> \"$PROJ/.planning/ROADMAP.md\" 2>/dev/null; then echo changed > \"$HOME/roadmap\"; else echo refused > \"$HOME/roadmap\"; fi\n\
         cat > /dev/null\necho '# Review'\necho fine\n",
    )]);
    // The lane learns where the project is from its script (its environment is minimal).
    let script = bin.join("fake-one");
    let body = std::fs::read_to_string(&script).expect("script");
    let body = body.replacen(
        "#!/bin/sh\n",
        &format!("#!/bin/sh\nPROJ='{}'\n", env.project.display()),
        1,
    );
    std::fs::write(&script, body).expect("script");
    // A GSD project without `.git`: started from a subdirectory, the review must still keep
    // the whole project (and the `.git` a lane would create there) read-only.
    std::fs::remove_dir_all(env.project.join(".git")).expect("no .git");
    let sub = env.project.join(".planning/phases");
    let mut command = review_command(&env, &bin, &["--phase", "3", "--one"]);
    command.current_dir(&sub);
    let (out, _) = util::run_bounded(command, COMMAND_TIMEOUT);
    out.assert_no_panic().assert_status(0);
    assert_eq!(
        util::read_text(&env.home.join("hook")),
        "refused\n",
        "{}",
        out.stderr
    );
    assert_eq!(
        util::read_text(&env.home.join("roadmap")),
        "refused\n",
        "{}",
        out.stderr
    );
    assert!(!env.project.join(".git/hooks/pre-commit").exists());
}

/// A main repository at `<root>/main` and its linked worktree at `<root>/wt` (the project).
fn worktree_world() -> (World, PathBuf, PathBuf) {
    let world = World::new(false);
    let main = world.env.root.path().join("main");
    std::fs::create_dir_all(&main).expect("main");
    std::fs::write(main.join("README"), "main\n").expect("readme");
    std::fs::create_dir_all(main.join(".planning")).expect("planning");
    std::fs::write(main.join(".planning/config.json"), "{}").expect("config");
    git(&main, &["init", "-q"]);
    git(&main, &["add", "."]);
    git(&main, &["commit", "-q", "-m", "initial"]);
    let wt = world.env.root.path().join("wt");
    git(&main, &["worktree", "add", "-q", &wt.display().to_string()]);
    assert!(
        wt.join(".git").is_file(),
        "a linked worktree has a .git file"
    );
    (world, main, wt)
}

#[test]
fn a_linked_worktree_keeps_its_git_dir_and_common_dir_read_only() {
    let (world, main, wt) = worktree_world();
    let m = main.display();
    world.install(&[
        (
            "common-hook",
            format!("echo evil > '{m}/.git/hooks/pre-commit'"),
        ),
        ("common-config", format!("echo '[x]' >> '{m}/.git/config'")),
        (
            "worktree-head",
            format!("echo x >> '{m}/.git/worktrees/wt/HEAD'"),
        ),
        (
            "worktree-file",
            format!("echo x > '{m}/.git/worktrees/wt/planted'"),
        ),
    ]);
    world.run_acme(&wt, &[]);
    assert_all(
        &world.attempts(),
        &[
            "common-hook",
            "common-config",
            "worktree-head",
            "worktree-file",
        ],
        "refused",
    );
    assert!(!main.join(".git/hooks/pre-commit").exists());
}

#[test]
fn a_git_file_naming_the_home_or_the_root_stops_the_run_before_any_lane() {
    let (world, _main, wt) = worktree_world();
    world.install(&[("started", "true".to_owned())]);
    for target in [world.env.home.display().to_string(), "/".to_owned()] {
        std::fs::write(wt.join(".git"), format!("gitdir: {target}\n")).expect(".git");
        let run_dir = world.run_dir.display().to_string();
        let out = world.run_in(&wt, &["run", "acme", "--run-dir", &run_dir]);
        assert_eq!(out.code, Some(1), "{target}: {}", out.stderr);
        assert!(
            out.stderr.contains(".git names") && out.stderr.contains("no lane was started"),
            "{}",
            out.stderr
        );
        assert!(world.attempts().is_empty(), "the lane started");
        // `--sandbox off` runs (nothing is confined, so nothing needs deciding).
        let out = world.run_in(
            &wt,
            &["run", "acme", "--run-dir", &run_dir, "--sandbox", "off"],
        );
        out.assert_status(0);
        std::fs::remove_file(world.env.home.join("attempts.log")).expect("log");
    }
}

#[test]
fn a_run_dir_inside_the_repository_grants_only_the_lanes_own_files() {
    let world = World::new(true);
    std::fs::write(
        world.env.project.join("docs/gsd-review-prompt.md"),
        "Review.\n",
    )
    .expect("prompt");
    let p = world.env.project.display();
    world.install(&[
        ("plan-beside", format!("echo forged >> '{p}/docs/PLAN.md'")),
        ("new-beside", format!("echo x > '{p}/docs/new.md'")),
        ("tmpdir", "t=$(mktemp) && echo x > \"$t\"".to_owned()),
    ]);
    let out = world.run_in(
        &world.env.project,
        &["run", "acme", "--json", "--run-dir", "docs"],
    );
    out.assert_status(0);
    let result = out.json();
    assert_eq!(result["stubbed"], json!(false), "{result}");
    let attempts = world.attempts();
    assert_all(&attempts, &["plan-beside", "new-beside"], "refused");
    assert_all(&attempts, &["tmpdir"], "changed");
    assert_eq!(
        util::read_text(&world.env.project.join("docs/PLAN.md")),
        "# Plan\n"
    );
    assert!(
        util::read_text(&world.env.project.join("docs/gsd-review-acme.md"))
            .contains("All attempts logged.")
    );

    // Detection covers the rest of that directory.
    let out = world.run_in(
        &world.env.project,
        &[
            "run",
            "acme",
            "--json",
            "--run-dir",
            "docs",
            "--sandbox",
            "detect",
        ],
    );
    out.assert_status(0);
    let text = changes(&out.json());
    assert!(text.contains("modified docs/PLAN.md"), "{text}");
    assert!(text.contains("created docs/new.md"), "{text}");
    assert!(!text.contains("gsd-review-acme"), "{text}");
}

#[test]
fn invoke_from_a_phase_directory_cannot_rewrite_the_plans() {
    // `invoke`'s run dir is `.`, the phase directory: the plan beside the lane's files and the
    // rest of the project stay read-only, with or without `--repo-root`.
    let world = World::new(true);
    let project = world.env.project.display().to_string();
    let phase = world.env.project.join(".planning/phases/01-core");
    std::fs::create_dir_all(&phase).expect("phase");
    std::fs::write(phase.join("01-01-PLAN.md"), "# Plan\n").expect("plan");
    std::fs::write(
        world.env.project.join(".planning/ROADMAP.md"),
        "# Roadmap\n",
    )
    .expect("map");
    std::fs::write(phase.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
    let plan = phase.join("01-01-PLAN.md");
    world.install(&[
        ("plan", format!("echo forged >> '{}'", plan.display())),
        (
            "roadmap",
            format!("echo forged >> '{project}/.planning/ROADMAP.md'"),
        ),
    ]);
    for extra in [&[][..], &["--repo-root", project.as_str()][..]] {
        let mut args = vec!["invoke", "--slug", "acme"];
        args.extend_from_slice(extra);
        let out = world.run_in(&phase, &args);
        out.assert_status(0);
        assert_all(&world.attempts(), &["plan", "roadmap"], "refused");
        assert_eq!(util::read_text(&plan), "# Plan\n");
    }

    let out = world.run_in(
        &phase,
        &[
            "invoke",
            "--slug",
            "acme",
            "--repo-root",
            &project,
            "--sandbox",
            "detect",
        ],
    );
    out.assert_status(0);
    let text = changes(&out.json());
    assert!(
        text.contains("modified .planning/phases/01-core/01-01-PLAN.md"),
        "{text}"
    );
    assert!(text.contains("modified .planning/ROADMAP.md"), "{text}");
    assert!(!text.contains("gsd-review-acme"), "{text}");
}

#[test]
fn each_reviewer_writes_only_its_own_files() {
    // Each lane finds the run dir from its stdin (the prompt file) and tries to forge the other
    // lane's review, rewrite the shared prompt and plant a file; its own TMPDIR stays usable.
    let body = |other: &str| {
        format!(
            "name=$(basename \"$0\")\nlog=\"$HOME/attempts-$name.log\"\n: > \"$log\"\n\
             run=$(dirname \"$(readlink /proc/$$/fd/0)\")\n\
             try() {{ n=$1; shift; if sh -c \"$1\" >/dev/null 2>&1; then echo \"changed $n\" >> \"$log\"; else echo \"refused $n\" >> \"$log\"; fi; }}\n\
             try other \"echo forged > '$run/gsd-review-{other}.md'\"\n\
             try prompt \"echo forged >> '$run/gsd-review-prompt.md'\"\n\
             try plant \"echo x > '$run/planted'\"\n\
             try tmpdir 't=$(mktemp) && echo x > \"$t\"'\n\
             echo \"done all\" >> \"$log\"\n\
             cat > /dev/null\necho '# Review'\necho \"review by $name\"\n"
        )
    };
    let (one, two) = (body("two"), body("one"));
    let (env, bin) = review_lab(&[("one", one.as_str()), ("two", two.as_str())]);
    let (out, _) = util::run_bounded(
        review_command(
            &env,
            &bin,
            &["--phase", "3", "--one", "--two", "--jobs", "1"],
        ),
        COMMAND_TIMEOUT,
    );
    out.assert_no_panic().assert_status(0);
    for name in ["fake-one", "fake-two"] {
        let attempts = read_attempts(&env.home.join(format!("attempts-{name}.log")));
        assert_all(&attempts, &["other", "prompt", "plant"], "refused");
        assert_all(&attempts, &["tmpdir"], "changed");
    }
    let reviews = util::read_text(
        &env.project
            .join(".planning/phases/03-billing/03-REVIEWS.md"),
    );
    assert!(!reviews.contains("forged"), "{reviews}");
    assert!(
        reviews.contains("review by fake-one") && reviews.contains("review by fake-two"),
        "{reviews}"
    );
}

#[test]
fn gsd_lanes_own_trust_state_is_read_only_for_lanes() {
    let world = World::new(true);
    let gsd = world.env.gsd_home.join(".gsd");
    let g = gsd.display();
    world.install(&[
        ("consent", format!("echo '{{}}' > '{g}/consent.json'")),
        ("pins", format!("echo '{{}}' > '{g}/egress-pins.json'")),
        (
            "overlay",
            format!("mkdir -p '{g}/capabilities/evil' && echo '{{}}' > '{g}/capabilities/evil/capability.json'"),
        ),
        (
            "own-overlay",
            format!("echo '{{}}' > '{g}/capabilities/acme-review/capability.json'"),
        ),
        ("locks", format!("mkdir -p '{g}/locks/x'")),
    ]);
    let before = util::read_text(&gsd.join("capabilities/acme-review/capability.json"));
    world.run_acme(&world.env.project, &[]);
    assert_all(
        &world.attempts(),
        &["consent", "pins", "overlay", "own-overlay", "locks"],
        "refused",
    );
    assert!(!gsd.join("consent.json").exists());
    assert!(!gsd.join("capabilities/evil").exists());
    assert_eq!(
        util::read_text(&gsd.join("capabilities/acme-review/capability.json")),
        before
    );
}

#[test]
fn allow_repository_writes_from_the_repository_is_announced_on_every_run() {
    let world = World::new(true);
    world.install(&[]);
    std::fs::write(
        world.env.project.join(".planning/config.json"),
        r#"{"review": {"allow_repository_writes": ["acme", "x\u001b[2J"]}}"#,
    )
    .expect("config");
    let run_dir = world.run_dir.display().to_string();
    for extra in [&[][..], &["--sandbox", "enforce"][..]] {
        let mut args = vec!["run", "acme", "--run-dir", &run_dir];
        args.extend_from_slice(extra);
        let out = world.run_in(&world.env.project, &args);
        out.assert_status(0);
        assert!(
            out.stderr.contains(
                "warning: .planning/config.json sets review.allow_repository_writes to [\"acme\""
            ),
            "{}\n{}",
            out.stdout,
            out.stderr
        );
        assert!(!out.stderr.contains('\u{1b}'), "{:?}", out.stderr);
    }
}

/// The lines of sh that set `wd` to the pid of this lane's watchdog: the forked one
/// (`gsd-watchdog`, a child of gsd-lane, the lane's parent here) or an executed one (found by its
/// token).
const FIND_WATCHDOG: &str = "wd=\"\"\nfor d in /proc/[0-9]*; do if [ \"$(cat $d/comm 2>/dev/null)\" = gsd-watchdog ] && [ \"$(cut -d' ' -f4 $d/stat 2>/dev/null)\" = \"$PPID\" ]; then wd=${d#/proc/}; fi; done\nfor f in $(grep -a -l -F -- \"$GSD_LANE_WATCHDOG\" $(grep -a -l -F -- __lane-watchdog /proc/[0-9]*/cmdline 2>/dev/null) 2>/dev/null); do d=${f%/cmdline}; wd=${d#/proc/}; done\n";

#[test]
fn under_detect_and_off_a_lane_cannot_reach_the_watchdogs_pipe_through_proc() {
    let world = World::new(true);
    for mode in ["detect", "off"] {
        let script = format!(
            "#!/bin/sh\nlog=\"$HOME/attempts.log\"\n: > \"$log\"\n{FIND_WATCHDOG}\
             [ -n \"$wd\" ] && echo \"changed found-watchdog\" >> \"$log\"\n\
             if (printf -- '-%s\\n' $$ > /proc/$wd/fd/0) 2>/dev/null; then echo \"changed watchdog-pipe\" >> \"$log\"; else echo \"refused watchdog-pipe\" >> \"$log\"; fi\n\
             opened=refused\nfor f in /proc/$PPID/fd/*; do if (: >> \"$f\") 2>/dev/null; then opened=changed; fi; done\n\
             echo \"$opened gsd-lane-fds\" >> \"$log\"\n\
             echo \"done all\" >> \"$log\"\ncat > /dev/null\necho '# Review'\n"
        );
        let path = world.bin.join("acme");
        std::fs::write(&path, script).expect("script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let mut lane = util::acme();
        lane["reviewer"]["invoke"]["args"] = json!(["-"]);
        world.env.write_overlay(Scope::Global, "acme-review", &lane);
        let path_var = format!("{}:/usr/bin:/bin", world.bin.display());
        let run_dir = world.run_dir.display().to_string();
        let args = [
            "run",
            "acme",
            "--json",
            "--run-dir",
            &run_dir,
            "--sandbox",
            mode,
        ];
        let command = without_capabilities(&world.env, &path_var, &world.env.project, &args);
        let (out, _) = util::run_bounded(command, COMMAND_TIMEOUT);
        out.assert_no_panic().assert_status(0);
        let attempts = world.attempts();
        assert_all(&attempts, &["found-watchdog"], "changed");
        assert_all(&attempts, &["watchdog-pipe", "gsd-lane-fds"], "refused");
    }
}

/// `gsd-lane <args>` as [`util::gsd_command`] makes it, but when the tests run as root, with
/// every capability dropped (`setpriv`): a process with `CAP_SYS_PTRACE` reaches any other
/// process's `/proc/<pid>/fd` whatever it does, and the attack is that of a lane running as the
/// same ordinary user.
fn without_capabilities(env: &TestEnv, path: &str, dir: &Path, args: &[&str]) -> Command {
    if !rustix::process::geteuid().is_root() {
        return util::gsd_command(env, path, dir, args);
    }
    let mut command = Command::new("/usr/bin/setpriv");
    command
        .env_clear()
        .env("PATH", path)
        .env("HOME", &env.home)
        .env("GSD_HOME", &env.gsd_home)
        .current_dir(dir)
        .args(["--bounding-set=-all", "--inh-caps=-all", "--"])
        .arg(util::bin())
        .args(args);
    command
}

/// Whether this kernel scopes signals (Landlock ABI 6 or later).
fn signals_can_be_scoped() -> bool {
    use landlock::{CompatLevel, Compatible, Ruleset, RulesetAttr, Scope};
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .scope(Scope::Signal)
        .and_then(Ruleset::create)
        .is_ok()
}

#[test]
fn under_enforce_a_lane_cannot_stop_gsd_lane_or_its_watchdog() {
    // The read-only view (the default where namespaces are allowed): the lane's PID namespace
    // holds no gsd-lane and no watchdog to name.
    lane_cannot_signal_gsd_lane(false);
    // The Landlock fallback: signals are scoped where Landlock ABI 6 exists.
    if signals_can_be_scoped() {
        lane_cannot_signal_gsd_lane(true);
    } else {
        println!(
            "SKIPPED the Landlock half of under_enforce_a_lane_cannot_stop_gsd_lane_or_its_watchdog: \
             this kernel has no Landlock ABI 6 (signal scoping)"
        );
    }
}

/// The watchdog of the gsd-lane whose `HOME` is `home`, found from this side.
fn watchdog_of(home: &Path) -> Option<u32> {
    util::processes_with_home(home)
        .into_iter()
        .find(|pid| util::is_watchdog(*pid))
}

/// A lane told the real pids of gsd-lane and its watchdog (by the test, in a file under its
/// `HOME`: under the view it could not find them itself) tries to stop and signal them.
fn lane_cannot_signal_gsd_lane(landlock: bool) {
    let world = World::new(true);
    let script = "#!/bin/sh\nlog=\"$HOME/attempts.log\"\n: > \"$log\"\n\
         while [ ! -s \"$HOME/targets\" ]; do sleep 0.05; done\n\
         read gsd wd < \"$HOME/targets\"\n\
         if kill -STOP \"$gsd\" 2>/dev/null; then echo \"changed stop-gsd-lane\" >> \"$log\"; else echo \"refused stop-gsd-lane\" >> \"$log\"; fi\n\
         if kill -STOP \"$wd\" 2>/dev/null; then echo \"changed stop-watchdog\" >> \"$log\"; else echo \"refused stop-watchdog\" >> \"$log\"; fi\n\
         if kill -0 \"$gsd\" 2>/dev/null; then echo \"changed signal-gsd-lane\" >> \"$log\"; else echo \"refused signal-gsd-lane\" >> \"$log\"; fi\n\
         echo \"done all\" >> \"$log\"\ncat > /dev/null\necho '# Review'\n";
    let path = world.bin.join("acme");
    std::fs::write(&path, script).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut lane = util::acme();
    lane["reviewer"]["invoke"]["args"] = json!(["-"]);
    world.env.write_overlay(Scope::Global, "acme-review", &lane);
    let run_dir = world.run_dir.display().to_string();
    let path_var = format!("{}:/usr/bin:/bin", world.bin.display());
    let mut command = util::gsd_command(
        &world.env,
        &path_var,
        &world.env.project,
        &["run", "acme", "--json", "--run-dir", &run_dir],
    );
    if landlock {
        command.env("GSD_LANE_NO_NAMESPACES", "1");
    }
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gsd-lane");
    let gsd = child.id();
    let until = Instant::now() + COMMAND_TIMEOUT;
    let watchdog = loop {
        if let Some(pid) = watchdog_of(&world.env.home) {
            break pid;
        }
        assert!(Instant::now() < until, "no watchdog started");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::fs::write(
        world.env.home.join("targets"),
        format!("{gsd} {watchdog}\n"),
    )
    .expect("targets");
    // Wait for the lane's log; then continue whatever it may have stopped, so that a failing
    // run fails instead of hanging.
    while !world.attempts().contains_key("all") && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in [gsd, watchdog] {
        let _ = Command::new("kill")
            .args(["-CONT", &pid.to_string()])
            .status();
    }
    let out = util::finish_bounded(child, "gsd-lane run acme".to_owned(), COMMAND_TIMEOUT);
    out.assert_no_panic().assert_status(0);
    let attempts = world.attempts();
    assert_all(
        &attempts,
        &["stop-gsd-lane", "stop-watchdog", "signal-gsd-lane"],
        "refused",
    );
}
