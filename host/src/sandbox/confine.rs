//! What one lane is confined by, and applying it to the thread that starts the lane.
//!
//! Landlock restricts the calling thread and every process it starts from then on, so the spawner
//! starts each confined lane from a thread of its own that first calls [`confine_current_thread`]:
//! the lane and everything it starts inherit the restriction, and the rest of
//! gsd-lane stays unrestricted. The ruleset itself is built once per process and repository
//! ([`super::landlock`]).

use std::io;
use std::path::{Path, PathBuf};

use super::error::ConfineError;

/// What keeps the confined roots read-only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mechanism {
    /// A Landlock ruleset on the spawning thread (the fallback where namespaces are refused).
    #[default]
    Landlock,
    /// The read-only view: the lane's own user, mount and PID namespaces
    /// ([`super::namespace`]).
    View,
}

/// How a lane confined by the read-only view relies on the view holding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ViewProof {
    /// The once-per-process probe proved the view before the lane was decided (or no view is
    /// used).
    #[default]
    Probed,
    /// The view was not probed in this process yet: the lane's own process proves it before its
    /// program starts ([`super::namespace::View::prove_at_spawn`]). When it cannot, the probe
    /// runs then; where it refuses the view the spawn fails, the program never having started,
    /// and the caller decides the lane again ([`super::policy::LaneSandbox::refused_at_spawn`]).
    AtSpawn,
}

/// How one lane is confined.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Confinement {
    /// What applies the restriction.
    pub mechanism: Mechanism,
    /// The directories nothing may be written under (Landlock, [`super::roots`]); empty: no
    /// filesystem restriction.
    pub read_only: Vec<PathBuf>,
    /// Paths that stay writable even when they lie under `read_only` (the lane's own output
    /// files, which must exist when the lane starts).
    pub writable: Vec<PathBuf>,
    /// `TMPDIR` for the lane: its private scratch directory. Created (0700) when the lane
    /// starts, and writable.
    pub tmpdir: Option<PathBuf>,
    /// Whether the view was probed first or is proven by the lane's spawn.
    pub proof: ViewProof,
}

impl Confinement {
    /// Whether a filesystem restriction is asked for.
    pub fn is_restricted(&self) -> bool {
        !self.read_only.is_empty()
    }
}

/// Applies `confinement` to the calling thread: creates the private `TMPDIR`, then restricts
/// the thread (and every process it starts) to the read-only posture. Nothing happens when no
/// filesystem restriction is asked for.
///
/// Called right before the lane is started, so that a refused lane leaves nothing behind.
///
/// # Errors
///
/// What failed, naming the path, when the `TMPDIR` cannot be made or the posture cannot be
/// applied: the lane must then not start.
pub fn confine_current_thread(confinement: &Confinement) -> Result<(), ConfineError> {
    if !confinement.is_restricted() {
        return Ok(());
    }
    let mut writable = confinement.writable.clone();
    if let Some(tmpdir) = &confinement.tmpdir {
        scratch_dir(tmpdir).map_err(|source| ConfineError::CreateDir {
            path: tmpdir.clone(),
            source,
        })?;
        writable.push(tmpdir.clone());
    }
    super::landlock::restrict_self(&confinement.read_only, &writable)?;
    Ok(())
}

/// The read-only view for `confinement` (Linux): the private `TMPDIR` created first, the paths
/// made writable again limited to those inside a read-only root (the others are writable
/// anyway), and the working directory the lane starts in. `None` when no restriction is asked
/// for.
///
/// # Errors
///
/// What failed, naming the path, when a root cannot be resolved, the `TMPDIR` cannot be made
/// or a path cannot be passed.
#[cfg(target_os = "linux")]
pub fn view_for(confinement: &Confinement) -> Result<Option<super::namespace::View>, ConfineError> {
    if !confinement.is_restricted() {
        return Ok(None);
    }
    let roots = confinement
        .read_only
        .iter()
        .map(|root| {
            // A root that does not exist yet (gsd-lane's own `$GSD_HOME/.gsd` before its first
            // write) is made now, private: left missing, the lane could create it with content
            // of its choosing.
            if std::fs::symlink_metadata(root).is_err() {
                private_dir(root).map_err(|source| ConfineError::CreateDir {
                    path: root.clone(),
                    source,
                })?;
            }
            root.canonicalize().map_err(|source| ConfineError::Resolve {
                path: root.clone(),
                source,
            })
        })
        .collect::<Result<Vec<PathBuf>, ConfineError>>()?;
    let in_a_root = |path: &Path| roots.iter().any(|root| path.starts_with(root));
    // Inside a root only files are made writable again (the lane's own output files), never a
    // directory: the run dir `.` of `invoke` is the repository itself.
    // A symbolic link in a file's place is never followed: granting its target would hand the
    // lane whatever file a repository or an earlier lane pointed it at.
    let mut inside: Vec<PathBuf> = confinement
        .writable
        .iter()
        .filter(|path| std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file()))
        .filter_map(|path| {
            let parent = path.parent()?.canonicalize().ok()?;
            Some(parent.join(path.file_name()?))
        })
        .filter(|path| in_a_root(path))
        .collect();
    if let Some(tmpdir) = &confinement.tmpdir {
        scratch_dir(tmpdir).map_err(|source| ConfineError::CreateDir {
            path: tmpdir.clone(),
            source,
        })?;
        if let Ok(tmpdir) = tmpdir.canonicalize() {
            if in_a_root(&tmpdir) {
                inside.push(tmpdir);
            }
        }
    }
    let cwd = std::env::current_dir().map_err(ConfineError::WorkingDirectory)?;
    super::namespace::View::new(&roots, &inside, &cwd)
        .map(Some)
        .map_err(ConfineError::View)
}

/// Creates the lane's scratch directory `dir` (its `TMPDIR`) with mode 0700, or accepts one that
/// exists only when it is as gsd-lane makes it: a directory of this user's, mode 0700, not a
/// symbolic link. Anything else (another local user's directory planted at that name in a shared
/// temporary directory, a mode a lane changed) fails the spawn, naming the path, instead of
/// handing the lane a directory someone else can read or write.
fn scratch_dir(dir: &Path) -> io::Result<()> {
    private_dir(dir)?;
    crate::private_fs::check_own_run_dir(dir).map_err(|why| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("not a private directory of this user ({why}); remove it"),
        )
    })
}

/// Creates `dir` with mode 0700 (whatever the umask), or accepts an existing directory that is
/// not a symbolic link.
fn private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        // A umask such as 0277 would leave less than 0700 (the owner unable to write it).
        #[cfg(unix)]
        Ok(()) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            if std::fs::symlink_metadata(dir)?.is_dir() {
                Ok(())
            } else {
                Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "not a directory",
                ))
            }
        }
        other => other,
    }
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn no_restriction_asked_is_a_no_op_and_the_tmpdir_is_private() {
        assert!(confine_current_thread(&Confinement::default()).is_ok());
        use std::os::unix::fs::PermissionsExt;
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("tmp");
        private_dir(&dir).unwrap();
        private_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let file = top.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(private_dir(&file).is_err());
    }

    #[test]
    fn a_scratch_dir_someone_else_could_use_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("scratch");
        scratch_dir(&dir).unwrap();
        // Ours, 0700: accepted again (a resumed run).
        scratch_dir(&dir).unwrap();
        // Opened up (by a lane, or planted so): refused, and left as it is.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = scratch_dir(&dir).unwrap_err().to_string();
        assert!(err.contains("not a private directory"), "{err}");
        // A link to a private directory of ours: refused too.
        let target = top.path().join("target");
        scratch_dir(&target).unwrap();
        let link = top.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(scratch_dir(&link).is_err());
        // Another user's directory (only root can make one here).
        if rustix::process::geteuid().is_root() {
            let theirs = top.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            let err = scratch_dir(&theirs).unwrap_err().to_string();
            assert!(err.contains("not a private directory"), "{err}");
        }
    }
}
