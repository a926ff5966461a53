//! One function per subcommand; each returns an exit status or a [`Failure`].

mod completions;
pub(crate) mod doctor;
mod inactive;
mod list;
mod manpage;
mod plan;
mod resume;
mod review;
mod roster;
mod run;
mod runs;
mod snippet;
pub(crate) mod trust;
mod validate;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

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
    /// `-v` count: 0 normal, 1 or more say what was used and why.
    pub verbose: u8,
    /// `-q`: no `info:` lines.
    pub quiet: bool,
    /// `--color`.
    pub color: crate::cli::ColorWhen,
}

impl Context {
    /// Builds the context from the parsed command line and the environment.
    ///
    /// # Errors
    ///
    /// A `--project` that is not an existing directory (usage error, status 2).
    pub fn new(cli: &Cli, env: HostEnv) -> Result<Context, Failure> {
        if let Some(dir) = &cli.project {
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
        let mut context =
            Context::locate(cli.project.as_deref(), cli.compat_version.as_deref(), env);
        context.verbose = cli.verbose;
        context.quiet = cli.quiet;
        context.color = cli.color;
        Ok(context)
    }

    /// The context from `--project` and `--compat-version` alone (quiet options at their
    /// defaults): enough to load the registry.
    pub fn locate(project: Option<&Path>, compat_version: Option<&str>, env: HostEnv) -> Context {
        let project_root = match project {
            Some(dir) => env.cwd.join(dir),
            None => project::find_project_root(&env.cwd, env.home.as_deref()),
        };
        Context {
            compat_version: compat_version
                .map_or_else(|| HOST_COMPAT_VERSION.to_owned(), str::to_owned),
            project_root,
            env,
            verbose: 0,
            quiet: false,
            color: crate::cli::ColorWhen::Auto,
        }
    }

    /// Whether text for stdout (`to_stdout`) or stderr is coloured: `--color`, `NO_COLOR` and
    /// whether that stream is a terminal.
    pub fn colored(&self, to_stdout: bool) -> bool {
        let terminal = if to_stdout {
            std::io::IsTerminal::is_terminal(&std::io::stdout())
        } else {
            std::io::IsTerminal::is_terminal(&std::io::stderr())
        };
        self.color.enabled(terminal, self.env.no_color)
    }

    /// An `info:` line on stderr, unless `-q`.
    pub fn info(&self, text: &str) {
        if !self.quiet {
            crate::output::eprint_line(&format!("info: {text}"));
        }
    }

    /// A `verbose:` line on stderr, only with `-v`.
    pub fn verbose(&self, text: &str) {
        if self.verbose > 0 {
            crate::output::eprint_line(&format!("verbose: {text}"));
        }
    }

    /// With `-v`: which project root, config files, GSD home, overlay directories, consent
    /// and pin stores this command uses (decisions.md #3), each marked present or absent.
    pub fn describe(&self, project_given: bool) {
        if self.verbose == 0 {
            return;
        }
        let state = |path: &Path| {
            if path.exists() {
                "present"
            } else {
                "absent"
            }
        };
        let how = if project_given {
            "--project"
        } else if self.project_root.join(".planning").is_dir() {
            "nearest directory holding .planning/"
        } else if self.project_root.join(".git").exists() {
            "git top level"
        } else {
            "working directory"
        };
        self.verbose(&format!(
            "project root {} ({how})",
            self.project_root.display()
        ));
        let planning = self.project_root.join(".planning");
        let config = planning.join("config.json");
        self.verbose(&format!("config {} ({})", config.display(), state(&config)));
        if let Some(name) = &self.env.workstream {
            let overlay = planning.join("workstreams").join(name).join("config.json");
            self.verbose(&format!(
                "workstream config {} ({})",
                overlay.display(),
                state(&overlay)
            ));
        }
        match self.env.gsd_home() {
            Some(home) => {
                let from = if self.env.gsd_home.is_some() {
                    "GSD_HOME"
                } else {
                    "HOME"
                };
                self.verbose(&format!("GSD home {} (from {from})", home.display()));
                let global = home.join(".gsd").join("capabilities");
                self.verbose(&format!(
                    "global overlays {} ({})",
                    global.display(),
                    state(&global)
                ));
                let consent = crate::trust::consent::ConsentStore::new(&home).path();
                self.verbose(&format!(
                    "consent store {} ({})",
                    consent.display(),
                    state(&consent)
                ));
                let pins = crate::trust::pins::PinStore::new(&home).path();
                self.verbose(&format!("pin store {} ({})", pins.display(), state(&pins)));
            }
            None => self.verbose(
                "GSD home: none (neither GSD_HOME nor HOME is set): no global overlays, consent or pins",
            ),
        }
        let project_overlays = project::project_capabilities(&self.project_root);
        self.verbose(&format!(
            "project overlays {} ({})",
            project_overlays.display(),
            state(&project_overlays)
        ));
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

    /// Loads the project config for a command that sends plans (`review`): an existing config
    /// file that cannot be used stops the command (exit 1) before any lane runs.
    ///
    /// # Errors
    ///
    /// A [`Failure`] naming each unusable file with the parse error's line:column.
    pub fn config_checked(&self) -> Result<crate::config::ProjectConfig, Failure> {
        crate::config::ProjectConfig::load_checked(
            &self.project_root,
            self.env.workstream.as_deref(),
        )
        .map_err(|unusable| {
            let files: Vec<String> = unusable.iter().map(ToString::to_string).collect();
            Failure::new(format!(
                "{}\nno reviewer was run: without this config the reviewer selection (review.default_reviewers and the rest) is unknown, and running every detected lane could send your plans to reviewers you excluded; fix the file (or move it aside) and run again",
                files.join("\n")
            ))
        })
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
    let context = Context::new(&cli, env).map_err(|mut failure| {
        failure.status = crate::cli::usage_status(Some(cli.command.name()));
        failure
    })?;
    context.describe(cli.project.is_some());
    match cli.command {
        Command::List(args) => list::run(&context, args.json),
        Command::Validate(args) => validate::run(&context, &args),
        Command::Flags(args) => roster::flags(&context, &args),
        Command::Sections(args) => roster::sections(&context, &args),
        Command::Plan(args) => plan::run(&context, &args),
        Command::Run(args) => run::run(&context, &args.slug, &args.options, run::Caller::Run),
        Command::Invoke(mut args) => {
            if args.options.handler_module.is_some() {
                return Err(Failure::usage(
                    "invoke never loads --handler-module (debugging only: use `gsd-lane run`)",
                ));
            }
            args.options.json = true;
            run::run(&context, &args.slug, &args.options, run::Caller::Invoke)
        }
        Command::Review(args) => review::run(&context, &args),
        Command::Runs(args) => runs::run(args.json),
        Command::Disclose(args) => trust::disclose(&context, &args),
        Command::Install(args) => trust::install(&context, &args),
        Command::Remove(args) => trust::remove(&context, &args),
        Command::Trust(args) => trust::trust(&context, &args),
        Command::Doctor(args) => doctor::run(&context, &args),
        Command::Schema => {
            crate::output::print(&format!("{}\n", crate::manifest::model::schema_json()));
            Ok(0)
        }
        Command::Manpage => {
            let lanes = crate::review::args::lane_flags(&context.registry());
            crate::output::print(&manpage::render(crate::cli::command(&lanes))?);
            Ok(0)
        }
        Command::Completions(args) => {
            let lanes = crate::review::args::lane_flags(&context.registry());
            let command = crate::cli::command(&lanes);
            crate::output::print(&completions::script(args.shell, command));
            Ok(0)
        }
    }
}

/// The value of global option `name` (`--name V` or `--name=V`) in `args`, before any `--`.
fn global_value<'a>(args: &'a [OsString], name: &str) -> Option<&'a Path> {
    let prefix = format!("{name}=");
    let mut iter = args.iter().skip(1).take_while(|arg| *arg != "--");
    while let Some(arg) = iter.next() {
        if arg == name {
            return iter.next().map(Path::new);
        }
        if let Some(value) = arg.to_str().and_then(|a| a.strip_prefix(&prefix)) {
            return Some(Path::new(value));
        }
    }
    None
}

/// The lane flags `review` accepts, from the registry the command line points at
/// (`--project`, `--compat-version`); none unless the command line mentions `review`,
/// `help` or `completions` (every other command parses without loading the registry).
pub fn lane_flags_for(args: &[OsString], env: &HostEnv) -> Vec<crate::review::args::LaneFlags> {
    let wanted = args
        .iter()
        .skip(1)
        .any(|arg| arg == "review" || arg == "help" || arg == "completions" || arg == "manpage");
    if !wanted {
        return Vec::new();
    }
    let compat = global_value(args, "--compat-version").and_then(Path::to_str);
    let context = Context::locate(global_value(args, "--project"), compat, env.clone());
    crate::review::args::lane_flags(&context.registry())
}
