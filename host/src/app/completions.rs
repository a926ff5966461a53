//! `gsd-lane completions <shell>`: clap_complete's script for the whole clap model (lane flags
//! included), with two repairs:
//!
//! - bash: clap_complete names the dispatch cases of a hyphenated binary `gsd__subcmd__lane__…`
//!   while its word walker produces `gsd__lane__…`, so nothing past the first word completes
//!   (clap-rs/clap#6421); the case labels are renamed to what the walker produces.
//! - every shell: hidden options (the `--compat-version` testing aid, inactive lanes' flags) are
//!   offered by the generators; their candidate lines and words are removed.
//!
//! Arguments that take free text for the parser get their values for completion only
//! ([`with_values`]): lane slugs (computed when the script is generated, like the lane flags)
//! for `run`, `invoke`, `doctor`, `disclose` and `trust approve|revoke|rebind-host`, and the
//! modes of `--sandbox`. A slug reaches a script only if it has the slug grammar, so a hostile
//! manifest cannot put shell text into a completion script the user sources.

use std::collections::BTreeSet;

use clap::builder::PossibleValuesParser;
use clap::Command;
use clap_complete::Shell;

/// The arguments that name a lane by slug: `(subcommand path, argument id)`.
const SLUG_ARGS: [(&[&str], &str); 3] = [
    (&["run"], "slug"),
    (&["invoke"], "slug"),
    (&["doctor"], "slugs"),
];

/// The arguments that take a capability id or a lane slug.
const ID_ARGS: [(&[&str], &str); 4] = [
    (&["disclose"], "ids"),
    (&["trust", "approve"], "id"),
    (&["trust", "revoke"], "id"),
    (&["trust", "rebind-host"], "id"),
];

/// The subcommands with a `--sandbox` option.
const SANDBOX_ARGS: [&str; 3] = ["run", "invoke", "review"];

/// True for a word that may be offered as a lane slug or capability id: the slug grammar
/// `^[a-z0-9][a-z0-9_-]*$`, at most 64 bytes (nothing a shell would expand or split).
pub fn offerable(word: &str) -> bool {
    word.len() <= 64
        && word.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && word
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// `command` with `values` as the possible values of argument `id` of subcommand `path`
/// (left as it is when the path or the argument does not exist).
fn offer(command: Command, path: &[&str], id: &str, values: &[String]) -> Command {
    let Some((first, rest)) = path.split_first() else {
        let exists = command.get_arguments().any(|arg| arg.get_id() == id);
        if !exists {
            return command;
        }
        let values = values.to_vec();
        return command.mut_arg(id, |arg| {
            arg.value_parser(PossibleValuesParser::new(values))
        });
    };
    if command.find_subcommand(first).is_none() {
        return command;
    }
    command.mut_subcommand(*first, |sub| offer(sub, rest, id, values))
}

/// The offerable words of `names`, sorted, without duplicates.
fn words<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut words: Vec<String> = names.filter(|s| offerable(s)).cloned().collect();
    words.sort();
    words.dedup();
    words
}

/// `command` (for completion only) offering lane `slugs` where a lane is named (and the
/// capability `ids` too where either is taken) and the sandbox modes after `--sandbox`; a
/// name without the slug grammar is left out.
pub fn with_values(mut command: Command, slugs: &[String], ids: &[String]) -> Command {
    let lanes = words(slugs.iter());
    for (path, id) in SLUG_ARGS {
        command = offer(command, path, id, &lanes);
    }
    let either = words(slugs.iter().chain(ids));
    for (path, id) in ID_ARGS {
        command = offer(command, path, id, &either);
    }
    let modes: Vec<String> = crate::sandbox::SandboxMode::ALL
        .iter()
        .map(|mode| mode.as_str().to_owned())
        .collect();
    for sub in SANDBOX_ARGS {
        command = offer(command, &[sub], "sandbox", &modes);
    }
    command
}

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
    let mut text = strip_hidden(shell, &text, &hidden);
    if shell == Shell::Fish {
        text.push_str(&fish_positionals(&command));
    }
    // Lane descriptions are overlay text, neutralised where they are made (review::args); no
    // raw control, bidi or invisible character reaches the script whatever slipped through.
    crate::textsafe::for_terminal_block(&text)
}

/// fish: clap_complete offers values only after options, so the lane slugs of positional
/// arguments (`run <slug>`, `trust approve <id>`, …) get a `complete` line of their own.
fn fish_positionals(command: &Command) -> String {
    let mut lines = String::new();
    for (path, id) in SLUG_ARGS.iter().chain(ID_ARGS.iter()) {
        let Some(sub) = path
            .iter()
            .try_fold(command, |cmd, name| cmd.find_subcommand(name))
        else {
            continue;
        };
        let Some(arg) = sub
            .get_arguments()
            .find(|arg| arg.get_id() == *id && arg.is_positional())
        else {
            continue;
        };
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .map(|value| value.get_name().to_owned())
            .filter(|value| offerable(value))
            .collect();
        let condition = match path {
            [only] => format!("__fish_gsd_lane_using_subcommand {only}"),
            [parent, child] => format!(
                "__fish_gsd_lane_using_subcommand {parent}; and __fish_seen_subcommand_from {child}"
            ),
            _ => continue,
        };
        lines.push_str(&format!(
            "complete -c gsd-lane -n \"{condition}\" -f -a \"{}\"\n",
            values.join(" ")
        ));
    }
    lines
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
