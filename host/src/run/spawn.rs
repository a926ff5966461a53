//! Bounded process execution: argv only, streamed output, whole-tree kill.
