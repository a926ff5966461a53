//! Progress output (review-workflow.md §10), on stdout.
//!
//! - **Plain** (no terminal): the spec's lines, produced in run order whatever the completion
//!   order: an identity's prefix `◆ Reviewing with <Display>... ` is printed and flushed when it
//!   has started and every identity before it has finished; its ending follows when it ends.
//! - **Tty**: one live line per identity (spinner and elapsed time), ending in its outcome.
//! - **Json**: one compact JSON object per event, in the same order as the plain lines.
//!
//! When more lanes are selected than may run at once (`--jobs`, [`crate::limits`]), the lanes
//! past the bound wait in a queue, in run order: plain output says how many after the banner,
//! JSON has a `lane_queued` event per waiting identity (with its place in the queue), and the
//! terminal shows `queued (#k)` on each waiting line and a line counting running, queued and
//! done identities.

use std::io::Write;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};

use crate::textsafe::{for_terminal, json_for_terminal};

/// The rule line: 40 × U+2501.
pub const RULE: &str = "━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━";

/// How an identity ended, for its progress line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// A real review.
    Review,
    /// A diagnostic stub.
    Stub,
    /// Not run, with the reason.
    Skipped(String),
    /// Stopped by the interruption.
    Interrupted,
}

impl Ending {
    /// The text after the prefix.
    pub fn text(&self) -> String {
        match self {
            Ending::Review => "done ✓".to_owned(),
            Ending::Stub => "failed ✗ (diagnostic stub written)".to_owned(),
            Ending::Skipped(reason) => format!("skipped ({})", for_terminal(reason)),
            Ending::Interrupted => "interrupted ✗ (not completed)".to_owned(),
        }
    }

    fn outcome(&self) -> &'static str {
        match self {
            Ending::Review => "review",
            Ending::Stub => "stub",
            Ending::Skipped(_) => "skipped",
            Ending::Interrupted => "interrupted",
        }
    }
}

/// Which display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Plain lines.
    Plain,
    /// Live terminal lines.
    Tty,
    /// JSON events.
    Json,
}

/// One row of the display.
#[derive(Debug, Clone)]
pub struct Row {
    /// Identity.
    pub id: String,
    /// `<Display>`.
    pub display: String,
    /// The lane it runs through: a lane's identities run one after another on one slot.
    pub lane: String,
}

/// The progress display.
pub struct Progress {
    mode: Mode,
    rows: Vec<Row>,
    started: Vec<Option<Instant>>,
    ended: Vec<Option<(Ending, Duration)>>,
    cursor: usize,
    prefix_shown: bool,
    bars: Vec<ProgressBar>,
    multi: Option<MultiProgress>,
    /// How many lanes may run at once.
    jobs: usize,
    /// The terminal's counting line, when some lanes wait.
    counts: Option<ProgressBar>,
}

/// Each row's place in the queue when the review starts (`None`: its lane has a slot at once):
/// the lanes
/// take their slots in run order of their first identity, `jobs` at a time, so the rows of the
/// lanes past the first `jobs` wait, and a lane's place is its order past the bound.
pub fn queue_places(rows: &[Row], jobs: usize) -> Vec<Option<usize>> {
    let mut lanes: Vec<&str> = Vec::new();
    rows.iter()
        .map(|row| {
            let order = lanes
                .iter()
                .position(|lane| *lane == row.lane)
                .unwrap_or_else(|| {
                    lanes.push(&row.lane);
                    lanes.len() - 1
                });
            (order >= jobs.max(1)).then(|| order + 1 - jobs.max(1))
        })
        .collect()
}

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Prints one JSON event line (terminal-unsafe characters `\u`-escaped, the value unchanged).
pub fn event(value: &Value) {
    print(&format!("{}\n", json_for_terminal(&value.to_string())));
}

/// An identity's line up to its outcome; the display (a lane's `reviewsSection`, overlay
/// text) is neutralised: validation refuses unsafe characters there, and this holds anyway.
fn prefix(display: &str) -> String {
    format!("◆ Reviewing with {}... ", for_terminal(display))
}

/// The banner before any lane starts; the subject (a prompt file's name) is neutralised.
fn banner_text(subject: &str) -> String {
    format!(
        "{RULE}\n GSD ► CROSS-AI REVIEW — {}\n{RULE}\n\n",
        for_terminal(subject)
    )
}

impl Progress {
    /// A display for `rows` (run order).
    pub fn new(mode: Mode, rows: Vec<Row>) -> Progress {
        let n = rows.len();
        Progress {
            mode,
            rows,
            started: vec![None; n],
            ended: vec![None; n],
            cursor: 0,
            prefix_shown: false,
            bars: Vec::new(),
            multi: None,
            jobs: usize::MAX,
            counts: None,
        }
    }

    /// The display of a run with at most `jobs` lanes at once (unbounded by default).
    #[must_use]
    pub fn with_jobs(mut self, jobs: usize) -> Progress {
        self.jobs = jobs.max(1);
        self
    }

    /// `running R, queued Q, done D of N (at most J at once)`.
    fn counts_text(&self) -> String {
        let done = self.ended.iter().filter(|e| e.is_some()).count();
        let running = self
            .started
            .iter()
            .zip(&self.ended)
            .filter(|(s, e)| s.is_some() && e.is_none())
            .count();
        let queued = self.rows.len() - done - running;
        format!(
            "running {running}, queued {queued}, done {done} of {} (at most {} at once)",
            self.rows.len(),
            self.jobs
        )
    }

    /// Shows the queue once the banner is out.
    fn show_queue(&mut self) {
        let places = queue_places(&self.rows, self.jobs);
        let queued = places.iter().filter(|p| p.is_some()).count();
        if queued == 0 {
            return;
        }
        match self.mode {
            Mode::Json => {
                for (row, place) in self.rows.iter().zip(&places) {
                    if let Some(place) = place {
                        event(&json!({
                            "event": "lane_queued",
                            "identity": row.id,
                            "display": row.display,
                            "position": place,
                        }));
                    }
                }
            }
            Mode::Plain => print(&format!(
                "{queued} of {} reviewers wait in a queue (at most {} at once; --jobs sets it)\n\n",
                self.rows.len(),
                self.jobs
            )),
            Mode::Tty => {
                if let Some(multi) = &self.multi {
                    let counts = multi.add(ProgressBar::new_spinner());
                    counts.set_style(
                        ProgressStyle::with_template("{msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    counts.set_message(self.counts_text());
                    self.counts = Some(counts);
                }
            }
        }
    }

    /// Updates the terminal's counting line, and the places of the lines still queued (the
    /// queue moves up as lanes start).
    fn recount(&self) {
        let Some(counts) = &self.counts else {
            return;
        };
        counts.set_message(self.counts_text());
        let mut ahead: Vec<&str> = Vec::new();
        for (index, (bar, row)) in self.bars.iter().zip(&self.rows).enumerate() {
            let waiting = self.started.get(index).is_some_and(Option::is_none)
                && self.ended.get(index).is_some_and(Option::is_none);
            let lane_running = self.rows.iter().enumerate().any(|(other, r)| {
                r.lane == row.lane
                    && self.started.get(other).is_some_and(Option::is_some)
                    && self.ended.get(other).is_some_and(Option::is_none)
            });
            if !waiting || lane_running {
                continue;
            }
            if !ahead.contains(&row.lane.as_str()) {
                ahead.push(&row.lane);
            }
            let place = ahead.len();
            bar.set_message(format!("{}queued (#{place})", prefix(&row.display)));
        }
    }

    /// The banner (or the JSON `review` event) before any lane starts.
    pub fn banner(&mut self, subject: &str, extra: &Value) {
        match self.mode {
            Mode::Json => {
                let mut value = json!({"event": "review", "subject": subject});
                if let (Some(map), Some(more)) = (value.as_object_mut(), extra.as_object()) {
                    map.extend(more.clone());
                }
                event(&value);
            }
            Mode::Plain | Mode::Tty => print(&banner_text(subject)),
        }
        if self.mode == Mode::Tty {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stdout());
            let places = queue_places(&self.rows, self.jobs);
            for (row, place) in self.rows.iter().zip(places) {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(
                    ProgressStyle::with_template("{msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                // A line whose lane has a slot is starting; the others wait in the queue.
                bar.set_message(match place {
                    Some(place) => format!("{}queued (#{place})", prefix(&row.display)),
                    None => format!("{}starting", prefix(&row.display)),
                });
                self.bars.push(bar);
            }
            self.multi = Some(multi);
        }
        self.show_queue();
    }

    /// Identity `index` started.
    pub fn started(&mut self, index: usize) {
        if let Some(slot) = self.started.get_mut(index) {
            slot.get_or_insert_with(Instant::now);
        }
        if let (Mode::Tty, Some(bar), Some(row)) =
            (self.mode, self.bars.get(index), self.rows.get(index))
        {
            let style = ProgressStyle::with_template("{msg}{spinner} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner())
                .tick_chars("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ ");
            bar.set_style(style);
            bar.set_message(prefix(&row.display));
            bar.reset_elapsed();
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        self.recount();
        self.advance();
    }

    /// Identity `index` ended.
    pub fn ended(&mut self, index: usize, ending: Ending) {
        let elapsed = self
            .started
            .get(index)
            .copied()
            .flatten()
            .map_or(Duration::ZERO, |at| at.elapsed());
        if let (Mode::Tty, Some(bar), Some(row)) =
            (self.mode, self.bars.get(index), self.rows.get(index))
        {
            bar.set_style(
                ProgressStyle::with_template("{msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            let time = if self.started.get(index).copied().flatten().is_some() {
                format!(" ({:.1} s)", elapsed.as_secs_f64())
            } else {
                String::new()
            };
            bar.finish_with_message(format!("{}{}{time}", prefix(&row.display), ending.text()));
        }
        if let Some(slot) = self.ended.get_mut(index) {
            *slot = Some((ending, elapsed));
        }
        self.recount();
        self.advance();
    }

    /// Prints what the run order allows (plain and JSON modes).
    fn advance(&mut self) {
        if self.mode == Mode::Tty {
            return;
        }
        while let Some(row) = self.rows.get(self.cursor) {
            let ended = self.ended.get(self.cursor).cloned().flatten();
            let started = self.started.get(self.cursor).copied().flatten().is_some();
            if !self.prefix_shown && (started || ended.is_some()) {
                match self.mode {
                    Mode::Json => event(
                        &json!({"event": "lane_start", "identity": row.id, "display": row.display}),
                    ),
                    _ => print(&prefix(&row.display)),
                }
                self.prefix_shown = true;
            }
            let Some((ending, elapsed)) = ended else {
                return;
            };
            match self.mode {
                Mode::Json => {
                    let mut value = json!({
                        "event": "lane_end",
                        "identity": row.id,
                        "display": row.display,
                        "outcome": ending.outcome(),
                        "elapsed_ms": u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                    });
                    if let (Ending::Skipped(reason), Some(map)) = (&ending, value.as_object_mut()) {
                        map.insert("reason".into(), json!(reason));
                    }
                    event(&value);
                }
                _ => print(&format!("{}\n", ending.text())),
            }
            self.cursor += 1;
            self.prefix_shown = false;
        }
    }

    /// Ends the live display (terminal mode) and leaves a blank line before what follows.
    pub fn finish(&mut self) {
        if let Some(multi) = self.multi.take() {
            // Every live line is erased (finished ones included) before the final lines are
            // printed once each: an abandoned bar stays drawn, and after Ctrl-C that left the
            // interrupted reviewers' lines on screen twice.
            for bar in self.bars.iter().chain(&self.counts) {
                bar.finish_and_clear();
            }
            let _ = multi.clear();
            for (row, ended) in self.rows.iter().zip(&self.ended) {
                let ending = ended.as_ref().map_or_else(
                    || "not completed".to_owned(),
                    |(e, elapsed)| match e {
                        Ending::Review | Ending::Stub | Ending::Interrupted => {
                            format!("{} ({:.1} s)", e.text(), elapsed.as_secs_f64())
                        }
                        Ending::Skipped(_) => e.text(),
                    },
                );
                print(&format!("{}{ending}\n", prefix(&row.display)));
            }
        }
        if self.mode != Mode::Json {
            print("\n");
        }
    }

    /// The display mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str =
        "Acme\u{1b}]0;pwned\u{7}\r\u{1b}[2K\u{9b}1A\u{7f}\u{202e}x\u{200b}\nforged";

    fn raw_control(text: &str) -> bool {
        text.chars()
            .any(|c| crate::output::is_unsafe_for_terminal(c) && c != '\n')
    }

    /// Issue 20 item 10: overlay text in the progress lines and the banner reaches the terminal
    /// neutralised even when validation did not stop it.
    #[test]
    fn progress_lines_and_banner_hold_no_raw_control() {
        for text in [
            prefix(HOSTILE),
            banner_text(HOSTILE),
            Ending::Skipped(HOSTILE.to_owned()).text(),
        ] {
            assert!(!raw_control(&text), "{text:?}");
            assert!(text.contains("\\u{1b}]0;pwned"), "{text:?}");
        }
        assert_eq!(banner_text(HOSTILE).lines().count(), 4, "no forged line");
        let value = json!({"event": "lane_start", "display": HOSTILE});
        let line = json_for_terminal(&value.to_string());
        assert!(!raw_control(&line), "{line:?}");
        assert_eq!(serde_json::from_str::<Value>(&line).ok(), Some(value));
    }

    fn row(id: &str, lane: &str) -> Row {
        Row {
            id: id.to_owned(),
            display: id.to_owned(),
            lane: lane.to_owned(),
        }
    }

    /// Lanes past the bound wait in run order; a lane's later identities share its place.
    #[test]
    fn the_lanes_past_the_bound_are_queued_in_run_order() {
        let rows = [row("a", "a"), row("b", "b"), row("c", "c")];
        assert_eq!(queue_places(&rows, 1), vec![None, Some(1), Some(2)]);
        assert_eq!(queue_places(&rows, 3), vec![None, None, None]);
        assert_eq!(queue_places(&rows, 0), vec![None, Some(1), Some(2)]);
        let instances = [row("x1", "op"), row("x2", "op"), row("y", "codex")];
        assert_eq!(queue_places(&instances, 1), vec![None, None, Some(1)]);
        let mut display = Progress::new(Mode::Plain, rows.to_vec()).with_jobs(1);
        assert_eq!(
            display.counts_text(),
            "running 0, queued 3, done 0 of 3 (at most 1 at once)"
        );
        display.started[0] = Some(Instant::now());
        display.ended[1] = Some((Ending::Review, Duration::ZERO));
        assert_eq!(
            display.counts_text(),
            "running 1, queued 1, done 1 of 3 (at most 1 at once)"
        );
    }
}
