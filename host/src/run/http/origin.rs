//! The verified origin and the `trust.md` §6.7 re-parse of every request URL.

use std::fmt;

use url::Url;

/// The scheme, host and port a lane's requests are allowed to reach.
///
/// Built only by [`Origin::of`], so it always names an `http` or `https` origin with a host.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// The origin of an absolute `http`/`https` URL.
    ///
    /// Scheme and host are compared as the URL parser normalizes them (lower case, IDNA, IP
    /// literals canonical, IPv6 in brackets); the port is the explicit one or the scheme's
    /// default (80, 443). Userinfo, path, query and fragment are not part of the origin.
    ///
    /// # Errors
    ///
    /// A description when the text is not an absolute URL, its scheme is not `http` or `https`,
    /// or it has no host.
    pub fn of(url_text: &str) -> Result<Origin, String> {
        let url = Url::parse(url_text).map_err(|e| format!("not an absolute URL ({e})"))?;
        Origin::of_url(&url)
    }

    fn of_url(url: &Url) -> Result<Origin, String> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(format!("scheme '{scheme}' is not http or https"));
        }
        let host = match url.host_str() {
            Some(host) if !host.is_empty() => host,
            _ => return Err("URL has no host".to_owned()),
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| "URL has no port".to_owned())?;
        Ok(Origin {
            scheme: scheme.to_owned(),
            host: host.to_owned(),
            port,
        })
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// Host as the URL parser normalizes it (IPv6 literals keep their brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Explicit port, or the scheme's default.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// Checks a request URL against the verified origin, without any network activity.
///
/// This is the `trust.md` §6.7 re-parse: the caller joins the verified host and a lane path by
/// plain concatenation, and the result must still name the verified origin. [`super::send_observed`] applies it
/// to every request; a planner can apply it ahead of time to report `malformed_lane`.
///
/// # Errors
///
/// A description starting with `refused:` when the URL does not parse, is not `http`/`https`,
/// carries userinfo, or its scheme, host or port differ from `verified`.
pub fn check_request_url(url_text: &str, verified: &Origin) -> Result<Url, String> {
    let url = Url::parse(url_text)
        .map_err(|e| format!("refused: request URL is not an absolute URL ({e})"))?;
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "refused: request URL scheme '{scheme}' is not http or https"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "refused: request URL carries userinfo ('…@'), which can move the authority".to_owned(),
        );
    }
    let origin = Origin::of_url(&url).map_err(|e| format!("refused: {e}"))?;
    if origin != *verified {
        return Err(format!(
            "refused: request origin {origin} differs from the verified origin {verified}"
        ));
    }
    Ok(url)
}
