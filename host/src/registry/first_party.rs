//! The twelve first-party lanes, compiled into the binary (the distribution is the pin).
//!
//! The manifests are read through `host/capabilities`, a symbolic link to the workspace's
//! `capabilities/`: the paths stay inside the crate, so `cargo package` (which follows the
//! link) ships them and the published crate builds on its own.

/// `(id, manifest text)` in descriptor order (manifest.md §6.6, §7a).
pub const LANES: [(&str, &str); 12] = [
    (
        "gemini",
        include_str!("../../capabilities/gemini/capability.json"),
    ),
    (
        "claude",
        include_str!("../../capabilities/claude/capability.json"),
    ),
    (
        "codex",
        include_str!("../../capabilities/codex/capability.json"),
    ),
    (
        "coderabbit",
        include_str!("../../capabilities/coderabbit/capability.json"),
    ),
    (
        "opencode",
        include_str!("../../capabilities/opencode/capability.json"),
    ),
    (
        "qwen",
        include_str!("../../capabilities/qwen/capability.json"),
    ),
    (
        "cursor",
        include_str!("../../capabilities/cursor/capability.json"),
    ),
    (
        "antigravity",
        include_str!("../../capabilities/antigravity/capability.json"),
    ),
    (
        "ollama",
        include_str!("../../capabilities/ollama/capability.json"),
    ),
    (
        "lm-studio",
        include_str!("../../capabilities/lm-studio/capability.json"),
    ),
    (
        "llama-cpp",
        include_str!("../../capabilities/llama-cpp/capability.json"),
    ),
    (
        "kimi-code",
        include_str!("../../capabilities/kimi-code/capability.json"),
    ),
];

/// The path a first-party manifest is reported under.
pub fn display_path(id: &str) -> String {
    format!("capabilities/{id}/capability.json")
}
