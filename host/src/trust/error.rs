//! The trust layer's typed errors: what a state file of the user's GSD home (consent store, pin
//! file) holds that this build cannot decide, why its lock or its atomic write failed, and why a
//! capability bundle could not be staged, promoted or removed. Each carries the path it concerns;
//! the messages are the ones the commands print.

use std::io;
use std::path::PathBuf;

/// Why the text of a consent store or pin file is not a store this build can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// Not JSON (the parser's message).
    InvalidJson(String),
    /// The root is not an object.
    RootNotObject,
    /// `version` is required (the pin file) and absent.
    VersionMissing,
    /// `version` is present and is not `"1"` (its compact JSON, escaped).
    Version(String),
    /// A required member (`pins`) is absent.
    Missing(&'static str),
    /// A member that must be an object (`pins`, `records`) is not.
    NotObject(&'static str),
    /// More pins than the store holds.
    TooManyPins(usize),
    /// More records than the store holds.
    TooManyRecords(usize),
    /// One pin is malformed (its key, escaped, and what is wrong).
    Pin {
        /// The pin's on-disk key, as an escaped JSON string literal.
        key: String,
        /// What is wrong with it.
        why: PinError,
    },
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::InvalidJson(detail) => write!(f, "invalid JSON: {detail}"),
            FormatError::RootNotObject => f.write_str("the root is not an object"),
            FormatError::VersionMissing => f.write_str("version is missing"),
            FormatError::Version(value) => write!(
                f,
                "version {value} is not \"{}\"",
                super::consent::STORE_VERSION
            ),
            FormatError::Missing(member) => write!(f, "{member} is missing"),
            FormatError::NotObject(member) => write!(f, "{member} is not an object"),
            FormatError::TooManyPins(max) => write!(f, "more than {max} pins"),
            FormatError::TooManyRecords(max) => {
                write!(f, "more than {max} records (refused as hostile)")
            }
            FormatError::Pin { key, why } => write!(f, "pin {key}: {why}"),
        }
    }
}

impl std::error::Error for FormatError {}

/// What is wrong with one pin of the pin file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinError {
    /// The pin is not a JSON object.
    NotObject,
    /// A field is absent or not a string.
    NotText(&'static str),
    /// A field that must not be empty is.
    Empty(&'static str),
    /// `id` is not a capability id.
    InvalidId,
}

impl std::fmt::Display for PinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PinError::NotObject => f.write_str("a pin is not an object"),
            PinError::NotText(field) => write!(f, "{field} is missing or not a string"),
            PinError::Empty(field) => write!(f, "{field} is empty"),
            PinError::InvalidId => f.write_str("id is not a capability id"),
        }
    }
}

impl std::error::Error for PinError {}

/// Why the consent-store lock was not acquired; nothing was written.
#[derive(Debug)]
pub enum LockError {
    /// The lock's directory could not be created.
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The lockfile could not be created for another reason than being held.
    Create {
        /// The lockfile.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// Another process held the lock through every attempt.
    Held {
        /// The lockfile.
        path: PathBuf,
        /// Who holds it, as its body says.
        holder: String,
    },
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::CreateDir { dir, source } => {
                write!(f, "creating {}: {source}", dir.display())
            }
            LockError::Create { path, source } => {
                write!(f, "creating lock {}: {source}", path.display())
            }
            LockError::Held { path, holder } => write!(
                f,
                "the consent store lock {} is held ({holder}); try again, or remove the file if no gsd or gsd-lane process is running",
                path.display()
            ),
        }
    }
}

impl std::error::Error for LockError {}

/// Why a state file could not be replaced; the old one is intact.
#[derive(Debug)]
pub enum WriteError {
    /// Its directory could not be created.
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The atomic replacement failed (the step and path, as the file helper reports them).
    Replace(crate::fsutil::ReplaceError),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::CreateDir { dir, source } => {
                write!(f, "creating {}: {source}", dir.display())
            }
            WriteError::Replace(detail) => write!(f, "{detail}"),
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::CreateDir { source, .. } => Some(source),
            WriteError::Replace(err) => err.source(),
        }
    }
}

/// The file-system step of a bundle operation that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BundleStep {
    /// Creating a directory.
    Create,
    /// Listing or inspecting a source entry.
    Read,
    /// Moving the installed bundle aside before promoting its replacement.
    MoveAside,
    /// Renaming the staged copy into place.
    Install,
    /// Moving an installed bundle out to delete it.
    Remove,
}

/// Why a capability bundle could not be staged, promoted or removed.
#[derive(Debug)]
pub enum BundleError {
    /// An I/O step failed on `path`.
    Io {
        /// The step.
        step: BundleStep,
        /// The path it concerned.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// Copying one file failed.
    Copy {
        /// The source file.
        from: PathBuf,
        /// The staged file.
        to: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The folder holds more entries than a bundle may.
    TooManyEntries {
        /// The folder being copied.
        dir: PathBuf,
        /// The bound.
        max: usize,
    },
    /// The folder holds more bytes than a bundle may.
    TooLarge {
        /// The folder being copied.
        dir: PathBuf,
        /// The bound, in MiB.
        max_mib: u64,
    },
    /// A symbolic link (a bundle holds only files and folders).
    Link(PathBuf),
    /// A FIFO, socket or device.
    Special(PathBuf),
}

impl std::fmt::Display for BundleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BundleError::Io { step, path, source } => {
                let path = path.display();
                match step {
                    BundleStep::Create => write!(f, "creating {path}: {source}"),
                    BundleStep::Read => write!(f, "reading {path}: {source}"),
                    BundleStep::MoveAside => {
                        write!(f, "moving the installed {path} aside: {source}")
                    }
                    BundleStep::Install => write!(f, "installing into {path}: {source}"),
                    BundleStep::Remove => write!(f, "removing {path}: {source}"),
                }
            }
            BundleError::Copy { from, to, source } => write!(
                f,
                "copying {} to {}: {source}",
                from.display(),
                to.display()
            ),
            BundleError::TooManyEntries { dir, max } => {
                write!(f, "{} holds more than {max} entries", dir.display())
            }
            BundleError::TooLarge { dir, max_mib } => {
                write!(f, "{} holds more than {max_mib} MiB", dir.display())
            }
            BundleError::Link(path) => write!(
                f,
                "{} is a symbolic link; a capability bundle holds only files and folders",
                path.display()
            ),
            BundleError::Special(path) => {
                write!(f, "{} is neither a file nor a folder", path.display())
            }
        }
    }
}

impl std::error::Error for BundleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BundleError::Io { source, .. } | BundleError::Copy { source, .. } => Some(source),
            _ => None,
        }
    }
}
