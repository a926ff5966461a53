//! The options of the commands, as the layer above (`cli`) parses them and hands them to
//! `app`: the global options, the command line's model, and the argument types of `validate`,
//! `flags`/`sections`, `plan` and `run`/`invoke`.

use std::path::PathBuf;

use clap::Args;

use crate::context::ColorWhen;

/// The global options of the command line.
#[derive(Debug, Clone)]
pub struct GlobalOptions {
    /// `--project`.
    pub project: Option<PathBuf>,
    /// `-v` count.
    pub verbose: u8,
    /// `-q`.
    pub quiet: bool,
    /// `--color`.
    pub color: ColorWhen,
    /// `--compat-version`.
    pub compat_version: Option<String>,
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
