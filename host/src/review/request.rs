//! Stage 1 of a review: the request. The user's arguments checked, the config loaded, a
//! `--resume` merged with the recorded run, the sandbox mode and the subject resolved.

use super::args::{self, ReviewArgs};
use super::exit::Exit;
use super::notice::{Level, Notice, Notices};
use super::resume::PastRun;
use super::subject::{self, usage, Subject};
use crate::config::ProjectConfig;
use crate::context::Context;
use crate::error::Failure;
use crate::registry::Registry;
use crate::sandbox::SandboxMode;

/// A review request ready for selection.
pub struct Request {
    /// The arguments (a resumed run's recorded ones, with this invocation's on top).
    pub args: ReviewArgs,
    /// The lanes.
    pub registry: Registry,
    /// Project configuration.
    pub config: ProjectConfig,
    /// The run a `--resume` continues.
    pub past: Option<PastRun>,
    /// How spawned lanes are confined.
    pub sandbox: SandboxMode,
    /// What is reviewed.
    pub subject: Subject,
    /// What the review says, printed at its boundaries.
    pub notices: Notices,
    /// Every named lane runs whatever another one did ([`ReviewArgs::keep_going`], as this
    /// invocation gave it: a resumed run's record does not hold it).
    pub keep_going: bool,
}

/// Resolves the request, or the exit of a review that stops before selection.
///
/// # Errors
///
/// Usage errors, an unusable config, a run that cannot be resumed, an unreadable subject.
pub fn resolve(
    context: &Context,
    given: &ReviewArgs,
    notices: &Notices,
) -> Result<Result<Request, Exit>, Failure> {
    let registry = context.registry();
    if !given.collisions_said {
        for warning in args::collisions(&context.command_line(), &registry) {
            notices.say(Notice::new(Level::Warning, warning).once());
        }
    }
    if refuse_inactive_flags(&registry, given, notices) {
        return Ok(Err(Exit::InactiveLaneFlag));
    }
    given.check().map_err(|err| usage(&err.to_string()))?;
    let config = registry.with_lane_defaults(context.config_checked()?);
    for warning in crate::registry::retired::leftover_config_keys(&registry, config.value()) {
        notices.say(Notice::new(Level::Warning, warning).once());
    }
    let (args, past) = if given.resuming() {
        let (args, past) = resumed(context, given, &registry, &config, notices)?;
        (args, Some(past))
    } else {
        (given.clone(), None)
    };
    // The sandbox policy says its own warnings as it decides: what was said comes first.
    notices.flush();
    let sandbox = crate::sandbox::policy::run_mode(&config, args.sandbox)
        .map_err(|err| usage(&err.to_string()))?;
    super::captured::inline_bound(&config).map_err(|err| usage(&err.to_string()))?;
    confine(context, sandbox)?;
    let subject = subject::locate(context, &args, &config, notices)?;
    Ok(Ok(Request {
        args,
        registry,
        config,
        past,
        sandbox,
        subject,
        notices: notices.clone(),
        keep_going: given.keep_going,
    }))
}

/// Decides what the lanes of this review may not write: the project, the git top levels of the
/// working directory and the project, the repository root the plans name, their git dirs.
fn confine(context: &Context, sandbox: SandboxMode) -> Result<(), Failure> {
    let repo_root = std::path::PathBuf::from(subject::repo_root(&context.env.cwd));
    context.confine_command(sandbox, &repo_root)
}

/// `--resume`: the recorded run and its own arguments merged with this invocation's.
fn resumed(
    context: &Context,
    given: &ReviewArgs,
    registry: &Registry,
    config: &ProjectConfig,
    notices: &Notices,
) -> Result<(ReviewArgs, PastRun), Failure> {
    let key = if given.phase.is_some() || given.prompt_file.is_some() {
        let mut lookup = given.clone();
        lookup.out.get_or_insert_with(|| ".".to_owned());
        Some(subject::locate(context, &lookup, config, notices)?.key())
    } else {
        None
    };
    let ledger_root = super::ledger::root(&context.env)?;
    let past =
        super::continuation::target(given, key.as_ref(), &context.env.cwd, &ledger_root, notices)?;
    let args = super::continuation::merged_request(
        &past,
        given,
        registry,
        context.command_line(),
        notices,
    )?;
    Ok((args, past))
}

/// Lane flags naming lanes that exist but are not active: each reported with its reason, its
/// source file and the fixing command; true when there is any (the review stops before
/// anything is invoked).
fn refuse_inactive_flags(registry: &Registry, request: &ReviewArgs, notices: &Notices) -> bool {
    let mut any = false;
    for flag in &request.inactive_flags {
        if let Some(entry) = crate::registry::inactive::by_flag(registry, flag) {
            notices.error(format!(
                "{flag}: {}; nothing was invoked",
                crate::registry::inactive::explain(entry)
            ));
            any = true;
        } else if let Some(retired) = crate::registry::retired::by_flag(registry, flag) {
            notices.error(format!(
                "{flag}: {}; nothing was invoked",
                retired.explain()
            ));
            any = true;
        }
    }
    any
}
