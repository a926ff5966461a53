//! Asking for consent: `--yes` skips, a terminal is asked, anything else is refused.

use std::io::{BufRead, IsTerminal, Write};

/// The answer to a consent question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// `--yes`, or the user typed yes.
    Yes,
    /// The user declined.
    No,
    /// No terminal and no `--yes`: nothing was asked.
    NoTerminal,
}

/// Asks `question` on stderr and reads the answer from a terminal.
pub fn ask(question: &str, yes: bool) -> Answer {
    if yes {
        return Answer::Yes;
    }
    if !std::io::stdin().is_terminal() {
        return Answer::NoTerminal;
    }
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "{question} [y/N] ");
    let _ = stderr.flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return Answer::No;
    }
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Answer::Yes,
        _ => Answer::No,
    }
}
