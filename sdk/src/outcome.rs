//! What a handler returns.

/// The result of one handler run: a review (possibly empty) plus diagnostics.
///
/// The host applies the empty-output policy: an empty `review` becomes the generic stub (with
/// `diagnostic` under "Raw response body:"), unless the handler supplied `own_stub`.
///
/// `#[non_exhaustive]`: what a handler can report grows with the run report, so a handler
/// builds it with [`HandlerOutput::review`] or [`HandlerOutput::empty_with`] and the `with_…`
/// methods, and may set the public fields afterwards.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct HandlerOutput {
    /// The review text; empty (after trimming) means the lane produced nothing.
    pub review: String,
    /// Extra diagnostic for the generic stub (an HTTP body, a stop reason).
    pub diagnostic: Option<String>,
    /// A complete stub the handler writes instead of the generic one when `review` is empty.
    pub own_stub: Option<String>,
    /// Which source produced the review (shown in the run report), e.g. `stdout`.
    pub source: Option<String>,
    /// True when the review was stamped as written without repository access.
    pub blind: bool,
    /// Human-readable notes on what the handler did (shown in the run report).
    pub notes: Vec<String>,
    /// The model the run used as the handler found it in the tool's own records (antigravity:
    /// its conversation transcript); the host normalises it and records it with the source
    /// `transcript` when no pinned model went into argv. Not carried across the module ABI.
    pub model: Option<String>,
}

impl HandlerOutput {
    /// An output whose review is `review`, produced by `source`.
    pub fn review(review: impl Into<String>, source: &str) -> HandlerOutput {
        HandlerOutput {
            review: review.into(),
            source: Some(source.to_owned()),
            ..HandlerOutput::default()
        }
    }

    /// An empty output with a diagnostic for the generic stub.
    pub fn empty_with(diagnostic: impl Into<String>) -> HandlerOutput {
        HandlerOutput {
            diagnostic: Some(diagnostic.into()),
            ..HandlerOutput::default()
        }
    }

    /// Adds the diagnostic for the generic stub (an HTTP body, a stop reason).
    pub fn with_diagnostic(mut self, diagnostic: impl Into<String>) -> HandlerOutput {
        self.diagnostic = Some(diagnostic.into());
        self
    }
}
