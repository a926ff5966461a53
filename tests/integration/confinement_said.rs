//! Which confinement applied is said (issue 25 item 1): `run`'s report, `run --json` and
//! `invoke --json` (a `sandbox` member: mode and mechanism), `doctor` (text and `--json`: what
//! this machine will use and why), and one line at the top of REVIEWS.md. The mechanism said
//! must be the one this machine has: the read-only view where user namespaces are allowed
//! (checked independently with util-linux), else Landlock; `GSD_LANE_NO_NAMESPACES` forces the
//! fallback, which must then be said with its reason.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{self, Scope, TestEnv};
use crate::view::view_available;

const TIMEOUT: Duration = Duration::from_secs(60);

/// Where user namespaces are refused, the fallback (this machine is expected to have Landlock).
fn expected_mechanism() -> &'static str {
    if view_available() {
        "view"
    } else {
        "landlock"
    }
}

/// A project under `$HOME/code/proj` with lane `acme` (a sh script that prints a review).
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
        std::fs::create_dir_all(repo.join(".git")).expect("repo");
        std::fs::create_dir_all(repo.join(".planning")).expect("planning");
        let run_dir = env.root.path().join("run");
        let bin = env.root.path().join("bin");
        for dir in [&run_dir, &bin] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review.\n").expect("prompt");
        let script = bin.join("acme");
        std::fs::write(&script, "#!/bin/sh\ncat >/dev/null\necho '# Review'\n").expect("lane");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let mut lane = util::acme();
        lane["reviewer"]["invoke"]["args"] = json!(["-"]);
        env.write_overlay(Scope::Global, "acme-review", &lane);
        Lab {
            env,
            repo,
            run_dir,
            bin,
        }
    }

    fn gsd(&self, args: &[&str], vars: &[(&str, &str)]) -> util::Outcome {
        let path = format!("{}:/usr/bin:/bin:/usr/sbin:/sbin", self.bin.display());
        let mut command = util::gsd_command(&self.env, &path, &self.repo, args);
        command.envs(vars.iter().copied());
        let (out, _) = util::run_bounded(command, TIMEOUT);
        out.assert_no_panic();
        out
    }

    /// `run acme --json` (or `invoke --slug acme --json`) with `extra`; the `sandbox` member.
    fn sandbox_of(&self, invoke: bool, extra: &[&str], vars: &[(&str, &str)]) -> Value {
        let run_dir = self.run_dir.display().to_string();
        let mut args = if invoke {
            vec!["invoke", "--slug", "acme"]
        } else {
            vec!["run", "acme"]
        };
        args.extend_from_slice(&["--json", "--run-dir", &run_dir]);
        args.extend_from_slice(extra);
        let out = self.gsd(&args, vars);
        out.assert_status(0);
        let mut result = out.json_raw();
        util::take_sandbox(&mut result).unwrap_or_else(|| panic!("no sandbox: {}", out.stdout))
    }
}

#[test]
fn run_and_invoke_json_say_the_mode_and_the_mechanism_that_confined_the_lane() {
    let lab = Lab::new();
    let mechanism = expected_mechanism();
    for invoke in [false, true] {
        let sandbox = lab.sandbox_of(invoke, &[], &[]);
        assert_eq!(sandbox["mode"], "enforce", "{sandbox}");
        assert_eq!(sandbox["mechanism"], mechanism, "{sandbox}");
        let forced = lab.sandbox_of(invoke, &[], &[("GSD_LANE_NO_NAMESPACES", "1")]);
        assert_eq!(forced["mechanism"], "landlock", "{forced}");
        for (mode, flag) in [("detect", "detect"), ("off", "off")] {
            let sandbox = lab.sandbox_of(invoke, &["--sandbox", flag], &[]);
            assert_eq!(
                (&sandbox["mode"], &sandbox["mechanism"]),
                (&json!(mode), &json!("none")),
                "{sandbox}"
            );
        }
    }
    // The person's report says it too.
    let run_dir = lab.run_dir.display().to_string();
    let out = lab.gsd(&["run", "acme", "--run-dir", &run_dir], &[]);
    out.assert_status(0);
    assert!(
        out.stdout
            .lines()
            .any(|line| line.starts_with("sandbox   enforce (")
                && line.ends_with(&format!(", mechanism {mechanism}"))),
        "{}",
        out.stdout
    );
}

#[test]
fn doctor_says_which_mechanism_this_machine_uses_and_why() {
    let lab = Lab::new();
    let row = |vars: &[(&str, &str)]| -> Value {
        let out = lab.gsd(&["doctor", "acme", "--json"], vars);
        out.assert_status(0);
        out.json_raw()[0]["sandbox"].clone()
    };
    let native = row(&[]);
    assert_eq!(native["mode"], "enforce", "{native}");
    assert_eq!(native["mechanism"], expected_mechanism(), "{native}");
    let forced = row(&[("GSD_LANE_NO_NAMESPACES", "1")]);
    assert_eq!(forced["mechanism"], "landlock", "{forced}");
    let why = forced["why"].as_str().unwrap_or_default();
    assert!(
        why.contains("the read-only view is refused: GSD_LANE_NO_NAMESPACES is set")
            && why.contains("Landlock ABI"),
        "{forced}"
    );
    std::fs::write(
        lab.repo.join(".planning/config.json"),
        r#"{"review": {"sandbox": "off"}}"#,
    )
    .expect("config");
    let off = row(&[]);
    assert_eq!(
        (&off["mode"], &off["mechanism"]),
        (&json!("off"), &json!("none")),
        "{off}"
    );
    assert!(
        off["why"]
            .as_str()
            .unwrap_or_default()
            .contains("review.sandbox is off"),
        "{off}"
    );
    std::fs::remove_file(lab.repo.join(".planning/config.json")).expect("config");
    let text = lab.gsd(&["doctor", "acme"], &[("GSD_LANE_NO_NAMESPACES", "1")]);
    assert!(
        text.stdout
            .lines()
            .any(|line| line.starts_with("sandbox      enforce (Landlock")
                && line.contains("mechanism landlock (the read-only view is refused")),
        "{}",
        text.stdout
    );
}

#[test]
fn reviews_md_says_the_sandbox_under_its_frontmatter() {
    let lab = crate::review::Lab::new();
    lab.lane("alpha", |_| {});
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_status(0);
    let line = "> Sandbox: enforce (";
    let reviews = lab.reviews();
    let after_frontmatter = reviews
        .split("\n---\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{reviews}"));
    let said = after_frontmatter
        .lines()
        .find(|l| l.starts_with("> Sandbox:"))
        .unwrap_or_else(|| panic!("no sandbox line: {reviews}"));
    assert!(
        said.starts_with(line) && said.ends_with(&format!("mechanism {}", expected_mechanism())),
        "{said}"
    );
    let out = lab.review(&["--phase", "3", "--all", "--sandbox", "off"]);
    out.assert_status(0);
    assert!(
        lab.reviews().contains("\n> Sandbox: off, mechanism none\n"),
        "{}",
        lab.reviews()
    );
}
