//! The capability manifest: model, vocabulary, validation and diagnostics.

pub mod path;
pub mod semver;
