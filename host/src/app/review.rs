//! `gsd-lane review`: the multi-lane review run (review-workflow.md §1-§12).
//!
//! The steps live in `crate::review`; this file wires them together in the order of §1 and
//! maps the outcome to the exit statuses of §12.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{json, Value};

use super::Context;
use crate::error::Failure;
use crate::output::{self, neutralize};
use crate::plan::{Instance, PlanInputs, Refusal};
use crate::registry::Lane;
use crate::review::args::{self, Request};
use crate::review::budget;
use crate::review::phase::{self, PhaseEnv};
use crate::review::preflight::{self, Probing};
use crate::review::progress::{self, Ending, Mode, Progress, Row, RULE};
use crate::review::prompt;
use crate::review::reviews_md::{self, Doc, Entry, Fate};
use crate::review::rundir::{self, RunDir};
use crate::review::runner::{self, Done, Event, Job, LaneResult, Shared};
use crate::review::selection::{self, ErrorKind, Identity, Source};

/// Arguments of `review` (lane flags are data, so everything is parsed by `review::args`).
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct ReviewArgs {
    /// `--phase <N>` or `--prompt-file <F> --out <REVIEWS.md>`, lane flags, `--all`,
    /// `--self <slug>`, `--jobs <n>`, `--json`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub rest: Vec<String>,
}

/// What the review is about: a GSD phase or any prompt file.
enum Subject {
    Phase(Box<phase::Phase>),
    PromptFile {
        path: PathBuf,
        out: PathBuf,
        name: String,
    },
}

impl Subject {
    fn label(&self) -> String {
        match self {
            Subject::Phase(p) => format!("Phase {}", p.arg),
            Subject::PromptFile { name, .. } => name.clone(),
        }
    }

    fn output(&self) -> &Path {
        match self {
            Subject::Phase(p) => &p.output,
            Subject::PromptFile { out, .. } => out,
        }
    }
}

/// Nearest ancestor of `cwd` (inclusive) holding a `.git` entry, else `cwd` (§2).
fn repo_root(cwd: &Path) -> String {
    cwd.ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .unwrap_or(cwd)
        .display()
        .to_string()
}

fn usage(message: &str) -> Failure {
    Failure {
        message: format!("{message}\n{}", args::USAGE),
        status: 1,
    }
}

/// Runs `review`.
///
/// # Errors
///
/// Usage errors (status 1), phase and I/O errors (status 1); selection and availability
/// errors are printed and returned as status 2.
pub fn run(context: &Context, review_args: &ReviewArgs) -> Result<u8, Failure> {
    let registry = context.registry();
    let request = args::parse(&review_args.rest, &registry).map_err(|m| usage(&m))?;
    if request.help {
        let flags: Vec<&str> = registry
            .lanes
            .iter()
            .flat_map(|l| l.flags.iter().map(String::as_str))
            .collect();
        output::print(&format!(
            "{}\n\nlane flags: {}\n",
            args::USAGE,
            flags.join(" ")
        ));
        return Ok(0);
    }
    for warning in &request.warnings {
        output::eprint_line(&format!("warning: {}", neutralize(warning)));
    }
    let config = context.config();
    let sandbox =
        crate::sandbox::policy::run_mode(&config, request.sandbox).map_err(|m| usage(&m))?;
    let subject = subject(context, &request, &config)?;
    let repo_root = repo_root(&context.env.cwd);
    let egress = context.egress();
    let lanes: Vec<String> = registry.lanes.iter().map(|l| l.slug.clone()).collect();

    // §4-§6: normalize, branch, detect the candidates, select, self-skip.
    let normalized = selection::normalize(&config, &lanes);
    let source = selection::branch(&request.lanes, request.all, &normalized);
    let probing = Probing {
        config: &config,
        run_dir: ".".to_owned(),
        repo_root: repo_root.clone(),
        path_var: context.env.path.clone(),
        home: context.env.home.clone(),
        lock_dir: context.lock_dir(),
        egress: egress.as_ref(),
        sandbox,
    };
    let mut detected = BTreeMap::new();
    for slug in selection::candidates(source, &request.lanes, &normalized, &lanes) {
        if let Some(lane) = registry.lane(&slug) {
            let found = preflight::detect(lane, &probing);
            if let Err(refusal) = &found {
                if source != Source::ExplicitFlags {
                    output::eprint_line(&format!(
                        "info: reviewer {slug} not detected ({}: {})",
                        refusal.reason,
                        neutralize(&refusal.detail)
                    ));
                }
            }
            detected.insert(slug, found);
        }
    }
    let mut sel = selection::select(source, &request.lanes, &normalized, &lanes, &detected);
    let me = selection::self_identity(
        request.self_slug.as_deref(),
        context.env.agent_markers.antigravity_agent.as_deref(),
        context.env.agent_markers.cursor_session_id.as_deref(),
        context.env.agent_markers.claude_code_entrypoint.as_deref(),
    );
    if sel.errors.is_empty() {
        selection::apply_self_skip(&mut sel, me.as_deref(), &request.lanes);
    }
    for warning in &sel.warnings {
        output::eprint_line(&format!("warning: {}", neutralize(warning)));
    }
    for info in &sel.infos {
        output::eprint_line(&format!("info: {}", neutralize(info)));
    }
    if !sel.errors.is_empty() {
        for (_, error) in &sel.errors {
            output::eprint_line(&format!("error: {error}"));
        }
        let config_error = sel
            .errors
            .iter()
            .any(|(kind, _)| *kind == ErrorKind::Config);
        return Ok(if config_error { 1 } else { 2 });
    }
    let ids: Vec<&str> = sel.identities.iter().map(|i| i.id.as_str()).collect();
    output::eprint_line(&format!(
        "review: selection source={} reviewers={}",
        source.as_str(),
        ids.join(",")
    ));
    for identity in sel.identities.iter().filter(|i| i.instance) {
        if let (Some(model), Some(lane)) = (&identity.model, registry.lane(&identity.cli)) {
            if lane
                .body()
                .get("modelConfigKey")
                .and_then(Value::as_str)
                .is_none()
            {
                output::eprint_line(&format!(
                    "warning: lane {} accepts no model override; model {:?} of instance {} is ignored and the CLI's own default is used",
                    identity.cli,
                    neutralize(model),
                    identity.id
                ));
            }
        }
    }

    // §7: the run dir, the prompt and the section files.
    let run_dir = RunDir::create()?;
    let keep = |failure: Failure| -> Failure {
        output::eprint_line(&format!("review: run dir kept: {}", run_dir.path.display()));
        failure
    };
    let plan_names = write_inputs(&subject, &run_dir, context).map_err(keep)?;

    // §9 pre-flight: every selected identity resolved and egress-checked (probes were run by
    // detection moments ago and are not repeated); an explicit one that cannot run stops here.
    let probing = Probing {
        run_dir: run_dir.as_str(),
        ..probing
    };
    let explicit = source == Source::ExplicitFlags;
    let mut jobs = Vec::new();
    let mut not_run: Vec<Entry> = Vec::new();
    let mut blocked = Vec::new();
    let mut lane_entries = Vec::new();
    for identity in &sel.identities {
        let Some(lane) = registry.lane(&identity.cli) else {
            continue;
        };
        let instance = instance_of(identity);
        lane_entries.push(super::plan::plan_entry(
            lane,
            &config,
            &PlanInputs {
                run_dir: run_dir.as_str(),
                repo_root: repo_root.clone(),
                instance: instance.clone(),
                ..PlanInputs::default()
            },
        ));
        let checked = preflight::resolve(lane, &probing, &instance).and_then(|_| {
            match detected.get(&identity.cli) {
                Some(Err(refusal)) => Err(refusal.clone()),
                _ => Ok(()),
            }
        });
        match checked {
            Err(refusal) if explicit => blocked.push((identity.id.clone(), refusal)),
            Err(refusal) => {
                output::eprint_line(&format!(
                    "info: reviewer {} skipped ({}: {})",
                    identity.id,
                    refusal.reason,
                    neutralize(&refusal.detail)
                ));
                not_run.push(entry(
                    identity,
                    lane,
                    None,
                    Fate::NotRun {
                        reason: refusal.reason.to_string(),
                    },
                ));
            }
            Ok(()) => jobs.push(Job {
                index: jobs.len(),
                identity: identity.clone(),
                lane: lane.clone(),
                explicit,
                budget: budget_of(lane, &config),
            }),
        }
    }
    let _ = run_dir.write(
        "gsd-review-lanes.json",
        &format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Array(lane_entries)).unwrap_or_default()
        ),
    );
    if !blocked.is_empty() {
        for (id, refusal) in &blocked {
            output::eprint_line(&format!(
                "error: explicit reviewer '{id}' cannot run ({}: {}); nothing was invoked",
                refusal.reason,
                neutralize(&refusal.detail)
            ));
        }
        output::eprint_line(&format!("review: run dir kept: {}", run_dir.path.display()));
        return Ok(2);
    }
    for (slug, reason) in &sel.not_run {
        if let Some(lane) = registry.lane(slug) {
            let identity = Identity {
                id: slug.clone(),
                instance: false,
                cli: slug.clone(),
                model: None,
                agent: None,
            };
            not_run.push(entry(
                &identity,
                lane,
                None,
                Fate::NotRun {
                    reason: reason.to_string(),
                },
            ));
        }
    }

    // §9-§10: run, with progress.
    let mode = if request.json {
        Mode::Json
    } else if std::io::stdout().is_terminal() {
        Mode::Tty
    } else {
        Mode::Plain
    };
    let rows = jobs
        .iter()
        .map(|job| Row {
            id: job.identity.id.clone(),
            display: display(&job.identity, &job.lane),
        })
        .collect();
    let mut display_state = Progress::new(mode, rows);
    display_state.banner(
        &subject.label(),
        &json!({"source": source.as_str(), "reviewers": ids, "run_dir": run_dir.path}),
    );
    let shared = Shared {
        sandbox,
        config: config.clone(),
        env: context.env.clone(),
        project_root: context.project_root.clone(),
        run_dir: run_dir.clone(),
        repo_root,
        lock_dir: context.lock_dir(),
        plan_names,
    };
    let max_jobs = request.jobs.unwrap_or(usize::MAX);
    let (results, interrupted) =
        runner::run_all(jobs.clone(), &shared, max_jobs, |event, jobs| match event {
            Event::Started(index) => display_state.started(*index),
            Event::Finished(index, result) => {
                let ending = ending_of(result);
                if let (Done::Unavailable(refusal), Some(job)) = (&result.done, jobs.get(*index)) {
                    if !job.explicit {
                        output::eprint_line(&format!(
                            "info: reviewer {} skipped ({}: {})",
                            job.identity.id,
                            refusal.reason,
                            neutralize(&refusal.detail)
                        ));
                    }
                }
                display_state.ended(*index, ending);
            }
            Event::Interrupted => {}
        });
    display_state.finish();
    write_results(&run_dir, &jobs, &results);

    finish(&Finish {
        subject: &subject,
        run_dir: &run_dir,
        jobs: &jobs,
        results: &results,
        not_run,
        interrupted,
        mode,
    })
}

/// Reads the phase (or checks the prompt file) before anything else happens.
fn subject(
    context: &Context,
    request: &Request,
    config: &crate::config::ProjectConfig,
) -> Result<Subject, Failure> {
    if let Some(arg) = &request.phase {
        let env = PhaseEnv {
            root: context.project_root.clone(),
            cwd: context.env.cwd.clone(),
            gsd_project: context.env.agent_markers.gsd_project.clone(),
            workstream: context.env.workstream.clone(),
            project_code: config
                .get("project_code")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        let found = phase::locate(arg, &env).map_err(Failure::new)?;
        for notice in &found.notices {
            output::eprint_line(notice);
        }
        return Ok(Subject::Phase(Box::new(found)));
    }
    let (Some(file), Some(out)) = (&request.prompt_file, &request.out) else {
        return Err(usage(
            "--phase <N> or --prompt-file <F> --out <REVIEWS.md> is required",
        ));
    };
    let path = context.env.cwd.join(file);
    if !path.is_file() {
        return Err(Failure::new(format!(
            "cannot read {file}: not a regular file"
        )));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.clone());
    let out = context.env.cwd.join(out);
    match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            return Err(Failure::new(format!(
                "cannot write {}: directory {} does not exist",
                out.display(),
                dir.display()
            )))
        }
        _ => {}
    }
    Ok(Subject::PromptFile { path, out, name })
}

/// Writes the prompt and section files; returns the plan names (phase form).
fn write_inputs(
    subject: &Subject,
    run_dir: &RunDir,
    context: &Context,
) -> Result<Option<Vec<String>>, Failure> {
    match subject {
        Subject::Phase(found) => {
            let sources = prompt::gather(found, &context.project_root.join(".planning"))?;
            prompt::write_files(run_dir, &sources)?;
            Ok(Some(sources.plans.iter().map(|(n, _)| n.clone()).collect()))
        }
        Subject::PromptFile { path, .. } => {
            let bytes = std::fs::read(path)
                .map_err(|err| Failure::new(format!("cannot read {}: {err}", path.display())))?;
            rundir::write_private(&run_dir.file("gsd-review-prompt.md"), &bytes, false)?;
            Ok(None)
        }
    }
}

fn instance_of(identity: &Identity) -> Instance {
    Instance {
        name: identity.instance.then(|| identity.id.clone()),
        model: identity.model.clone(),
        agent: identity.agent.clone(),
    }
}

fn budget_of(lane: &Lane, config: &crate::config::ProjectConfig) -> Option<i64> {
    crate::plan::prompt_budget(lane.body(), config)
        .map(|n| budget::integer_budget(&n))
        .filter(|b| *b > 0)
}

fn display(identity: &Identity, lane: &Lane) -> String {
    if identity.instance {
        format!("{} ({})", lane.section, identity.id)
    } else {
        lane.section.clone()
    }
}

fn entry(
    identity: &Identity,
    lane: &Lane,
    metadata: Option<budget::Metadata>,
    fate: Fate,
) -> Entry {
    Entry {
        id: identity.id.clone(),
        cli: identity.cli.clone(),
        instance: identity.instance,
        section: lane.section.clone(),
        diff_only: lane.body_str("evidenceClass") == "diff-only",
        metadata,
        fate,
    }
}

fn ending_of(result: &LaneResult) -> Ending {
    match &result.done {
        Done::Ran { stubbed: false } => Ending::Review,
        Done::Ran { stubbed: true } => Ending::Stub,
        Done::Budget(refusal) | Done::Unavailable(refusal) => {
            Ending::Skipped(refusal.reason.to_string())
        }
        Done::Cancelled => Ending::Skipped("cancelled".to_owned()),
        Done::Interrupted => Ending::Interrupted,
    }
}

/// `gsd-review-lane-results.jsonl`: one compact object per identity, in run order.
fn write_results(run_dir: &RunDir, jobs: &[Job], results: &[LaneResult]) {
    let mut text = String::new();
    for (job, result) in jobs.iter().zip(results) {
        let mut value = json!({"slug": job.lane.slug, "ok": result.ok()});
        let map = value.as_object_mut();
        if let Some(map) = map {
            let stubbed = matches!(result.done, Done::Ran { stubbed: true });
            map.insert("stubbed".into(), json!(stubbed));
            let refusal: Option<&Refusal> = match &result.done {
                Done::Budget(r) | Done::Unavailable(r) => Some(r),
                _ => None,
            };
            if let Some(refusal) = refusal {
                map.insert("reason".into(), json!(refusal.reason));
                map.insert("detail".into(), json!(refusal.detail));
            }
            match result.done {
                Done::Interrupted => {
                    map.insert(
                        "detail".into(),
                        json!("interrupted before the lane finished"),
                    );
                    map.insert("interrupted".into(), json!(true));
                }
                Done::Cancelled => {
                    map.insert(
                        "detail".into(),
                        json!("not started: an explicitly named reviewer failed"),
                    );
                }
                _ => {}
            }
            map.insert("identity".into(), json!(job.identity.id));
        }
        text.push_str(&format!("{value}\n"));
    }
    if let Err(failure) = run_dir.write("gsd-review-lane-results.jsonl", &text) {
        output::eprint_line(&format!("warning: {failure}"));
    }
}

/// What the last step needs.
struct Finish<'a> {
    subject: &'a Subject,
    run_dir: &'a RunDir,
    jobs: &'a [Job],
    results: &'a [LaneResult],
    not_run: Vec<Entry>,
    interrupted: bool,
    mode: Mode,
}

fn read_review(run_dir: &RunDir, id: &str) -> String {
    let name = format!("gsd-review-{}.md", crate::plan::safe_instance_name(id));
    std::fs::read(run_dir.file(&name))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// §11-§12: REVIEWS.md, the summary, the run dir, the exit status.
fn finish(f: &Finish<'_>) -> Result<u8, Failure> {
    let kept = |status: u8| -> u8 {
        output::eprint_line(&format!(
            "review: run dir kept: {}",
            f.run_dir.path.display()
        ));
        status
    };
    // An explicitly named identity that could not run (§9): no REVIEWS.md, exit 2.
    let mut explicit_failed = false;
    for (job, result) in f.jobs.iter().zip(f.results) {
        if let (true, Done::Budget(refusal) | Done::Unavailable(refusal)) =
            (job.explicit, &result.done)
        {
            output::eprint_line(&format!(
                "error: explicit reviewer '{}' could not run ({}: {})",
                job.identity.id,
                refusal.reason,
                neutralize(&refusal.detail)
            ));
            explicit_failed = true;
        }
    }
    if explicit_failed && !f.interrupted {
        return Ok(kept(2));
    }
    let mut entries = Vec::new();
    let mut count = 0;
    let mut ran = 0;
    for (job, result) in f.jobs.iter().zip(f.results) {
        let fate = match &result.done {
            Done::Ran { stubbed } => {
                ran += 1;
                if !stubbed {
                    count += 1;
                }
                Fate::Ran {
                    stubbed: *stubbed,
                    content: read_review(f.run_dir, &job.identity.id),
                }
            }
            Done::Budget(_) => Fate::BudgetFailed {
                content: read_review(f.run_dir, &job.identity.id),
            },
            Done::Unavailable(refusal) => Fate::NotRun {
                reason: refusal.reason.to_string(),
            },
            Done::Cancelled => Fate::NotRun {
                reason: "cancelled".to_owned(),
            },
            Done::Interrupted => Fate::Interrupted {
                content: format!(
                    "{} review not completed: the review run was interrupted (SIGINT/SIGTERM) {}.",
                    job.identity.id,
                    if result.started {
                        "before this reviewer finished"
                    } else {
                        "before this reviewer started"
                    }
                ),
            },
        };
        entries.push(entry(
            &job.identity,
            &job.lane,
            result.metadata.clone(),
            fate,
        ));
    }
    entries.extend(f.not_run.iter().cloned());
    if ran == 0 && !f.interrupted {
        output::eprint_line("error: no reviewer ran; REVIEWS.md was not written");
        return Ok(kept(2));
    }
    let (phase_value, plans) = match f.subject {
        Subject::Phase(p) => (
            p.arg.clone(),
            p.plans
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect::<Vec<_>>(),
        ),
        Subject::PromptFile { name, .. } => (name.clone(), vec![name.clone()]),
    };
    let mut plans = plans;
    plans.sort();
    let doc = Doc {
        phase: phase_value,
        subject: f.subject.label(),
        reviewed_at: reviews_md::utc_now(),
        plans,
        entries,
    };
    let output_path = f.subject.output();
    rundir::write_atomic(output_path, &reviews_md::render(&doc)).inspect_err(|_| {
        output::eprint_line(&format!(
            "review: run dir kept: {}",
            f.run_dir.path.display()
        ));
    })?;
    let status: u8 = if f.interrupted {
        130
    } else if count > 0 {
        0
    } else {
        2
    };
    summary(f, output_path, count, status);
    output::eprint_line(&format!("review: wrote {}", output_path.display()));
    if status == 0 {
        f.run_dir.remove();
    } else {
        if f.interrupted {
            output::eprint_line(
                "review: interrupted; unfinished reviewers are marked not completed",
            );
        }
        kept(status);
    }
    Ok(status)
}

fn summary(f: &Finish<'_>, output_path: &Path, count: usize, status: u8) {
    let file_name = output_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if f.mode == Mode::Json {
        progress::event(&json!({
            "event": "complete",
            "reviews": output_path,
            "count": count,
            "status": status,
            "interrupted": f.interrupted,
            "run_dir": (status != 0).then(|| f.run_dir.path.clone()),
        }));
        return;
    }
    let title = if f.interrupted {
        "REVIEW INTERRUPTED"
    } else {
        "REVIEW COMPLETE"
    };
    let mut text = format!("{RULE}\n GSD ► {title}\n{RULE}\n\n");
    match f.subject {
        Subject::Phase(p) => {
            text.push_str(&format!(
                "Phase {} reviewed by {count} AI systems.\n\nFull review: {file_name}\n\nTo incorporate feedback into planning:\n  /gsd:plan-phase {} --reviews\n",
                p.arg, p.arg
            ));
        }
        Subject::PromptFile { name, .. } => {
            text.push_str(&format!(
                "{name} reviewed by {count} AI systems.\n\nFull review: {}\n",
                output_path.display()
            ));
        }
    }
    output::print(&text);
}
