//! Bytes → parse → validation diagnostics with positions: never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(value) = gsd_lane::api::registry::read::parse_json(&text) {
        for diagnostic in gsd_lane::api::manifest::validate_value(&value, Some("acme-review")) {
            let _ = gsd_lane::api::jsonpos::locate(&text, &diagnostic.field);
            let _ = diagnostic.detail();
        }
        let facts = gsd_lane::api::manifest::facts::CapabilityFacts::of(&value);
        let _ = gsd_lane::api::manifest::cross::check(&[facts.clone(), facts]);
    }
});
