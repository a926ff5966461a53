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
use crate::code_review::{explicit, redirect, rundir, stages, trait_gate};
use crate::error::Failure;
use crate::output::{self, neutralize};
use crate::private_fs::{self, WriteMode};
use crate::review::args::ReviewArgs;
use crate::review::exit::Exit;

/// `gsd-lane explicit-from-argv -- <args…>`: the lane flags among `args` as sorted slugs.
///
/// # Errors
///
/// Never fails; the signature matches the other commands.
pub fn explicit_from_argv(context: &Context, args: &ExplicitArgs) -> Result<u8, Failure> {
    let registry = context.registry();
    let lanes = crate::review::args::lane_flags(&registry);
    let named = explicit::from_argv(&args.args, &lanes);
    for flag in &named.held {
        output::eprint_line(&format!(
            "warning: {flag}: {}",
            held_reason(&registry, flag)
        ));
    }
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
    let dispatch = dispatch(context, args, caller).unwrap_or_else(Dispatch::rejected);
    dispatch.print(json);
    Ok(dispatch.status)
}

/// The checked call: the request written, the lanes run.
fn dispatch(
    context: &Context,
    args: &CodeReviewArgs,
    caller: Caller,
) -> Result<Dispatch, Rejection> {
    if args.cap_id.is_some() && args.point.is_none() {
        output::eprint_line(&format!("warning: {}", trait_gate::CAP_WITHOUT_POINT));
    }
    if caller == Caller::DispatchStep || args.cap_id.is_some() || args.point.is_some() {
        trait_gate::check(
            args.cap_id.as_deref(),
            args.point.as_deref(),
            &context.config(),
        )?;
    }
    let named = named_slugs(args)?;
    let inputs = Inputs::read(context, args, caller)?;
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
            ..ReviewArgs::default()
        };
        let ran = {
            let _stdout = redirect::StdoutToStderr::start();
            stages::run_lanes(context, &review_args, &inputs.root, &run_dir)
        };
        let ran = ran?;
        dispatch.lanes.extend(ran.lanes);
        dispatch.status = ran.exit.map_or(2, Exit::status);
        dispatch.findings_path = out.is_file().then_some(out).filter(|_| ran.wrote);
        dispatch.detail = ran.detail;
    }
    dispatch.ok =
        dispatch.status == 0 && !dispatch.lanes.is_empty() && dispatch.lanes.iter().all(|l| l.ok);
    if !dispatch.ok && dispatch.status == 0 {
        dispatch.status = 2;
    }
    Ok(dispatch)
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
        for slug in explicit::parse_csv(csv)? {
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
