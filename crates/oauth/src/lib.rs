//! OAuth 2.1 for remote servers (the MCP authorization specification, 2025-11-25 and
//! 2026-07-28): discovery, registration, authorization code with PKCE S256, the
//! machine-to-machine grants, tokens bound to their issuer, refresh with rotation, step-up,
//! DPoP.
//!
//! [`OAuth`] is the authorization of one server; a [`Registry`] holds one per server. The
//! HTTP transport (the `mcp` crate's; this crate knows nothing of it) asks it for the
//! `Authorization` (and `DPoP`) headers of every request to the server's origin
//! ([`OAuth::headers_for`]) and hands it every 401 and 403 ([`OAuth::on_answer`]); it answers
//! [`Verdict::SendAgain`], [`Verdict::Take`] or an error. Every request of the flow goes through
//! the server's webfetch door ([`net`]): the address guard holds, no redirect is followed,
//! bodies are capped, each request has a deadline of 10 s and the whole discovery 30 s.
//!
//! Authorizing needs the owner: a [`UserAgent`] opens the authorization URL and hands back
//! the callback URL. The daemon's dial path has none, so a server without a usable token is
//! "needs authorization" ([`AuthError::NeedsAuthorization`]) until the owner runs
//! `maven mcp login NAME`; the conformance client has a headless one. Credentials are kept
//! per (server, issuer) by a [`CredentialStore`]: never reused with another authorization
//! server.
//!
//! No lock is held across a request to the network: what the status reads
//! ([`OAuth::status_now`], [`OAuth::needs_authorization`]) answers at once, whatever an
//! authorization server is doing. DPoP binds tokens only where both ends speak it
//! ([`DpopMode`]); a token is refreshed when it is used in the last tenth of its lifetime
//! ([`refresh_margin`]) or after it expired, before the request that uses it: on use (a
//! call, a listing, a health check), never on a timer of its own.
//!
//! A server may instead be configured with a [`Grant`] that needs no person
//! (`client_credentials`, enterprise-managed, a workload's jwt-bearer): it runs by itself on
//! the server's 401, in the request that met it, through the same door.
//!
//! Its modules: `transport` (the transport's two calls), `flow` (discovery to the code
//! redeemed, registration), `grant` (what the grants that need no person are made of, the
//! client's private key), `machine` (those grants made), `tokens` (the token and revocation endpoints, the client's
//! authentication there, a token answer checked), `discovery`, `challenge`, `dpop`, `net`
//! (every request of the flow), and `store` (where credentials are kept); [`Registry`], the
//! daemon's one set of authorizations, is here.

// This crate reads untrusted bytes: a failure is an error value, never a panic.
#![warn(clippy::expect_used, clippy::panic)]

mod challenge;
mod discovery;
mod dpop;
mod error;
mod flow;
mod grant;
mod machine;
pub mod net;
mod store;
mod tokens;
mod transport;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use webfetch::HeaderValue;

pub use challenge::Challenge;
pub use discovery::{
    check_authorization_endpoint, resource_matches, resource_metadata_locations,
    server_metadata_locations, Discovered, ResourceMetadata, ServerMetadata, DISCOVERY_DEADLINE,
};
pub use dpop::DpopKey;
pub use error::AuthError;
pub use grant::{ClientKey, Enterprise, Grant, TokenSource, JWT_BEARER};
pub use net::Dial;
pub use store::{CredentialStore, Credentials, MemoryStore, Registration, StoreFuture, Tokens};

use net::Net;

/// Most step-up authorizations (403 `insufficient_scope`) for one request.
pub const MAX_STEP_UPS: u32 = 2;
/// Longest access or refresh token accepted.
const MAX_TOKEN: usize = 16 * 1024;
/// Longest `expires_in` accepted: a year.
const MAX_EXPIRES_IN: u64 = 365 * 24 * 3600;

/// Opens an authorization URL for the owner and returns the callback URL the authorization
/// server redirected to (with `code`, `state`, `iss`).
pub trait UserAgent: Send + Sync {
    /// Authorize at `url`.
    fn authorize(
        &self,
        url: String,
    ) -> Pin<Box<dyn Future<Output = Result<String, AuthError>> + Send + '_>>;
}

/// The configuration of one server's authorization.
#[derive(Clone)]
pub struct OAuthConfig {
    /// The server's name (the key of its credentials).
    pub server: String,
    /// The server's URL, as configured: the resource.
    pub resource_url: String,
    /// A pre-registered client.
    pub client_id: Option<String>,
    /// Its secret.
    pub client_secret: Option<String>,
    /// A Client ID Metadata Document URL, used when the authorization server supports them.
    pub client_metadata_url: Option<String>,
    /// The loopback redirect URI (the page's `/oauth/callback`).
    pub redirect_uri: String,
    /// `client_name` for dynamic registration.
    pub client_name: String,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("server", &self.server)
            .field("resource_url", &self.resource_url)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .field("client_metadata_url", &self.client_metadata_url)
            .finish()
    }
}

/// What the owner sees of a server's authorization (no secret in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthStatus {
    /// No usable token.
    NeedsAuthorization,
    /// Authorized.
    Authorized {
        /// By this authorization server.
        issuer: String,
        /// With these scopes.
        scopes: Vec<String>,
        /// Until then (Unix seconds), if said.
        expires_at: Option<u64>,
        /// Whether a refresh token is kept.
        refresh: bool,
    },
}

/// An authorization begun: the URL to show the owner and what the callback is checked with.
pub struct Pending {
    /// The authorization URL.
    pub url: String,
    state: String,
    verifier: String,
    scopes: Vec<String>,
    discovered: Discovered,
    registration: Registration,
    resource: String,
}

impl Pending {
    /// The one-time `state` the callback must carry back: what binds a callback to this
    /// authorization (the page keeps pending authorizations by it).
    pub fn state(&self) -> &str {
        &self.state
    }

    /// The authorization server it was begun with.
    pub fn issuer(&self) -> &str {
        &self.discovered.server.issuer
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("issuer", &self.discovered.server.issuer)
            .finish_non_exhaustive()
    }
}

/// When tokens are bound to a DPoP key (the block's `oauth.dpop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DpopMode {
    /// When the authorization server offers DPoP with ES256 and the resource server takes
    /// DPoP-bound tokens (its protected resource metadata or its challenge says so); else
    /// Bearer.
    #[default]
    Auto,
    /// Never: Bearer tokens.
    Never,
    /// Always: a server one of whose ends cannot is refused before anything is shown.
    Required,
}

impl DpopMode {
    /// The mode's word in the configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            DpopMode::Auto => "auto",
            DpopMode::Never => "never",
            DpopMode::Required => "required",
        }
    }
}

/// How long before its expiry a token is refreshed: a tenth of its lifetime, between 5 s and
/// 5 minutes, and never more than half of it (so never right after the code is redeemed);
/// 30 s when the lifetime was not said.
pub fn refresh_margin(lifetime: Option<u64>) -> u64 {
    match lifetime {
        Some(l) => (l / 10).clamp(5, 300).min(l / 2),
        None => 30,
    }
}

#[derive(Default)]
struct State {
    /// Whether the kept credentials were read.
    loaded: bool,
    /// The credentials in use (one issuer).
    current: Option<Credentials>,
    /// Scopes asked for by the last authorization.
    requested: Vec<String>,
    /// DPoP nonces (RFC 9449 §8, §9).
    as_nonce: Option<String>,
    rs_nonce: Option<String>,
    /// The last discovery and its outcome (for `maven mcp inspect`).
    discovered: Option<Result<Discovered, AuthError>>,
    /// The last 401 challenge seen.
    challenge: Option<Challenge>,
    dpop: Option<Arc<DpopKey>>,
    /// Why the kept authorization stopped being usable (a refused refresh, a refused token,
    /// a logout): the status says it until the owner authorizes again.
    lost: Option<String>,
}

/// What the transport does with a response it handed to [`OAuth::on_answer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Verdict {
    /// Send the request again, with the headers [`OAuth::headers_for`] gives now.
    SendAgain,
    /// The response is the answer.
    Take,
}

/// Per request: what the authorization has already done for it. The transport makes one for
/// each request and hands it to every [`OAuth::headers_for`] and [`OAuth::on_answer`] of that
/// request, which bound the retries with it.
#[derive(Debug, Default)]
pub struct Round {
    refreshed: bool,
    authorized: u32,
    step_ups: u32,
    nonce_retries: u32,
    /// The access token the last attempt carried.
    sent: Option<String>,
}

/// The authorization of one server.
///
/// Nothing here holds a lock across a request to the network: the state is behind a mutex
/// taken only for moments (the status reads it and never waits), and the steps that change the
/// credentials of this server (a refresh, the code redeemed, a logout) take `flow` one at a
/// time, which only those steps and this server's own requests wait for.
pub struct OAuth {
    config: OAuthConfig,
    net: Net,
    store: Arc<dyn CredentialStore>,
    agent: Option<Arc<dyn UserAgent>>,
    dpop_mode: DpopMode,
    grant: Grant,
    client_key: Option<grant::KeySource>,
    read_only: bool,
    state: std::sync::Mutex<State>,
    flow: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("server", &self.config.server)
            .finish_non_exhaustive()
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn random_b64(n: usize) -> String {
    let mut b = vec![0u8; n];
    rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut b);
    URL_SAFE_NO_PAD.encode(b)
}

fn form(pairs: &[(&str, &str)]) -> Vec<u8> {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish().into_bytes()
}

fn sensitive(v: &str) -> Result<HeaderValue, AuthError> {
    let mut h = HeaderValue::from_str(v)
        .map_err(|_| AuthError::BadToken("not a visible-ASCII header value".to_owned()))?;
    h.set_sensitive(true);
    Ok(h)
}

fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut out = a.to_vec();
    for s in b {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

fn origin(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .map(|u| u.origin().ascii_serialization())
}

/// Whether a token with a refresh token is due for one.
fn due(t: &Tokens) -> bool {
    t.refresh_token.is_some()
        && t.expires_at
            .is_some_and(|e| e <= now().saturating_add(refresh_margin(t.lifetime)))
}

/// Whether a token expired and cannot be refreshed.
fn dead(t: &Tokens) -> bool {
    t.refresh_token.is_none() && t.expires_at.is_some_and(|e| e <= now())
}

/// Whether a failure of a token request means the grant is gone (the authorization server
/// answered, and refused), rather than that it could not be reached.
fn refused_by_server(e: &AuthError) -> bool {
    matches!(
        e,
        AuthError::Refused { .. } | AuthError::BadToken(_) | AuthError::Malformed { .. }
    )
}

const TOKEN: &str = "token request";
const REGISTER: &str = "client registration";
const REFRESH: &str = "token refresh";
const REVOKE: &str = "token revocation";

/// The authorizations of a daemon's servers: one [`OAuth`] per HTTP server, by name. The daemon
/// builds it once; the connection manager (each server's requests) and the page (Connect,
/// the callback, Disconnect) borrow the same one, so both act on the same tokens. A reload of
/// the configuration changes its members in place ([`Registry::set`]), keeping the
/// authorization (and its tokens) of every server whose block did not change.
#[derive(Debug, Default)]
pub struct Registry {
    by_server: std::sync::RwLock<std::collections::BTreeMap<String, Arc<OAuth>>>,
}

impl Registry {
    /// The registry of these authorizations, each under its [`OAuth::server`] (a later one of
    /// the same name replaces an earlier).
    pub fn new(all: impl IntoIterator<Item = OAuth>) -> Registry {
        let r = Registry::default();
        r.set(all.into_iter().map(Arc::new));
        r
    }

    /// Makes these the members, each under its [`OAuth::server`].
    pub fn set(&self, all: impl IntoIterator<Item = Arc<OAuth>>) {
        let map = all
            .into_iter()
            .map(|o| (o.server().to_owned(), o))
            .collect();
        *self.by_server.write().unwrap_or_else(|p| p.into_inner()) = map;
    }

    /// The authorization of `server`, if it has one.
    pub fn get(&self, server: &str) -> Option<Arc<OAuth>> {
        self.by_server
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            .cloned()
    }

    /// Every authorization, in name order.
    pub fn all(&self) -> Vec<Arc<OAuth>> {
        self.by_server
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// No server has one.
    pub fn is_empty(&self) -> bool {
        self.by_server
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }
}

impl OAuth {
    /// The authorization of one server: its config, the fetcher of its door, where its
    /// credentials are kept.
    pub fn new(
        config: OAuthConfig,
        fetcher: webfetch::Fetcher,
        store: Arc<dyn CredentialStore>,
    ) -> OAuth {
        OAuth {
            config,
            net: Net::new(fetcher),
            store,
            agent: None,
            dpop_mode: DpopMode::Auto,
            grant: Grant::AuthorizationCode,
            client_key: None,
            read_only: false,
            state: std::sync::Mutex::new(State::default()),
            flow: tokio::sync::Mutex::new(()),
        }
    }

    /// Authorize with this user agent when a request needs it (the conformance client, a
    /// login).
    pub fn with_user_agent(mut self, agent: Arc<dyn UserAgent>) -> OAuth {
        self.agent = Some(agent);
        self
    }

    /// Rewrite URLs before dialling them (see [`Dial`]).
    pub fn with_dial(mut self, dial: Dial) -> OAuth {
        self.net.dial = Some(dial);
        self
    }

    /// When tokens are bound to a DPoP key (default [`DpopMode::Auto`]).
    pub fn with_dpop(mut self, mode: DpopMode) -> OAuth {
        self.dpop_mode = mode;
        self
    }

    /// Obtain tokens by this grant (default [`Grant::AuthorizationCode`], the owner's).
    pub fn with_grant(mut self, grant: Grant) -> OAuth {
        self.grant = grant;
        self
    }

    /// Authenticate the client at the token endpoint with `private_key_jwt` assertions signed
    /// by this key (RFC 7523 §2.2), rather than a secret.
    pub fn with_client_key(mut self, key: ClientKey) -> OAuth {
        self.client_key = Some(grant::KeySource::Loaded(Arc::new(key)));
        self
    }

    /// As [`OAuth::with_client_key`], the key read from this PKCS#8 PEM file at each use, its
    /// assertions naming `kid`.
    pub fn with_client_key_file(mut self, path: std::path::PathBuf, kid: Option<String>) -> OAuth {
        self.client_key = Some(grant::KeySource::File { path, kid });
        self
    }

    /// Only read and send the kept credentials: never refresh, forget or write them (`maven
    /// mcp inspect`, which must not rotate the tokens the daemon owns).
    pub fn read_only(mut self) -> OAuth {
        self.read_only = true;
        self
    }

    fn st(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Read the kept credentials, once: those with tokens, if any, are the ones in use.
    pub async fn load(&self) -> Result<(), AuthError> {
        if self.st().loaded {
            return Ok(());
        }
        let rows = self.store.load(&self.config.server).await?;
        let mut st = self.st();
        if !st.loaded {
            st.current = rows.into_iter().find(|c| c.tokens.is_some());
            st.dpop = st
                .current
                .as_ref()
                .and_then(|c| c.dpop_key.as_deref())
                .and_then(|k| DpopKey::from_pkcs8(k).ok())
                .map(Arc::new);
            st.loaded = true;
        }
        Ok(())
    }

    /// Read the kept credentials again at next use (another process authorized or forgot
    /// them).
    pub async fn reload(&self) {
        let mut st = self.st();
        st.loaded = false;
        st.current = None;
        st.dpop = None;
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.config.server
    }

    /// What the owner sees, as it is now: no request, no store, no wait (the credentials
    /// must have been read with [`OAuth::load`]). A token that expired without a refresh
    /// token is no authorization.
    pub fn status_now(&self) -> AuthStatus {
        let st = self.st();
        match st
            .current
            .as_ref()
            .and_then(|c| c.tokens.as_ref().map(|t| (c, t)))
        {
            Some((c, t)) if !dead(t) => AuthStatus::Authorized {
                issuer: c.issuer.clone(),
                scopes: t.scopes.clone(),
                expires_at: t.expires_at,
                refresh: t.refresh_token.is_some(),
            },
            _ => AuthStatus::NeedsAuthorization,
        }
    }

    /// What the owner sees (the kept credentials read first if they were not).
    pub async fn status(&self) -> AuthStatus {
        let _ = self.load().await;
        self.status_now()
    }

    /// Why this server needs the owner's authorization now, or `None` when it has a usable
    /// authorization or never asked for one: the token expired without a refresh token, a
    /// refresh or the token was refused, the credentials were forgotten, or the server
    /// challenged and nothing was authorized. Never waits.
    pub fn needs_authorization(&self) -> Option<String> {
        let st = self.st();
        if let Some(t) = st.current.as_ref().and_then(|c| c.tokens.as_ref()) {
            if dead(t) && !self.grant.needs_owner() {
                return Some(format!(
                    "the access token expired: the {} grant is made again at the next request",
                    self.grant.as_str()
                ));
            }
            if dead(t) {
                return Some(
                    "the access token expired and the authorization server gave no refresh token"
                        .to_owned(),
                );
            }
            return None;
        }
        if let Some(l) = &st.lost {
            return Some(l.clone());
        }
        st.challenge
            .as_ref()
            .map(|_| "the server asks for authorization".to_owned())
    }

    /// The last discovery and its outcome, if one ran (`maven mcp inspect` prints it).
    pub async fn last_discovery(&self) -> Option<Result<Discovered, AuthError>> {
        self.st().discovered.clone()
    }

    /// Run discovery from a challenge (never the authorization).
    pub async fn discover(&self, challenge: &Challenge) -> Result<Discovered, AuthError> {
        let d = discovery::discover(&self.net, &self.config.resource_url, challenge).await;
        let mut st = self.st();
        st.discovered = Some(d.clone());
        st.challenge = Some(challenge.clone());
        d
    }

    /// The request of the flow that has waited longest for its answer, if one is waiting now,
    /// as the error that names it (the step, its URL, how long it has waited): what a caller
    /// whose own deadline passed while the flow ran inside it (the MCP request a discovery or
    /// a grant runs in) reports, rather than its own deadline.
    pub fn stalled(&self) -> Option<AuthError> {
        self.net.oldest_waiting().map(|w| AuthError::Timeout {
            what: w.what,
            url: w.url,
            secs: w.since.elapsed().as_secs_f64().round().max(1.0) as u64,
        })
    }

    /// The last challenge the server sent, if any.
    pub async fn last_challenge(&self) -> Option<Challenge> {
        self.st().challenge.clone()
    }

    /// Authorize now through the user agent (discovery, registration, the owner's consent,
    /// the code redeemed).
    pub async fn authorize(&self, challenge: &Challenge) -> Result<(), AuthError> {
        self.load().await?;
        self.authorize_with(challenge, None).await
    }

    /// Refresh the tokens now. A refusal by the authorization server forgets them (needs
    /// authorization).
    pub async fn refresh_now(&self) -> Result<(), AuthError> {
        self.load().await?;
        let _flow = self.flow.lock().await;
        self.refresh().await
    }

    /// Forget the tokens in use (the registration is kept), saying why. The caller holds
    /// `flow`.
    async fn drop_tokens(&self, why: String) {
        let kept = {
            let mut st = self.st();
            st.lost = Some(why);
            match st.current.as_mut() {
                Some(c) => c.tokens.take().map(|_| c.clone()),
                None => None,
            }
        };
        if let (Some(c), false) = (kept, self.read_only) {
            let _ = self.store.save(&self.config.server, &c).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_finds_each_authorization_by_its_server() {
        let one = |name: &str| {
            OAuth::new(
                OAuthConfig {
                    server: name.to_owned(),
                    resource_url: format!("https://{name}.example/mcp"),
                    client_id: None,
                    client_secret: None,
                    client_metadata_url: None,
                    redirect_uri: "http://127.0.0.1:1/oauth/callback".to_owned(),
                    client_name: "test".to_owned(),
                },
                webfetch::Fetcher::new(webfetch::DoorConfig::new("test")),
                Arc::new(MemoryStore::default()),
            )
        };
        let r = Registry::new([one("b"), one("a")]);
        assert_eq!(
            r.get("a").map(|o| o.server().to_owned()),
            Some("a".to_owned())
        );
        assert_eq!(
            r.get("b").map(|o| o.server().to_owned()),
            Some("b".to_owned())
        );
        assert!(
            r.get("c").is_none(),
            "no authorization for a server not given"
        );
        let names: Vec<_> = r.all().iter().map(|o| o.server().to_owned()).collect();
        assert_eq!(names, ["a", "b"], "in name order");
        assert!(!r.is_empty());
        assert!(Registry::default().is_empty());
    }
}
