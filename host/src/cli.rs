//! The command line, the top layer: the clap model of what the user typed, and the dispatch
//! of each subcommand to its function in [`crate::app`] (which never imports this module).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{ArgAction, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::app::{
    self, ColorWhen, Context, GlobalOptions, PlanArgs, RunOptions, SelectArgs, ValidateArgs,
};
use crate::error::Failure;
use crate::project::HostEnv;
use crate::review::args::LaneFlags;

/// gsd-lane: run GSD's cross-AI reviewer lanes, declared as data, under hard bounds.
#[derive(Debug, Parser)]
#[command(
    name = "gsd-lane",
    version = crate::manifest::semver::version_line(),
    about,
    max_term_width = 100
)]
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
    /// Recompute the panel verdict of a REVIEWS.md gsd-lane wrote (quorum, citations checked).
    Verdict(crate::app::verdict::VerdictArgs),
    /// Start a lane of your own: write a capability folder that validates as written.
    New(crate::app::new::NewArgs),
    /// Review changed files with the named lanes (`/gsd:code-review`); findings are unverified.
    CodeReview(crate::code_review::args::CodeReviewArgs),
    /// `code-review` for the GSD workflow: the step's trait checked, files on stdin, JSON out.
    DispatchStep(crate::code_review::args::CodeReviewArgs),
    /// Print the lane flags among the arguments after `--` as sorted, comma-joined slugs.
    ExplicitFromArgv(crate::code_review::args::ExplicitArgs),
}

/// `--json` alone.
#[derive(Debug, Args)]
pub struct JsonArg {
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
        match (&mut cli.command, matches.subcommand()) {
            (Command::Review(review), Some(("review", sub))) => {
                crate::review::args::named_lanes(review, sub, lanes);
            }
            (
                Command::CodeReview(args) | Command::DispatchStep(args),
                Some(("code-review" | "dispatch-step", sub)),
            ) => {
                (args.lanes, args.inactive_flags) = crate::review::args::named(sub, lanes);
            }
            _ => {}
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
            Command::Verdict(_) => "verdict",
            Command::New(_) => "new",
            Command::CodeReview(_) => "code-review",
            Command::DispatchStep(_) => "dispatch-step",
            Command::ExplicitFromArgv(_) => "explicit-from-argv",
        }
    }
}

impl Cli {
    /// The global options, as `app` takes them.
    fn globals(&self) -> GlobalOptions {
        GlobalOptions {
            project: self.project.clone(),
            verbose: self.verbose,
            quiet: self.quiet,
            color: self.color,
            compat_version: self.compat_version.clone(),
        }
    }
}

/// Runs the parsed command.
///
/// # Errors
///
/// A [`Failure`] carrying the message and exit status.
pub fn run(cli: Cli, env: HostEnv) -> Result<u8, Failure> {
    let context = Context::new(&cli.globals(), env, Cli::command).map_err(|mut failure| {
        failure.status = usage_status(Some(cli.command.name()));
        failure
    })?;
    context.describe(cli.project.is_some());
    dispatch(&context, cli.command)
}

/// Calls the function of `command` in [`crate::app`].
fn dispatch(context: &Context, command: Command) -> Result<u8, Failure> {
    match command {
        Command::List(args) => app::list::run(context, args.json),
        Command::Validate(args) => app::validate::run(context, &args),
        Command::Flags(args) => app::roster::flags(context, &args),
        Command::Sections(args) => app::roster::sections(context, &args),
        Command::Plan(args) => app::plan::run(context, &args),
        Command::Run(args) => {
            app::run::run(context, &args.slug, &args.options, app::run::Caller::Run)
        }
        Command::Invoke(mut args) => {
            if args.options.handler_module.is_some() {
                return Err(Failure::usage(
                    "invoke never loads --handler-module (debugging only: use `gsd-lane run`)",
                ));
            }
            args.options.json = true;
            app::run::run(context, &args.slug, &args.options, app::run::Caller::Invoke)
        }
        Command::Review(args) => app::review::run(context, &args),
        Command::Runs(args) => app::runs::run(context, args.json),
        Command::Disclose(args) => app::trust::disclose(context, &args),
        Command::Install(args) => app::trust::install(context, &args),
        Command::Remove(args) => app::trust::remove(context, &args),
        Command::Trust(args) => app::trust::trust(context, &args),
        Command::Doctor(args) => app::doctor::run(context, &args),
        Command::Verdict(args) => app::verdict::run(context, &args),
        Command::New(args) => app::new::run(context, &args),
        Command::CodeReview(args) => {
            app::code_review::run(context, &args, crate::code_review::args::Caller::CodeReview)
        }
        Command::DispatchStep(args) => app::code_review::run(
            context,
            &args,
            crate::code_review::args::Caller::DispatchStep,
        ),
        Command::ExplicitFromArgv(args) => app::code_review::explicit_from_argv(context, &args),
        Command::Schema => app::schema(),
        Command::Manpage => app::manpage(context),
        Command::Completions(args) => app::completions(context, args.shell),
    }
}

/// The value of global option `name` (`--name V` or `--name=V`) in `args`, before any `--`.
fn global_value<'a>(args: &'a [OsString], name: &str) -> Option<&'a Path> {
    let prefix = format!("{name}=");
    let mut iter = args.iter().skip(1).take_while(|arg| *arg != "--");
    while let Some(arg) = iter.next() {
        if arg == name {
            return iter.next().map(Path::new);
        }
        if let Some(value) = arg.to_str().and_then(|a| a.strip_prefix(&prefix)) {
            return Some(Path::new(value));
        }
    }
    None
}

/// The lane flags `review` accepts, from the registry the command line points at
/// (`--project`, `--compat-version`); none unless the command line mentions `review`,
/// `help` or `completions` (every other command parses without loading the registry).
pub fn lane_flags_for(args: &[OsString], env: &HostEnv) -> Vec<LaneFlags> {
    let wanted = args.iter().skip(1).any(|arg| {
        arg == "review"
            || arg == "help"
            || arg == "completions"
            || arg == "manpage"
            || arg == "code-review"
            || arg == "dispatch-step"
    });
    if !wanted {
        return Vec::new();
    }
    let compat = global_value(args, "--compat-version").and_then(Path::to_str);
    let context = Context::locate(
        global_value(args, "--project"),
        compat,
        env.clone(),
        Cli::command,
    );
    crate::review::args::lane_flags(&context.registry())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every `.rs` file under `dir`, recursively.
    fn sources(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).expect("readable source folder") {
            let path = entry.expect("readable entry").path();
            if path.is_dir() {
                found.extend(sources(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
        found
    }

    #[test]
    fn app_never_imports_the_command_line() {
        let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/app");
        let files = sources(&app);
        assert!(
            files.len() > 10,
            "{} files under {}",
            files.len(),
            app.display()
        );
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source");
            assert!(
                !text.contains("crate::cli"),
                "{} imports the command line, the layer above it",
                file.display()
            );
        }
    }
}
