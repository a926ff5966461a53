//! The opencode event-stream parser on arbitrary text: never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = gsd_lane_handlers::api::opencode::reconstruct(&text);
});
