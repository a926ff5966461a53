//! The OpenAI-compatible response readers on arbitrary bodies: never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use gsd_lane_handlers::api::openai_compatible::{first_model_id, read_response};
use gsd_lane_sdk::HttpReport;

fuzz_target!(|data: &[u8]| {
    let body = String::from_utf8_lossy(data).into_owned();
    let _ = first_model_id(&body);
    let status = data.first().map_or(200, |b| 100 + u16::from(*b) * 2);
    let _ = read_response(HttpReport::Response { status, body });
});
