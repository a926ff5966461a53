//! `openai-compatible`: OpenAI-compatible chat-completions servers (invocation.md §9).

use std::path::Path;
use std::time::Duration;

use gsd_lane_sdk::{
    Effects, FileRead, HandlerError, HandlerName, HandlerOutput, HttpMethod, HttpPlan, HttpReport,
    HttpRequest, LaneRequest, Transport,
};
use serde_json::{json, Value};

/// Bound of the model-discovery request.
const DISCOVERY_TIMEOUT: Duration = Duration::from_millis(2_000);

/// Largest prompt sent (a prompt file larger than this is refused, not truncated).
const MAX_PROMPT_BYTES: u64 = 64 << 20;

/// The handler for ollama, LM Studio, llama.cpp and any OpenAI-compatible server.
pub struct OpenAiCompatible;

impl gsd_lane_sdk::Handler for OpenAiCompatible {
    fn name(&self) -> HandlerName {
        HandlerName::OpenAiCompatible
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
        let report = effects.http(&HttpRequest {
            method: HttpMethod::Post,
            url: plan.url.clone(),
            json_body: Some(body.to_string()),
            timeout: effects.remaining(),
        });
        let response = read_response(&report);
        if let Some(served) = response
            .served_model
            .as_deref()
            .filter(|served| *served != model)
        {
            effects.warn(&format!(
                "{} served model '{served}' but '{model}' was requested. Review may be from a different model.",
                request.plan.slug
            ));
        }
        Ok(HandlerOutput {
            review: response.review,
            diagnostic: Some(response.raw),
            source: Some(format!("POST {} (model {model})", plan.url)),
            ..HandlerOutput::default()
        })
    }
}

/// The configured model, else the first discovered one, else the fallback.
fn choose_model(effects: &dyn Effects, plan: &HttpPlan) -> String {
    if let Some(model) = &plan.model {
        return model.clone();
    }
    let discovered = plan.models_url.as_ref().and_then(|url| {
        let report = effects.http(&HttpRequest {
            method: HttpMethod::Get,
            url: url.clone(),
            json_body: None,
            timeout: DISCOVERY_TIMEOUT.min(effects.remaining()),
        });
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
    /// `choices[0].message.content`, or empty.
    pub review: String,
    /// The raw body, `HTTP <status>`, or the transport error.
    pub raw: String,
    /// The `model` the server says it served.
    pub served_model: Option<String>,
}

/// Interprets a chat-completions report (invocation.md §9 step 4).
pub fn read_response(report: &HttpReport) -> ChatResponse {
    match report {
        HttpReport::Failed { error } => ChatResponse {
            review: String::new(),
            raw: error.clone(),
            served_model: None,
        },
        HttpReport::Response { status, body } if body.is_empty() => ChatResponse {
            review: String::new(),
            raw: if (200..300).contains(status) {
                String::new()
            } else {
                format!("HTTP {status}")
            },
            served_model: None,
        },
        HttpReport::Response { body, .. } => {
            let parsed: Option<Value> = serde_json::from_str(body).ok();
            let review = parsed
                .as_ref()
                .and_then(|v| {
                    v.get("choices")?
                        .get(0)?
                        .get("message")?
                        .get("content")?
                        .as_str()
                })
                .unwrap_or("")
                .to_owned();
            let served_model = parsed
                .as_ref()
                .and_then(|v| v.get("model")?.as_str())
                .filter(|m| !m.is_empty())
                .map(str::to_owned);
            // A 4xx/5xx body is kept verbatim: servers put their error JSON there.
            ChatResponse {
                review,
                raw: body.clone(),
                served_model,
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use gsd_lane_sdk::testing::FakeEffects;
    use gsd_lane_sdk::Handler;

    fn request(model: Option<&str>) -> LaneRequest {
        let mut request = gsd_lane_sdk::testing_request_spawn("ollama", "unused");
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
        assert_eq!(out.review, "x");
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
        assert_eq!(out.diagnostic.as_deref(), Some("{\"error\":\"boom\"}"));
    }

    #[test]
    fn response_table() {
        let empty_404 = read_response(&HttpReport::Response {
            status: 404,
            body: String::new(),
        });
        assert_eq!(empty_404.raw, "HTTP 404");
        let garbage = read_response(&HttpReport::Response {
            status: 200,
            body: "nope".into(),
        });
        assert_eq!(
            (garbage.review.as_str(), garbage.raw.as_str()),
            ("", "nope")
        );
        let failed = read_response(&HttpReport::Failed {
            error: "ECONNREFUSED".into(),
        });
        assert_eq!(failed.raw, "ECONNREFUSED");
        assert_eq!(first_model_id(r#"{"data":[{"id":""}]}"#), None);
        assert_eq!(first_model_id(r#"{"data":"x"}"#), None);
    }
}
