//! Stage 2 of a review: the selection (review-workflow.md §4-§6). Normalize the config, pick
//! the branch, detect (admit and probe, once per candidate lane), select, self-skip, and say
//! what was chosen and why.

use std::collections::BTreeMap;

use super::exit::Exit;
use super::notice::Notices;
use super::preflight::{self, Probing};
use super::request::Request;
use super::selection::{self, ErrorKind, Normalized, Selection, Source};
use crate::context::Context;
use crate::output::neutralize;
use crate::refusal::Refusal;
use crate::registry::Registry;

/// Each candidate lane's probe verdict (what was found, or why it is unavailable).
pub type Verdicts = BTreeMap<String, Result<String, Refusal>>;

/// The selected identities, with the detection they were selected from.
pub struct Chosen {
    /// The selection branch.
    pub source: Source,
    /// The selection (identities in run order, and the lanes excluded as not run).
    pub selection: Selection,
    /// The probe verdicts of the candidate lanes.
    pub verdicts: Verdicts,
}

/// Selects the identities of the review, or the exit of a selection that failed.
///
/// # Errors
///
/// [`Exit::SelectionConfig`] or [`Exit::Selection`], after printing every error.
pub fn choose(context: &Context, request: &Request, probing: &Probing<'_>) -> Result<Chosen, Exit> {
    let registry = &request.registry;
    let notices = &request.notices;
    let lanes: Vec<String> = registry.lanes.iter().map(|l| l.slug.clone()).collect();
    let explicit = &request.args.lanes;
    let normalized = selection::normalize(&request.config, &lanes);
    let source = selection::branch(explicit, request.args.all, &normalized);
    let candidates = selection::candidates(source, explicit, &normalized, &lanes);
    let (verdicts, undetected) = detect(registry, &candidates, probing, source, notices);
    // Explicit lanes fail on their own; configured defaults are each warned about below.
    if !matches!(source, Source::ExplicitFlags | Source::ConfigDefault) {
        report_undetected(notices, &undetected);
    }
    let mut sel = selection::select(source, explicit, &normalized, &lanes, &verdicts);
    let me = selection::self_identity(
        request.args.self_slug.as_deref(),
        context.env.agent_markers.antigravity_agent.as_deref(),
        context.env.agent_markers.cursor_session_id.as_deref(),
        context.env.agent_markers.claude_code_entrypoint.as_deref(),
    );
    if sel.errors.is_empty() {
        selection::apply_self_skip(&mut sel, me.as_deref(), explicit);
    }
    explain_inactive_defaults(&mut sel, &normalized, registry);
    explain_retired_defaults(&mut sel, &normalized, registry);
    for warning in &sel.warnings {
        notices.warn(warning.as_str());
    }
    for info in &sel.infos {
        notices.info(info.as_str());
    }
    report_skipped(notices, &sel);
    if !sel.errors.is_empty() {
        for (_, error) in &sel.errors {
            notices.error(error.as_str());
        }
        let config_error = sel
            .errors
            .iter()
            .any(|(kind, _)| *kind == ErrorKind::Config);
        return Err(if config_error {
            Exit::SelectionConfig
        } else {
            Exit::Selection
        });
    }
    explain_selection(notices, registry, &sel, &verdicts);
    let ids: Vec<&str> = sel.identities.iter().map(|i| i.id.as_str()).collect();
    notices.review(format!(
        "selection source={} reviewers={}",
        source.as_str(),
        ids.join(",")
    ));
    warn_ignored_models(notices, registry, &sel);
    Ok(Chosen {
        source,
        selection: sel,
        verdicts,
    })
}

/// Detection (§4): each candidate lane admitted and probed once. Returns the verdicts and the
/// lines of the lanes not detected; a lane held back by a safety gate is warned about at once
/// (unless explicitly named: the selection's error then says it).
fn detect(
    registry: &Registry,
    candidates: &[String],
    probing: &Probing<'_>,
    source: Source,
    notices: &Notices,
) -> (Verdicts, Vec<String>) {
    let mut verdicts = BTreeMap::new();
    let mut undetected = Vec::new();
    for slug in candidates {
        let Some(lane) = registry.lane(slug) else {
            continue;
        };
        let found = preflight::detect(lane, probing);
        if let Err(refusal) = &found {
            // An explicitly named lane's refusal is the selection's error: said once, there.
            if refusal.reason.is_safety_gate() && source != Source::ExplicitFlags {
                // Installed but held back: never folded into the summary, the fix matters.
                notices.warn(format!(
                    "reviewer {slug} is held back ({}: {})",
                    refusal.reason,
                    neutralize(&refusal.detail)
                ));
            } else {
                undetected.push(format!(
                    "reviewer {slug} not detected ({}: {})",
                    refusal.reason,
                    neutralize(&refusal.detail)
                ));
            }
        }
        verdicts.insert(slug.clone(), found);
    }
    (verdicts, undetected)
}

/// Instances with a model on a lane that takes no model override: the CLI's default is used.
fn warn_ignored_models(notices: &Notices, registry: &Registry, sel: &Selection) {
    for identity in sel.identities.iter().filter(|i| i.instance) {
        if let (Some(model), Some(lane)) = (&identity.model, registry.lane(&identity.cli)) {
            if !super::lane_facts::accepts_model(lane) {
                notices.warn(format!(
                    "lane {} accepts no model override; model {:?} of instance {} is ignored and the CLI's own default is used",
                    identity.cli,
                    neutralize(model),
                    identity.id
                ));
            }
        }
    }
}

/// With `-v`: why each discovered lane was or was not selected.
fn explain_selection(notices: &Notices, registry: &Registry, sel: &Selection, verdicts: &Verdicts) {
    if !notices.verbose_wanted() {
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
            match verdicts.get(&lane.slug) {
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
        notices.verbose(format!("lane {}: {why}", lane.slug));
    }
    for entry in registry.entries.iter().filter(|e| e.skip.is_some()) {
        notices.verbose(format!(
            "not selectable: {}",
            crate::registry::inactive::explain(entry)
        ));
    }
}

/// `review.default_reviewers` entries naming a lane that exists but is not active: the
/// selection's "unknown slug" / "undefined instance" message becomes the lane's reason, source
/// file and fixing command.
fn explain_inactive_defaults(sel: &mut Selection, normalized: &Normalized, registry: &Registry) {
    for slug in normalized.defaults.iter().flatten() {
        let Some(entry) = crate::registry::inactive::by_slug(registry, slug) else {
            continue;
        };
        if registry.lane(slug).is_some() {
            continue;
        }
        let explained = crate::registry::inactive::explain(entry);
        explain_default(sel, slug, &explained);
    }
}

/// Replaces the selection's "unknown slug" warning (or "undefined instance" error) about the
/// `review.default_reviewers` entry `slug` with `explained`, the real reason.
fn explain_default(sel: &mut Selection, slug: &str, explained: &str) {
    let explained = format!("review.default_reviewers names {slug}: {explained}");
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

/// `review.default_reviewers` entries naming a retired first-party lane nothing declares now
/// (registry::retired): the "unknown slug" warning (or, with instances, the "undefined
/// instance" error) becomes why it was retired, its successor and how to keep it.
fn explain_retired_defaults(sel: &mut Selection, normalized: &Normalized, registry: &Registry) {
    for slug in normalized.defaults.iter().flatten() {
        let Some(retired) = crate::registry::retired::by_slug(registry, slug) else {
            continue;
        };
        explain_default(sel, slug, &retired.explain());
    }
}

/// Lanes that were candidates but are not on this host: one summary line, each with its
/// reason under `-v`.
fn report_undetected(notices: &Notices, undetected: &[String]) {
    if notices.verbose_wanted() {
        for line in undetected {
            notices.info(line.as_str());
        }
        return;
    }
    match undetected.len() {
        0 => {}
        1 => notices.info(format!(
            "1 lane not detected on this host ({}); -v says why",
            undetected[0]
                .strip_prefix("reviewer ")
                .and_then(|rest| rest.split(' ').next())
                .unwrap_or("?")
        )),
        n => notices.info(format!(
            "{n} lanes not detected on this host; -v lists them with the reason"
        )),
    }
}

/// Configured default reviewers that are not available here: one warning each, with why (the
/// review goes on without them, and REVIEWS.md and the banner list them as not run).
fn report_skipped(notices: &Notices, sel: &Selection) {
    for (identity, refusal) in &sel.skipped {
        let lane = if identity.instance {
            format!(" (lane {})", identity.cli)
        } else {
            String::new()
        };
        notices.warn(format!(
            "configured default reviewer {}{lane} is skipped: not available on this host ({}: {})",
            neutralize(&identity.id),
            refusal.reason,
            neutralize(&refusal.detail)
        ));
    }
}
