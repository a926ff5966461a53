//! Name resolution that can only reach the verified origin.

use std::fmt;

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

use super::origin::Origin;

/// Resolves the verified origin's `host:port` and nothing else, within the request deadline.
///
/// [`super::origin::check_request_url`] already refuses any request URL of another origin
/// before the agent sees it. This is the second wall: whatever the agent would connect to (a
/// redirect target, a proxy, a URL rewritten on the way) must come through here, and any name
/// but the verified one is refused, so no connection to another address can even be attempted.
pub struct OriginResolver {
    origin: Origin,
    inner: DefaultResolver,
}

impl OriginResolver {
    /// A resolver for `origin` only.
    pub fn new(origin: Origin) -> OriginResolver {
        OriginResolver {
            origin,
            inner: DefaultResolver::default(),
        }
    }

    /// True when `uri` names the verified origin (scheme, host, port).
    pub fn allows(&self, uri: &Uri) -> bool {
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return false;
        };
        let port = authority.port_u16().or(match scheme {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        });
        scheme.eq_ignore_ascii_case(self.origin.scheme())
            && authority.host().eq_ignore_ascii_case(self.origin.host())
            && port == Some(self.origin.port())
    }
}

impl fmt::Debug for OriginResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OriginResolver")
            .field("origin", &self.origin.to_string())
            .finish()
    }
}

impl Resolver for OriginResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        if !self.allows(uri) {
            return Err(ureq::Error::Io(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "refused to resolve {uri}: only the verified origin {} may be contacted",
                    self.origin
                ),
            )));
        }
        self.inner.resolve(uri, config, timeout)
    }
}
