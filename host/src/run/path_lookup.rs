//! `PATH` lookup without spawning (invocation.md §7.1).
