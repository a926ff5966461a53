//! The capability manifest: vocabulary, validation, cross-capability rules and diagnostics.

pub(crate) mod central;
mod checker;
mod config_slice;
pub(crate) mod cross;
pub(crate) mod declared;
pub(crate) mod diagnostic;
pub(crate) mod facts;
pub(crate) mod header;
mod invoke;
pub(crate) mod invoke_env;
pub(crate) mod lane;
pub(crate) mod lane_policy;
mod lint;
// The schema's descriptive structs: `gsd-lane schema` (schemars) reads their fields, code reads
// only their enums (the vocabulary).
#[expect(
    dead_code,
    reason = "the schema's structs are described by schemars, never read by code"
)]
pub(crate) mod model;
pub(crate) mod path;
pub(crate) mod probe;
pub(crate) mod rate_limit;
pub(crate) mod semver;
pub(crate) mod validate;
pub(crate) mod vocab;

pub use declared::DeclaredLane;
pub use diagnostic::Diagnostic;
pub use header::{DeclaredHeader, HeaderField};
pub use lane::LaneSpec;
pub use path::FieldPath;
pub use validate::validate_value;
