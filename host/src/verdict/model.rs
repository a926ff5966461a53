//! The verdict's typed values, serialized exactly as `gsd-lane verdict --json` prints them
//! (issue 23: the field names and values are the contract).

use serde::Serialize;

/// A severity or risk level, lowest first (so `max` is the highest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Level {
    /// `LOW`.
    #[serde(rename = "LOW")]
    Low,
    /// `MEDIUM`.
    #[serde(rename = "MEDIUM")]
    Medium,
    /// `HIGH`.
    #[serde(rename = "HIGH")]
    High,
}

impl Level {
    /// The word as written in the JSON and the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Low => "LOW",
            Level::Medium => "MEDIUM",
            Level::High => "HIGH",
        }
    }
}

/// What a reviewer section holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A review.
    Review,
    /// A diagnostic stub (the lane ran and produced nothing).
    Stub,
    /// Not completed: interrupted, or the budget step skipped it.
    NotCompleted,
}

impl Outcome {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Review => "review",
            Outcome::Stub => "stub",
            Outcome::NotCompleted => "not-completed",
        }
    }
}

/// Whether a review stands on the repository's source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Grounding {
    /// At least one citation verified.
    Grounded,
    /// Citations, none verified.
    Miscited,
    /// No citation.
    Ungrounded,
    /// The review carries the blind-review marker.
    WithoutRepoAccess,
    /// The lane is diff-only (it never received the prompt).
    DiffOnly,
}

impl Grounding {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Grounding::Grounded => "grounded",
            Grounding::Miscited => "miscited",
            Grounding::Ungrounded => "ungrounded",
            Grounding::WithoutRepoAccess => "without-repo-access",
            Grounding::DiffOnly => "diff-only",
        }
    }
}

/// Concern counts by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ConcernCounts {
    /// Rated HIGH.
    #[serde(rename = "HIGH")]
    pub high: usize,
    /// Rated MEDIUM.
    #[serde(rename = "MEDIUM")]
    pub medium: usize,
    /// Rated LOW.
    #[serde(rename = "LOW")]
    pub low: usize,
    /// No severity word.
    pub unrated: usize,
}

impl ConcernCounts {
    /// Counts one concern of `level` (`None`: unrated).
    pub fn add(&mut self, level: Option<Level>) {
        match level {
            Some(Level::High) => self.high += 1,
            Some(Level::Medium) => self.medium += 1,
            Some(Level::Low) => self.low += 1,
            None => self.unrated += 1,
        }
    }
}

/// Citation counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CitationCounts {
    /// Citation tokens in the section (each occurrence).
    pub found: usize,
    /// Of those, the ones the repository confirms.
    pub verified: usize,
}

/// One reviewer section's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewerVerdict {
    /// The reviewer id (as in the frontmatter `reviewers:` list).
    pub id: String,
    /// The section heading's display name.
    pub section: String,
    /// What the section holds.
    pub outcome: Outcome,
    /// The highest labelled risk level.
    pub risk: Option<Level>,
    /// Concerns by severity.
    pub concerns: ConcernCounts,
    /// Citations found and verified.
    pub citations: CitationCounts,
    /// Grounding.
    pub grounding: Grounding,
}

impl ReviewerVerdict {
    /// Outcome `review` and grounding `grounded`.
    pub fn substantive(&self) -> bool {
        self.outcome == Outcome::Review && self.grounding == Grounding::Grounded
    }
}

/// The quorum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Quorum {
    /// `review.quorum`, capped at the number of reviewers in the file.
    pub required: usize,
    /// Substantive reviews.
    pub substantive: usize,
    /// `substantive >= required`.
    pub met: bool,
}

/// A place two or more substantive reviewers raised a concern about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgreedPlace {
    /// The file, relative to the repository root, as cited.
    pub path: String,
    /// `[first, last]` line of the place.
    pub lines: [u64; 2],
    /// The substantive reviewers, in file order.
    pub reviewers: Vec<String>,
    /// The highest severity among their concerns there (`null` when all are unrated).
    pub severity: Option<Level>,
    /// Reviewers that are not substantive but raised a concern there, listed apart.
    pub also_raised_by: Vec<String>,
}

/// The panel verdict of one REVIEWS.md.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// One entry per reviewer section, in file order.
    pub reviewers: Vec<ReviewerVerdict>,
    /// The quorum.
    pub quorum: Quorum,
    /// Places two or more substantive reviewers agree on.
    pub agreed: Vec<AgreedPlace>,
    /// Reviewers whose overall risk levels are two steps apart (a LOW next to a HIGH).
    pub divergent: Vec<String>,
    /// Reviewers the frontmatter lists for which no section was found (an unclosed code
    /// fence or HTML block in an earlier review hides the sections after it).
    pub missing: Vec<String>,
}
