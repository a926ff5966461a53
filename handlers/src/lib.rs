//! The closed registry of gsd-lane's first-party handlers.
//!
//! This file is the one place a handler is registered: one `<module>::<Type>` line in the
//! [`register_handlers!`] list below (kept in alphabetical order of name) declares the module
//! and lists its unit struct in [`HANDLERS`]. A name that is not in the list fails closed: the
//! lane is unavailable with `unknown_handler`, and nothing else is affected.

use std::fmt;

use gsd_lane_sdk::{Handler, HandlerName};

/// Large JSON bodies read without a copy per layer (the OpenAI-compatible answer).
mod json_text;

/// Declares each handler's (private) module and lists its unit struct in [`HANDLERS`], so a
/// handler is registered by one line.
macro_rules! register_handlers {
    ($($module:ident :: $handler:ident),+ $(,)?) => {
        $(mod $module;)+

        /// Every handler this build implements, in alphabetical order of name.
        pub static HANDLERS: &[&dyn Handler] = &[$(&$module::$handler),+];
    };
}

register_handlers! {
    antigravity::Antigravity,
    kimi_code::KimiCode,
    openai_compatible::OpenAiCompatible,
    opencode::Opencode,
}

/// A handler name this build does not implement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownHandler {
    /// The name asked for.
    pub name: String,
    /// The names this build knows.
    pub known: Vec<&'static str>,
}

impl fmt::Display for UnknownHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "handler \"{}\" is not implemented by this build (known: {})",
            self.name,
            self.known.join(", ")
        )
    }
}

impl std::error::Error for UnknownHandler {}

/// The registered names, in [`HANDLERS`] order: the closed set a descriptor's
/// `reviewer.handler` may use (validation, the JSON Schema and `list` read it here).
pub fn names() -> Vec<HandlerName> {
    names_in(HANDLERS)
}

/// The registered name written as `text` (exact, case-sensitive), or `None`.
pub fn name(text: &str) -> Option<HandlerName> {
    HandlerName::find(names(), text)
}

/// Finds the handler registered under `name`.
///
/// # Errors
///
/// [`UnknownHandler`] when `name` is not a registered handler's name.
pub fn lookup(name: &str) -> Result<&'static dyn Handler, UnknownHandler> {
    lookup_in(HANDLERS, name)
}

/// The names of the handlers in `set`, in order (a host that runs with a set built the way
/// [`HANDLERS`] is, such as a test registering one more handler).
pub fn names_in(set: &[&'static dyn Handler]) -> Vec<HandlerName> {
    set.iter().map(|handler| handler.name()).collect()
}

/// Finds the handler of `set` registered under `name`.
///
/// # Errors
///
/// [`UnknownHandler`] when no handler of `set` has that name.
pub fn lookup_in(
    set: &[&'static dyn Handler],
    name: &str,
) -> Result<&'static dyn Handler, UnknownHandler> {
    set.iter()
        .copied()
        .find(|handler| handler.name().as_str() == name)
        .ok_or_else(|| UnknownHandler {
            name: name.to_owned(),
            known: set.iter().map(|h| h.name().as_str()).collect(),
        })
}

/// The handler internals that code outside this crate names; everything else is reached only
/// through [`HANDLERS`] and [`lookup`], so rustc reports what no handler uses. Each module
/// mirrors the handler module of the same name.
pub mod api {
    /// The `antigravity` handler.
    pub mod antigravity {
        /// The `antigravity_readers` fuzz target drives the cache, transcript and log readers.
        pub use crate::antigravity::{
            conversation_for, count_lines, is_blind, log_hint, stamp, transcript_review,
        };
    }

    /// The `openai-compatible` handler.
    pub mod openai_compatible {
        /// The `openai_response` fuzz target drives the response readers.
        pub use crate::openai_compatible::{first_model_id, read_response};
    }

    /// The `opencode` handler.
    pub mod opencode {
        /// `handlers/modules/opencode-module` exports the handler as a compiled module; the
        /// `opencode_stream` fuzz target drives the stream reader.
        pub use crate::opencode::{reconstruct, Opencode};
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_sorted_and_resolvable() {
        let names: Vec<&str> = HANDLERS.iter().map(|h| h.name().as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            names, sorted,
            "HANDLERS must be unique and in alphabetical order"
        );
        for handler in HANDLERS {
            assert!(handler.name().is_well_formed(), "{}", handler.name());
            assert_eq!(name(handler.name().as_str()), Some(handler.name()));
            let found = lookup(handler.name().as_str()).expect("registered name resolves");
            assert_eq!(found.name(), handler.name());
            assert!(!found.describe().is_empty());
            assert_eq!(found.sdk_version(), gsd_lane_sdk::SDK_VERSION);
        }
    }

    #[test]
    fn unknown_names_fail_closed() {
        for name in ["acme", "../evil", "Antigravity", "", "opencode "] {
            let err = lookup(name).err().expect("unknown name is refused");
            assert_eq!(err.name, name);
            assert_eq!(err.known.len(), HANDLERS.len());
        }
    }
}
