//! Gemini CLI's folder-trust gate, known before the run (issue 10 point 2).
//!
//! Headless `gemini` (any run whose stdin or stdout is not a terminal, or with `-p`) refuses a
//! workspace it does not trust: it prints "Gemini CLI is not running in a trusted directory…"
//! and exits 55. That is a property of the tool, not of a manifest, so this first-party
//! readiness check applies to every lane whose program is `gemini`. It decides as gemini-cli
//! 0.61 does (`packages/cli/src/config/trustedFolders.ts`, `packages/core/src/utils/trust.ts`):
//!
//! 1. `security.folderTrust.enabled` (default `true`) from the system-defaults, user and system
//!    settings files (later wins; workspace settings never count for an untrusted folder);
//!    `false` → no gate.
//! 2. `GEMINI_RESTRICTED_MODE=true` or `GEMINI_CLI_TRUST_WORKSPACE=false` → untrusted;
//!    `GEMINI_CLI_TRUST_WORKSPACE=true` → trusted.
//! 3. The trusted-folders file (`$GEMINI_CLI_TRUSTED_FOLDERS_PATH`, else
//!    `<home>/.gemini/trustedFolders.json`, home = `$GEMINI_CLI_HOME` or `$HOME`): a JSON object
//!    (comments allowed) of path → `TRUST_FOLDER` | `TRUST_PARENT` (the path's parent) |
//!    `DO_NOT_TRUST`; the longest rule path containing the workspace wins; no rule → untrusted.
//!
//! gsd-lane never trusts a folder for the user (no `--skip-trust`: that would let gemini load the
//! repository's own `.gemini/` settings, which is what the gate exists to stop). Every file read
//! is opened without blocking, must be a regular file and is bounded (a lane can write the home
//! these files live in: a FIFO planted there must not hang every later review); a settings or
//! trusted-folders file that cannot be read that way, or a trusted-folders file gemini itself
//! would reject, blocks the lane with `probe_failed` naming the file.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use gsd_lane_sdk::LanePlan;
use serde_json::Value;

use crate::refusal::{Reason, Refusal};

/// The program name the gate belongs to.
pub const PROGRAM: &str = "gemini";

/// gemini's exit status for an untrusted workspace (`FatalUntrustedWorkspaceError`).
pub const UNTRUSTED_EXIT: i32 = 55;

/// The start of gemini's own message for an untrusted workspace.
pub const UNTRUSTED_MESSAGE: &str = "Gemini CLI is not running in a trusted directory";

/// Largest settings or trusted-folders file read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// What the check needs from the world: the child's environment, the home directory and the
/// workspace gemini will see (its working directory).
pub struct Inputs<'a> {
    /// Looks up a variable of the environment the child will get.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Home directory when the child's environment has no `HOME`.
    pub home: Option<&'a Path>,
    /// The child's working directory.
    pub workspace: &'a Path,
}

/// True when the gate applies: the plan spawns `gemini`.
pub fn applies(plan: &LanePlan) -> bool {
    plan.spawn().is_some_and(|spawn| {
        Path::new(&spawn.binary)
            .file_name()
            .is_some_and(|name| name == PROGRAM)
    })
}

/// The fix, said the same way before and after a run.
pub fn fix_hint(workspace: &Path) -> String {
    format!(
        "to fix: run `gemini` once in {} and trust the folder when it asks, or, for a repository \
         you trust, set GEMINI_CLI_TRUST_WORKSPACE=true for the review; gsd-lane never trusts a \
         folder for you",
        workspace.display()
    )
}

/// True when a finished gemini run was stopped by the gate (exit 55 and gemini's message).
pub fn refused_after_the_fact(exit_code: Option<i32>, stderr: &str) -> bool {
    exit_code == Some(UNTRUSTED_EXIT) && stderr.contains(UNTRUSTED_MESSAGE)
}

/// Decides whether gemini will run in `inputs.workspace`; `Ok` says why it will.
///
/// # Errors
///
/// `untrusted_workspace` with the exact fix, or `probe_failed` when the trusted-folders file
/// cannot be used (gemini itself stops on it).
pub fn check(inputs: &Inputs<'_>) -> Result<String, Refusal> {
    let env = inputs.env;
    let home = env("GEMINI_CLI_HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| env("HOME").filter(|h| !h.is_empty()))
        .map(PathBuf::from)
        .or_else(|| inputs.home.map(Path::to_path_buf));
    if !folder_trust_enabled(env, home.as_deref())? {
        return Ok("gemini folder trust is disabled (security.folderTrust.enabled)".to_owned());
    }
    let untrusted = |why: String| {
        Err(Refusal::new(
            Reason::UntrustedWorkspace,
            format!(
                "gemini will refuse to run: {why}; headless gemini exits {UNTRUSTED_EXIT} in a \
                 folder it does not trust; {}",
                fix_hint(inputs.workspace)
            ),
        ))
    };
    if env("GEMINI_RESTRICTED_MODE").as_deref() == Some("true") {
        return untrusted("GEMINI_RESTRICTED_MODE=true is set".to_owned());
    }
    match env("GEMINI_CLI_TRUST_WORKSPACE").as_deref() {
        Some("false") => return untrusted("GEMINI_CLI_TRUST_WORKSPACE=false is set".to_owned()),
        Some("true") => return Ok("GEMINI_CLI_TRUST_WORKSPACE=true".to_owned()),
        _ => {}
    }
    let Some(file) = trusted_folders_path(env, home.as_deref()) else {
        return untrusted("no home directory, so no trusted-folders file".to_owned());
    };
    let rules = match read_bounded(&file) {
        Ok(None) => {
            return untrusted(format!(
                "{} does not exist, so no folder is trusted",
                file.display()
            ))
        }
        Ok(Some(text)) => parse_rules(&text).map_err(|why| {
            Refusal::new(
                Reason::ProbeFailed,
                format!(
                    "gemini's trusted-folders file {} cannot be used ({why}); gemini stops on it \
                     too; fix or remove the file",
                    shown(&file)
                ),
            )
        })?,
        Err(why) => {
            return Err(Refusal::new(
                Reason::ProbeFailed,
                format!(
                    "gemini's trusted-folders file {} cannot be read ({why}); fix or remove the \
                     file",
                    shown(&file)
                ),
            ))
        }
    };
    match decide(&rules, inputs.workspace) {
        Some((rule, Level::DoNotTrust)) => {
            untrusted(format!("{} marks {rule} DO_NOT_TRUST", file.display()))
        }
        Some((rule, level)) => Ok(format!(
            "gemini trusts {} ({} {rule} in {})",
            inputs.workspace.display(),
            level.as_str(),
            file.display()
        )),
        None => untrusted(format!(
            "{} has no rule for {}",
            file.display(),
            inputs.workspace.display()
        )),
    }
}

/// A trust level of the trusted-folders file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    TrustFolder,
    TrustParent,
    DoNotTrust,
}

impl Level {
    fn parse(text: &str) -> Option<Level> {
        match text {
            "TRUST_FOLDER" => Some(Level::TrustFolder),
            "TRUST_PARENT" => Some(Level::TrustParent),
            "DO_NOT_TRUST" => Some(Level::DoNotTrust),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Level::TrustFolder => "TRUST_FOLDER",
            Level::TrustParent => "TRUST_PARENT",
            Level::DoNotTrust => "DO_NOT_TRUST",
        }
    }
}

/// `security.folderTrust.enabled` over system defaults < user < system settings; `true` unless
/// a file says `false` last. A settings file that does not parse keeps the gate on (the safe
/// side: the folder must then be trusted by rule).
///
/// # Errors
///
/// `probe_failed` naming a settings file that exists but cannot be read as a bounded regular
/// file (a FIFO, a device, a directory, an oversized file, an I/O error): the check never
/// blocks on one, and never guesses past one.
fn folder_trust_enabled(
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
) -> Result<bool, Refusal> {
    let system = env("GEMINI_CLI_SYSTEM_SETTINGS_PATH").map_or_else(
        || PathBuf::from("/etc/gemini-cli/settings.json"),
        PathBuf::from,
    );
    let defaults = env("GEMINI_CLI_SYSTEM_DEFAULTS_PATH").map_or_else(
        || system.with_file_name("system-defaults.json"),
        PathBuf::from,
    );
    let user = home.map(|h| h.join(".gemini").join("settings.json"));
    let mut enabled = true;
    for path in [Some(defaults), user, Some(system)].into_iter().flatten() {
        let text = read_bounded(&path).map_err(|why| {
            Refusal::new(
                Reason::ProbeFailed,
                format!(
                    "gemini's settings file {} cannot be read ({why}); gemini reads it too; fix \
                     or remove the file",
                    shown(&path)
                ),
            )
        })?;
        let setting = text
            .and_then(|text| serde_json::from_str::<Value>(&strip_comments(&text)).ok())
            .and_then(|v| v.pointer("/security/folderTrust/enabled").cloned());
        if let Some(Value::Bool(value)) = setting {
            enabled = value;
        }
    }
    Ok(enabled)
}

/// A path as shown in a message: controls and bidi characters escaped.
fn shown(path: &Path) -> String {
    crate::output::escape_text(&path.display().to_string())
}

/// Where gemini reads its trusted folders.
fn trusted_folders_path(
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
) -> Option<PathBuf> {
    if let Some(path) = env("GEMINI_CLI_TRUSTED_FOLDERS_PATH").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let home = home?;
    let dir = if env("SANDBOX").as_deref() == Some("sandbox-exec") {
        home.join(".cache").join(".gemini")
    } else {
        home.join(".gemini")
    };
    Some(dir.join("trustedFolders.json"))
}

/// Why one of gemini's own files cannot be read or used (the sentence around it names the file
/// and the fix).
#[derive(Debug)]
enum FileError {
    /// Opening, inspecting or reading it failed.
    Io(std::io::Error),
    /// It is a directory.
    Directory,
    /// It is a FIFO, socket or device.
    Special,
    /// It is larger than [`MAX_FILE_BYTES`].
    TooLarge,
    /// It is not UTF-8.
    NotUtf8,
    /// It is not JSON (the parser's error).
    NotJson(serde_json::Error),
    /// Its root is not a JSON object.
    NotObject,
    /// A rule's trust level is not one gemini knows.
    Level {
        /// The level found, as compact JSON.
        level: String,
        /// The rule's folder, as written.
        path: String,
    },
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Io(err) => write!(f, "{err}"),
            FileError::Directory => f.write_str("a directory, not a file"),
            FileError::Special => {
                f.write_str("not a regular file (a FIFO, socket or device is never read)")
            }
            FileError::TooLarge => write!(f, "larger than {MAX_FILE_BYTES} bytes"),
            FileError::NotUtf8 => f.write_str("not UTF-8"),
            FileError::NotJson(err) => write!(f, "not JSON: {err}"),
            FileError::NotObject => f.write_str("not a JSON object"),
            FileError::Level { level, path } => write!(
                f,
                "invalid trust level {level} for {path:?}; expected TRUST_FOLDER, TRUST_PARENT \
                 or DO_NOT_TRUST"
            ),
        }
    }
}

impl std::error::Error for FileError {}

/// Reads a file of at most [`MAX_FILE_BYTES`]; `Ok(None)` when it does not exist.
///
/// These are the user's own gemini files, so a symbolic link is followed (dotfile managers
/// link them), but the open never blocks (`O_NONBLOCK`: a FIFO planted in a home a lane could
/// write opens at once) and the opened descriptor must be a regular file before a byte is read.
fn read_bounded(path: &Path) -> Result<Option<String>, FileError> {
    let file = match crate::fsutil::open_nonblocking(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(FileError::Io(err)),
    };
    let meta = file.metadata().map_err(FileError::Io)?;
    if !meta.is_file() {
        return Err(if meta.is_dir() {
            FileError::Directory
        } else {
            FileError::Special
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(FileError::TooLarge);
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(FileError::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(FileError::TooLarge);
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| FileError::NotUtf8)
}

/// The rules of a trusted-folders file, as gemini validates them.
fn parse_rules(text: &str) -> Result<Vec<(String, Level)>, FileError> {
    let value: Value = serde_json::from_str(&strip_comments(text)).map_err(FileError::NotJson)?;
    let Value::Object(map) = value else {
        return Err(FileError::NotObject);
    };
    map.into_iter()
        .map(|(path, level)| {
            level
                .as_str()
                .and_then(Level::parse)
                .map(|level| (path.clone(), level))
                .ok_or_else(|| FileError::Level {
                    level: level.to_string(),
                    path: path.clone(),
                })
        })
        .collect()
}

/// The longest rule (by its written path) whose folder contains `workspace`.
fn decide(rules: &[(String, Level)], workspace: &Path) -> Option<(String, Level)> {
    let location = resolve(workspace);
    rules
        .iter()
        .filter(|(rule, level)| {
            let path = Path::new(rule);
            let folder = match level {
                Level::TrustParent => path.parent().unwrap_or(path),
                Level::TrustFolder | Level::DoNotTrust => path,
            };
            location.starts_with(resolve(folder))
        })
        .max_by_key(|(rule, _)| rule.len())
        .cloned()
}

/// The real path when it exists, else the lexically normalized absolute path.
fn resolve(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// JSON with `//` and `/* */` comments (outside strings) turned into plain JSON.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for next in chars.by_ref() {
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<(String, Level)> {
        parse_rules(text).expect("valid rules")
    }

    #[test]
    fn longest_containing_rule_wins_and_trust_parent_means_the_parent() {
        let ws = Path::new("/nonexistent-gsd/a/b/repo");
        let set = rules(
            r#"{"/nonexistent-gsd/a": "TRUST_FOLDER", "/nonexistent-gsd/a/b/repo": "DO_NOT_TRUST"}"#,
        );
        assert_eq!(decide(&set, ws).map(|r| r.1), Some(Level::DoNotTrust));
        let set = rules(r#"{"/nonexistent-gsd/a/b/x": "TRUST_PARENT"}"#);
        assert_eq!(decide(&set, ws).map(|r| r.1), Some(Level::TrustParent));
        let set = rules(r#"{"/nonexistent-gsd/a/b/rep": "TRUST_FOLDER"}"#);
        assert_eq!(
            decide(&set, ws),
            None,
            "a name prefix is not a parent folder"
        );
        assert_eq!(decide(&[], ws), None);
    }

    #[test]
    fn comments_are_allowed_and_bad_levels_are_refused() {
        let set = rules(
            "{\n // mine\n \"/x\": /* yes */ \"TRUST_FOLDER\", \"/y//z\": \"DO_NOT_TRUST\"\n}",
        );
        assert_eq!(set.len(), 2);
        assert!(parse_rules(r#"{"/x": "BOGUS"}"#).is_err());
        assert!(parse_rules("[]").is_err());
        assert!(parse_rules("{").is_err());
    }

    /// Runs [`check`] for a workspace under `home` with `vars` as the whole environment, on a
    /// thread: a check that blocks fails the test after 10 s instead of hanging it.
    fn check_within_10s(home: &Path, vars: &[(&str, PathBuf)]) -> Result<String, Refusal> {
        let home = home.to_path_buf();
        let vars: Vec<(String, PathBuf)> = vars
            .iter()
            .map(|(name, path)| ((*name).to_owned(), path.clone()))
            .collect();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let env = |name: &str| {
                vars.iter()
                    .find(|(key, _)| key == name)
                    .map(|(_, path)| path.display().to_string())
            };
            let workspace = home.join("repo");
            let inputs = Inputs {
                env: &env,
                home: Some(&home),
                workspace: &workspace,
            };
            let _ = send.send(check(&inputs));
        });
        receive
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the readiness check blocked on a planted FIFO")
    }

    fn mkfifo(path: &Path) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("mkfifo");
        assert!(made.success(), "mkfifo {}", path.display());
    }

    #[test]
    fn a_fifo_at_any_file_the_check_reads_fails_promptly_and_is_named() {
        let root = tempfile::tempdir().expect("tempdir");
        let home = root.path().join("home");
        let gemini = home.join(".gemini");
        let system = root.path().join("etc").join("settings.json");
        let defaults = root.path().join("etc").join("system-defaults.json");
        let custom = root.path().join("elsewhere").join("trusted.json");
        let base = [
            ("HOME", home.clone()),
            ("GEMINI_CLI_SYSTEM_SETTINGS_PATH", system.clone()),
            ("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", defaults.clone()),
        ];
        let with_custom: Vec<(&str, PathBuf)> = base
            .iter()
            .cloned()
            .chain([("GEMINI_CLI_TRUSTED_FOLDERS_PATH", custom.clone())])
            .collect();
        let cases: [(&Path, &[(&str, PathBuf)]); 5] = [
            (&gemini.join("trustedFolders.json"), &base),
            (&gemini.join("settings.json"), &base),
            (&system, &base),
            (&defaults, &base),
            (&custom, &with_custom),
        ];
        for (fifo, vars) in cases {
            mkfifo(fifo);
            let refusal = check_within_10s(&home, vars).expect_err("refused");
            assert_eq!(refusal.reason, Reason::ProbeFailed, "{}", refusal.detail);
            assert!(
                refusal.detail.contains(&fifo.display().to_string())
                    && refusal.detail.contains("not a regular file"),
                "{}",
                refusal.detail
            );
            std::fs::remove_file(fifo).expect("remove fifo");
        }
        // A link to a FIFO is followed (links are legitimate here) and refused the same way.
        let fifo = root.path().join("fifo");
        mkfifo(&fifo);
        std::os::unix::fs::symlink(&fifo, gemini.join("trustedFolders.json")).expect("link");
        let refusal = check_within_10s(&home, &base).expect_err("refused");
        assert_eq!(refusal.reason, Reason::ProbeFailed, "{}", refusal.detail);
        // With the FIFO gone and a real file, the decision is made again.
        std::fs::remove_file(gemini.join("trustedFolders.json")).expect("unlink");
        let rules = json_rules(&home.join("repo"));
        std::fs::write(gemini.join("trustedFolders.json"), rules).expect("rules");
        assert!(check_within_10s(&home, &base).is_ok());
    }

    fn json_rules(folder: &Path) -> String {
        serde_json::json!({ folder.display().to_string(): "TRUST_FOLDER" }).to_string()
    }

    #[test]
    fn the_gate_is_for_the_gemini_program_only() {
        assert!(refused_after_the_fact(
            Some(55),
            "\u{1b}[31mGemini CLI is not running in a trusted directory. To proceed…"
        ));
        assert!(!refused_after_the_fact(Some(1), UNTRUSTED_MESSAGE));
        assert!(!refused_after_the_fact(Some(55), "other"));
    }
}
