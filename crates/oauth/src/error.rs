//! What can go wrong while authorizing: one enum, one variant per reason, so a test (and the
//! owner) sees exactly why Maven refused.

/// Why an OAuth step failed or was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// The server needs an authorization the owner has not given (or that expired and could
    /// not be refreshed): run `maven mcp login NAME`.
    #[error("needs authorization")]
    NeedsAuthorization,
    /// webfetch refused or failed a request of the flow.
    #[error("{what}{}: {reason}", at(url))]
    Fetch {
        /// Which request (`protected resource metadata`, `token request`, …).
        what: &'static str,
        /// Where (capped; empty when the step has no one URL).
        url: String,
        /// The webfetch error, as text.
        reason: String,
    },
    /// An endpoint URL is not one Maven sends anything to (scheme, plain http off loopback).
    #[error("{what} {url:?} refused: {reason}")]
    Endpoint {
        /// Which endpoint.
        what: &'static str,
        /// The URL (capped).
        url: String,
        /// Why.
        reason: String,
    },
    /// A request of the flow was answered with a redirect (never followed).
    #[error(
        "{what}{}: the answer was a redirect (HTTP {status}), which is never followed",
        at(url)
    )]
    Redirect {
        /// Which request.
        what: &'static str,
        /// Where (capped).
        url: String,
        /// The status.
        status: u16,
    },
    /// A body was larger than the flow accepts.
    #[error("{what}{}: larger than {} KiB", at(url), cap / 1024)]
    TooLarge {
        /// Which request.
        what: &'static str,
        /// Where (capped).
        url: String,
        /// The cap.
        cap: usize,
    },
    /// A deadline passed.
    #[error("{what}{}: no answer within {secs} s", at(url))]
    Timeout {
        /// Which step.
        what: &'static str,
        /// Where (capped; empty for a step of several requests, the whole discovery).
        url: String,
        /// The deadline, in seconds.
        secs: u64,
    },
    /// The token is bound to a DPoP key but the server takes only Bearer tokens.
    #[error("the authorization server {issuer} bound the token to a DPoP key, but the MCP server {server} refused it and offers only {schemes} ({reason}): set oauth.dpop to \"never\" for this server and connect again")]
    DpopRefused {
        /// The authorization server.
        issuer: String,
        /// The MCP server's URL.
        server: String,
        /// The schemes its challenge offered.
        schemes: String,
        /// Its `error` and `error_description`.
        reason: String,
    },
    /// `oauth.dpop` is `required` and one end cannot do DPoP.
    #[error("oauth.dpop is \"required\", but {0}")]
    DpopUnavailable(String),
    /// A document or answer is not what the specification requires.
    #[error("{what}: {reason}")]
    Malformed {
        /// Which document.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The `WWW-Authenticate` challenge names a `resource_metadata` URL that cannot be used.
    #[error("the challenge's resource_metadata {url:?} is refused: {reason}")]
    BadResourceMetadataUrl {
        /// The URL (capped).
        url: String,
        /// Why.
        reason: String,
    },
    /// No protected resource metadata at any well-known location.
    #[error("no protected resource metadata found (tried {tried})")]
    NoResourceMetadata {
        /// How many locations were tried.
        tried: usize,
    },
    /// The protected resource metadata is for another resource.
    #[error("resource mismatch: the metadata is for {resource:?}, the server is {server:?}")]
    ResourceMismatch {
        /// The metadata's `resource`.
        resource: String,
        /// The server's URL.
        server: String,
    },
    /// No authorization server metadata at any well-known location.
    #[error("no authorization server metadata found for {issuer:?}")]
    NoServerMetadata {
        /// The authorization server.
        issuer: String,
    },
    /// The metadata's issuer is not the authorization server it was fetched for.
    #[error("issuer mismatch: metadata fetched for {expected:?} says issuer {found:?}")]
    IssuerMismatch {
        /// The authorization server asked.
        expected: String,
        /// What the metadata says.
        found: String,
    },
    /// The authorization server does not offer PKCE with S256.
    #[error("the authorization server {issuer:?} does not offer PKCE S256; refused")]
    NoPkceS256 {
        /// The authorization server.
        issuer: String,
    },
    /// No way to register: no pre-registered client, no usable client metadata document, no
    /// registration endpoint.
    #[error("no way to register with {issuer:?}: configure oauth.client_id for this server")]
    NoRegistration {
        /// The authorization server.
        issuer: String,
    },
    /// The authorization server refused a request (`error` of an OAuth error answer).
    #[error("{what}: the authorization server answered {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused {
        /// Which request.
        what: &'static str,
        /// The OAuth `error` code, or `HTTP <status>`.
        error: String,
        /// Its `error_description` (capped).
        description: Option<String>,
    },
    /// The callback's `state` is not the one this authorization sent.
    #[error("the callback's state does not match the authorization request")]
    StateMismatch,
    /// The callback's `iss` is missing where required, or names another authorization server
    /// (mix-up): the code is not redeemed.
    #[error(
        "the callback's iss {found:?} is not the issuer {expected:?}; the code is not redeemed"
    )]
    IssMismatch {
        /// The recorded issuer.
        expected: String,
        /// The callback's `iss` (or `None` when it is missing but required).
        found: Option<String>,
    },
    /// The callback carries an OAuth error (the owner declined, the AS refused).
    #[error("authorization declined: {error}")]
    Declined {
        /// The `error` parameter (capped).
        error: String,
    },
    /// The token answer is not usable.
    #[error("token answer refused: {0}")]
    BadToken(String),
    /// The server keeps asking for scopes the last authorization already asked for.
    #[error("the server asked for scope {scope:?} again after it was granted; given up")]
    ScopeLoop {
        /// The challenged scope (capped).
        scope: String,
    },
    /// More step-up authorizations in one request than allowed.
    #[error("the server asked for a wider scope {count} times in a row; given up")]
    TooManyStepUps {
        /// How many step-ups were made.
        count: u32,
    },
    /// The credential store failed.
    #[error("credential store: {0}")]
    Store(String),
    /// A grant that needs no person could not be made (its configuration, a file it reads, a
    /// key it signs with, the server refusing the token it gave).
    #[error("{0}")]
    Grant(String),
    /// No one to show the authorization page to (the daemon's dial path).
    #[error("no user agent to authorize with")]
    NoUserAgent,
}

/// ` at URL`, or nothing when there is no URL.
fn at(url: &str) -> String {
    if url.is_empty() {
        String::new()
    } else {
        format!(" at {url}")
    }
}

/// At most this many characters of a server-supplied string in an error.
pub(crate) const SHOWN: usize = 200;

/// A server-supplied string, cut for an error message.
pub(crate) fn cut(s: &str) -> String {
    if s.chars().count() <= SHOWN {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(SHOWN).collect();
    out.push('…');
    out
}
