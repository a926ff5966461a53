//! The watchdog process itself (`gsd-lane __lane-watchdog`): it keeps a ledger of what gsd-lane
//! tells it ([`super`] has the protocol) until its input ends, then kills what is left.

use std::io::Read;

/// What the watchdog has been told so far.
#[derive(Debug, Default, PartialEq, Eq)]
struct Ledger {
    /// Starts announced and not yet resolved.
    pending: usize,
    /// Groups registered and not yet forgotten.
    groups: Vec<u32>,
}

/// Longest protocol line; a longer one (never written by gsd-lane) is ignored.
const MAX_LINE: usize = 32;

impl Ledger {
    /// Applies one protocol line (without its newline); anything else is ignored.
    fn apply(&mut self, line: &[u8]) {
        let number = |digits: &[u8]| -> Option<u32> {
            std::str::from_utf8(digits)
                .ok()?
                .parse()
                .ok()
                .filter(|g| *g > 1)
        };
        match line {
            b"s" => self.pending += 1,
            b"x" => self.pending = self.pending.saturating_sub(1),
            [b'+', digits @ ..] => {
                if let Some(group) = number(digits) {
                    self.pending = self.pending.saturating_sub(1);
                    self.groups.push(group);
                }
            }
            [b'-', digits @ ..] => {
                if let Some(at) =
                    number(digits).and_then(|g| self.groups.iter().position(|x| *x == g))
                {
                    self.groups.swap_remove(at);
                }
            }
            _ => {}
        }
    }

    /// Reads protocol lines from `input` until its end (or a read error, which is the same:
    /// gsd-lane can no longer talk to us).
    fn read_all(&mut self, mut input: impl Read) {
        let mut buf = [0_u8; 4096];
        let mut line: Vec<u8> = Vec::with_capacity(MAX_LINE);
        let mut overlong = false;
        loop {
            let n = match input.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            for &byte in buf.get(..n).unwrap_or_default() {
                if byte == b'\n' {
                    if !overlong {
                        self.apply(&line);
                    }
                    line.clear();
                    overlong = false;
                } else if line.len() < MAX_LINE {
                    line.push(byte);
                } else {
                    overlong = true;
                }
            }
        }
    }
}

/// The watchdog's life: read until gsd-lane is gone, then end what it left.
pub(super) fn watch(input: impl Read, token: &str) {
    let mut ledger = Ledger::default();
    ledger.read_all(input);
    for group in &ledger.groups {
        sys::kill_group(*group);
    }
    if ledger.pending > 0 {
        sys::kill_marked(token);
    }
}

#[cfg(unix)]
mod sys {
    //! The watchdog's kills, through rustix's safe wrappers.

    use rustix::process::{getpgid, getpgrp, kill_process, kill_process_group, Pid, Signal};
    use std::io::Read;

    /// Sends `SIGKILL` to process group `group` (> 1, never the watchdog's own).
    pub(super) fn kill_group(group: u32) {
        let Some(group) = pid(group) else {
            return;
        };
        if group != getpgrp() {
            let _ = kill_process_group(group, Signal::KILL);
        }
    }

    /// Kills every process whose environment holds [`MARKER`](super::super::MARKER)`=<token>`:
    /// lanes whose group was never registered. The group too when the process leads it (a lane
    /// leads its own, so its grandchildren go with it); a marked process inside a group it does
    /// not lead (one it joined, a shell job's) takes only itself, never the rest of that group.
    pub(super) fn kill_marked(token: &str) {
        let Ok(listing) = std::fs::read_dir("/proc") else {
            return;
        };
        let wanted = format!("{}={token}", super::super::MARKER);
        let watchdog = std::process::id();
        for entry in listing.flatten() {
            let Some(number) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if number == watchdog || !has_variable(number, wanted.as_bytes()) {
                continue;
            }
            let Some(process) = pid(number) else {
                continue;
            };
            if getpgid(Some(process)).is_ok_and(|group| group == process) {
                kill_group(number);
            }
            let _ = kill_process(process, Signal::KILL);
        }
    }

    /// Most bytes of a process's environment read.
    const MAX_ENVIRON: u64 = 1 << 20;

    /// True when process `number`'s environment has the entry `wanted` (`NAME=value`).
    fn has_variable(number: u32, wanted: &[u8]) -> bool {
        let Ok(file) = std::fs::File::open(format!("/proc/{number}/environ")) else {
            return false;
        };
        let mut environ = Vec::new();
        if file.take(MAX_ENVIRON).read_to_end(&mut environ).is_err() {
            return false;
        }
        environ.split(|b| *b == 0).any(|entry| entry == wanted)
    }

    /// A pid above 1 (0 and 1 mean "our group" and "everyone" to `kill`).
    fn pid(number: u32) -> Option<Pid> {
        i32::try_from(number)
            .ok()
            .filter(|n| *n > 1)
            .and_then(Pid::from_raw)
    }
}

#[cfg(not(unix))]
mod sys {
    //! No watchdog kills on this OS (the watchdog is never enabled here).

    pub(super) fn kill_group(_group: u32) {}

    pub(super) fn kill_marked(_token: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger_of(input: &[u8]) -> Ledger {
        let mut ledger = Ledger::default();
        ledger.read_all(input);
        ledger
    }

    #[test]
    fn the_ledger_follows_starts_registrations_and_kills() {
        let ledger = ledger_of(b"s\n+100\ns\n+200\n-100\ns\n");
        assert_eq!(
            ledger,
            Ledger {
                pending: 1,
                groups: vec![200]
            }
        );
        assert_eq!(ledger_of(b"s\nx\n"), Ledger::default());
    }

    #[test]
    fn lines_gsd_lane_never_writes_are_ignored() {
        let long = format!("+{}\n+300\n", "9".repeat(100));
        let ledger = ledger_of(long.as_bytes());
        assert_eq!(ledger.groups, vec![300]);
        // Groups 0 and 1 would mean "our group" and "every process" to kill(2).
        assert_eq!(
            ledger_of(b"+0\n+1\n+-5\n+abc\n?\n").groups,
            Vec::<u32>::new()
        );
        // A line cut off by the end of input is not applied.
        assert_eq!(ledger_of(b"+400").groups, Vec::<u32>::new());
    }
}
