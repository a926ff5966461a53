//! The handler trait and the closed set of handler names.

use std::fmt;

use crate::effects::Effects;
use crate::error::HandlerError;
use crate::outcome::HandlerOutput;
use crate::plan::{LaneRequest, Transport};

/// The closed set of first-party handler names a descriptor may write in `reviewer.handler`.
///
/// The vocabulary is fixed by the manifest specification; a name outside it is a validation
/// error, and a member this build does not implement fails closed at run time. Exhaustive on
/// purpose: the set is closed, and the host's registry must implement or refuse every member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HandlerName {
    /// `antigravity`: the `agy` CLI (three-layer output recovery).
    Antigravity,
    /// `kimi-code`: Kimi Code's stream-json output (the final assistant message).
    KimiCode,
    /// `openai-compatible`: OpenAI-compatible chat-completions servers.
    OpenAiCompatible,
    /// `opencode`: the OpenCode JSON event stream.
    Opencode,
}

impl HandlerName {
    /// Every member, in the canonical order of the manifest vocabulary.
    pub const ALL: [HandlerName; 4] = [
        HandlerName::Antigravity,
        HandlerName::KimiCode,
        HandlerName::OpenAiCompatible,
        HandlerName::Opencode,
    ];

    /// Returns the name exactly as written in descriptors.
    pub fn as_str(self) -> &'static str {
        match self {
            HandlerName::Antigravity => "antigravity",
            HandlerName::KimiCode => "kimi-code",
            HandlerName::OpenAiCompatible => "openai-compatible",
            HandlerName::Opencode => "opencode",
        }
    }

    /// Parses a descriptor value; exact, case-sensitive membership.
    pub fn parse(text: &str) -> Option<HandlerName> {
        HandlerName::ALL
            .into_iter()
            .find(|name| name.as_str() == text)
    }
}

impl fmt::Display for HandlerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
