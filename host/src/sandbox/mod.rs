//! Confinement of spawned lanes: the read-only posture and lane death with gsd-lane.
//!
//! A confined lane is started from a spawner thread that first restricts itself with Landlock
//! ([`confine`], [`landlock`], Linux), so that nothing under the repository root can be created,
//! written, truncated, renamed, linked or removed by the lane or anything it starts; the ruleset
//! is built once per process and repository.
//!
//! Every lane process is started through a small launcher, which is gsd-lane itself re-executed
//! with a hidden first argument ([`launcher::LAUNCH_ARG`]) and inherits that restriction. The
//! launcher, still running as the process-group leader the spawner created:
//!
//! 1. checks that its parent is the gsd-lane that started it (a parent that died before the
//!    launcher ran is noticed here, and nothing is started);
//! 2. starts the lane as its own child, in the same process group, and mirrors its exit status;
//! 3. watches its parent: when gsd-lane is gone (even by `SIGKILL`), it kills its whole process
//!    group, so the lane and every grandchild that stayed in the group end too;
//! 4. when the lane ends while other processes remain in the group, hands the watch over to a
//!    [`guard`] before ending (gsd-lane needs the launcher's exit to learn the lane's status).
//!
//! Where enforcement is unavailable (no Landlock, another OS) or not chosen, [`detect`] compares
//! the repository before and after a lane and reports any change (`detect`).

pub(crate) mod confine;
pub(crate) mod detect;
pub(crate) mod guard;
pub(crate) mod landlock;
pub(crate) mod launcher;
mod mode;
pub(crate) mod policy;
mod protocol;

pub use mode::{Posture, SandboxMode};
