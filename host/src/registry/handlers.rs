//! The handler set this host runs with: the one source of handler names for validation, the
//! JSON Schema, planning, `list`, `doctor` and the run path.
//!
//! It is `gsd_lane_handlers::HANDLERS` unless an embedder (a test that registers one more
//! handler the way `handlers/src/lib.rs` does) installs another set before first use.

use std::sync::OnceLock;

use gsd_lane_handlers::UnknownHandler;
use gsd_lane_sdk::{Handler, HandlerName, Transport};

/// The set, fixed at first use.
static SET: OnceLock<&'static [&'static dyn Handler]> = OnceLock::new();

/// A handler set was installed after the host had already fixed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlreadyFixed;

impl std::fmt::Display for AlreadyFixed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the handler set is fixed at first use and cannot be replaced")
    }
}

impl std::error::Error for AlreadyFixed {}

/// Makes `set` the handler set of this process (before anything validated, planned or ran).
///
/// # Errors
///
/// [`AlreadyFixed`] when a set was already installed or used.
pub fn install(set: &'static [&'static dyn Handler]) -> Result<(), AlreadyFixed> {
    SET.set(set).map_err(|_| AlreadyFixed)
}

/// The registered handlers, in registry order.
pub fn registered() -> &'static [&'static dyn Handler] {
    SET.get_or_init(|| gsd_lane_handlers::HANDLERS)
}

/// The registered names, in registry order.
pub fn names() -> Vec<HandlerName> {
    gsd_lane_handlers::names_in(registered())
}

/// The registered name written as `text` (exact, case-sensitive), or `None`.
pub fn name(text: &str) -> Option<HandlerName> {
    HandlerName::find(names(), text)
}

/// The handler registered under `name`.
///
/// # Errors
///
/// [`UnknownHandler`] when no registered handler has that name.
pub fn lookup(name: &str) -> Result<&'static dyn Handler, UnknownHandler> {
    gsd_lane_handlers::lookup_in(registered(), name)
}

/// The transport the handler registered under `name` drives, or `None` when no registered
/// handler has that name. The one source of the handler-to-transport rule: the validator, the
/// typed lane and the trust policy all ask here.
pub fn transport_of(name: &str) -> Option<Transport> {
    lookup(name).ok().map(|handler| handler.transport())
}

/// Each registered handler with the transport it drives (`opencode with spawn`), for messages.
pub fn transports_described() -> String {
    registered()
        .iter()
        .map(|handler| {
            format!(
                "{} with {}",
                handler.name().as_str(),
                handler.transport().as_str()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
