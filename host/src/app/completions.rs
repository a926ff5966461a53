//! `gsd-lane completions <shell>`: clap_complete's script for the whole clap model (lane flags
//! included), with two repairs:
//!
//! - bash: clap_complete names the dispatch cases of a hyphenated binary `gsd__subcmd__lane__…`
//!   while its word walker produces `gsd__lane__…`, so nothing past the first word completes
//!   (clap-rs/clap#6421); the case labels are renamed to what the walker produces.
//! - every shell: hidden options (the `--compat-version` testing aid, inactive lanes' flags) are
//!   offered by the generators; their candidate lines and words are removed.

use std::collections::BTreeSet;

use clap::Command;
use clap_complete::Shell;

/// The completion script for `shell`.
pub fn script(shell: Shell, mut command: Command) -> String {
    command.build();
    let hidden = hidden_longs(&command);
    let mut bytes = Vec::new();
    clap_complete::generate(shell, &mut command, "gsd-lane", &mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let text = if shell == Shell::Bash {
        text.replace("gsd__subcmd__lane__subcmd__", "gsd__lane__subcmd__")
    } else {
        text
    };
    // Lane descriptions are overlay text, neutralised where they are made (review::args); no
    // raw control, bidi or invisible character reaches the script whatever slipped through.
    crate::textsafe::for_terminal_block(&strip_hidden(shell, &text, &hidden))
}

/// Long names (and aliases) of every hidden argument, in every subcommand.
fn hidden_longs(command: &Command) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let visible: BTreeSet<String> = command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .flat_map(|arg| arg.get_long_and_visible_aliases().unwrap_or_default())
        .map(str::to_owned)
        .collect();
    for arg in command.get_arguments().filter(|arg| arg.is_hide_set()) {
        names.extend(arg.get_long().map(str::to_owned));
        names.extend(
            arg.get_all_aliases()
                .unwrap_or_default()
                .into_iter()
                .map(str::to_owned),
        );
    }
    for arg in command.get_arguments() {
        // Hidden aliases of visible arguments are not offered either.
        for alias in arg.get_all_aliases().unwrap_or_default() {
            if !visible.contains(alias) {
                names.insert(alias.to_owned());
            }
        }
    }
    for sub in command.get_subcommands() {
        names.extend(hidden_longs(sub));
    }
    names
}

/// Removes the hidden options from a generated script.
fn strip_hidden(shell: Shell, text: &str, hidden: &BTreeSet<String>) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let offers_hidden = hidden.iter().any(|name| match shell {
            Shell::Zsh => {
                // `'--name[help]'`, `'--name=[help]:V:…'`, optionally after a `(conflicts)` list.
                let spec = line.trim_start();
                spec.starts_with('\'')
                    && (spec.contains(&format!("--{name}=["))
                        || spec.contains(&format!("--{name}[")))
            }
            Shell::Fish => {
                line.contains(&format!(" -l {name} ")) || line.ends_with(&format!(" -l {name}\n"))
            }
            Shell::Elvish => line.trim_start().starts_with(&format!("cand --{name} ")),
            Shell::PowerShell => line.contains(&format!("[CompletionResult]::new('--{name}'")),
            _ => false,
        });
        if offers_hidden {
            continue;
        }
        if shell == Shell::Bash && line.trim_start().starts_with("opts=\"") {
            let indent = &line[..line.len() - line.trim_start().len()];
            let words = line
                .trim()
                .trim_start_matches("opts=\"")
                .trim_end_matches('"');
            let kept: Vec<&str> = words
                .split(' ')
                .filter(|word| {
                    !word
                        .strip_prefix("--")
                        .is_some_and(|name| hidden.contains(name))
                })
                .collect();
            out.push_str(&format!("{indent}opts=\"{}\"\n", kept.join(" ")));
            continue;
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::args::{with_lane_flags, LaneFlags};

    /// A small command line with a `review` subcommand carrying `lanes`' flags (the app layer
    /// does not import the real one).
    fn with_lanes(lanes: &[LaneFlags]) -> Command {
        let root = Command::new("gsd-lane").subcommand(Command::new("review"));
        with_lane_flags(root, lanes)
    }

    /// Issue 20 item 10: a lane section validation did not stop reaches no completion script
    /// raw (zsh and fish show it as the flag's description).
    #[test]
    fn lane_descriptions_hold_no_raw_control() {
        let lanes = [LaneFlags {
            slug: "acme".into(),
            section: "Acme\u{1b}]0;pwned\u{7}\r\u{9b}2J\u{7f}\u{202e}\u{200b}\nforged".into(),
            flags: vec!["--acme".into()],
            active: true,
        }];
        for shell in [Shell::Zsh, Shell::Fish, Shell::Bash, Shell::Elvish] {
            let text = script(shell, with_lanes(&lanes));
            assert!(text.contains("acme"), "{shell}: no lane flag");
            assert!(
                !text
                    .chars()
                    .any(|c| crate::output::is_unsafe_for_terminal(c) && !matches!(c, '\n' | '\t')),
                "{shell}: raw control in the script"
            );
            assert!(!text.contains("\nforged"), "{shell}: forged line");
        }
    }
}
