//! Lanes that exist but are not active: finding the one a command line named, and saying why
//! it is inactive, where it was declared and which command fixes it.
//!
//! Used wherever a slug or lane flag would otherwise be "unknown" (`review` lane flags and
//! `default_reviewers`, `run`, `invoke`), so the user sees the real reason instead.

use crate::manifest::diagnostic::Code;
use crate::output::neutralize;
use crate::registry::{Entry, Registry};

/// The last discovered, inactive entry declaring `slug` (an overlay wins over first-party,
/// as it would have had it loaded).
pub fn by_slug<'a>(registry: &'a Registry, slug: &str) -> Option<&'a Entry> {
    registry
        .entries
        .iter()
        .rev()
        .find(|entry| entry.skip.is_some() && entry.slug.as_deref() == Some(slug))
}

/// The last discovered, inactive entry declaring lane flag `flag`.
pub fn by_flag<'a>(registry: &'a Registry, flag: &str) -> Option<&'a Entry> {
    registry
        .entries
        .iter()
        .rev()
        .find(|entry| entry.skip.is_some() && entry.flags.iter().any(|f| f == flag))
}

/// The command (or edit) that makes `entry` load, by skip code.
pub fn fix(entry: &Entry) -> String {
    let path = neutralize(&entry.path.display().to_string());
    let id = neutralize(&entry.id);
    match entry.skip.as_ref().map(|skip| skip.code) {
        Some(Code::LdUnconsented) => format!("gsd-lane trust approve {id}"),
        Some(Code::LdEngines) => format!(
            "edit engines.gsd in {path} to accept this host's GSD version, or `gsd-lane install <folder>` a version that does"
        ),
        Some(Code::LdCross) => format!(
            "give {id} its own id, slug, flags and config keys in {path}, or `gsd-lane remove <the other capability>`; `gsd-lane validate {path}` shows the clash"
        ),
        Some(Code::LdPending) => format!(
            "finish or undo the pending install: `gsd-lane install <folder>` again, or `gsd-lane remove {id}`"
        ),
        Some(Code::LdProgramInRepository) => format!(
            "install it globally instead: `gsd-lane install <its folder> --global` (its program then runs from $GSD_HOME/.gsd/capabilities/{id}/), or make {path} name a command on PATH"
        ),
        Some(Code::LdReserved) => format!(
            "rename the folder of {path} (gsd-, gsd-core- and anthropic- are reserved) and its id with it"
        ),
        _ => format!("correct {path}; `gsd-lane validate {path}` lists every error"),
    }
}

/// One line: `lane X (scope, source file) is not active: reason; fix: command`.
pub fn explain(entry: &Entry) -> String {
    let reason = entry
        .skip
        .as_ref()
        .map_or_else(String::new, |skip| skip.reason.clone());
    format!(
        "lane {} ({} capability {}, {}) is not active: {}; fix: {}",
        neutralize(entry.slug.as_deref().unwrap_or(&entry.id)),
        entry.scope.as_str(),
        neutralize(&entry.id),
        neutralize(&entry.path.display().to_string()),
        neutralize(&reason),
        fix(entry)
    )
}

/// The closest active lane slug to `unknown` (compared with each slug and with its
/// capability id, so `acme-reviw` finds slug `acme` of `acme-review`), for "did you mean".
pub fn suggest_slug<'a>(registry: &'a Registry, unknown: &str) -> Option<&'a str> {
    let names = registry
        .lanes
        .iter()
        .flat_map(|lane| [lane.slug.as_str(), lane.capability_id.as_str()]);
    let hit = crate::suggest::suggest(unknown, names)?;
    registry
        .lanes
        .iter()
        .find(|lane| lane.slug == hit || lane.capability_id == hit)
        .map(|lane| lane.slug.as_str())
}
