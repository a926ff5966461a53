//! The `Diagnosis:` line, the last element of the empty-output stub (upstream #4275,
//! `spec/upstream-since-2026-08.md` §7.4): which effort the lane ran at and how its process
//! ended, so a clean empty exit reads as a model that stopped short rather than a crash.

use crate::config::effort::EffortLevel;
use crate::output::neutralize;

/// The tail of a clean exit (starts with a space and U+2014).
const CLEAN_EXIT_TAIL: &str = " \u{2014} a clean exit that produced no output is most often a model ending its turn without writing a final message rather than a crash; if this lane carries a reasoning effort, raising it is the usual fix.";

/// How a lane's last process ended, as the stub's `Diagnosis:` line words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessEnd {
    /// Killed by the outer timeout (spawn error `ETIMEDOUT`).
    TimedOut,
    /// No exit status: the process never ran (its error code) or died from a signal (`None`).
    Abnormal(Option<String>),
    /// Exit status 0.
    Clean,
    /// Any other exit status.
    Status(i32),
}

impl ProcessEnd {
    /// The §7.4 reading of a spawn report, checked in its order: `ETIMEDOUT`, no exit status,
    /// status 0, any other status.
    pub fn of(exit_code: Option<i32>, error_code: Option<&str>) -> ProcessEnd {
        match (error_code, exit_code) {
            (Some("ETIMEDOUT"), _) => ProcessEnd::TimedOut,
            (code, None) => ProcessEnd::Abnormal(code.map(str::to_owned)),
            (_, Some(0)) => ProcessEnd::Clean,
            (_, Some(status)) => ProcessEnd::Status(status),
        }
    }

    /// `<ending><tail>`.
    fn words(&self) -> String {
        match self {
            ProcessEnd::TimedOut => "was killed by the outer timeout.".to_owned(),
            ProcessEnd::Abnormal(Some(code)) => {
                format!("did not exit normally ({}).", neutralize(code))
            }
            ProcessEnd::Abnormal(None) => "did not exit normally (killed by a signal).".to_owned(),
            ProcessEnd::Clean => format!("exited cleanly inside the timeout{CLEAN_EXIT_TAIL}"),
            ProcessEnd::Status(status) => format!("exited with status {status}."),
        }
    }
}

/// What the line says about one lane run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A spawn lane: the effort level that went into its argv, and how its last process ended
    /// (`None`: no process outcome, e.g. nothing was started).
    Spawn {
        /// The rendered (clamped) level, when the effort argv expanded.
        effort: Option<EffortLevel>,
        /// How the process ended.
        end: Option<ProcessEnd>,
    },
    /// An `openai-http` lane (no process, no effort).
    Http,
}

/// `Diagnosis: <slug> <effort-part> and <ending><tail>`, or `Diagnosis: <slug> <effort-part>.`
/// when there is no process outcome (§7.4). No final newline.
pub fn line(slug: &str, subject: &Subject) -> String {
    let slug = neutralize(slug);
    match subject {
        Subject::Http => {
            format!("Diagnosis: {slug} is an HTTP lane and carries no reasoning-effort setting.")
        }
        Subject::Spawn { effort, end } => {
            let effort = match effort {
                Some(level) => format!("ran at effort={level}"),
                None => "ran with no effort argument, so the reviewer CLI's own configuration \
                         applied"
                    .to_owned(),
            };
            match end {
                Some(end) => format!("Diagnosis: {slug} {effort} and {}", end.words()),
                None => format!("Diagnosis: {slug} {effort}."),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn(effort: Option<EffortLevel>, end: Option<ProcessEnd>) -> Subject {
        Subject::Spawn { effort, end }
    }

    #[test]
    fn texts_are_upstreams() {
        assert_eq!(
            line(
                "codex",
                &spawn(Some(EffortLevel::High), Some(ProcessEnd::TimedOut))
            ),
            "Diagnosis: codex ran at effort=high and was killed by the outer timeout."
        );
        assert_eq!(
            line("claude", &spawn(Some(EffortLevel::Xhigh), Some(ProcessEnd::Clean))),
            "Diagnosis: claude ran at effort=xhigh and exited cleanly inside the timeout \u{2014} a clean exit that produced no output is most often a model ending its turn without writing a final message rather than a crash; if this lane carries a reasoning effort, raising it is the usual fix."
        );
        assert_eq!(
            line("qwen", &spawn(None, Some(ProcessEnd::Status(3)))),
            "Diagnosis: qwen ran with no effort argument, so the reviewer CLI's own configuration applied and exited with status 3."
        );
        assert_eq!(
            line(
                "qwen",
                &spawn(None, Some(ProcessEnd::Abnormal(Some("ENOENT".into()))))
            ),
            "Diagnosis: qwen ran with no effort argument, so the reviewer CLI's own configuration applied and did not exit normally (ENOENT)."
        );
        assert_eq!(
            line("qwen", &spawn(None, Some(ProcessEnd::Abnormal(None)))),
            "Diagnosis: qwen ran with no effort argument, so the reviewer CLI's own configuration applied and did not exit normally (killed by a signal)."
        );
        assert_eq!(
            line("opencode", &spawn(Some(EffortLevel::Low), None)),
            "Diagnosis: opencode ran at effort=low."
        );
        let http = line("ollama", &Subject::Http);
        assert_eq!(
            http,
            "Diagnosis: ollama is an HTTP lane and carries no reasoning-effort setting."
        );
        assert!(
            !http.contains("CLI"),
            "the HTTP wording never mentions a CLI"
        );
    }

    #[test]
    fn only_a_clean_exit_gets_the_hint() {
        for end in [
            ProcessEnd::TimedOut,
            ProcessEnd::Abnormal(None),
            ProcessEnd::Abnormal(Some("EACCES".into())),
            ProcessEnd::Status(1),
        ] {
            let text = line("claude", &spawn(Some(EffortLevel::High), Some(end)));
            assert!(!text.contains('\u{2014}'), "{text}");
            assert!(text.ends_with('.'), "{text}");
        }
    }

    #[test]
    fn the_order_of_checks_is_section_7_4s() {
        // ETIMEDOUT wins over an exit status; no status wins over the error code's absence.
        assert_eq!(
            ProcessEnd::of(Some(0), Some("ETIMEDOUT")),
            ProcessEnd::TimedOut
        );
        assert_eq!(
            ProcessEnd::of(None, Some("ETIMEDOUT")),
            ProcessEnd::TimedOut
        );
        assert_eq!(
            ProcessEnd::of(None, Some("ENOBUFS")),
            ProcessEnd::Abnormal(Some("ENOBUFS".into()))
        );
        assert_eq!(ProcessEnd::of(None, None), ProcessEnd::Abnormal(None));
        assert_eq!(ProcessEnd::of(Some(0), None), ProcessEnd::Clean);
        assert_eq!(ProcessEnd::of(Some(0), Some("EPERM")), ProcessEnd::Clean);
        assert_eq!(ProcessEnd::of(Some(-1), None), ProcessEnd::Status(-1));
    }
}
