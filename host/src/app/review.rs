//! `gsd-lane review`: the multi-lane review run (review-workflow.md).

use clap::Args;

use super::Context;
use crate::error::Failure;

/// Arguments of `review`.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// Lane flags and options, parsed against the loaded lanes.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

/// Runs `review`.
///
/// # Errors
///
/// Usage errors and failures of the run.
pub fn run(_context: &Context, _args: &ReviewArgs) -> Result<u8, Failure> {
    Err(Failure::new("review is not available in this build yet"))
}
