//! Rendering disclosures for people (trust.md §3.9): the `[REF]` layout, made inert and
//! unambiguous (`[HARD]`).
//!
//! Every value taken from a manifest or a config goes through [`escape_text`], so a hostile
//! value cannot rewrite or hide terminal lines with ANSI sequences, carriage returns or bidi
//! overrides. Argv members are shown so that different arrays never look alike
//! ([`render_arg`]).

use serde_json::Value;

use super::disclosure::{Disclosure, LaneSurface};
use super::stable::compact;

/// The project's one-line escaper ([`crate::output::escape_text`]), re-exported for the
/// renderers here.
pub use crate::output::escape_text;

/// Renders one argv member.
///
/// A string is quoted for a POSIX shell with the project's one quoter
/// ([`crate::output::shell_quote`], `[HARD]`): a plain word prints as itself (`[REF]`), and
/// `["--flag value"]` and `["--flag", "value"]`, `["a\\", "b"]` and `["a b"]` never look alike,
/// an empty member is visible, and a pasted line passes the same argv. Any other JSON value (a
/// manifest that cannot run) prints as `<` + compact JSON + `>`, which no quoted string can
/// look like (`<` is always quoted).
pub fn render_arg(value: &Value) -> String {
    match value {
        Value::String(text) => quote_if_needed(text),
        other => escape_text(&format!("<{}>", compact(other))),
    }
}

/// A string value shown in a disclosure (an argument, a script path, a model): quoted for a
/// POSIX shell when it is not a plain word ([`crate::output::shell_quote`]).
pub fn quote_if_needed(text: &str) -> String {
    crate::output::shell_quote(text)
}

/// The raw argv of a lane as compact JSON (`["binary","arg",…]`), escaped for the terminal:
/// the exact value beside the shell-quoted rendering.
pub fn json_argv(binary: &str, args: &[Value]) -> String {
    let all: Vec<Value> = std::iter::once(Value::String(binary.to_owned()))
        .chain(args.iter().cloned())
        .collect();
    escape_text(&compact(&Value::Array(all)))
}

/// What the lane's spawned processes may do to the repository under review.
fn posture_line(posture: Option<&Value>) -> String {
    match posture.map(|p| p.as_str()) {
        None | Some(Some("read-only")) => {
            "read-only (the sandbox refuses writes to the repository under review)".to_owned()
        }
        Some(Some("writes-repository")) => "writes-repository: this lane's CLI changes the \
             repository under review; it runs only for slugs listed in \
             review.allow_repository_writes"
            .to_owned(),
        Some(_) => format!("{} (not a posture)", escape_text(&stable_text(posture))),
    }
}

/// Compact JSON text of an optional value.
fn stable_text(value: Option<&Value>) -> String {
    value.map_or_else(String::new, Value::to_string)
}

/// The target of one lane line: `[openai-http] key => host [local]`, or the binary and every
/// raw argument.
pub fn lane_target(lane: &LaneSurface) -> String {
    if lane.is_http_shaped() {
        let key = if lane.host_config_key.is_empty() {
            "(hostConfigKey?)".to_owned()
        } else {
            escape_text(&lane.host_config_key)
        };
        let local = if lane.is_local_destination {
            " [local]"
        } else {
            ""
        };
        return format!(
            "[openai-http] {key} => {}{local}",
            escape_text(&lane.resolved_host)
        );
    }
    let pieces: Vec<String> = std::iter::once(escape_text(&lane.binary))
        .filter(|b| !b.is_empty())
        .chain(lane.raw_args.iter().map(render_arg))
        .filter(|piece| !piece.is_empty())
        .collect();
    if pieces.is_empty() {
        "(no binary declared)".to_owned()
    } else {
        pieces.join(" ")
    }
}

/// The summary lines of a disclosure (trust.md §3.9).
pub fn summary_lines(disclosure: &Disclosure) -> Vec<String> {
    if !disclosure.has_executable {
        return vec![
            "This capability is declarative only: it ships no executable surface.".to_owned(),
        ];
    }
    let mut lines = vec!["This capability ships executable surfaces:".to_owned()];
    hook_lines(disclosure, &mut lines);
    module_lines(disclosure, &mut lines);
    mcp_lines(disclosure, &mut lines);
    if !disclosure.reviewer_lanes.is_empty() {
        lines.push(format!(
            "  reviewer lane ({}): each review run hands your plans to this outside reviewer",
            disclosure.reviewer_lanes.len()
        ));
        for lane in &disclosure.reviewer_lanes {
            lane_lines(lane, &mut lines);
        }
    }
    if !disclosure.missing_artifacts.is_empty() {
        lines.push("  warning: declared files are missing from the bundle:".to_owned());
        for artifact in &disclosure.missing_artifacts {
            lines.push(format!("    - {}", quote_if_needed(artifact)));
        }
    }
    lines
}

/// One listed surface class: `  <name> (<count>): <why>`, then `    - <item>` per entry;
/// nothing when the list is empty.
fn listed<T>(
    lines: &mut Vec<String>,
    items: &[T],
    (name, why): (&str, &str),
    item: impl Fn(&T) -> String,
) {
    if items.is_empty() {
        return;
    }
    lines.push(format!("  {name} ({}): {why}", items.len()));
    lines.extend(items.iter().map(|entry| format!("    - {}", item(entry))));
}

/// The hooks of a disclosure and the events they run on.
fn hook_lines(disclosure: &Disclosure, lines: &mut Vec<String>) {
    listed(
        lines,
        &disclosure.hooks,
        ("hooks", "run on the named events"),
        |hook| {
            format!(
                "{} -> {}",
                escape_text(&hook.event),
                quote_if_needed(&hook.script)
            )
        },
    );
}

/// The command modules of a disclosure: code loaded into the host.
fn module_lines(disclosure: &Disclosure, lines: &mut Vec<String>) {
    listed(
        lines,
        &disclosure.command_modules,
        ("command modules", "code loaded into the host"),
        |module| {
            format!(
                "{} -> {} {}",
                escape_text(&module.family),
                quote_if_needed(&module.module),
                quote_if_needed(&module.router)
            )
        },
    );
}

/// The MCP servers of a disclosure: what the agent starts or contacts.
fn mcp_lines(disclosure: &Disclosure, lines: &mut Vec<String>) {
    listed(
        lines,
        &disclosure.mcp_servers,
        ("MCP servers", "started or contacted by the agent"),
        |server| {
            let target = if server.command.is_empty() {
                escape_text(&server.url)
            } else {
                std::iter::once(escape_text(&server.command))
                    .chain(server.raw_args.iter().map(render_arg))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            format!("{} -> {target}", escape_text(&server.name))
        },
    );
}

/// One reviewer lane: its target, argv, handler, posture and what it sends.
fn lane_lines(lane: &LaneSurface, lines: &mut Vec<String>) {
    let slug = if lane.slug.is_empty() {
        "(slug?)".to_owned()
    } else {
        escape_text(&lane.slug)
    };
    lines.push(format!("    - {slug} -> {}", lane_target(lane)));
    if !lane.is_http_shaped() && !lane.binary.is_empty() {
        lines.push(format!(
            "        argv (JSON): {}",
            json_argv(&lane.binary, &lane.raw_args)
        ));
    }
    if !lane.handler.is_empty() {
        lines.push(format!("        handler: {}", escape_text(&lane.handler)));
    }
    if !lane.is_http_shaped() {
        lines.push(format!(
            "        posture: {}",
            posture_line(lane.posture.as_ref())
        ));
    }
    env_lines(lane, lines);
    lines.push(format!(
        "        sends: {}",
        lane.egress_payload_classes.join(", ")
    ));
    if !lane.additional_egress.is_empty() {
        lines.push(format!(
            "        also reaches it: {}",
            lane.additional_egress.join(", ")
        ));
    }
}

/// How many characters of an `invoke.env` value the disclosure shows (upstream #2493).
pub const ENV_VALUE_SHOWN: usize = 60;

/// A lane's `invoke.env` pairs, `env: K=V, …` with each value cut at [`ENV_VALUE_SHOWN`]
/// characters (a cut value ends in `…`), then a warning naming the pairs that can make the
/// child run code of the capability's choosing; nothing when the lane declares none.
fn env_lines(lane: &LaneSurface, lines: &mut Vec<String>) {
    if lane.env.is_empty() {
        return;
    }
    let pairs: Vec<String> = lane
        .env
        .iter()
        .map(|(name, value)| {
            let shown: String = value.chars().take(ENV_VALUE_SHOWN).collect();
            let cut = if shown.len() < value.len() { "…" } else { "" };
            format!("{}={}{cut}", escape_text(name), quote_if_needed(&shown))
        })
        .collect();
    lines.push(format!("        env: {}", pairs.join(", ")));
    let steering: Vec<String> = lane
        .env
        .keys()
        .filter(|name| crate::manifest::invoke_env::steers_code(name))
        .map(|name| escape_text(name))
        .collect();
    if !steering.is_empty() {
        lines.push(format!(
            "        WARNING — {} can make this lane run code of the capability's choosing",
            steering.join(", ")
        ));
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use crate::trust::disclosure::{disclose, UNRESOLVED_HOST_MARKER};
    use serde_json::json;

    #[test]
    fn d02_summary_shows_non_string_members() {
        let d = disclose(
            &json!({"reviewer": {"slug": "a", "invoke": {"binary": "acme", "args": ["-p", 7, {"mode": "fast"}, true]}}}),
            None,
            None,
        );
        let text = summary_lines(&d).join("\n");
        assert!(
            text.contains("- a -> acme -p <7> <{\"mode\":\"fast\"}> <true>"),
            "{text}"
        );
    }

    #[test]
    fn d03_http_line_layout() {
        let resolve = |_: &str| Some("http://192.168.1.50:1234".to_owned());
        let d = disclose(
            &json!({"reviewer": {"slug": "example_llm", "transport": "openai-http", "handler": "openai-compatible",
                "invoke": {"hostConfigKey": "review.example_llm_host"}}}),
            Some(&resolve),
            None,
        );
        let lines = summary_lines(&d);
        assert!(lines.contains(&"    - example_llm -> [openai-http] review.example_llm_host => http://192.168.1.50:1234".to_owned()), "{lines:?}");
        assert!(lines.contains(&"        handler: openai-compatible".to_owned()));
        assert!(lines.contains(
            &"        sends: plan text, requirements, research findings, CONTEXT.md decisions"
                .to_owned()
        ));
        assert!(!lines.join("\n").contains("[local]"));
    }

    #[test]
    fn d05_local_tag() {
        let resolve = |_: &str| Some("http://localhost:11434".to_owned());
        let d = disclose(
            &json!({"reviewer": {"slug": "o", "transport": "openai-http", "invoke": {"hostConfigKey": "k"}}}),
            Some(&resolve),
            None,
        );
        assert!(summary_lines(&d)
            .join("\n")
            .contains("=> http://localhost:11434 [local]"));
    }

    #[test]
    fn d13_never_no_binary_declared_for_http_shaped() {
        let d = disclose(
            &json!({"reviewer": {"slug": "o", "transport": "OpenAI-HTTP", "invoke": {"hostConfigKey": "k"}}}),
            None,
            None,
        );
        let text = summary_lines(&d).join("\n");
        assert!(!text.contains("(no binary declared)"));
        assert!(text.contains(UNRESOLVED_HOST_MARKER));
        let empty = disclose(&json!({"reviewer": {"transport": "spawn"}}), None, None);
        assert!(summary_lines(&empty)
            .join("\n")
            .contains("- (slug?) -> (no binary declared)"));
    }

    #[test]
    fn d16_rendering_is_inert_and_unambiguous() {
        let d = disclose(
            &json!({"reviewer": {"slug": "evil\nline", "invoke": {"binary": "b",
                "args": ["\u{1b}[2K\r    - safe -> ok", "a b", "", "\u{202e}txt", "<7>"]}}}),
            None,
            None,
        );
        let text = summary_lines(&d).join("\n");
        for line in summary_lines(&d) {
            assert!(
                !line.chars().any(|c| c.is_control()),
                "raw control in {line:?}"
            );
            assert!(!line.contains('\u{202e}'));
        }
        assert!(text.contains("evil\\u{a}line"), "{text}");
        assert!(text.contains("'a b'"), "{text}");
        assert!(text.contains(" '' "), "{text}");
        assert!(
            text.contains("'<7>'"),
            "a string that looks like a number is quoted: {text}"
        );
        assert!(
            text.contains("argv (JSON): [\"b\",\"\\u001b[2K\\r    - safe -> ok\",\"a b\",\"\",\"\\u{202e}txt\",\"<7>\"]"),
            "the raw argv is shown beside: {text}"
        );
    }

    #[test]
    fn w13_disclosure_rendering_is_inert_and_unambiguous() {
        let split = json!(["--flag", "value"]);
        let joined = json!(["--flag value"]);
        let render = |args: &Value| {
            let d = disclose(
                &json!({"reviewer": {"slug": "a", "invoke": {"binary": "b", "args": args}}}),
                None,
                None,
            );
            lane_target(&d.reviewer_lanes[0])
        };
        assert_ne!(render(&split), render(&joined));
        assert_ne!(render(&json!(["a\\", "b"])), render(&json!(["a b"])));
        assert_eq!(render(&json!(["$(id)", "x"])), "b '$(id)' x");
        assert_eq!(render(&json!([7])), "b <7>");
        assert_ne!(render(&json!([7])), render(&json!(["<7>"])));
        assert_eq!(
            escape_text("\u{7f}\u{85}\u{2028}"),
            "\\u{7f}\\u{85}\\u{2028}"
        );
        // Classification cannot be fooled by oversized IPv4 parts ([HARD]).
        assert!(!crate::trust::locality::is_local_destination("383.0.0.1"));
    }

    #[test]
    fn env_pairs_are_shown_cut_inert_and_warned() {
        let long = "x".repeat(70);
        let d = disclose(
            &json!({"reviewer": {"slug": "a", "transport": "spawn", "invoke": {"binary": "b",
                "env": {"ACME_MODE": "fast mode", "LONG": long, "EVIL": "\u{1b}]0;t\u{7}\r\u{202e}x",
                        "git_askpass": "/tmp/x", "NODE_OPTIONS": "--require /tmp/x", "N": 3}}}}),
            None,
            None,
        );
        let lines = summary_lines(&d);
        let env = lines
            .iter()
            .find(|l| l.starts_with("        env: "))
            .expect("an env line");
        assert!(env.contains("ACME_MODE='fast mode'"), "{env}");
        assert!(env.contains(&format!("LONG={}…", "x".repeat(60))), "{env}");
        assert!(!env.contains(&"x".repeat(61)), "{env}");
        assert!(
            !env.contains("N="),
            "non-string values never reach a child: {env}"
        );
        assert!(
            !env.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{env:?}"
        );
        assert!(env.contains("\\u{1b}"), "{env}");
        assert!(lines.contains(
            &"        WARNING — NODE_OPTIONS, git_askpass can make this lane run code of the capability's choosing"
                .to_owned()
        ), "{lines:?}");
        let quiet = disclose(
            &json!({"reviewer": {"slug": "a", "invoke": {"binary": "b", "env": {"A": "1"}}}}),
            None,
            None,
        );
        let text = summary_lines(&quiet).join("\n");
        assert!(text.contains("        env: A=1\n"), "{text}");
        assert!(!text.contains("WARNING"), "{text}");
        let none = disclose(
            &json!({"reviewer": {"slug": "a", "invoke": {"binary": "b"}}}),
            None,
            None,
        );
        assert!(!summary_lines(&none).join("\n").contains("env:"));
    }

    #[test]
    fn declarative_only_is_one_line() {
        let d = disclose(&json!({"id": "x", "reviewer": {}}), None, None);
        assert_eq!(summary_lines(&d).len(), 1);
    }
}
