//! The run dir of a code-review call: where the request and the lanes' review copies go.

use std::path::{Path, PathBuf};

use super::reason::{Rejection, WholeReason};
use crate::context::Context;
use crate::private_fs;

/// The call's run dir: the given one (your own, not writable by others; created 0700 when
/// missing) or a fresh private one.
///
/// # Errors
///
/// `invalid_paths` for a dir others can write or that cannot be created privately,
/// `prompt_write_failed` when a missing given dir cannot be created.
pub fn run_dir(context: &Context, given: Option<&str>) -> Result<PathBuf, Rejection> {
    let invalid = |detail: String| Rejection::new(WholeReason::InvalidPaths, detail);
    let Some(given) = given else {
        return fresh_run_dir(context)
            .map_err(|err| invalid(format!("creating a private run dir: {err}")));
    };
    let dir = context.env.cwd.join(given);
    if !dir.exists() {
        create_private_dir(&dir).map_err(|err| {
            Rejection::new(
                WholeReason::PromptWriteFailed,
                format!("creating run dir {}: {err}", dir.display()),
            )
        })?;
    }
    private_fs::check_given_dir(&dir, private_fs::Sharing::Private)
        .map_err(|why| invalid(why.to_string()))?;
    Ok(dir)
}

/// A fresh 0700 run dir `gsd-code-review-XXXXXX` under `<GSD_HOME>/.gsd/code-review/`, which a
/// confined lane cannot write (no lane can plant a file where the findings are written), else
/// in the temp dir when there is no GSD home.
fn fresh_run_dir(context: &Context) -> std::io::Result<PathBuf> {
    let Some(home) = context.env.gsd_home() else {
        return private_fs::private_temp_dir("gsd-code-review-");
    };
    let parent = home.join(".gsd").join("code-review");
    create_private_dir(&parent)?;
    private_fs::check_given_dir(&parent, private_fs::Sharing::Private)
        .map_err(std::io::Error::other)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix("gsd-code-review-").rand_bytes(6);
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir_in(&parent).map(tempfile::TempDir::keep)
}

/// Creates `dir` (and its missing parents) with mode 0700.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}
