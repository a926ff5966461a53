//! `opencode`: rebuilds the review from OpenCode's JSON event stream (invocation.md §11.1).
//!
//! `opencode run --format json` prints one JSON event per line. The review is the model's final
//! answer: the assistant's text parts after the last tool call, joined with `\n` (what it said
//! before calling a tool, "I will read the plan file first.", is narration, not review), so the
//! raw JSON never becomes the review; a stream with no final text yields an empty review and a
//! two-line diagnostic naming the stop reason and output tokens.

use gsd_lane_sdk::{
    spawn_own_invocation, Effects, Handler, HandlerError, HandlerName, HandlerOutput, LaneRequest,
    Transport,
};
use serde_json::{Number, Value};

/// Largest stdout kept in memory (the §8 capture cap).
const STDOUT_CAP: usize = 64 << 20;

/// First line of the diagnostic when the stream carried no assistant text.
const NO_TEXT: &str =
    "OpenCode review returned no assistant text (agent ended its turn with no final message).";

/// The `opencode` handler: one spawn, review reconstructed from stdout.
#[derive(Debug, Clone, Copy, Default)]
pub struct Opencode;

impl Handler for Opencode {
    fn name(&self) -> HandlerName {
        HandlerName::new("opencode")
    }

    fn describe(&self) -> &'static str {
        "rebuilds the review from the assistant text parts of OpenCode's JSON event stream"
    }

    fn transport(&self) -> Transport {
        Transport::Spawn
    }

    fn run(
        &self,
        effects: &dyn Effects,
        request: &LaneRequest,
    ) -> Result<HandlerOutput, HandlerError> {
        let report = spawn_own_invocation(effects, request, STDOUT_CAP, "opencode")?;
        let (review, reason, tokens) = reconstruct(&report.stdout);
        let diagnostic = format!("stop reason={reason}, output tokens={tokens}");
        let mut output = if is_empty(&review) {
            HandlerOutput::empty_with(format!("{NO_TEXT}\nDiagnostic: {diagnostic}"))
        } else {
            HandlerOutput::review(review, "stdout")
        };
        if let Some(error) = &report.error {
            output.notes.push(format!("spawn error: {error}"));
        }
        output.notes.push(diagnostic);
        Ok(output)
    }
}

/// Rebuilds `(review, stop reason, output tokens)` from an OpenCode JSON event stream.
///
/// Total over any input: lines are split on `\n` / `\r\n` and trimmed; blank lines, lines that
/// do not parse and JSON values that are not objects are skipped. Every `text` event whose
/// `part.text` is a string after the last `tool_use` event contributes that string (empty
/// strings included), and the texts are joined with `\n`: a `tool_use` event drops the text
/// before it, which narrated the call. The last `step_finish` event with a string `part.reason` sets the stop
/// reason and the last one with a numeric `part.tokens.output` sets the token count (rendered
/// like a JSON number: `42`, `1.5`); both default to `?`.
pub fn reconstruct(stdout: &str) -> (String, String, String) {
    let mut texts: Vec<String> = Vec::new();
    let mut reason = String::from("?");
    let mut tokens = String::from("?");
    for line in stdout.split('\n') {
        let line = trim(line);
        if line.is_empty() {
            continue;
        }
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let part = event.get("part");
        match event.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = part.and_then(|p| p.get("text")).and_then(Value::as_str) {
                    texts.push(text.to_owned());
                }
            }
            // What the model said before calling a tool narrated the call; the answer follows.
            Some("tool_use") => texts.clear(),
            Some("step_finish") => {
                if let Some(r) = part.and_then(|p| p.get("reason")).and_then(Value::as_str) {
                    r.clone_into(&mut reason);
                }
                if let Some(Value::Number(n)) = part
                    .and_then(|p| p.get("tokens"))
                    .and_then(|t| t.get("output"))
                {
                    tokens = render_number(n);
                }
            }
            _ => {}
        }
    }
    (texts.join("\n"), reason, tokens)
}

/// Trims like JavaScript's `String.prototype.trim` (Unicode White_Space plus U+FEFF).
fn trim(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}')
}

/// True when nothing is left after trimming (invocation.md §10).
fn is_empty(text: &str) -> bool {
    trim(text).is_empty()
}

/// Renders a JSON number as JavaScript's `String(number)` does: integers without a point.
fn render_number(number: &Number) -> String {
    if let Some(i) = number.as_i64() {
        return i.to_string();
    }
    if let Some(u) = number.as_u64() {
        return u.to_string();
    }
    match number.as_f64() {
        Some(f) => render_f64(f),
        None => number.to_string(),
    }
}

/// JavaScript's Number-to-String algorithm over Rust's shortest round-trip digits.
fn render_f64(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    let sign = if value < 0.0 { "-" } else { "" };
    let sci = format!("{:e}", value.abs());
    let Some((mantissa, exponent)) = sci.split_once('e') else {
        return value.to_string();
    };
    let Ok(exponent) = exponent.parse::<i64>() else {
        return value.to_string();
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    let n = exponent + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        format!("{int}.{frac}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let exp_sign = if n >= 1 { "+" } else { "-" };
        format!("{first}{point}{rest}e{exp_sign}{}", (n - 1).abs())
    };
    format!("{sign}{body}")
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use gsd_lane_sdk::testing::request_spawn;
    use gsd_lane_sdk::testing::{FakeEffects, FakeProcess};
    use gsd_lane_sdk::StdoutSink;
    use gsd_lane_sdk::{OutputTarget, PlanShape, SpawnPlan};
    use proptest::prelude::*;
    use std::path::PathBuf;

    /// A request shaped like the shipped opencode plan, artifacts in a fresh temp dir.
    fn request(tag: &str) -> LaneRequest {
        let dir = gsd_lane_sdk::testing::scratch_dir(&format!("opencode-{tag}")).expect("temp dir");
        let mut req = request_spawn("opencode", "opencode");
        req.plan.err_path = dir.join("gsd-review-opencode.err").display().to_string();
        req.plan.shape = PlanShape::Spawn(SpawnPlan {
            binary: "opencode".into(),
            argv: ["run", "--format", "json", "-"].map(String::from).to_vec(),
            stdin: Some(req.plan.prompt_path.clone()),
            output_target: OutputTarget::Stdout,
        });
        req
    }

    fn text(t: &str) -> String {
        serde_json::json!({"type": "text", "part": {"type": "text", "text": t}}).to_string()
    }

    #[test]
    fn realistic_stream_is_rebuilt_from_text_parts() {
        let stream = [
            r#"{"type":"step_start","timestamp":1,"sessionID":"s","part":{"type":"step-start"}}"#,
            r#"{"type":"tool_use","part":{"type":"tool","tool":"read","state":{"status":"completed"}}}"#,
            &text("## Review"),
            &text("Looks fine overall.\n- nit: rename `x`"),
            r#"{"type":"step_finish","part":{"reason":"stop","tokens":{"input":900,"output":42}}}"#,
        ]
        .join("\n");
        let (review, reason, tokens) = reconstruct(&stream);
        assert_eq!(review, "## Review\nLooks fine overall.\n- nit: rename `x`");
        assert_eq!((reason.as_str(), tokens.as_str()), ("stop", "42"));

        let fx = FakeEffects::new().process(FakeProcess::prints(&stream).exit(1));
        let req = request("realistic");
        let out = Opencode.run(&fx, &req).expect("runs");
        assert_eq!(out.review, review, "exit status is not consulted");
        assert_eq!(out.source.as_deref(), Some("stdout"));
        assert_eq!(out.diagnostic, None);
        let call = &fx.spawn_calls()[0];
        assert_eq!(call.program, "opencode");
        assert_eq!(call.args, ["run", "--format", "json", "-"]);
        assert_eq!(call.stdin, Some(PathBuf::from("/run/gsd-review-prompt.md")));
        assert_eq!(call.stdout, StdoutSink::Memory(64 << 20));
        assert_eq!(call.stderr_path, Some(PathBuf::from(&req.plan.err_path)));
    }

    /// Issue 21 item 4: real opencode with a model that reads a file narrates first.
    #[test]
    fn narration_before_a_tool_call_is_not_the_review() {
        let stream = [
            r#"{"type":"step_start","part":{"type":"step-start"}}"#,
            &text("I will read the plan file first."),
            r#"{"type":"tool_use","part":{"type":"tool","tool":"read","state":{"status":"completed"}}}"#,
            r#"{"type":"step_finish","part":{"reason":"tool-calls","tokens":{"output":12}}}"#,
            r#"{"type":"step_start","part":{"type":"step-start"}}"#,
            &text("Now the second plan."),
            r#"{"type":"tool_use","part":{"type":"tool","tool":"read","state":{"status":"completed"}}}"#,
            &text("## Review"),
            &text("The plans are sound."),
            r#"{"type":"step_finish","part":{"reason":"stop","tokens":{"output":40}}}"#,
        ]
        .join("\n");
        let (review, reason, _) = reconstruct(&stream);
        assert_eq!(review, "## Review\nThe plans are sound.");
        assert_eq!(reason, "stop");
        // A turn that ends on a tool call has no final answer: empty, with the diagnostic.
        let unfinished = [&text("Let me look."), r#"{"type":"tool_use","part":{}}"#].join("\n");
        let fx = FakeEffects::new().process(FakeProcess::prints(&unfinished));
        let out = Opencode.run(&fx, &request("unfinished")).expect("runs");
        assert_eq!(out.review, "");
        assert!(out.diagnostic.is_some());
    }

    #[test]
    fn garbage_lines_never_lose_the_rest() {
        let stream = [
            "not json",
            &text("a"),
            "{\"type\":\"text\",\"part\":",
            "[1,2,3]",
            "\"a string\"",
            "42",
            "null",
            r#"{"type":"text"}"#,
            r#"{"type":"text","part":{"text":7}}"#,
            r#"{"type":"text","part":"oops"}"#,
            r#"{"part":{"text":"no type"}}"#,
            "",
            "   \t ",
            &format!("   {}   ", text("b")),
        ]
        .join("\n");
        assert_eq!(reconstruct(&stream).0, "a\nb");
    }

    #[test]
    fn empty_text_part_is_kept_as_an_empty_line() {
        let stream = [text("first"), text(""), text("third")].join("\n");
        assert_eq!(reconstruct(&stream).0, "first\n\nthird");
    }

    #[test]
    fn crlf_lines_are_split_and_trimmed() {
        let stream = format!(
            "{}\r\n{}\r\n{{\"type\":\"step_finish\",\"part\":{{\"reason\":\"length\"}}}}\r\n",
            text("x"),
            text("y")
        );
        let (review, reason, tokens) = reconstruct(&stream);
        assert_eq!(review, "x\ny");
        assert_eq!((reason.as_str(), tokens.as_str()), ("length", "?"));
    }

    #[test]
    fn no_text_yields_a_diagnostic_naming_stop_reason_and_tokens() {
        let stream = [
            r#"{"type":"step_finish","part":{"reason":"tool-calls","tokens":{"output":7}}}"#,
            r#"{"type":"step_finish","part":{"reason":"stop","tokens":{"output":42.0}}}"#,
            r#"{"type":"step_finish","part":{"reason":5,"tokens":{"output":"9"}}}"#,
        ]
        .join("\n");
        let fx = FakeEffects::new().process(FakeProcess::prints(&stream));
        let out = Opencode.run(&fx, &request("notext")).expect("runs");
        assert_eq!(out.review, "");
        assert_eq!(out.source, None);
        assert_eq!(
            out.diagnostic.as_deref(),
            Some(
                "OpenCode review returned no assistant text (agent ended its turn with no final \
                 message).\nDiagnostic: stop reason=stop, output tokens=42"
            )
        );
    }

    #[test]
    fn whitespace_only_text_is_empty_and_defaults_are_question_marks() {
        let fx = FakeEffects::new().process(FakeProcess::prints(&text(" \n\t")));
        let out = Opencode.run(&fx, &request("ws")).expect("runs");
        assert_eq!(out.review, "");
        assert!(out
            .diagnostic
            .as_deref()
            .is_some_and(|d| d.ends_with("Diagnostic: stop reason=?, output tokens=?")));
    }

    #[test]
    fn spawn_failure_is_an_empty_review_not_an_error() {
        let fx = FakeEffects::new(); // no process scripted: ENOENT
        let out = Opencode.run(&fx, &request("enoent")).expect("runs");
        assert_eq!(out.review, "");
        assert!(out.diagnostic.is_some());
        assert!(out.notes.iter().any(|n| n.contains("ENOENT")));
    }

    #[test]
    fn http_plan_is_malformed() {
        let mut req = request("http");
        req.plan.shape = PlanShape::Http(gsd_lane_sdk::HttpPlan {
            host: "http://h".into(),
            host_config_key: String::new(),
            url: "http://h/v1/chat/completions".into(),
            models_url: None,
            model: None,
            fallback_model: "m".into(),
        });
        let err = Opencode
            .run(&FakeEffects::new(), &req)
            .expect_err("refused");
        assert_eq!(err.kind, gsd_lane_sdk::HandlerErrorKind::MalformedLane);
    }

    #[test]
    fn numbers_render_like_javascript() {
        let cases = [
            ("42", "42"),
            ("42.0", "42"),
            ("1.5", "1.5"),
            ("-3", "-3"),
            ("0.0", "0"),
            ("-0.0", "0"),
            ("1e3", "1000"),
            ("1e21", "1e+21"),
            ("1.25e21", "1.25e+21"),
            ("1e20", "100000000000000000000"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1e-7"),
            // Integers stay exact (JavaScript would print 18446744073709552000).
            ("18446744073709551615", "18446744073709551615"),
        ];
        for (json, want) in cases {
            let line =
                format!(r#"{{"type":"step_finish","part":{{"tokens":{{"output":{json}}}}}}}"#);
            assert_eq!(reconstruct(&line).2, want, "rendering {json}");
        }
    }

    #[derive(Debug, Clone)]
    enum Line {
        Text(String),
        Garbage(String),
    }

    /// True when `line` would count as a text event; garbage must never be one.
    fn is_text_event(line: &str) -> bool {
        matches!(
            serde_json::from_str::<Value>(trim(line)),
            Ok(Value::Object(o)) if o.get("type").and_then(Value::as_str) == Some("text")
                && o.get("part").and_then(|p| p.get("text")).is_some_and(Value::is_string)
        )
    }

    /// True when `line` would count as a tool call (which drops the text before it).
    fn is_tool_event(line: &str) -> bool {
        matches!(
            serde_json::from_str::<Value>(trim(line)),
            Ok(Value::Object(o)) if o.get("type").and_then(Value::as_str) == Some("tool_use")
        )
    }

    fn garbage() -> impl Strategy<Value = String> {
        prop_oneof![
            "[^\n]{0,40}",
            Just(r#"{"type":"text"}"#.to_owned()),
            Just(r#"{"type":"text","part":{"text":null}}"#.to_owned()),
            Just(
                r#"{"type":"step_finish","part":{"reason":"stop","tokens":{"output":3}}}"#
                    .to_owned()
            ),
            Just("{\"type\":\"text\",\"part\":{\"text\":\"unterminated".to_owned()),
            Just("[{\"type\":\"text\",\"part\":{\"text\":\"in an array\"}}]".to_owned()),
        ]
        .prop_filter("garbage is never a valid text or tool event", |g| {
            !is_text_event(g) && !is_tool_event(g)
        })
    }

    fn line() -> impl Strategy<Value = Line> {
        prop_oneof![
            any::<String>().prop_map(Line::Text),
            garbage().prop_map(Line::Garbage),
        ]
    }

    proptest! {
        #[test]
        fn interleaved_garbage_yields_exactly_the_text_parts(
            lines in prop::collection::vec(line(), 0..40),
            crlf in any::<bool>(),
        ) {
            let mut expected = Vec::new();
            let mut rendered = Vec::new();
            for l in &lines {
                match l {
                    Line::Text(t) => {
                        expected.push(t.clone());
                        rendered.push(text(t));
                    }
                    Line::Garbage(g) => rendered.push(g.clone()),
                }
            }
            let stream = rendered.join(if crlf { "\r\n" } else { "\n" });
            let (review, _, _) = reconstruct(&stream);
            prop_assert_eq!(review, expected.join("\n"));
        }

        #[test]
        fn arbitrary_input_never_panics(input in any::<String>()) {
            let _ = reconstruct(&input);
        }
    }
}
