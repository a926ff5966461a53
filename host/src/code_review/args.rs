//! The command line of `code-review`, `dispatch-step` and `explicit-from-argv` (clap derive;
//! lane flags are added at run time by `crate::review::args::with_lane_flags`, as for `review`).

use clap::Args;

/// Arguments of `code-review` and `dispatch-step`.
#[derive(Debug, Clone, Default, Args)]
#[command(
    after_help = "Changed files come from the arguments and --files-from (one path a \
line, `-` for stdin); without either, from stdin when it is not a terminal (dispatch-step \
always reads stdin then). Paths are relative to the repository root, as `git diff --name-only \
<base>` prints them. Lanes are named by lane flags (`gsd-lane flags`) or --explicit; with none, \
nothing is dispatched (no_lanes_selected). The lanes' findings are UNVERIFIED: re-open each \
cited line before accepting one. A call that was interrupted or whose lanes did not all finish \
says how to continue it: `--resume <runDir>` runs only the lanes without a finished review."
)]
pub struct CodeReviewArgs {
    /// Changed files (relative to the repository root, or absolute inside it).
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// Read more changed files from FILE, one a line (`-`: stdin).
    #[arg(long, value_name = "FILE")]
    pub files_from: Option<String>,
    /// The commit the changes are measured from (4-64 hex digits; required).
    #[arg(long, value_name = "SHA")]
    pub base_sha: Option<String>,
    /// `quick`, `standard` or `deep` (default: `workflow.code_review_depth`, else standard;
    /// anything else is read as standard).
    #[arg(long, value_name = "DEPTH")]
    pub depth: Option<String>,
    /// The repository root (default: the git top level of the working directory; it must be
    /// that directory).
    #[arg(long, value_name = "DIR")]
    pub repo_root: Option<String>,
    /// Where the request and the lanes' review copies go (default: a fresh private 0700
    /// directory under `$GSD_HOME/.gsd/code-review/`, kept and printed; a given one must be your
    /// own and not writable by others).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<String>,
    /// The workflow's working directory: checked like the other paths; it must lie inside the
    /// repository root. Lanes run from gsd-lane's working directory, as in `review`.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// Comma-separated lane slugs (what `explicit-from-argv` prints), besides any lane flags.
    #[arg(long, value_name = "SLUGS")]
    pub explicit: Option<String>,
    /// The capability whose step dispatches (with --point); required by dispatch-step.
    #[arg(long, value_name = "ID")]
    pub cap_id: Option<String>,
    /// The loop point of that step (with --cap-id); required by dispatch-step.
    #[arg(long, value_name = "POINT")]
    pub point: Option<String>,
    /// Accepted for the upstream workflow; the JSON result is always printed inline.
    #[arg(long)]
    pub raw: bool,
    /// The findings file (REVIEWS.md form with the panel verdict; default
    /// `<run dir>/REVIEWS.md`).
    #[arg(long, value_name = "FILE")]
    pub out: Option<String>,
    /// At most this many lanes at a time, as `review --jobs`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// How spawned lanes may touch the repository, as `review --sandbox`.
    #[arg(long, value_name = "MODE", value_parser = crate::sandbox::SandboxMode::parse_flag)]
    pub sandbox: Option<crate::sandbox::SandboxMode>,
    /// Exit 2 when the panel verdict's quorum is not met, as `review --require-quorum`.
    #[arg(long)]
    pub require_quorum: bool,
    /// The result as one JSON object on stdout (always, for dispatch-step).
    #[arg(long)]
    pub json: bool,
    /// Continue a call that was interrupted or whose lanes did not all finish: the recorded
    /// request and lanes, only the lanes without a finished review run again (RUN_DIR: the
    /// call's `runDir`, or the review run dir it printed; default: the latest run started in
    /// this directory).
    #[arg(long, value_name = "RUN_DIR", num_args = 0..=1, default_missing_value = "",
          conflicts_with_all = ["files", "files_from", "base_sha", "depth", "repo_root",
                                "run_dir", "cwd", "explicit", "out"])]
    pub resume: Option<String>,
    /// Active lanes named by a lane flag, by slug (filled from the lane flags).
    #[arg(skip)]
    pub lanes: Vec<String>,
    /// Lane flags given that name a lane which exists but is not active.
    #[arg(skip)]
    pub inactive_flags: Vec<String>,
}

/// Arguments of `explicit-from-argv`.
#[derive(Debug, Clone, Default, Args)]
pub struct ExplicitArgs {
    /// `{"explicit": [...]}` instead of the comma-joined line.
    #[arg(long)]
    pub json: bool,
    /// The code-review command's arguments (after `--`).
    #[arg(last = true, value_name = "ARGS", allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Who called: a person (`code-review`) or the workflow (`dispatch-step`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// `gsd-lane code-review`: the trait is checked only when `--cap-id`/`--point` are given.
    CodeReview,
    /// `gsd-lane dispatch-step`: the trait is always checked, the result is always JSON.
    DispatchStep,
}

impl Caller {
    /// The subcommand's name.
    pub fn command(self) -> &'static str {
        match self {
            Caller::CodeReview => "code-review",
            Caller::DispatchStep => "dispatch-step",
        }
    }
}
