//! Trust commands: `disclose`, `install`, `remove`,
//! `trust list|approve|revoke|rebind-host|repair`.
//!
//! Human output by default, one JSON document with `--json`. Every prompt is skipped by `--yes`
//! and refused without a terminal unless `--yes` is given, so scripts never hang on a question.

mod consent_flow;
mod disclose;
mod install;
mod prompt;
mod records;
mod repair;
mod view;

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::Context;
use crate::error::Failure;

/// Arguments of `disclose`.
#[derive(Debug, Args)]
pub struct DiscloseArgs {
    /// Capability ids (or lane slugs); default: every lane, active or not.
    pub ids: Vec<String>,
    /// Disclose this manifest file instead, installed or not, valid or not.
    #[arg(long, value_name = "FILE", conflicts_with = "ids")]
    pub manifest: Option<PathBuf>,
    /// Machine-readable output: one object per capability.
    #[arg(long)]
    pub json: bool,
}

/// Where an overlay is installed.
#[derive(Debug, Args, Clone, Copy)]
#[group(multiple = false)]
pub struct ScopeArgs {
    /// `<GSD home>/.gsd/capabilities` (every project; no per-project consent record).
    #[arg(long)]
    pub global: bool,
    /// `<project root>/.gsd/capabilities` (this project; consent recorded in your store).
    ///
    /// Spelled `--project-scope` because `--project <DIR>` already selects the project root.
    #[arg(long = "project-scope")]
    pub project_scope: bool,
}

/// Consent options shared by the commands that ask.
#[derive(Debug, Args, Clone)]
pub struct ConsentArgs {
    /// Consent without asking (for scripts): you have read the disclosure.
    #[arg(long)]
    pub yes: bool,
    /// Refuse unless the consent fingerprint computed now equals this one (the value shown
    /// with the disclosure), so what is recorded is what you were shown.
    #[arg(long, value_name = "HEX")]
    pub fingerprint: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The capability folder to install (it holds `capability.json`).
    pub folder: PathBuf,
    /// Scope (default: global).
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Consent options.
    #[command(flatten)]
    pub consent: ConsentArgs,
}

/// Arguments of `remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The capability id.
    pub id: String,
    /// Scope (default: the one scope that has it).
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: TrustAction,
}

/// `trust` subcommands.
#[derive(Debug, Subcommand)]
pub enum TrustAction {
    /// List consent records and destination pins.
    List(ListArgs),
    /// Activate a project-scope lane already on disk, after disclosure.
    Approve(IdConsentArgs),
    /// Revoke the consent record of a project-scope capability.
    Revoke(IdArgs),
    /// Re-approve a lane's changed destination: show old and new, ask, rewrite only the host.
    RebindHost(IdConsentArgs),
    /// Show a damaged consent store or pin file and move it aside (`<name>.damaged-<time>`).
    Repair(repair::RepairArgs),
}

/// `trust list` options.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Records of every project, not only this one.
    #[arg(long)]
    pub all: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// A capability id and `--json`.
#[derive(Debug, Args)]
pub struct IdArgs {
    /// The capability id.
    pub id: String,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// A capability id and the consent options.
#[derive(Debug, Args)]
pub struct IdConsentArgs {
    /// The capability id (or its lane slug).
    pub id: String,
    /// Consent options.
    #[command(flatten)]
    pub consent: ConsentArgs,
}

/// Runs `disclose`.
///
/// # Errors
///
/// An unreadable `--manifest` file, or an id that names no capability.
pub fn disclose(context: &Context, args: &DiscloseArgs) -> Result<u8, Failure> {
    disclose::run(context, args)
}

/// Runs `install`.
///
/// # Errors
///
/// I/O failures; refusals and declined consent are reported with status 1.
pub fn install(context: &Context, args: &InstallArgs) -> Result<u8, Failure> {
    install::install(context, args)
}

/// Runs `remove`.
///
/// # Errors
///
/// An id installed in no scope (or in both without a scope flag), or a folder that cannot be
/// removed.
pub fn remove(context: &Context, args: &RemoveArgs) -> Result<u8, Failure> {
    install::remove(context, args)
}

/// Runs `trust`.
///
/// # Errors
///
/// See each subcommand.
pub fn trust(context: &Context, args: &TrustArgs) -> Result<u8, Failure> {
    match &args.action {
        TrustAction::List(list) => records::list(context, list),
        TrustAction::Approve(approve) => records::approve(context, approve),
        TrustAction::Revoke(revoke) => records::revoke(context, revoke),
        TrustAction::RebindHost(rebind) => records::rebind_host(context, rebind),
        TrustAction::Repair(repair) => repair::repair(context, repair),
    }
}
