//! Read-only commands look lane programs up on `PATH` but never start them: a lane's program is
//! untrusted, and only `doctor` (which says so) runs its `--version`, and only `run`, `invoke`
//! and `review` run the lane. The program here records every start in a marker file; `doctor`
//! is the control that shows the test can see a start.

use std::path::{Path, PathBuf};

use crate::util::{self, Scope, TestEnv};

/// An environment with the acme overlay and an `acme` program that records each start.
struct Lab {
    env: TestEnv,
    programs: PathBuf,
    marker: PathBuf,
}

impl Lab {
    fn new() -> Lab {
        let env = TestEnv::with_planning();
        env.write_overlay_fixture(Scope::Global, "acme-review", "overlays/acme-review");
        let programs = env.root.path().join("programs");
        std::fs::create_dir_all(&programs).expect("programs dir");
        let marker = env.root.path().join("started");
        write_recording_program(&programs.join("acme"), &marker);
        Lab {
            env,
            programs,
            marker,
        }
    }

    fn run(&self, args: &[&str]) -> util::Outcome {
        let path = format!("{}:/usr/bin:/bin", self.programs.display());
        let command = util::gsd_command(&self.env, &path, &self.env.project, args);
        util::run_bounded(command, std::time::Duration::from_secs(30)).0
    }

    fn starts(&self) -> String {
        std::fs::read_to_string(&self.marker).unwrap_or_default()
    }
}

fn write_recording_program(path: &Path, marker: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\necho 'acme 1.0'\n",
        marker.display()
    );
    std::fs::write(path, script).expect("write program");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn read_only_commands_find_the_lane_program_without_starting_it() {
    let lab = Lab::new();
    let manifest = lab
        .env
        .capabilities_dir(Scope::Global)
        .join("acme-review/capability.json");
    let manifest = manifest.to_str().expect("utf8 path");
    let commands: &[&[&str]] = &[
        &["list"],
        &["list", "--json"],
        &["plan"],
        &["plan", "--json"],
        &["plan", "--reviewer", "acme"],
        &["disclose"],
        &["disclose", "--json"],
        &["validate", manifest],
        &["flags"],
        &["sections"],
        &["trust", "list"],
    ];
    for args in commands {
        let out = lab.run(args);
        out.assert_no_panic();
        assert_eq!(
            lab.starts(),
            "",
            "`gsd-lane {}` started the lane's program",
            args.join(" ")
        );
    }
    // `list` did find it: the lookup happened, only the start did not.
    let rows = lab.run(&["list", "--json"]).json();
    let row = util::row(rows.as_array().expect("rows"), "global", "acme-review");
    assert!(row.to_string().contains("/programs/acme"), "{row}");
    // Control: `doctor` runs the program's `--version`, and the marker shows it.
    lab.run(&["doctor"]).assert_no_panic();
    assert_eq!(
        lab.starts(),
        "--version\n",
        "doctor is expected to run `acme --version`"
    );
}
