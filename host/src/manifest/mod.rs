//! The capability manifest: vocabulary, validation, cross-capability rules and diagnostics.

mod central;
mod config_slice;
pub(crate) mod cross;
pub(crate) mod diagnostic;
pub(crate) mod facts;
mod invoke;
mod lint;
// Schema-only types: `gsd-lane schema` describes their fields, and nothing reads them yet.
#[expect(
    dead_code,
    reason = "schema-only types; remove once validation produces them"
)]
pub(crate) mod model;
pub(crate) mod path;
mod probe;
pub(crate) mod semver;
mod validate;
pub(crate) mod vocab;

pub use diagnostic::Diagnostic;
pub use path::FieldPath;
pub use validate::validate_value;
