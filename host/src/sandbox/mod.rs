//! Confinement of spawned lanes: the read-only posture and lane death with gsd-lane.
//!
//! A confined lane is started from a spawner thread that first restricts itself with Landlock
//! ([`confine`], [`landlock`], Linux), so that nothing under the confined roots ([`roots`]: the
//! project and its git directories wherever gsd-lane was started, gsd-lane's own state, the run
//! dir but for the lane's own files and scratch directory) can be created, written, truncated,
//! renamed, linked or removed by the lane or anything it starts; the grants are listed once per
//! process and set of roots, and each lane gets a ruleset of its own.
//!
//! Every lane process leads a process group of its own, and one [`watchdog`] per gsd-lane
//! process (a forked copy of gsd-lane named `gsd-watchdog`, or gsd-lane re-executed with a hidden
//! first argument, [`watchdog::WATCHDOG_ARG`], started before the first lane) learns each group as its lane starts. When gsd-lane is gone
//! (even by `SIGKILL`), the watchdog kills every group still registered, so the lane and every
//! grandchild that stayed in its group end too.
//!
//! Where enforcement is unavailable (no Landlock, another OS) or not chosen, and under the
//! Landlock fallback (which governs no metadata), [`detect`] compares the repository before and
//! after the lanes (once per review when they run at once) and reports any change (`detect`).

pub(crate) mod confine;
pub(crate) mod detect;
pub(crate) mod error;
pub(crate) mod landlock;
mod mode;
#[cfg(target_os = "linux")]
pub(crate) mod namespace;
pub(crate) mod policy;
pub(crate) mod roots;
pub(crate) mod watchdog;

pub use mode::{Posture, SandboxMode};
