//! The command line as the user typed it (clap derive only; no I/O here).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// gsd-lane: run GSD's cross-AI reviewer lanes, declared as data, under hard bounds.
#[derive(Debug, Parser)]
#[command(name = "gsd-lane", version, about, max_term_width = 100)]
pub struct Cli {
    /// Project root (default: the nearest directory holding `.planning/`, else the git top
    /// level, else the working directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,

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
    /// Resolve the selected lanes' plans (never probes or runs anything).
    Plan(PlanArgs),
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
