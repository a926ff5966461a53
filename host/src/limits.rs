//! How much may run at once: the open-file limit gsd-lane raises at start, and the default number
//! of lanes a `review` (and probes a `doctor`) runs side by side when `--jobs` is not given.
//!
//! Every running lane holds a handful of descriptors in gsd-lane (its pipes, its pidfd, the review
//! and sidecar files, the journal while it is written). With every selected lane started at once,
//! a review of 128 lanes at the common soft limit of 1,024 descriptors failed lanes with `EMFILE`.
//! The default is therefore bounded by the descriptors there are, and by the cores (lanes mostly
//! wait on a model, so several lanes per core run well).

/// Descriptors one running lane holds in gsd-lane at most, with a margin (measured: about 8).
pub const DESCRIPTORS_PER_LANE: u64 = 12;

/// Descriptors kept back for everything that is not a lane (stdio, the watchdog's pipe, the run
/// dir, configuration and manifest reads, the terminal).
pub const RESERVED_DESCRIPTORS: u64 = 64;

/// Lanes per core: a lane waits on a remote model most of its time.
pub const LANES_PER_CORE: usize = 16;

/// The open-file limit in force, after [`raise_open_file_limit`]: `None` where it is unlimited or
/// cannot be read (then only the cores bound the default).
#[must_use]
pub fn open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rustix::process::getrlimit(rustix::process::Resource::Nofile).current
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Raises the soft open-file limit to the hard one (as shells and most servers do), so that a
/// large review is not refused descriptors the user is allowed. Failure leaves the limit as it
/// was; the default number of jobs is then derived from the lower limit.
pub fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        let limit = getrlimit(Resource::Nofile);
        if limit.current != limit.maximum {
            let _ = setrlimit(
                Resource::Nofile,
                Rlimit {
                    current: limit.maximum,
                    maximum: limit.maximum,
                },
            );
        }
    }
}

/// The cores this process may use (1 when unknown).
#[must_use]
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// How many lanes may run at once by default: at most [`LANES_PER_CORE`] per core, and no more
/// than the descriptors left after [`RESERVED_DESCRIPTORS`] allow; at least 1.
#[must_use]
pub fn default_jobs(cores: usize, open_files: Option<u64>) -> usize {
    let by_cores = cores.max(1).saturating_mul(LANES_PER_CORE);
    let by_descriptors = open_files.map_or(usize::MAX, |limit| {
        let per_lane = limit.saturating_sub(RESERVED_DESCRIPTORS) / DESCRIPTORS_PER_LANE;
        usize::try_from(per_lane).unwrap_or(usize::MAX)
    });
    by_cores.min(by_descriptors).max(1)
}

/// [`default_jobs`] for this process, as it stands now.
#[must_use]
pub fn default_jobs_here() -> usize {
    default_jobs(cores(), open_file_limit())
}

/// Applies `work` to every item of `items`, at most `jobs` at once (at least 1), and returns
/// the answers in the items' order whatever order they finish in (`doctor`'s probes). The
/// calling thread works too, so a thread that cannot be started only lowers the concurrency.
pub fn map_bounded<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(index) else {
                return done;
            };
            done.push((index, work(item)));
        }
    };
    let helpers = jobs.max(1).min(items.len()).saturating_sub(1);
    let mut answers: Vec<(usize, R)> = std::thread::scope(|scope| {
        let started: Vec<_> = (0..helpers)
            .filter_map(|n| {
                std::thread::Builder::new()
                    .name(format!("gsd-jobs-{n}"))
                    .spawn_scoped(scope, worker)
                    .ok()
            })
            .collect();
        let mut all = worker();
        for handle in started {
            match handle.join() {
                Ok(done) => all.extend(done),
                // A panic in `work` is a bug: it goes on as it would have without threads.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    answers.sort_unstable_by_key(|(index, _)| *index);
    answers.into_iter().map(|(_, answer)| answer).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_bound_the_default() {
        // 256 descriptors: (256 - 64) / 12 = 16 lanes at once, whatever the cores.
        assert_eq!(default_jobs(64, Some(256)), 16);
        // The common soft limit of 1,024 with two cores: the cores bound it (32).
        assert_eq!(default_jobs(2, Some(1024)), 32);
        assert_eq!(default_jobs(2, Some(20_000)), 32);
    }

    #[test]
    fn never_below_one() {
        assert_eq!(default_jobs(0, Some(0)), 1);
        assert_eq!(default_jobs(1, Some(70)), 1);
        assert_eq!(default_jobs(1, Some(u64::MAX)), LANES_PER_CORE);
        assert_eq!(default_jobs(usize::MAX, None), usize::MAX);
    }

    #[test]
    fn bounded_map_keeps_the_order_and_the_bound() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let items: Vec<u64> = (0..200).collect();
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let answers = map_bounded(&items, 4, |n| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            // Later items finish first: the order must come from the items, not the finish.
            std::thread::sleep(std::time::Duration::from_micros(200 - n));
            running.fetch_sub(1, Ordering::SeqCst);
            n * 2
        });
        assert_eq!(answers, items.iter().map(|n| n * 2).collect::<Vec<_>>());
        let most = most.load(Ordering::SeqCst);
        assert!(most <= 4 && most > 1, "{most} at once");
        assert_eq!(map_bounded(&items[..3], 0, |n| *n), vec![0, 1, 2]);
        assert!(map_bounded(&[] as &[u8], 8, |n| *n).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn the_raised_limit_is_the_hard_one() {
        raise_open_file_limit();
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(limit.current, limit.maximum);
        assert_eq!(open_file_limit(), limit.current);
    }
}
