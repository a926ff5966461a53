//! `gsd-lane run <slug>` (and `invoke --slug`): one lane, a report for a person or JSON.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::Context;
use crate::cli::RunOptions;
use crate::error::{Context as _, Failure};
use crate::output::{self, neutralize};
use crate::plan::{Instance, PlanInputs, Reason, Refusal};
use crate::run::lane::{self, Completion, Outcome, RunSetup};

fn run_dir(given: Option<&str>, cwd: &Path) -> Result<PathBuf, Failure> {
    match given {
        Some(dir) => {
            let dir = cwd.join(dir);
            // A run dir gsd-lane creates is private (trust.md §7.5); an existing one is kept.
            std::os::unix::fs::DirBuilderExt::mode(
                std::fs::DirBuilder::new().recursive(true),
                0o700,
            )
            .create(&dir)
            .context(|| format!("creating run dir {}", dir.display()))?;
            Ok(dir)
        }
        None => tempfile::Builder::new()
            .prefix("gsd-lane-run-")
            .tempdir()
            .map(tempfile::TempDir::keep)
            .context(|| "creating a temporary run dir".to_owned()),
    }
}

fn prompt_file(
    options: &RunOptions,
    run_dir: &Path,
    cwd: &Path,
) -> Result<Option<String>, Failure> {
    if let Some(file) = &options.prompt_file {
        return Ok(Some(cwd.join(file).display().to_string()));
    }
    match options.prompt.as_deref() {
        None => Ok(None),
        Some("-") => {
            let path = run_dir.join("gsd-review-prompt.md");
            let mut text = Vec::new();
            std::io::stdin()
                .read_to_end(&mut text)
                .context(|| "reading the prompt from stdin".to_owned())?;
            std::fs::write(&path, text).context(|| format!("writing {}", path.display()))?;
            Ok(None)
        }
        Some(other) => Err(Failure::usage(format!(
            "--prompt takes only '-' (stdin), got {other:?}; use --prompt-file for a file"
        ))),
    }
}

/// Runs one lane.
///
/// # Errors
///
/// Usage errors (status 1 for this command) and I/O failures.
pub fn run(context: &Context, slug: &str, options: &RunOptions) -> Result<u8, Failure> {
    // `--handler-module`: checked before anything else, so a refused module runs nothing.
    let module = handler_module(options, &context.env.cwd)?;
    let registry = context.registry();
    let config = context.config();
    let run_dir = run_dir(options.run_dir.as_deref(), &context.env.cwd).map_err(|mut f| {
        f.status = 1;
        f
    })?;
    let prompt_file = prompt_file(options, &run_dir, &context.env.cwd).map_err(|mut f| {
        f.status = 1;
        f
    })?;
    let lock_dir = context.lock_dir();
    let egress = context.egress();
    let Some(lane) = registry.lane(slug) else {
        let refusal = Refusal::new(
            Reason::MalformedLane,
            format!("no declared lane has slug {:?}", neutralize(slug)),
        );
        return Ok(report_unavailable(slug, &refusal, options));
    };
    if let Some((path, handler)) = &module {
        module_fits(lane, *handler, path)?;
        output::eprint_line(&module_notice(slug, *handler, path));
    }
    if options.model.is_some()
        && lane
            .body()
            .get("modelConfigKey")
            .and_then(|k| k.as_str())
            .is_none()
    {
        output::eprint_line(&format!(
            "warning: lane {slug} accepts no model override; model {:?} is ignored and the CLI's own default is used",
            neutralize(options.model.as_deref().unwrap_or(""))
        ));
    }
    let setup = RunSetup {
        config: &config,
        inputs: PlanInputs {
            run_dir: run_dir.display().to_string(),
            repo_root: context.repo_root(options.repo_root.as_deref()),
            prompt_file,
            instance: Instance {
                name: options.instance.clone(),
                model: options.model.clone(),
                agent: options.agent.clone(),
            },
            effort: None,
        },
        path_var: context.env.path.clone(),
        home: context.env.home.clone(),
        lock_dir,
        egress: egress.as_ref(),
        handler_override: module.map(|(_, handler)| handler),
        sandbox: crate::sandbox::policy::run_mode(&config, options.sandbox)
            .map_err(Failure::usage)?,
    };
    match lane::run_lane(lane, &setup)? {
        Outcome::Unavailable(refusal) => Ok(report_unavailable(slug, &refusal, options)),
        Outcome::Completed(done) => {
            report_completed(&done, options);
            Ok(0)
        }
    }
}

/// Loads the `--handler-module` of this one run, if any (exit 2 when refused; nothing runs).
fn handler_module(
    options: &RunOptions,
    cwd: &Path,
) -> Result<Option<(PathBuf, &'static dyn gsd_lane_sdk::Handler)>, Failure> {
    let Some(path) = &options.handler_module else {
        return Ok(None);
    };
    let path = cwd.join(path);
    load_handler_module(&path).map(|handler| Some((path, handler)))
}

#[cfg(feature = "dynamic-handlers")]
fn load_handler_module(path: &Path) -> Result<&'static dyn gsd_lane_sdk::Handler, Failure> {
    crate::dynamic::load(path)
        .map(|module| module.handler())
        .map_err(|err| Failure::usage(err.to_string()))
}

#[cfg(not(feature = "dynamic-handlers"))]
fn load_handler_module(_path: &Path) -> Result<&'static dyn gsd_lane_sdk::Handler, Failure> {
    Err(Failure::usage(
        "this build has no dynamic handler support; rebuild with --features dynamic-handlers",
    ))
}

/// A module only stands in for the handler the lane itself declares (HTTP lanes without one
/// use `openai-compatible`); anything else is a usage error and nothing runs.
fn module_fits(
    lane: &crate::registry::Lane,
    handler: &dyn gsd_lane_sdk::Handler,
    path: &Path,
) -> Result<(), Failure> {
    let declared = match lane.body().get("handler").and_then(|h| h.as_str()) {
        Some(name) => name,
        None if lane.body_str("transport") == "openai-http" => "openai-compatible",
        None => "none (a data-only lane)",
    };
    if declared == handler.name().as_str() {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "handler module {}: refused: it provides handler {:?} but lane {} declares handler {} (nothing was run)",
            path.display(),
            handler.name().as_str(),
            neutralize(lane.body_str("slug")),
            neutralize(declared)
        )))
    }
}

/// The loud stderr notice that a non-bundled handler module is in use.
fn module_notice(slug: &str, handler: &dyn gsd_lane_sdk::Handler, path: &Path) -> String {
    format!(
        "!!! NON-BUNDLED HANDLER MODULE IN USE !!!\n\
         !!! lane {} runs handler {:?} from {} (gsd-lane-sdk {}), not the one built into this gsd-lane.\n\
         !!! Debugging only: `review` and every other lane keep the built-in handlers.",
        neutralize(slug),
        handler.name().as_str(),
        neutralize(&path.display().to_string()),
        handler.sdk_version()
    )
}

fn report_unavailable(slug: &str, refusal: &Refusal, options: &RunOptions) -> u8 {
    if options.explicit {
        output::eprint_line(&format!(
            "explicitly requested reviewer '{slug}': {}",
            neutralize(&refusal.detail)
        ));
    }
    if options.json {
        output::print(&format!(
            "{}\n",
            json!({"slug": slug, "ok": false, "stubbed": false, "reason": refusal.reason, "detail": refusal.detail})
        ));
    } else {
        output::print(&format!(
            "lane {}: unavailable ({}): {}\nnothing was started and no review file was written\n",
            neutralize(slug),
            refusal.reason,
            neutralize(&refusal.detail)
        ));
    }
    if options.explicit {
        2
    } else {
        0
    }
}

/// The exact command line, each argument shell-quoted so different argv never look alike.
fn command_line(done: &Completion) -> String {
    match (done.plan.spawn(), done.plan.http()) {
        (Some(spawn), _) => std::iter::once(&spawn.binary)
            .chain(&spawn.argv)
            .map(|arg| quote(arg))
            .collect::<Vec<_>>()
            .join(" "),
        (None, Some(http)) => format!("POST {}", http.url),
        (None, None) => String::new(),
    }
}

fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", neutralize(&arg.replace('\'', "'\\''")))
    }
}

/// The `--json` line of a lane that ran; `repositoryChanges` appears only when the repository
/// changed while it ran.
fn completed_json(done: &Completion) -> serde_json::Value {
    let mut value = json!({"slug": done.plan.slug, "ok": true, "stubbed": done.stubbed});
    if !done.repository_changes.is_empty() {
        value["repositoryChanges"] = json!(done.repository_changes);
    }
    value
}

fn report_completed(done: &Completion, options: &RunOptions) {
    let plan = &done.plan;
    if options.json {
        output::print(&format!("{}\n", completed_json(done)));
        return;
    }
    let review = crate::run::review_file::read_sidecar(Path::new(&plan.review_path));
    let mut text = String::new();
    text.push_str(&format!(
        "lane      {} ({})\n",
        plan.slug,
        plan.transport.as_str()
    ));
    text.push_str(&format!("command   {}\n", command_line(done)));
    text.push_str(&format!("probe     {}\n", neutralize(&done.probe)));
    text.push_str(&format!(
        "result    {} in {:.1} s{}{}\n",
        if done.stubbed {
            "STUB (failed or empty output)"
        } else {
            "review"
        },
        done.elapsed.as_secs_f64(),
        done.exit_code
            .map_or(String::new(), |c| format!(", exit {c}")),
        done.spawn_error
            .as_ref()
            .map_or(String::new(), |e| format!(", spawn error {e}")),
    ));
    if let Some(source) = &done.source {
        text.push_str(&format!("source    {}\n", neutralize(source)));
    }
    if done.blind {
        text.push_str("note      reviewed without repository access (stamped)\n");
    }
    for note in &done.notes {
        text.push_str(&format!("note      {}\n", neutralize(note)));
    }
    if !done.sandbox.is_empty() {
        text.push_str(&format!("sandbox   {}\n", neutralize(&done.sandbox)));
    }
    if let Some(changes) = crate::sandbox::policy::changes_line(&done.repository_changes) {
        text.push_str(&format!("WARNING   {}\n", neutralize(&changes)));
    }
    text.push_str(&format!(
        "review    {}\nstderr    {}\n\n",
        plan.review_path, plan.err_path
    ));
    text.push_str(&neutralize(&review));
    output::print(&text);
}
