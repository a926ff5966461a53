//! `gsd-lane code-review` (and `dispatch-step`, the upstream's spelling for the workflow):
//! review a set of changed files with the explicitly selected lanes (upstream-since-2026-08.md
//! §8, decisions.md row 19), and `gsd-lane explicit-from-argv`.
//!
//! The call is checked first (the trait, the selection, the inputs: `crate::code_review`), then
//! the bounded request is written once to `<run dir>/gsd-review-prompt.md` and reviewed through
//! the stages of `review` ([`crate::code_review::stages`]): the same consent, sandbox, watchdog,
//! parallel bound, run record, budget step and panel verdict. What the lanes return is
//! untrusted: each review is copied into the run dir and its finding lines are read with every
//! check of `crate::code_review::findings`.

use super::Context;
use crate::code_review::args::{Caller, CodeReviewArgs, ExplicitArgs};
use crate::code_review::inputs::Inputs;
use crate::code_review::outcome::{Dispatch, LaneOutcome};
use crate::code_review::prompt;
use crate::code_review::reason::{LaneReason, Rejection, WholeReason};
use crate::code_review::{explicit, redirect, resume, rundir, stages, trait_gate};
use crate::error::Failure;
use crate::output::{self, neutralize};
use crate::private_fs::{self, WriteMode};
use crate::review::args::ReviewArgs;
use crate::review::exit::Exit;
use crate::review::notice::Notices;

/// `gsd-lane explicit-from-argv -- <args…>`: the lane flags among `args` as sorted slugs.
///
/// # Errors
///
/// Never fails; the signature matches the other commands.
pub fn explicit_from_argv(context: &Context, args: &ExplicitArgs) -> Result<u8, Failure> {
    let registry = context.registry();
    let notices = Notices::for_context(context);
    // The flags `code-review` reads as its own options select no lane there: not here either.
    let root = context.command_line();
    for warning in crate::review::args::collisions_in(&root, &registry, "code-review") {
        notices.warn(warning);
    }
    let taken = crate::review::args::options_of(&root, "code-review");
    let mut lanes = crate::review::args::lane_flags(&registry);
    for lane in &mut lanes {
        lane.flags.retain(|flag| {
            !flag
                .strip_prefix("--")
                .is_some_and(|name| taken.contains(name))
        });
    }
    let named = explicit::from_argv(&args.args, &lanes);
    for flag in &named.held {
        notices.warn(format!("{flag}: {}", held_reason(&registry, flag)));
    }
    notices.flush();
    if args.json {
        output::print_serialized(&ExplicitOutput {
            explicit: &named.slugs,
        });
    } else if !named.slugs.is_empty() {
        output::print(&format!("{}\n", named.csv()));
    }
    Ok(0)
}

/// `explicit-from-argv --json`: the slugs the lane flags name.
#[derive(Debug, serde::Serialize)]
struct ExplicitOutput<'a> {
    /// Active lanes' slugs, sorted, each once.
    explicit: &'a [String],
}

/// Why the lane of `flag` cannot run (inactive or retired).
fn held_reason(registry: &crate::registry::Registry, flag: &str) -> String {
    if let Some(entry) = crate::registry::inactive::by_flag(registry, flag) {
        crate::registry::inactive::explain(entry)
    } else if let Some(retired) = crate::registry::retired::by_flag(registry, flag) {
        retired.explain()
    } else {
        "no lane of this roster answers to it".to_owned()
    }
}

/// Runs `code-review` or `dispatch-step`.
///
/// # Errors
///
/// Never: every outcome is a [`Dispatch`], printed, with its exit status.
pub fn run(context: &Context, args: &CodeReviewArgs, caller: Caller) -> Result<u8, Failure> {
    let json = args.json || caller == Caller::DispatchStep;
    let notices = Notices::for_context(context);
    let dispatch = dispatch(context, args, caller, &notices).unwrap_or_else(Dispatch::rejected);
    notices.flush();
    dispatch.print(json, &notices);
    Ok(dispatch.status)
}

/// The checked call: the request written, the lanes run.
fn dispatch(
    context: &Context,
    args: &CodeReviewArgs,
    caller: Caller,
    notices: &Notices,
) -> Result<Dispatch, Rejection> {
    if args.cap_id.is_some() && args.point.is_none() {
        notices.warn(trait_gate::CAP_WITHOUT_POINT);
    }
    if caller == Caller::DispatchStep || args.cap_id.is_some() || args.point.is_some() {
        trait_gate::check(
            args.cap_id.as_deref(),
            args.point.as_deref(),
            &context.config(),
        )?;
    }
    // A lane flag that is an option of this command does not select its lane: said, as
    // `review` says it of its own options.
    for warning in crate::review::args::collisions_in(
        &context.command_line(),
        &context.registry(),
        caller.command(),
    ) {
        notices.warn(warning);
    }
    if let Some(given) = &args.resume {
        return resume_call(context, args, given, notices);
    }
    let named = named_slugs(args)?;
    let inputs = Inputs::read(context, args, caller, notices)?;
    let run_dir = rundir::run_dir(context, args.run_dir.as_deref())?;
    let prompt_path = write_request(&run_dir, &inputs)?;
    let out = args.out.as_ref().map_or_else(
        || run_dir.join("REVIEWS.md"),
        |out| context.env.cwd.join(out),
    );
    let mut dispatch = Dispatch {
        run_dir: Some(run_dir.clone()),
        prompt_path: Some(prompt_path.clone()),
        ..Dispatch::default()
    };
    let runnable = sort_named(context, args, &named, &mut dispatch.lanes);
    if !runnable.is_empty() {
        let review_args = ReviewArgs {
            prompt_file: Some(prompt_path.display().to_string()),
            out: Some(out.display().to_string()),
            jobs: args.jobs,
            sandbox: args.sandbox,
            require_quorum: args.require_quorum,
            lanes: runnable,
            collisions_said: true,
            keep_going: true,
            ..ReviewArgs::default()
        };
        // What was said about the call is on the terminal before the lanes start.
        notices.flush();
        let ran = {
            let _stdout = redirect::StdoutToStderr::start();
            stages::run_lanes(context, &review_args, &inputs.root, Some(&run_dir), notices)
        };
        absorb(&mut dispatch, ran?);
    }
    settle(&mut dispatch);
    Ok(dispatch)
}

/// `--resume [RUN_DIR]`: the recorded call continued through the stages of `review` (its
/// `--resume`), with this invocation's lane flags (which must select the recorded lanes),
/// `--jobs`, `--sandbox` and `--require-quorum`.
fn resume_call(
    context: &Context,
    args: &CodeReviewArgs,
    given: &str,
    notices: &Notices,
) -> Result<Dispatch, Rejection> {
    let here = std::path::PathBuf::from(crate::review::subject::repo_root(&context.env.cwd));
    let root = crate::code_review::hygiene::RepoRoot::open(&here)?;
    let review_args = ReviewArgs {
        resume: Some(resume::lookup(context, given)?),
        jobs: args.jobs,
        sandbox: args.sandbox,
        require_quorum: args.require_quorum,
        lanes: args.lanes.clone(),
        inactive_flags: args.inactive_flags.clone(),
        collisions_said: true,
        keep_going: true,
        ..ReviewArgs::default()
    };
    let ran = {
        let _stdout = redirect::StdoutToStderr::start();
        stages::run_lanes(context, &review_args, &root, None, notices)
    }?;
    let mut dispatch = Dispatch {
        run_dir: ran.resumed.as_ref().map(|call| call.run_dir.clone()),
        prompt_path: ran.resumed.as_ref().map(|call| call.prompt_path.clone()),
        ..Dispatch::default()
    };
    absorb(&mut dispatch, ran);
    settle(&mut dispatch);
    Ok(dispatch)
}

/// What the stages gave back, into the result: the lanes, the exit, the findings file when
/// written, and how to continue a call whose lanes did not all finish.
fn absorb(dispatch: &mut Dispatch, ran: stages::Ran) {
    dispatch.lanes.extend(ran.lanes);
    dispatch.status = ran.exit.map_or(2, Exit::status);
    dispatch.findings_path = ran.out.filter(|out| ran.wrote && out.is_file());
    dispatch.detail = ran.detail;
    if ran.resumable.is_some() {
        dispatch.resume_with = dispatch
            .run_dir
            .as_ref()
            .map(|dir| format!("gsd-lane code-review --resume {}", dir.display()));
    }
}

/// `ok` (every named lane produced a real review, exit 0) and the exit status that goes with it.
fn settle(dispatch: &mut Dispatch) {
    dispatch.ok =
        dispatch.status == 0 && !dispatch.lanes.is_empty() && dispatch.lanes.iter().all(|l| l.ok);
    if !dispatch.ok && dispatch.status == 0 {
        dispatch.status = 2;
    }
}

/// Writes the request once to `<run dir>/gsd-review-prompt.md` (never through a planted link).
///
/// # Errors
///
/// `prompt_write_failed`, naming the file and the error.
fn write_request(
    run_dir: &std::path::Path,
    inputs: &Inputs,
) -> Result<std::path::PathBuf, Rejection> {
    let request = prompt::render(&prompt::Request {
        repo_root: &inputs.root.lexical.display().to_string(),
        depth: inputs.depth,
        base_sha: &inputs.base_sha,
        files: &inputs.files,
    });
    let prompt_path = run_dir.join(prompt::PROMPT_FILE);
    private_fs::write_run_file(&prompt_path, request.as_bytes(), WriteMode::Truncate).map_err(
        |err| {
            Rejection::new(
                WholeReason::PromptWriteFailed,
                format!("writing {}: {err}", prompt_path.display()),
            )
        },
    )?;
    Ok(prompt_path)
}

/// Splits the named lanes: those that cannot take part get their outcome in `failed` (an
/// inactive or retired lane's flag, an unknown slug, a lane that reads no prompt); the others
/// are returned, to run.
fn sort_named(
    context: &Context,
    args: &CodeReviewArgs,
    named: &[String],
    failed: &mut Vec<LaneOutcome>,
) -> Vec<String> {
    let registry = context.registry();
    let mut runnable = Vec::new();
    for flag in &args.inactive_flags {
        failed.push(LaneOutcome::failed(
            flag.trim_start_matches('-'),
            LaneReason::InactiveLane.as_str(),
            held_reason(&registry, flag),
        ));
    }
    for slug in named {
        match registry.lane(slug) {
            None => failed.push(unresolved(&registry, slug)),
            Some(lane) if !lane.takes_prompt() => failed.push(LaneOutcome::failed(
                slug,
                LaneReason::PromptChannelUnsupported.as_str(),
                "the lane declares promptChannel \"none\": it reviews on its own terms and cannot read a code-review request",
            )),
            Some(_) => runnable.push(slug.clone()),
        }
    }
    runnable
}

/// The explicit selection: lane flags and `--explicit`, in that order, each once.
fn named_slugs(args: &CodeReviewArgs) -> Result<Vec<String>, Rejection> {
    let mut slugs = args.lanes.clone();
    if let Some(csv) = &args.explicit {
        let listed = explicit::parse_csv(csv)?;
        for warning in explicit::named_twice(&args.lanes, &listed) {
            output::eprint_line(&format!("warning: {warning}"));
        }
        for slug in listed {
            if !slugs.contains(&slug) {
                slugs.push(slug);
            }
        }
    }
    if slugs.is_empty() && args.inactive_flags.is_empty() {
        return Err(Rejection::new(
            WholeReason::NoLanesSelected,
            "no lane was named: add lane flags (`gsd-lane flags` lists them) or --explicit <slugs>",
        ));
    }
    Ok(slugs)
}

/// The outcome of a named slug that is no active lane.
fn unresolved(registry: &crate::registry::Registry, slug: &str) -> LaneOutcome {
    if let Some(entry) = crate::registry::inactive::by_slug(registry, slug) {
        return LaneOutcome::failed(
            slug,
            LaneReason::InactiveLane.as_str(),
            crate::registry::inactive::explain(entry),
        );
    }
    if let Some(retired) = crate::registry::retired::by_slug(registry, slug) {
        return LaneOutcome::failed(slug, LaneReason::InactiveLane.as_str(), retired.explain());
    }
    LaneOutcome::failed(
        slug,
        LaneReason::UnknownLane.as_str(),
        format!(
            "no lane {} in the merged roster (`gsd-lane list` shows them)",
            neutralize(slug)
        ),
    )
}
