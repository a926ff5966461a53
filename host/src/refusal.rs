//! Why a lane cannot run (invocation.md §5): the closed set of reasons and a refusal carrying
//! one with its detail. Below every stage that refuses a lane (manifest typing, planning, the
//! trust layer, probing, running), so none of them depends on another for it.

use std::fmt;

use serde::Serialize;

/// The closed set of unavailability reasons (invocation.md §5), sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The trimming step failed for a reason other than size.
    BudgetToolFailed,
    /// The prompt cannot fit the lane's budget.
    BudgetTooSmall,
    /// The consent store exists but cannot be read or decided (trust.md §5.5, fail closed).
    ConsentStoreUnreadable,
    /// The consented destination differs from the resolved one.
    EgressHostChanged,
    /// The destination pin store exists but cannot be read or decided (trust.md §6.9).
    EgressStoreUnreadable,
    /// The HTTP probe failed.
    HostUnreachable,
    /// The lane's body is not usable.
    MalformedLane,
    /// The probe binary is not on PATH.
    MissingBinary,
    /// A `requiresBinaries` entry is not on PATH.
    MissingRequiredBinary,
    /// The probe ran and said no.
    ProbeFailed,
    /// The probe ran out of time.
    ProbeTimeout,
    /// The lane declares `reviewer.posture: "writes-repository"` and the user did not opt in.
    RepositoryWritesNotAllowed,
    /// The handler is not implemented by this build.
    UnknownHandler,
    /// The transport is not recognised.
    UnknownTransport,
    /// The lane's tool refuses to run in this folder until the user trusts it (gemini's
    /// folder-trust gate); gsd-lane never trusts a folder on the user's behalf.
    UntrustedWorkspace,
}

impl Reason {
    /// Every reason, sorted by name.
    pub const ALL: [Reason; 15] = [
        Reason::BudgetToolFailed,
        Reason::BudgetTooSmall,
        Reason::ConsentStoreUnreadable,
        Reason::EgressHostChanged,
        Reason::EgressStoreUnreadable,
        Reason::HostUnreachable,
        Reason::MalformedLane,
        Reason::MissingBinary,
        Reason::MissingRequiredBinary,
        Reason::ProbeFailed,
        Reason::ProbeTimeout,
        Reason::RepositoryWritesNotAllowed,
        Reason::UnknownHandler,
        Reason::UnknownTransport,
        Reason::UntrustedWorkspace,
    ];

    /// The wire name (`malformed_lane`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::BudgetToolFailed => "budget_tool_failed",
            Reason::BudgetTooSmall => "budget_too_small",
            Reason::ConsentStoreUnreadable => "consent_store_unreadable",
            Reason::EgressHostChanged => "egress_host_changed",
            Reason::EgressStoreUnreadable => "egress_store_unreadable",
            Reason::HostUnreachable => "host_unreachable",
            Reason::MalformedLane => "malformed_lane",
            Reason::MissingBinary => "missing_binary",
            Reason::MissingRequiredBinary => "missing_required_binary",
            Reason::ProbeFailed => "probe_failed",
            Reason::ProbeTimeout => "probe_timeout",
            Reason::RepositoryWritesNotAllowed => "repository_writes_not_allowed",
            Reason::UnknownHandler => "unknown_handler",
            Reason::UnknownTransport => "unknown_transport",
            Reason::UntrustedWorkspace => "untrusted_workspace",
        }
    }

    /// Whether the lane is installed but held back by a safety gate (a trust block, or its tool's
    /// own folder-trust gate): said loudly with its fix, never folded into "not detected".
    pub fn is_safety_gate(self) -> bool {
        self.is_egress_block() || self == Reason::UntrustedWorkspace
    }

    /// True for the trust layer's blocks (trust.md §6.6): the lane was stopped before any probe,
    /// DNS lookup or connection because its destination could not be verified.
    pub fn is_egress_block(self) -> bool {
        matches!(
            self,
            Reason::EgressHostChanged
                | Reason::ConsentStoreUnreadable
                | Reason::EgressStoreUnreadable
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a lane cannot run: a reason from the closed set and a free-text detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The reason (tests assert on it).
    pub reason: Reason,
    /// What exactly was wrong.
    pub detail: String,
}

impl Refusal {
    /// Builds a refusal.
    pub fn new(reason: Reason, detail: impl Into<String>) -> Refusal {
        Refusal {
            reason,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.detail)
    }
}
