//! Confinement of spawned lanes: the read-only posture and lane death with gsd-lane.
//!
//! Every lane process is started through a small launcher, which is gsd-lane itself re-executed
//! with a hidden first argument ([`launcher::LAUNCH_ARG`]). The launcher, still running as the
//! process-group leader the spawner created:
//!
//! 1. checks that its parent is the gsd-lane that started it (a parent that died before the
//!    launcher ran is noticed here, and nothing is started);
//! 2. when asked to, restricts itself with Landlock so that nothing under the repository root
//!    can be created, written, truncated, renamed, linked or removed ([`landlock`], Linux);
//! 3. starts the lane as its own child, in the same process group, and mirrors its exit status;
//! 4. watches its parent: when gsd-lane is gone (even by `SIGKILL`), it kills its whole process
//!    group, so the lane and every grandchild that stayed in the group end too;
//! 5. when the lane ends while other processes remain in the group, hands the watch over to a
//!    [`guard`] before ending (gsd-lane needs the launcher's exit to learn the lane's status).
//!
//! Where enforcement is unavailable (no Landlock, another OS) or not chosen, [`detect`] compares
//! the repository before and after a lane and reports any change (`detect`).

mod detect;
mod guard;
mod landlock;
pub(crate) mod launcher;
mod mode;
pub(crate) mod policy;

pub use mode::{Posture, SandboxMode};
