//! Everything that starts a process or talks HTTP lives here.

pub mod http;
pub mod path_lookup;
pub mod spawn;
