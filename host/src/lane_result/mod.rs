//! What a lane's run produced, read the same way by every layer that looks at it: the model
//! it ran with ([`model_record`]) and the source citations in its review text ([`citations`]).
//!
//! `run/` records both as a lane finishes, `review/` writes them into REVIEWS.md and `verdict/`
//! checks the citations; keeping them here lets `run/` use them without reaching up into
//! `review/` or `verdict/` (issue 25, item 6; checked by `layering.rs`).

pub(crate) mod citations;
pub(crate) mod model_record;
