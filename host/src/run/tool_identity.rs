//! Programs whose name another tool also installs, and how a probe refusal says so.
//!
//! `kimi` is both Kimi Code 2.x (npm `@moonshot-ai/kimi-code`, what the `kimi-code` lane
//! drives) and the legacy Python kimi-cli (PyPI `kimi-cli`). The lane's `command-capability`
//! probe looks for `--output-format <format>`, which only Kimi Code's help prints (kimi-cli
//! 1.51 prints `--output-format [text|stream-json]` and needs `--print` with it, and its text
//! output is wrapped for an 80-column terminal). When that probe says no, the refusal names
//! both tools so the user knows which one to install.

use gsd_lane_sdk::{LanePlan, Probe};

use crate::refusal::{Reason, Refusal};

/// The program name Kimi Code and the legacy kimi-cli share.
pub const KIMI: &str = "kimi";

/// `refusal`, with the tools named when a capability probe of `kimi` failed.
pub fn explain(plan: &LanePlan, mut refusal: Refusal) -> Refusal {
    let probes_kimi = matches!(
        &plan.probe,
        Probe::CommandCapability { binary, .. } if binary == KIMI
    );
    if probes_kimi && refusal.reason == Reason::ProbeFailed {
        refusal.detail.push_str(
            "; this lane needs Kimi Code 2.x (npm @moonshot-ai/kimi-code); the `kimi` found is \
             another program, such as the legacy Python kimi-cli (PyPI kimi-cli), whose output \
             is formatted for a terminal and is not used",
        );
    }
    refusal
}
