//! One request: refuse what is not the verified origin, send through the agent, read the
//! capped body.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use gsd_lane_sdk::{HttpMethod, HttpReport, HttpRequest};
use url::Url;

use super::agent::{agent, TlsRoots};
use super::failure::describe;
use super::limits::{HttpLimits, MAX_REQUEST_BOUND};
use super::origin::{check_request_url, Origin};

/// Makes one bounded request to the verified origin and reports what came back.
///
/// Nothing is resolved, connected or sent when [`check_request_url`] refuses the URL or the
/// bound is zero. Never panics, never waits past `request.timeout` (plus scheduling noise),
/// never holds more than `limits.max_body_bytes` of body. `https` trusts the Mozilla roots.
pub fn send(request: &HttpRequest, verified: &Origin, limits: &HttpLimits) -> HttpReport {
    send_trusting(request, verified, limits, &TlsRoots::Mozilla)
}

/// [`send`] with the `https` roots given (see [`TlsRoots`] for who may pass anything else).
pub fn send_trusting(
    request: &HttpRequest,
    verified: &Origin,
    limits: &HttpLimits,
    roots: &TlsRoots,
) -> HttpReport {
    let url = match check_request_url(&request.url, verified) {
        Ok(url) => url,
        Err(error) => return HttpReport::Failed { error },
    };
    let bound = request.timeout.min(MAX_REQUEST_BOUND);
    if bound.is_zero() {
        return HttpReport::Failed {
            error: "timeout: the request bound is 0 ms; nothing was sent".to_owned(),
        };
    }
    let connect_bound = limits.connect_timeout.min(bound);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        exchange(request, &url, verified, limits, bound, roots)
    }));
    match outcome {
        Ok(Ok((status, bytes))) => HttpReport::Response {
            status,
            body: lossy_utf8(bytes),
        },
        Ok(Err(error)) => HttpReport::Failed {
            error: describe(&error, bound, connect_bound, limits.max_body_bytes),
        },
        Err(_) => HttpReport::Failed {
            error: "the HTTP client failed internally (panic); no response".to_owned(),
        },
    }
}

/// Sends the request and reads the whole body under the cap; `Content-Length` beyond the
/// cap fails before any of the body is read.
fn exchange(
    request: &HttpRequest,
    url: &Url,
    verified: &Origin,
    limits: &HttpLimits,
    bound: Duration,
    roots: &TlsRoots,
) -> Result<(u16, Vec<u8>), ureq::Error> {
    let agent = agent(verified, limits, bound, roots);
    let mut response = match request.method {
        HttpMethod::Get => agent.get(url.as_str()).call()?,
        HttpMethod::Post => agent
            .post(url.as_str())
            .header("Content-Type", "application/json")
            .send(request.json_body.as_deref().unwrap_or(""))?,
    };
    let status = response.status().as_u16();
    let cap = limits.max_body_bytes;
    if response
        .body()
        .content_length()
        .is_some_and(|len| len > cap)
    {
        return Err(ureq::Error::BodyExceedsLimit(cap));
    }
    let bytes = response.body_mut().with_config().limit(cap).read_to_vec()?;
    Ok((status, bytes))
}

/// Decodes without copying when the bytes are valid UTF-8; invalid sequences become U+FFFD.
fn lossy_utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
