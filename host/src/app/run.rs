//! `gsd-lane run <slug>` (and `invoke --slug`): one lane, a report for a person or JSON.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Context;
use super::RunOptions;
use crate::error::{Context as _, Failure};
use crate::lane_result::model_record::ModelRecord;
use crate::output::{self, neutralize};
use crate::plan::{Instance, PlanInputs};
use crate::private_fs::Sharing;
use crate::refusal::{Reason, Refusal};
use crate::run::lane::{self, Completion, Outcome, RunSetup};
use crate::run::prompt_file::unusable_prompt;
use crate::sandbox::confine::ViewProof;

/// Which command is running the lane: they differ in defaults and statuses (decisions.md #4, #5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// `run <slug>`: a person debugging one lane.
    Run,
    /// `invoke --slug`: the review workflow's drop-in for the reference (`.` run dir, its
    /// statuses, its exact JSON shape).
    Invoke,
}

/// The run dir: `--run-dir` (created 0700 when missing; refused when others could write in it
/// or own it), else `.` for `invoke` and a fresh private temporary directory, kept, for `run`.
/// The working directory `invoke` defaults to may be group-writable (umask 002 systems), never
/// world-writable or another user's; files in it are still created without following links.
fn run_dir(given: Option<&str>, cwd: &Path, caller: Caller) -> Result<PathBuf, Failure> {
    let sharing = if given.is_none() {
        Sharing::WorkingDirectory
    } else {
        Sharing::Private
    };
    let given = given.or((caller == Caller::Invoke).then_some("."));
    match given {
        Some(dir) => {
            let dir = cwd.join(dir);
            // A run dir gsd-lane creates is private (trust.md §7.5); an existing one is kept.
            std::os::unix::fs::DirBuilderExt::mode(
                std::fs::DirBuilder::new().recursive(true),
                0o700,
            )
            .create(&dir)
            .context(|| format!("creating run dir {}", dir.display()))?;
            crate::private_fs::check_given_dir(&dir, sharing)
                .map_err(|err| Failure::new(err.to_string()))?;
            Ok(dir)
        }
        None => crate::private_fs::private_temp_dir("gsd-lane-run-")
            .context(|| "creating a temporary run dir".to_owned()),
    }
}

/// Whether the lane reads a prompt at all (`promptChannel: none` spawn lanes do not).
fn takes_prompt(lane: &crate::registry::Lane) -> bool {
    lane.takes_prompt()
}

/// Checks, before anything is created or started, that the lane will have a prompt: a usable
/// `--prompt-file`, `--prompt -`, or a usable `gsd-review-prompt.md` already in `--run-dir`
/// (the workflow writes it there before `invoke`).
fn check_prompt(
    lane: &crate::registry::Lane,
    options: &RunOptions,
    cwd: &Path,
    caller: Caller,
) -> Result<(), Failure> {
    let usage = |message: String| Failure { message, status: 1 };
    if let Some(file) = &options.prompt_file {
        return unusable_prompt(&cwd.join(file)).map_or(Ok(()), |m| Err(usage(m)));
    }
    if options.prompt.is_some() || !takes_prompt(lane) {
        return Ok(());
    }
    let dir = options
        .run_dir
        .as_deref()
        .or((caller == Caller::Invoke).then_some("."));
    let in_run_dir = dir.map(|dir| cwd.join(dir).join("gsd-review-prompt.md"));
    match in_run_dir {
        Some(path) if path.exists() => unusable_prompt(&path).map_or(Ok(()), |m| Err(usage(m))),
        _ => Err(usage(format!(
            "lane {} reads a prompt and none was given: use --prompt-file <FILE>, --prompt - (stdin), or a --run-dir holding gsd-review-prompt.md",
            neutralize(&lane.slug)
        ))),
    }
}

/// `--model ""`, `--as ""` and `--agent ""` (or whitespace) mean "not given" (decisions.md #12).
fn given(value: &Option<String>) -> Option<String> {
    value.clone().filter(|v| !v.trim().is_empty())
}

/// A slug that names no active lane: the inactive lane's reason and fix when it exists, a
/// retired lane's explanation, else a did-you-mean.
fn unknown_slug(registry: &crate::registry::Registry, slug: &str) -> String {
    if let Some(entry) = crate::registry::inactive::by_slug(registry, slug) {
        return crate::registry::inactive::explain(entry);
    }
    if let Some(retired) = crate::registry::retired::by_slug(registry, slug) {
        return retired.explain();
    }
    match crate::registry::inactive::suggest_slug(registry, slug) {
        Some(hint) => format!(
            "no lane has slug {:?} (did you mean {hint:?}?); `gsd-lane list` shows every lane",
            neutralize(slug)
        ),
        None => format!(
            "no lane has slug {:?}; `gsd-lane list` shows every lane",
            neutralize(slug)
        ),
    }
}

fn prompt_file(
    options: &RunOptions,
    run_dir: &Path,
    cwd: &Path,
) -> Result<Option<String>, Failure> {
    if let Some(file) = &options.prompt_file {
        return Ok(Some(cwd.join(file).display().to_string()));
    }
    match options.prompt.as_deref() {
        None => Ok(None),
        Some("-") => {
            let path = run_dir.join("gsd-review-prompt.md");
            let mut text = Vec::new();
            std::io::stdin()
                .read_to_end(&mut text)
                .context(|| "reading the prompt from stdin".to_owned())?;
            crate::private_fs::write_run_file(&path, &text, crate::private_fs::WriteMode::Truncate)
                .context(|| format!("writing {}", path.display()))?;
            Ok(None)
        }
        Some(other) => Err(Failure::usage(format!(
            "--prompt takes only '-' (stdin), got {other:?}; use --prompt-file for a file"
        ))),
    }
}

/// Runs one lane.
///
/// # Errors
///
/// An unknown slug for `run` (status 2), prompt and usage errors (status 1), I/O failures.
pub fn run(
    context: &Context,
    slug: &str,
    options: &RunOptions,
    caller: Caller,
) -> Result<u8, Failure> {
    // `--handler-module`: checked before anything else, so a refused module runs nothing.
    let module = handler_module(options, &context.env.cwd)?;
    let registry = context.registry();
    crate::timing::mark("registry loaded");
    let Some(lane) = registry.lane(slug) else {
        return Ok(report_unknown_slug(&registry, slug, options, caller));
    };
    check_prompt(lane, options, &context.env.cwd, caller)?;
    // A lane that runs as data and whose probe starts nothing proves the read-only view at its
    // own spawn; any other waits for the once-per-process probe.
    let view_proof = if lane::may_prove_view_at_spawn(lane, module.is_some()) {
        ViewProof::AtSpawn
    } else {
        ViewProof::Probed
    };
    if lane.transport() == gsd_lane_sdk::Transport::Spawn {
        // Its probe or its run starts a process: the lane watchdog starts now (forked while
        // gsd-lane has one thread), and the read-only view's probe alongside unless the sandbox
        // is off for this run or the lane's spawn proves the view.
        crate::sandbox::watchdog::start_early();
        if options.sandbox != Some(crate::sandbox::SandboxMode::Off)
            && view_proof == ViewProof::Probed
        {
            crate::sandbox::policy::probe_early();
        }
    }
    let config = context.lane_config(&registry);
    let run_dir =
        run_dir(options.run_dir.as_deref(), &context.env.cwd, caller).map_err(|mut f| {
            f.status = 1;
            f
        })?;
    let prompt_file = prompt_file(options, &run_dir, &context.env.cwd).map_err(|mut f| {
        f.status = 1;
        f
    })?;
    let lock_dir = context.lock_dir();
    let egress = context.egress();
    // The fresh temporary run dir of `run` is said in every output (decisions.md #4).
    let shown_dir =
        (caller == Caller::Run && options.run_dir.is_none()).then_some(run_dir.as_path());
    if let Some((path, handler)) = &module {
        module_fits(lane, *handler, path)?;
        output::eprint_line(&module_notice(slug, *handler, path));
    }
    let model = given(&options.model);
    if model.is_some() && lane.model_config_key.is_none() {
        output::eprint_line(&format!(
            "warning: lane {slug} accepts no model override; model {:?} is ignored and the CLI's own default is used",
            neutralize(model.as_deref().unwrap_or(""))
        ));
    }
    let setup = RunSetup {
        config: &config,
        inputs: PlanInputs {
            run_dir: run_dir.display().to_string(),
            repo_root: context.repo_root(options.repo_root.as_deref()),
            prompt_file,
            instance: Instance {
                name: given(&options.instance),
                model,
                agent: given(&options.agent),
            },
            effort: None,
        },
        path_var: context.env.path.clone(),
        home: context.env.home.clone(),
        lock_dir,
        egress: egress.as_ref(),
        handler_override: module.map(|(_, handler)| handler),
        sandbox: crate::sandbox::policy::run_mode(&config, options.sandbox)
            .map_err(|err| Failure::usage(err.to_string()))?,
        view_proof,
    };
    crate::timing::mark("run dir, prompt, egress store and sandbox mode");
    confine(context, &setup)?;
    crate::timing::mark("confined roots decided");
    crate::sandbox::policy::warm(
        setup.sandbox,
        setup.view_proof,
        Path::new(&setup.inputs.repo_root),
        Path::new(&setup.inputs.run_dir),
    );
    crate::timing::mark("sandbox warmed (the view probed, unless the lane's spawn proves it)");
    let outcome = lane::run_lane(lane, &setup)?;
    crate::timing::mark("lane admitted, probed and run");
    match outcome {
        Outcome::Unavailable(refusal) => Ok(report_unavailable(slug, &refusal, options, shown_dir)),
        Outcome::Completed(done) => {
            report_completed(&done, options, shown_dir);
            Ok(0)
        }
    }
}

/// Decides what the lane may not write: the project (wherever `run` or `invoke` was started
/// from), the git top levels of the working directory and the project, `--repo-root` (else the
/// working directory), their git dirs and gsd-lane's own state. A `.git` file that cannot be
/// decided stops the command (exit 1) before anything starts.
fn confine(context: &Context, setup: &RunSetup<'_>) -> Result<(), Failure> {
    let repo_root = PathBuf::from(&setup.inputs.repo_root);
    context.confine_command(setup.sandbox, &repo_root)
}

/// Reports a slug no lane has and returns the exit status: `run` fails (2; `--json` still gets
/// its one `malformed_lane` object), `invoke` keeps the reference's answer, a `malformed_lane`
/// result (exit 0, 2 when explicit).
fn report_unknown_slug(
    registry: &crate::registry::Registry,
    slug: &str,
    options: &RunOptions,
    caller: Caller,
) -> u8 {
    let detail = unknown_slug(registry, slug);
    output::eprint_line(&format!("gsd-lane: {detail}"));
    let refusal = Refusal::new(Reason::MalformedLane, detail);
    if caller == Caller::Run {
        if options.json {
            output::print(&json_line(&unavailable_json(slug, &refusal, None)));
        }
        return 2;
    }
    report_unavailable(slug, &refusal, options, None)
}

/// Loads the `--handler-module` of this one run, if any (exit 2 when refused; nothing runs).
fn handler_module(
    options: &RunOptions,
    cwd: &Path,
) -> Result<Option<(PathBuf, &'static dyn gsd_lane_sdk::Handler)>, Failure> {
    let Some(path) = &options.handler_module else {
        return Ok(None);
    };
    let path = cwd.join(path);
    load_handler_module(&path).map(|handler| Some((path, handler)))
}

#[cfg(feature = "dynamic-handlers")]
fn load_handler_module(path: &Path) -> Result<&'static dyn gsd_lane_sdk::Handler, Failure> {
    crate::dynamic::load(path)
        .map(|module| module.handler())
        .map_err(|err| Failure::usage(err.to_string()))
}

#[cfg(not(feature = "dynamic-handlers"))]
fn load_handler_module(_path: &Path) -> Result<&'static dyn gsd_lane_sdk::Handler, Failure> {
    Err(Failure::usage(
        "this build has no dynamic handler support; rebuild with --features dynamic-handlers",
    ))
}

/// A module only stands in for the handler the lane itself declares (HTTP lanes without one
/// use `openai-compatible`); anything else is a usage error and nothing runs.
fn module_fits(
    lane: &crate::registry::Lane,
    handler: &dyn gsd_lane_sdk::Handler,
    path: &Path,
) -> Result<(), Failure> {
    let declared = lane
        .effective_handler()
        .unwrap_or("none (a data-only lane)");
    if declared == handler.name().as_str() {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "handler module {}: refused: it provides handler {:?} but lane {} declares handler {} (nothing was run)",
            path.display(),
            handler.name().as_str(),
            neutralize(&lane.slug),
            neutralize(declared)
        )))
    }
}

/// The loud stderr notice that a non-bundled handler module is in use.
fn module_notice(slug: &str, handler: &dyn gsd_lane_sdk::Handler, path: &Path) -> String {
    format!(
        "!!! NON-BUNDLED HANDLER MODULE IN USE !!!\n\
         !!! lane {} runs handler {:?} from {} (gsd-lane-sdk {}), not the one built into this gsd-lane.\n\
         !!! Debugging only: `review` and every other lane keep the built-in handlers.",
        neutralize(slug),
        handler.name().as_str(),
        neutralize(&path.display().to_string()),
        handler.sdk_version()
    )
}

/// The `--json` line of a lane that did not run: `{"slug","ok":false,"stubbed":false,"reason",
/// "detail","model"}` (plus `runDir`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Unavailable<'a> {
    slug: &'a str,
    ok: bool,
    stubbed: bool,
    reason: Reason,
    detail: &'a str,
    model: ModelRecord,
    /// The default run dir (decisions.md #4); `invoke` keeps the reference shape without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    run_dir: Option<String>,
}

/// The [`Unavailable`] line of `slug`.
fn unavailable_json<'a>(
    slug: &'a str,
    refusal: &'a Refusal,
    run_dir: Option<&Path>,
) -> Unavailable<'a> {
    Unavailable {
        slug,
        ok: false,
        stubbed: false,
        reason: refusal.reason,
        detail: &refusal.detail,
        model: ModelRecord::unknown(),
        run_dir: run_dir.map(|dir| dir.display().to_string()),
    }
}

/// One line of compact JSON for `--json` (every output type here has string keys only, so it
/// cannot fail to encode).
fn json_line<T: Serialize>(value: &T) -> String {
    format!("{}\n", serde_json::to_string(value).unwrap_or_default())
}

fn report_unavailable(
    slug: &str,
    refusal: &Refusal,
    options: &RunOptions,
    run_dir: Option<&Path>,
) -> u8 {
    if options.explicit {
        output::eprint_line(&format!(
            "explicitly requested reviewer '{slug}': {}",
            neutralize(&refusal.detail)
        ));
    }
    if options.json {
        // A lane held back by a safety gate (egress change, damaged store) is also said on
        // stderr, once, for the person reading the workflow's log.
        if refusal.reason.is_safety_gate() && !options.explicit {
            output::eprint_line(&neutralize(&refusal.detail));
        }
        output::print(&json_line(&unavailable_json(slug, refusal, run_dir)));
    } else {
        output::print(&format!(
            "lane {}: unavailable ({}): {}\nnothing was started and no review file was written{}\n",
            neutralize(slug),
            refusal.reason,
            neutralize(&refusal.detail),
            run_dir.map_or(String::new(), |d| format!(
                "\nrun dir   {}",
                neutralize(&d.display().to_string())
            ))
        ));
    }
    if options.explicit {
        2
    } else {
        0
    }
}

/// The exact command line, each argument quoted for a POSIX shell (copy-paste safe), and the
/// raw argv as JSON beside it (`None` for an HTTP lane).
fn command_line(done: &Completion) -> (String, Option<String>) {
    match (done.plan.spawn(), done.plan.http()) {
        (Some(spawn), _) => {
            let all = std::iter::once(&spawn.binary).chain(&spawn.argv);
            let json: Vec<serde_json::Value> = spawn
                .argv
                .iter()
                .map(|arg| serde_json::Value::String(arg.clone()))
                .collect();
            (
                output::shell_join(all.map(String::as_str)),
                Some(crate::trust::render::json_argv(&spawn.binary, &json)),
            )
        }
        (None, Some(http)) => (format!("POST {}", neutralize(&http.url)), None),
        (None, None) => (String::new(), None),
    }
}

/// The `--json` line of a lane that ran: `reason` when gsd-lane recognised why it is a stub,
/// `incomplete` when it was stopped after part of a review,
/// `sandbox` (the mode and mechanism that confined it), `repositoryChanges` only when the
/// repository changed while it ran, `runDir` for a default run dir.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Completed<'a> {
    slug: &'a str,
    ok: bool,
    stubbed: bool,
    /// The resolved model (upstream #3649, §3.2).
    model: &'a ModelRecord,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<Reason>,
    /// Cut off by its bound or cap: the review file ends with the incomplete-review notice.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    incomplete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    sandbox: Option<crate::sandbox::policy::SandboxReport>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    repository_changes: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    run_dir: Option<String>,
}

/// The [`Completed`] line of `done`.
fn completed_json<'a>(done: &'a Completion, run_dir: Option<&Path>) -> Completed<'a> {
    Completed {
        slug: &done.plan.slug,
        ok: true,
        stubbed: done.stubbed,
        model: &done.model,
        reason: done.stub_reason,
        incomplete: done.incomplete,
        sandbox: done
            .sandbox
            .as_ref()
            .map(crate::sandbox::policy::Effective::report),
        repository_changes: &done.repository_changes,
        run_dir: run_dir.map(|dir| dir.display().to_string()),
    }
}

fn report_completed(done: &Completion, options: &RunOptions, run_dir: Option<&Path>) {
    let plan = &done.plan;
    if options.json {
        output::print(&json_line(&completed_json(done, run_dir)));
        return;
    }
    let review = crate::run::review_file::read_sidecar(Path::new(&plan.review_path));
    let mut text = String::new();
    text.push_str(&format!(
        "lane      {} ({})\n",
        plan.slug,
        plan.transport.as_str()
    ));
    let (command, argv) = command_line(done);
    text.push_str(&format!("command   {command}\n"));
    if let Some(argv) = argv {
        text.push_str(&format!("argv      {argv}\n"));
    }
    text.push_str(&format!("probe     {}\n", neutralize(&done.probe)));
    text.push_str(&format!(
        "result    {} in {:.1} s{}{}\n",
        match (done.stubbed, done.stub_reason) {
            (true, Some(reason)) => format!("STUB ({reason})"),
            (true, None) => "STUB (failed or empty output)".to_owned(),
            (false, _) => "review".to_owned(),
        },
        done.elapsed.as_secs_f64(),
        done.exit_code
            .map_or(String::new(), |c| format!(", exit {c}")),
        match done.spawn_error.as_deref() {
            None => String::new(),
            // The note says the bound and where it is set.
            Some("ETIMEDOUT") => ", timed out".to_owned(),
            Some(e) => format!(", spawn error {e}"),
        },
    ));
    if let Some(source) = &done.source {
        text.push_str(&format!("source    {}\n", neutralize(source)));
    }
    if done.blind {
        text.push_str("note      reviewed without repository access (stamped)\n");
    }
    for note in &done.notes {
        text.push_str(&format!("note      {}\n", neutralize(note)));
    }
    if let Some(sandbox) = &done.sandbox {
        text.push_str(&format!(
            "sandbox   {}, mechanism {}\n",
            neutralize(&sandbox.describe()),
            sandbox.mechanism()
        ));
    }
    if let Some(changes) = crate::sandbox::policy::changes_line(&done.repository_changes) {
        text.push_str(&format!("WARNING   {}\n", neutralize(&changes)));
    }
    if let Some(dir) = run_dir {
        text.push_str(&format!(
            "run dir   {}\n",
            neutralize(&dir.display().to_string())
        ));
    }
    text.push_str(&format!(
        "review    {}\nstderr    {}\n\n",
        plan.review_path, plan.err_path
    ));
    text.push_str(&neutralize(&review));
    output::print(&text);
}
