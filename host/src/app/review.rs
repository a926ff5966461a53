//! `gsd-lane review`: the multi-lane review run (review-workflow.md §1-§12).
//!
//! The steps live in `crate::review`; this file wires them together in the order of §1 and
//! maps the outcome to the exit statuses of §12.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::resume;
use super::Context;
use crate::error::Failure;
use crate::output::{self, neutralize};
use crate::plan::{Instance, PlanInputs, Refusal};
use crate::registry::Lane;
use crate::review::args::{self, ReviewArgs};
use crate::review::budget;
use crate::review::phase::{self, PhaseEnv};
use crate::review::preflight::{self, Probing};
use crate::review::preserve;
use crate::review::progress::{self, Ending, Mode, Progress, Row, RULE};
use crate::review::prompt;
use crate::review::record::{self, RunRecord, SubjectKey};
use crate::review::reviews_md::{self, Doc, Entry, Fate};
use crate::review::rundir::{self, RunDir};
use crate::review::runner::{self, Done, Event, Job, LaneResult, Shared};
use crate::review::selection::{self, ErrorKind, Identity, Source};

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
        message: format!("{message}\n(see `gsd-lane review --help`)"),
        status: 1,
    }
}

/// Runs `review`.
///
/// # Errors
///
/// Usage errors (status 1), phase and I/O errors (status 1); selection and availability
/// errors are printed and returned as status 2.
pub fn run(context: &Context, request: &ReviewArgs) -> Result<u8, Failure> {
    let registry = context.registry();
    for warning in args::collisions(
        &<crate::cli::Cli as clap::CommandFactory>::command(),
        &registry,
    ) {
        output::eprint_line(&format!("warning: {}", neutralize(&warning)));
    }
    if let Some(status) = inactive_flags(&registry, request) {
        return Ok(status);
    }
    request.check().map_err(|m| usage(&m))?;
    let config = context.config_checked()?;
    // `--resume`: continue a recorded run with its own arguments (app::resume).
    let mut request = request.clone();
    let past = if request.resuming() {
        let key = if request.phase.is_some() || request.prompt_file.is_some() {
            let mut lookup = request.clone();
            lookup.out.get_or_insert_with(|| ".".to_owned());
            Some(subject_key(&subject(context, &lookup, &config)?))
        } else {
            None
        };
        let past = resume::target(&request, key.as_ref(), &context.env.cwd)?;
        request = resume::merged_request(&past, &request, &registry)?;
        Some(past)
    } else {
        None
    };
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
    let mut undetected = Vec::new();
    for slug in selection::candidates(source, &request.lanes, &normalized, &lanes) {
        if let Some(lane) = registry.lane(&slug) {
            let found = preflight::detect(lane, &probing);
            if let Err(refusal) = &found {
                if refusal.reason.is_safety_gate() {
                    // Installed but held back: never folded into the summary, the fix matters.
                    output::eprint_line(&format!(
                        "warning: reviewer {slug} is held back ({}: {})",
                        refusal.reason,
                        neutralize(&refusal.detail)
                    ));
                    detected.insert(slug, found);
                    continue;
                }
                undetected.push(format!(
                    "reviewer {slug} not detected ({}: {})",
                    refusal.reason,
                    neutralize(&refusal.detail)
                ));
            }
            detected.insert(slug, found);
        }
    }
    if source != Source::ExplicitFlags {
        report_undetected(context, &undetected);
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
    explain_inactive_defaults(&mut sel, &normalized, &registry);
    for warning in &sel.warnings {
        output::eprint_line(&format!("warning: {}", neutralize(warning)));
    }
    for info in &sel.infos {
        context.info(&neutralize(info));
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
    explain_selection(context, &registry, &sel, &detected);
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

    // §7: the run dir, the prompt and the section files (a resumed run reuses its run dir
    // and writes the inputs to a scratch dir first, to compare them with the recorded ones).
    let run_dir = match &past {
        Some(past) => RunDir {
            path: past.dir.clone(),
        },
        None => RunDir::create()?,
    };
    let _run_lock = crate::review::resume::lock(&run_dir.path)?;
    let keep = |failure: Failure| -> Failure {
        output::eprint_line(&format!("review: run dir kept: {}", run_dir.path.display()));
        failure
    };
    let inputs_dir = match &past {
        Some(_) => RunDir::create()?,
        None => run_dir.clone(),
    };
    let plan_names = write_inputs(&subject, &inputs_dir, context).map_err(keep)?;
    let input_hashes = record::hash_inputs(&inputs_dir.path);
    if past.is_some() {
        inputs_dir.remove();
    }
    let input_hashes = input_hashes.map_err(keep)?;

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
    let mut recorded = Vec::new();
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
        if let Some(entry) = lane_entries.last() {
            recorded.push(resume::identity_record(&identity.id, lane, entry.clone()));
        }
        let budget = budget_of(lane, &config);
        let id = crate::plan::safe_instance_name(&identity.id);
        let prompt_file = budget::prompt_file(&run_dir, &id, budget, plan_names.is_some());
        let checked = preflight::clear(lane, &probing, (&instance, prompt_file), &mut detected);
        match checked {
            Err(refusal) if explicit => blocked.push((identity.id.clone(), refusal)),
            Err(refusal) => {
                context.info(&format!(
                    "reviewer {} skipped ({}: {})",
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
            Ok(cleared) => jobs.push(Job {
                index: jobs.len(),
                identity: identity.clone(),
                lane: lane.clone(),
                explicit,
                budget,
                cleared,
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
    let run_record = RunRecord {
        version: record::VERSION,
        created: crate::clock::iso_now(),
        created_ms: u64::try_from(crate::clock::now_millis()).unwrap_or(u64::MAX),
        subject: subject_key(&subject),
        output: subject.output().to_owned(),
        cwd: context.env.cwd.clone(),
        args: request.selection_argv(&registry),
        source: source.as_str().to_owned(),
        inputs: input_hashes,
        identities: recorded,
    };
    let decision = match &past {
        Some(past) => {
            resume::check_unchanged(&past.record, &run_record, request.force)?;
            if request.force {
                write_inputs(&subject, &run_dir, context).map_err(keep)?;
                let mut forced = run_record.clone();
                forced.args.clone_from(&past.record.args);
                forced.write(&run_dir.path).map_err(keep)?;
            }
            let lines = crate::review::journal::read(&run_dir.path).map_err(keep)?;
            crate::review::resume::decide(&run_dir.path, &lines, &request.retry)
        }
        None => {
            run_record.write(&run_dir.path).map_err(keep)?;
            crate::review::resume::Decision::default()
        }
    };
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
    // A resumed run runs only the identities it does not keep (`jobs` from here on).
    let all_jobs = jobs;
    let (kept_jobs, jobs) = split_kept(&all_jobs, &decision);
    if let Some(past) = &past {
        resume::announce(&past.dir, &kept_jobs, &jobs);
    }
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
        journal: crate::review::journal::Journal::open(&run_dir.path)
            .map(std::sync::Arc::new)
            .map_err(keep)
            .map(Some)?,
        prior_attempts: decision.attempts.clone(),
    };
    let max_jobs = request
        .jobs
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let (results, interrupted) =
        runner::run_all(jobs.clone(), &shared, max_jobs, |event, jobs| match event {
            Event::Started(index) => display_state.started(*index),
            Event::Finished(index, result) => {
                let ending = ending_of(result);
                if let (Done::Unavailable(refusal), Some(job)) = (&result.done, jobs.get(*index)) {
                    if !job.explicit {
                        context.info(&format!(
                            "reviewer {} skipped ({}: {})",
                            job.identity.id,
                            refusal.reason,
                            neutralize(&refusal.detail)
                        ));
                    }
                }
                display_state.ended(*index, ending);
                if let (Mode::Json, Some(job)) = (display_state.mode(), jobs.get(*index)) {
                    if !result.repository_changes.is_empty() {
                        progress::event(&json!({
                            "event": "repository_changed",
                            "identity": job.identity.id,
                            "changes": result.repository_changes,
                        }));
                    }
                }
            }
            Event::Interrupted => {}
        });
    display_state.finish();
    let results = merge_kept(&all_jobs, &decision, &jobs, results);
    write_results(&run_dir, &all_jobs, &results);

    finish(&Finish {
        subject: &subject,
        run_dir: &run_dir,
        jobs: &all_jobs,
        results: &results,
        not_run,
        interrupted,
        mode,
    })
}

/// Lane flags naming lanes that exist but are not active: each reported with its reason, its
/// source file and the fixing command; the review stops (exit 2, as for any named reviewer
/// that cannot run) before anything is invoked.
fn inactive_flags(registry: &crate::registry::Registry, request: &ReviewArgs) -> Option<u8> {
    let mut any = false;
    for flag in &request.inactive_flags {
        if let Some(entry) = super::inactive::by_flag(registry, flag) {
            output::eprint_line(&format!(
                "error: {flag}: {}; nothing was invoked",
                super::inactive::explain(entry)
            ));
            any = true;
        }
    }
    any.then_some(2)
}

/// With `-v`: why each discovered lane was or was not selected.
fn explain_selection(
    context: &Context,
    registry: &crate::registry::Registry,
    sel: &selection::Selection,
    detected: &BTreeMap<String, Result<String, Refusal>>,
) {
    if context.verbose == 0 {
        return;
    }
    for lane in &registry.lanes {
        let selected: Vec<&str> = sel
            .identities
            .iter()
            .filter(|i| i.cli == lane.slug)
            .map(|i| i.id.as_str())
            .collect();
        let why = if !selected.is_empty() {
            format!("selected as {}", selected.join(", "))
        } else {
            match detected.get(&lane.slug) {
                Some(Err(refusal)) => format!(
                    "not selected: not detected ({}: {})",
                    refusal.reason,
                    neutralize(&refusal.detail)
                ),
                Some(Ok(_)) => {
                    "not selected: detected, but skipped (self-skip or configuration)".to_owned()
                }
                None => format!(
                    "not selected: not asked for (selection source {})",
                    sel.source.as_str()
                ),
            }
        };
        context.verbose(&format!("lane {}: {why}", lane.slug));
    }
    for entry in registry.entries.iter().filter(|e| e.skip.is_some()) {
        context.verbose(&format!(
            "not selectable: {}",
            super::inactive::explain(entry)
        ));
    }
}

/// `review.default_reviewers` entries naming a lane that exists but is not active: the
/// selection's "unknown slug" / "undefined instance" message becomes the lane's reason, source
/// file and fixing command.
fn explain_inactive_defaults(
    sel: &mut selection::Selection,
    normalized: &selection::Normalized,
    registry: &crate::registry::Registry,
) {
    for slug in normalized.defaults.iter().flatten() {
        let Some(entry) = super::inactive::by_slug(registry, slug) else {
            continue;
        };
        if registry.lane(slug).is_some() {
            continue;
        }
        let explained = format!(
            "review.default_reviewers names {slug}: {}",
            super::inactive::explain(entry)
        );
        let unknown = format!("unknown reviewer slug in review.default_reviewers: {slug}");
        for warning in &mut sel.warnings {
            if *warning == unknown {
                warning.clone_from(&explained);
            }
        }
        let undefined = format!("reviewer instance '{slug}' referenced in");
        for (_, error) in &mut sel.errors {
            if error.starts_with(&undefined) {
                error.clone_from(&explained);
            }
        }
    }
}

/// Lanes that were candidates but are not on this host: one summary line, each with its
/// reason under `-v`.
fn report_undetected(context: &Context, undetected: &[String]) {
    if context.verbose > 0 {
        for line in undetected {
            context.info(line);
        }
        return;
    }
    match undetected.len() {
        0 => {}
        1 => context.info(&format!(
            "1 lane not detected on this host ({}); -v says why",
            undetected[0]
                .strip_prefix("reviewer ")
                .and_then(|rest| rest.split(' ').next())
                .unwrap_or("?")
        )),
        n => context.info(&format!(
            "{n} lanes not detected on this host; -v lists them with the reason"
        )),
    }
}

/// Reads the phase (or checks the prompt file) before anything else happens.
fn subject(
    context: &Context,
    request: &ReviewArgs,
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
    if let Some(problem) = super::run::unusable_prompt(&path) {
        return Err(Failure::new(problem));
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
    // Decisions.md #14: a run without a real review never replaces one that has some.
    let wanted = f.subject.output();
    let kept_aside = count == 0 && preserve::must_keep(wanted);
    let failed_path = preserve::failed_path(wanted);
    let output_path: &Path = if kept_aside { &failed_path } else { wanted };
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
    let outcome = if f.interrupted {
        Verdict::Interrupted
    } else if count == 0 {
        Verdict::Failed
    } else if count < f.jobs.len() {
        Verdict::Partial
    } else {
        Verdict::Complete
    };
    summary(f, output_path, count, status, outcome);
    output::eprint_line(&format!("review: wrote {}", output_path.display()));
    if kept_aside {
        output::eprint_line(&format!(
            "review: no reviewer produced a real review, so {} (which holds one) was kept; this run's result is {}",
            wanted.display(),
            output_path.display()
        ));
    }
    let resumable = f
        .results
        .iter()
        .any(|r| !matches!(r.done, Done::Ran { stubbed: false }));
    if status == 0 && !resumable {
        f.run_dir.remove();
    } else {
        output::eprint_line(&format!(
            "review: resume with: gsd-lane review --resume {}",
            f.run_dir.path.display()
        ));
        if f.interrupted {
            output::eprint_line(
                "review: interrupted; unfinished reviewers are marked not completed",
            );
        }
        kept(status);
    }
    Ok(status)
}

/// `1 reviewer`, `2 reviewers`: lanes are not all AI (the example lane, coderabbit's diff
/// checks), so the summary counts reviewers, not "AI systems".
fn reviewers(count: usize) -> String {
    if count == 1 {
        "1 reviewer".to_owned()
    } else {
        format!("{count} reviewers")
    }
}

/// How the run went, for the banner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Every reviewer that ran produced a real review.
    Complete,
    /// Some did, some did not (stub, budget failure, unavailable at run time).
    Partial,
    /// None did.
    Failed,
    /// Ctrl-C or SIGTERM.
    Interrupted,
}

impl Verdict {
    fn title(self) -> &'static str {
        match self {
            Verdict::Complete => "REVIEW COMPLETE",
            Verdict::Partial => "REVIEW PARTIAL",
            Verdict::Failed => "REVIEW FAILED",
            Verdict::Interrupted => "REVIEW INTERRUPTED",
        }
    }
}

fn summary(f: &Finish<'_>, output_path: &Path, count: usize, status: u8, verdict: Verdict) {
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
            "verdict": verdict.title().trim_start_matches("REVIEW ").to_lowercase(),
            "run_dir": (status != 0).then(|| f.run_dir.path.clone()),
        }));
        return;
    }
    let title = verdict.title();
    let mut text = format!("{RULE}\n GSD ► {title}\n{RULE}\n\n");
    match f.subject {
        Subject::Phase(p) => {
            text.push_str(&format!(
                "Phase {} reviewed by {}.\n\nFull review: {file_name}\n\nTo incorporate feedback into planning:\n  /gsd:plan-phase {} --reviews\n",
                p.arg,
                reviewers(count),
                p.arg
            ));
        }
        Subject::PromptFile { name, .. } => {
            text.push_str(&format!(
                "{name} reviewed by {}.\n\nFull review: {}\n",
                reviewers(count),
                output_path.display()
            ));
        }
    }
    output::print(&text);
}

/// The subject as the run record names it.
fn subject_key(subject: &Subject) -> SubjectKey {
    match subject {
        Subject::Phase(p) => SubjectKey::Phase {
            phase: p.arg.clone(),
            dir: p.dir.clone(),
        },
        Subject::PromptFile { path, .. } => SubjectKey::PromptFile { path: path.clone() },
    }
}

/// Splits the jobs into those a resumed run keeps and those it runs (re-indexed from 0 for
/// the runner, run order kept).
fn split_kept(jobs: &[Job], decision: &crate::review::resume::Decision) -> (Vec<Job>, Vec<Job>) {
    let (kept, run): (Vec<Job>, Vec<Job>) = jobs
        .iter()
        .cloned()
        .partition(|job| decision.kept.contains_key(&job.identity.id));
    let run = run
        .into_iter()
        .enumerate()
        .map(|(index, job)| Job { index, ..job })
        .collect();
    (kept, run)
}

/// The results of every job in run order: kept ones as recorded, the others as they ran now.
fn merge_kept(
    jobs: &[Job],
    decision: &crate::review::resume::Decision,
    ran_jobs: &[Job],
    ran: Vec<LaneResult>,
) -> Vec<LaneResult> {
    let mut ran: BTreeMap<String, LaneResult> = ran_jobs
        .iter()
        .map(|job| job.identity.id.clone())
        .zip(ran)
        .collect();
    jobs.iter()
        .map(|job| match decision.kept.get(&job.identity.id) {
            Some(kept) => LaneResult {
                done: Done::Ran { stubbed: false },
                metadata: kept.metadata.clone(),
                started: true,
                retries: 0,
                repository_changes: Vec::new(),
            },
            None => ran.remove(&job.identity.id).unwrap_or(LaneResult {
                done: Done::Interrupted,
                metadata: None,
                started: false,
                retries: 0,
                repository_changes: Vec::new(),
            }),
        })
        .collect()
}
