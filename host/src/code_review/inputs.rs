//! The inputs of a code-review call, read and checked ([`super::hygiene`]): the repository
//! root, `--cwd`, `--run-dir`/`--out` text, the provenance (base and depth) and the changed-file
//! list from the arguments, `--files-from` or stdin.

use std::io::Read;
use std::path::PathBuf;

use super::args::{Caller, CodeReviewArgs};
use super::hygiene::{self, RepoRoot};
use super::prompt::Depth;
use super::reason::{Rejection, WholeReason};
use crate::context::Context;
use crate::output::neutralize;
use crate::review::notice::Notices;

/// The checked inputs of a call.
pub struct Inputs {
    /// The repository root.
    pub root: RepoRoot,
    /// The base commit (lower-case hex).
    pub base_sha: String,
    /// The depth.
    pub depth: Depth,
    /// Repository-relative changed paths, each once.
    pub files: Vec<String>,
}

impl Inputs {
    /// Reads and checks every input (§8.2), in the order: directories, provenance, files.
    ///
    /// # Errors
    ///
    /// The first input's [`Rejection`].
    pub fn read(
        context: &Context,
        args: &CodeReviewArgs,
        caller: Caller,
        notices: &Notices,
    ) -> Result<Inputs, Rejection> {
        let cwd = &context.env.cwd;
        let here = PathBuf::from(crate::review::subject::repo_root(cwd));
        let root = match &args.repo_root {
            Some(given) => {
                hygiene::no_control("--repo-root", given, WholeReason::InvalidPaths)?;
                RepoRoot::open(&cwd.join(given))?
            }
            None => RepoRoot::open(&here)?,
        };
        let here_real = here.canonicalize().unwrap_or(here);
        if root.real != here_real {
            return Err(Rejection::new(
                WholeReason::InvalidPaths,
                format!(
                    "--repo-root {} is not the repository gsd-lane runs in ({}): the sandbox protects the working directory's repository, so run gsd-lane from inside the one to review",
                    neutralize(&root.lexical.display().to_string()),
                    here_real.display()
                ),
            ));
        }
        for (what, value) in [("--run-dir", &args.run_dir), ("--out", &args.out)] {
            if let Some(value) = value {
                hygiene::no_control(what, value, WholeReason::InvalidPaths)?;
            }
        }
        if let Some(given) = &args.cwd {
            hygiene::no_control("--cwd", given, WholeReason::InvalidPaths)?;
            let inside = root
                .inside(&cwd.join(given).display().to_string())
                .or_else(|err| {
                    if hygiene::normalize(&cwd.join(given)).as_deref() == Some(&root.lexical) {
                        Ok(String::new())
                    } else {
                        Err(err)
                    }
                });
            inside.map_err(|err| Rejection::new(err.reason, format!("--cwd: {}", err.detail)))?;
        }
        let base_sha = hygiene::base_sha(args.base_sha.as_deref())?;
        let depth = depth(context, args.depth.as_deref(), notices)?;
        let listed = changed_list(context, args, caller)?;
        let files = root.changed_files(&listed)?;
        Ok(Inputs {
            root,
            base_sha,
            depth,
            files,
        })
    }
}

/// The changed files as given: the arguments, `--files-from`, else stdin when it is not a
/// terminal (always for `dispatch-step`).
fn changed_list(
    context: &Context,
    args: &CodeReviewArgs,
    caller: Caller,
) -> Result<Vec<String>, Rejection> {
    let mut listed = args.files.clone();
    let from_stdin = match &args.files_from {
        Some(source) if source == "-" => true,
        Some(source) => {
            hygiene::no_control("--files-from", source, WholeReason::InvalidPaths)?;
            let path = context.env.cwd.join(source);
            let bytes = read_bounded(std::fs::File::open(&path).map_err(|err| {
                Rejection::new(
                    WholeReason::InvalidPaths,
                    format!("--files-from {}: {err}", path.display()),
                )
            })?)
            .map_err(|err| {
                Rejection::new(
                    WholeReason::InvalidPaths,
                    format!("reading --files-from {}: {err}", path.display()),
                )
            })?;
            listed.extend(hygiene::read_list(&bytes, &path.display().to_string())?);
            false
        }
        None => {
            listed.is_empty()
                && (caller == Caller::DispatchStep
                    || !std::io::IsTerminal::is_terminal(&std::io::stdin()))
        }
    };
    if from_stdin {
        let bytes = read_bounded(std::io::stdin().lock()).map_err(|err| {
            Rejection::new(WholeReason::InvalidPaths, format!("reading stdin: {err}"))
        })?;
        listed.extend(hygiene::read_list(&bytes, "stdin")?);
    }
    Ok(listed)
}

/// At most one byte more than [`hygiene::MAX_LIST_BYTES`] of `reader` (the list check then
/// refuses an oversized list without reading all of it).
fn read_bounded(reader: impl Read) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let limit = u64::try_from(hygiene::MAX_LIST_BYTES + 1).unwrap_or(u64::MAX);
    reader.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The config key of the code-review capability that gives the default depth.
const DEPTH_KEY: &str = "workflow.code_review_depth";

/// `--depth`, else the project's `workflow.code_review_depth`, else standard; an unknown word is
/// read as standard (§8.3), with a warning naming where it came from.
///
/// # Errors
///
/// `invalid_provenance` for a control character.
fn depth(context: &Context, given: Option<&str>, notices: &Notices) -> Result<Depth, Rejection> {
    let configured;
    let (text, from) = match given {
        Some(text) => (text, "--depth"),
        None => {
            let (config, _) = crate::config::ProjectConfig::load(
                &context.project_root,
                context.env.workstream.as_deref(),
            );
            configured = config
                .get(DEPTH_KEY)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned);
            match &configured {
                Some(text) => (text.as_str(), DEPTH_KEY),
                None => return Ok(Depth::Standard),
            }
        }
    };
    hygiene::no_control(from, text, WholeReason::InvalidProvenance)?;
    Ok(Depth::parse(text).unwrap_or_else(|| {
        notices.warn(format!(
            "{from} {:?} is not quick, standard or deep; reviewing at standard depth",
            neutralize(&text.chars().take(40).collect::<String>())
        ));
        Depth::Standard
    }))
}
