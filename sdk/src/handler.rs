//! The handler trait.

use crate::effects::Effects;
use crate::error::HandlerError;
use crate::handler_name::HandlerName;
use crate::outcome::HandlerOutput;
use crate::plan::{LaneRequest, Transport};

/// A first-party module for a lane whose behaviour data alone cannot describe.
///
/// Handlers are blocking and stateless: the host decides concurrency. They reach the outside
/// world only through [`Effects`], so every process and request they cause is bounded and
/// checked by the host in one place.
pub trait Handler: Send + Sync + 'static {
    /// The registered name, as written in descriptors.
    fn name(&self) -> HandlerName;

    /// One sentence saying what the handler owns, for listings.
    fn describe(&self) -> &'static str;

    /// The transport this handler can drive; a lane of another transport is malformed.
    fn transport(&self) -> Transport;

    /// Runs one lane invocation and returns what it produced.
    ///
    /// # Errors
    ///
    /// A [`HandlerError`] when the invocation could not be carried out at all (an I/O failure
    /// of the host, a refused effect). An empty or failed review is not an error: it is an
    /// output whose review is empty, which the host turns into a diagnostic stub.
    fn run(
        &self,
        effects: &dyn Effects,
        request: &LaneRequest,
    ) -> Result<HandlerOutput, HandlerError>;

    /// The SDK version this handler was built against.
    fn sdk_version(&self) -> &'static str {
        crate::SDK_VERSION
    }
}
