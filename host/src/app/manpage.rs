//! `gsd-lane manpage`: one page, gsd-lane(1). clap_mangen's sections for the command, a
//! COMMANDS list, one section per subcommand holding its full help (options, `review`'s lane
//! flags), all from the one clap model so the page never drifts from the parser; then
//! ENVIRONMENT, EXIT STATUS and EXAMPLES. It names no other page (there is no page per
//! subcommand).

use clap::Command;

use crate::error::Failure;

/// Escapes one line of text for a roff no-fill block.
fn roff_line(line: &str) -> String {
    let escaped = line.replace('\\', "\\e");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// One roff paragraph per `(tag, text)`: `.TP` with the tag in bold.
fn tagged(section: &str, rows: &[(&str, &str)]) -> String {
    let mut text = format!(".SH {section}\n");
    for (tag, body) in rows {
        text.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n",
            roff_line(tag),
            roff_line(body)
        ));
    }
    text
}

/// The environment variables gsd-lane, its lanes' sandbox and its npm launcher read or set.
const ENVIRONMENT: [(&str, &str); 9] = [
    ("GSD_HOME", "The GSD home (default: HOME): global capabilities in $GSD_HOME/.gsd/capabilities, the consent store consent.json, the egress pins egress-pins.json and handler locks, all under $GSD_HOME/.gsd."),
    ("GSD_WORKSTREAM", "A workstream name: .planning/workstreams/<name>/config.json is merged over .planning/config.json."),
    ("GSD_LANE_BIN", "Read by the npm launcher (@gsd-lane/cli), packaging/npm/pack.sh and examples/demo.sh, not by gsd-lane: the gsd-lane binary to run instead of the platform package's or a fresh build."),
    ("NO_COLOR", "When set and not empty, --color auto (the default) does not colour."),
    ("PATH", "Where a lane's program is looked up (absolute entries only; relative ones are skipped). Third-party lanes receive a minimal environment: PATH, HOME, USERPROFILE, LANG, LANGUAGE, LC_*, TMPDIR, TMP and TEMP."),
    ("TMPDIR", "Where run directories are created (gsd-lane-run-* for run, gsd-review-* for review). Sandbox: when the temporary directory is an ancestor of the repository, lanes get TMPDIR=<run dir>/tmp instead, since Landlock leaves no new entry writable there."),
    ("GSD_LANE_WATCHDOG", "Set by gsd-lane in every lane's environment: a token drawn once per gsd-lane process. The sandbox's watchdog (a process named gsd-watchdog, or gsd-lane __lane-watchdog) kills every process carrying it when gsd-lane is gone. Not for users to set."),
    ("HOME", "The home directory: the default GSD home, and the walk for the project root stops there."),
    ("ANTIGRAVITY_AGENT, CURSOR_SESSION_ID, CLAUDE_CODE_ENTRYPOINT", "Name the agent driving a review: review skips that agent's own lane (as --self does)."),
];

/// The exit statuses, by command (the README's table, in short).
const EXIT_STATUS: [(&str, &str); 8] = [
    ("0", "Done. validate: no error (warnings allowed); doctor: every selected lane is ready; review: at least one real review; run: the lane ran, a stub included, or was unavailable without --explicit. code-review, dispatch-step: every named lane produced a real review."),
    ("1", "list, flags, sections, schema, plan, completions, manpage, runs, disclose: a file that cannot be read or written, or an id that names no capability. validate: at least one error. doctor: a lane is not ready. install, remove, trust, new: refused (validation, consent declined, fingerprint mismatch, an existing folder), store or I/O error. run, invoke: a usage error or an unusable prompt file. review: bad arguments, phase lookup or configuration."),
    ("2", "Usage error (bad option or value, --project not a directory), except for run, invoke and review, whose usage errors exit 1. run: unknown or inactive slug, unavailable with --explicit, a refused --handler-module. invoke: unavailable with --explicit. review: a named reviewer cannot run, no reviewer ran, every reviewer failed, or --resume was refused. doctor: unknown slug. new: an invalid or reserved slug. code-review, dispatch-step: the call was refused as a whole, or a named lane could not run or produced no review."),
    ("130", "review, code-review and dispatch-step only: interrupted by SIGINT or SIGTERM while lanes run (finished reviews are kept and REVIEWS.md is written)."),
    ("other commands and signals", "Only review, code-review and dispatch-step catch SIGINT/SIGTERM; every other command ends with the signal's default status."),
    ("--help, --version", "0, everywhere."),
    ("npm launcher", "The launcher exits with gsd-lane's status, or dies of the signal that killed it; 1 when no binary can be found or started."),
    ("see also", "README.md, \"Exit statuses\", for the full table."),
];

/// A few command lines to start from.
const EXAMPLES: [(&str, &str); 8] = [
    (
        "gsd-lane list",
        "Every lane, active or not and why, and whether its program is here.",
    ),
    (
        "gsd-lane doctor codex",
        "Is the codex lane ready, and what fixes it.",
    ),
    (
        "gsd-lane review --phase 3",
        "Review phase 3's plans with every selected reviewer; writes <phase dir>/03-REVIEWS.md.",
    ),
    (
        "gsd-lane review --prompt-file plan.md --out REVIEWS.md --claude --codex",
        "Review any document with two named reviewers.",
    ),
    (
        "gsd-lane run claude --prompt-file plan.md --model sonnet",
        "Run one lane and show the exact command line, the probe and the review.",
    ),
    (
        "gsd-lane new my-reviewer && gsd-lane install my-reviewer --global",
        "Start a lane of your own and install it.",
    ),
    (
        "gsd-lane disclose my-reviewer",
        "What a lane runs or where it sends your plans.",
    ),
    (
        "gsd-lane completions bash > ~/.local/share/bash-completion/completions/gsd-lane",
        "Install bash completion (lane slugs and flags as loaded now).",
    ),
];

/// COMMANDS: each subcommand with its one-line description, pointing at its section below
/// (this one page documents them all; there is no page per subcommand).
fn commands(command: &Command) -> String {
    let mut text =
        String::from(".SH COMMANDS\nEach command is documented in its own section below.\n");
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
        text.push_str(&format!(
            ".TP\n\\fBgsd\\-lane {}\\fR\n{} (section GSD\\-LANE {})\n",
            roff_line(sub.get_name()),
            roff_line(&about),
            roff_line(&sub.get_name().to_uppercase())
        ));
    }
    text
}

/// Renders one of clap_mangen's sections.
fn section(
    man: &clap_mangen::Man,
    render: fn(&clap_mangen::Man, &mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    render(man, &mut bytes)
        .map_err(|err| Failure::new(format!("rendering the man page: {err}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The whole page: clap_mangen's title, name, synopsis, description and options; COMMANDS;
/// one section per subcommand with its full help; ENVIRONMENT, EXIT STATUS, EXAMPLES; VERSION.
///
/// # Errors
///
/// A rendering failure (not expected: it writes to memory).
pub fn render(mut command: Command) -> Result<String, Failure> {
    command.build();
    let man = clap_mangen::Man::new(command.clone());
    let mut text = String::new();
    for render in [
        clap_mangen::Man::render_title,
        clap_mangen::Man::render_name_section,
        clap_mangen::Man::render_synopsis_section,
        clap_mangen::Man::render_description_section,
        clap_mangen::Man::render_options_section,
    ] {
        text.push_str(&section(&man, render)?);
    }
    text.push_str(&commands(&command));
    for sub in command.get_subcommands_mut() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let name = sub.get_name().to_owned();
        let help = sub.render_long_help().to_string();
        text.push_str(&format!(
            ".SH \"GSD\\-LANE {}\"\n.nf\n",
            name.to_uppercase()
        ));
        for line in help.lines() {
            text.push_str(&roff_line(line));
            text.push('\n');
        }
        text.push_str(".fi\n");
    }
    text.push_str(&tagged("ENVIRONMENT", &ENVIRONMENT));
    text.push_str(&tagged("\"EXIT STATUS\"", &EXIT_STATUS));
    text.push_str(&tagged("EXAMPLES", &EXAMPLES));
    // clap_mangen's version section unwraps the version: only a command that has one gets it.
    if command.get_version().is_some() || command.get_long_version().is_some() {
        text.push_str(&section(&man, clap_mangen::Man::render_version_section)?);
    }
    // Lane help lines are overlay text, neutralised where they are made (review::args); no
    // raw control, bidi or invisible character reaches the page whatever slipped through.
    Ok(crate::textsafe::for_terminal_block(&text))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use crate::review::args::{with_lane_flags, LaneFlags};

    /// A small command line with a `review` subcommand carrying `lanes`' flags (the app layer
    /// does not import the real one).
    fn with_lanes(lanes: &[LaneFlags]) -> Command {
        let root = Command::new("gsd-lane").subcommand(Command::new("review"));
        with_lane_flags(root, lanes)
    }

    /// Issue 20 item 10: a lane section validation did not stop reaches the page neutralised.
    #[test]
    fn lane_help_holds_no_raw_control() {
        let lanes = [LaneFlags {
            slug: "acme".into(),
            section: "Acme\u{1b}]0;pwned\u{7}\r\u{9b}2J\u{7f}\u{202e}\u{200b}\n.SH FORGED".into(),
            flags: vec!["--acme".into()],
            active: true,
        }];
        let page = render(with_lanes(&lanes)).expect("page");
        assert!(page.contains("acme"));
        assert!(
            !page
                .chars()
                .any(|c| crate::output::is_unsafe_for_terminal(c) && !matches!(c, '\n' | '\t')),
            "raw control in the page"
        );
        assert!(!page.contains("\n.SH FORGED"), "a forged roff request");
    }
}
