//! `openai-compatible`: OpenAI-compatible chat-completions servers (invocation.md §9).

use std::path::Path;
use std::time::Duration;

use gsd_lane_sdk::{
    Effects, FileRead, HandlerError, HandlerName, HandlerOutput, HttpPlan, HttpReport, HttpRequest,
    LaneRequest, Transport,
};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::json_text;

/// Bound of the model-discovery request.
const DISCOVERY_TIMEOUT: Duration = Duration::from_millis(2_000);

/// Largest prompt sent (a prompt file larger than this is refused, not truncated).
const MAX_PROMPT_BYTES: u64 = 64 << 20;

/// The handler for ollama, LM Studio, llama.cpp and any OpenAI-compatible server.
pub struct OpenAiCompatible;

impl gsd_lane_sdk::Handler for OpenAiCompatible {
    fn name(&self) -> HandlerName {
        HandlerName::new("openai-compatible")
    }

    fn describe(&self) -> &'static str {
        "discovers the model, posts the prompt to /v1/chat/completions, keeps the raw body and warns on a served-model mismatch"
    }

    fn transport(&self) -> Transport {
        Transport::OpenAiHttp
    }

    fn run(
        &self,
        effects: &dyn Effects,
        request: &LaneRequest,
    ) -> Result<HandlerOutput, HandlerError> {
        let plan = request.plan.http().ok_or_else(|| {
            HandlerError::malformed("openai-compatible needs an openai-http lane")
        })?;
        let prompt = match effects.read_text(Path::new(&request.plan.prompt_path), MAX_PROMPT_BYTES)
        {
            FileRead::Text(text) => text,
            FileRead::Missing => String::new(),
            FileRead::Unreadable(why) => {
                return Err(HandlerError::new(
                    gsd_lane_sdk::HandlerErrorKind::Io,
                    format!("reading prompt {}: {why}", request.plan.prompt_path),
                ))
            }
        };
        let model = choose_model(effects, plan);
        let body = json!({"model": model, "messages": [{"role": "user", "content": prompt}]});
        let report = effects.http(&HttpRequest::post_json(
            plan.url.clone(),
            body.to_string(),
            effects.remaining(),
        ));
        let mut response = read_response(report);
        let mut notices = Vec::new();
        if let Some(served) = response
            .served_model
            .as_deref()
            .filter(|served| *served != model)
        {
            let warning = format!(
                "{} served model '{served}' but '{model}' was requested. Review may be from a different model.",
                request.plan.slug
            );
            effects.warn(&warning);
            notices.push(warning);
        }
        if response.truncated {
            effects.warn(&format!(
                "{}: the server stopped at its output token limit (finish_reason \"length\"); the review is marked truncated",
                request.plan.slug
            ));
            notices.push(TRUNCATED_NOTICE.to_owned());
        }
        let source = format!("POST {} (model {model})", plan.url);
        let raw = std::mem::take(&mut response.raw);
        Ok(HandlerOutput::review(review_text(response, &notices), &source).with_diagnostic(raw))
    }
}

/// The note a review cut off at the server's output limit carries.
const TRUNCATED_NOTICE: &str = "truncated review: the server stopped at its output token limit \
     (finish_reason \"length\"); the text above is incomplete.";

/// The review file's text: the answer, then the handler's notices (so REVIEWS.md shows them
/// under the lane), then the model's reasoning collapsed. Empty when the answer is empty, so the
/// empty-output policy applies to a reply that was only reasoning. The answer is moved, never
/// copied (it may be as large as the body cap).
fn review_text(response: ChatResponse, notices: &[String]) -> String {
    if is_blank(&response.review) {
        return String::new();
    }
    let mut text = response.review;
    if notices.is_empty() && response.reasoning.is_none() {
        return text;
    }
    text.truncate(text.trim_end().len());
    text.push('\n');
    for notice in notices {
        text.push_str("\n> [gsd-lane] ");
        text.push_str(notice);
        text.push('\n');
    }
    if let Some(reasoning) = &response.reasoning {
        text.push_str(&collapsed_reasoning(reasoning));
    }
    text
}

/// Whitespace only (Unicode white space and U+FEFF, as the empty-output policy counts it).
fn is_blank(text: &str) -> bool {
    text.chars().all(|c| c.is_whitespace() || c == '\u{feff}')
}

/// The model's reasoning as a collapsed block after the review: kept for whoever wants it,
/// out of the way of the answer. The code fence is longer than any backtick run inside, so the
/// reasoning cannot close it early (CommonMark fences), and its text is left as it came.
fn collapsed_reasoning(reasoning: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(reasoning).max(2) + 1);
    format!(
        "\n<details>\n<summary>Model reasoning ({} characters; not part of the review)</summary>\n\n{fence}text\n{}\n{fence}\n\n</details>\n",
        reasoning.chars().count(),
        reasoning.trim()
    )
}

/// The longest run of consecutive backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// The configured model, else the first discovered one, else the fallback.
fn choose_model(effects: &dyn Effects, plan: &HttpPlan) -> String {
    if let Some(model) = &plan.model {
        return model.clone();
    }
    let discovered = plan.models_url.as_ref().and_then(|url| {
        let report = effects.http(&HttpRequest::get(
            url.clone(),
            DISCOVERY_TIMEOUT.min(effects.remaining()),
        ));
        match report {
            HttpReport::Response { status, body } if (200..300).contains(&status) => {
                first_model_id(&body)
            }
            _ => None,
        }
    });
    discovered.unwrap_or_else(|| plan.fallback_model.clone())
}

/// `data[0].id` of a `/v1/models` body, when a non-empty string.
pub fn first_model_id(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    let id = value
        .get("data")?
        .as_array()?
        .first()?
        .get("id")?
        .as_str()?;
    (!id.is_empty()).then(|| id.to_owned())
}

/// What a chat-completions call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatResponse {
    /// The answer text (`choices[0].message.content`, a string or the joined text parts) with
    /// leading `<think>` blocks taken out; empty for a failed call.
    pub review: String,
    /// What the generic stub shows when there is no review: the raw body, or the transport
    /// error; for a non-2xx answer it starts with `HTTP <status>` on its own line. Empty when
    /// `review` holds an answer (the body is dropped as soon as the answer is out of it, so a
    /// large answer is never held twice).
    pub raw: String,
    /// The `model` the server says it served.
    pub served_model: Option<String>,
    /// `choices[0].finish_reason` is `length`: the server cut the answer off.
    pub truncated: bool,
    /// Reasoning taken out of the answer (`<think>` blocks, `reasoning_content`).
    pub reasoning: Option<String>,
}

impl ChatResponse {
    fn failed(raw: String) -> ChatResponse {
        ChatResponse {
            review: String::new(),
            raw,
            served_model: None,
            truncated: false,
            reasoning: None,
        }
    }
}

/// Interprets a chat-completions report (invocation.md §9 step 4, decisions #8).
///
/// - A transport failure has no review; its error is the diagnostic.
/// - A 3xx is a failed call whatever its body (redirects are never followed, trust.md §6.7):
///   status and body go to the diagnostic, never into the review.
/// - Every other non-2xx keeps its body verbatim (servers put their error JSON there) after an
///   `HTTP <status>` line; a 4xx/5xx body that nonetheless carries an answer is read as §9 says.
/// - The answer is `choices[0].message.content`: a string, or an array of parts whose `text`
///   parts are joined. Leading `<think>…</think>` blocks are reasoning, not review.
///
/// The report is consumed: the answer is moved out of the parsed body, and the body is dropped
/// once an answer came out of it, so at most the body and its parsed answer are held at once.
pub fn read_response(report: HttpReport) -> ChatResponse {
    let (status, body) = match report {
        HttpReport::Failed { error } => return ChatResponse::failed(error),
        HttpReport::Response { status, body } => (status, body),
    };
    let raw = |body: String| {
        if (200..300).contains(&status) {
            body
        } else if body.is_empty() {
            format!("HTTP {status}")
        } else {
            format!("HTTP {status}\n{body}")
        }
    };
    if (300..400).contains(&status) || body.is_empty() {
        return ChatResponse::failed(raw(body));
    }
    // The body's members are read as spans of it and the answer decoded once (json_text):
    // the answer is never held more than twice, body included.
    let Some(top) = json_text::members(&body) else {
        return ChatResponse::failed(raw(body));
    };
    let text_of = |raw: &RawValue| serde_json::from_str::<String>(raw.get()).ok();
    let served_model = top
        .get("model")
        .and_then(|model| text_of(model))
        .filter(|m| !m.is_empty());
    let choice = top
        .get("choices")
        .and_then(|choices| json_text::first_element(choices.get()))
        .and_then(|choice| json_text::members(choice.get()))
        .unwrap_or_default();
    let truncated = choice
        .get("finish_reason")
        .and_then(|reason| text_of(reason))
        .is_some_and(|reason| reason == "length");
    let message = choice
        .get("message")
        .and_then(|message| json_text::members(message.get()))
        .unwrap_or_default();
    let content = message.get("content").map_or_else(String::new, |content| {
        let literal = content.get();
        if literal.starts_with('"') {
            json_text::string(literal).unwrap_or_default()
        } else {
            serde_json::from_str::<Value>(literal)
                .map(content_text)
                .unwrap_or_default()
        }
    });
    let reasoning_field = message
        .get("reasoning_content")
        .and_then(|field| text_of(field))
        .filter(|field| !field.trim().is_empty());
    drop((top, choice, message));
    let (review, think) = split_reasoning(content);
    let reasoning = match (reasoning_field, think) {
        (Some(field), Some(think)) => Some(format!("{field}\n\n{think}")),
        (field, None) => field,
        (None, think) => think,
    };
    ChatResponse {
        // Only a call without an answer shows its body (the generic stub's diagnostic).
        raw: if is_blank(&review) {
            raw(body)
        } else {
            drop(body);
            String::new()
        },
        review,
        served_model,
        truncated,
        reasoning,
    }
}

/// `content` as text: a string as is (moved); an array of parts joined from its `text` parts
/// (a part with `"type": "text"`, or no type, and a string `text`); anything else is empty.
fn content_text(content: Value) -> String {
    match content {
        Value::String(text) => text,
        Value::Array(parts) => parts
            .iter()
            .filter(|part| {
                part.get("type")
                    .is_none_or(|kind| kind.as_str() == Some("text"))
            })
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";

/// Takes the leading `<think>…</think>` blocks out of an answer: `(answer, reasoning)`.
///
/// Only blocks at the very start (after whitespace) are reasoning, as reasoning models emit
/// them; a `<think>` later in the text is the review talking about the tag and stays. A block
/// left open (the answer was cut off while reasoning) is reasoning to the end. The answer is
/// `content` itself, its reasoning prefix removed in place (never a copy).
pub fn split_reasoning(mut content: String) -> (String, Option<String>) {
    let mut rest = content.as_str();
    let mut blocks: Vec<&str> = Vec::new();
    while let Some(inner) = rest.trim_start().strip_prefix(THINK_OPEN) {
        match inner.find(THINK_CLOSE) {
            Some(end) => {
                blocks.push(&inner[..end]);
                rest = &inner[end + THINK_CLOSE.len()..];
            }
            None => {
                blocks.push(inner);
                rest = "";
            }
        }
    }
    if blocks.is_empty() {
        return (content, None);
    }
    let reasoning: Vec<&str> = blocks
        .iter()
        .map(|b| b.trim())
        .filter(|b| !b.is_empty())
        .collect();
    let reasoning = (!reasoning.is_empty()).then(|| reasoning.join("\n\n"));
    let answer_at = content.len() - rest.trim_start().len();
    content.replace_range(..answer_at, "");
    (content, reasoning)
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use gsd_lane_sdk::testing::FakeEffects;
    use gsd_lane_sdk::Handler;

    fn request(model: Option<&str>) -> LaneRequest {
        let mut request = gsd_lane_sdk::testing::request_spawn("ollama", "unused");
        request.plan.shape = gsd_lane_sdk::PlanShape::Http(HttpPlan {
            host: "http://h".into(),
            host_config_key: "review.ollama_host".into(),
            url: "http://h/v1/chat/completions".into(),
            models_url: Some("http://h/v1/models".into()),
            model: model.map(str::to_owned),
            fallback_model: "llama3".into(),
        });
        request
    }

    #[test]
    fn discovers_the_model_and_posts_the_prompt() {
        let fx = FakeEffects::new()
            .file("/run/gsd-review-prompt.md", "PLAN")
            .http_answer("http://h/v1/models", 200, r#"{"data":[{"id":"qwen"}]}"#)
            .http_answer(
                "http://h/v1/chat/completions",
                200,
                r#"{"model":"qwen","choices":[{"message":{"content":"LGTM"}}]}"#,
            );
        let out = OpenAiCompatible.run(&fx, &request(None)).expect("runs");
        assert_eq!(out.review, "LGTM");
        let calls = fx.http_calls();
        let body: Value =
            serde_json::from_str(calls[1].json_body.as_deref().expect("body")).expect("json");
        assert_eq!(
            body,
            json!({"model":"qwen","messages":[{"role":"user","content":"PLAN"}]})
        );
        assert!(fx.warnings().is_empty());
    }

    #[test]
    fn falls_back_and_warns_on_mismatch() {
        let fx = FakeEffects::new().http_answer(
            "http://h/v1/chat/completions",
            200,
            r#"{"model":"other","choices":[{"message":{"content":"x"}}]}"#,
        );
        let out = OpenAiCompatible.run(&fx, &request(None)).expect("runs");
        // The warning also travels in the review file, so REVIEWS.md shows it under the lane.
        assert_eq!(
            out.review,
            "x\n\n> [gsd-lane] ollama served model 'other' but 'llama3' was requested. Review may be from a different model.\n"
        );
        let body = fx.http_calls()[1].json_body.clone().expect("body");
        assert!(body.contains("\"model\":\"llama3\""));
        assert_eq!(
            fx.warnings(),
            vec!["ollama served model 'other' but 'llama3' was requested. Review may be from a different model."]
        );
    }

    #[test]
    fn configured_model_skips_discovery_and_error_bodies_are_kept() {
        let fx = FakeEffects::new().http_answer(
            "http://h/v1/chat/completions",
            500,
            r#"{"error":"boom"}"#,
        );
        let out = OpenAiCompatible
            .run(&fx, &request(Some("m")))
            .expect("runs");
        assert_eq!(fx.http_calls().len(), 1);
        assert_eq!(out.review, "");
        assert_eq!(
            out.diagnostic.as_deref(),
            Some("HTTP 500\n{\"error\":\"boom\"}")
        );
    }

    #[test]
    fn response_table() {
        let empty_404 = read_response(HttpReport::Response {
            status: 404,
            body: String::new(),
        });
        assert_eq!(empty_404.raw, "HTTP 404");
        let garbage = read_response(HttpReport::Response {
            status: 200,
            body: "nope".into(),
        });
        assert_eq!(
            (garbage.review.as_str(), garbage.raw.as_str()),
            ("", "nope")
        );
        let failed = read_response(HttpReport::Failed {
            error: "ECONNREFUSED".into(),
        });
        assert_eq!(failed.raw, "ECONNREFUSED");
        assert_eq!(first_model_id(r#"{"data":[{"id":""}]}"#), None);
        assert_eq!(first_model_id(r#"{"data":"x"}"#), None);
    }

    fn answer(status: u16, body: &Value) -> ChatResponse {
        read_response(HttpReport::Response {
            status,
            body: body.to_string(),
        })
    }

    #[test]
    fn text_parts_are_joined_and_other_parts_left_out() {
        let parts = json!({"choices": [{"message": {"content": [
            {"type": "text", "text": "first "},
            {"type": "image_url", "image_url": {"url": "x"}},
            {"text": "second"},
            {"type": "refusal", "refusal": "no"}
        ]}}]});
        assert_eq!(answer(200, &parts).review, "first second");
        let odd = json!({"choices": [{"message": {"content": {"text": "x"}}}]});
        assert_eq!(answer(200, &odd).review, "");
    }

    #[test]
    fn redirects_are_failed_calls_whatever_their_body() {
        let body = json!({"choices": [{"message": {"content": "moved review"}}]});
        let moved = answer(307, &body);
        assert_eq!(moved.review, "");
        assert_eq!(moved.raw, format!("HTTP 307\n{body}"));
        let bare = read_response(HttpReport::Response {
            status: 301,
            body: String::new(),
        });
        assert_eq!((bare.review.as_str(), bare.raw.as_str()), ("", "HTTP 301"));
    }

    #[test]
    fn every_non_2xx_names_its_status_on_its_own_line() {
        for status in [400, 404, 429, 500, 503] {
            let raw = answer(status, &json!({"error": "x"})).raw;
            assert_eq!(raw.lines().next(), Some(format!("HTTP {status}").as_str()));
        }
        assert_eq!(
            answer(200, &json!({"no": "choices"})).raw,
            "{\"no\":\"choices\"}"
        );
    }

    #[test]
    fn the_answer_is_moved_out_of_the_body_whole() {
        // A large answer after a reasoning block: the review is the answer exactly, the
        // reasoning is apart, and the body is not kept beside it.
        let text = "- line of the review\n".repeat(200_000);
        let body = json!({"model": "m", "choices": [{"message": {
            "content": format!("<think>weigh it</think>\n\n{text}"),
            "reasoning_content": "first"}}]});
        let response = answer(200, &body);
        assert!(response.review == text, "the review is not the answer");
        assert_eq!(response.reasoning.as_deref(), Some("first\n\nweigh it"));
        assert_eq!(response.raw, "", "a body kept beside its answer");
        let out = review_text(response, &[]);
        assert!(out.starts_with(&text), "the review file loses the answer");
        // No answer: the body is what the stub shows.
        let blank = json!({"choices": [{"message": {"content": "  "}}]});
        assert_eq!(answer(200, &blank).raw, blank.to_string());
    }

    #[test]
    fn leading_think_blocks_are_reasoning() {
        assert_eq!(
            split_reasoning("<think>\nweigh it\n</think>\n\n## Review\nok".to_owned()),
            ("## Review\nok".to_owned(), Some("weigh it".to_owned()))
        );
        assert_eq!(
            split_reasoning(" <think>a</think><think>b</think>x".to_owned()),
            ("x".to_owned(), Some("a\n\nb".to_owned()))
        );
        assert_eq!(
            split_reasoning("<think>cut off".to_owned()),
            (String::new(), Some("cut off".to_owned()))
        );
        // A review that mentions the tag keeps it.
        let plain = "The parser drops <think>x</think> tags.";
        assert_eq!(split_reasoning(plain.to_owned()), (plain.to_owned(), None));
        assert_eq!(split_reasoning("<think></think>".to_owned()), (String::new(), None));
    }

    #[test]
    fn only_reasoning_is_an_empty_review() {
        let fx = FakeEffects::new().http_answer(
            "http://h/v1/chat/completions",
            200,
            r#"{"choices":[{"message":{"content":"<think>hmm</think>\n"}}]}"#,
        );
        let out = OpenAiCompatible
            .run(&fx, &request(Some("m")))
            .expect("runs");
        assert_eq!(out.review, "");
        assert!(out.diagnostic.expect("raw").contains("hmm"));
    }

    #[test]
    fn review_file_carries_notices_and_collapsed_reasoning() {
        let fx = FakeEffects::new().http_answer(
            "http://h/v1/chat/completions",
            200,
            r#"{"model":"other","choices":[{"finish_reason":"length","message":{"content":"<think>plan ```x```</think>Looks fine"}}]}"#,
        );
        let out = OpenAiCompatible
            .run(&fx, &request(Some("m")))
            .expect("runs");
        let warnings = fx.warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[1].contains("finish_reason \"length\""),
            "{warnings:?}"
        );
        let (answer, rest) = out.review.split_once('\n').expect("lines");
        assert_eq!(answer, "Looks fine");
        assert!(
            rest.contains("\n> [gsd-lane] ollama served model 'other' but 'm' was requested."),
            "{rest}"
        );
        assert!(rest.contains("\n> [gsd-lane] truncated review:"), "{rest}");
        let details = rest.find("<details>").expect("collapsed reasoning");
        assert!(rest.find("truncated review").expect("notice") < details);
        // The reasoning's own ``` cannot close the fence: it is four backticks long.
        assert!(rest.contains("\n````text\nplan ```x```\n````\n"), "{rest}");
    }

    #[test]
    fn a_plain_answer_is_kept_byte_for_byte() {
        let fx = FakeEffects::new().http_answer(
            "http://h/v1/chat/completions",
            200,
            r#"{"choices":[{"finish_reason":"stop","message":{"content":"  LGTM  \n\n"}}]}"#,
        );
        let out = OpenAiCompatible
            .run(&fx, &request(Some("m")))
            .expect("runs");
        assert_eq!(out.review, "  LGTM  \n\n");
    }
}
