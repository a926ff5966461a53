//! `gsd-lane manpage`: clap_mangen's page for the command, then one section per subcommand
//! holding that subcommand's full help (options, `review`'s lane flags), all from the one
//! clap model, so the page never drifts from the parser.

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

/// The whole page.
///
/// # Errors
///
/// A rendering failure (not expected: it writes to memory).
pub fn render(mut command: Command) -> Result<String, Failure> {
    command.build();
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .map_err(|err| Failure::new(format!("rendering the man page: {err}")))?;
    let mut text = String::from_utf8_lossy(&page).into_owned();
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
