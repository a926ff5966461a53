//! Environment policy: what environment a lane child starts with, and the `PATH` its program is
//! resolved against.

use std::ffi::OsString;

/// The environment a child starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEnv {
    /// The child inherits this process's whole environment (first-party lanes).
    Inherit,
    /// The environment is cleared and only these variables are set (third-party lanes,
    /// trust.md §7.9). `PATH` among them is also the `PATH` the program is resolved against.
    Minimal {
        /// Name and value of each variable the child gets.
        vars: Vec<(String, String)>,
    },
}

/// The minimal environment of trust.md §7.9, taken from this process's environment.
///
/// Kept: `PATH`, `HOME`, `USERPROFILE`, the locale (`LANG`, `LANGUAGE`, `LC_ALL` and every other
/// `LC_*`), the temp-dir variables (`TMPDIR`, `TMP`, `TEMP`), and on Windows the OS plumbing a
/// process needs to start at all (`SystemRoot`, `ComSpec`, `PATHEXT`). Everything else, notably
/// every credential, is dropped. Variables whose name or value is not valid Unicode are dropped.
/// Sorted by name. A disclosed, signature-bound allow-list (trust.md §7.9) is for the caller to
/// append.
pub fn minimal_env_from_current() -> ChildEnv {
    let mut vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(name, value)| {
            let name = name.into_string().ok()?;
            if !is_minimal_var(&name) {
                return None;
            }
            Some((name, value.into_string().ok()?))
        })
        .collect();
    vars.sort();
    ChildEnv::Minimal { vars }
}

/// True for the names [`minimal_env_from_current`] keeps.
pub(super) fn is_minimal_var(name: &str) -> bool {
    #[cfg(windows)]
    let upper = name.to_ascii_uppercase();
    #[cfg(windows)]
    let name = upper.as_str();
    let fixed = matches!(
        name,
        "PATH"
            | "HOME"
            | "USERPROFILE"
            | "LANG"
            | "LANGUAGE"
            | "LC_ALL"
            | "TMPDIR"
            | "TMP"
            | "TEMP"
    );
    let locale = name.strip_prefix("LC_").is_some_and(|rest| {
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
    });
    #[cfg(windows)]
    let fixed = fixed || matches!(name, "SYSTEMROOT" | "COMSPEC" | "PATHEXT");
    fixed || locale
}

/// The `PATH` the child will see, which is the one its program is resolved against.
pub(super) fn child_path_var(env: &ChildEnv) -> Option<OsString> {
    match env {
        ChildEnv::Inherit => std::env::var_os("PATH"),
        ChildEnv::Minimal { vars } => vars
            .iter()
            .rev() // the last assignment wins, as when the variables are applied in order
            .find(|(name, _)| {
                if cfg!(windows) {
                    name.eq_ignore_ascii_case("PATH")
                } else {
                    name == "PATH"
                }
            })
            .map(|(_, value)| OsString::from(value)),
    }
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn minimal_env_from_current_keeps_only_the_allow_list() {
        let ChildEnv::Minimal { vars } = minimal_env_from_current() else {
            panic!("not minimal");
        };
        for (name, _) in &vars {
            assert!(is_minimal_var(name), "{name}");
        }
        if let Ok(path) = std::env::var("PATH") {
            assert!(vars.contains(&("PATH".to_string(), path)));
        }
        for name in ["LC_MESSAGES", "TMPDIR", "HOME", "LANG"] {
            assert!(is_minimal_var(name));
        }
        for name in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "SECRET_TOKEN",
            "LC_",
            "LC_x",
            "path",
        ] {
            assert!(!is_minimal_var(name), "{name}");
        }
    }
}
