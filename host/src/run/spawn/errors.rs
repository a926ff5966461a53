//! How failures are reported: OS errors as the report's error, and the sidecar's error line.

use std::io;

use gsd_lane_sdk::SpawnError;

/// The sidecar line appended when the report carries an error; a lane gsd-lane refused to
/// start (its confinement could not be applied) gets the reason on the line before, since the
/// code alone (`EPERM`) says nothing of it.
pub(super) fn spawn_error_line(error: &SpawnError) -> String {
    match error {
        SpawnError::Refused(why) => format!(
            "\n[gsd-lane] the lane was not started: {}\n[spawn error: {}]\n",
            crate::output::neutralize(why),
            error.code()
        ),
        _ => format!("\n[spawn error: {}]\n", error.code()),
    }
}

/// Maps an OS error to the report's error (`ENOENT`, `EACCES`, else the errno name).
pub(super) fn spawn_error_from_io(err: &io::Error) -> SpawnError {
    match err.kind() {
        io::ErrorKind::NotFound => SpawnError::NotFound,
        io::ErrorKind::PermissionDenied => SpawnError::PermissionDenied,
        kind => match err.raw_os_error() {
            Some(code) => SpawnError::Os(os_error_name(code)),
            None if kind == io::ErrorKind::InvalidInput => SpawnError::Os("EINVAL".to_string()),
            None => SpawnError::Os("UNKNOWN".to_string()),
        },
    }
}

/// The symbolic name of an errno value (`ERRNO_<n>` when not in the table).
#[cfg(unix)]
pub(super) fn os_error_name(code: i32) -> String {
    let name = match code {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::E2BIG => "E2BIG",
        libc::ENOEXEC => "ENOEXEC",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EEXIST => "EEXIST",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ETXTBSY => "ETXTBSY",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::EPIPE => "EPIPE",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ELOOP => "ELOOP",
        libc::EDQUOT => "EDQUOT",
        libc::ENOBUFS => "ENOBUFS",
        libc::ETIMEDOUT => "ETIMEDOUT",
        _ => return format!("ERRNO_{code}"),
    };
    name.to_string()
}

/// The name of a Windows error code.
#[cfg(not(unix))]
pub(super) fn os_error_name(code: i32) -> String {
    format!("OS_ERROR_{code}")
}
