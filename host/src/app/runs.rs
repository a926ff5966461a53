//! `gsd-lane runs [--json]`: the review runs kept in the temp dir, newest first, with their
//! state (`complete`, `resumable`, `running`) and each identity's last status.

use serde_json::Value;

use crate::error::Failure;
use crate::output;
use crate::review::journal::Status;
use crate::review::resume;

/// Runs `runs`.
///
/// # Errors
///
/// Never fails; an empty list prints a hint on stderr.
pub fn run(json: bool) -> Result<u8, Failure> {
    let runs = resume::list();
    if json {
        output::print_json(&Value::Array(
            runs.iter().map(resume::PastRun::to_json).collect(),
        ));
        return Ok(0);
    }
    if runs.is_empty() {
        output::eprint_line(&format!(
            "no review runs under {}",
            resume::runs_root().display()
        ));
        return Ok(0);
    }
    let mut text = String::new();
    for past in &runs {
        let subject = match &past.record.subject {
            crate::review::record::SubjectKey::Phase { phase, .. } => format!("phase {phase}"),
            crate::review::record::SubjectKey::PromptFile { path } => path.display().to_string(),
        };
        let ids: Vec<String> = past
            .statuses
            .iter()
            .map(|(id, s)| format!("{id}={}", s.map_or("missing", Status::as_str)))
            .collect();
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\n",
            past.dir.display(),
            past.record.created,
            past.state(),
            output::neutralize(&subject),
            output::neutralize(&ids.join(" "))
        ));
    }
    output::print(&text);
    Ok(0)
}
