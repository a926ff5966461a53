//! The trust layer (trust.md): disclosure, signature, consent store, egress re-verification.
//!
//! Scaffolding: the consent gate activates no project overlay and the egress check blocks
//! nothing until the trust layer lands.

use std::path::Path;

use crate::plan::Refusal;
use crate::project::HostEnv;
use crate::registry::ConsentGate;
use crate::run::lane::EgressCheck;

/// No project-scope overlay is activated.
pub struct NoConsent;

impl ConsentGate for NoConsent {
    fn is_consented(&self, _: &Path, _: &str, _: &Path) -> bool {
        false
    }
}

/// No destination is bound, so none is blocked.
pub struct NoBoundHosts;

impl EgressCheck for NoBoundHosts {
    fn check(&self, _: &gsd_lane_sdk::LanePlan) -> Result<(), Refusal> {
        Ok(())
    }
}

/// The consent gate for overlay loading in `project_root`.
pub fn consent_gate(_env: &HostEnv, _project_root: &Path) -> Box<dyn ConsentGate> {
    Box::new(NoConsent)
}

/// The egress check for lane runs in `project_root`.
pub fn egress_check(_env: &HostEnv, _project_root: &Path) -> Box<dyn EgressCheck> {
    Box::new(NoBoundHosts)
}
