//! The exit statuses of `gsd-lane review` (review-workflow.md §12), in one place: every stage
//! that ends the review says why, and only [`Exit::status`] turns the why into a number.
//! Usage, phase and I/O errors are `Failure`s (status 1) and never reach here.

/// Why a review ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// At least one identity produced a real review; REVIEWS.md was written.
    Reviewed,
    /// REVIEWS.md was written, but no identity produced a real review (stubs, budget failures).
    NoRealReview,
    /// Ctrl-C or SIGTERM; REVIEWS.md marks the unfinished identities.
    Interrupted,
    /// A lane flag names a lane that exists but is not active; nothing was invoked.
    InactiveLaneFlag,
    /// The selection failed on a `review.*` configuration error (§5.2).
    SelectionConfig,
    /// The selection failed (unknown or undetected reviewer, nothing detected).
    Selection,
    /// An explicitly named identity cannot run (pre-flight); nothing was invoked.
    ExplicitBlocked,
    /// An explicitly named identity could not run (budget step or run time); no REVIEWS.md.
    ExplicitFailed,
    /// No identity ran at all; no REVIEWS.md.
    NoneRan,
    /// `--require-quorum`, and the panel verdict's quorum is not met; REVIEWS.md was written.
    QuorumNotMet,
}

impl Exit {
    /// The process exit status.
    pub fn status(self) -> u8 {
        match self {
            Exit::Reviewed => 0,
            Exit::SelectionConfig => 1,
            Exit::NoRealReview
            | Exit::InactiveLaneFlag
            | Exit::Selection
            | Exit::ExplicitBlocked
            | Exit::ExplicitFailed
            | Exit::NoneRan
            | Exit::QuorumNotMet => 2,
            Exit::Interrupted => 130,
        }
    }

    /// How a review that wrote REVIEWS.md ended: interrupted, else by its real reviews.
    pub fn written(interrupted: bool, real_reviews: usize) -> Exit {
        if interrupted {
            Exit::Interrupted
        } else if real_reviews > 0 {
            Exit::Reviewed
        } else {
            Exit::NoRealReview
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Exit;

    #[test]
    fn statuses_follow_section_12() {
        assert_eq!(Exit::written(false, 1).status(), 0);
        assert_eq!(Exit::written(false, 0).status(), 2);
        assert_eq!(Exit::written(true, 3).status(), 130);
        assert_eq!(Exit::SelectionConfig.status(), 1);
        for exit in [
            Exit::InactiveLaneFlag,
            Exit::Selection,
            Exit::ExplicitBlocked,
            Exit::ExplicitFailed,
            Exit::NoneRan,
            Exit::QuorumNotMet,
        ] {
            assert_eq!(exit.status(), 2, "{exit:?}");
        }
    }
}
