//! The `gsd-lane` binary: parse, run, print the error once, map the exit status.

use std::process::ExitCode;

use clap::Parser;
use gsd_lane::cli::Cli;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 2 } else { 0 });
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
