//! The files a spawn opens itself: the program check, the stdin file and the output files.

use std::fs::{File, OpenOptions};
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

/// The error for a path that is not a regular file.
pub(super) fn not_regular_file() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

/// Creates or truncates an output file (mode 0600 when created); it must be a regular file with
/// one link, and a symbolic link is never followed ([`crate::private_fs::open_run_file`]).
pub(super) fn open_output(path: &Path) -> io::Result<File> {
    crate::private_fs::open_run_file(path, crate::private_fs::WriteMode::Truncate)
}

/// Opens the stdin file; `Ok(None)` when it does not exist (the child then gets empty stdin).
pub(super) fn open_input(path: &Path) -> io::Result<Option<File>> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    match options.open(path) {
        Ok(file) if file.metadata()?.is_file() => Ok(Some(file)),
        Ok(_) => Err(not_regular_file()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}
