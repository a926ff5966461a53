//! Where things are: the project root, the GSD home and the overlay directories.

use std::path::{Path, PathBuf};

/// How far up the project-root search walks (manifest.md §6.1).
const MAX_LEVELS: usize = 10;

/// The environment values gsd-lane reads, gathered once by the binary.
#[derive(Debug, Clone, Default)]
pub struct HostEnv {
    /// The working directory.
    pub cwd: PathBuf,
    /// The user's home directory.
    pub home: Option<PathBuf>,
    /// `GSD_HOME` when set and non-empty.
    pub gsd_home: Option<PathBuf>,
    /// `GSD_WORKSTREAM` when set and non-empty.
    pub workstream: Option<String>,
    /// `PATH`.
    pub path: Option<std::ffi::OsString>,
    /// Environment variables that identify the agent driving a review (self-skip) and the
    /// GSD project name, when set and non-empty: `ANTIGRAVITY_AGENT`, `CURSOR_SESSION_ID`,
    /// `CLAUDE_CODE_ENTRYPOINT`, `GSD_PROJECT`.
    pub agent_markers: AgentMarkers,
    /// `NO_COLOR` is set and non-empty (no-color.org).
    pub no_color: bool,
}

/// The agent-identifying environment variables (review-workflow.md §6).
#[derive(Debug, Clone, Default)]
pub struct AgentMarkers {
    /// `ANTIGRAVITY_AGENT`.
    pub antigravity_agent: Option<String>,
    /// `CURSOR_SESSION_ID`.
    pub cursor_session_id: Option<String>,
    /// `CLAUDE_CODE_ENTRYPOINT`.
    pub claude_code_entrypoint: Option<String>,
    /// `GSD_PROJECT`.
    pub gsd_project: Option<String>,
}

impl HostEnv {
    /// Reads the process environment.
    pub fn from_process() -> HostEnv {
        let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        let text = |name: &str| non_empty(name).and_then(|value| value.into_string().ok());
        HostEnv {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            home: non_empty("HOME").map(PathBuf::from),
            gsd_home: non_empty("GSD_HOME").map(PathBuf::from),
            workstream: non_empty("GSD_WORKSTREAM").and_then(|v| v.into_string().ok()),
            path: std::env::var_os("PATH"),
            agent_markers: AgentMarkers {
                antigravity_agent: text("ANTIGRAVITY_AGENT"),
                cursor_session_id: text("CURSOR_SESSION_ID"),
                claude_code_entrypoint: text("CLAUDE_CODE_ENTRYPOINT"),
                gsd_project: text("GSD_PROJECT"),
            },
            no_color: non_empty("NO_COLOR").is_some(),
        }
    }

    /// `GSD_HOME`, else the home directory.
    pub fn gsd_home(&self) -> Option<PathBuf> {
        self.gsd_home.clone().or_else(|| self.home.clone())
    }

    /// The global overlay directory `<GSD_HOME>/.gsd/capabilities`.
    pub fn global_capabilities(&self) -> Option<PathBuf> {
        self.gsd_home()
            .map(|home| home.join(".gsd").join("capabilities"))
    }
}

/// Finds the project root: the nearest directory holding `.planning/` (at most ten levels up,
/// stopping before the home directory), else the git top level, else `start`.
pub fn find_project_root(start: &Path, home: Option<&Path>) -> PathBuf {
    let below_home = |dir: &Path| home.is_none_or(|home| dir != home);
    let planning = start
        .ancestors()
        .take(MAX_LEVELS + 1)
        .take_while(|dir| below_home(dir))
        .find(|dir| dir.join(".planning").is_dir());
    if let Some(dir) = planning {
        return dir.to_path_buf();
    }
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(start)
        .to_path_buf()
}

/// The project overlay directory `<root>/.gsd/capabilities`.
pub fn project_capabilities(root: &Path) -> PathBuf {
    root.join(".gsd").join("capabilities")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planning_wins_over_git_and_stops_at_home() {
        let dir = tempfile::tempdir().expect("tempdir");
        let top = dir.path();
        std::fs::create_dir_all(top.join("repo/.git")).expect("git");
        std::fs::create_dir_all(top.join("repo/proj/.planning")).expect("planning");
        std::fs::create_dir_all(top.join("repo/proj/src/deep")).expect("deep");
        let deep = top.join("repo/proj/src/deep");
        assert_eq!(find_project_root(&deep, None), top.join("repo/proj"));
        assert_eq!(find_project_root(&top.join("repo"), None), top.join("repo"));
        // A .planning at the home directory itself is not a project root.
        std::fs::create_dir_all(top.join("home/.planning")).expect("home planning");
        std::fs::create_dir_all(top.join("home/work")).expect("work");
        let home = top.join("home");
        assert_eq!(
            find_project_root(&home.join("work"), Some(&home)),
            home.join("work")
        );
    }
}
