//! Project configuration (`.planning/config.json`), host normalization and effort.
