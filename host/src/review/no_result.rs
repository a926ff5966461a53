//! The end of a review in which no lane produced a result (ADR-3473 §8.5, decisions.md row 20):
//! every lane failed, stubbed, was skipped by its budget or could not run. REVIEWS.md is not
//! written (an earlier one stays as it is), the run reports `GSD ► REVIEW FAILED` and exits 2,
//! and the lanes' diagnostics are copied beside REVIEWS.md ([`super::diagnostics`]).
//!
//! Unlike the upstream, which removes the run dir after the copy, gsd-lane keeps it so the run
//! can be resumed (review-workflow.md §12); when the copy fails it says that the diagnostics are
//! only in the run dir.

use std::path::Path;

use serde_json::json;

use super::diagnostics::{self, Saved};
use super::exit::Exit;
use super::prepared::say_kept;
use super::progress::{self, Mode, RULE};
use super::results::Results;
use super::reviews_md::{Entry, Fate};
use super::rundir::RunDir;
use crate::output::{self, neutralize};

/// What became of one identity, for the report (`Alpha (diagnostic stub)`).
fn outcome(entry: &Entry) -> String {
    let what = match &entry.fate {
        Fate::Ran { stubbed: true, .. } => "diagnostic stub".to_owned(),
        Fate::Ran { .. } => "review".to_owned(),
        Fate::BudgetFailed { .. } => "skipped by its prompt budget".to_owned(),
        Fate::Interrupted { .. } => "interrupted".to_owned(),
        Fate::NotRun { reason } => format!("not run: {reason}"),
    };
    format!("{} ({what})", entry.display())
}

/// Reports the run, saves its diagnostics next to `output` (the REVIEWS.md not written), keeps
/// the run dir with the way to resume, and returns [`Exit::NoneRan`].
pub fn finish(output_path: &Path, run_dir: &RunDir, done: &Results, entries: &[Entry]) -> Exit {
    let into = output_path.parent().unwrap_or_else(|| Path::new("."));
    let saved = diagnostics::save(&run_dir.path, into, &super::reviews_md::utc_now());
    let outcomes: Vec<String> = entries.iter().map(outcome).collect();
    let notices = &done.notices;
    notices.flush();
    if done.mode == Mode::Json {
        progress::event(&json!({
            "event": "complete",
            "reviews": null,
            "count": 0,
            "status": Exit::NoneRan.status(),
            "interrupted": false,
            "verdict": "failed",
            "run_dir": run_dir.path,
            "diagnostics": saved.as_ref().ok().map(|s| s.dir.clone()),
            "outcomes": outcomes,
            "notices": notices.shown(),
        }));
    } else {
        output::print(&banner(output_path, &outcomes, saved.as_ref().ok()));
    }
    notices.error(format!(
        "no reviewer produced a review; {} was not written",
        output_path.display()
    ));
    match &saved {
        Ok(saved) => {
            notices.review(format!("diagnostics saved to {}", saved.dir.display()));
            for (name, why) in &saved.refused {
                notices.warn(format!(
                    "diagnostics: {} not copied: {}",
                    neutralize(name),
                    neutralize(why)
                ));
            }
        }
        Err(err) => notices.warn(format!(
            "the diagnostics could not be saved ({err}); they are only in the run dir, which is kept"
        )),
    }
    notices.review(format!(
        "resume with: gsd-lane review --resume {}",
        run_dir.path.display()
    ));
    say_kept(notices, run_dir);
    Exit::NoneRan
}

/// The `REVIEW FAILED` banner.
fn banner(output_path: &Path, outcomes: &[String], saved: Option<&Saved>) -> String {
    let name = output_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut text = format!(
        "{RULE}\n GSD ► REVIEW FAILED\n{RULE}\n\nNo reviewer produced a review; {name} was not written and nothing changed.\n"
    );
    if !outcomes.is_empty() {
        text.push_str(&format!(
            "Reviewers: {}\n",
            neutralize(&outcomes.join(", "))
        ));
    }
    if let Some(saved) = saved {
        text.push_str(&format!("\nDiagnostics: {}\n", saved.dir.display()));
    }
    text
}
