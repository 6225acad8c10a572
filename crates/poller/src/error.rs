//! The one error type of the poller.

use std::time::Duration;

use webfetch::StatusCode;

/// Why one poll of a feed failed. Every variant says what happened in plain words; the
/// classifiers tell the schedule what to do with it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// webfetch refused or failed the request (refusal, DNS, connect, TLS, timeout, too large,
    /// broken HTTP).
    #[error(transparent)]
    Fetch(webfetch::Error),
    /// The server answered with a status that is not success, 304 or 410.
    #[error("http status {}{}", status_text(*status), retry_text(*retry_after))]
    Status {
        /// The status received.
        status: StatusCode,
        /// What the server's `Retry-After` asked for, when it sent one.
        retry_after: Option<Duration>,
    },
    /// 410 Gone: the feed was removed on purpose; it is disabled until its URL changes.
    #[error(
        "410 Gone: the server says this feed was removed; polling stopped until its url changes"
    )]
    Gone,
    /// The body is not a feed.
    #[error("not a feed: {0}")]
    NotAFeed(feeds::NotAFeed),
    /// The store failed.
    #[error("store: {0}")]
    Store(store::Error),
    /// No enabled feed of that name is polled.
    #[error("no feed named {0:?} is polled")]
    UnknownFeed(String),
    /// The feed is disabled (410 Gone earlier, or by configuration).
    #[error("the feed is disabled: {reason}")]
    Disabled {
        /// Why.
        reason: String,
    },
    /// A bug: the parser's task stopped without an answer.
    #[error("internal: {0}")]
    Internal(String),
}

fn status_text(s: StatusCode) -> String {
    match s.canonical_reason() {
        Some(r) => format!("{} {r}", s.as_u16()),
        None => s.as_u16().to_string(),
    }
}

fn retry_text(r: Option<Duration>) -> String {
    match r {
        Some(d) => format!(" (retry after {} s)", d.as_secs()),
        None => String::new(),
    }
}

impl Error {
    /// A deadline passed (webfetch's total deadline cuts an endless body).
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Fetch(e) if e.is_timeout())
    }

    /// The body was over the door's cap.
    pub fn is_too_large(&self) -> bool {
        matches!(self, Error::Fetch(e) if e.is_too_large())
    }

    /// webfetch refused the request by policy.
    pub fn is_refused(&self) -> bool {
        matches!(self, Error::Fetch(e) if e.is_refused())
    }

    /// The server said 410 Gone.
    pub fn is_gone(&self) -> bool {
        matches!(self, Error::Gone)
    }

    /// The body was not a feed.
    pub fn is_not_a_feed(&self) -> bool {
        matches!(self, Error::NotAFeed(_))
    }

    /// The status of an [`Error::Status`].
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// How long the server asked us to wait (`Retry-After` on a 429 or 503).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

impl From<webfetch::Error> for Error {
    fn from(e: webfetch::Error) -> Self {
        Error::Fetch(e)
    }
}

impl From<store::Error> for Error {
    fn from(e: store::Error) -> Self {
        Error::Store(e)
    }
}
