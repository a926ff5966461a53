//! Programs a capability ships in its own folder (manifest.md §3.6, trust.md §7.5).
//!
//! A lane's `invoke.binary`, `probe.binary` or a `requiresBinaries` entry may be written
//! `./<path>`: a program inside the capability folder (`./bin/gsd-plan-stats`). Such a path is
//! never looked up in the working directory (the repository under review). The rule, by scope:
//!
//! - **global** (`$GSD_HOME/.gsd/capabilities/<id>/`, written by `gsd-lane install --global`):
//!   the path is resolved against the installed folder when the registry loads it, so planning,
//!   `list`, `doctor`, `disclose` and the disclosure signature all see the absolute path, and the
//!   run path's policy check (trust.md §7.5) holds the resolved file inside that folder.
//! - **project** (`<project>/.gsd/capabilities/<id>/`, part of the repository under review): never
//!   run. The lane is skipped at load (`LD-PROGRAM-IN-REPOSITORY`), refused at install and
//!   approval, whatever consent says: nothing is ever run from the repository under review.
//! - **first-party**: compiled in; none ships a program.
//!
//! Only this module knows the `./` form; everything after the registry sees an absolute path.

use std::path::Path;

use serde_json::Value;

/// The path inside the capability folder that `binary` names, when it is written `./<path>`
/// with only normal segments (no `.`, `..` or empty segment, no `\`); `None` for anything else
/// (a bare command name, an absolute path, or a relative path of another shape, which the
/// trust policy refuses).
pub fn bundle_relative(binary: &str) -> Option<&str> {
    let rest = binary.strip_prefix("./")?;
    let clean = !rest.is_empty()
        && !rest.contains('\\')
        && rest
            .split('/')
            .all(|segment| !segment.is_empty() && segment != "." && segment != "..");
    clean.then_some(rest)
}

/// The JSON pointers of every program a manifest's lane names: the invoke binary, the probe
/// binary and each `requiresBinaries` entry.
fn program_pointers(manifest: &Value) -> Vec<String> {
    let mut pointers = vec![
        "/reviewer/invoke/binary".to_owned(),
        "/reviewer/probe/binary".to_owned(),
    ];
    let required = manifest
        .pointer("/reviewer/requiresBinaries")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    pointers.extend((0..required).map(|index| format!("/reviewer/requiresBinaries/{index}")));
    pointers
}

/// The bundle-relative programs `manifest` names, as written (`./bin/x`).
pub fn shipped_programs(manifest: &Value) -> Vec<String> {
    program_pointers(manifest)
        .iter()
        .filter_map(|pointer| manifest.pointer(pointer).and_then(Value::as_str))
        .filter(|binary| bundle_relative(binary).is_some())
        .map(str::to_owned)
        .collect()
}

/// Rewrites every bundle-relative program of `manifest` to its absolute path inside `folder`
/// (the capability folder, canonicalized when it can be, so the path does not depend on the
/// working directory). Everything else is left as written.
pub fn resolve_shipped(manifest: &mut Value, folder: &Path) {
    let base = canonical_folder(folder);
    for pointer in program_pointers(manifest) {
        let Some(slot) = manifest.pointer_mut(&pointer) else {
            continue;
        };
        let resolved = slot
            .as_str()
            .and_then(bundle_relative)
            .map(|rest| base.join(rest).display().to_string());
        if let Some(resolved) = resolved {
            *slot = Value::String(resolved);
        }
    }
}

/// `folder` with symbolic links resolved; when it does not exist yet (an install's
/// destination), its parent resolved and its name joined back; as given when neither resolves.
fn canonical_folder(folder: &Path) -> std::path::PathBuf {
    if let Ok(resolved) = std::fs::canonicalize(folder) {
        return resolved;
    }
    match (folder.parent(), folder.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map_or_else(|_| folder.to_path_buf(), |parent| parent.join(name)),
        _ => folder.to_path_buf(),
    }
}

/// Why a project-scope capability that ships `programs` is not loaded, with the fix.
pub fn project_refusal(programs: &[String]) -> String {
    format!(
        "it runs a program from its own folder ({}), which lies in the repository under review: a project-scope lane never runs a program shipped in the repository, approved or not; install the capability globally (gsd-lane install <folder> --global) or name a command on PATH",
        programs
            .iter()
            .map(|p| crate::output::neutralize(p))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_clean_dot_slash_paths_are_bundle_relative() {
        assert_eq!(bundle_relative("./bin/x"), Some("bin/x"));
        assert_eq!(bundle_relative("./x"), Some("x"));
        for other in [
            "x",
            "bin/x",
            "/abs/x",
            "./",
            "./../x",
            "./bin/../x",
            "./bin//x",
            "./bin/./x",
            ".\\x",
            "./bin\\x",
            "../x",
            ".//x",
        ] {
            assert_eq!(bundle_relative(other), None, "{other}");
        }
    }

    #[test]
    fn resolution_rewrites_every_program_and_nothing_else() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical");
        let mut manifest = json!({"reviewer": {
            "invoke": {"binary": "./bin/x", "args": ["./bin/x"]},
            "probe": {"kind": "command-exists", "binary": "./bin/x"},
            "requiresBinaries": ["git", "./bin/helper", "../escape"]}});
        assert_eq!(shipped_programs(&manifest).len(), 3);
        resolve_shipped(&mut manifest, dir.path());
        let inside = base.join("bin/x").display().to_string();
        assert_eq!(manifest["reviewer"]["invoke"]["binary"], json!(inside));
        assert_eq!(manifest["reviewer"]["probe"]["binary"], json!(inside));
        assert_eq!(manifest["reviewer"]["invoke"]["args"], json!(["./bin/x"]));
        assert_eq!(
            manifest["reviewer"]["requiresBinaries"],
            json!([
                "git",
                base.join("bin/helper").display().to_string(),
                "../escape"
            ])
        );
        assert!(shipped_programs(&manifest).is_empty());
    }

    #[test]
    fn odd_manifests_are_left_alone() {
        for mut odd in [
            json!(null),
            json!({"reviewer": 3}),
            json!({"reviewer": {"invoke": {"binary": 7}, "requiresBinaries": "x"}}),
        ] {
            let before = odd.clone();
            resolve_shipped(&mut odd, Path::new("/nowhere"));
            assert_eq!(odd, before);
        }
    }
}
