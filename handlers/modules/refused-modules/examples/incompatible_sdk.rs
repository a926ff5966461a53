//! A compiled handler module the host must refuse: its name is first-party (`opencode`) but it
//! declares gsd-lane-sdk 9.0.0, which no 0.x host is compatible with.
//!
//! It shares the refused handler's source with the library (not the library itself, whose
//! exported root-module symbol would clash with this one).

#[path = "../src/acme.rs"]
mod acme;

mod root {
    use super::acme::{boxed, Acme};
    use gsd_lane_sdk::abi::abi_stable::std_types::RStr;
    use gsd_lane_sdk::abi::{FfiHandlerBox, HandlerModuleRef};

    /// The SDK version this module claims.
    const CLAIMED: &str = "9.0.0";

    extern "C" fn claimed_version() -> RStr<'static> {
        RStr::from_str(CLAIMED)
    }

    extern "C" fn new_handler() -> FfiHandlerBox {
        boxed(Acme {
            sdk_version: CLAIMED,
            name: "opencode",
        })
    }

    /// The root module: first-party name, incompatible SDK.
    #[gsd_lane_sdk::abi::abi_stable::export_root_module]
    pub fn gsd_lane_handler_root_module() -> HandlerModuleRef {
        gsd_lane_sdk::abi::module_ref(claimed_version, new_handler)
    }
}
