//! The `gsd-lane` binary: parse, run, print the error once, map the exit status.

use std::process::ExitCode;

use std::ffi::OsString;

use gsd_lane::api::cli::Cli;

fn main() -> ExitCode {
    gsd_lane::api::timing::start();
    // gsd-lane re-executed as the lane watchdog (sandbox/watchdog/): nothing else runs.
    if let Some(status) = gsd_lane::api::sandbox::watchdog::run_if_watchdog() {
        return ExitCode::from(status);
    }
    gsd_lane::api::sandbox::watchdog::enable();
    // A large review needs descriptors: take the soft open-file limit up to the hard one.
    gsd_lane::api::limits::raise_open_file_limit();
    let args: Vec<OsString> = std::env::args_os().collect();
    if starts_lanes(command_word(&args).as_deref()) {
        // Forked now, while gsd-lane is one thread with little memory written: every page
        // gsd-lane writes after the fork that the watchdog still shares is copied once.
        gsd_lane::api::sandbox::watchdog::start_early();
    }
    let env = gsd_lane::api::project::HostEnv::from_process();
    let lanes = gsd_lane::api::cli::lane_flags_for(&args, &env);
    gsd_lane::api::timing::mark("environment read");
    let cli = match Cli::parse_with_lanes(&args, &lanes) {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(usage_status(&err, &args));
        }
    };
    gsd_lane::api::timing::mark("command line parsed");
    let done = gsd_lane::api::cli::run(cli, env);
    gsd_lane::api::timing::mark("command done");
    match done {
        Ok(status) => ExitCode::from(status),
        Err(failure) => {
            gsd_lane::api::output::eprint_line(&format!("gsd-lane: {failure}"));
            ExitCode::from(failure.status)
        }
    }
}

/// Exit status of a command-line error: 0 for `--help`/`--version`, else
/// [`gsd_lane::api::cli::usage_status`] of the command typed.
fn usage_status(err: &clap::Error, args: &[OsString]) -> u8 {
    if !err.use_stderr() {
        return 0;
    }
    gsd_lane::api::cli::usage_status(command_word(args).as_deref())
}

/// The command typed: the first word that is neither an option nor a global option's value.
fn command_word(args: &[OsString]) -> Option<String> {
    let mut words = args.iter().skip(1);
    while let Some(arg) = words.next() {
        let text = arg.to_string_lossy();
        if matches!(text.as_ref(), "--project" | "--compat-version" | "--color") {
            words.next();
        } else if !text.starts_with('-') {
            return Some(text.into_owned());
        }
    }
    None
}

/// Whether `command` may start a lane's process (its probe or its run).
fn starts_lanes(command: Option<&str>) -> bool {
    matches!(
        command,
        Some("run" | "invoke" | "review" | "code-review" | "dispatch-step" | "doctor")
    )
}
