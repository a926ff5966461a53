//! The shapes real OpenAI-compatible servers send (issue 10 point 5), replayed on loopback
//! against the first-party `ollama` lane through the real binary: `gsd-lane run` for the review
//! file, `gsd-lane review` for REVIEWS.md.
//!
//! Each test fails without its fix: text-part arrays joined, `finish_reason: "length"` marked,
//! `<think>` reasoning out of the review, a `/v1` base URL never asking for `/v1/v1/…`, a failed
//! first run pinning nothing, the served-model warning in REVIEWS.md, a 3xx (with or without a
//! body) a failed call, every non-2xx stub naming its status on its own line.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::http_server::{json_reply, Reply, Server};
use crate::util::{self, Outcome, TestEnv};

/// The model configured for the lane (so discovery is skipped unless a test wants it).
const MODEL: &str = "acme-7b";

/// A project with the review fixture's phase 3 and `review.ollama_host` = `host`.
struct Lab {
    env: TestEnv,
    run_dir: PathBuf,
}

impl Lab {
    fn new(host: &str) -> Lab {
        let env = TestEnv::new();
        copy_dir(&util::fixture("review/project"), &env.project);
        std::fs::create_dir_all(env.project.join(".git")).expect("git marker");
        let run_dir = env.root.path().join("run");
        std::fs::create_dir_all(&run_dir).expect("run dir");
        std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review PLAN-1.\n").expect("prompt");
        let lab = Lab { env, run_dir };
        lab.host(host);
        lab
    }

    fn host(&self, host: &str) {
        let config = json!({"review": {"ollama_host": host, "models": {"ollama": MODEL}}});
        std::fs::write(
            self.env.project.join(".planning/config.json"),
            serde_json::to_string_pretty(&config).expect("json"),
        )
        .expect("config");
    }

    fn gsd(&self, args: &[&str]) -> Outcome {
        let command = util::gsd_command(&self.env, "/usr/bin:/bin", &self.env.project, args);
        util::run_bounded(command, std::time::Duration::from_secs(30)).0
    }

    /// `gsd-lane run ollama --json`; returns (stubbed, review file, outcome).
    fn run(&self) -> (bool, String, Outcome) {
        let run_dir = self.run_dir.display().to_string();
        let out = self.gsd(&["run", "ollama", "--run-dir", &run_dir, "--json"]);
        out.assert_status(0);
        let result = out.json();
        assert_eq!(result["ok"], true, "{result}");
        let stubbed = result["stubbed"].as_bool().expect("stubbed");
        let review = std::fs::read_to_string(self.run_dir.join("gsd-review-ollama.md"))
            .expect("review file");
        (stubbed, review, out)
    }

    /// `gsd-lane review --phase 3 --ollama`; returns REVIEWS.md.
    fn reviews_md(&self) -> String {
        let out = self.gsd(&["review", "--phase", "3", "--ollama"]);
        out.assert_status(0);
        let path = self
            .env
            .project
            .join(".planning/phases/03-billing/03-REVIEWS.md");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn pins(&self) -> Value {
        let path = self.env.gsd_home.join(".gsd/egress-pins.json");
        std::fs::read_to_string(path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null)
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The section of REVIEWS.md under `## Ollama Review`, up to the next `---`.
fn ollama_section(reviews: &str) -> &str {
    let start = reviews
        .find("## Ollama Review\n")
        .unwrap_or_else(|| panic!("no Ollama section: {reviews}"));
    let rest = &reviews[start..];
    &rest[..rest.find("\n---\n").unwrap_or(rest.len())]
}

/// A server with `/v1/models` and a chat route answering `chat` (at `prefix` + the paths).
fn server_at(prefix: &str, chat: Reply) -> Server {
    let models_path = format!("{prefix}/v1/models");
    let chat_path = format!("{prefix}/v1/chat/completions");
    Server::start(&[
        (
            "GET",
            &models_path,
            json_reply(200, &json!({"object": "list", "data": [{"id": MODEL}]})),
        ),
        ("POST", &chat_path, chat),
    ])
}

fn server(chat: Reply) -> Server {
    server_at("", chat)
}

/// A 200 chat completion whose first choice is `choice`.
fn chat(choice: Value) -> Reply {
    json_reply(
        200,
        &json!({"id": "c1", "object": "chat.completion", "model": MODEL, "choices": [choice]}),
    )
}

#[test]
fn content_as_text_parts_is_joined() {
    let server = server(chat(
        json!({"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "## Verdict\n"}, {"type": "text", "text": "Looks sound."}]
        }}),
    ));
    let lab = Lab::new(&server.url());
    let (stubbed, review, _) = lab.run();
    assert!(!stubbed, "{review}");
    assert_eq!(review, util::uncited("## Verdict\nLooks sound.\n"));
}

#[test]
fn finish_reason_length_marks_the_review_truncated_in_reviews_md() {
    let server = server(chat(
        json!({"index": 0, "finish_reason": "length", "message": {
            "role": "assistant", "content": "The plan is fine up to step"
        }}),
    ));
    let lab = Lab::new(&server.url());
    let section = lab.reviews_md();
    let section = ollama_section(&section);
    assert!(section.contains("The plan is fine up to step"), "{section}");
    assert!(
        section.contains("> [gsd-lane] truncated review:")
            && section.contains("finish_reason \"length\""),
        "{section}"
    );
}

#[test]
fn think_blocks_are_taken_out_of_the_review() {
    let server = server(chat(
        json!({"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant",
            "content": "<think>\nThe user wants a review. Let me weigh step 2.\n</think>\n\nStep 2 lacks a rollback."
        }}),
    ));
    let lab = Lab::new(&server.url());
    let (stubbed, review, _) = lab.run();
    assert!(!stubbed, "{review}");
    assert!(
        review.starts_with(&util::uncited("Step 2 lacks a rollback.\n")),
        "{review}"
    );
    assert!(!review.contains("<think>"), "{review}");
    // Kept, collapsed, after the review.
    let details = review.find("<details>").expect("collapsed reasoning");
    assert!(
        review[details..].contains("Let me weigh step 2."),
        "{review}"
    );
}

#[test]
fn a_reply_that_is_only_reasoning_is_an_empty_review() {
    let server = server(chat(
        json!({"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "<think>I should say something.</think>\n  "
        }}),
    ));
    let lab = Lab::new(&server.url());
    let (stubbed, review, _) = lab.run();
    assert!(stubbed, "{review}");
    assert!(
        review.starts_with("ollama review failed or returned empty output. stderr:\n"),
        "{review}"
    );
}

#[test]
fn a_base_url_ending_in_v1_never_asks_for_v1_v1() {
    let server = server(chat(
        json!({"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "ok from /v1"
        }}),
    ));
    let lab = Lab::new(&format!("{}/v1", server.url()));
    // Discovery too: no configured model.
    let config = json!({"review": {"ollama_host": format!("{}/v1/", server.url())}});
    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        config.to_string(),
    )
    .expect("config");
    let (stubbed, review, _) = lab.run();
    assert!(!stubbed, "{review}");
    assert_eq!(review, util::uncited("ok from /v1\n"));
    let paths: Vec<String> = server.requests().into_iter().map(|(_, p)| p).collect();
    assert_eq!(
        paths,
        ["/v1/models", "/v1/models", "/v1/chat/completions"],
        "probe, discovery, chat"
    );
    let plan = lab.gsd(&["plan", "--selected", "ollama"]);
    assert!(!plan.stdout.contains("/v1/v1"), "{}", plan.stdout);
}

#[test]
fn a_first_run_pins_its_destination_even_when_it_fails() {
    // trust.md §6.9: the first run records the host before any byte leaves, whatever the
    // answer; a later move is blocked until the user rebinds it deliberately.
    let failing = server(json_reply(404, &json!({"error": "no such model"})));
    let lab = Lab::new(&failing.url());
    let (stubbed, _, _) = lab.run();
    assert!(stubbed);
    let pins = lab.pins();
    let hosts: Vec<&str> = pins["pins"]
        .as_object()
        .expect("pins")
        .values()
        .filter_map(|p| p["host"].as_str())
        .collect();
    assert_eq!(hosts, [failing.url().as_str()]);
    let working = server(chat(
        json!({"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "fine"
        }}),
    ));
    lab.host(&working.url());
    let run_dir = lab.run_dir.display().to_string();
    let out = lab.gsd(&["run", "ollama", "--run-dir", &run_dir, "--json"]);
    assert_eq!(
        out.json()["reason"],
        "egress_host_changed",
        "{}",
        out.stdout
    );
    assert_eq!(working.requests().len(), 0, "the moved host was contacted");
}

#[test]
fn served_model_mismatch_is_noted_in_reviews_md() {
    let server = Server::start(&[
        (
            "GET",
            "/v1/models",
            json_reply(200, &json!({"data": [{"id": MODEL}]})),
        ),
        (
            "POST",
            "/v1/chat/completions",
            json_reply(
                200,
                &json!({"model": "tiny-1b", "choices": [{"finish_reason": "stop",
                        "message": {"role": "assistant", "content": "Ship it."}}]}),
            ),
        ),
    ]);
    let lab = Lab::new(&server.url());
    let reviews = lab.reviews_md();
    let section = ollama_section(&reviews);
    assert!(section.contains("Ship it."), "{section}");
    assert!(
        section.contains(&format!(
            "> [gsd-lane] ollama served model 'tiny-1b' but '{MODEL}' was requested."
        )),
        "{section}"
    );
}

/// The stub of a chat call answered with `status`, `headers` and `body`.
fn stub_for(status: u16, headers: Vec<(String, String)>, body: &str) -> String {
    let server = server(Reply::Respond {
        status,
        headers,
        body: body.as_bytes().to_vec(),
    });
    let lab = Lab::new(&server.url());
    let (stubbed, review, _) = lab.run();
    assert!(stubbed, "HTTP {status} is no review: {review}");
    review
}

#[test]
fn a_redirect_with_a_body_is_a_failed_call() {
    let body =
        json!({"choices": [{"message": {"content": "REDIRECT BODY AS REVIEW"}}]}).to_string();
    let location = vec![("Location".to_owned(), "http://127.0.0.1:9/x".to_owned())];
    for status in [301, 302, 307, 308] {
        let review = stub_for(status, location.clone(), &body);
        assert_eq!(
            review,
            format!(
                "ollama review failed or returned empty output. stderr:\n\nRaw response body:\nHTTP {status}\n{body}\n\
                 Diagnosis: ollama is an HTTP lane and carries no reasoning-effort setting.\n"
            )
        );
    }
    let bare = stub_for(307, location, "");
    assert!(
        bare.ends_with(
            "\nRaw response body:\nHTTP 307\n\
             Diagnosis: ollama is an HTTP lane and carries no reasoning-effort setting.\n"
        ),
        "{bare}"
    );
}

#[test]
fn every_non_2xx_stub_names_the_status_on_its_own_line() {
    for (status, body) in [
        (400, r#"{"error":"bad request"}"#),
        (404, r#"{"error":"model not found"}"#),
        (429, "slow down"),
        (503, ""),
    ] {
        let review = stub_for(status, Vec::new(), body);
        assert!(
            review.lines().any(|line| line == format!("HTTP {status}")),
            "{status}: {review}"
        );
        assert!(review.contains(body), "{status}: {review}");
    }
}
