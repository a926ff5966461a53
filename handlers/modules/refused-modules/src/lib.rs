//! A compiled handler module the host must refuse: it declares the handler name `acme`,
//! which is not in the closed first-party set.
//!
//! It implements the FFI trait directly (a real handler cannot even spell an unknown name
//! through [`gsd_lane_sdk::Handler`]), which is exactly what a hostile or stale module could do.
//! Its `run` would print `REFUSED MODULE RAN` through the host's warnings, so a test can prove
//! it was never called.

mod acme;

pub use acme::{boxed, Acme};

mod root {
    use super::{boxed, Acme};
    use gsd_lane_sdk::abi::{FfiHandlerBox, HandlerModuleRef};

    extern "C" fn new_handler() -> FfiHandlerBox {
        boxed(Acme {
            sdk_version: gsd_lane_sdk::SDK_VERSION,
            name: "acme",
        })
    }

    /// The root module: current SDK, unknown name.
    #[gsd_lane_sdk::abi::abi_stable::export_root_module]
    pub fn gsd_lane_handler_root_module() -> HandlerModuleRef {
        gsd_lane_sdk::abi::module_ref(gsd_lane_sdk::abi::this_sdk_version, new_handler)
    }
}
