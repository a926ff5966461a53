//! What one lane run gets: the confinement its spawner applies, and whether the repository is
//! compared before and after it.

use std::path::{Path, PathBuf};

use super::confine::{Confinement, Mechanism, ViewProof};
use super::detect::session::Session;
use super::detect::{Bounds, Comparison, Skip, Snapshot};
use super::error::{ModeError, ViewRefused};
use super::landlock::{self, Support};
use super::roots::{self, Roots};
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
/// [`ModeError::Config`], naming the key and the accepted values, when `review.sandbox` is set
/// to anything else (the run stops: a misspelt `off` must not silently mean `enforce`, nor the
/// reverse).
pub fn run_mode(
    config: &crate::config::ProjectConfig,
    override_mode: Option<SandboxMode>,
) -> Result<SandboxMode, ModeError> {
    announce_repository_writes(config);
    if let Some(mode) = override_mode {
        return Ok(mode);
    }
    let mode = match config.get("review.sandbox") {
        None | Some(serde_json::Value::Null) => SandboxMode::default(),
        Some(value) => {
            value
                .as_str()
                .and_then(SandboxMode::parse)
                .ok_or_else(|| ModeError::Config {
                    value: value.to_string(),
                })?
        }
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

/// Announces on stderr a `review.allow_repository_writes` taken from the repository's own
/// config: like a weaker `review.sandbox`, a pull request can add a slug to it, which lets that
/// lane (when it declares `writes-repository`) run with no refusal at all. Said on every run,
/// whatever `--sandbox` says (the flag does not govern the list).
fn announce_repository_writes(config: &crate::config::ProjectConfig) {
    let Some(value) = config.get("review.allow_repository_writes") else {
        return;
    };
    let listed: Vec<String> = match value {
        serde_json::Value::Array(slugs) if slugs.is_empty() => return,
        serde_json::Value::Array(slugs) => slugs
            .iter()
            .map(|slug| match slug.as_str() {
                Some(text) => format!("\"{}\"", crate::output::escape_text(text)),
                None => crate::output::neutralize(&slug.to_string()),
            })
            .collect(),
        serde_json::Value::Null => return,
        other => vec![crate::output::neutralize(&other.to_string())],
    };
    crate::output::eprint_line(&format!(
        "warning: .planning/config.json sets review.allow_repository_writes to [{}]: a lane listed \
         there that declares writes-repository runs with the repository writable (its changes \
         are only reported)",
        listed.join(", ")
    ));
}

/// Decides the directories the lanes of this command may not write ([`roots`]) and records
/// them for every lane it runs; nothing under `off`.
///
/// # Errors
///
/// A `.git` file that cannot be read or names too wide a git directory: no lane may start.
pub fn confine_command(
    mode: SandboxMode,
    inputs: &roots::RootInputs<'_>,
) -> Result<(), roots::RootsError> {
    if mode == SandboxMode::Off {
        return Ok(());
    }
    roots::set_current(Roots::resolve(inputs)?);
    Ok(())
}

/// Starts listing, in the background, the Landlock grants that the spawn lanes of this run will
/// share, so that it overlaps with planning and probing (under `enforce` with a watchdog).
/// Harmless when no lane ends up confined (an HTTP lane): only the work is lost. Nothing to do
/// where the read-only view confines the lanes (whose once-per-process probe runs here), nor
/// when the lane's own spawn is to prove the view ([`ViewProof::AtSpawn`]: the grants are listed
/// when it cannot).
pub fn warm(mode: SandboxMode, proof: ViewProof, repo_root: &Path, run_dir: &Path) {
    if mode != SandboxMode::Enforce
        || !watchdog::is_enabled()
        || proof == ViewProof::AtSpawn
        || view_support().is_ok()
    {
        return;
    }
    landlock::warm(&lane_roots(&roots::current_with(repo_root), run_dir));
}

/// Starts the read-only view's once-per-process probe (a forked child entering a view) on a
/// thread of its own, so that it overlaps with the command's own start (manifests, config,
/// stores) instead of following it: `run` paid it in full before its lane. Harmless when no
/// lane ends up confined: only the work is lost.
pub fn probe_early() {
    if !watchdog::is_enabled() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("gsd-view-probe".to_owned())
        .spawn(|| {
            let _ = view_support();
        });
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

/// Set (to anything non-empty) in gsd-lane's environment, this forces the Landlock fallback
/// instead of the read-only view (where namespaces misbehave, or to compare the two).
pub const NO_NAMESPACES_VAR: &str = "GSD_LANE_NO_NAMESPACES";

/// Whether a lane's own spawn can be left to prove the view: namespaces are not turned off,
/// and the view was neither probed nor proven in this process yet.
fn provable_at_spawn() -> bool {
    if std::env::var_os(NO_NAMESPACES_VAR).is_some_and(|value| !value.is_empty()) {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        super::namespace::known().is_none()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Whether the view's probe, run after a lane's spawn could not prove it, refused the view.
fn refused_after_spawn() -> bool {
    #[cfg(target_os = "linux")]
    {
        matches!(
            super::namespace::known(),
            Some(super::namespace::Support::Unavailable(_))
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Whether the read-only view can be had (Linux with user namespaces), else why not.
fn view_support() -> Result<(), ViewRefused> {
    if std::env::var_os(NO_NAMESPACES_VAR).is_some_and(|value| !value.is_empty()) {
        return Err(ViewRefused::Disabled);
    }
    #[cfg(target_os = "linux")]
    {
        match super::namespace::support() {
            super::namespace::Support::Available => Ok(()),
            super::namespace::Support::Unavailable(why) => Err(ViewRefused::Probe(why.clone())),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(ViewRefused::NotLinux)
    }
}

/// Every directory a lane of `roots` whose run dir is `run_dir` may not write: the roots, and
/// the run dir itself (shared by every lane of a review; each lane is granted only its own files
/// and scratch directory in it), unless the run dir holds a root (then its other entries stay
/// writable: confining it would confine more than the repository).
fn lane_roots(roots: &Roots, run_dir: &Path) -> Vec<PathBuf> {
    let mut all = roots.all();
    let run_dir = roots::resolved(run_dir);
    if !all.iter().any(|root| root.starts_with(&run_dir)) {
        all.push(run_dir);
    }
    all
}

/// The private scratch directory (the lane's `TMPDIR`) of the lane whose review file is
/// `review_path`: `<run dir>/<review file name without .md>.tmp`, next to its own files; when
/// the run dir lies in a repository root (`invoke`'s default `.`), a fresh name in the temporary
/// directory instead, so that nothing is created in the repository. The spawner creates it
/// (0700) before it restricts itself and the runner removes it afterwards.
fn scratch_dir(roots: &Roots, run_dir: &Path, review_path: Option<&Path>) -> PathBuf {
    let in_repository = inside_any(&roots::resolved(run_dir), &roots.repository);
    match review_path.and_then(Path::file_stem) {
        Some(stem) if !in_repository => {
            let mut name = stem.to_owned();
            name.push(".tmp");
            run_dir.join(name)
        }
        _ => {
            // In a temporary directory other users share: a name nobody can guess (64 random
            // bits), which the spawner creates 0700 or refuses ([`super::confine`]).
            use std::hash::{BuildHasher, Hasher};
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let random = std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish();
            let mut unique = scratch_prefix().into_os_string();
            unique.push(format!(
                "{}-{random:016x}",
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ));
            PathBuf::from(unique)
        }
    }
}

/// The start of every scratch directory name this process makes in the temporary directory
/// (`<temp dir>/gsd-lane-lane-tmp-<pid>-`): a review's detection leaves them out.
pub fn scratch_prefix() -> PathBuf {
    std::env::temp_dir().join(format!("gsd-lane-lane-tmp-{}-", std::process::id()))
}

/// Whether `path` (resolved) is one of `roots` or lies below one.
fn inside_any(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
}

/// Appends what detection found to the lane's review file, so that REVIEWS.md carries it under
/// that lane's section (and `run` shows it in the review): the changes sentence, and the note
/// of a partial check (which never reads as "no change"). The file is opened for appending
/// without following a symbolic link; a missing file is left alone.
///
/// # Errors
///
/// The I/O error of opening or writing the file.
pub fn append_changes_notice(review_path: &Path, found: &Comparison) -> std::io::Result<()> {
    use std::io::Write;

    let mut text = String::new();
    if let Some(line) = changes_line(&found.changes) {
        text.push_str(&format!("\n\n> **Warning:** {line}\n"));
    }
    if let Some(partial) = found.partial_sentence() {
        text.push_str(&format!("\n\n> **Note:** {partial}\n"));
    }
    if text.is_empty() {
        return Ok(());
    }
    // Never through a planted link, never blocking on a FIFO, in a held run dir through its
    // descriptor.
    match crate::private_fs::open_run_file_to_append(review_path) {
        Ok(mut file) => file.write_all(text.as_bytes()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    }
}

/// What a review's detection found, for REVIEWS.md, the run output and `--json` (`None`: no
/// change and a whole check): the changes are said to have been made during the review, since
/// several lanes ran at once.
pub fn review_changes_line(found: &Comparison) -> Option<String> {
    let mut parts = Vec::new();
    if found.changed() {
        parts.push(format!(
            "the repository was modified during the review (lanes ran at once, so no one lane \
             is named; pass --jobs 1 to attribute changes): {}",
            found.changes.join("; ")
        ));
    }
    parts.extend(found.partial_sentence());
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// How one lane is actually confined (the mode asked for, after what the system offers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effective {
    /// The lane sees the confined roots through read-only mounts of its own namespaces: every
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

impl Effective {
    /// The mode that applied (`enforce` only where a mechanism refuses the writes).
    pub fn mode(&self) -> SandboxMode {
        match self {
            Effective::Viewed | Effective::Enforced(_) => SandboxMode::Enforce,
            Effective::Detected(_) => SandboxMode::Detect,
            Effective::Off | Effective::WritesAllowed => SandboxMode::Off,
        }
    }

    /// What refused the writes: `view` (the read-only view), `landlock`, or `none`.
    pub fn mechanism(&self) -> &'static str {
        match self {
            Effective::Viewed => "view",
            Effective::Enforced(_) => "landlock",
            Effective::Detected(_) | Effective::Off | Effective::WritesAllowed => "none",
        }
    }

    /// The `sandbox` member of `run --json`, `invoke --json` and `doctor --json`.
    pub fn report(&self) -> SandboxReport {
        SandboxReport {
            mode: self.mode().as_str(),
            mechanism: self.mechanism(),
            detail: self.describe(),
        }
    }
}

/// `{"mode", "mechanism", "detail"}`: how a lane's processes are confined, as command output
/// gives it ([`Effective::report`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SandboxReport {
    /// The sandbox mode (`enforce`, `detect`, `off`).
    pub mode: &'static str,
    /// What applies it (`view`, `landlock`, `none`).
    pub mechanism: &'static str,
    /// In words ([`Effective::describe`]).
    pub detail: String,
}

/// What `enforce` amounts to in this process, and why the read-only view is not it when it
/// is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enforcement {
    /// The view where it can be had, else Landlock, else only detection (saying why).
    pub effective: Effective,
    /// Why the view was refused (`None` when it applies, or was not tried).
    pub view_refused: Option<ViewRefused>,
}

/// Decides (once per process: both probes are cached) how `enforce` confines a spawn lane that
/// does not write the repository: the same answer [`LaneSandbox::decide`] gives, for `doctor`.
pub fn enforcement() -> Enforcement {
    if !watchdog::is_enabled() {
        return Enforcement {
            effective: Effective::Detected("no lane watchdog in this process".to_owned()),
            view_refused: None,
        };
    }
    match view_support() {
        Ok(()) => Enforcement {
            effective: Effective::Viewed,
            view_refused: None,
        },
        Err(view_refused) => {
            let support = landlock::support();
            let effective = if support == Support::Unavailable {
                Effective::Detected(format!("{}; {view_refused}", support.describe()))
            } else {
                Effective::Enforced(support)
            };
            Enforcement {
                effective,
                view_refused: Some(view_refused),
            }
        }
    }
}

/// How the spawn lanes of a command run under `mode` are confined, in one line (REVIEWS.md):
/// the mode, the mechanism and what it does.
pub fn summary(mode: SandboxMode) -> String {
    let effective = match mode {
        SandboxMode::Off => Effective::Off,
        SandboxMode::Detect => Effective::Detected("chosen".to_owned()),
        SandboxMode::Enforce => enforcement().effective,
    };
    format!(
        "{}, mechanism {}",
        effective.describe(),
        effective.mechanism()
    )
}

/// The sandbox of one lane run.
#[derive(Debug, Clone)]
pub struct LaneSandbox {
    /// What the spawner applies.
    pub confinement: Confinement,
    /// How the lane is confined.
    pub effective: Effective,
    /// The repository roots compared before and after, when detection runs, each with the
    /// label its changes are named under.
    detect_roots: Vec<(PathBuf, String)>,
    /// Paths left out of the comparison (the lane's own files and scratch directory).
    skip: Vec<PathBuf>,
    /// The lane's scratch directory, removed afterwards.
    pub scratch: Option<PathBuf>,
}

/// The "before" walk of a lane's repository roots.
#[derive(Debug)]
pub enum Before {
    /// The lane's own walk (outside a review: `run`, `invoke`).
    Own(Vec<Snapshot>),
    /// Through the review's session: the walk the lane is compared against (one lane at a
    /// time), or `None` when the review compares once at its end.
    Review(std::sync::Arc<Session>, Option<Vec<Snapshot>>),
}

impl LaneSandbox {
    /// No confinement and no detection.
    pub fn off() -> LaneSandbox {
        LaneSandbox {
            confinement: Confinement::default(),
            effective: Effective::Off,
            detect_roots: Vec::new(),
            skip: Vec::new(),
            scratch: None,
        }
    }

    /// Whether the runner must create the tool's output file before the lane starts: whenever
    /// the lane is confined (Landlock grants existing paths only, and the run dir itself is not
    /// writable for the lane).
    pub fn output_file_granted(&self) -> bool {
        self.confinement.is_restricted()
    }

    /// Decides the sandbox of a spawn lane run under `mode` for the repository at `repo_root`
    /// (with every other root of this command, [`roots::current_with`]), whose run dir is
    /// `run_dir`; `own_files` are the files of this lane there (review, sidecar, the tool's
    /// output file). `allowed_writes` says whether the user opted in for a lane that declared
    /// `writes-repository` (a lane that declared it without the opt-in never reaches this point:
    /// it is refused earlier). `proof`: [`ViewProof::AtSpawn`] lets the lane's own spawn prove
    /// the read-only view when it was not probed in this process yet (the caller then checks
    /// [`LaneSandbox::refused_at_spawn`] after the run); [`ViewProof::Probed`] probes first.
    ///
    /// Under `enforce` the roots and the run dir are read-only for the lane, except its own
    /// files (granted one by one) and its private scratch directory (its `TMPDIR`): a lane can
    /// rewrite neither the repository nor another lane's review nor the shared prompt. Detection
    /// compares every repository root and leaves out only the lane's own files and scratch.
    pub fn decide(
        mode: SandboxMode,
        posture: Posture,
        allowed_writes: bool,
        repo_root: &Path,
        run_dir: &Path,
        own_files: &[PathBuf],
        proof: ViewProof,
    ) -> LaneSandbox {
        let roots = roots::current_with(repo_root);
        let review_path = own_files.first().map(PathBuf::as_path);
        let scratch = scratch_dir(&roots, run_dir, review_path);
        let mut skip: Vec<PathBuf> = own_files.iter().map(|p| roots::resolved(p)).collect();
        skip.push(roots::resolved(&scratch));
        let plan_root = roots::resolved(repo_root);
        let detect_roots: Vec<(PathBuf, String)> = roots
            .repository
            .iter()
            .map(|root| {
                let label = if *root == plan_root {
                    String::new()
                } else {
                    format!("{}/", root.display())
                };
                (root.clone(), label)
            })
            .collect();
        let detecting = |effective| LaneSandbox {
            confinement: Confinement::default(),
            effective,
            detect_roots: detect_roots.clone(),
            skip: skip.clone(),
            scratch: None,
        };
        if posture == Posture::WritesRepository && allowed_writes {
            return detecting(Effective::WritesAllowed);
        }
        match mode {
            SandboxMode::Off => LaneSandbox::off(),
            SandboxMode::Detect => detecting(Effective::Detected("chosen".to_owned())),
            SandboxMode::Enforce => {
                let proof =
                    if proof == ViewProof::AtSpawn && watchdog::is_enabled() && provable_at_spawn()
                    {
                        ViewProof::AtSpawn
                    } else {
                        ViewProof::Probed
                    };
                let effective = match proof {
                    ViewProof::AtSpawn => Effective::Viewed,
                    ViewProof::Probed => enforcement().effective,
                };
                let mechanism = match &effective {
                    Effective::Viewed => Mechanism::View,
                    Effective::Enforced(_) => Mechanism::Landlock,
                    _ => return detecting(effective),
                };
                let mut sandbox = detecting(effective);
                if mechanism == Mechanism::View {
                    // The kernel refuses every change under the roots: nothing to compare.
                    sandbox.detect_roots.clear();
                }
                sandbox.scratch = Some(scratch.clone());
                sandbox.confinement = Confinement {
                    mechanism,
                    read_only: lane_roots(&roots, run_dir),
                    writable: own_files.to_vec(),
                    tmpdir: Some(scratch),
                    proof,
                };
                if mechanism == Mechanism::Landlock {
                    landlock::warm(&sandbox.confinement.read_only);
                }
                sandbox
            }
        }
    }

    /// Whether the lane was left to prove the read-only view at its spawn and the probe then
    /// refused the view: its program never started (a spawn under the view cannot start one
    /// unproven), and the lane must be decided again ([`ViewProof::Probed`] now gives the
    /// fallback, whose detection starts before the lane).
    pub fn refused_at_spawn(&self) -> bool {
        self.confinement.proof == ViewProof::AtSpawn && refused_after_spawn()
    }

    /// Takes the "before" walk when detection runs (through the review's session in a
    /// review, [`Session`]).
    pub fn before(&self) -> Option<Before> {
        if self.detect_roots.is_empty() {
            return None;
        }
        Some(match Session::current() {
            Some(session) => {
                let before = session.before_lane(&self.detect_roots);
                Before::Review(session, before)
            }
            None => Before::Own(self.snapshots()),
        })
    }

    /// One snapshot per repository root, leaving out the lane's own files and scratch.
    fn snapshots(&self) -> Vec<Snapshot> {
        let skip = Skip {
            exact: self.skip.clone(),
            prefixed: Vec::new(),
        };
        let bounds = Bounds::from_env();
        self.detect_roots
            .iter()
            .map(|(root, label)| Snapshot::take(root, &skip, label, bounds))
            .collect()
    }

    /// Removes the scratch directory, if one was made (a failure is only a leftover, never a
    /// reason to fail the run).
    pub fn clean_up(&self) {
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// The changes since `before` (none when detection does not run, nothing changed, or the
    /// review compares once at its end).
    pub fn after(&self, before: Option<Before>) -> Comparison {
        match before {
            Some(Before::Own(before)) => super::detect::changes_of(&before, &self.snapshots()),
            Some(Before::Review(session, before)) => session.after_lane(&self.detect_roots, before),
            None => Comparison::default(),
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
            let err = run_mode(&bad, None).unwrap_err().to_string();
            assert!(err.contains("review.sandbox"), "{err}");
        }
    }

    #[test]
    fn modes_decide_confinement_and_detection() {
        let (repo, run) = (Path::new("/repo"), Path::new("/tmp/run"));
        let decide = |mode, posture, allowed| {
            LaneSandbox::decide(mode, posture, allowed, repo, run, &[], ViewProof::Probed)
        };
        let off = decide(SandboxMode::Off, Posture::ReadOnly, false);
        assert_eq!(off.effective, Effective::Off);
        assert_eq!(off.confinement, Confinement::default());
        assert!(off.detect_roots.is_empty());

        let detect = decide(SandboxMode::Detect, Posture::ReadOnly, false);
        assert_eq!(detect.confinement, Confinement::default());
        assert_eq!(
            detect.detect_roots,
            vec![(repo.to_path_buf(), String::new())]
        );

        // Unit-test binaries have no watchdog: enforce degrades to detect and says why.
        let enforce = decide(SandboxMode::Enforce, Posture::ReadOnly, false);
        assert!(matches!(enforce.effective, Effective::Detected(_)));
        assert_eq!(enforce.confinement, Confinement::default());
        assert_eq!(
            enforce.detect_roots,
            vec![(repo.to_path_buf(), String::new())]
        );

        let writes = decide(SandboxMode::Enforce, Posture::WritesRepository, true);
        assert_eq!(writes.effective, Effective::WritesAllowed);
        assert_eq!(writes.confinement, Confinement::default());
        assert!(!writes.detect_roots.is_empty());
    }
}
