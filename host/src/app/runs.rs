//! `gsd-lane runs [--json]`: this user's review runs that gsd-lane recorded
//! (`$GSD_HOME/.gsd/runs`), newest first, with their state (`complete`, `resumable`,
//! `running`) and each identity's last status. Runs skipped (a run dir that is not this user's
//! own 0700 dir, changed copies, a planted `run.lock`) are named on stderr with the reason.

use serde_json::Value;

use crate::context::Context;
use crate::error::Failure;
use crate::output::{self, escape_text};
use crate::review::journal::Status;
use crate::review::record::SubjectKey;
use crate::review::resume::{self, PastRun};

/// Runs `runs`.
///
/// # Errors
///
/// Never fails; without `GSD_HOME` and `HOME` there are no records, which it says.
pub fn run(context: &Context, json: bool) -> Result<u8, Failure> {
    let listing = match crate::review::ledger::root(&context.env) {
        Ok(root) => resume::list(&root),
        Err(failure) => {
            output::eprint_line(&format!("note: {failure}"));
            resume::Listing::default()
        }
    };
    for note in &listing.notes {
        output::eprint_line(&format!("note: {note}"));
    }
    if json {
        output::print_json(&Value::Array(
            listing.runs.iter().map(PastRun::to_json).collect(),
        ));
        return Ok(0);
    }
    if listing.runs.is_empty() {
        output::eprint_line(
            "no review runs recorded (gsd-lane records them in $GSD_HOME/.gsd/runs)",
        );
        return Ok(0);
    }
    let text: String = listing.runs.iter().map(line).collect();
    output::print(&text);
    Ok(0)
}

/// One run's line: every field escaped for the terminal, whatever a record holds (a phase
/// name or a prompt file path comes from the repository, an identity name from its config).
fn line(past: &PastRun) -> String {
    let subject = match &past.record.subject {
        SubjectKey::Phase { phase, .. } => format!("phase {phase}"),
        SubjectKey::PromptFile { path } => path.display().to_string(),
    };
    let ids: Vec<String> = past
        .statuses
        .iter()
        .map(|(id, s)| format!("{id}={}", s.map_or("missing", Status::as_str)))
        .collect();
    let fields = [
        past.dir.display().to_string(),
        past.record.created.clone(),
        past.state().to_owned(),
        subject,
        ids.join(" "),
    ];
    let escaped: Vec<String> = fields.iter().map(|f| escape_text(f)).collect();
    format!("{}\n", escaped.join("\t"))
}
