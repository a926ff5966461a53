//! SIGINT / SIGTERM during a review (issue item 8): a watcher thread turns the signal into a
//! process-wide flag, kills every live lane process group at once, and tells the coordinator.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether the review was interrupted.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Marks the review interrupted and kills every live lane process group (also the ones
/// starting from now on).
pub fn interrupt_now() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    crate::run::spawn::kill_all_live_groups();
}

/// A running signal watcher; dropping it stops the thread (the handlers stay installed).
pub struct Watcher {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// A part of the signal watcher that could not be set up, and why.
#[derive(Debug)]
pub struct WatcherError {
    /// The part: `signal watcher`, `SIGINT handler` or `SIGTERM handler`.
    pub part: &'static str,
    /// What setting it up said.
    pub source: std::io::Error,
}

impl std::fmt::Display for WatcherError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.part, self.source)
    }
}

impl std::error::Error for WatcherError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A [`WatcherError`] maker for `part`.
fn failed(part: &'static str) -> impl FnOnce(std::io::Error) -> WatcherError {
    move |source| WatcherError { part, source }
}

impl Watcher {
    /// Installs SIGINT and SIGTERM handlers; `notify` runs (on the watcher thread) after the
    /// lanes were killed.
    ///
    /// # Errors
    ///
    /// The runtime or the handlers could not be set up.
    pub fn install(notify: impl FnOnce() + Send + 'static) -> Result<Watcher, WatcherError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(failed("signal watcher"))?;
        let signals = {
            let _guard = runtime.enter();
            Signals::new()?
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("gsd-review-signals".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    let fired = tokio::select! {
                        () = signals.wait() => true,
                        _ = stopped => false,
                    };
                    if fired {
                        interrupt_now();
                        notify();
                    }
                });
            })
            .map_err(failed("signal watcher"))?;
        Ok(Watcher {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(unix)]
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn new() -> Result<Signals, WatcherError> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            int: signal(SignalKind::interrupt()).map_err(failed("SIGINT handler"))?,
            term: signal(SignalKind::terminate()).map_err(failed("SIGTERM handler"))?,
        })
    }

    async fn wait(mut self) {
        tokio::select! {
            _ = self.int.recv() => {},
            _ = self.term.recv() => {},
        }
    }
}

#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn new() -> Result<Signals, WatcherError> {
        Ok(Signals)
    }

    async fn wait(self) {
        let _ = tokio::signal::ctrl_c().await;
    }
}
