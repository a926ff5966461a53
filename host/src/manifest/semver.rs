//! Strict SemVer versions and `engines.gsd` ranges (manifest.md §1.3, §1.4).
