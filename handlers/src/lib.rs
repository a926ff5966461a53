//! The closed registry of gsd-lane's first-party handlers.
//!
//! This file is the one place a handler is registered: add its module below and its unit
//! struct to [`HANDLERS`] (kept in alphabetical order). A name that is not in the list fails
//! closed: the lane is unavailable with `unknown_handler`, and nothing else is affected.

pub mod openai_compatible;

use std::fmt;

use gsd_lane_sdk::{Handler, HandlerName};

/// Every handler this build implements, in alphabetical order of name.
pub static HANDLERS: &[&dyn Handler] = &[&openai_compatible::OpenAiCompatible];

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

/// Finds the handler registered under `name`.
///
/// # Errors
///
/// [`UnknownHandler`] when `name` is outside the closed set or not implemented by this build.
pub fn lookup(name: &str) -> Result<&'static dyn Handler, UnknownHandler> {
    HandlerName::parse(name)
        .and_then(|wanted| HANDLERS.iter().copied().find(|h| h.name() == wanted))
        .ok_or_else(|| UnknownHandler {
            name: name.to_owned(),
            known: HANDLERS.iter().map(|h| h.name().as_str()).collect(),
        })
}
