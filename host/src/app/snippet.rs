//! `validate`'s human rendering of one diagnostic: the editor-friendly first line
//! (`path:line:col: error[CODE] …`, unchanged), then the source line with a caret under the
//! field (annotate-snippets) and a did-you-mean for enum values and field names.

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use crate::manifest::diagnostic::Code;
use crate::manifest::path::Segment;
use crate::manifest::{vocab, Diagnostic};
use crate::output::{self, neutralize};
use crate::suggest::suggest;

/// Characters of a long source line kept on each side of the field.
const WINDOW: usize = 80;

/// The first line, then the snippet (when `source` holds the line) and the hint.
pub fn render(diagnostic: &Diagnostic, source: Option<&str>, color: bool) -> String {
    let mut out = output::diagnostic_line(diagnostic);
    let hint = hint(diagnostic);
    let level = if diagnostic.is_error() {
        Level::ERROR
    } else {
        Level::WARNING
    };
    let line = diagnostic
        .position
        .zip(source)
        .and_then(|(position, text)| {
            Some((position, text.lines().nth(position.line.checked_sub(1)?)?))
        });
    if let Some((position, line)) = line {
        let (text, span) = excerpt(line, position.column.saturating_sub(1));
        let path = diagnostic
            .file
            .as_ref()
            .map(|p| neutralize(&p.display().to_string()))
            .unwrap_or_default();
        let mut group = Group::with_level(level.clone()).element(
            Snippet::source(&text)
                .line_start(position.line)
                .path(&path)
                .annotation(AnnotationKind::Primary.span(span)),
        );
        if let Some(hint) = &hint {
            group = group.element(Level::HELP.message(hint));
        }
        let renderer = if color {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        out.push('\n');
        out.push_str(&renderer.render(&[group]));
    } else if let Some(hint) = hint {
        out.push_str(&format!("\n  = help: {hint}"));
    }
    out
}

/// The (neutralized, windowed) line and the byte span of the token starting at char `column`:
/// a JSON string up to its closing quote, else up to the next delimiter.
fn excerpt(line: &str, column: usize) -> (String, std::ops::Range<usize>) {
    let chars: Vec<char> = line.chars().collect();
    let start = column.min(chars.len());
    let mut end = start;
    if chars.get(start) == Some(&'"') {
        end += 1;
        let mut escaped = false;
        while let Some(&c) = chars.get(end) {
            end += 1;
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                break;
            }
        }
    } else {
        while chars
            .get(end)
            .is_some_and(|c| !matches!(c, ',' | '}' | ']' | ' ' | '\t'))
        {
            end += 1;
        }
    }
    let end = end.max(start + 1).min(chars.len().max(start + 1));
    let from = start.saturating_sub(WINDOW);
    let to = (end + WINDOW).min(chars.len());
    let piece = |a: usize, b: usize| {
        neutralize(
            &chars[a.min(chars.len())..b.min(chars.len())]
                .iter()
                .collect::<String>(),
        )
    };
    let before = piece(from, start);
    let token = piece(start, end);
    let after = piece(end, to);
    let token_len = token.len().max(1);
    let text = format!("{before}{token}{after}");
    let span = before.len()..(before.len() + token_len).min(text.len().max(before.len() + 1));
    (text, span)
}

/// "did you mean …" for a closed-enum value or an unrecognised field name.
fn hint(diagnostic: &Diagnostic) -> Option<String> {
    if let (Some(valid), Some(got)) = (diagnostic.valid, &diagnostic.got) {
        let got: String = serde_json::from_str::<String>(got).ok()?;
        return suggest(&got, valid.iter().copied()).map(|hit| format!("did you mean `{hit}`?"));
    }
    let known: Vec<&str> = match diagnostic.code {
        Code::WBodyUnknown => vocab::BODY_FIELDS.to_vec(),
        Code::PrUnknown => vocab::PROBE_FIELDS.to_vec(),
        Code::WInvokeUnknown => vocab::SPAWN_ONLY
            .iter()
            .chain(vocab::HTTP_ONLY)
            .copied()
            .chain(["effortChannel"])
            .collect(),
        _ => return None,
    };
    let Some(Segment::Key(name)) = diagnostic.field.segments().last() else {
        return None;
    };
    suggest(name, known.into_iter()).map(|hit| format!("did you mean `{hit}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_is_total_and_windowed() {
        for (line, column) in [
            ("", 0),
            ("", 9),
            ("\"ab", 0),
            ("\"a\\\"b\" x", 0),
            ("é\u{1b}[31m\"x\"", 7),
            ("abc", 99),
        ] {
            let (text, span) = excerpt(line, column);
            assert!(span.start < span.end, "{line:?}");
            assert!(span.start <= text.len(), "{line:?}");
            assert!(!text.contains('\u{1b}'), "{text:?}");
        }
        let long = format!("{}\"key\": 1{}", "x".repeat(10_000), "y".repeat(10_000));
        let (text, span) = excerpt(&long, 10_000);
        assert!(text.len() < 200, "{}", text.len());
        assert_eq!(&text[span], "\"key\"");
    }

    #[test]
    fn render_never_panics_on_odd_positions() {
        use crate::jsonpos::Position;
        use crate::manifest::path::FieldPath;
        for (source, line, column) in [
            ("", 1, 1),
            ("\n\n", 2, 1),
            ("{}", 1, 50),
            ("{}", 9, 1),
            ("é", 1, 2),
        ] {
            let mut d = Diagnostic::error(Code::XTier, FieldPath::root(), "m");
            d.position = Some(Position { line, column });
            let text = render(&d, Some(source), true);
            assert!(text.contains("error[X-TIER]"), "{text}");
        }
    }

    #[test]
    fn colour_follows_the_option_the_terminal_and_no_color() {
        use crate::app::ColorWhen;
        assert!(ColorWhen::Auto.enabled(true, false));
        assert!(!ColorWhen::Auto.enabled(true, true));
        assert!(!ColorWhen::Auto.enabled(false, false));
        assert!(ColorWhen::Always.enabled(false, true));
        assert!(!ColorWhen::Never.enabled(true, false));
    }
}
