//! The name a handler is registered under.

use std::fmt;
use std::sync::{Mutex, OnceLock, PoisonError};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The name a handler is registered under, exactly as descriptors write it in
/// `reviewer.handler` (lower-case kebab, e.g. `opencode`).
///
/// A handler declares its own name with [`HandlerName::new`]. Which names a descriptor may
/// use is not listed here: the closed set is the handler registry of the `gsd-lane-handlers`
/// crate (its `HANDLERS` list), and the host parses descriptor text only against that list
/// (validation, the JSON Schema, planning and `list` all read it). A name outside the
/// registry is a validation error.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HandlerName(&'static str);

impl HandlerName {
    /// Declares a handler's name (a handler's [`Handler::name`] returns its constant).
    pub const fn new(name: &'static str) -> HandlerName {
        HandlerName(name)
    }

    /// Returns the name exactly as written in descriptors.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// True for `^[a-z][a-z0-9-]*$`, the grammar every registered name follows.
    pub fn is_well_formed(self) -> bool {
        let mut chars = self.0.chars();
        chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    }

    /// Finds `text` among `known` (exact, case-sensitive): the one way descriptor text becomes
    /// a name, so only a registered handler's name can come out.
    pub fn find(known: impl IntoIterator<Item = HandlerName>, text: &str) -> Option<HandlerName> {
        known.into_iter().find(|name| name.as_str() == text)
    }
}

impl fmt::Debug for HandlerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HandlerName({:?})", self.0)
    }
}

impl fmt::Display for HandlerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for HandlerName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for HandlerName {
    /// Reads a name from a plan the host serialized (a compiled module's request); each distinct
    /// text is kept once for the life of the process.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(HandlerName(intern(text)))
    }
}

/// The `'static` copy of `text`, shared by every name read with the same text.
fn intern(text: String) -> &'static str {
    static SEEN: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = seen.iter().find(|known| **known == text) {
        return known;
    }
    let kept: &'static str = Box::leak(text.into_boxed_str());
    seen.push(kept);
    kept
}
