//! The refused handler shared by the library and the `incompatible_sdk` example.

use gsd_lane_sdk::abi::abi_stable::sabi_trait::TD_Opaque;
use gsd_lane_sdk::abi::abi_stable::std_types::{RResult, RStr, RString};
use gsd_lane_sdk::abi::{
    FfiEffectsRef, FfiHandler, FfiHandlerBox, FfiHandlerError, FfiHandlerOutput, FfiHandler_TO,
};

/// A handler that claims a name outside the closed set.
#[derive(Debug, Clone, Copy)]
pub struct Acme {
    /// The SDK version it claims.
    pub sdk_version: &'static str,
    /// The name it claims.
    pub name: &'static str,
}

impl FfiHandler for Acme {
    fn name(&self) -> RString {
        self.name.into()
    }

    fn describe(&self) -> RString {
        "a module that must never run".into()
    }

    fn transport(&self) -> RString {
        "spawn".into()
    }

    fn sdk_version(&self) -> RString {
        self.sdk_version.into()
    }

    fn run(
        &self,
        effects: FfiEffectsRef<'_>,
        _plan_json: RStr<'_>,
        _repo_root: RStr<'_>,
    ) -> RResult<FfiHandlerOutput, FfiHandlerError> {
        effects.warn("REFUSED MODULE RAN".into());
        RResult::RErr(FfiHandlerError {
            kind: "other".into(),
            message: "a refused module ran".into(),
        })
    }
}

/// Boxes `handler` as the FFI handler a root module returns.
pub fn boxed(handler: Acme) -> FfiHandlerBox {
    FfiHandler_TO::from_value(handler, TD_Opaque)
}
