//! The sandbox's typed errors: why the Landlock ruleset, the read-only view or the lane
//! watchdog could not confine a lane (the lane then does not start), and why a sandbox mode
//! was refused. Each carries the path, step or value it concerns; the messages are the ones
//! the commands print.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// The file-system step of listing or granting Landlock rules that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LandlockStep {
    /// Taking the device and inode of an open entry.
    Identify,
    /// Opening an entry for use in a rule.
    Open,
    /// Listing a directory on the path to a root.
    List,
    /// Inspecting a path made writable again.
    Inspect,
}

/// The step of building or applying a Landlock ruleset that the kernel refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulesetStep {
    /// Creating the ruleset.
    Create,
    /// Scoping signals to the lane's domain.
    ScopeSignals,
    /// Applying the ruleset to the spawning thread.
    Apply,
}

/// Why the Landlock posture could not be applied; the lane must then not start.
///
/// Clone: the grants of a set of roots are listed once per process, and their failure is
/// reported to every lane that needed them.
#[derive(Debug, Clone)]
pub enum LandlockError {
    /// No directory to keep read-only was given.
    NoRoots,
    /// A file-system step failed on `path`.
    Io {
        /// The step.
        step: LandlockStep,
        /// The path it concerned.
        path: PathBuf,
        /// The I/O error.
        source: Arc<io::Error>,
    },
    /// The directories on the path to the roots hold more entries than one ruleset may grant.
    TooManyRules {
        /// The roots being confined.
        roots: Vec<PathBuf>,
        /// The directory being listed when the bound was reached.
        dir: PathBuf,
        /// The bound.
        max: usize,
    },
    /// The kernel refused a ruleset step (the Landlock crate's message).
    Ruleset {
        /// The step.
        step: RulesetStep,
        /// What the Landlock crate said.
        detail: String,
    },
    /// An entry beside the roots could not be granted.
    GrantBeside {
        /// The roots being confined.
        roots: Vec<PathBuf>,
        /// What the Landlock crate said.
        detail: String,
    },
    /// A path made writable again could not be granted.
    Grant {
        /// The path.
        path: PathBuf,
        /// What the Landlock crate said.
        detail: String,
    },
    /// The ruleset was accepted but is not enforced (a kernel without Landlock).
    NotEnforced,
    /// Not Linux: Landlock does not exist here.
    #[cfg(not(target_os = "linux"))]
    NotLinux,
}

impl LandlockError {
    /// An I/O failure of `step` on `path`.
    pub fn io(step: LandlockStep, path: impl Into<PathBuf>, source: io::Error) -> LandlockError {
        LandlockError::Io {
            step,
            path: path.into(),
            source: Arc::new(source),
        }
    }
}

/// The roots, for messages: their paths joined with `, `.
fn shown(roots: &[PathBuf]) -> String {
    roots
        .iter()
        .map(|root| root.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl std::fmt::Display for LandlockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LandlockError::NoRoots => f.write_str("no directory to keep read-only was given"),
            LandlockError::Io { step, path, source } => {
                let path = path.display();
                match step {
                    LandlockStep::Identify => write!(f, "{path}: {source}"),
                    LandlockStep::Open => write!(f, "opening {path}: {source}"),
                    LandlockStep::List => write!(f, "listing {path}: {source}"),
                    LandlockStep::Inspect => write!(f, "inspecting {path}: {source}"),
                }
            }
            LandlockError::TooManyRules { roots, dir, max } => write!(
                f,
                "the Landlock fallback grants writes beside the repository one entry at a time, and \
                 the directories on the path to {} hold more than {max} entries ({} among \
                 them): no lane was started. Move the repository out of that directory, let the \
                 read-only view confine the lanes (unset {} where user namespaces are allowed), or \
                 pass --sandbox detect",
                shown(roots),
                dir.display(),
                super::policy::NO_NAMESPACES_VAR
            ),
            LandlockError::Ruleset { step, detail } => match step {
                RulesetStep::Create => write!(f, "creating the Landlock ruleset: {detail}"),
                RulesetStep::ScopeSignals => write!(f, "scoping signals: {detail}"),
                RulesetStep::Apply => write!(f, "applying the Landlock ruleset: {detail}"),
            },
            LandlockError::GrantBeside { roots, detail } => {
                write!(f, "granting an entry beside {}: {detail}", shown(roots))
            }
            LandlockError::Grant { path, detail } => {
                write!(f, "granting {}: {detail}", path.display())
            }
            LandlockError::NotEnforced => write!(
                f,
                "Landlock is not enforced on this system: no lane was started. Let the read-only \
                 view confine the lanes (allow unprivileged user namespaces, and unset {} if \
                 set), or pass --sandbox detect",
                super::policy::NO_NAMESPACES_VAR
            ),
            #[cfg(not(target_os = "linux"))]
            LandlockError::NotLinux => f.write_str("Landlock exists only on Linux"),
        }
    }
}

impl std::error::Error for LandlockError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LandlockError::Io { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

/// Why a lane's confinement could not be set up; the lane must then not start.
#[derive(Debug)]
pub enum ConfineError {
    /// Its private `TMPDIR`, or a missing read-only root, could not be created.
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A read-only root could not be resolved.
    Resolve {
        /// The root.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// gsd-lane's working directory could not be read.
    WorkingDirectory(io::Error),
    /// The view could not be described (a path holds a NUL byte).
    View(io::Error),
    /// The Landlock posture could not be applied.
    Landlock(LandlockError),
}

impl std::fmt::Display for ConfineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfineError::CreateDir { path, source } => {
                write!(f, "creating {}: {source}", path.display())
            }
            ConfineError::Resolve { path, source } => {
                write!(f, "resolving {}: {source}", path.display())
            }
            ConfineError::WorkingDirectory(source) => {
                write!(f, "the working directory: {source}")
            }
            ConfineError::View(source) => write!(f, "{source}"),
            ConfineError::Landlock(err) => write!(f, "{err}"),
        }
    }
}

impl std::error::Error for ConfineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfineError::CreateDir { source, .. }
            | ConfineError::Resolve { source, .. }
            | ConfineError::WorkingDirectory(source)
            | ConfineError::View(source) => Some(source),
            ConfineError::Landlock(err) => err.source(),
        }
    }
}

impl From<LandlockError> for ConfineError {
    fn from(err: LandlockError) -> ConfineError {
        ConfineError::Landlock(err)
    }
}

/// Why the read-only view does not confine the lanes of this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewRefused {
    /// The user turned it off ([`super::policy::NO_NAMESPACES_VAR`]).
    Disabled,
    /// The once-per-process probe failed (its reason, as shown to the user).
    Probe(String),
    /// Not Linux: there is no read-only view here.
    #[cfg(not(target_os = "linux"))]
    NotLinux,
}

impl std::fmt::Display for ViewRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ViewRefused::Disabled => write!(f, "{} is set", super::policy::NO_NAMESPACES_VAR),
            ViewRefused::Probe(reason) => f.write_str(reason),
            #[cfg(not(target_os = "linux"))]
            ViewRefused::NotLinux => f.write_str("no read-only view on this system"),
        }
    }
}

impl std::error::Error for ViewRefused {}

/// A sandbox mode that is not one of the accepted spellings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeError {
    /// A `--sandbox` value (clap names the flag and the value).
    Flag,
    /// `review.sandbox` in `.planning/config.json` (its compact JSON).
    Config {
        /// The value found, as compact JSON.
        value: String,
    },
}

impl std::fmt::Display for ModeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let spellings = super::SandboxMode::spellings();
        match self {
            ModeError::Flag => write!(f, "expected one of {spellings}"),
            ModeError::Config { value } => write!(
                f,
                ".planning/config.json: review.sandbox is {value}, expected one of {spellings}"
            ),
        }
    }
}

impl std::error::Error for ModeError {}

/// Why the lane watchdog could not be told of a lane start; the lane must then not start.
#[derive(Debug)]
pub enum WatchdogError {
    /// A thread panicked while holding the watchdog's state.
    Poisoned,
    /// No watchdog could be started or written to.
    Start(io::Error),
}

impl std::fmt::Display for WatchdogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WatchdogError::Poisoned => f.write_str("the lane watchdog's state is poisoned"),
            WatchdogError::Start(source) => {
                write!(f, "cannot start the lane watchdog: {source}")
            }
        }
    }
}

impl std::error::Error for WatchdogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WatchdogError::Start(source) => Some(source),
            WatchdogError::Poisoned => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_names_what_it_concerns() {
        let denied = || io::Error::from(io::ErrorKind::PermissionDenied);
        for (step, verb) in [
            (LandlockStep::Open, "opening /r/a"),
            (LandlockStep::List, "listing /r/a"),
            (LandlockStep::Inspect, "inspecting /r/a"),
            (LandlockStep::Identify, "/r/a: "),
        ] {
            let text = LandlockError::io(step, "/r/a", denied()).to_string();
            assert!(text.starts_with(verb), "{text}");
        }
        let too_many = LandlockError::TooManyRules {
            roots: vec![PathBuf::from("/r/a"), PathBuf::from("/r/b")],
            dir: PathBuf::from("/r"),
            max: 7,
        }
        .to_string();
        for needed in [
            "/r/a, /r/b",
            "more than 7 entries",
            "(/r among",
            "--sandbox detect",
        ] {
            assert!(too_many.contains(needed), "{needed}: {too_many}");
        }
        // Confinement passes the Landlock error through as it is, and names its own paths.
        let inner = LandlockError::NotEnforced;
        assert_eq!(
            ConfineError::from(inner.clone()).to_string(),
            inner.to_string()
        );
        let created = ConfineError::CreateDir {
            path: PathBuf::from("/t/x.tmp"),
            source: denied(),
        };
        assert!(created.to_string().starts_with("creating /t/x.tmp: "));
        assert!(std::error::Error::source(&created).is_some());
        assert_eq!(
            ModeError::Config {
                value: "\"Off\"".to_owned()
            }
            .to_string(),
            ".planning/config.json: review.sandbox is \"Off\", expected one of enforce, detect, off"
        );
        assert_eq!(
            ModeError::Flag.to_string(),
            "expected one of enforce, detect, off"
        );
        assert_eq!(
            ViewRefused::Disabled.to_string(),
            format!("{} is set", super::super::policy::NO_NAMESPACES_VAR)
        );
    }
}
