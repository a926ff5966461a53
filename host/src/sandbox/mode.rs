//! The sandbox vocabulary: how a run confines its lanes, and what a lane declares it needs.

use std::fmt;

/// How spawned lanes are kept from changing the repository (`review.sandbox`, `--sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Landlock refuses every write under the repository root; the repository is also compared
    /// before and after the lane (catching what Landlock does not govern, such as `chmod`).
    /// Where Landlock is unavailable this degrades to [`SandboxMode::Detect`], and says so.
    #[default]
    Enforce,
    /// Nothing is refused; the repository is compared before and after the lane and any change
    /// is reported.
    Detect,
    /// Neither enforced nor checked (the behaviour before the sandbox existed).
    Off,
}

impl SandboxMode {
    /// Every mode, in documentation order.
    pub const ALL: [SandboxMode; 3] = [SandboxMode::Enforce, SandboxMode::Detect, SandboxMode::Off];

    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Enforce => "enforce",
            SandboxMode::Detect => "detect",
            SandboxMode::Off => "off",
        }
    }

    /// Parses the configuration spelling (exact, lowercase).
    pub fn parse(text: &str) -> Option<SandboxMode> {
        SandboxMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == text)
    }

    /// Parses a `--sandbox` value, with the accepted spellings in the error.
    ///
    /// # Errors
    ///
    /// Any other value.
    pub fn parse_flag(text: &str) -> Result<SandboxMode, super::error::ModeError> {
        SandboxMode::parse(text).ok_or(super::error::ModeError::Flag)
    }

    /// The accepted spellings, for error messages: `enforce, detect, off`.
    pub fn spellings() -> String {
        SandboxMode::ALL.map(SandboxMode::as_str).join(", ")
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a lane declares about the repository under review (`reviewer.posture`): the typed
/// manifest's own enum (the default, `read-only`, when `posture` is absent).
pub use crate::manifest::model::Posture;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip_and_nothing_else_parses() {
        for mode in SandboxMode::ALL {
            assert_eq!(SandboxMode::parse(mode.as_str()), Some(mode));
        }
        for bad in ["", "Enforce", "enforce ", "on", "readonly", "read_only"] {
            assert_eq!(SandboxMode::parse(bad), None);
        }
        assert_eq!(SandboxMode::spellings(), "enforce, detect, off");
        assert_eq!(SandboxMode::default(), SandboxMode::Enforce);
        assert_eq!(Posture::default(), Posture::ReadOnly);
    }
}
