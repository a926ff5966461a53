//! Incremental lossy UTF-8 decoding of a child's output stream.

/// Incremental lossy UTF-8 decoding with the exact output of [`String::from_utf8_lossy`] on the
/// concatenated input.
#[derive(Default)]
pub(super) struct Utf8Stream {
    /// The incomplete character at the end of the previous chunk (at most 3 bytes), or, while
    /// decoding, that prefix followed by the current chunk (bounded by the read buffer size).
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// Decodes `input` after any pending partial character into `out` (cleared first).
    pub(super) fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.clear();
        if self.pending.is_empty() {
            let tail = decode_lossy(input, out);
            self.pending.extend_from_slice(tail);
            return;
        }
        self.pending.extend_from_slice(input);
        let mut data = std::mem::take(&mut self.pending);
        let keep = decode_lossy(&data, out).len();
        let from = data.len().saturating_sub(keep);
        data.copy_within(from.., 0);
        data.truncate(keep);
        self.pending = data;
    }

    /// Ends the stream: an incomplete trailing character becomes one U+FFFD.
    pub(super) fn finish(&mut self, out: &mut Vec<u8>) {
        out.clear();
        if !self.pending.is_empty() {
            out.extend_from_slice(REPLACEMENT);
            self.pending.clear();
        }
    }
}

/// U+FFFD REPLACEMENT CHARACTER in UTF-8.
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

/// Appends the lossy decoding of `data` to `out`, except for an incomplete character at the very
/// end, which is returned (at most 3 bytes) for the next chunk to complete.
fn decode_lossy<'a>(mut data: &'a [u8], out: &mut Vec<u8>) -> &'a [u8] {
    loop {
        match std::str::from_utf8(data) {
            Ok(text) => {
                out.extend_from_slice(text.as_bytes());
                return &[];
            }
            Err(err) => {
                let (valid, rest) = data.split_at(err.valid_up_to().min(data.len()));
                out.extend_from_slice(valid);
                match err.error_len() {
                    Some(bad) => {
                        out.extend_from_slice(REPLACEMENT);
                        data = rest.get(bad..).unwrap_or(&[]);
                    }
                    None => return rest,
                }
            }
        }
    }
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn decode_chunks(chunks: &[&[u8]]) -> Vec<u8> {
        let mut stream = Utf8Stream::default();
        let mut out = Vec::new();
        let mut all = Vec::new();
        for chunk in chunks {
            stream.decode(chunk, &mut out);
            all.extend_from_slice(&out);
        }
        stream.finish(&mut out);
        all.extend_from_slice(&out);
        all
    }

    #[test]
    fn decoder_handles_known_cases() {
        assert_eq!(decode_chunks(&[b"\xe2", b"\x82", b"\xac"]), "€".as_bytes());
        assert_eq!(decode_chunks(&[b"\xe2\x82"]), "\u{FFFD}".as_bytes());
        assert_eq!(decode_chunks(&[b"\xe2", b"A"]), "\u{FFFD}A".as_bytes());
        assert_eq!(
            decode_chunks(&[b"\xf0\x9f", b"\x98", b"\x80!"]),
            "😀!".as_bytes()
        );
        assert_eq!(decode_chunks(&[b"", b"\xff", b""]), "\u{FFFD}".as_bytes());
    }

    proptest::proptest! {
        #[test]
        fn decoder_matches_from_utf8_lossy(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            cuts in proptest::collection::vec(0_usize..200, 0..8),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut at = 0;
            for cut in cuts {
                chunks.push(&bytes[at..cut]);
                at = cut;
            }
            chunks.push(&bytes[at..]);
            let expected = String::from_utf8_lossy(&bytes).into_owned().into_bytes();
            proptest::prop_assert_eq!(decode_chunks(&chunks), expected);
        }
    }
}
