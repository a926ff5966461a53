//! The `review --resume` glue between the review stages and `super::{record,
//! journal, resume}`: which run to continue, with which arguments, whether it may be continued,
//! and the run record written by every review.

use std::path::Path;

use super::args::{self, ReviewArgs as Request, ReviewArgs};
use super::notice::Notices;
use super::record::{self, IdentityRecord, RunRecord, SubjectKey};
use super::resume::{self, PastRun};
use crate::error::Failure;
use crate::output::neutralize;
use crate::registry::Registry;

/// Exit status of a refused resume (nothing was invoked).
pub const REFUSED: u8 = 2;

/// Finds the run `request` resumes: the named run dir, else the newest run of the same phase
/// or prompt file (`subject`), else the newest run started in `cwd`; only runs gsd-lane
/// recorded under `ledger_root` (`$GSD_HOME/.gsd/runs`) in this user's own 0700 run dirs.
///
/// # Errors
///
/// No such run, a run dir that is not ours or was changed (refused), or a record that cannot
/// be read (fail closed: never resumed).
pub fn target(
    request: &Request,
    subject: Option<&SubjectKey>,
    cwd: &Path,
    ledger_root: &Path,
    notices: &Notices,
) -> Result<PastRun, Failure> {
    if let Some(dir) = request.resume_dir() {
        return resume::inspect(ledger_root, &cwd.join(dir));
    }
    let (found, notes) = resume::latest(ledger_root, subject, cwd);
    for note in notes {
        notices.note(note);
    }
    found?.ok_or_else(|| {
        Failure::new(format!(
            "no resumable review run found in {} for {}; `gsd-lane runs` lists past runs",
            ledger_root.display(),
            match subject {
                Some(SubjectKey::Phase { phase, .. }) => format!("phase {}", neutralize(phase)),
                Some(SubjectKey::PromptFile { path }) => neutralize(&path.display().to_string()),
                None => format!(
                    "the working directory {}",
                    neutralize(&cwd.display().to_string())
                ),
            }
        ))
    })
}

/// The arguments a run record keeps: the selection ([`ReviewArgs::selection_argv`]) and the
/// `--sandbox` mode when one was given, so a resume runs as the run it continues (and says so
/// when that mode is not `enforce`).
pub fn recorded_args(args: &ReviewArgs, registry: &Registry) -> Vec<String> {
    let mut argv = args.selection_argv(registry);
    if let Some(mode) = args.sandbox {
        argv.extend(["--sandbox".to_owned(), mode.to_string()]);
    }
    argv
}

/// The request of the recorded run (parsed against `command_line`, the command line's clap
/// model), with this invocation's resume options, `--jobs` and `--json` on top.
///
/// # Errors
///
/// The recorded arguments no longer parse (a lane flag disappeared), or `--retry` names an
/// identity the run never had.
pub fn merged_request(
    past: &PastRun,
    current: &Request,
    registry: &Registry,
    command_line: clap::Command,
    notices: &Notices,
) -> Result<Request, Failure> {
    let mut request =
        args::parse(command_line, &past.record.args, registry).map_err(|why| Failure {
            message: format!(
                "the recorded arguments of {} no longer parse ({why}); start a new review",
                past.dir.display()
            ),
            status: REFUSED,
        })?;
    for id in &current.retry {
        if !past.record.identities.iter().any(|i| &i.id == id) {
            return Err(Failure::new(format!(
                "--retry {}: the run at {} has no such reviewer (it has {})",
                neutralize(id),
                past.dir.display(),
                past.record
                    .identities
                    .iter()
                    .map(|i| i.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    super::selection::same_lanes(&request.lanes, &current.lanes).map_err(|why| Failure {
        message: format!("{why}; the run at {} cannot continue", past.dir.display()),
        status: REFUSED,
    })?;
    if current.sandbox.is_some() {
        request.sandbox = current.sandbox;
    } else if let Some(mode) = request
        .sandbox
        .filter(|mode| *mode != crate::sandbox::SandboxMode::Enforce)
    {
        notices.warn(format!(
            "the resumed run uses --sandbox {mode}, as recorded by the run it continues in gsd-lane's own record (pass --sandbox enforce to confine its lanes)"
        ));
    }
    request.resume.clone_from(&current.resume);
    request.retry.clone_from(&current.retry);
    request.force = current.force;
    request.json = current.json || request.json;
    if current.jobs.is_some() {
        request.jobs = current.jobs;
    }
    Ok(request)
}

/// Says which identities a resumed run keeps and which it runs (identity ids, run order).
pub fn announce(notices: &Notices, dir: &Path, kept: &[&str], again: &[&str]) {
    let ids = |ids: &[&str]| {
        if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.join(",")
        }
    };
    notices.review(format!(
        "resuming {}: keeping {}; running {}",
        dir.display(),
        ids(kept),
        ids(again)
    ));
}

/// One identity's record entry.
pub fn identity_record(
    id: &str,
    lane: &crate::registry::Lane,
    plan: serde_json::Value,
) -> IdentityRecord {
    IdentityRecord {
        id: id.to_owned(),
        cli: lane.slug.clone(),
        manifest_sha256: record::manifest_sha256(lane.manifest()),
        signature: crate::trust::signature::signature_for_manifest(lane.manifest()),
        plan,
    }
}

/// Refuses a resume whose inputs changed, naming every change, unless `force`.
///
/// # Errors
///
/// The list of changes, with the way out.
pub fn check_unchanged(
    old: &RunRecord,
    new: &RunRecord,
    force: bool,
    notices: &Notices,
) -> Result<(), Failure> {
    let changes = record::changes(old, new);
    if changes.is_empty() {
        return Ok(());
    }
    if force {
        for change in &changes {
            notices.warn(format!("resuming anyway (--force): {}", change.0));
        }
        return Ok(());
    }
    let list: Vec<String> = changes.iter().map(|c| format!("  - {}", c.0)).collect();
    Err(Failure {
        message: format!(
            "cannot resume: the review's inputs changed since the run started:\n{}\nstart a new review, or pass --force to keep the finished reviews anyway",
            list.join("\n")
        ),
        status: REFUSED,
    })
}
