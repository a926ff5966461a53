//! Bounded HTTP requests to a verified origin.
