//! The command line as the user typed it (clap derive only; no I/O here).

use std::path::PathBuf;

use clap::{
    ArgAction, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum,
};

use crate::review::args::LaneFlags;

/// gsd-lane: run GSD's cross-AI reviewer lanes, declared as data, under hard bounds.
#[derive(Debug, Parser)]
#[command(name = "gsd-lane", version, about, max_term_width = 100)]
pub struct Cli {
    /// Project root (default: the nearest directory holding `.planning/`, else the git top
    /// level, else the working directory).
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        help_heading = "Global options"
    )]
    pub project: Option<PathBuf>,

    /// Say on stderr which project root, config files, GSD home, consent and pin stores are
    /// used, and why each lane was or was not selected.
    #[arg(short, long, global = true, action = ArgAction::Count, conflicts_with = "quiet", help_heading = "Global options")]
    pub verbose: u8,

    /// Only warnings, errors and results: no `info:` lines.
    #[arg(short, long, global = true, help_heading = "Global options")]
    pub quiet: bool,

    /// Colour: `auto` (a terminal, and `NO_COLOR` unset or empty), `always` or `never`.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN", help_heading = "Global options")]
    pub color: ColorWhen,

    /// GSD compatibility version used for `engines.gsd` gating (testing aid).
    #[arg(long, global = true, hide = true, value_name = "VERSION")]
    pub compat_version: Option<String>,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Colour when writing to a terminal and `NO_COLOR` is unset or empty.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl ColorWhen {
    /// Whether to colour a stream that is (or is not) a terminal, given `NO_COLOR`.
    pub fn enabled(self, terminal: bool, no_color: bool) -> bool {
        match self {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => terminal && !no_color,
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every discovered lane, whether it is active, and why not.
    List(JsonArg),
    /// Validate capability manifests (files or folders) as one merged set.
    Validate(ValidateArgs),
    /// Print the lane flags, one per line, in descriptor order.
    Flags(SelectArgs),
    /// Print `slug<TAB>reviewsSection`, one lane per line, in descriptor order.
    Sections(SelectArgs),
    /// Print the JSON Schema of a capability manifest's lane-relevant parts.
    Schema,
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Print the man page (roff), generated from this command line's own model.
    Manpage,
    /// Resolve the selected lanes' plans (never probes or runs anything).
    Plan(PlanArgs),
    /// Run one lane and report what it did (for debugging a lane).
    Run(RunArgs),
    /// Alias of `run <slug> --json` for the GSD review workflow.
    Invoke(InvokeArgs),
    /// Review a plan set with every selected lane and write REVIEWS.md.
    Review(crate::review::args::ReviewArgs),
    /// List past review runs (newest first) and whether `review --resume` can continue them.
    Runs(JsonArg),
    /// Show what each lane runs or where it sends data, and what it receives.
    Disclose(crate::app::trust::DiscloseArgs),
    /// Validate, disclose and install a capability folder.
    Install(crate::app::trust::InstallArgs),
    /// Remove an installed capability and its consent record.
    Remove(crate::app::trust::RemoveArgs),
    /// Consent records: list, approve, revoke, rebind-host; repair a damaged store.
    Trust(crate::app::trust::TrustArgs),
    /// Is each lane ready here (program, probe, trust, readiness), and what fixes it.
    Doctor(crate::app::doctor::DoctorArgs),
}

/// `--json` alone.
#[derive(Debug, Args)]
pub struct JsonArg {
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// `capability.json` files or capability folders (default: every discovered overlay
    /// together with the first-party set).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `flags` and `sections`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Comma-separated slugs (default: every lane); unknown slugs are dropped.
    #[arg(long, value_name = "A,B")]
    pub selected: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// Target shell.
    pub shell: clap_complete::Shell,
}

/// Arguments of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Comma-separated slugs (default: every lane).
    #[arg(long, value_name = "A,B")]
    pub selected: Option<String>,
    /// Run directory the plans point into.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub run_dir: String,
    /// Repository root (default: the working directory).
    #[arg(long, value_name = "DIR")]
    pub repo_root: Option<String>,
    /// Machine-readable output (the default output is JSON too; kept for symmetry).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The lane's slug.
    pub slug: String,
    /// Options shared with `invoke`.
    #[command(flatten)]
    pub options: RunOptions,
}

/// Arguments of `invoke` (the workflow's name for `run --json`).
#[derive(Debug, Args)]
pub struct InvokeArgs {
    /// The lane's slug.
    #[arg(long)]
    pub slug: String,
    /// Options shared with `run`.
    #[command(flatten)]
    pub options: RunOptions,
}

/// Options of one lane run.
#[derive(Debug, Args)]
pub struct RunOptions {
    /// Run directory (default: a fresh private temporary directory, kept and printed).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<String>,
    /// Repository root (default: the working directory).
    #[arg(long, value_name = "DIR")]
    pub repo_root: Option<String>,
    /// Use this file as the prompt.
    #[arg(long, value_name = "FILE", conflicts_with = "prompt")]
    pub prompt_file: Option<String>,
    /// `-` reads the prompt from standard input into the run directory.
    #[arg(long, value_name = "-")]
    pub prompt: Option<String>,
    /// The lane was requested explicitly: unavailability is an error (exit 2).
    #[arg(long)]
    pub explicit: bool,
    /// Reviewer instance name the review is written under.
    #[arg(long = "as", value_name = "NAME")]
    pub instance: Option<String>,
    /// Model override (answers the lane's model key).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Agent (opencode only).
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    /// Machine-readable output: `{"slug","ok","stubbed","reason"?,"detail"?}`.
    #[arg(long)]
    pub json: bool,
    /// Sandbox of the lane's processes for this run: enforce, detect or off (default:
    /// `review.sandbox`, else enforce).
    #[arg(long, value_name = "MODE", value_parser = crate::sandbox::SandboxMode::parse_flag)]
    pub sandbox: Option<crate::sandbox::SandboxMode>,
    /// Load a compiled handler module for this one run (debugging; never used by `review`).
    #[arg(long, value_name = "PATH")]
    pub handler_module: Option<std::path::PathBuf>,
}

/// The whole clap model: the derived commands plus `review`'s lane flags.
pub fn command(lanes: &[LaneFlags]) -> clap::Command {
    crate::review::args::with_lane_flags(Cli::command(), lanes)
}

impl Cli {
    /// Parses `args` against [`command`]`(lanes)`, lane flags included.
    ///
    /// # Errors
    ///
    /// Clap's error (usage, `--help`, `--version`), to be printed by the caller.
    pub fn parse_with_lanes<I, T>(args: I, lanes: &[LaneFlags]) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let command = command(lanes);
        let matches: ArgMatches = command.try_get_matches_from(args)?;
        let mut cli = Cli::from_arg_matches(&matches)?;
        if let (Command::Review(review), Some(("review", sub))) =
            (&mut cli.command, matches.subcommand())
        {
            crate::review::args::named_lanes(review, sub, lanes);
        }
        Ok(cli)
    }
}

/// The exit status of a usage error of subcommand `name` (the README's exit-status table):
/// 1 for `run` and `invoke` (invocation.md §14) and `review` (as its other usage errors),
/// 2 for every other command.
pub fn usage_status(name: Option<&str>) -> u8 {
    match name {
        Some("run" | "invoke" | "review") => 1,
        _ => 2,
    }
}

impl Command {
    /// The subcommand's name as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::List(_) => "list",
            Command::Validate(_) => "validate",
            Command::Flags(_) => "flags",
            Command::Sections(_) => "sections",
            Command::Schema => "schema",
            Command::Completions(_) => "completions",
            Command::Manpage => "manpage",
            Command::Plan(_) => "plan",
            Command::Run(_) => "run",
            Command::Invoke(_) => "invoke",
            Command::Review(_) => "review",
            Command::Runs(_) => "runs",
            Command::Disclose(_) => "disclose",
            Command::Install(_) => "install",
            Command::Remove(_) => "remove",
            Command::Trust(_) => "trust",
            Command::Doctor(_) => "doctor",
        }
    }
}
