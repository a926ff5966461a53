//! `examples/demo.sh` finds the binary wherever cargo's target directory is.
//!
//! A stand-in `cargo` on PATH answers `build` (nothing to do) and `metadata` (a target
//! directory outside the workspace holding the real binary), as cargo does when
//! `CARGO_TARGET_DIR` or `build.target-dir` moves the target directory.

use std::process::Command;
use std::time::Duration;

use crate::util::{self, run_bounded, TestEnv};

#[test]
fn demo_finds_the_binary_in_a_moved_target_directory() {
    let env = TestEnv::new();
    let target = env.root.path().join("elsewhere-target");
    let release = target.join("release");
    std::fs::create_dir_all(&release).expect("create target dir");
    std::os::unix::fs::symlink(util::bin(), release.join("gsd-lane")).expect("link binary");
    let fake_bin = env.root.path().join("fake-bin");
    std::fs::create_dir_all(&fake_bin).expect("create fake bin");
    let cargo = fake_bin.join("cargo");
    let log = env.root.path().join("cargo.log");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{log}'\ncase \"$1\" in\n  build) exit 0 ;;\n  metadata) printf '{{\"packages\":[],\"target_directory\":\"{target}\",\"version\":1}}\\n' ;;\n  *) exit 3 ;;\nesac\n",
            log = log.display(),
            target = target.display()
        ),
    )
    .expect("write fake cargo");
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod fake cargo");

    let mut command = Command::new("bash");
    command
        .arg(util::workspace_root().join("examples").join("demo.sh"))
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", fake_bin.display()))
        .env("HOME", &env.home)
        .env("TMPDIR", env.root.path())
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&env.project);
    let (out, _) = run_bounded(command, Duration::from_secs(60));
    out.assert_status(0);
    assert!(
        out.stdout.contains("REVIEWS.md: ") && out.stdout.contains("03-REVIEWS.md"),
        "the demo prints where REVIEWS.md is:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stderr.contains("first build"),
        "the demo says how long a first build takes:\n{}",
        out.stderr
    );
    let calls = util::read_text(&log);
    assert!(calls.contains("build --locked --release"), "{calls}");
    assert!(
        calls.contains("metadata --format-version 1 --no-deps"),
        "{calls}"
    );
}
