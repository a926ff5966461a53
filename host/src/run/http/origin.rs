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
    /// An [`OriginError`] when the text is not an absolute URL, its scheme is not `http` or `https`,
    /// or it has no host.
    pub fn of(url_text: &str) -> Result<Origin, OriginError> {
        let url = Url::parse(url_text).map_err(OriginError::NotAbsolute)?;
        Origin::of_url(&url)
    }

    fn of_url(url: &Url) -> Result<Origin, OriginError> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(OriginError::Scheme(scheme.to_owned()));
        }
        let host = match url.host_str() {
            Some(host) if !host.is_empty() => host,
            _ => return Err(OriginError::NoHost),
        };
        let port = url.port_or_known_default().ok_or(OriginError::NoPort)?;
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

/// Why a URL names no origin a lane may reach ([`Origin::of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginError {
    /// Not an absolute URL (the parser's error).
    NotAbsolute(url::ParseError),
    /// The scheme is neither `http` nor `https`.
    Scheme(String),
    /// The URL has no host.
    NoHost,
    /// The URL has no port and its scheme none by default.
    NoPort,
}

impl fmt::Display for OriginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OriginError::NotAbsolute(err) => write!(f, "not an absolute URL ({err})"),
            OriginError::Scheme(scheme) => write!(f, "scheme '{scheme}' is not http or https"),
            OriginError::NoHost => f.write_str("URL has no host"),
            OriginError::NoPort => f.write_str("URL has no port"),
        }
    }
}

impl std::error::Error for OriginError {}

/// Why a request URL was refused before anything was sent ([`check_request_url`]); every
/// message starts with `refused:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestUrlError {
    /// Not an absolute URL (the parser's error).
    NotAbsolute(url::ParseError),
    /// The scheme is neither `http` nor `https`.
    Scheme(String),
    /// The URL carries userinfo, which can move the authority.
    Userinfo,
    /// The URL names no origin.
    Origin(OriginError),
    /// The URL names another origin than the verified one.
    OtherOrigin {
        /// The origin the URL names.
        found: Origin,
        /// The verified origin.
        verified: Origin,
    },
}

impl fmt::Display for RequestUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestUrlError::NotAbsolute(err) => {
                write!(f, "refused: request URL is not an absolute URL ({err})")
            }
            RequestUrlError::Scheme(scheme) => write!(
                f,
                "refused: request URL scheme '{scheme}' is not http or https"
            ),
            RequestUrlError::Userinfo => f.write_str(
                "refused: request URL carries userinfo ('…@'), which can move the authority",
            ),
            RequestUrlError::Origin(err) => write!(f, "refused: {err}"),
            RequestUrlError::OtherOrigin { found, verified } => write!(
                f,
                "refused: request origin {found} differs from the verified origin {verified}"
            ),
        }
    }
}

impl std::error::Error for RequestUrlError {}

/// Checks a request URL against the verified origin, without any network activity.
///
/// This is the `trust.md` §6.7 re-parse: the caller joins the verified host and a lane path by
/// plain concatenation, and the result must still name the verified origin. [`super::send_observed`] applies it
/// to every request; a planner can apply it ahead of time to report `malformed_lane`.
///
/// # Errors
///
/// A [`RequestUrlError`] (its message starts with `refused:`) when the URL does not parse, is
/// not `http`/`https`, carries userinfo, or its scheme, host or port differ from `verified`.
pub fn check_request_url(url_text: &str, verified: &Origin) -> Result<Url, RequestUrlError> {
    let url = Url::parse(url_text).map_err(RequestUrlError::NotAbsolute)?;
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(RequestUrlError::Scheme(scheme.to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(RequestUrlError::Userinfo);
    }
    let origin = Origin::of_url(&url).map_err(RequestUrlError::Origin)?;
    if origin != *verified {
        return Err(RequestUrlError::OtherOrigin {
            found: origin,
            verified: verified.clone(),
        });
    }
    Ok(url)
}
