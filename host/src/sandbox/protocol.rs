//! What the lane launcher and its guard agree on: their exit statuses and how often each checks
//! that gsd-lane is still alive.

use std::time::Duration;

/// Exit status of a launcher that could not set up (parent gone, bad arguments).
pub const LAUNCH_FAILED: u8 = 125;
/// Exit status of a launcher whose program could not be executed.
pub const EXEC_FAILED: u8 = 126;
/// Exit status of a launcher whose program does not exist.
pub const NOT_FOUND: u8 = 127;

/// How often the launcher checks that gsd-lane is still alive.
pub const PARENT_POLL: Duration = Duration::from_millis(50);
