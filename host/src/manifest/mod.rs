//! The capability manifest: vocabulary, validation, cross-capability rules and diagnostics.

pub mod central;
mod config_slice;
pub mod cross;
pub mod diagnostic;
pub mod facts;
mod invoke;
pub mod lane;
mod lint;
pub mod model;
pub mod path;
mod probe;
pub mod semver;
pub mod validate;
pub mod vocab;

pub use diagnostic::{Diagnostic, Severity};
pub use lane::LaneSpec;
pub use path::FieldPath;
pub use validate::validate_value;
