//! `gsd-lane code-review` (and `dispatch-step`, the upstream's spelling for the workflow):
//! review a set of changed files with the explicitly selected lanes (upstream-since-2026-08.md
//! §8, decisions.md row 19), and `gsd-lane explicit-from-argv`.
//!
//! The call is checked first (the trait, the selection, the input hygiene: `crate::code_review`),
//! then the bounded request is written once to `<run dir>/gsd-review-prompt.md` and reviewed
//! through the stages of `review` in its `--prompt-file` form (`crate::review`): the same
//! consent, sandbox, watchdog, parallel bound, run record, budget step and panel verdict. What
//! the lanes return is untrusted: each review is copied into the run dir and its finding lines
//! are read with every check of `crate::code_review::findings`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;

use super::Context;
use crate::code_review::findings;
use crate::code_review::hygiene::{self, RepoRoot};
use crate::code_review::outcome::{Dispatch, LaneOutcome};
use crate::code_review::prompt::{self, Depth};
use crate::code_review::reason::{LaneReason, Rejection, WholeReason};
use crate::code_review::{explicit, redirect, trait_gate};
use crate::error::Failure;
use crate::output::{self, neutralize};
use crate::private_fs::{self, WriteMode};
use crate::review::args::ReviewArgs;
use crate::review::choose::Chosen;
use crate::review::exit::Exit;
use crate::review::preflight::{self, Probing};
use crate::review::results::Results;
use crate::review::runner::Done;
use crate::review::selection::{self, Source};
use crate::review::{document, prepared, request, results, verdicts};

/// Arguments of `code-review` and `dispatch-step`.
#[derive(Debug, Clone, Default, Args)]
#[command(
    after_help = "Changed files come from the arguments and --files-from (one path a \
line, `-` for stdin); without either, from stdin when it is not a terminal (dispatch-step \
always reads stdin then). Paths are relative to the repository root, as `git diff --name-only \
<base>` prints them. Lanes are named by lane flags (`gsd-lane flags`) or --explicit; with none, \
nothing is dispatched (no_lanes_selected). The lanes' findings are UNVERIFIED: re-open each \
cited line before accepting one."
)]
pub struct CodeReviewArgs {
    /// Changed files (relative to the repository root, or absolute inside it).
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// Read more changed files from FILE, one a line (`-`: stdin).
    #[arg(long, value_name = "FILE")]
    pub files_from: Option<String>,
    /// The commit the changes are measured from (4-64 hex digits; required).
    #[arg(long, value_name = "SHA")]
    pub base_sha: Option<String>,
    /// `quick`, `standard` or `deep` (default: standard; anything else is read as standard).
    #[arg(long, value_name = "DEPTH")]
    pub depth: Option<String>,
    /// The repository root (default: the git top level of the working directory; it must be
    /// that directory).
    #[arg(long, value_name = "DIR")]
    pub repo_root: Option<String>,
    /// Where the request and the lanes' review copies go (default: a fresh private 0700
    /// directory under `$GSD_HOME/.gsd/code-review/`, kept and printed; a given one must be your
    /// own and not writable by others).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<String>,
    /// The workflow's working directory: checked like the other paths; it must lie inside the
    /// repository root. Lanes run from gsd-lane's working directory, as in `review`.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// Comma-separated lane slugs (what `explicit-from-argv` prints), besides any lane flags.
    #[arg(long, value_name = "SLUGS")]
    pub explicit: Option<String>,
    /// The capability whose step dispatches (with --point); required by dispatch-step.
    #[arg(long, value_name = "ID")]
    pub cap_id: Option<String>,
    /// The loop point of that step (with --cap-id); required by dispatch-step.
    #[arg(long, value_name = "POINT")]
    pub point: Option<String>,
    /// Accepted for the upstream workflow; the JSON result is always printed inline.
    #[arg(long)]
    pub raw: bool,
    /// The findings file (REVIEWS.md form with the panel verdict; default
    /// `<run dir>/REVIEWS.md`).
    #[arg(long, value_name = "FILE")]
    pub out: Option<String>,
    /// At most this many lanes at a time, as `review --jobs`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// How spawned lanes may touch the repository, as `review --sandbox`.
    #[arg(long, value_name = "MODE", value_parser = crate::sandbox::SandboxMode::parse_flag)]
    pub sandbox: Option<crate::sandbox::SandboxMode>,
    /// Exit 2 when the panel verdict's quorum is not met, as `review --require-quorum`.
    #[arg(long)]
    pub require_quorum: bool,
    /// The result as one JSON object on stdout (always, for dispatch-step).
    #[arg(long)]
    pub json: bool,
    /// Active lanes named by a lane flag, by slug (filled from the lane flags).
    #[arg(skip)]
    pub lanes: Vec<String>,
    /// Lane flags given that name a lane which exists but is not active.
    #[arg(skip)]
    pub inactive_flags: Vec<String>,
}

/// Arguments of `explicit-from-argv`.
#[derive(Debug, Clone, Default, Args)]
pub struct ExplicitArgs {
    /// `{"explicit": [...]}` instead of the comma-joined line.
    #[arg(long)]
    pub json: bool,
    /// The code-review command's arguments (after `--`).
    #[arg(last = true, value_name = "ARGS", allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Who called: a person (`code-review`) or the workflow (`dispatch-step`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// `gsd-lane code-review`: the trait is checked only when `--cap-id`/`--point` are given.
    CodeReview,
    /// `gsd-lane dispatch-step`: the trait is always checked, the result is always JSON.
    DispatchStep,
}

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
        output::print_json(&serde_json::json!({"explicit": named.slugs}));
    } else if !named.slugs.is_empty() {
        output::print(&format!("{}\n", named.csv()));
    }
    Ok(0)
}

/// Why the lane of `flag` cannot run (inactive or retired).
fn held_reason(registry: &crate::registry::Registry, flag: &str) -> String {
    if let Some(entry) = crate::app::inactive::by_flag(registry, flag) {
        crate::app::inactive::explain(entry)
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
    let run_dir = run_dir(context, args.run_dir.as_deref())?;
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
    let out = args.out.as_ref().map_or_else(
        || run_dir.join("REVIEWS.md"),
        |out| context.env.cwd.join(out),
    );
    let mut dispatch = Dispatch {
        run_dir: Some(run_dir.clone()),
        prompt_path: Some(prompt_path.clone()),
        ..Dispatch::default()
    };
    let registry = context.registry();
    let mut runnable = Vec::new();
    for flag in &args.inactive_flags {
        dispatch.lanes.push(LaneOutcome::failed(
            flag.trim_start_matches('-'),
            LaneReason::InactiveLane.as_str(),
            held_reason(&registry, flag),
        ));
    }
    for slug in &named {
        match registry.lane(slug) {
            None => dispatch.lanes.push(unresolved(&registry, slug)),
            Some(lane) if !lane.takes_prompt() => dispatch.lanes.push(LaneOutcome::failed(
                slug,
                LaneReason::PromptChannelUnsupported.as_str(),
                "the lane declares promptChannel \"none\": it reviews on its own terms and cannot read a code-review request",
            )),
            Some(_) => runnable.push(slug.clone()),
        }
    }
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
            run_lanes(context, &review_args, &inputs.root, &run_dir)
        };
        match ran {
            Ok(ran) => {
                dispatch.lanes.extend(ran.lanes);
                dispatch.status = ran.exit.map_or(2, Exit::status);
                dispatch.findings_path = out.is_file().then_some(out).filter(|_| ran.wrote);
                dispatch.detail = ran.detail;
            }
            Err(rejection) => return Err(rejection),
        }
    }
    dispatch.ok = !dispatch.lanes.is_empty() && dispatch.lanes.iter().all(|l| l.ok);
    if !dispatch.ok && dispatch.status == 0 {
        dispatch.status = 2;
    }
    Ok(dispatch)
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
    if let Some(entry) = crate::app::inactive::by_slug(registry, slug) {
        return LaneOutcome::failed(
            slug,
            LaneReason::InactiveLane.as_str(),
            crate::app::inactive::explain(entry),
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

/// The checked inputs of a call.
struct Inputs {
    root: RepoRoot,
    base_sha: String,
    depth: Depth,
    files: Vec<String>,
}

impl Inputs {
    /// Reads and checks every input (§8.2), in the order: directories, provenance, files.
    fn read(context: &Context, args: &CodeReviewArgs, caller: Caller) -> Result<Inputs, Rejection> {
        let cwd = &context.env.cwd;
        let here = PathBuf::from(crate::review::subject::repo_root(cwd));
        let root = match &args.repo_root {
            Some(given) => {
                hygiene::no_control("--repo-root", given, WholeReason::InvalidPaths)?;
                RepoRoot::open(&cwd.join(given))?
            }
            None => RepoRoot::open(&here)?,
        };
        let here_real = here.canonicalize().unwrap_or(here);
        if root.real != here_real {
            return Err(Rejection::new(
                WholeReason::InvalidPaths,
                format!(
                    "--repo-root {} is not the repository gsd-lane runs in ({}): the sandbox protects the working directory's repository, so run gsd-lane from inside the one to review",
                    neutralize(&root.lexical.display().to_string()),
                    here_real.display()
                ),
            ));
        }
        for (what, value) in [("--run-dir", &args.run_dir), ("--out", &args.out)] {
            if let Some(value) = value {
                hygiene::no_control(what, value, WholeReason::InvalidPaths)?;
            }
        }
        if let Some(given) = &args.cwd {
            hygiene::no_control("--cwd", given, WholeReason::InvalidPaths)?;
            let inside = root
                .inside(&cwd.join(given).display().to_string())
                .or_else(|err| {
                    if hygiene::normalize(&cwd.join(given)).as_deref() == Some(&root.lexical) {
                        Ok(String::new())
                    } else {
                        Err(err)
                    }
                });
            inside.map_err(|err| Rejection::new(err.reason, format!("--cwd: {}", err.detail)))?;
        }
        let base_sha = hygiene::base_sha(args.base_sha.as_deref())?;
        let depth = match args.depth.as_deref() {
            None => Depth::Standard,
            Some(text) => {
                hygiene::no_control("--depth", text, WholeReason::InvalidProvenance)?;
                Depth::parse(text).unwrap_or_else(|| {
                    output::eprint_line(&format!(
                        "warning: --depth {:?} is not quick, standard or deep; reviewing at standard depth",
                        neutralize(&text.chars().take(40).collect::<String>())
                    ));
                    Depth::Standard
                })
            }
        };
        let listed = changed_list(context, args, caller)?;
        let files = root.changed_files(&listed)?;
        Ok(Inputs {
            root,
            base_sha,
            depth,
            files,
        })
    }
}

/// The changed files as given: the arguments, `--files-from`, else stdin when it is not a
/// terminal (always for `dispatch-step`).
fn changed_list(
    context: &Context,
    args: &CodeReviewArgs,
    caller: Caller,
) -> Result<Vec<String>, Rejection> {
    let mut listed = args.files.clone();
    let from_stdin = match &args.files_from {
        Some(source) if source == "-" => true,
        Some(source) => {
            hygiene::no_control("--files-from", source, WholeReason::InvalidPaths)?;
            let path = context.env.cwd.join(source);
            let bytes = read_bounded(std::fs::File::open(&path).map_err(|err| {
                Rejection::new(
                    WholeReason::InvalidPaths,
                    format!("--files-from {}: {err}", path.display()),
                )
            })?)
            .map_err(|err| {
                Rejection::new(
                    WholeReason::InvalidPaths,
                    format!("reading --files-from {}: {err}", path.display()),
                )
            })?;
            listed.extend(hygiene::read_list(&bytes, &path.display().to_string())?);
            false
        }
        None => {
            listed.is_empty()
                && (caller == Caller::DispatchStep
                    || !std::io::IsTerminal::is_terminal(&std::io::stdin()))
        }
    };
    if from_stdin {
        let bytes = read_bounded(std::io::stdin().lock()).map_err(|err| {
            Rejection::new(WholeReason::InvalidPaths, format!("reading stdin: {err}"))
        })?;
        listed.extend(hygiene::read_list(&bytes, "stdin")?);
    }
    Ok(listed)
}

/// At most one byte more than [`hygiene::MAX_LIST_BYTES`] of `reader` (the list check then
/// refuses an oversized list without reading all of it).
fn read_bounded(reader: impl Read) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let limit = u64::try_from(hygiene::MAX_LIST_BYTES + 1).unwrap_or(u64::MAX);
    reader.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The call's run dir: the given one (your own, not writable by others; created 0700 when
/// missing) or a fresh private one.
fn run_dir(context: &Context, given: Option<&str>) -> Result<PathBuf, Rejection> {
    let invalid = |detail: String| Rejection::new(WholeReason::InvalidPaths, detail);
    let Some(given) = given else {
        return fresh_run_dir(context)
            .map_err(|err| invalid(format!("creating a private run dir: {err}")));
    };
    let dir = context.env.cwd.join(given);
    if !dir.exists() {
        create_private_dir(&dir).map_err(|err| {
            Rejection::new(
                WholeReason::PromptWriteFailed,
                format!("creating run dir {}: {err}", dir.display()),
            )
        })?;
    }
    private_fs::check_given_dir(&dir, private_fs::Sharing::Private).map_err(invalid)?;
    Ok(dir)
}

/// A fresh 0700 run dir `gsd-code-review-XXXXXX` under `<GSD_HOME>/.gsd/code-review/`, which a
/// confined lane cannot write (no lane can plant a file where the findings are written), else
/// in the temp dir when there is no GSD home.
fn fresh_run_dir(context: &Context) -> std::io::Result<PathBuf> {
    let Some(home) = context.env.gsd_home() else {
        return private_fs::private_temp_dir("gsd-code-review-");
    };
    let parent = home.join(".gsd").join("code-review");
    create_private_dir(&parent)?;
    private_fs::check_given_dir(&parent, private_fs::Sharing::Private)
        .map_err(std::io::Error::other)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix("gsd-code-review-").rand_bytes(6);
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir_in(&parent).map(tempfile::TempDir::keep)
}

/// Creates `dir` (and its missing parents) with mode 0700.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// What the review stages gave back.
struct Ran {
    /// Each lane's outcome, in run order.
    lanes: Vec<LaneOutcome>,
    /// How the review ended (`None`: stopped before any lane ran).
    exit: Option<Exit>,
    /// Whether the findings file was written.
    wrote: bool,
    /// Why the stages stopped early, when they did.
    detail: Option<String>,
}

/// Runs `lanes` through the stages of `review` (its `--prompt-file` form): request,
/// detection of the named lanes (each refusal is that lane's outcome), selection, prepared run,
/// pre-flight, results, document.
fn run_lanes(
    context: &Context,
    args: &ReviewArgs,
    root: &RepoRoot,
    run_dir: &Path,
) -> Result<Ran, Rejection> {
    let selection_failed =
        |failure: Failure| Rejection::new(WholeReason::SelectionFailed, failure.message);
    let request = match request::resolve(context, args).map_err(selection_failed)? {
        Ok(request) => request,
        Err(exit) => {
            return Ok(stopped(
                exit,
                "the request was refused (see the errors above)",
            ))
        }
    };
    let panel = crate::verdict::Panel::for_review(context, &request.config, args.require_quorum)
        .map_err(selection_failed)?;
    crate::sandbox::watchdog::start_early();
    let egress = context.egress();
    let detecting = Probing::for_review(context, &request, egress.as_ref(), ".".to_owned());
    let mut lanes = Vec::new();
    let mut detected = BTreeMap::new();
    let mut available = Vec::new();
    for slug in &args.lanes {
        let Some(lane) = request.registry.lane(slug) else {
            continue;
        };
        let found = preflight::detect(lane, &detecting);
        if let Err(refusal) = &found {
            lanes.push(LaneOutcome::failed(
                slug,
                refusal.reason.as_str(),
                refusal.detail.clone(),
            ));
        } else {
            available.push(slug.clone());
        }
        detected.insert(slug.clone(), found);
    }
    if available.is_empty() {
        return Ok(Ran {
            lanes,
            exit: Some(Exit::ExplicitBlocked),
            wrote: false,
            detail: None,
        });
    }
    let all: Vec<String> = request
        .registry
        .lanes
        .iter()
        .map(|l| l.slug.clone())
        .collect();
    let normalized = selection::normalize(&request.config, &all);
    let sel = selection::select(
        Source::ExplicitFlags,
        &available,
        &normalized,
        &all,
        &detected,
    );
    if !sel.errors.is_empty() {
        let errors: Vec<&str> = sel.errors.iter().map(|(_, e)| e.as_str()).collect();
        return Err(Rejection::new(
            WholeReason::SelectionFailed,
            errors.join("; "),
        ));
    }
    let mut chosen = Chosen {
        source: Source::ExplicitFlags,
        selection: sel,
        verdicts: detected,
    };
    let prepared = prepared::prepare(context, &request).map_err(selection_failed)?;
    let probing = Probing {
        run_dir: prepared.run_dir.as_str(),
        ..detecting
    };
    let checked = match verdicts::preflight(context, &request, &mut chosen, &prepared, &probing)
        .map_err(selection_failed)?
    {
        Ok(checked) => checked,
        Err(exit) => {
            let mut ran = stopped(
                exit,
                "pre-flight refused a named lane (see the errors above); nothing was invoked",
            );
            ran.lanes.splice(0..0, lanes);
            return Ok(ran);
        }
    };
    let done =
        results::run(context, &request, &chosen, &prepared, &checked).map_err(selection_failed)?;
    lanes.extend(lane_outcomes(&done, root, run_dir));
    let exit = document::finish(
        &request.subject,
        &prepared.run_dir,
        &done,
        checked.not_run,
        &panel,
    )
    .map_err(selection_failed)?;
    let wrote = !matches!(exit, Exit::ExplicitFailed | Exit::NoneRan);
    Ok(Ran {
        lanes,
        exit: Some(exit),
        wrote,
        detail: None,
    })
}

/// The stages stopped before any lane ran.
fn stopped(exit: Exit, detail: &str) -> Ran {
    Ran {
        lanes: Vec::new(),
        exit: Some(exit),
        wrote: false,
        detail: Some(detail.to_owned()),
    }
}

/// Each identity's outcome: a real review is copied into the run dir
/// (`gsd-code-review-<id>.md`, never following a planted link) and its findings read.
fn lane_outcomes(done: &Results, root: &RepoRoot, run_dir: &Path) -> Vec<LaneOutcome> {
    let mut out = Vec::new();
    for (job, result) in done.jobs.iter().zip(&done.results) {
        let id = &job.identity.id;
        let outcome = match &result.done {
            Done::Ran { stubbed: false } => {
                let text = done.review_text(id);
                let name = format!("gsd-code-review-{}.md", crate::plan::safe_instance_name(id));
                let path = run_dir.join(name);
                match private_fs::write_run_file(&path, text.as_bytes(), WriteMode::Truncate) {
                    Ok(()) => {
                        let read = findings::parse(&text, root);
                        LaneOutcome {
                            slug: id.clone(),
                            ok: true,
                            review_path: Some(path),
                            findings: read.findings,
                            refused_findings: read.refused,
                            ..LaneOutcome::default()
                        }
                    }
                    Err(err) => LaneOutcome::failed(
                        id,
                        LaneReason::InvokeFailed.as_str(),
                        format!(
                            "its review could not be copied to {}: {err}",
                            path.display()
                        ),
                    ),
                }
            }
            Done::Ran { stubbed: true } => LaneOutcome::failed(
                id,
                LaneReason::InvokeFailed.as_str(),
                "the lane produced no review (a diagnostic stub; see the findings file)",
            ),
            Done::Budget(refusal) => LaneOutcome::failed(
                id,
                LaneReason::BudgetExceeded.as_str(),
                refusal.detail.clone(),
            ),
            Done::Unavailable(refusal) => {
                LaneOutcome::failed(id, refusal.reason.as_str(), refusal.detail.clone())
            }
            Done::Cancelled => LaneOutcome::failed(
                id,
                LaneReason::Cancelled.as_str(),
                "not started: another named lane failed first",
            ),
            Done::Interrupted => LaneOutcome::failed(
                id,
                LaneReason::Interrupted.as_str(),
                "the run was interrupted before this lane finished",
            ),
        };
        out.push(outcome);
    }
    out
}
