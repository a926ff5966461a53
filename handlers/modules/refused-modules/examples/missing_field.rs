//! A compiled handler module the host must refuse: its root module lacks a field. It exports a
//! `HandlerModule` with `sdk_version` only, without the `new_handler` constructor the host's
//! interface requires, as a module built against a shorter (or a hand-written) interface would.
//!
//! The host's loader must refuse it with an error and never panic: abi_stable's layout check
//! refuses it before any of the module's code is called (here the root type also comes from
//! another package; the SDK's own test `a_root_module_that_lacks_a_field_fails_the_load_time_
//! layout_check` pins the same-package case, a root one field short).

// The StableAbi derive and export_root_module expand to `unsafe` blocks (layout constants, the
// exported symbol); nothing here is written by hand, and the layout they describe is what the
// host checks before it calls anything.
#![allow(unsafe_code)]

use gsd_lane_sdk::abi::abi_stable::library::RootModule;
use gsd_lane_sdk::abi::abi_stable::sabi_types::VersionStrings;
use gsd_lane_sdk::abi::abi_stable::std_types::RStr;
use gsd_lane_sdk::abi::abi_stable::{
    declare_root_module_statics, package_version_strings, StableAbi,
};

/// The host's root module, short of its `new_handler` field.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = HandlerModuleRef)))]
pub struct HandlerModule {
    /// The SDK version the module was built with.
    #[sabi(last_prefix_field)]
    pub sdk_version: extern "C" fn() -> RStr<'static>,
}

impl RootModule for HandlerModuleRef {
    declare_root_module_statics! {HandlerModuleRef}
    const BASE_NAME: &'static str = "gsd_lane_handler";
    const NAME: &'static str = "gsd-lane handler module";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

mod root {
    use super::{HandlerModule, HandlerModuleRef};
    use gsd_lane_sdk::abi::abi_stable::export_root_module;
    use gsd_lane_sdk::abi::abi_stable::prefix_type::PrefixTypeTrait;

    /// The root module: the current SDK version, no handler constructor.
    #[export_root_module]
    pub fn gsd_lane_handler_root_module() -> HandlerModuleRef {
        HandlerModule {
            sdk_version: gsd_lane_sdk::abi::this_sdk_version,
        }
        .leak_into_prefix()
    }
}
