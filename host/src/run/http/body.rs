//! Reading a response body into text under the cap: one pass, bounded memory.
//!
//! The body is read in blocks and decoded as it arrives; invalid UTF-8 becomes U+FFFD on the
//! way. The cap applies to the decoded text, which is never shorter than the bytes it came
//! from (a replacement character is 3 bytes for 1 to 3 invalid ones), so it bounds the bytes
//! read too, and the whole body is held once: no byte buffer beside the text, no lossy copy.

use std::io::{self, Read};

/// Size of each read from the connection.
const BLOCK: usize = 64 * 1024;

/// The decoded text would pass the cap.
#[derive(Debug)]
pub enum ReadError {
    /// More than the cap.
    TooLarge,
    /// The reader failed.
    Io(io::Error),
}

/// Text decoded incrementally, never longer than `cap` bytes.
#[derive(Debug)]
pub struct CappedText {
    text: String,
    /// The start of a UTF-8 sequence cut by a block boundary (at most 3 bytes).
    pending: Vec<u8>,
    cap: usize,
}

impl CappedText {
    /// An empty text for at most `cap` bytes; `expected` (a `Content-Length`) is reserved up
    /// front when it fits, so a well-framed body is read without reallocating.
    pub fn new(cap: u64, expected: Option<u64>) -> CappedText {
        let cap = usize::try_from(cap).unwrap_or(usize::MAX);
        let mut text = String::new();
        if let Some(len) = expected.and_then(|len| usize::try_from(len).ok()) {
            // A failed reservation is not an error: the text grows as it is read instead.
            let _ = text.try_reserve_exact(len.min(cap));
        }
        CappedText {
            text,
            pending: Vec::new(),
            cap,
        }
    }

    /// Reads `reader` to its end.
    ///
    /// # Errors
    ///
    /// [`ReadError::TooLarge`] once the text would pass the cap, or the reader's error.
    pub fn read_all(mut self, reader: &mut impl Read) -> Result<String, ReadError> {
        let mut block = vec![0u8; BLOCK];
        loop {
            let n = match reader.read(&mut block) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ReadError::Io(e)),
            };
            self.push_bytes(block.get(..n).unwrap_or_default())?;
        }
        if !self.pending.is_empty() {
            self.pending.clear();
            self.push_str("\u{fffd}")?;
        }
        Ok(self.text)
    }

    /// Decodes `bytes` (after any pending partial sequence) into the text.
    fn push_bytes(&mut self, bytes: &[u8]) -> Result<(), ReadError> {
        let joined;
        let mut rest: &[u8] = if self.pending.is_empty() {
            bytes
        } else {
            let mut carry = std::mem::take(&mut self.pending);
            carry.extend_from_slice(bytes);
            joined = carry;
            &joined
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => return self.push_str(valid),
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    // `valid` is valid UTF-8 by construction.
                    self.push_str(std::str::from_utf8(valid).unwrap_or_default())?;
                    match error.error_len() {
                        Some(bad) => {
                            self.push_str("\u{fffd}")?;
                            rest = after.get(bad..).unwrap_or_default();
                        }
                        None => {
                            // An incomplete sequence at the end: wait for the next block.
                            self.pending = after.to_vec();
                            return Ok(());
                        }
                    }
                }
            }
        }
    }

    /// Appends `piece`, growing geometrically but never past the cap.
    fn push_str(&mut self, piece: &str) -> Result<(), ReadError> {
        let needed = self
            .text
            .len()
            .checked_add(piece.len())
            .filter(|needed| *needed <= self.cap)
            .ok_or(ReadError::TooLarge)?;
        if needed > self.text.capacity() {
            let target = self
                .text
                .capacity()
                .saturating_mul(2)
                .max(needed)
                .max(BLOCK)
                .min(self.cap);
            self.text
                .try_reserve_exact(target - self.text.len())
                .map_err(|e| ReadError::Io(io::Error::new(io::ErrorKind::OutOfMemory, e)))?;
        }
        self.text.push_str(piece);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn decode(parts: &[&[u8]], cap: u64) -> Result<String, ReadError> {
        let mut text = CappedText::new(cap, None);
        for part in parts {
            text.push_bytes(part)?;
        }
        text.read_all(&mut io::empty())
    }

    #[test]
    fn decodes_across_block_boundaries_like_lossy_utf8() {
        let bytes = "héllo €uro 😀".as_bytes();
        for cut in 0..bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(decode(&[a, b], 100).unwrap(), "héllo €uro 😀", "cut {cut}");
        }
        let bad = b"ok \xff\xfe end \xe2\x82";
        assert_eq!(
            decode(&[bad], 100).unwrap(),
            String::from_utf8_lossy(bad).into_owned()
        );
    }

    #[test]
    fn the_cap_applies_to_the_decoded_text() {
        assert_eq!(decode(&[b"0123456789"], 10).unwrap(), "0123456789");
        assert!(matches!(
            decode(&[b"0123456789a"], 10),
            Err(ReadError::TooLarge)
        ));
        // Four invalid bytes are twelve bytes of text.
        assert!(matches!(
            decode(&[b"\xff\xff\xff\xff"], 10),
            Err(ReadError::TooLarge)
        ));
    }

    #[test]
    fn capacity_never_passes_the_cap() {
        let cap = 3 * BLOCK as u64 + 5;
        let mut text = CappedText::new(cap, None);
        for _ in 0..3 {
            text.push_bytes(&[b'a'; BLOCK]).unwrap();
        }
        assert!(text.text.capacity() <= cap as usize);
    }
}
