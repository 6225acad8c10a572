//! OAuth 2.1 for remote servers (the MCP authorization specification, 2025-11-25 and
//! 2026-07-28): discovery, registration, authorization code with PKCE S256, tokens bound to
//! their issuer, refresh with rotation, step-up, DPoP.
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
//! ([`DpopMode`]); a token is refreshed in the last tenth of its lifetime
//! ([`refresh_margin`]).

// This crate reads untrusted bytes: a failure is an error value, never a panic.
#![warn(clippy::expect_used, clippy::panic)]

mod challenge;
mod discovery;
mod dpop;
mod error;
pub mod net;
mod store;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use sha2::{Digest, Sha256};
use webfetch::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};

pub use challenge::Challenge;
pub use discovery::{
    check_authorization_endpoint, resource_matches, resource_metadata_locations,
    server_metadata_locations, Discovered, ResourceMetadata, ServerMetadata, DISCOVERY_DEADLINE,
};
pub use dpop::DpopKey;
pub use error::AuthError;
pub use net::Dial;
pub use store::{CredentialStore, Credentials, MemoryStore, Registration, StoreFuture, Tokens};

use error::cut;
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
/// the callback, Disconnect) borrow the same one, so both act on the same tokens.
#[derive(Debug, Default)]
pub struct Registry {
    by_server: std::collections::BTreeMap<String, Arc<OAuth>>,
}

impl Registry {
    /// The registry of these authorizations, each under its [`OAuth::server`] (a later one of
    /// the same name replaces an earlier).
    pub fn new(all: impl IntoIterator<Item = OAuth>) -> Registry {
        Registry {
            by_server: all
                .into_iter()
                .map(|o| (o.server().to_owned(), Arc::new(o)))
                .collect(),
        }
    }

    /// The authorization of `server`, if it has one.
    pub fn get(&self, server: &str) -> Option<&Arc<OAuth>> {
        self.by_server.get(server)
    }

    /// Every authorization, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<OAuth>> {
        self.by_server.values()
    }

    /// No server has one.
    pub fn is_empty(&self) -> bool {
        self.by_server.is_empty()
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
            net: Net {
                fetcher,
                dial: None,
            },
            store,
            agent: None,
            dpop_mode: DpopMode::Auto,
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

    fn canonical(&self, url: &str) -> String {
        let dialled = match &self.net.dial {
            Some(d) => d(&self.config.resource_url),
            None => self.config.resource_url.clone(),
        };
        if url == dialled {
            self.config.resource_url.clone()
        } else {
            url.to_owned()
        }
    }

    fn for_server_origin(&self, url: &str) -> bool {
        let canonical = self.canonical(url);
        origin(&canonical).is_some() && origin(&canonical) == origin(&self.config.resource_url)
    }

    fn tokens(&self) -> Option<Tokens> {
        self.st().current.as_ref().and_then(|c| c.tokens.clone())
    }

    /// The `Authorization` (and `DPoP`) headers of a request to `url`: none for another
    /// origin or without a token. A token due for a refresh is refreshed first (one refresh
    /// for all the requests that find it due).
    pub async fn headers_for(
        &self,
        method: &str,
        url: &str,
        round: &mut Round,
    ) -> Result<HeaderMap, AuthError> {
        let mut out = HeaderMap::new();
        round.sent = None;
        if !self.for_server_origin(url) {
            return Ok(out);
        }
        self.load().await?;
        if !self.read_only && self.tokens().is_some_and(|t| due(&t)) {
            let _flow = self.flow.lock().await;
            // Another request may have refreshed it while this one waited.
            if self.tokens().is_some_and(|t| due(&t)) {
                // A refused refresh leaves no token: the request goes without, and its 401
                // says what happens next.
                let _ = self.refresh().await;
            }
        }
        let (t, key, nonce) = {
            let st = self.st();
            let Some(t) = st.current.as_ref().and_then(|c| c.tokens.clone()) else {
                return Ok(out);
            };
            (t, st.dpop.clone(), st.rs_nonce.clone())
        };
        round.sent = Some(t.access_token.clone());
        if t.token_type.eq_ignore_ascii_case("dpop") {
            let key = key.ok_or(AuthError::NeedsAuthorization)?;
            out.insert(
                header::AUTHORIZATION,
                sensitive(&format!("DPoP {}", t.access_token))?,
            );
            let proof = key.proof(
                method,
                &self.canonical(url),
                Some(&t.access_token),
                nonce.as_deref(),
            )?;
            out.insert(HeaderName::from_static("dpop"), sensitive(&proof)?);
        } else {
            out.insert(
                header::AUTHORIZATION,
                sensitive(&format!("Bearer {}", t.access_token))?,
            );
        }
        Ok(out)
    }

    /// What to do with a response to a request of the server: [`Verdict::SendAgain`] (a nonce
    /// learnt, a token refreshed, an authorization or a step-up made: the request goes again
    /// with [`OAuth::headers_for`]'s new headers), [`Verdict::Take`] (the response is the
    /// answer), or why the server cannot be used ([`AuthError::NeedsAuthorization`] among
    /// them).
    pub async fn on_answer(
        &self,
        url: &str,
        status: StatusCode,
        headers: &HeaderMap,
        round: &mut Round,
    ) -> Result<Verdict, AuthError> {
        if !self.for_server_origin(url) {
            return Ok(Verdict::Take);
        }
        let nonce = headers
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(cut);
        if let Some(n) = &nonce {
            self.st().rs_nonce = Some(n.clone());
        }
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return Ok(Verdict::Take);
        }
        let challenge = Challenge::parse(
            headers
                .get_all(header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok()),
        );
        if challenge.error.as_deref() == Some("use_dpop_nonce") {
            if nonce.is_some() && round.nonce_retries == 0 {
                round.nonce_retries += 1;
                return Ok(Verdict::SendAgain);
            }
            return Ok(Verdict::Take);
        }
        let server = &self.config.server;
        if status == StatusCode::FORBIDDEN {
            if challenge.error.as_deref() != Some("insufficient_scope") {
                return Ok(Verdict::Take);
            }
            let wanted = challenge.scopes();
            let had = {
                let st = self.st();
                let granted = st
                    .current
                    .as_ref()
                    .and_then(|c| c.tokens.as_ref())
                    .map(|t| t.scopes.clone())
                    .unwrap_or_default();
                union(&st.requested, &granted)
            };
            tracing::info!(server = %server, scope = %cut(challenge.scope.as_deref().unwrap_or("")), reason = %challenge.reason(), "the server asks for a wider scope");
            if !wanted.is_empty() && wanted.iter().all(|s| had.contains(s)) {
                return Err(AuthError::ScopeLoop {
                    scope: cut(challenge.scope.as_deref().unwrap_or("")),
                });
            }
            if round.step_ups >= MAX_STEP_UPS {
                return Err(AuthError::TooManyStepUps {
                    count: round.step_ups,
                });
            }
            round.step_ups += 1;
            // What was asked or granted before, and what is asked now (a daemon that restarted
            // has asked nothing yet: the kept token's scopes count).
            let scopes = union(&had, &wanted);
            if self.agent.is_none() {
                // The owner authorizes the wider scope (Connect, `maven mcp login`): the kept
                // challenge asks for all of it.
                let mut wider = challenge.clone();
                wider.scope = Some(scopes.join(" "));
                self.st().challenge = Some(wider);
                return Err(AuthError::NeedsAuthorization);
            }
            self.authorize_with(&challenge, Some(scopes)).await?;
            return Ok(Verdict::SendAgain);
        }
        // 401.
        let current = {
            let mut st = self.st();
            st.challenge = Some(challenge.clone());
            st.current
                .as_ref()
                .and_then(|c| c.tokens.as_ref().map(|t| (c.issuer.clone(), t.clone())))
        };
        if let Some((issuer, t)) = &current {
            if t.token_type.eq_ignore_ascii_case("dpop")
                && !challenge.schemes.is_empty()
                && !challenge.offers_dpop()
            {
                // Refreshing would only bind the next token to the same key: an error that
                // names both ends, never a loop.
                let e = AuthError::DpopRefused {
                    issuer: cut(issuer),
                    server: cut(&self.config.resource_url),
                    schemes: challenge.schemes.join(", "),
                    reason: challenge.reason(),
                };
                tracing::warn!(server = %server, error = %e, "the server refused the DPoP-bound token");
                if !self.read_only {
                    let _flow = self.flow.lock().await;
                    self.drop_tokens(e.to_string()).await;
                }
                return Err(e);
            }
        }
        if current.is_some() && !round.refreshed && round.authorized == 0 && !self.read_only {
            round.refreshed = true;
            tracing::info!(server = %server, reason = %challenge.reason(), "the server refused the access token; refreshing it");
            let _flow = self.flow.lock().await;
            let now_token = self.tokens().map(|t| t.access_token);
            // Refreshed by another request meanwhile: send again with the new token.
            if now_token.is_some() && now_token != round.sent {
                return Ok(Verdict::SendAgain);
            }
            if now_token.is_some() && self.refresh().await.is_ok() {
                return Ok(Verdict::SendAgain);
            }
        }
        if round.authorized >= 1 {
            return Err(AuthError::NeedsAuthorization);
        }
        // The token (if any) is not accepted: it is dropped, so the server is "needs
        // authorization" until it is authorized again.
        if !self.read_only && self.tokens().is_some() {
            tracing::warn!(server = %server, reason = %challenge.reason(), "the server refused the access token; it needs authorization");
            let _flow = self.flow.lock().await;
            self.drop_tokens(format!(
                "the server refused the access token: {}",
                challenge.reason()
            ))
            .await;
        }
        if self.agent.is_none() {
            // No discovery here: the daemon's dial ends at once, and discovery runs where the
            // owner asks for it (Connect, `maven mcp login`, `maven mcp inspect`).
            return Err(AuthError::NeedsAuthorization);
        }
        round.authorized += 1;
        self.authorize_with(&challenge, None).await?;
        Ok(Verdict::SendAgain)
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

    async fn authorize_with(
        &self,
        challenge: &Challenge,
        scopes: Option<Vec<String>>,
    ) -> Result<(), AuthError> {
        let agent = self.agent.clone().ok_or(AuthError::NoUserAgent)?;
        let pending = self.begin_with(challenge, scopes).await?;
        let callback = agent.authorize(pending.url.clone()).await?;
        self.complete(pending, &callback).await
    }

    /// Begin an authorization: discovery, registration (reused for the same issuer), the
    /// authorization URL with PKCE S256, `state`, `resource` and the scopes.
    pub async fn begin(&self, challenge: &Challenge) -> Result<Pending, AuthError> {
        self.begin_with(challenge, None).await
    }

    /// Whether the tokens of this authorization are bound to a DPoP key.
    fn uses_dpop(&self, d: &Discovered) -> bool {
        match self.dpop_mode {
            DpopMode::Never => false,
            DpopMode::Auto => d.server.dpop_es256() && d.resource_speaks_dpop(),
            DpopMode::Required => d.server.dpop_es256(),
        }
    }

    async fn begin_with(
        &self,
        challenge: &Challenge,
        scopes: Option<Vec<String>>,
    ) -> Result<Pending, AuthError> {
        let d = discovery::discover(&self.net, &self.config.resource_url, challenge).await;
        self.st().discovered = Some(d.clone());
        let d = d?;
        if self.dpop_mode == DpopMode::Required {
            if !d.server.dpop_es256() {
                return Err(AuthError::DpopUnavailable(format!(
                    "the authorization server {} does not offer DPoP with ES256",
                    cut(&d.server.issuer)
                )));
            }
            if !d.resource_speaks_dpop() {
                return Err(AuthError::DpopUnavailable(format!(
                    "the MCP server {} does not say it takes DPoP-bound tokens (neither its protected resource metadata nor its challenge)",
                    cut(&self.config.resource_url)
                )));
            }
        }
        let resource = d.resource_indicator(&self.config.resource_url);
        let issuer = d.server.issuer.clone();
        // Credentials are bound to their issuer: another issuer means another registration.
        let known = self
            .store
            .load(&self.config.server)
            .await?
            .into_iter()
            .find(|c| c.issuer == issuer);
        let registration = match known {
            // Reused while it is the one configured (the same redirect URI, and the same
            // pre-registered client, if one is).
            Some(c)
                if c.registration.redirect_uri == self.config.redirect_uri
                    && self
                        .config
                        .client_id
                        .as_ref()
                        .is_none_or(|id| *id == c.registration.client_id) =>
            {
                c.registration
            }
            _ => self.register(&d.server).await?,
        };
        let mut scopes = match scopes {
            Some(s) => s,
            None => d
                .challenge_scope
                .clone()
                .filter(|s| !s.is_empty())
                .or_else(|| d.resource.as_ref().and_then(|r| r.scopes_supported.clone()))
                .unwrap_or_default(),
        };
        if !scopes.is_empty()
            && d.server
                .scopes_supported
                .as_ref()
                .is_some_and(|s| s.iter().any(|x| x == "offline_access"))
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".to_owned());
        }
        // OpenID Connect Core §11: an OpenID provider grants offline_access only with
        // prompt=consent (else it must drop it, and no refresh token comes).
        let consent = d.server.openid && scopes.iter().any(|s| s == "offline_access");
        let verifier = random_b64(32);
        let code_challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let state = random_b64(16);
        let mut url =
            url::Url::parse(&d.server.authorization_endpoint).map_err(|e| AuthError::Endpoint {
                what: "authorization endpoint",
                url: cut(&d.server.authorization_endpoint),
                reason: e.to_string(),
            })?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &registration.client_id)
                .append_pair("redirect_uri", &registration.redirect_uri)
                .append_pair("code_challenge", &code_challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", &resource);
            if !scopes.is_empty() {
                q.append_pair("scope", &scopes.join(" "));
            }
            if consent {
                q.append_pair("prompt", "consent");
            }
        }
        self.st().requested = scopes.clone();
        Ok(Pending {
            url: url.to_string(),
            state,
            verifier,
            scopes,
            discovered: d,
            registration,
            resource,
        })
    }

    /// Complete an authorization with the callback URL the authorization server redirected
    /// to: `state` checked, `iss` checked against the recorded issuer, then the code
    /// redeemed and the tokens kept.
    pub async fn complete(&self, pending: Pending, callback: &str) -> Result<(), AuthError> {
        self.load().await?;
        let cb = url::Url::parse(callback).map_err(|e| AuthError::Malformed {
            what: "callback",
            reason: e.to_string(),
        })?;
        let param = |k: &str| {
            cb.query_pairs()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.into_owned())
        };
        if param("state").as_deref() != Some(pending.state.as_str()) {
            return Err(AuthError::StateMismatch);
        }
        let server = &pending.discovered.server;
        // RFC 9207: an `iss` must be the recorded issuer (simple string comparison), and must
        // be there when the AS says it sends one. Checked before anything else is believed.
        match param("iss") {
            Some(iss) if iss != server.issuer => {
                return Err(AuthError::IssMismatch {
                    expected: cut(&server.issuer),
                    found: Some(cut(&iss)),
                })
            }
            None if server.iss_parameter_supported => {
                return Err(AuthError::IssMismatch {
                    expected: cut(&server.issuer),
                    found: None,
                })
            }
            _ => {}
        }
        if let Some(e) = param("error") {
            let e = AuthError::Declined { error: cut(&e) };
            tracing::warn!(server = %self.config.server, issuer = %cut(&server.issuer), error = %e, "the authorization was declined");
            return Err(e);
        }
        let code = param("code").ok_or_else(|| AuthError::Malformed {
            what: "callback",
            reason: "no code".to_owned(),
        })?;
        let _flow = self.flow.lock().await;
        let reg = &pending.registration;
        let mut body = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", reg.redirect_uri.as_str()),
            ("code_verifier", pending.verifier.as_str()),
            ("resource", pending.resource.as_str()),
        ];
        let dpop = if self.uses_dpop(&pending.discovered) {
            let kept = self.st().dpop.clone();
            Some(match kept {
                Some(k) => k,
                None => Arc::new(DpopKey::generate()?),
            })
        } else {
            None
        };
        let (extra, auth_body) = client_auth(reg)?;
        body.extend(auth_body.iter().map(|(k, v)| (*k, v.as_str())));
        let answer = self
            .token_request(
                TOKEN,
                &server.token_endpoint,
                &body,
                extra,
                dpop.as_deref(),
            )
            .await
            .inspect_err(|e| {
                tracing::warn!(server = %self.config.server, issuer = %cut(&server.issuer), error = %e, "the code was not redeemed");
            })?;
        let tokens = parse_tokens(&answer, &pending.scopes, None, dpop.is_some())?;
        if tokens.refresh_token.is_none() {
            tracing::warn!(
                server = %self.config.server,
                issuer = %cut(&server.issuer),
                expires_at = ?tokens.expires_at,
                "the authorization server gave no refresh token: the owner is asked to authorize again when the access token expires"
            );
        }
        let creds = Credentials {
            issuer: server.issuer.clone(),
            token_endpoint: server.token_endpoint.clone(),
            revocation_endpoint: server.revocation_endpoint.clone(),
            resource: pending.resource.clone(),
            registration: reg.clone(),
            tokens: Some(tokens),
            dpop_key: dpop.as_ref().map(|k| k.pkcs8().to_vec()),
        };
        if !self.read_only {
            self.store.save(&self.config.server, &creds).await?;
        }
        let mut st = self.st();
        st.dpop = dpop;
        st.current = Some(creds);
        st.lost = None;
        Ok(())
    }

    /// POST to the token endpoint, with a DPoP proof when `dpop` (retried once with the
    /// AS's nonce on `use_dpop_nonce`). A non-2xx answer is its OAuth error.
    async fn token_request(
        &self,
        what: &'static str,
        endpoint: &str,
        body: &[(&str, &str)],
        extra: HeaderMap,
        dpop: Option<&DpopKey>,
    ) -> Result<serde_json::Value, AuthError> {
        let encoded = form(body);
        let mut tries = 0;
        loop {
            tries += 1;
            let mut h = extra.clone();
            if let Some(key) = dpop {
                let nonce = self.st().as_nonce.clone();
                let proof = key.proof("POST", endpoint, None, nonce.as_deref())?;
                h.insert(HeaderName::from_static("dpop"), sensitive(&proof)?);
            }
            let a = self
                .net
                .post(what, endpoint, encoded.clone(), false, h)
                .await?;
            if let Some(n) = a.headers.get("dpop-nonce").and_then(|v| v.to_str().ok()) {
                self.st().as_nonce = Some(cut(n));
            }
            if a.status.is_success() {
                return a.json(what);
            }
            let err = a.oauth_error(what);
            let nonce_asked =
                matches!(&err, AuthError::Refused { error, .. } if error == "use_dpop_nonce");
            if nonce_asked && dpop.is_some() && tries == 1 && a.headers.contains_key("dpop-nonce") {
                continue;
            }
            return Err(err);
        }
    }

    /// Refresh the tokens in use; the new refresh token (rotation) replaces the old. A refusal
    /// by the authorization server forgets the tokens: the server needs authorization, and
    /// nothing retries by itself; a server that could not be reached leaves them for the next
    /// request. The caller holds `flow`.
    async fn refresh(&self) -> Result<(), AuthError> {
        let (creds, dpop) = {
            let st = self.st();
            let Some(creds) = st.current.clone() else {
                return Err(AuthError::NeedsAuthorization);
            };
            let dpop = st.dpop.clone().filter(|_| {
                creds
                    .tokens
                    .as_ref()
                    .is_some_and(|t| t.token_type.eq_ignore_ascii_case("dpop"))
            });
            (creds, dpop)
        };
        let Some(old) = creds.tokens.clone() else {
            return Err(AuthError::NeedsAuthorization);
        };
        let Some(refresh_token) = old.refresh_token.clone() else {
            return Err(AuthError::NeedsAuthorization);
        };
        let mut body = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.as_str()),
            ("resource", creds.resource.as_str()),
        ];
        let (extra, auth_body) = client_auth(&creds.registration)?;
        body.extend(auth_body.iter().map(|(k, v)| (*k, v.as_str())));
        let result = async {
            self.net.check(REFRESH, &creds.token_endpoint)?;
            let v = self
                .token_request(
                    REFRESH,
                    &creds.token_endpoint,
                    &body,
                    extra,
                    dpop.as_deref(),
                )
                .await?;
            parse_tokens(&v, &old.scopes, Some(&refresh_token), dpop.is_some())
        }
        .await;
        match result {
            Ok(tokens) => {
                let mut next = creds;
                next.tokens = Some(tokens);
                if !self.read_only {
                    self.store.save(&self.config.server, &next).await?;
                }
                tracing::debug!(server = %self.config.server, "tokens refreshed");
                let mut st = self.st();
                st.current = Some(next);
                st.lost = None;
                Ok(())
            }
            Err(e) if refused_by_server(&e) => {
                tracing::warn!(server = %self.config.server, issuer = %cut(&creds.issuer), error = %e, "token refresh refused; the server needs authorization");
                self.drop_tokens(format!("token refresh refused: {e}"))
                    .await;
                Err(e)
            }
            Err(e) => {
                tracing::warn!(server = %self.config.server, issuer = %cut(&creds.issuer), error = %e, "token refresh failed; the tokens are kept for the next try");
                Err(e)
            }
        }
    }

    /// How Maven would register with this authorization server: `pre-registered`,
    /// `client-metadata-document`, `dynamic`, or `none` (no way: configure
    /// `oauth.client_id`).
    pub fn registration_method(&self, server: &ServerMetadata) -> &'static str {
        if self.config.client_id.is_some() {
            "pre-registered"
        } else if self.config.client_metadata_url.is_some() && server.cimd_supported {
            "client-metadata-document"
        } else if server.registration_endpoint.is_some() {
            "dynamic"
        } else {
            "none"
        }
    }

    async fn register(&self, server: &ServerMetadata) -> Result<Registration, AuthError> {
        let redirect_uri = self.config.redirect_uri.clone();
        if let Some(id) = &self.config.client_id {
            let auth_method = match &self.config.client_secret {
                Some(_) => secret_method(&server.token_endpoint_auth_methods),
                None => "none".to_owned(),
            };
            return Ok(Registration {
                client_id: id.clone(),
                client_secret: self.config.client_secret.clone(),
                auth_method,
                redirect_uri,
                method: "pre-registered".to_owned(),
            });
        }
        if let (Some(url), true) = (&self.config.client_metadata_url, server.cimd_supported) {
            return Ok(Registration {
                client_id: url.clone(),
                client_secret: None,
                auth_method: "none".to_owned(),
                redirect_uri,
                method: "client-metadata-document".to_owned(),
            });
        }
        let Some(endpoint) = &server.registration_endpoint else {
            return Err(AuthError::NoRegistration {
                issuer: cut(&server.issuer),
            });
        };
        let supported = &server.token_endpoint_auth_methods;
        // A public client (PKCE) where the server takes one; else a secret, the way the server
        // prefers.
        let wanted = if supported.iter().any(|m| m == "none") {
            "none".to_owned()
        } else if supported
            .iter()
            .any(|m| m == "client_secret_basic" || m == "client_secret_post")
        {
            secret_method(supported)
        } else {
            "none".to_owned()
        };
        let request = serde_json::json!({
            "client_name": self.config.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": wanted,
            "application_type": "native",
        });
        let a = self
            .net
            .post(
                REGISTER,
                endpoint,
                request.to_string().into_bytes(),
                true,
                HeaderMap::new(),
            )
            .await?;
        if !a.status.is_success() {
            let e = a.oauth_error(REGISTER);
            tracing::warn!(server = %self.config.server, issuer = %cut(&server.issuer), error = %e, "client registration refused");
            return Err(e);
        }
        let v = a.json(REGISTER)?;
        let client_id = v
            .get("client_id")
            .and_then(|s| s.as_str())
            .filter(|s| !s.is_empty() && s.len() <= 1024)
            .ok_or_else(|| AuthError::Malformed {
                what: REGISTER,
                reason: "no client_id".to_owned(),
            })?
            .to_owned();
        let client_secret = v
            .get("client_secret")
            .and_then(|s| s.as_str())
            .filter(|s| s.len() <= 4096)
            .map(str::to_owned);
        let auth_method = match v.get("token_endpoint_auth_method").and_then(|s| s.as_str()) {
            Some(m @ ("none" | "client_secret_basic" | "client_secret_post")) => m.to_owned(),
            Some(other) => {
                return Err(AuthError::Malformed {
                    what: REGISTER,
                    reason: format!(
                        "token_endpoint_auth_method {:?} is not supported",
                        cut(other)
                    ),
                })
            }
            None if client_secret.is_some() => secret_method(supported),
            None => "none".to_owned(),
        };
        Ok(Registration {
            client_id,
            client_secret,
            auth_method,
            redirect_uri,
            method: "dynamic".to_owned(),
        })
    }

    /// Forget this server's credentials, revoking the tokens first where the authorization
    /// server offers revocation (best effort: a failure there still forgets, and is logged).
    pub async fn logout(&self) -> Result<(), AuthError> {
        let _ = self.load().await;
        let _flow = self.flow.lock().await;
        let taken = {
            let mut st = self.st();
            st.dpop = None;
            st.requested.clear();
            st.lost = Some("the credentials were forgotten by a logout".to_owned());
            st.current.take()
        };
        if let Some(c) = taken {
            if let (Some(endpoint), Some(t)) = (&c.revocation_endpoint, &c.tokens) {
                let (extra, auth_body) = client_auth(&c.registration)?;
                for (token, hint) in [
                    (t.refresh_token.as_deref(), "refresh_token"),
                    (Some(t.access_token.as_str()), "access_token"),
                ] {
                    let Some(token) = token else { continue };
                    let mut body = vec![("token", token), ("token_type_hint", hint)];
                    body.extend(auth_body.iter().map(|(k, v)| (*k, v.as_str())));
                    let answer = self
                        .net
                        .post(REVOKE, endpoint, form(&body), false, extra.clone())
                        .await;
                    let failed = match answer {
                        Ok(a) if a.status.is_success() => None,
                        Ok(a) => Some(a.oauth_error(REVOKE)),
                        Err(e) => Some(e),
                    };
                    match failed {
                        None => {
                            tracing::info!(server = %self.config.server, %hint, "token revoked")
                        }
                        // RFC 7009 §2.2.1: the server does not revoke tokens of this kind (a
                        // self-contained JWT access token, which the refresh token's revocation
                        // ends with its grant).
                        Some(AuthError::Refused { error, .. })
                            if error == "unsupported_token_type" =>
                        {
                            tracing::info!(server = %self.config.server, %hint, "the authorization server does not revoke this kind of token (unsupported_token_type)")
                        }
                        Some(e) => {
                            tracing::warn!(server = %self.config.server, %hint, error = %e, "token revocation failed; the token is forgotten anyway")
                        }
                    }
                }
            }
        }
        if self.read_only {
            return Ok(());
        }
        self.store.forget(&self.config.server).await
    }
}

/// How a client with a secret authenticates: the first of `client_secret_basic` and
/// `client_secret_post` in the authorization server's own list (its preference: a server may
/// take one of them fully and the other only at some endpoints), `client_secret_basic` (the
/// default of RFC 8414) when it lists neither.
fn secret_method(supported: &[String]) -> String {
    supported
        .iter()
        .find(|m| *m == "client_secret_basic" || *m == "client_secret_post")
        .cloned()
        .unwrap_or_else(|| "client_secret_basic".to_owned())
}

/// The client authentication of a token request: headers and body parameters.
/// Headers and body parameters of a client's authentication.
type ClientAuth = (HeaderMap, Vec<(&'static str, String)>);

fn client_auth(reg: &Registration) -> Result<ClientAuth, AuthError> {
    let mut h = HeaderMap::new();
    let mut body = Vec::new();
    match (reg.auth_method.as_str(), &reg.client_secret) {
        ("client_secret_basic", Some(secret)) => {
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(&reg.client_id), enc(secret));
            h.insert(
                header::AUTHORIZATION,
                sensitive(&format!("Basic {}", STANDARD.encode(pair)))?,
            );
            // RFC 6749 §3.2.1 lets a client name itself in the body too, and some servers
            // (the Python SDK's) look for it only there.
            body.push(("client_id", reg.client_id.clone()));
        }
        ("client_secret_post", Some(secret)) => {
            body.push(("client_id", reg.client_id.clone()));
            body.push(("client_secret", secret.clone()));
        }
        _ => body.push(("client_id", reg.client_id.clone())),
    }
    Ok((h, body))
}

/// Check a token answer: a visible-ASCII access token, a known `token_type` (`DPoP` only
/// when a proof was sent), a sane `expires_in`.
fn parse_tokens(
    v: &serde_json::Value,
    requested: &[String],
    old_refresh: Option<&str>,
    dpop: bool,
) -> Result<Tokens, AuthError> {
    let bad = |s: String| AuthError::BadToken(s);
    let access_token = v
        .get("access_token")
        .and_then(|s| s.as_str())
        .ok_or_else(|| bad("no access_token".to_owned()))?;
    if access_token.is_empty()
        || access_token.len() > MAX_TOKEN
        || !access_token.bytes().all(|b| (0x21..=0x7e).contains(&b))
    {
        return Err(bad(
            "the access_token is empty, too long or not visible ASCII".to_owned(),
        ));
    }
    let token_type = v
        .get("token_type")
        .and_then(|s| s.as_str())
        .ok_or_else(|| bad("no token_type".to_owned()))?;
    let token_type = if token_type.eq_ignore_ascii_case("bearer") {
        "Bearer"
    } else if token_type.eq_ignore_ascii_case("dpop") && dpop {
        "DPoP"
    } else {
        return Err(bad(format!("unknown token_type {:?}", cut(token_type))));
    };
    let lifetime = match v.get("expires_in") {
        None | Some(serde_json::Value::Null) => None,
        Some(e) => Some(
            e.as_u64()
                .filter(|s| *s <= MAX_EXPIRES_IN)
                .ok_or_else(|| bad(format!("absurd expires_in {}", cut(&e.to_string()))))?,
        ),
    };
    let expires_at = lifetime.map(|secs| now().saturating_add(secs));
    let refresh_token = match v.get("refresh_token").and_then(|s| s.as_str()) {
        Some(r) if !r.is_empty() && r.len() <= MAX_TOKEN => Some(r.to_owned()),
        Some(_) => return Err(bad("the refresh_token is empty or too long".to_owned())),
        None => old_refresh.map(str::to_owned),
    };
    let scopes = v
        .get("scope")
        .and_then(|s| s.as_str())
        .map(|s| s.split_whitespace().take(256).map(str::to_owned).collect())
        .unwrap_or_else(|| requested.to_vec());
    Ok(Tokens {
        access_token: access_token.to_owned(),
        token_type: token_type.to_owned(),
        refresh_token,
        expires_at,
        lifetime,
        scopes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_answers() {
        let ok = parse_tokens(
            &serde_json::json!({"access_token": "a", "token_type": "bearer", "expires_in": 60}),
            &["s".to_owned()],
            Some("r0"),
            false,
        )
        .expect("ok");
        assert_eq!(ok.token_type, "Bearer");
        assert_eq!(
            ok.refresh_token.as_deref(),
            Some("r0"),
            "kept when not rotated"
        );
        assert_eq!(ok.scopes, ["s"]);
        for (v, want) in [
            (
                serde_json::json!({"access_token": "a", "token_type": "mac"}),
                "unknown token_type",
            ),
            (
                serde_json::json!({"access_token": "a", "token_type": "DPoP"}),
                "unknown token_type",
            ),
            (
                serde_json::json!({"access_token": "a", "token_type": "Bearer", "expires_in": 1e12}),
                "absurd expires_in",
            ),
            (
                serde_json::json!({"access_token": "a", "token_type": "Bearer", "expires_in": -1}),
                "absurd expires_in",
            ),
            (
                serde_json::json!({"access_token": "a b", "token_type": "Bearer"}),
                "visible ASCII",
            ),
            (
                serde_json::json!({"token_type": "Bearer"}),
                "no access_token",
            ),
        ] {
            let e = parse_tokens(&v, &[], None, false).expect_err("refused");
            assert!(e.to_string().contains(want), "{e} for {v}");
        }
    }

    #[test]
    fn the_refresh_margin_is_a_tenth_of_the_lifetime_within_bounds() {
        for (lifetime, margin) in [
            (Some(3600), 300),
            (Some(86_400), 300),
            (Some(600), 60),
            (Some(30), 5),
            (Some(8), 4),
            (Some(1), 0),
            (None, 30),
        ] {
            assert_eq!(refresh_margin(lifetime), margin, "{lifetime:?}");
        }
        let t = parse_tokens(
            &serde_json::json!({"access_token": "a", "token_type": "Bearer", "expires_in": 30, "refresh_token": "r"}),
            &[],
            None,
            false,
        )
        .expect("ok");
        assert_eq!(t.lifetime, Some(30));
        assert!(!due(&t), "not due right after the exchange");
    }

    #[test]
    fn the_secret_method_is_the_servers_first() {
        let m = |v: &[&str]| secret_method(&v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(
            m(&["client_secret_post", "client_secret_basic"]),
            "client_secret_post"
        );
        assert_eq!(
            m(&["client_secret_basic", "client_secret_post"]),
            "client_secret_basic"
        );
        assert_eq!(
            m(&["private_key_jwt", "client_secret_post"]),
            "client_secret_post"
        );
        assert_eq!(m(&["none"]), "client_secret_basic");
        assert_eq!(m(&[]), "client_secret_basic");
    }

    #[test]
    fn basic_credentials_are_form_encoded() {
        let reg = Registration {
            client_id: "a:b".to_owned(),
            client_secret: Some("s p".to_owned()),
            auth_method: "client_secret_basic".to_owned(),
            redirect_uri: String::new(),
            method: String::new(),
        };
        let (h, body) = client_auth(&reg).expect("auth");
        assert_eq!(
            body,
            [("client_id", "a:b".to_owned())],
            "named in the body too"
        );
        let v = h
            .get(header::AUTHORIZATION)
            .expect("basic")
            .to_str()
            .expect("ascii");
        assert_eq!(v, format!("Basic {}", STANDARD.encode("a%3Ab:s+p")));
    }
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
        assert_eq!(r.get("a").map(|o| o.server()), Some("a"));
        assert_eq!(r.get("b").map(|o| o.server()), Some("b"));
        assert!(
            r.get("c").is_none(),
            "no authorization for a server not given"
        );
        let names: Vec<_> = r.iter().map(|o| o.server().to_owned()).collect();
        assert_eq!(names, ["a", "b"], "in name order");
        assert!(!r.is_empty());
        assert!(Registry::default().is_empty());
    }
}
