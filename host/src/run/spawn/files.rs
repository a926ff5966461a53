//! The files a spawn opens itself: the program check, the stdin file and the output files.

use std::fs::File;
use std::io;
use std::path::Path;

/// True when `program` has an execute bit (Unix); always true elsewhere.
pub(super) fn is_executable(program: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(program).is_ok_and(|meta| meta.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = program;
        true
    }
}

/// Creates or truncates an output file (mode 0600 when created); it must be a regular file with
/// one link, and a symbolic link is never followed ([`crate::private_fs::open_run_file`]).
pub(super) fn open_output(path: &Path) -> io::Result<File> {
    crate::private_fs::open_run_file(path, crate::private_fs::WriteMode::Truncate)
}

/// Opens the stdin file; `Ok(None)` when it does not exist (the child then gets empty stdin).
/// A file in a held run dir is opened relative to its descriptor
/// ([`crate::private_fs::open_input_file`]).
pub(super) fn open_input(path: &Path) -> io::Result<Option<File>> {
    crate::private_fs::open_input_file(path)
}
