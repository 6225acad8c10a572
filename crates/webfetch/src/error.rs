//! The one error type of webfetch.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use http::StatusCode;

use crate::addr::Verdict;

/// Everything that can go wrong with a fetch. Every variant says why; match on [`Error::kind`]
/// to decide what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL could not be parsed at all (a usage error, not a policy decision).
    #[error("invalid url: {reason}")]
    InvalidUrl {
        /// What the parser said.
        reason: String,
    },
    /// webfetch refused the request by policy; nothing was sent (or, for a redirect, the
    /// redirect was not followed).
    #[error("refused: {0}")]
    Refused(Refusal),
    /// The name did not resolve.
    #[error("dns: {host}: {reason}")]
    Dns {
        /// The name looked up.
        host: String,
        /// What the resolver said.
        reason: String,
    },
    /// No vetted address accepted a connection.
    #[error("connect: {addr}: {reason}")]
    Connect {
        /// The last address tried.
        addr: SocketAddr,
        /// What the socket said.
        reason: String,
    },
    /// The TLS handshake failed (or a TLS root given to the builder was unusable).
    #[error("tls: {host}: {reason}")]
    Tls {
        /// The server name.
        host: String,
        /// What rustls said.
        reason: String,
    },
    /// A deadline passed.
    #[error("timeout: {phase} took longer than {limit:?}")]
    Timeout {
        /// Which deadline.
        phase: Phase,
        /// Its length.
        limit: Duration,
    },
    /// The body (after decompression) or its announced length exceeds the door's cap.
    #[error("too large: body exceeds {limit} bytes")]
    TooLarge {
        /// The cap, in bytes.
        limit: u64,
    },
    /// The server answered with a status the caller treats as failure (see
    /// [`crate::Response::error_for_status`]).
    #[error("http status {status}")]
    Status {
        /// The status received.
        status: StatusCode,
    },
    /// The server broke HTTP: a malformed response, a connection closed mid-body, a body
    /// that does not decode.
    #[error("http: {reason}")]
    Http {
        /// What went wrong.
        reason: String,
    },
}

/// The kind of an [`Error`], as `maven fetch --json` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// The URL did not parse.
    InvalidUrl,
    /// Refused by policy.
    Refused,
    /// Name resolution failed.
    Dns,
    /// Connecting failed.
    Connect,
    /// TLS failed.
    Tls,
    /// A deadline passed.
    Timeout,
    /// The body was over the cap.
    TooLarge,
    /// A non-success status, or a broken HTTP exchange.
    Http,
}

impl Kind {
    /// The stable name: `"refused"`, `"dns"`, `"connect"`, `"tls"`, `"timeout"`,
    /// `"too_large"`, `"http"` (and `"invalid_url"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::InvalidUrl => "invalid_url",
            Kind::Refused => "refused",
            Kind::Dns => "dns",
            Kind::Connect => "connect",
            Kind::Tls => "tls",
            Kind::Timeout => "timeout",
            Kind::TooLarge => "too_large",
            Kind::Http => "http",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// The kind of this error.
    pub fn kind(&self) -> Kind {
        match self {
            Error::InvalidUrl { .. } => Kind::InvalidUrl,
            Error::Refused(_) => Kind::Refused,
            Error::Dns { .. } => Kind::Dns,
            Error::Connect { .. } => Kind::Connect,
            Error::Tls { .. } => Kind::Tls,
            Error::Timeout { .. } => Kind::Timeout,
            Error::TooLarge { .. } => Kind::TooLarge,
            Error::Status { .. } | Error::Http { .. } => Kind::Http,
        }
    }

    /// Refused by policy (no request was sent, or a redirect was not followed).
    pub fn is_refused(&self) -> bool {
        matches!(self, Error::Refused(_))
    }

    /// A deadline passed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    /// The body was over the cap.
    pub fn is_too_large(&self) -> bool {
        matches!(self, Error::TooLarge { .. })
    }

    /// The reason of a refusal.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Error::Refused(r) => Some(r),
            _ => None,
        }
    }

    /// The status of an [`Error::Status`].
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Status { status } => Some(*status),
            _ => None,
        }
    }

    pub(crate) fn http(reason: impl Into<String>) -> Self {
        Error::Http {
            reason: reason.into(),
        }
    }
}

/// Why webfetch refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The scheme is not http or https.
    Scheme {
        /// The scheme of the URL.
        scheme: String,
    },
    /// The URL carries a user name or password.
    Credentials,
    /// `localhost` or a name under `.localhost`.
    LocalName {
        /// The normalised host.
        host: String,
    },
    /// A literal address in the URL is forbidden on this door.
    Address {
        /// The verdict of the table (its `addr` is the canonical address).
        verdict: Verdict,
    },
    /// A name resolved to a forbidden address (one forbidden answer refuses the request).
    Resolved {
        /// The normalised host.
        host: String,
        /// The verdict of the table on the forbidden answer.
        verdict: Verdict,
    },
    /// The connected socket's peer is not the address that was vetted.
    Peer {
        /// The address dialled.
        vetted: SocketAddr,
        /// The address the socket reports.
        peer: SocketAddr,
    },
    /// The host (or a resolved address) is on the denylist.
    Denied {
        /// The normalised host or address.
        host: String,
    },
    /// The door has an allowlist and the host is not on it.
    NotAllowed {
        /// The normalised host.
        host: String,
    },
    /// A door that allows private addresses never follows a redirect.
    RedirectOnPrivateDoor,
    /// More redirects than the door allows.
    TooManyRedirects {
        /// The most redirects followed.
        max: u8,
    },
    /// The method is not one webfetch sends (CONNECT).
    Method {
        /// The method.
        method: String,
    },
}

fn is_name(host: &str) -> bool {
    host.parse::<IpAddr>().is_err()
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Scheme { scheme } => write!(f, "scheme {scheme:?} is not http or https"),
            Refusal::Credentials => f.write_str("the URL carries credentials"),
            Refusal::LocalName { host } => write!(f, "{host} is a local name"),
            Refusal::Address { verdict } => write!(f, "{} is {verdict}", verdict.addr),
            Refusal::Resolved { host, verdict } if is_name(host) => {
                write!(f, "{host} resolved to {} ({verdict})", verdict.addr)
            }
            Refusal::Resolved { verdict, .. } => write!(f, "{} is {verdict}", verdict.addr),
            Refusal::Peer { vetted, peer } => {
                write!(f, "connected to {peer}, not the vetted address {vetted}")
            }
            Refusal::Denied { host } => write!(f, "{host} is on the denylist"),
            Refusal::NotAllowed { host } => write!(f, "{host} is not on the allowlist"),
            Refusal::RedirectOnPrivateDoor => {
                f.write_str("redirect on a door that allows private addresses")
            }
            Refusal::TooManyRedirects { max } => write!(f, "more than {max} redirects"),
            Refusal::Method { method } => write!(f, "method {method} is not sent"),
        }
    }
}

/// The phase whose deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// Name resolution.
    Resolve,
    /// TCP connect.
    Connect,
    /// TLS handshake.
    Tls,
    /// Waiting for the response headers.
    Headers,
    /// The whole request, body included.
    Total,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Resolve => "resolve",
            Phase::Connect => "connect",
            Phase::Tls => "tls handshake",
            Phase::Headers => "response headers",
            Phase::Total => "request",
        })
    }
}
