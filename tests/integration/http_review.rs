//! `gsd-lane review` of an HTTP lane (the first-party ollama lane against the loopback server)
//! at the body cap (16 MiB, trust.md §6.7): an answer just under it reaches the file beside
//! REVIEWS.md whole, byte for byte (the handler moves the answer out of the body instead of
//! copying it; BENCHMARKS.md "HTTP reviews: memory by answer size"), and an answer past it is a
//! failed lane that REVIEWS.md says failed and why, never a review cut at the cap.

use serde_json::json;

use crate::http_server::{chat_reply, json_reply, Reply, Server};
use crate::review::Lab;

/// One line of a long review (Markdown, as a model writes it).
const LINE: &str =
    "* **MEDIUM** `src/ledger.py:42`: the total is rounded before the tax is applied\n";

/// `review --phase 3` of the ollama lane (pointed at a server answering `answer`) and the fake
/// spawn lane alpha, in a fresh lab.
fn review_beside_alpha(answer: Reply) -> (Server, Lab, crate::util::Outcome) {
    let server = Server::start(&[
        (
            "GET",
            "/v1/models",
            json_reply(200, &json!({"object": "list", "data": [{"id": "m"}]})),
        ),
        ("POST", "/v1/chat/completions", answer),
    ]);
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.config(&json!({"review": {"ollama_host": server.url(), "models": {"ollama": "m"}}}));
    let out = lab.review(&["--phase", "3", "--ollama", "--alpha"]);
    out.assert_no_panic();
    (server, lab, out)
}

/// An answer of `bytes` bytes of review lines ending with a line of its own.
fn long_answer(bytes: usize, last: &str) -> String {
    let mut content = LINE.repeat(bytes / LINE.len());
    content.push_str(last);
    content
}

#[test]
fn an_http_answer_just_under_the_body_cap_is_reviewed_whole() {
    let last = "the last line of the answer\n";
    let content = long_answer(15 * 1024 * 1024, last);
    let (server, lab, out) = review_beside_alpha(chat_reply(&content));
    out.assert_status(0);
    assert_eq!(server.post_count(), 1);
    let full = lab
        .reviews_path()
        .with_file_name("03-REVIEWS.ollama.full.md");
    let kept = std::fs::read(&full)
        .unwrap_or_else(|err| panic!("the whole review beside REVIEWS.md: {err}"));
    assert!(
        kept == content.as_bytes(),
        "the file beside REVIEWS.md is not the answer: {} bytes against {}",
        kept.len(),
        content.len()
    );
    let reviews = lab.reviews();
    assert!(
        reviews.contains("The whole review is in 03-REVIEWS.ollama.full.md, beside this file."),
        "REVIEWS.md does not name the whole review"
    );
    assert!(
        !reviews.contains("ollama review failed"),
        "a clean answer read as a failure"
    );
}

#[test]
fn an_http_answer_past_the_body_cap_is_a_failed_lane_not_a_cut_review() {
    let content = long_answer(17 * 1024 * 1024, "the last line of the answer\n");
    let (server, lab, out) = review_beside_alpha(chat_reply(&content));
    drop(content);
    out.assert_status(0);
    assert_eq!(server.post_count(), 1);
    let reviews = lab.reviews();
    let section = reviews
        .split("\n## ")
        .find(|section| section.starts_with("Ollama"))
        .unwrap_or_else(|| {
            panic!(
                "no ollama section in:\n{}",
                &reviews[..reviews.len().min(4000)]
            )
        });
    assert!(
        section.contains("ollama review failed"),
        "the section does not say the lane failed:\n{}",
        &section[..section.len().min(4000)]
    );
    assert!(
        section.contains("response body exceeds 16777216 bytes"),
        "the section does not say why:\n{}",
        &section[..section.len().min(4000)]
    );
    assert!(
        !reviews.contains(LINE.trim_end()),
        "part of the oversized answer reached REVIEWS.md"
    );
    assert!(
        !lab.reviews_path()
            .with_file_name("03-REVIEWS.ollama.full.md")
            .exists(),
        "a whole-review file for an answer that was refused"
    );
    assert!(
        out.stderr.contains("ollama"),
        "the run does not name the failed lane:\n{}",
        out.stderr
    );
}
