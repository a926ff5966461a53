//! What a review is about (review-workflow.md §2, §7): a GSD phase or any prompt file, read
//! before anything else happens, and the input files the run dir gets from it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::args::ReviewArgs;
use super::notice::Notices;
use super::phase::{self, PhaseEnv};
use super::prompt;
use super::record::SubjectKey;
use super::rundir::RunDir;
use crate::config::ProjectConfig;
use crate::context::Context;
use crate::error::Failure;

/// What the review is about: a GSD phase or any prompt file.
pub enum Subject {
    /// A GSD phase (`--phase`).
    Phase(Box<phase::Phase>),
    /// A prompt file (`--prompt-file`, `--out`).
    PromptFile {
        /// The prompt file.
        path: PathBuf,
        /// The REVIEWS.md to write.
        out: PathBuf,
        /// The prompt file's name.
        name: String,
    },
}

impl Subject {
    /// The banner's name of the subject (`Phase 3`, the prompt file's name).
    pub fn label(&self) -> String {
        match self {
            Subject::Phase(p) => format!("Phase {}", p.arg),
            Subject::PromptFile { name, .. } => name.clone(),
        }
    }

    /// The REVIEWS.md this review writes.
    pub fn output(&self) -> &Path {
        match self {
            Subject::Phase(p) => &p.output,
            Subject::PromptFile { out, .. } => out,
        }
    }

    /// The subject as the run record names it.
    pub fn key(&self) -> SubjectKey {
        match self {
            Subject::Phase(p) => SubjectKey::Phase {
                phase: p.arg.clone(),
                dir: p.dir.clone(),
            },
            Subject::PromptFile { path, .. } => SubjectKey::PromptFile { path: path.clone() },
        }
    }

    /// The REVIEWS.md front matter's `phase` value and its sorted plan file names.
    pub fn phase_and_plans(&self) -> (String, Vec<String>) {
        let (phase, mut plans) = match self {
            Subject::Phase(p) => (
                p.arg.clone(),
                p.plans
                    .iter()
                    .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect::<Vec<_>>(),
            ),
            Subject::PromptFile { name, .. } => (name.clone(), vec![name.clone()]),
        };
        plans.sort();
        (phase, plans)
    }

    /// Writes the prompt and section files into `run_dir`; returns the plan names (phase form).
    ///
    /// # Errors
    ///
    /// The phase's files cannot be gathered or a file cannot be written.
    pub fn write_inputs(
        &self,
        run_dir: &RunDir,
        context: &Context,
    ) -> Result<Option<Vec<String>>, Failure> {
        match self {
            Subject::Phase(found) => {
                let sources = prompt::gather(found, &context.project_root.join(".planning"))?;
                prompt::write_files(run_dir, &sources)?;
                Ok(Some(sources.plans.iter().map(|(n, _)| n.clone()).collect()))
            }
            Subject::PromptFile { path, .. } => {
                // Streamed: a large prompt file is never held in memory.
                let mut from = std::fs::File::open(path).map_err(|err| {
                    Failure::new(format!("cannot read {}: {err}", path.display()))
                })?;
                run_dir.write_with("gsd-review-prompt.md", |file| {
                    std::io::copy(&mut from, file).map(|_| ())
                })?;
                Ok(None)
            }
        }
    }
}

/// A usage error of `review` (status 1), with the pointer to `--help`.
pub fn usage(message: &str) -> Failure {
    Failure {
        message: format!("{message}\n(see `gsd-lane review --help`)"),
        status: 1,
    }
}

/// Reads the phase (or checks the prompt file) the request names.
///
/// # Errors
///
/// Neither form given (usage), the phase cannot be located, the prompt file is unusable or
/// the output's directory does not exist.
pub fn locate(
    context: &Context,
    request: &ReviewArgs,
    config: &ProjectConfig,
    notices: &Notices,
) -> Result<Subject, Failure> {
    if let Some(arg) = &request.phase {
        let env = PhaseEnv {
            root: context.project_root.clone(),
            cwd: context.env.cwd.clone(),
            gsd_project: context.env.agent_markers.gsd_project.clone(),
            workstream: context.env.workstream.clone(),
            project_code: config
                .get("project_code")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        let found = phase::locate(arg, &env).map_err(|err| Failure::new(err.to_string()))?;
        for notice in &found.notices {
            notices.say(notice.clone());
        }
        return Ok(Subject::Phase(Box::new(found)));
    }
    let (Some(file), Some(out)) = (&request.prompt_file, &request.out) else {
        return Err(usage(
            "--phase <N> or --prompt-file <F> --out <REVIEWS.md> is required",
        ));
    };
    let path = context.env.cwd.join(file);
    if let Some(problem) = crate::run::prompt_file::unusable_prompt(&path) {
        return Err(Failure::new(problem));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.clone());
    let out = context.env.cwd.join(out);
    match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            return Err(Failure::new(format!(
                "cannot write {}: directory {} does not exist",
                out.display(),
                dir.display()
            )))
        }
        _ => {}
    }
    Ok(Subject::PromptFile { path, out, name })
}

/// Nearest ancestor of `cwd` (inclusive) holding a `.git` entry, else `cwd` (§2).
pub fn repo_root(cwd: &Path) -> String {
    cwd.ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .unwrap_or(cwd)
        .display()
        .to_string()
}
