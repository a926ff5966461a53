//! The antigravity cache, transcript and log readers on arbitrary text: never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use gsd_lane_handlers::api::antigravity;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (head, tail) = text.split_once('\u{0}').unwrap_or((&text, "/repo"));
    let _ = antigravity::conversation_for(head, tail);
    let lines = antigravity::count_lines(head);
    let _ = antigravity::transcript_review(head, lines / 2);
    let _ = antigravity::is_blind(head);
    let _ = antigravity::stamp(head);
    let _ = antigravity::log_hint(head);
});
