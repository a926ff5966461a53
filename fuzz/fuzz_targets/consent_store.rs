//! The consent store reader on arbitrary text: never panics, and whatever decodes re-encodes
//! to text that decodes to the same records.
#![no_main]
use libfuzzer_sys::fuzz_target;
use gsd_lane::api::trust::consent::Records;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(records) = Records::decode(&text) {
        let encoded = records.encode();
        let again = Records::decode(&encoded).expect("re-encoded store decodes");
        assert_eq!(again.all().len(), records.all().len());
        assert_eq!(again.encode(), encoded);
    }
});
