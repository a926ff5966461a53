//! `gsd-lane verdict <REVIEWS.md>`: recomputes the panel verdict of a REVIEWS.md that
//! gsd-lane wrote (`crate::verdict`), against the repository, and prints the same table as the
//! top of the file, or the JSON object with `--json`.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;

use super::Context;
use crate::error::Failure;
use crate::output;
use crate::textsafe::strip_controls;
use crate::verdict::{self, quorum, render, repo::Repo};

/// The largest REVIEWS.md read (bytes).
pub const MAX_REVIEWS_BYTES: u64 = 256 << 20;

/// Arguments of `verdict`.
#[derive(Debug, Clone, Args)]
pub struct VerdictArgs {
    /// The REVIEWS.md to read.
    #[arg(value_name = "REVIEWS.md")]
    pub file: PathBuf,
    /// The repository the citations are checked against (default: the project root).
    #[arg(long, value_name = "R")]
    pub repo_root: Option<PathBuf>,
    /// The verdict as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Exit 2 when the quorum is not met.
    #[arg(long)]
    pub require_quorum: bool,
}

/// Reads a REVIEWS.md, bounded.
fn read(path: &Path) -> Result<String, Failure> {
    let file = std::fs::File::open(path)
        .map_err(|err| Failure::new(format!("{}: cannot read: {err}", path.display())))?;
    let mut bytes = Vec::new();
    file.take(MAX_REVIEWS_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| Failure::new(format!("{}: cannot read: {err}", path.display())))?;
    if bytes.len() as u64 > MAX_REVIEWS_BYTES {
        return Err(Failure::new(format!(
            "{}: larger than {} MiB; not a REVIEWS.md gsd-lane writes",
            path.display(),
            MAX_REVIEWS_BYTES >> 20
        )));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Runs `verdict`.
///
/// # Errors
///
/// The file cannot be read or is not a gsd-lane REVIEWS.md, the repository root is not a
/// directory, or `review.quorum` is invalid (status 1).
pub fn run(context: &Context, args: &VerdictArgs) -> Result<u8, Failure> {
    let wanted = quorum::configured(&context.config()).map_err(|e| Failure::new(e.to_string()))?;
    let root = args
        .repo_root
        .as_ref()
        .map_or_else(|| context.project_root.clone(), |r| context.env.cwd.join(r));
    if !root.is_dir() {
        return Err(Failure::new(format!(
            "--repo-root {}: not a directory",
            root.display()
        )));
    }
    let path = context.env.cwd.join(&args.file);
    let text = read(&path)?;
    let computed = verdict::compute(&text, &Repo::new(&root), wanted).map_err(|why| {
        Failure::new(format!(
            "{}: not a REVIEWS.md written by gsd-lane review: {why}",
            path.display()
        ))
    })?;
    let v = &computed.verdict;
    if args.json {
        output::print_serialized(v);
    } else {
        output::print(&strip_controls(&render::block(v)));
    }
    Ok(if args.require_quorum && !v.quorum.met {
        2
    } else {
        0
    })
}
