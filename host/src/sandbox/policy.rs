//! What one lane run gets: the confinement its spawner applies, and whether the repository is
//! compared before and after it.

use std::path::{Path, PathBuf};

use super::confine::{Confinement, Mechanism};
use super::detect::Snapshot;
use super::landlock::{self, Support};
use super::watchdog;
use super::{Posture, SandboxMode};

/// The mode of this run: `override_mode` (`--sandbox`) when given, else `review.sandbox`, else
/// [`SandboxMode::Enforce`].
///
/// `.planning/config.json` lives in the repository under review, so any change to it (a pull
/// request) can weaken the sandbox: a weaker mode taken from it is announced on stderr on every
/// run, never applied silently.
///
/// # Errors
///
/// A message naming the key and the accepted values when `review.sandbox` is set to anything
/// else (the run stops: a misspelt `off` must not silently mean `enforce`, nor the reverse).
pub fn run_mode(
    config: &crate::config::ProjectConfig,
    override_mode: Option<SandboxMode>,
) -> Result<SandboxMode, String> {
    if let Some(mode) = override_mode {
        return Ok(mode);
    }
    let mode = match config.get("review.sandbox") {
        None | Some(serde_json::Value::Null) => SandboxMode::default(),
        Some(value) => value.as_str().and_then(SandboxMode::parse).ok_or_else(|| {
            format!(
                ".planning/config.json: review.sandbox is {value}, expected one of {}",
                SandboxMode::spellings()
            )
        })?,
    };
    if mode != SandboxMode::Enforce {
        crate::output::eprint_line(&format!(
            "warning: .planning/config.json sets review.sandbox to {mode}: spawned lanes are not \
             refused writes to the repository{} (pass --sandbox enforce to override)",
            if mode == SandboxMode::Detect {
                ", only checked for them"
            } else {
                ""
            }
        ));
    }
    Ok(mode)
}

/// Starts building, in the background, the Landlock ruleset that the spawn lanes of this run
/// will share, so that it overlaps with planning and probing: under `enforce` with a watchdog,
/// when the run dir lies outside the repository (inside it, each lane's own files make its
/// ruleset its own). Harmless when no lane ends up confined (an HTTP lane): only the work is
/// lost.
pub fn warm(mode: SandboxMode, repo_root: &Path, run_dir: &Path) {
    if mode != SandboxMode::Enforce || !watchdog::is_enabled() {
        return;
    }
    let Ok(repo) = repo_root.canonicalize() else {
        return;
    };
    if !inside(run_dir, &repo) {
        landlock::warm(repo_root);
    }
}

/// The sentence reporting repository changes (`None` when there were none).
pub fn changes_line(changes: &[String]) -> Option<String> {
    (!changes.is_empty()).then(|| {
        format!(
            "this reviewer modified the repository: {}",
            changes.join("; ")
        )
    })
}

/// A private `TMPDIR` (which the spawner creates 0700 when the lane starts) when this
/// process's temporary directory is the repository root or one of its ancestors, where the
/// posture refuses new entries; `None` when the usual one stays usable. It is `<run dir>/tmp`,
/// unless the run dir lies in the repository (`invoke`'s default `.`): then a fresh name in the
/// temporary directory, which the spawner creates before it restricts itself (so it is
/// writable) and the runner removes afterwards.
fn private_tmpdir(repo_root: &Path, run_dir: &Path) -> Option<(PathBuf, bool)> {
    let temp = std::env::temp_dir().canonicalize().ok()?;
    let repo = repo_root.canonicalize().ok()?;
    if !repo.starts_with(&temp) {
        return None;
    }
    if inside(run_dir, &repo) {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let unique = format!(
            "gsd-lane-lane-tmp-{}-{}-{}",
            std::process::id(),
            crate::clock::now_millis(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        return Some((temp.join(unique), true));
    }
    Some((run_dir.join("tmp"), false))
}

/// Set (to anything non-empty) in gsd-lane's environment, this forces the Landlock fallback
/// instead of the read-only view (where namespaces misbehave, or to compare the two).
pub const NO_NAMESPACES_VAR: &str = "GSD_LANE_NO_NAMESPACES";

/// Whether the read-only view can be had (Linux with user namespaces), else why not.
fn view_support() -> Result<(), String> {
    if std::env::var_os(NO_NAMESPACES_VAR).is_some_and(|value| !value.is_empty()) {
        return Err(format!("{NO_NAMESPACES_VAR} is set"));
    }
    #[cfg(target_os = "linux")]
    {
        match super::namespace::support() {
            super::namespace::Support::Available => Ok(()),
            super::namespace::Support::Unavailable(why) => Err(why.clone()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err("no read-only view on this system".to_owned())
    }
}

/// Whether `path` is `root` or lies below it (both resolved; an unresolvable path is taken
/// to be inside, the safe answer for a write grant).
fn inside(path: &Path, root: &Path) -> bool {
    path.canonicalize()
        .map_or(true, |path| path.starts_with(root))
}

/// Appends the changes sentence to the lane's review file, so that REVIEWS.md carries it under
/// that lane's section (and `run` shows it in the review). The file is opened for appending
/// without following a symbolic link; a missing file is left alone.
///
/// # Errors
///
/// The I/O error of opening or writing the file.
pub fn append_changes_notice(review_path: &Path, changes: &[String]) -> std::io::Result<()> {
    use std::io::Write;

    let Some(line) = changes_line(changes) else {
        return Ok(());
    };
    let mut options = std::fs::OpenOptions::new();
    options.append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
    match options.open(review_path) {
        Ok(mut file) => file.write_all(format!("\n\n> **Warning:** {line}\n").as_bytes()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    }
}

/// How one lane is actually confined (the mode asked for, after what the system offers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effective {
    /// The lane sees the repository through a read-only mount of its own namespaces: every
    /// write, metadata change included, fails with `EROFS`, so nothing is compared.
    Viewed,
    /// Landlock refuses writes under the repository root (and detection runs too).
    Enforced(Support),
    /// Only detection: the reason enforcement is not in place.
    Detected(String),
    /// Neither (mode `off`, or an HTTP lane, which starts no process).
    Off,
    /// The lane declared `writes-repository` and the user allowed it: no refusal; changes are
    /// still reported.
    WritesAllowed,
}

impl Effective {
    /// One line for the run output and `--json`.
    pub fn describe(&self) -> String {
        match self {
            Effective::Viewed => {
                "enforce (read-only mount in the lane's own namespaces)".to_owned()
            }
            Effective::Enforced(support) => format!("enforce ({})", support.describe()),
            Effective::Detected(why) => format!("detect ({why})"),
            Effective::Off => "off".to_owned(),
            Effective::WritesAllowed => {
                "off (writes-repository allowed by review.allow_repository_writes)".to_owned()
            }
        }
    }
}

/// The sandbox of one lane run.
#[derive(Debug, Clone)]
pub struct LaneSandbox {
    /// What the spawner applies.
    pub confinement: Confinement,
    /// How the lane is confined.
    pub effective: Effective,
    /// The repository root compared before and after, when detection runs.
    detect_root: Option<PathBuf>,
    /// Paths left out of the comparison (the run dir and the lane's own files in it).
    skip: Vec<PathBuf>,
    /// A temporary directory made for this run outside the run dir, removed afterwards.
    pub scratch: Option<PathBuf>,
    /// The run dir lies in the repository, so the tool's output file must exist before the
    /// lane starts to be granted (Landlock grants existing paths only).
    output_file_grant: bool,
}

impl LaneSandbox {
    /// No confinement and no detection.
    pub fn off() -> LaneSandbox {
        LaneSandbox {
            confinement: Confinement::default(),
            effective: Effective::Off,
            detect_root: None,
            skip: Vec::new(),
            scratch: None,
            output_file_grant: false,
        }
    }

    /// Whether the runner must create the tool's output file before the lane starts: only
    /// when the run dir lies in the repository (elsewhere the run dir itself is writable and
    /// the tool makes the file as it always did).
    pub fn output_file_granted(&self) -> bool {
        self.output_file_grant
    }

    /// Decides the sandbox of a spawn lane run under `mode` for the repository at `repo_root`,
    /// whose run dir is `run_dir`; `own_files` are the files gsd-lane and the lane write there
    /// (review, sidecar, the tool's output file). `allowed_writes` says whether the user opted
    /// in for a lane that declared `writes-repository` (a lane that declared it without the
    /// opt-in never reaches this point: it is refused earlier).
    ///
    /// A run dir that is the repository root or lies inside it (`invoke`'s default `.`) is
    /// never granted as a directory: only the tool's output file is writable there, and only
    /// the lane's own files are left out of the comparison.
    pub fn decide(
        mode: SandboxMode,
        posture: Posture,
        allowed_writes: bool,
        repo_root: &Path,
        run_dir: &Path,
        own_files: &[PathBuf],
    ) -> LaneSandbox {
        let mut skip = vec![run_dir.to_path_buf(), run_dir.join("tmp")];
        skip.extend(own_files.iter().cloned());
        let detecting = |effective| LaneSandbox {
            confinement: Confinement::default(),
            effective,
            detect_root: Some(repo_root.to_path_buf()),
            skip: skip.clone(),
            scratch: None,
            output_file_grant: false,
        };
        if posture == Posture::WritesRepository && allowed_writes {
            return detecting(Effective::WritesAllowed);
        }
        match mode {
            SandboxMode::Off => LaneSandbox::off(),
            SandboxMode::Detect => detecting(Effective::Detected("chosen".to_owned())),
            SandboxMode::Enforce => {
                if !watchdog::is_enabled() {
                    return detecting(Effective::Detected(
                        "no lane watchdog in this process".to_owned(),
                    ));
                }
                let (mechanism, effective) = match view_support() {
                    Ok(()) => (Mechanism::View, Effective::Viewed),
                    Err(view_refused) => {
                        let support = landlock::support();
                        if support == Support::Unavailable {
                            return detecting(Effective::Detected(format!(
                                "{}; {view_refused}",
                                support.describe()
                            )));
                        }
                        (Mechanism::Landlock, Effective::Enforced(support))
                    }
                };
                let mut sandbox = detecting(effective);
                if mechanism == Mechanism::View {
                    // The kernel refuses every change under the root: nothing to compare.
                    sandbox.detect_root = None;
                }
                let tmpdir = private_tmpdir(repo_root, run_dir);
                if let Some((dir, true)) = &tmpdir {
                    sandbox.scratch = Some(dir.clone());
                }
                let mut writable = vec![run_dir.to_path_buf()];
                if let Ok(repo) = repo_root.canonicalize() {
                    if inside(run_dir, &repo) {
                        writable.extend(own_files.iter().cloned());
                        sandbox.output_file_grant = true;
                    }
                }
                if !sandbox.output_file_grant && mechanism == Mechanism::Landlock {
                    // The ruleset this lane needs: built while the runner prepares the lane.
                    landlock::warm(repo_root);
                }
                sandbox.confinement = Confinement {
                    mechanism,
                    read_only: Some(repo_root.to_path_buf()),
                    writable,
                    tmpdir: tmpdir.map(|(dir, _)| dir),
                };
                sandbox
            }
        }
    }

    /// Takes the "before" snapshot when detection runs.
    pub fn before(&self) -> Option<Snapshot> {
        self.detect_root
            .as_deref()
            .map(|root| Snapshot::take(root, &self.skip))
    }

    /// Removes the scratch temporary directory, if one was made (a failure is only a leftover
    /// in the temporary directory, never a reason to fail the run).
    pub fn clean_up(&self) {
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// The changes since `before` (empty when detection does not run or nothing changed).
    pub fn after(&self, before: Option<&Snapshot>) -> Vec<String> {
        match (before, self.detect_root.as_deref()) {
            (Some(before), Some(root)) => before.changes(&Snapshot::take(root, &self.skip)),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProjectConfig;

    #[test]
    fn run_mode_prefers_the_flag_then_the_config_and_refuses_unknown_values() {
        let config = |v: serde_json::Value| ProjectConfig::from_value(v);
        let empty = config(serde_json::json!({}));
        assert_eq!(run_mode(&empty, None), Ok(SandboxMode::Enforce));
        let detect = config(serde_json::json!({"review": {"sandbox": "detect"}}));
        assert_eq!(run_mode(&detect, None), Ok(SandboxMode::Detect));
        assert_eq!(
            run_mode(&detect, Some(SandboxMode::Off)),
            Ok(SandboxMode::Off)
        );
        for bad in [
            serde_json::json!("Off"),
            serde_json::json!(false),
            serde_json::json!(["off"]),
        ] {
            let bad = config(serde_json::json!({"review": {"sandbox": bad}}));
            let err = run_mode(&bad, None).unwrap_err();
            assert!(err.contains("review.sandbox"), "{err}");
        }
    }

    #[test]
    fn modes_decide_confinement_and_detection() {
        let (repo, run) = (Path::new("/repo"), Path::new("/tmp/run"));
        let off = LaneSandbox::decide(SandboxMode::Off, Posture::ReadOnly, false, repo, run, &[]);
        assert_eq!(off.effective, Effective::Off);
        assert_eq!(off.confinement, Confinement::default());
        assert!(off.detect_root.is_none());

        let detect = LaneSandbox::decide(
            SandboxMode::Detect,
            Posture::ReadOnly,
            false,
            repo,
            run,
            &[],
        );
        assert_eq!(detect.confinement, Confinement::default());
        assert_eq!(detect.detect_root.as_deref(), Some(repo));

        // Unit-test binaries have no watchdog: enforce degrades to detect and says why.
        let enforce = LaneSandbox::decide(
            SandboxMode::Enforce,
            Posture::ReadOnly,
            false,
            repo,
            run,
            &[],
        );
        assert!(matches!(enforce.effective, Effective::Detected(_)));
        assert_eq!(enforce.confinement, Confinement::default());
        assert_eq!(enforce.detect_root.as_deref(), Some(repo));

        let writes = LaneSandbox::decide(
            SandboxMode::Enforce,
            Posture::WritesRepository,
            true,
            repo,
            run,
            &[],
        );
        assert_eq!(writes.effective, Effective::WritesAllowed);
        assert_eq!(writes.confinement, Confinement::default());
        assert!(writes.detect_root.is_some());
    }
}
