//! `kimi-code`: takes the review from Kimi Code's `stream-json` output (issue 10 point 3).
//!
//! Kimi Code 2.x's text mode (`kimi -p …`) renders for a terminal: every assistant message is a
//! `• ` bullet, the lines under it are indented by two spaces, and narration between tool calls
//! ("I'll read the plan first.") is printed as more bullets, so the review cannot be recovered
//! from it. With `--output-format stream-json` it prints one JSON object per line instead
//! (observed on Kimi Code 2.1.0):
//!
//! - `{"role":"meta","type":"system.version","version":"2.1.0"}` first;
//! - `{"role":"assistant","content":"…","tool_calls":[…]}` for each assistant step, the
//!   `tool_calls` key only on steps that call tools;
//! - `{"role":"tool","tool_call_id":"…","content":"…"}` for each tool result;
//! - `{"role":"meta","type":"turn.step.retrying",…,"error_message":"Connection error."}` while
//!   the provider fails, and `{"role":"meta","type":"session.resume_hint",…}` last.
//!
//! The review is the content of the last assistant message that calls no tool: the model's
//! final answer, exactly as the model wrote it. Narration attached to tool calls is not part
//! of it. A stream with no such message yields an empty review and a diagnostic naming the
//! last provider error, if any.

use gsd_lane_sdk::{
    spawn_own_invocation, Effects, Handler, HandlerError, HandlerName, HandlerOutput, LaneRequest,
    Transport,
};
use serde_json::Value;

/// Largest stdout kept in memory (the §8 capture cap).
const STDOUT_CAP: usize = 64 << 20;

/// First line of the diagnostic when the stream carried no final answer.
const NO_ANSWER: &str =
    "Kimi Code returned no final assistant message (its stream-json output ended without one).";

/// The `kimi-code` handler: one spawn, review taken from the stream-json events on stdout.
#[derive(Debug, Clone, Copy, Default)]
pub struct KimiCode;

impl Handler for KimiCode {
    fn name(&self) -> HandlerName {
        HandlerName::new("kimi-code")
    }

    fn describe(&self) -> &'static str {
        "takes the final assistant message from Kimi Code's stream-json output"
    }

    fn transport(&self) -> Transport {
        Transport::Spawn
    }

    fn run(
        &self,
        effects: &dyn Effects,
        request: &LaneRequest,
    ) -> Result<HandlerOutput, HandlerError> {
        let report = spawn_own_invocation(effects, request, STDOUT_CAP, "kimi-code")?;
        let stream = read_stream(&report.stdout);
        let mut output = match stream.answer {
            Some(answer) if !answer.trim().is_empty() => HandlerOutput::review(answer, "stdout"),
            _ => {
                let mut diagnostic = NO_ANSWER.to_owned();
                if let Some(error) = &stream.last_error {
                    diagnostic.push_str(&format!("\nLast provider error: {error}"));
                }
                HandlerOutput::empty_with(diagnostic)
            }
        };
        if let Some(error) = &report.error {
            output.notes.push(format!("spawn error: {error}"));
        }
        if let Some(version) = stream.version {
            output.notes.push(format!("Kimi Code {version}"));
        }
        output.notes.push(format!(
            "{} assistant message(s), {} tool result(s)",
            stream.assistant_messages, stream.tool_results
        ));
        Ok(output)
    }
}

/// What a stream-json transcript says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stream {
    /// Content of the last assistant message without tool calls.
    pub answer: Option<String>,
    /// `system.version`, when announced.
    pub version: Option<String>,
    /// The last `turn.step.retrying` error message.
    pub last_error: Option<String>,
    /// Assistant messages seen.
    pub assistant_messages: usize,
    /// Tool results seen.
    pub tool_results: usize,
}

/// Reads a stream-json transcript. Total over any input: lines are split on `\n` and trimmed;
/// lines that are not JSON objects are skipped. An assistant `content` is a string, or an
/// array whose `text` parts are joined (other parts skipped).
pub fn read_stream(stdout: &str) -> Stream {
    let mut stream = Stream::default();
    for line in stdout.split('\n') {
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        match event.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                stream.assistant_messages += 1;
                let calls_tools = event
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .is_some_and(|calls| !calls.is_empty());
                if !calls_tools {
                    if let Some(text) = event.get("content").and_then(content_text) {
                        stream.answer = Some(text);
                    }
                }
            }
            Some("tool") => stream.tool_results += 1,
            Some("meta") => match event.get("type").and_then(Value::as_str) {
                Some("system.version") => {
                    stream.version = event
                        .get("version")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                }
                Some("turn.step.retrying") => {
                    if let Some(message) = event.get("error_message").and_then(Value::as_str) {
                        stream.last_error = Some(message.to_owned());
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    stream
}

/// The text of a message `content`: a string, or the joined `text` of an array's parts.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|part| {
                    part.get("type")
                        .and_then(Value::as_str)
                        .is_none_or(|kind| kind == "text")
                })
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        _ => None,
    }
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

    /// Kimi Code 2.1.0's real stream-json output for a review that read a file first.
    const TOOLS: &str = include_str!("../../tests/fixtures/handlers/kimi-code/stream-tools.jsonl");
    /// The same with no tool call.
    const PLAIN: &str = include_str!("../../tests/fixtures/handlers/kimi-code/stream-plain.jsonl");
    /// The provider refusing connections: retries, no answer.
    const RETRYING: &str =
        include_str!("../../tests/fixtures/handlers/kimi-code/stream-retrying.jsonl");

    const ANSWER: &str = "## Summary\n\nThe plan is sound. MARKER-42\n\n## Concerns\n\n- **Tests**: missing for the ledger (MEDIUM)\n\n```python\n# keep\nprint('x')\n```\n";

    fn request(tag: &str) -> LaneRequest {
        let dir =
            gsd_lane_sdk::testing::scratch_dir(&format!("kimi-code-{tag}")).expect("temp dir");
        let mut req = request_spawn("kimi-code", "kimi");
        req.plan.err_path = dir.join("gsd-review-kimi-code.err").display().to_string();
        req.plan.shape = PlanShape::Spawn(SpawnPlan {
            binary: "kimi".into(),
            argv: ["--output-format", "stream-json", "-p", "Review @/run/p.md"]
                .map(String::from)
                .to_vec(),
            stdin: None,
            output_target: OutputTarget::Stdout,
        });
        req
    }

    #[test]
    fn the_real_stream_yields_the_final_answer_without_narration() {
        for stream in [TOOLS, PLAIN] {
            let read = read_stream(stream);
            assert_eq!(read.answer.as_deref(), Some(ANSWER));
            assert_eq!(read.version.as_deref(), Some("2.1.0"));
        }
        let read = read_stream(TOOLS);
        assert_eq!((read.assistant_messages, read.tool_results), (2, 1));

        let fx = FakeEffects::new().process(FakeProcess::prints(TOOLS));
        let req = request("tools");
        let out = KimiCode.run(&fx, &req).expect("runs");
        assert_eq!(out.review, ANSWER);
        assert!(!out.review.contains("I'll read the plan first."));
        assert_eq!(out.source.as_deref(), Some("stdout"));
        let call = &fx.spawn_calls()[0];
        assert_eq!(call.program, "kimi");
        assert_eq!(
            call.args,
            ["--output-format", "stream-json", "-p", "Review @/run/p.md"]
        );
        assert_eq!(call.stdout, StdoutSink::Memory(64 << 20));
    }

    #[test]
    fn no_final_answer_names_the_last_provider_error() {
        let fx = FakeEffects::new().process(FakeProcess::prints(RETRYING).exit(1));
        let out = KimiCode.run(&fx, &request("retrying")).expect("runs");
        assert_eq!(out.review, "");
        assert_eq!(
            out.diagnostic.as_deref(),
            Some(
                "Kimi Code returned no final assistant message (its stream-json output ended \
                 without one).\nLast provider error: Connection error."
            )
        );
    }

    #[test]
    fn only_narration_before_a_tool_call_is_no_answer() {
        let stream = r#"{"role":"assistant","content":"Let me look.","tool_calls":[{"type":"function","id":"c","function":{"name":"Read","arguments":"{}"}}]}"#;
        assert_eq!(read_stream(stream).answer, None);
        let fx = FakeEffects::new().process(FakeProcess::prints(stream));
        let out = KimiCode.run(&fx, &request("narration")).expect("runs");
        assert_eq!(out.review, "");
    }

    #[test]
    fn text_mode_output_is_not_mistaken_for_a_review() {
        let text = include_str!("../../tests/fixtures/handlers/kimi-code/text-mode.txt");
        assert_eq!(read_stream(text), Stream::default());
    }

    #[test]
    fn content_parts_garbage_and_crlf() {
        let stream = [
            "not json",
            "[1]",
            r#"{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"image"},{"text":"b"}]}"#,
            r#"{"role":"assistant","content":7}"#,
            "",
        ]
        .join("\r\n");
        assert_eq!(read_stream(&stream).answer.as_deref(), Some("ab"));
        let later = format!("{stream}\n{}", r#"{"role":"assistant","content":"final"}"#);
        assert_eq!(read_stream(&later).answer.as_deref(), Some("final"));
    }

    #[test]
    fn spawn_failure_is_an_empty_review_not_an_error() {
        let out = KimiCode
            .run(&FakeEffects::new(), &request("enoent"))
            .expect("runs");
        assert_eq!(out.review, "");
        assert!(out.notes.iter().any(|n| n.contains("ENOENT")));
    }

    proptest! {
        #[test]
        fn arbitrary_input_never_panics(input in any::<String>()) {
            let _ = read_stream(&input);
        }
    }
}
