//! Output sinks: capped, incrementally decoding destinations (file or memory) of a child's output.

use std::fs::File;
use std::io::{self, Write};

use super::decode::Utf8Stream;

/// Why a sink refused more bytes.
#[derive(Debug)]
pub(super) enum SinkFailure {
    /// The cap was reached; what fit (up to a character boundary) was written.
    Full,
    /// Writing failed.
    Io(io::Error),
}

/// Where decoded bytes go.
pub(super) enum Target {
    /// A regular file, written as bytes arrive.
    File(File),
    /// Memory, bounded by the sink's cap.
    Memory(Vec<u8>),
}

/// A capped, incrementally decoding output sink.
pub(super) struct Sink {
    /// The destination.
    pub(super) target: Target,
    /// Decoded bytes written so far.
    pub(super) written: u64,
    /// Most decoded bytes accepted.
    cap: u64,
    /// Incremental lossy decoder.
    decoder: Utf8Stream,
    /// Reused output buffer of the decoder.
    out: Vec<u8>,
    /// Set once the sink stopped (finished, full or failed); later input is ignored.
    closed: bool,
}

impl Sink {
    /// A sink writing to `target`, accepting at most `cap` decoded bytes.
    pub(super) fn new(target: Target, cap: u64) -> Self {
        Sink {
            target,
            written: 0,
            cap,
            decoder: Utf8Stream::default(),
            out: Vec::new(),
            closed: false,
        }
    }

    /// Decodes and stores one chunk.
    pub(super) fn push(&mut self, bytes: &[u8]) -> Result<(), SinkFailure> {
        if self.closed {
            return Ok(());
        }
        let mut out = std::mem::take(&mut self.out);
        self.decoder.decode(bytes, &mut out);
        let result = self.emit(&out);
        self.out = out;
        if result.is_err() {
            self.closed = true;
        }
        result
    }

    /// Flushes an incomplete trailing character (as U+FFFD) and closes the sink.
    pub(super) fn finish(&mut self) -> Result<(), SinkFailure> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let mut out = std::mem::take(&mut self.out);
        self.decoder.finish(&mut out);
        let result = self.emit(&out);
        self.out = out;
        result
    }

    /// Writes decoded bytes, cutting at the cap on a character boundary.
    fn emit(&mut self, decoded: &[u8]) -> Result<(), SinkFailure> {
        let room = self.cap.saturating_sub(self.written);
        let fits = u64::try_from(decoded.len()).is_ok_and(|len| len <= room);
        let take = if fits {
            decoded.len()
        } else {
            char_floor(decoded, usize::try_from(room).unwrap_or(usize::MAX))
        };
        let part = decoded.get(..take).unwrap_or(decoded);
        match &mut self.target {
            Target::File(file) => file.write_all(part).map_err(SinkFailure::Io)?,
            Target::Memory(bytes) => bytes.extend_from_slice(part),
        }
        self.written = self
            .written
            .saturating_add(u64::try_from(part.len()).unwrap_or(u64::MAX));
        if fits {
            Ok(())
        } else {
            Err(SinkFailure::Full)
        }
    }
}

/// The largest index `<= limit` (and `<= text.len()`) that is a character boundary of the valid
/// UTF-8 `text`.
pub(super) fn char_floor(text: &[u8], limit: usize) -> usize {
    let mut at = limit.min(text.len());
    while at > 0
        && text
            .get(at)
            .is_some_and(|b| (b & 0b1100_0000) == 0b1000_0000)
    {
        at -= 1;
    }
    at
}

/// Bytes produced by the decoder as a `String` (they are valid UTF-8; lossy as a fallback).
pub(super) fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn char_floor_is_a_boundary(text in ".{0,40}", limit in 0_usize..200) {
            let at = char_floor(text.as_bytes(), limit);
            proptest::prop_assert!(at <= limit.min(text.len()));
            proptest::prop_assert!(text.is_char_boundary(at));
            proptest::prop_assert!(limit.min(text.len()) - at < 4);
        }
    }
}
