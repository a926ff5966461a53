//! One request: refuse what is not the verified origin, send through the agent, read the
//! capped body.

use std::time::Duration;

use gsd_lane_sdk::{HttpMethod, HttpReport, HttpRequest};
use url::Url;

use super::agent::{agent, TlsRoots};
use super::body::{CappedText, ReadError};
use super::failure::describe;
use super::limits::{HttpLimits, MAX_REQUEST_BOUND};
use super::origin::{check_request_url, Origin};

/// Makes one bounded request to the verified origin and reports what came back, with the
/// answer's `Retry-After` value (trimmed, as sent), which the lane runner's rate-limit retry
/// honours (`run::rate_limit`).
///
/// Nothing is resolved, connected or sent when [`check_request_url`] refuses the URL or the
/// bound is zero. Never panics (every failure of the exchange is a `ureq::Error`, the bound is
/// capped at [`MAX_REQUEST_BOUND`] so no deadline arithmetic overflows, and the body decoder
/// only slices within what it read), never waits past `request.timeout` (plus scheduling
/// noise), never holds more than `limits.max_body_bytes` of body. `https` trusts the Mozilla
/// roots.
pub fn send_observed(
    request: &HttpRequest,
    verified: &Origin,
    limits: &HttpLimits,
) -> (HttpReport, Option<String>) {
    send_full(request, verified, limits, &TlsRoots::Mozilla)
}

/// [`send_observed`] with the `https` roots given (see [`TlsRoots`] for who may pass anything else).
pub fn send_trusting(
    request: &HttpRequest,
    verified: &Origin,
    limits: &HttpLimits,
    roots: &TlsRoots,
) -> HttpReport {
    send_full(request, verified, limits, roots).0
}

/// The report and the `Retry-After` header of one request.
fn send_full(
    request: &HttpRequest,
    verified: &Origin,
    limits: &HttpLimits,
    roots: &TlsRoots,
) -> (HttpReport, Option<String>) {
    let url = match check_request_url(&request.url, verified) {
        Ok(url) => url,
        Err(refused) => {
            let error = refused.to_string();
            return (HttpReport::Failed { error }, None);
        }
    };
    let bound = request.timeout.min(MAX_REQUEST_BOUND);
    if bound.is_zero() {
        let error = "timeout: the request bound is 0 ms; nothing was sent".to_owned();
        return (HttpReport::Failed { error }, None);
    }
    let connect_bound = limits.connect_timeout.min(bound);
    match exchange(request, &url, verified, limits, bound, roots) {
        Ok(answer) => (
            HttpReport::Response {
                status: answer.status,
                body: answer.body,
            },
            answer.retry_after,
        ),
        Err(error) => (
            HttpReport::Failed {
                error: describe(&error, bound, connect_bound, limits.max_body_bytes),
            },
            None,
        ),
    }
}

/// What came back from one request.
struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: String,
}

/// Sends the request and reads the whole body as text under the cap; `Content-Length`
/// beyond the cap fails before any of the body is read.
fn exchange(
    request: &HttpRequest,
    url: &Url,
    verified: &Origin,
    limits: &HttpLimits,
    bound: Duration,
    roots: &TlsRoots,
) -> Result<Answer, ureq::Error> {
    let agent = agent(verified, limits, bound, roots);
    let mut response = match request.method {
        HttpMethod::Get => agent.get(url.as_str()).call()?,
        HttpMethod::Post => agent
            .post(url.as_str())
            .header("Content-Type", "application/json")
            .send(request.json_body.as_deref().unwrap_or(""))?,
    };
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .map(|value| value.trim().to_owned());
    let cap = limits.max_body_bytes;
    let expected = response.body().content_length();
    if expected.is_some_and(|len| len > cap) {
        return Err(ureq::Error::BodyExceedsLimit(cap));
    }
    let mut reader = response.body_mut().with_config().limit(cap).reader();
    CappedText::new(cap, expected)
        .read_all(&mut reader)
        .map(|body| Answer {
            status,
            retry_after,
            body,
        })
        .map_err(|error| match error {
            ReadError::TooLarge => ureq::Error::BodyExceedsLimit(cap),
            ReadError::Io(io_error) => ureq::Error::from(io_error),
        })
}
