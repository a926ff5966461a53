//! Stage 3 of a review: the prepared run (review-workflow.md §7). The run dir (a resumed run
//! reuses its own and locks it), the prompt and section files, and their hashes for the run
//! record (a resumed run writes them to a scratch dir first, to compare with the recorded ones).

use std::collections::BTreeMap;

use super::notice::Notices;
use super::record;
use super::request::Request;
use super::resume::RunLock;
use super::rundir::RunDir;
use crate::context::Context;
use crate::error::Failure;

/// A run dir holding the review's inputs.
pub struct Prepared {
    /// The run dir.
    pub run_dir: RunDir,
    /// Held (never read) while the review runs: no second review of this run dir meanwhile.
    _lock: RunLock,
    /// Plan file names (phase form), `None` in the `--prompt-file` form.
    pub plan_names: Option<Vec<String>>,
    /// The hashes of the input files (run record).
    pub input_hashes: BTreeMap<String, String>,
    /// Where the review says things ([`say_kept`]).
    notices: Notices,
}

impl Prepared {
    /// `failure`, after saying the run dir is kept.
    pub fn kept(&self, failure: Failure) -> Failure {
        say_kept(&self.notices, &self.run_dir);
        failure
    }
}

/// Creates (or reopens) the run dir and writes the inputs.
///
/// # Errors
///
/// The run dir cannot be created or locked, or an input cannot be written or hashed.
pub fn prepare(context: &Context, request: &Request) -> Result<Prepared, Failure> {
    let run_dir = match &request.past {
        Some(past) => RunDir {
            path: past.dir.clone(),
            ledger: Some(past.ledger.clone()),
            held: past.held.clone(),
        },
        None => match super::ledger::root(&context.env) {
            Ok(root) => RunDir::create_recorded(&root)?,
            Err(failure) => {
                request
                    .notices
                    .warn(format!("{failure}; this run cannot be resumed"));
                RunDir::create()?
            }
        },
    };
    let lock = super::resume::lock(&run_dir.path)?;
    let keep = |failure: Failure| -> Failure {
        say_kept(&request.notices, &run_dir);
        failure
    };
    let inputs_dir = match &request.past {
        Some(_) => RunDir::create()?,
        None => run_dir.clone(),
    };
    let plan_names = request
        .subject
        .write_inputs(&inputs_dir, context)
        .map_err(keep)?;
    let input_hashes = record::hash_inputs(&inputs_dir.path);
    if request.past.is_some() {
        inputs_dir.remove();
    }
    let input_hashes = input_hashes.map_err(keep)?;
    Ok(Prepared {
        run_dir,
        _lock: lock,
        plan_names,
        input_hashes,
        notices: request.notices.clone(),
    })
}

/// Says that the run dir is kept (every review that does not end cleanly keeps it).
pub fn say_kept(notices: &Notices, run_dir: &RunDir) {
    notices.review(format!("run dir kept: {}", run_dir.path.display()));
}
