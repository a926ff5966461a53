//! Locating a field path in JSON text, for line:column in diagnostics.
