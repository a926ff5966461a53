//! What every command knows ([`Context`]): the environment, the project root, the compat
//! version, the verbosity and the command line's model, and what follows from them (the
//! config, the registry, the egress check, the sandbox roots).
//!
//! It sits below `app` (which builds it from the parsed global options) and beside the stages
//! that take it (`review`, `code_review`, `verdict`): nothing here imports `app` or `cli`.

use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::error::Failure;
use crate::manifest::semver::HOST_COMPAT_VERSION;
use crate::project::{self, HostEnv};
use crate::registry::{LoadOptions, Registry};

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Colour when writing to a terminal and `NO_COLOR` is unset or empty.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl ColorWhen {
    /// Whether to colour a stream that is (or is not) a terminal, given `NO_COLOR`.
    pub fn enabled(self, terminal: bool, no_color: bool) -> bool {
        match self {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => terminal && !no_color,
        }
    }
}

/// The clap model of the whole command line without lane flags, supplied by the layer that
/// parses it (`cli`), so that `app` never imports that layer.
pub type CommandModel = fn() -> clap::Command;

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
    pub color: ColorWhen,
    /// The command line's clap model (without lane flags).
    command_model: CommandModel,
}

impl Context {
    /// Decides what the lanes of this command may not write (`sandbox::roots`): the project, the
    /// git top levels of the working directory and of the project, `repo_root`, their git dirs
    /// and gsd-lane's own state. Nothing under `off`.
    ///
    /// # Errors
    ///
    /// A `.git` file that cannot be read or names too wide a git directory (status 1): no lane
    /// may start.
    pub fn confine_command(
        &self,
        sandbox: crate::sandbox::SandboxMode,
        repo_root: &std::path::Path,
    ) -> Result<(), Failure> {
        let gsd_home = self.env.gsd_home();
        let inputs = crate::sandbox::roots::RootInputs {
            cwd: &self.env.cwd,
            project_root: &self.project_root,
            repo_root,
            home: self.env.home.as_deref(),
            gsd_home: gsd_home.as_deref(),
        };
        crate::sandbox::policy::confine_command(sandbox, &inputs)
            .map_err(|err| Failure::new(err.to_string()))
    }

    /// The context from `--project` and `--compat-version` alone (quiet options at their
    /// defaults): enough to load the registry.
    pub fn locate(
        project: Option<&Path>,
        compat_version: Option<&str>,
        env: HostEnv,
        command_model: CommandModel,
    ) -> Context {
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
            color: ColorWhen::Auto,
            command_model,
        }
    }

    /// The command line's clap model, without lane flags.
    pub fn command_line(&self) -> clap::Command {
        (self.command_model)()
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

    /// The project config with the declared defaults of the keys `registry`'s lanes own
    /// (a key no config sets resolves to its lane's default: ADR-2782 D9).
    pub fn lane_config(&self, registry: &Registry) -> crate::config::ProjectConfig {
        registry.with_lane_defaults(self.config())
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

    /// The egress check of a read-only command (`doctor`): it compares, and never pins.
    pub fn egress_read_only(&self) -> Box<dyn crate::run::lane::EgressCheck> {
        crate::trust::egress_check_read_only(&self.env, &self.project_root)
    }

    /// Where handler locks live: `<GSD_HOME>/.gsd/locks`, else the temp directory.
    pub fn lock_dir(&self) -> PathBuf {
        self.env.gsd_home().map_or_else(
            || std::env::temp_dir().join("gsd-lane-locks"),
            |home| home.join(".gsd").join("locks"),
        )
    }
}
