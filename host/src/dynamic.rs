//! Compiled handler modules for `gsd-lane run <slug> --handler-module <PATH>` (feature
//! `dynamic-handlers`).
//!
//! A module is a `cdylib` exporting the SDK's ABI-stable root module
//! ([`gsd_lane_sdk::abi::HandlerModule`]). Loading checks, in order, before any of the module's
//! handler code runs: abi_stable's own checks (the library's abi_stable version, the layout of
//! every interface type, the interface version), then the SDK version the module declares
//! (caret-compatible with this host's), then the handler's own SDK version, its declared name
//! (a member of the closed first-party set, [`HandlerName`](gsd_lane_sdk::HandlerName)) and its
//! transport. Any failure refuses the module and nothing is run.
//!
//! A loaded module only ever replaces the handler of the one lane run with the flag; `review`
//! and every other lane keep the built-in handlers. The module reaches the outside world only
//! through the host's effects (bridged by [`gsd_lane_sdk::abi`]), so its processes, requests,
//! reads and locks are bounded and checked by the same code as a first-party handler's.
//!
//! abi_stable keeps one root module per process (a loaded library is never unloaded); the CLI
//! loads at most one module per process.

use std::fmt;
use std::path::{Path, PathBuf};

use gsd_lane_sdk::abi::abi_stable::library::{LibraryError, RootModule};
use gsd_lane_sdk::abi::{HandlerModuleRef, LoadedHandler, ModuleRefusal};
use gsd_lane_sdk::{is_compatible, Handler, SDK_VERSION};

/// A module whose handler passed every check.
#[derive(Debug)]
pub struct LoadedModule {
    /// The checked handler (lives for the rest of the process, like the library).
    pub handler: &'static LoadedHandler,
}

impl LoadedModule {
    /// The handler as the run pipeline takes it.
    pub fn handler(&self) -> &'static dyn Handler {
        self.handler
    }
}

/// Why a module was refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum DynamicError {
    /// No file at the path.
    Missing(PathBuf),
    /// The library could not be loaded or failed abi_stable's checks.
    Load {
        /// The library.
        path: PathBuf,
        /// abi_stable's description.
        detail: String,
    },
    /// The module was built against an SDK this host is not compatible with.
    IncompatibleSdk {
        /// The library.
        path: PathBuf,
        /// The module's SDK version.
        module: String,
        /// This host's SDK version.
        host: String,
    },
    /// The module's handler failed a check (name outside the closed set, version, transport).
    Refused {
        /// The library.
        path: PathBuf,
        /// What did not fit.
        refusal: ModuleRefusal,
    },
}

impl fmt::Display for DynamicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DynamicError::Missing(path) => {
                write!(f, "handler module {}: no such file", path.display())
            }
            DynamicError::Load { path, detail } => {
                write!(
                    f,
                    "handler module {}: cannot load: {detail}",
                    path.display()
                )
            }
            DynamicError::IncompatibleSdk { path, module, host } => write!(
                f,
                "handler module {}: refused: it was built with gsd-lane-sdk {module}, which is \
                 incompatible with this host's gsd-lane-sdk {host}; rebuild the module against \
                 this SDK (nothing was run)",
                path.display()
            ),
            DynamicError::Refused { path, refusal } => write!(
                f,
                "handler module {}: refused: {refusal} (nothing was run)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for DynamicError {}

/// Loads and checks the handler module at `path`.
///
/// # Errors
///
/// [`DynamicError`] when the file is missing, cannot be loaded, fails abi_stable's layout or
/// version checks, declares an incompatible SDK version, or declares a handler name outside the
/// closed first-party set.
pub fn load(path: &Path) -> Result<LoadedModule, DynamicError> {
    if !path.is_file() {
        return Err(DynamicError::Missing(path.to_path_buf()));
    }
    let root = HandlerModuleRef::load_from_file(path).map_err(|err| library_error(path, err))?;
    let declared = (root.sdk_version())().as_str().to_owned();
    check_sdk(path, &declared)?;
    let handler = LoadedHandler::new((root.new_handler())(), &crate::registry::handlers::names())
        .map_err(|refusal| match refusal {
        ModuleRefusal::IncompatibleSdk { module, host } => DynamicError::IncompatibleSdk {
            path: path.to_path_buf(),
            module,
            host,
        },
        refusal => DynamicError::Refused {
            path: path.to_path_buf(),
            refusal,
        },
    })?;
    Ok(LoadedModule {
        handler: Box::leak(Box::new(handler)),
    })
}

/// Refuses a declared SDK version that is not caret-compatible with [`SDK_VERSION`].
fn check_sdk(path: &Path, declared: &str) -> Result<(), DynamicError> {
    if is_compatible(SDK_VERSION, declared) {
        Ok(())
    } else {
        Err(DynamicError::IncompatibleSdk {
            path: path.to_path_buf(),
            module: declared.to_owned(),
            host: SDK_VERSION.to_owned(),
        })
    }
}

/// Maps abi_stable's load errors; its interface-version check is an SDK mismatch.
fn library_error(path: &Path, err: LibraryError) -> DynamicError {
    match err {
        LibraryError::IncompatibleVersionNumber {
            expected_version,
            actual_version,
            ..
        } => DynamicError::IncompatibleSdk {
            path: path.to_path_buf(),
            module: actual_version.to_string(),
            host: expected_version.to_string(),
        },
        other => DynamicError::Load {
            path: path.to_path_buf(),
            detail: other.to_string().trim().replace('\n', " "),
        },
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_missing_file_is_refused_before_loading() {
        let err = load(Path::new("/nonexistent/libmodule.so")).expect_err("refused");
        assert!(matches!(err, DynamicError::Missing(_)));
        assert!(err.to_string().contains("no such file"), "{err}");
    }

    #[test]
    fn dynamic_a_file_that_is_not_a_library_is_a_load_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("libfake.so");
        std::fs::write(&path, b"not a shared object").expect("write");
        let err = load(&path).expect_err("refused");
        assert!(matches!(err, DynamicError::Load { .. }), "{err:?}");
        assert!(err.to_string().contains("cannot load"), "{err}");
    }

    #[test]
    fn dynamic_sdk_check_names_both_versions() {
        assert!(check_sdk(Path::new("m.so"), SDK_VERSION).is_ok());
        let err = check_sdk(Path::new("m.so"), "9.0.0").expect_err("incompatible");
        let text = err.to_string();
        assert!(
            text.contains("9.0.0") && text.contains(SDK_VERSION),
            "{text}"
        );
        assert!(text.contains("nothing was run"), "{text}");
    }
}
