//! What a review says to the user besides its progress and its result: typed [`Notice`]s
//! that the stages hand to one collector ([`Notices`]) owned by the review, instead of each
//! stage writing to stderr as it decides. The collector prints them through the one printer
//! ([`super::printer`]) at the review's boundaries: after each stage, before anything the
//! review writes to stdout (the banner, a progress line, an event) and at the end, so a notice
//! said before the lanes start is on the terminal before they do.
//!
//! Progress lines (`progress`) are not notices: they are the review's stdout.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;

/// How a notice is introduced on stderr, and who sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// `error: …`: why the review (or part of it) cannot go on.
    Error,
    /// `warning: …`: something the user should fix or know; the review goes on.
    Warning,
    /// `note: …`: context for a decision (e.g. runs a resume passed over).
    Note,
    /// `info: …`: what was decided; not shown with `-q`.
    Info,
    /// `verbose: …`: why it was decided; shown only with `-v`.
    Verbose,
    /// `review: …`: what the review did with its files (the run dir kept, REVIEWS.md written,
    /// how to resume).
    Review,
    /// `code-review: …`: what a code-review call did (how to resume it).
    CodeReview,
}

impl Level {
    /// The prefix of the line on stderr.
    pub fn prefix(self) -> &'static str {
        match self {
            Level::Error => "error: ",
            Level::Warning => "warning: ",
            Level::Note => "note: ",
            Level::Info => "info: ",
            Level::Verbose => "verbose: ",
            Level::Review => "review: ",
            Level::CodeReview => "code-review: ",
        }
    }
}

/// One thing a review says: its level and its text (without the prefix). The text may hold
/// what others wrote (lane names, refusal details): the printer neutralises the whole line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notice {
    /// How it is introduced, and who sees it.
    pub level: Level,
    /// What it says.
    pub text: String,
    /// Said at most once per process, however often it is raised (a warning about a shared
    /// input read more than once, as `output::eprint_once`).
    #[serde(skip)]
    pub once: bool,
}

impl Notice {
    /// A notice of `level` saying `text`.
    pub fn new(level: Level, text: impl Into<String>) -> Notice {
        Notice {
            level,
            text: text.into(),
            once: false,
        }
    }

    /// This notice, said at most once per process.
    #[must_use]
    pub fn once(self) -> Notice {
        Notice { once: true, ..self }
    }
}

/// Which notices the user asked to see (`-q`, `-v`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Verbosity {
    /// `-q`: no `info:` lines.
    pub quiet: bool,
    /// `-v` count: 0 normal, 1 or more adds the `verbose:` lines.
    pub verbose: u8,
}

impl Verbosity {
    /// Whether a notice of `level` is shown.
    pub fn shows(self, level: Level) -> bool {
        match level {
            Level::Info => !self.quiet,
            Level::Verbose => self.verbose > 0,
            Level::Error | Level::Warning | Level::Note | Level::Review | Level::CodeReview => true,
        }
    }
}

/// What the collector holds: the notices not printed yet, and those printed (for `--json`).
#[derive(Debug, Default)]
struct State {
    pending: Vec<Notice>,
    shown: Vec<Notice>,
}

/// The review's one collector of notices. Cloning shares it (the lane threads say through a
/// clone); [`Notices::flush`] prints what is pending, in the order it was said.
#[derive(Debug, Clone, Default)]
pub struct Notices {
    verbosity: Verbosity,
    state: Arc<Mutex<State>>,
}

impl Notices {
    /// An empty collector for a review with these `-q`/`-v` settings.
    pub fn new(verbosity: Verbosity) -> Notices {
        Notices {
            verbosity,
            state: Arc::default(),
        }
    }

    /// The collector of a command with `context`'s `-q`/`-v`.
    pub fn for_context(context: &crate::context::Context) -> Notices {
        Notices::new(Verbosity {
            quiet: context.quiet,
            verbose: context.verbose,
        })
    }

    /// Whether `-v` was given (a stage can skip composing the lines nobody will see).
    pub fn verbose_wanted(&self) -> bool {
        self.verbosity.verbose > 0
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A lane thread that panicked while holding the lock left whole notices behind.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `notice`, to be printed at the next flush.
    pub fn say(&self, notice: Notice) {
        self.state().pending.push(notice);
    }

    /// Says an `error:` notice.
    pub fn error(&self, text: impl Into<String>) {
        self.say(Notice::new(Level::Error, text));
    }

    /// Says a `warning:` notice.
    pub fn warn(&self, text: impl Into<String>) {
        self.say(Notice::new(Level::Warning, text));
    }

    /// Says a `note:` notice.
    pub fn note(&self, text: impl Into<String>) {
        self.say(Notice::new(Level::Note, text));
    }

    /// Says an `info:` notice (not shown with `-q`).
    pub fn info(&self, text: impl Into<String>) {
        self.say(Notice::new(Level::Info, text));
    }

    /// Says a `verbose:` notice (shown only with `-v`).
    pub fn verbose(&self, text: impl Into<String>) {
        self.say(Notice::new(Level::Verbose, text));
    }

    /// Says a `review:` notice (what the review did with its files).
    pub fn review(&self, text: impl Into<String>) {
        self.say(Notice::new(Level::Review, text));
    }

    /// Prints every pending notice the user asked to see, in the order they were said (the
    /// lock is held while printing, so notices from lane threads never interleave).
    pub fn flush(&self) {
        let mut state = self.state();
        let pending = std::mem::take(&mut state.pending);
        for notice in pending {
            if super::printer::print(&notice, self.verbosity) {
                state.shown.push(notice);
            }
        }
    }

    /// Every notice printed so far, in order (the `notices` of the `complete` event).
    pub fn shown(&self) -> Vec<Notice> {
        self.state().shown.clone()
    }

    /// The notices said and not printed yet (tests).
    #[cfg(test)]
    pub fn pending(&self) -> Vec<Notice> {
        self.state().pending.clone()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn each_level_has_its_prefix() {
        let prefixes: Vec<&str> = [
            Level::Error,
            Level::Warning,
            Level::Note,
            Level::Info,
            Level::Verbose,
            Level::Review,
        ]
        .into_iter()
        .map(Level::prefix)
        .collect();
        assert_eq!(
            prefixes,
            [
                "error: ",
                "warning: ",
                "note: ",
                "info: ",
                "verbose: ",
                "review: "
            ]
        );
    }

    #[test]
    fn quiet_hides_info_and_verbose_adds_its_lines() {
        let quiet = Verbosity {
            quiet: true,
            verbose: 0,
        };
        assert!(!quiet.shows(Level::Info));
        assert!(!quiet.shows(Level::Verbose));
        assert!(quiet.shows(Level::Warning));
        assert!(quiet.shows(Level::Error));
        let verbose = Verbosity {
            quiet: false,
            verbose: 1,
        };
        assert!(verbose.shows(Level::Info) && verbose.shows(Level::Verbose));
        assert!(Verbosity::default().shows(Level::Info));
        assert!(!Verbosity::default().shows(Level::Verbose));
    }

    #[test]
    fn a_flush_prints_what_is_pending_in_order_and_only_once() {
        let notices = Notices::new(Verbosity::default());
        notices.warn("first");
        notices.info("second");
        notices.verbose("hidden without -v");
        let clone = notices.clone();
        std::thread::spawn(move || clone.note("from a lane thread"))
            .join()
            .unwrap();
        assert_eq!(notices.pending().len(), 4);
        assert!(
            notices.shown().is_empty(),
            "nothing is printed before a flush"
        );
        notices.flush();
        assert!(notices.pending().is_empty());
        let shown: Vec<(Level, String)> = notices
            .shown()
            .into_iter()
            .map(|n| (n.level, n.text))
            .collect();
        assert_eq!(
            shown,
            [
                (Level::Warning, "first".to_owned()),
                (Level::Info, "second".to_owned()),
                (Level::Note, "from a lane thread".to_owned()),
            ]
        );
        notices.flush();
        assert_eq!(
            notices.shown().len(),
            3,
            "a second flush prints nothing again"
        );
    }

    #[test]
    fn notices_serialize_as_level_and_text() {
        let value = serde_json::to_value(Notice::new(Level::Warning, "x").once()).unwrap();
        assert_eq!(value, serde_json::json!({"level": "warning", "text": "x"}));
    }
}
