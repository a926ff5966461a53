//! One review's detection: the roots walked once before the first lane that needs detection
//! starts and once after the last lane ended, instead of twice per lane.
//!
//! While a review runs its lanes, [`Session::begin`] makes its session the current one; a lane
//! that needs detection ([`crate::sandbox::policy::LaneSandbox::before`]) then goes through it:
//!
//! - lanes at once (`--jobs` above 1): the first such lane takes the "before" walk (every other
//!   lane waits for it before it starts, so nothing that could write ran before it);
//!   [`Session::finish`] takes the "after" walk and reports the changes as made during the
//!   review, by no lane in particular;
//! - one lane at a time (`--jobs 1`): each lane is compared on its own, and its "after" walk is
//!   the next lane's "before" (one walk per lane plus one), so its changes are its own.
//!
//! The session leaves out the whole run dir (every lane's own files and scratch directories)
//! and the scratch directories this process names in the temporary directory. A run dir that
//! holds a repository root gets no session: its lanes are compared one by one, each leaving out
//! only its own files.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{changes_of, Bounds, Comparison, Skip, Snapshot};

/// The roots a lane compares, each with the label its changes are named under.
pub type Labelled = [(PathBuf, String)];

/// The session of the running review (`None` outside one).
static CURRENT: Mutex<Option<Arc<Session>>> = Mutex::new(None);

/// One review's detection.
#[derive(Debug)]
pub struct Session {
    /// True when lanes run one at a time (each is compared on its own).
    per_lane: bool,
    /// What every walk leaves out.
    skip: Skip,
    /// The bounds of every walk.
    bounds: Bounds,
    /// The walks so far.
    state: Mutex<State>,
}

/// The walks of a session.
#[derive(Debug, Default)]
struct State {
    /// The roots of the first lane that needed detection.
    roots: Vec<(PathBuf, String)>,
    /// The "before" walk of the review (lanes at once).
    before: Option<Vec<Snapshot>>,
    /// The last "after" walk (one lane at a time), the next lane's "before".
    last: Option<Vec<Snapshot>>,
}

/// Clears the current session when dropped.
#[derive(Debug)]
pub struct Guard(Option<Arc<Session>>);

impl Guard {
    /// The changes made during the review (`None`: no lane needed detection, lanes were
    /// compared one by one, or there was no session).
    pub fn finish(self) -> Option<Comparison> {
        let session = self.0.as_ref()?;
        session.finish()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.0.is_some() {
            *lock(&CURRENT) = None;
        }
    }
}

/// Locks `mutex`, whatever a panicking holder left.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Session {
    /// Makes a session for the review whose run dir is `run_dir` the current one, unless the run
    /// dir holds one of `repository_roots`. `one_at_a_time`: lanes run one after another.
    pub fn begin(run_dir: &Path, repository_roots: &[PathBuf], one_at_a_time: bool) -> Guard {
        let run_dir = crate::sandbox::roots::resolved(run_dir);
        if repository_roots
            .iter()
            .any(|root| root.starts_with(&run_dir))
        {
            return Guard(None);
        }
        let session = Arc::new(Session {
            per_lane: one_at_a_time,
            skip: Skip {
                exact: vec![run_dir],
                prefixed: vec![crate::sandbox::policy::scratch_prefix()],
            },
            bounds: Bounds::from_env(),
            state: Mutex::new(State::default()),
        });
        *lock(&CURRENT) = Some(Arc::clone(&session));
        Guard(Some(session))
    }

    /// The current session, if a review runs.
    pub fn current() -> Option<Arc<Session>> {
        lock(&CURRENT).clone()
    }

    /// Walks `roots`.
    fn walk(&self, roots: &Labelled) -> Vec<Snapshot> {
        roots
            .iter()
            .map(|(root, label)| Snapshot::take(root, &self.skip, label, self.bounds))
            .collect()
    }

    /// Called before a lane that compares `roots` starts; returns the "before" walk the lane
    /// compares against itself (`None`: the review compares once at its end).
    pub fn before_lane(&self, roots: &Labelled) -> Option<Vec<Snapshot>> {
        let mut state = lock(&self.state);
        if self.per_lane {
            return Some(match state.last.take() {
                Some(last) if state.roots == roots => last,
                _ => {
                    state.roots = roots.to_vec();
                    self.walk(roots)
                }
            });
        }
        if state.before.is_none() {
            // Held while walking: a lane that needs detection does not start before it.
            state.roots = roots.to_vec();
            state.before = Some(self.walk(roots));
        }
        None
    }

    /// Called after a lane whose [`Session::before_lane`] gave `before` ended: its changes
    /// (nothing when the review compares once at its end).
    pub fn after_lane(&self, roots: &Labelled, before: Option<Vec<Snapshot>>) -> Comparison {
        let Some(before) = before else {
            return Comparison::default();
        };
        let after = self.walk(roots);
        let changes = changes_of(&before, &after);
        let mut state = lock(&self.state);
        state.roots = roots.to_vec();
        state.last = Some(after);
        changes
    }

    /// The changes since the review's "before" walk (lanes at once), from a walk taken now.
    fn finish(&self) -> Option<Comparison> {
        let mut state = lock(&self.state);
        let before = state.before.take()?;
        let after = self.walk(&state.roots);
        Some(changes_of(&before, &after))
    }
}
