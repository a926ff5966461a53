//! The one `ureq` agent configuration, for `http` and `https` alike (`trust.md` §6.7).

use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::unversioned::transport::DefaultConnector;
use ureq::Agent;

use super::limits::{HttpLimits, INPUT_BUFFER_BYTES, MAX_HEAD_BYTES};
use super::origin::Origin;
use super::resolver::OriginResolver;

/// `User-Agent` sent with every request.
const USER_AGENT: &str = concat!("gsd-lane/", env!("CARGO_PKG_VERSION"));

/// The certificate authorities an `https` connection trusts.
///
/// gsd-lane itself only ever uses [`TlsRoots::Mozilla`]: no setting, flag or environment
/// variable changes it, so nothing a repository or a shell profile holds can make the binary
/// trust another authority. [`TlsRoots::Only`] exists for code that links the library (its own
/// tests and benchmarks, which make a throw-away authority for a loopback TLS server); it
/// replaces the roots rather than adding to them, so such a test trusts nothing else.
#[derive(Debug, Clone, Default)]
pub enum TlsRoots {
    /// The Mozilla root program, compiled in (`webpki-roots`): the same on every machine, and
    /// unaffected by certificates installed on the system.
    #[default]
    Mozilla,
    /// Exactly these DER-encoded certificates.
    Only(Arc<Vec<Vec<u8>>>),
}

impl TlsRoots {
    fn root_certs(&self) -> RootCerts {
        match self {
            TlsRoots::Mozilla => RootCerts::WebPki,
            TlsRoots::Only(ders) => RootCerts::new_with_certs(
                &ders
                    .iter()
                    .map(|der| Certificate::from_der(der).to_owned())
                    .collect::<Vec<_>>(),
            ),
        }
    }
}

/// An agent for one request to `origin`:
///
/// - redirects 0, and a 3xx is returned as a response rather than an error;
/// - no proxy, and none from the environment (`ureq` would read `HTTP_PROXY` & co. by
///   default, so it is switched off explicitly);
/// - every status returned as a response (an error body is the diagnostic);
/// - one overall deadline (`timeout`) over resolution, connect, TLS, send and the whole body,
///   and connecting bounded by `limits.connect_timeout` within it;
/// - the response head capped at [`MAX_HEAD_BYTES`], the read-ahead at [`INPUT_BUFFER_BYTES`];
/// - no connection pool (nothing is reused, so nothing is silently retried);
/// - a resolver that only resolves `origin` ([`OriginResolver`]);
/// - `roots` for `https`.
pub fn agent(origin: &Origin, limits: &HttpLimits, timeout: Duration, roots: &TlsRoots) -> Agent {
    let config = Agent::config_builder()
        .max_redirects(0)
        .max_redirects_will_error(false)
        .save_redirect_history(false)
        .proxy(None)
        .http_status_as_error(false)
        .https_only(false)
        .timeout_global(Some(timeout))
        .timeout_connect(Some(limits.connect_timeout.min(timeout)))
        .max_response_header_size(MAX_HEAD_BYTES)
        .input_buffer_size(INPUT_BUFFER_BYTES)
        .max_idle_connections(0)
        .max_idle_connections_per_host(0)
        .user_agent(USER_AGENT)
        .tls_config(TlsConfig::builder().root_certs(roots.root_certs()).build())
        .build();
    Agent::with_parts(
        config,
        DefaultConnector::default(),
        OriginResolver::new(origin.clone()),
    )
}
