//! One function per subcommand; each returns an exit status or a [`Failure`].

mod list;
mod plan;
mod resume;
pub mod review;
mod roster;
mod run;
mod runs;
pub mod trust;
mod validate;

use std::path::PathBuf;

use crate::cli::{Cli, Command};
use crate::error::Failure;
use crate::manifest::semver::HOST_COMPAT_VERSION;
use crate::project::{self, HostEnv};
use crate::registry::{LoadOptions, Registry};

/// What every command knows: the environment, the project root, the compat version.
pub struct Context {
    /// Environment values.
    pub env: HostEnv,
    /// The project root.
    pub project_root: PathBuf,
    /// GSD compatibility version for `engines.gsd` gating.
    pub compat_version: String,
}

impl Context {
    /// Builds the context from the parsed command line and the environment.
    pub fn new(cli: &Cli, env: HostEnv) -> Context {
        let project_root = match &cli.project {
            Some(dir) => env.cwd.join(dir),
            None => project::find_project_root(&env.cwd, env.home.as_deref()),
        };
        Context {
            compat_version: cli
                .compat_version
                .clone()
                .unwrap_or_else(|| HOST_COMPAT_VERSION.to_owned()),
            project_root,
            env,
        }
    }

    /// Loads the project config, printing its warnings to stderr.
    pub fn config(&self) -> crate::config::ProjectConfig {
        let (config, warnings) =
            crate::config::ProjectConfig::load(&self.project_root, self.env.workstream.as_deref());
        for warning in warnings {
            crate::output::eprint_line(&warning);
        }
        config
    }

    /// The repository root: `--repo-root` made absolute, else the working directory.
    pub fn repo_root(&self, given: Option<&str>) -> String {
        given
            .map_or_else(|| self.env.cwd.clone(), |root| self.env.cwd.join(root))
            .display()
            .to_string()
    }

    /// Loads the registry: first-party lanes, then global and project overlays.
    pub fn registry(&self) -> Registry {
        let consent = crate::trust::consent_gate(&self.env, &self.project_root);
        Registry::load(&LoadOptions {
            host_version: self.compat_version.clone(),
            global_dir: self.env.global_capabilities(),
            project_root: Some(self.project_root.clone()),
            consent: consent.as_ref(),
        })
    }

    /// The egress check every lane run goes through (trust.md §6).
    pub fn egress(&self) -> Box<dyn crate::run::lane::EgressCheck> {
        crate::trust::egress_check(&self.env, &self.project_root)
    }

    /// Where handler locks live: `<GSD_HOME>/.gsd/locks`, else the temp directory.
    pub fn lock_dir(&self) -> PathBuf {
        self.env.gsd_home().map_or_else(
            || std::env::temp_dir().join("gsd-lane-locks"),
            |home| home.join(".gsd").join("locks"),
        )
    }
}

/// Runs the parsed command.
///
/// # Errors
///
/// A [`Failure`] carrying the message and exit status.
pub fn run(cli: Cli, env: HostEnv) -> Result<u8, Failure> {
    let context = Context::new(&cli, env);
    match cli.command {
        Command::List(args) => list::run(&context, args.json),
        Command::Validate(args) => validate::run(&context, &args),
        Command::Flags(args) => roster::flags(&context, &args),
        Command::Sections(args) => roster::sections(&context, &args),
        Command::Plan(args) => plan::run(&context, &args),
        Command::Run(args) => run::run(&context, &args.slug, &args.options),
        Command::Invoke(mut args) => {
            if args.options.handler_module.is_some() {
                return Err(Failure::usage(
                    "invoke never loads --handler-module (debugging only: use `gsd-lane run`)",
                ));
            }
            args.options.json = true;
            run::run(&context, &args.slug, &args.options)
        }
        Command::Review(args) => review::run(&context, &args),
        Command::Runs(args) => runs::run(args.json),
        Command::Disclose(args) => trust::disclose(&context, &args),
        Command::Install(args) => trust::install(&context, &args),
        Command::Remove(args) => trust::remove(&context, &args),
        Command::Trust(args) => trust::trust(&context, &args),
        Command::Schema => {
            crate::output::print(&format!("{}\n", crate::manifest::model::schema_json()));
            Ok(0)
        }
        Command::Completions(args) => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(args.shell, &mut command, "gsd-lane", &mut std::io::stdout());
            Ok(0)
        }
    }
}
