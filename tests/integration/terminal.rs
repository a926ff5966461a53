//! `gsd-lane review`'s live display on a real pseudo-terminal (util-linux `script` allocates
//! it): after Ctrl-C, typed as the byte 0x03 into the terminal, the final screen holds every
//! reviewer's line exactly once.
//!
//! The transcript is replayed through a small screen model that knows what the live display
//! writes (text, `\r`, `\n`, cursor up/down, erase line, erase below); anything else it ignores.
//! It does not model scrolling, so it guards the final screen, not the scrollback.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::review::{journaled, Lab};
use crate::util;

/// The screen after `transcript`: one string per row.
pub(crate) fn screen(transcript: &str) -> Vec<String> {
    let mut rows: Vec<Vec<char>> = vec![Vec::new()];
    let (mut row, mut col) = (0_usize, 0_usize);
    let mut chars = transcript.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => col = 0,
            '\n' => {
                row += 1;
                col = 0;
            }
            '\x1b' if chars.peek() == Some(&'[') => {
                chars.next();
                let mut param = String::new();
                let mut end = ' ';
                for p in chars.by_ref() {
                    if p.is_ascii_alphabetic() || p == '~' {
                        end = p;
                        break;
                    }
                    param.push(p);
                }
                let n = param
                    .trim_start_matches('?')
                    .parse::<usize>()
                    .unwrap_or(1)
                    .max(1);
                match end {
                    'A' => row = row.saturating_sub(n),
                    'B' => row += n,
                    'K' if param.is_empty() || param == "0" => {
                        if let Some(line) = rows.get_mut(row) {
                            line.truncate(col);
                        }
                    }
                    'K' => {
                        if let Some(line) = rows.get_mut(row) {
                            line.clear();
                        }
                    }
                    'J' => {
                        rows.truncate(row + 1);
                        if let Some(line) = rows.get_mut(row) {
                            line.truncate(col);
                        }
                    }
                    _ => {}
                }
            }
            c if c.is_control() => {}
            c => {
                while rows.len() <= row {
                    rows.push(Vec::new());
                }
                let line = &mut rows[row];
                while line.len() < col {
                    line.push(' ');
                }
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.push(c);
                }
                col += 1;
            }
        }
        while rows.len() <= row {
            rows.push(Vec::new());
        }
    }
    rows.into_iter().map(|l| l.into_iter().collect()).collect()
}

#[test]
fn the_screen_model_replays_erase_and_cursor_up() {
    let rows = screen("one\ntwo\x1b[1A\r\x1b[2Kuno\n\x1b[Jdos\n");
    assert_eq!(rows, ["uno", "dos", ""]);
}

#[test]
fn ctrl_c_on_a_terminal_leaves_each_reviewer_line_once() {
    let script = Path::new("/usr/bin/script");
    if !script.is_file() {
        eprintln!("skipped: no util-linux script(1) to allocate a pseudo-terminal");
        return;
    }
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.lane("gamma", |_| {});
    lab.behave("beta", "sleep 30");
    lab.behave("gamma", "sleep 30");
    let inner = lab.gsd_command(&["review", "--phase", "3", "--all"]);
    let mut command = Command::new(script);
    let line = format!(
        "stty cols 120 rows 40; exec '{}' review --phase 3 --all",
        util::bin().display()
    );
    command
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .env_clear()
        .envs(inner.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("TERM", "xterm")
        .current_dir(inner.get_current_dir().expect("project dir"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn script");
    let deadline = Instant::now() + Duration::from_secs(30);
    let sleeping = |slug: &str| lab.marks(slug).iter().any(|m| m.kind == "child");
    while !(journaled(&lab.tmp, "alpha") && sleeping("beta") && sleeping("gamma")) {
        assert!(Instant::now() < deadline, "lanes did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let the live display draw at least once more after alpha's line settled.
    std::thread::sleep(Duration::from_millis(300));
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"\x03").expect("type Ctrl-C");
    stdin.flush().expect("flush");
    let out = util::finish_bounded(
        child,
        "review on a terminal".to_owned(),
        Duration::from_secs(60),
    );
    drop(stdin);
    let rows = screen(&out.stdout);
    for name in ["Alpha", "Beta", "Gamma"] {
        let prefix = format!("◆ Reviewing with {name}...");
        let count = rows.iter().filter(|r| r.contains(&prefix)).count();
        assert_eq!(count, 1, "{name} shown {count} times:\n{}", rows.join("\n"));
    }
    assert!(
        rows.iter().any(|r| r.contains("REVIEW INTERRUPTED")),
        "{}",
        rows.join("\n")
    );
}
