//! Trust commands: `disclose`, `install`, `remove`, `trust list|approve|revoke|rebind-host`.

use clap::{Args, Subcommand};

use super::Context;
use crate::error::Failure;

/// Arguments of `disclose`.
#[derive(Debug, Args)]
pub struct DiscloseArgs {
    /// Capability ids (default: every lane).
    pub ids: Vec<String>,
}

/// Arguments of `install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The capability folder to install.
    pub folder: std::path::PathBuf,
}

/// Arguments of `remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The capability id.
    pub id: String,
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
    /// List consent records.
    List,
}

/// Runs `disclose`.
///
/// # Errors
///
/// Not available yet.
pub fn disclose(_context: &Context, _args: &DiscloseArgs) -> Result<u8, Failure> {
    Err(Failure::new("disclose is not available in this build yet"))
}

/// Runs `install`.
///
/// # Errors
///
/// Not available yet.
pub fn install(_context: &Context, _args: &InstallArgs) -> Result<u8, Failure> {
    Err(Failure::new("install is not available in this build yet"))
}

/// Runs `remove`.
///
/// # Errors
///
/// Not available yet.
pub fn remove(_context: &Context, _args: &RemoveArgs) -> Result<u8, Failure> {
    Err(Failure::new("remove is not available in this build yet"))
}

/// Runs `trust`.
///
/// # Errors
///
/// Not available yet.
pub fn trust(_context: &Context, _args: &TrustArgs) -> Result<u8, Failure> {
    Err(Failure::new("trust is not available in this build yet"))
}
