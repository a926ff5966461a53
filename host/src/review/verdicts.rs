//! Stage 4 of a review: the pre-flight verdicts (review-workflow.md §9). Every selected
//! identity admitted once with its own plan; the run record written (a resumed run checks its
//! inputs against it and decides what to keep); an explicit identity that cannot run stops the
//! review here, before anything is invoked.

use serde_json::Value;

use super::budget;
use super::choose::Chosen;
use super::exit::Exit;
use super::lane_facts;
use super::notice::Notices;
use super::preflight::{self, Probing};
use super::prepared::{self, Prepared};
use super::record::{self, IdentityRecord, RunRecord};
use super::request::Request;
use super::resume::Decision;
use super::reviews_md::{Entry, Fate};
use super::runner::Job;
use super::selection::{self, Identity, Source};
use crate::context::Context;
use crate::error::Failure;
use crate::output::neutralize;
use crate::plan::PlanInputs;
use crate::refusal::Refusal;
use crate::registry::Lane;

/// What pre-flight decided for every selected identity.
pub struct Verdicts {
    /// The identities that run, in run order (all of them, kept ones of a resume included).
    pub jobs: Vec<Job>,
    /// The entries of identities that do not run (skipped discovered ones, excluded lanes).
    pub not_run: Vec<Entry>,
    /// What a resumed run keeps and how many attempts each identity already made.
    pub decision: Decision,
}

/// The pre-flight of every identity, before the run record is written.
struct Admissions {
    jobs: Vec<Job>,
    not_run: Vec<Entry>,
    blocked: Vec<(String, Refusal)>,
    plans: Vec<Value>,
    recorded: Vec<IdentityRecord>,
}

/// Pre-flight of the chosen identities, then the run record.
///
/// # Errors
///
/// `Ok(Err(Exit::ExplicitBlocked))` when an explicit identity cannot run (after the record);
/// a [`Failure`] when the record cannot be written or a resume is refused.
pub fn preflight(
    context: &Context,
    request: &Request,
    chosen: &mut Chosen,
    prepared: &Prepared,
    probing: &Probing<'_>,
) -> Result<Result<Verdicts, Exit>, Failure> {
    let mut admitted = admit_all(request, chosen, prepared, probing);
    let _ = prepared.run_dir.write(
        "gsd-review-lanes.json",
        &format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Array(std::mem::take(&mut admitted.plans)))
                .unwrap_or_default()
        ),
    );
    let decision = record(context, request, chosen, prepared, admitted.recorded)?;
    if !admitted.blocked.is_empty() {
        for (id, refusal) in &admitted.blocked {
            request.notices.error(format!(
                "explicit reviewer '{id}' cannot run ({}: {}); nothing was invoked",
                refusal.reason,
                neutralize(&refusal.detail)
            ));
        }
        prepared::say_kept(&request.notices, &prepared.run_dir);
        return Ok(Err(Exit::ExplicitBlocked));
    }
    let mut not_run = admitted.not_run;
    for (slug, reason) in &chosen.selection.not_run {
        if let Some(lane) = request.registry.lane(slug) {
            let fate = Fate::NotRun {
                reason: reason.to_string(),
            };
            not_run.push(lane_facts::entry(
                &selection::builtin(slug),
                lane,
                None,
                fate,
            ));
        }
    }
    for (identity, refusal) in &chosen.selection.skipped {
        if let Some(lane) = request.registry.lane(&identity.cli) {
            let fate = Fate::NotRun {
                reason: refusal.reason.to_string(),
            };
            not_run.push(lane_facts::entry(identity, lane, None, fate));
        }
    }
    Ok(Ok(Verdicts {
        jobs: admitted.jobs,
        not_run,
        decision,
    }))
}

/// Admits every identity once (its plan, its lane's probe verdict): a job, a skipped entry or,
/// for an explicit identity, a block.
fn admit_all(
    request: &Request,
    chosen: &mut Chosen,
    prepared: &Prepared,
    probing: &Probing<'_>,
) -> Admissions {
    let explicit = chosen.source == Source::ExplicitFlags;
    let mut out = Admissions {
        jobs: Vec::new(),
        not_run: Vec::new(),
        blocked: Vec::new(),
        plans: Vec::new(),
        recorded: Vec::new(),
    };
    for identity in &chosen.selection.identities {
        let Some(lane) = request.registry.lane(&identity.cli) else {
            continue;
        };
        let budget = lane_facts::budget_of(lane, &request.config);
        let id = crate::plan::safe_instance_name(&identity.id);
        let prompt_file = budget::prompt_file(
            &prepared.run_dir,
            &id,
            budget,
            prepared.plan_names.is_some(),
        );
        let overrides = identity.overrides();
        // The plan is resolved once, by pre-flight's admission; the record holds that exact
        // plan, which the runner then runs. Only an identity refused before its plan could be
        // admitted (it never runs) has its plan resolved here, with the same inputs.
        let cleared = preflight::clear(
            lane,
            probing,
            (&overrides, prompt_file.clone()),
            &mut chosen.verdicts,
        );
        let plan = match &cleared {
            Ok(cleared) => {
                crate::plan::entry::resolved_entry(lane, &request.config, cleared.plan.clone())
            }
            Err(_) => plan_entry(request, prepared, probing, identity, lane, prompt_file),
        };
        out.recorded.push(super::continuation::identity_record(
            &identity.id,
            lane,
            plan.clone(),
        ));
        out.plans.push(plan);
        match cleared {
            Err(refusal) if explicit => out.blocked.push((identity.id.clone(), refusal)),
            Err(refusal) => out
                .not_run
                .push(skipped(&request.notices, identity, lane, &refusal)),
            Ok(cleared) => out.jobs.push(Job {
                index: out.jobs.len(),
                identity: identity.clone(),
                lane: lane.clone(),
                explicit,
                budget,
                cleared,
            }),
        }
    }
    out
}

/// The `plan --json` entry of an identity pre-flight refused (`gsd-review-lanes.json`, the run
/// record), resolved with the inputs pre-flight used.
fn plan_entry(
    request: &Request,
    prepared: &Prepared,
    probing: &Probing<'_>,
    identity: &Identity,
    lane: &Lane,
    prompt_file: Option<String>,
) -> Value {
    crate::plan::entry::plan_entry(
        lane,
        &request.config,
        &PlanInputs {
            run_dir: prepared.run_dir.as_str(),
            repo_root: probing.repo_root.clone(),
            prompt_file,
            instance: identity.overrides(),
            ..PlanInputs::default()
        },
    )
}

/// A discovered identity pre-flight refused: reported as info, entered as not run.
fn skipped(notices: &Notices, identity: &Identity, lane: &Lane, refusal: &Refusal) -> Entry {
    notices.info(format!(
        "reviewer {} skipped ({}: {})",
        identity.id,
        refusal.reason,
        neutralize(&refusal.detail)
    ));
    let fate = Fate::NotRun {
        reason: refusal.reason.to_string(),
    };
    lane_facts::entry(identity, lane, None, fate)
}

/// Writes the run record; a resumed run first checks that its inputs did not change, and
/// decides from its journal what it keeps.
fn record(
    context: &Context,
    request: &Request,
    chosen: &Chosen,
    prepared: &Prepared,
    identities: Vec<IdentityRecord>,
) -> Result<Decision, Failure> {
    let subject = &request.subject;
    let run_record = RunRecord {
        version: record::VERSION,
        created: crate::clock::iso_now(),
        created_ms: u64::try_from(crate::clock::now_millis()).unwrap_or(u64::MAX),
        subject: subject.key(),
        output: subject.output().to_owned(),
        cwd: context.env.cwd.clone(),
        run_dir: prepared.run_dir.path.clone(),
        args: super::continuation::recorded_args(&request.args, &request.registry),
        source: chosen.source.as_str().to_owned(),
        inputs: prepared.input_hashes.clone(),
        identities,
    };
    let dir = &prepared.run_dir;
    let Some(past) = &request.past else {
        run_record.write(dir).map_err(|f| prepared.kept(f))?;
        return Ok(Decision::default());
    };
    super::continuation::check_unchanged(
        &past.record,
        &run_record,
        request.args.force,
        &request.notices,
    )?;
    // The run dir's prompt and section files are written again from the inputs just checked:
    // a lane of the first run could have rewritten them (or planted a link, refused by name).
    subject
        .write_inputs(dir, context)
        .map_err(|f| prepared.kept(f))?;
    if request.args.force {
        let mut forced = run_record;
        forced.args.clone_from(&past.record.args);
        forced.write(dir).map_err(|f| prepared.kept(f))?;
    }
    Ok(super::resume::decide(
        &dir.path,
        &past.lines,
        &request.args.retry,
        super::captured::checked_bound(&request.config),
    ))
}
