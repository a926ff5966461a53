//! Everything that starts a process or talks HTTP lives here.

pub mod effects;
pub mod gemini_trust;
pub mod http;
pub mod lane;
pub mod path_lookup;
pub mod probe;
pub mod rate_limit;
pub mod review_file;
pub mod spawn;
pub mod tool_identity;
