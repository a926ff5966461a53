//! The multi-lane review run (review-workflow.md).
