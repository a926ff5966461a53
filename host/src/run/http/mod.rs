//! Bounded HTTP requests to a verified origin, over `http` and `https` through one engine
//! (`ureq` 3 with rustls).
//!
//! Every request an HTTP lane makes (model discovery, the chat request, the `http-reachable`
//! probe) goes through [`send_observed`], which enforces `trust.md` §6.7 and §7.7 and `invocation.md` §7
//! and §9:
//!
//! - **Every byte to the verified origin.** The request URL is parsed again and its scheme, host
//!   and port must equal the verified [`Origin`]. A URL with userinfo (`host@other`), a scheme
//!   other than `http`/`https`, or any other origin is refused before anything is resolved or
//!   connected ([`origin::check_request_url`]). The agent's resolver resolves that origin's name and
//!   no other, so a connection to any other address cannot even be attempted.
//! - **No redirects.** A 3xx is returned as a [`gsd_lane_sdk::HttpReport::Response`] with its status and body.
//! - **No proxies.** None is configured and none is taken from the environment (`HTTP_PROXY`,
//!   `HTTPS_PROXY`, `ALL_PROXY`, …).
//! - **No credentials.** No `Authorization` header is ever sent; `POST` carries
//!   `Content-Type: application/json`.
//! - **One deadline.** `HttpRequest::timeout` covers name resolution, connect, TLS, send and
//!   the full body read; connecting alone is also bounded by [`HttpLimits::connect_timeout`].
//! - **Bounded memory.** The body is capped at [`HttpLimits::max_body_bytes`] whatever
//!   `Content-Length` claims; the response head at [`limits::MAX_HEAD_BYTES`] and 128 fields; a
//!   chunk-size line that never ends stops the read at the 128 KiB read-ahead buffer. The body
//!   is decoded as it is read (invalid UTF-8 becomes U+FFFD) and the cap holds for the decoded
//!   text, so the body is held once.
//! - Non-2xx statuses are responses, not errors: an OpenAI-compatible server puts its error JSON
//!   in the body, which is returned verbatim.
//!
//! Modules: [`origin`] (what may be contacted), [`limits`] (the bounds), `agent` (the one
//! engine configuration), `resolver` (origin-only name resolution), `exchange` (one request),
//! `body` (the body decoded under the cap), `failure` (how a failed request is worded).

mod agent;
mod body;
mod exchange;
mod failure;
mod limits;
mod origin;
mod resolver;

#[cfg(test)]
mod tests;

pub use agent::TlsRoots;
pub use exchange::{send_observed, send_trusting};
pub use limits::{HttpLimits, DEFAULT_MAX_BODY_BYTES};
pub use origin::Origin;
