//! Everything that starts a process or talks HTTP lives here.

pub(crate) mod citation_check;
pub(crate) mod diagnosis;
mod effects;
mod gemini_trust;
pub(crate) mod http;
pub(crate) mod lane;
pub(crate) mod path_lookup;
mod probe;
pub(crate) mod prompt_file;
pub(crate) mod rate_limit;
pub(crate) mod review_file;
pub(crate) mod spawn;
mod tool_identity;
