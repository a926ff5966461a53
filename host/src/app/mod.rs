//! One function per subcommand; each returns an exit status or a [`Failure`].
//!
//! `app` sits below the command line (`cli`), which parses the arguments and calls these
//! functions; nothing here imports `cli`: what a command needs of the command line comes in as
//! [`GlobalOptions`], the argument types of [`options`] and a [`CommandModel`].

pub(crate) mod code_review;
mod completions;
pub(crate) mod doctor;
pub(crate) mod list;
mod manpage;
pub(crate) mod new;
mod options;
pub(crate) mod plan;

pub(crate) mod review;
pub(crate) mod roster;
pub(crate) mod run;
pub(crate) mod runs;
mod snippet;
pub(crate) mod trust;
pub(crate) mod validate;
pub(crate) mod verdict;

pub use crate::context::{ColorWhen, CommandModel, Context};
pub use options::{GlobalOptions, PlanArgs, RunOptions, SelectArgs, ValidateArgs};

use crate::error::Failure;
use crate::project::HostEnv;

/// The constructors and views of [`Context`] that need what only `app` knows: the global
/// options and the lane flags of `review`'s command line.
impl Context {
    /// Builds the context from the global options, the environment and the command line's
    /// model.
    ///
    /// # Errors
    ///
    /// A `--project` that is not an existing directory (usage error, status 2).
    pub fn new(
        options: &GlobalOptions,
        env: HostEnv,
        command_model: CommandModel,
    ) -> Result<Context, Failure> {
        if let Some(dir) = &options.project {
            let root = env.cwd.join(dir);
            if !root.is_dir() {
                return Err(Failure::usage(format!(
                    "--project {}: {}",
                    crate::output::neutralize(&dir.display().to_string()),
                    if root.exists() {
                        "not a directory"
                    } else {
                        "no such directory"
                    }
                )));
            }
        }
        let mut context = Context::locate(
            options.project.as_deref(),
            options.compat_version.as_deref(),
            env,
            command_model,
        );
        context.verbose = options.verbose;
        context.quiet = options.quiet;
        context.color = options.color;
        Ok(context)
    }

    /// The command line's clap model with the lane flags of this project's registry.
    pub fn command_line_with_lanes(&self) -> clap::Command {
        let lanes = crate::review::args::lane_flags(&self.registry());
        crate::review::args::with_lane_flags(self.command_line(), &lanes)
    }
}

/// `gsd-lane schema`.
///
/// # Errors
///
/// Never fails; the signature matches the other commands.
pub fn schema() -> Result<u8, Failure> {
    crate::output::print(&format!("{}\n", crate::manifest::model::schema_json()));
    Ok(0)
}

/// `gsd-lane manpage`.
///
/// # Errors
///
/// The man page could not be rendered.
pub fn manpage(context: &Context) -> Result<u8, Failure> {
    crate::output::print(&manpage::render(context.command_line_with_lanes())?);
    Ok(0)
}

/// `gsd-lane completions <shell>`.
///
/// # Errors
///
/// Never fails; the signature matches the other commands.
pub fn completions(context: &Context, shell: clap_complete::Shell) -> Result<u8, Failure> {
    let registry = context.registry();
    let slugs: Vec<String> = registry
        .entries
        .iter()
        .filter_map(|e| e.slug.clone())
        .collect();
    let ids: Vec<String> = registry.entries.iter().map(|e| e.id.clone()).collect();
    let command = completions::with_values(context.command_line_with_lanes(), &slugs, &ids);
    let script = completions::script(shell, command);
    crate::output::print(&script);
    Ok(0)
}
