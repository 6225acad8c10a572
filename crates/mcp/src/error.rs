//! The crate's one error type.

use std::time::Duration;

/// Why a connection ended. Kept by the connection and reported by every request that was
/// waiting on it or that comes after.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The client closed the connection ([`crate::Client::close`] or drop).
    ClosedByClient,
    /// The server's output ended (stdout EOF, or the HTTP session could not be recovered).
    ServerGone,
    /// The server process exited (stdio).
    ServerExited {
        /// Exit code, when it exited normally.
        code: Option<i32>,
        /// Signal number, when a signal ended it.
        signal: Option<i32>,
    },
    /// The server sent a frame longer than the frame cap; it was never assembled.
    FrameTooLarge {
        /// The cap in bytes.
        cap: usize,
    },
    /// The server sent too many lines that are not JSON.
    TooManyGarbageLines {
        /// How many were seen.
        lines: u64,
    },
    /// A request ran past its deadline; a connection that made a caller give up is dropped.
    RequestTimedOut {
        /// The method that timed out.
        method: String,
    },
    /// The handshake failed (unsupported protocol version or a malformed answer).
    HandshakeFailed,
    /// Reading from the server failed.
    ReadFailed {
        /// The io error, as text.
        message: String,
    },
}

impl std::fmt::Display for CloseReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CloseReason::ClosedByClient => f.write_str("closed by the client"),
            CloseReason::ServerGone => f.write_str("the server closed its output"),
            CloseReason::ServerExited { code: Some(c), .. } => {
                write!(f, "the server exited with code {c}")
            }
            CloseReason::ServerExited {
                signal: Some(s), ..
            } => {
                write!(f, "the server was killed by signal {s}")
            }
            CloseReason::ServerExited { .. } => f.write_str("the server exited"),
            CloseReason::FrameTooLarge { cap } => {
                write!(f, "the server sent a frame longer than {cap} bytes")
            }
            CloseReason::TooManyGarbageLines { lines } => {
                write!(f, "the server wrote {lines} lines that are not JSON-RPC")
            }
            CloseReason::RequestTimedOut { method } => {
                write!(f, "dropped after `{method}` ran past its deadline")
            }
            CloseReason::HandshakeFailed => f.write_str("the handshake failed"),
            CloseReason::ReadFailed { message } => write!(f, "reading failed: {message}"),
        }
    }
}

/// Why a listing (`tools/list`, `resources/list`) is incomplete. An incomplete listing is an
/// error: nothing may be proposed or withdrawn from it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Incomplete {
    /// The server kept offering a next page past the page cap.
    PageCap {
        /// The cap.
        cap: usize,
    },
    /// The server offered a cursor it had already offered.
    RepeatedCursor,
    /// More entries than the entry cap.
    TooManyEntries {
        /// The cap.
        cap: usize,
    },
    /// Two entries share one name.
    DuplicateName {
        /// The name.
        name: String,
    },
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Incomplete::PageCap { cap } => write!(f, "more than {cap} pages"),
            Incomplete::RepeatedCursor => f.write_str("the server repeated a cursor"),
            Incomplete::TooManyEntries { cap } => write!(f, "more than {cap} entries"),
            Incomplete::DuplicateName { name } => write!(f, "the name {name:?} appears twice"),
        }
    }
}

/// A protocol violation that ended a request (others are only counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// The response carried both `result` and `error`.
    ResultAndError,
    /// The response carried neither `result` nor `error`.
    NeitherResultNorError,
    /// The `error` member was not a JSON-RPC error object.
    MalformedError,
    /// The HTTP answer (a JSON body, or an SSE stream that ended and cannot be resumed) did
    /// not carry the answer to this request.
    Unanswered,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Violation::ResultAndError => "a response with both result and error",
            Violation::NeitherResultNorError => "a response with neither result nor error",
            Violation::MalformedError => "a response whose error is not an error object",
            Violation::Unanswered => "the HTTP answer did not answer the request",
        })
    }
}

/// Everything that can go wrong talking to an MCP server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server process could not be started.
    #[error("cannot start `{command}`")]
    Spawn {
        /// The program.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A request ran past its deadline.
    #[error("`{method}` got no answer within {after:?}")]
    Timeout {
        /// The method.
        method: String,
        /// The deadline.
        after: Duration,
    },
    /// The connection is gone.
    #[error("the connection is closed: {0}")]
    Closed(CloseReason),
    /// The server broke the protocol in its answer to this request.
    #[error("protocol violation: {0}")]
    Violation(Violation),
    /// The server answered with a JSON-RPC error.
    #[error("the server answered error {code}: {message}")]
    Rpc {
        /// The error code.
        code: i64,
        /// The message (capped).
        message: String,
    },
    /// The server's `result` does not have the shape the method requires.
    #[error("malformed answer to `{method}`: {reason}")]
    BadResult {
        /// The method.
        method: String,
        /// What is wrong.
        reason: String,
    },
    /// The server offered a protocol version this client does not speak.
    #[error("the server speaks protocol version {offered:?}, which is not supported")]
    UnsupportedProtocol {
        /// What the server offered (capped).
        offered: String,
    },
    /// The server does not speak the protocol version of the request (`-32022`).
    #[error(
        "the server does not support protocol version {requested:?}; it supports {supported:?}"
    )]
    UnsupportedVersion {
        /// The version the request carried, as the server quoted it (capped).
        requested: String,
        /// The versions the server lists (capped).
        supported: Vec<String>,
    },
    /// Client and server have no protocol version in common.
    #[error("no protocol version in common: Maven speaks {ours:?}, the server {theirs:?}")]
    NoCommonVersion {
        /// Every version this client speaks.
        ours: Vec<String>,
        /// Every version the server said it speaks (capped).
        theirs: Vec<String>,
    },
    /// The server does not speak the era the configuration pins.
    #[error("the server does not speak protocol {pinned}: {reason}")]
    EraRefused {
        /// The pinned version.
        pinned: String,
        /// What the server answered.
        reason: String,
    },
    /// The server says the request's HTTP headers do not match its body (`-32020`).
    #[error("the server says the request headers do not match its body: {message}")]
    HeaderMismatch {
        /// The server's message (capped).
        message: String,
    },
    /// A multi round-trip request went on past its bounds.
    #[error("`{method}` asked for input {rounds} times in a row without finishing; given up")]
    TooManyRounds {
        /// The method.
        method: String,
        /// How many rounds were answered.
        rounds: u32,
    },
    /// The server's input request cannot be answered as sent (too large, malformed).
    #[error("`{method}`: {reason}")]
    BadInputRequest {
        /// The method.
        method: String,
        /// What is wrong.
        reason: String,
    },
    /// `resources/read` of a URI the server does not have (-32002 in the legacy era, -32602
    /// in the modern one).
    #[error("the server has no resource {uri:?}")]
    ResourceNotFound {
        /// The URI asked for (capped).
        uri: String,
    },
    /// A listing did not complete.
    #[error("incomplete listing of `{method}`: {reason}")]
    Incomplete {
        /// The method.
        method: String,
        /// Why.
        reason: Incomplete,
    },
    /// The HTTP request was refused or failed in webfetch.
    #[error("http: {0}")]
    Http(webfetch::Error),
    /// The HTTP server answered with an unexpected status.
    #[error("the server answered HTTP {status}")]
    HttpStatus {
        /// The status code.
        status: u16,
    },
    /// The HTTP server forgot the session twice in a row (after one fresh initialize).
    #[error("the server lost the session again after a fresh initialize")]
    SessionLost,
    /// The server needs an authorization Maven does not have, or authorizing failed.
    #[error("authorization: {0}")]
    Auth(oauth::AuthError),
    /// The configuration cannot be used (an invalid URL, an empty command).
    #[error("invalid server configuration: {0}")]
    Config(String),
}

impl Error {
    /// The server needs the owner's authorization (`maven mcp login NAME`).
    pub fn needs_authorization(&self) -> bool {
        matches!(self, Error::Auth(oauth::AuthError::NeedsAuthorization))
    }

    /// A deadline passed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    /// Whether the request may have reached the server. `false` only when it certainly did
    /// not: the server could not be started or connected to, the configuration, a refusal by
    /// policy before anything was sent. Once the request may have left (no answer in time, the
    /// connection lost while waiting, an answer that is not one), `true`.
    ///
    /// A connection already closed when a request is made also reports [`Error::Closed`];
    /// callers that check [`crate::Client::closed`] first (the manager does) see it only when
    /// the connection died around or after the send, and then `true` is the honest answer.
    pub fn was_sent(&self) -> bool {
        match self {
            Error::Spawn { .. }
            | Error::Config(_)
            | Error::UnsupportedProtocol { .. }
            | Error::NoCommonVersion { .. }
            | Error::EraRefused { .. }
            // Authorization stops a request before the server acts on it (a 401 is a refusal).
            | Error::Auth(_) => false,
            Error::Http(e) => http_sent(e),
            Error::Timeout { .. }
            | Error::Closed(_)
            | Error::Violation(_)
            | Error::Rpc { .. }
            | Error::BadResult { .. }
            | Error::UnsupportedVersion { .. }
            | Error::HeaderMismatch { .. }
            | Error::TooManyRounds { .. }
            | Error::BadInputRequest { .. }
            | Error::ResourceNotFound { .. }
            | Error::Incomplete { .. }
            | Error::HttpStatus { .. }
            | Error::SessionLost => true,
        }
    }

    /// The request may have reached the server and no usable answer came back: whether the
    /// server acted on it is unknown. An error the server answered (a JSON-RPC error, a version
    /// or header refusal, an HTTP 4xx) is an answer; a multi round-trip call given up part way
    /// is not.
    pub fn outcome_unknown(&self) -> bool {
        match self {
            // Refusals the server answered: it did not act on the request.
            Error::Rpc { .. }
            | Error::UnsupportedVersion { .. }
            | Error::HeaderMismatch { .. }
            | Error::ResourceNotFound { .. } => false,
            Error::HttpStatus { status } => *status >= 500,
            e => e.was_sent(),
        }
    }

    /// The connection is gone; a manager should dial a fresh one.
    pub fn is_closed(&self) -> bool {
        matches!(self, Error::Closed(_))
    }

    /// The server broke the protocol (in this request, or badly enough to be disconnected).
    pub fn is_protocol_violation(&self) -> bool {
        matches!(
            self,
            Error::Violation(_)
                | Error::BadResult { .. }
                | Error::Closed(CloseReason::FrameTooLarge { .. })
                | Error::Closed(CloseReason::TooManyGarbageLines { .. })
        )
    }

    /// The server answered with a JSON-RPC error object.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            Error::Rpc { code, .. } => Some(*code),
            Error::UnsupportedVersion { .. } => Some(crate::era::UNSUPPORTED_VERSION),
            Error::HeaderMismatch { .. } => Some(crate::era::HEADER_MISMATCH),
            _ => None,
        }
    }

    /// webfetch refused the request by policy (an address, a redirect, a list).
    pub fn is_refused(&self) -> bool {
        matches!(self, Error::Http(e) if e.is_refused())
    }

    /// The webfetch error behind an HTTP failure.
    pub fn http_error(&self) -> Option<&webfetch::Error> {
        match self {
            Error::Http(e) => Some(e),
            _ => None,
        }
    }

    /// The listing is incomplete and must not be used for proposing or withdrawing.
    pub fn is_incomplete(&self) -> bool {
        matches!(self, Error::Incomplete { .. })
    }

    /// Why the connection closed, when it did.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        match self {
            Error::Closed(r) => Some(r),
            _ => None,
        }
    }
}

/// Whether a webfetch failure may have let the request reach the server: not before a
/// connection existed (the URL, a refusal, DNS, connect, TLS, or one of their deadlines).
fn http_sent(e: &webfetch::Error) -> bool {
    use webfetch::{Error as W, Phase};
    match e {
        W::InvalidUrl { .. } | W::Dns { .. } | W::Connect { .. } | W::Tls { .. } => false,
        // A redirect that was not followed was the answer to a request that was sent.
        W::Refused(r) => matches!(
            r,
            webfetch::Refusal::RedirectOnPrivateDoor | webfetch::Refusal::TooManyRedirects { .. }
        ),
        W::Timeout { phase, .. } => !matches!(phase, Phase::Resolve | Phase::Connect | Phase::Tls),
        _ => true,
    }
}
