//! The `gsd-lane` binary: parse, run, print the error once, map the exit status.

use std::process::ExitCode;

use clap::Parser;
use gsd_lane::cli::Cli;

fn main() -> ExitCode {
    // gsd-lane re-executed as a lane's launcher (sandbox/launcher.rs): nothing else runs.
    if let Some(status) = gsd_lane::sandbox::launcher::run_if_launcher() {
        return ExitCode::from(status);
    }
    gsd_lane::sandbox::launcher::enable();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(usage_status(&err));
        }
    };
    match gsd_lane::app::run(cli, gsd_lane::project::HostEnv::from_process()) {
        Ok(status) => ExitCode::from(status),
        Err(failure) => {
            gsd_lane::output::eprint_line(&format!("gsd-lane: {failure}"));
            ExitCode::from(failure.status)
        }
    }
}

/// Exit status of a command-line error: 0 for `--help`/`--version`, 1 for usage errors of
/// `run`/`invoke` (invocation.md §14), 2 for every other command.
fn usage_status(err: &clap::Error) -> u8 {
    if !err.use_stderr() {
        return 0;
    }
    let lane_command = std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with('-'))
        .is_some_and(|command| command == "run" || command == "invoke");
    if lane_command {
        1
    } else {
        2
    }
}
