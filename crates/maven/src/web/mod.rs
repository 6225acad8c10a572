//! The local page (U-1..U-4): `/tools` with passkey step-up, the MCP servers and feeds cards,
//! recent acts, and the JSON API under `/api` that the page itself uses.
//!
//! Hardening (U-3), applied by layers around every route:
//! - the Host header must name the configured `web.hosts` or the listen address, with the
//!   listen port (DNS-rebinding defence), else 421;
//! - every request other than GET/HEAD needs an allowed `Origin` (403 `origin`), a live
//!   session cookie (401 `no_session`) and the session's CSRF token in `x-csrf-token`
//!   (403 `csrf`);
//! - the session cookie is HttpOnly and SameSite=Strict; every response carries a CSP without
//!   inline script and `frame-ancestors 'none'`, `X-Content-Type-Options: nosniff`,
//!   `Referrer-Policy: no-referrer` and `Cache-Control: no-store`;
//! - enabling or disabling an act needs a step-up (a passkey assertion, or the configured
//!   passphrase) verified within the last five minutes (401 `step_up_required` /
//!   `step_up_stale`).
//!
//! There is deliberately no route that calls a tool.

mod api;
mod auth;
pub(crate) mod cli;
mod creds;
mod diff;
mod pages;
mod session;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use config::{Secret, WebConfig};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use webauthn_rs::{Webauthn, WebauthnBuilder};

use crate::views::{EnrollLink, FeedView, ServerStatusView};
use session::Sessions;
pub(crate) use session::{Clock, SystemClock};

/// Largest request body any route reads.
const MAX_BODY: usize = 64 * 1024;
/// The CSRF header every POST carries.
const CSRF_HEADER: &str = "x-csrf-token";
/// The relying-party id of passkeys: WebAuthn treats `http://localhost` as a secure context.
const RP_ID: &str = "localhost";

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// A boxed future, so [`StatusSource`] can be used as a trait object.
pub(crate) type BoxFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// What the servers and feeds cards show: the one data source of those cards. The daemon
/// implements it from the MCP connection manager and the feed poller; the shapes are those of
/// `maven mcp status --json` and `maven feeds status --json` (I-3).
pub(crate) trait StatusSource: Send + Sync + 'static {
    /// One object per configured MCP server.
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<ServerStatusView>>;
    /// One object per configured feed.
    fn feeds(&self) -> BoxFuture<'_, Vec<FeedView>>;
}

/// The configuration alone: what the cards show before anything connected.
impl StatusSource for config::Config {
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<ServerStatusView>> {
        let v = self
            .mcp_servers
            .values()
            .map(|s| crate::json::server_status(s, None, None, 0, 0))
            .collect();
        Box::pin(std::future::ready(v))
    }
    fn feeds(&self) -> BoxFuture<'_, Vec<FeedView>> {
        let v = self
            .feeds
            .iter()
            .map(crate::json::configured_feed)
            .collect();
        Box::pin(std::future::ready(v))
    }
}

/// A refusal or failure, answered as `{"error": code, "message": text}`.
#[derive(Debug)]
pub(crate) struct AppError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl AppError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        AppError {
            status,
            code,
            message: message.into(),
        }
    }
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        let message = message.into();
        tracing::error!(%message, "web: internal error");
        AppError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
    fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        AppError::new(StatusCode::BAD_REQUEST, code, message)
    }
}

impl From<store::Error> for AppError {
    fn from(e: store::Error) -> Self {
        if e.is_not_found() {
            AppError::new(StatusCode::NOT_FOUND, "not_found", e.to_string())
        } else if e.is_bad_transition() {
            AppError::new(StatusCode::CONFLICT, "bad_transition", e.to_string())
        } else {
            AppError::internal(format!("store: {e}"))
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let mut r = (
            self.status,
            Json(json!({"error": self.code, "message": self.message})),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("StepUp realm=\"maven\""),
            );
        }
        r
    }
}

/// The page's own state: sessions, enrollment links, passkeys, the step-up rules.
pub(crate) struct Web {
    addr: SocketAddr,
    hosts: Vec<String>,
    origins: Vec<String>,
    cookie: String,
    passphrase_hash: Option<Secret>,
    store: store::Store,
    creds: creds::Creds,
    sessions: Sessions,
    webauthn: Webauthn,
    clock: Arc<dyn Clock>,
    /// Consecutive passphrase failures and when the last one happened.
    passphrase_failures: Mutex<(u32, Option<Instant>)>,
}

impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Web").field("addr", &self.addr).finish()
    }
}

/// A name a Host header may carry, normalised: lowercase, one trailing dot removed.
fn normal_host(h: &str) -> String {
    let h = h.strip_suffix('.').unwrap_or(h);
    h.to_ascii_lowercase()
}

impl Web {
    /// The page's state for a server listening on `addr` (the address actually bound).
    pub(crate) fn new(
        cfg: &WebConfig,
        addr: SocketAddr,
        store: store::Store,
        clock: Arc<dyn Clock>,
    ) -> anyhow::Result<Web> {
        let port = addr.port();
        let ip = match addr.ip() {
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
            v4 => v4.to_string(),
        };
        let mut hosts: Vec<String> = cfg.hosts.iter().map(|h| normal_host(h)).collect();
        hosts.push(ip.clone());
        hosts.push(RP_ID.to_owned());
        hosts.sort();
        hosts.dedup();
        let origins = hosts.iter().map(|h| format!("http://{h}:{port}")).collect();
        let rp_origin = url::Url::parse(&format!("http://{RP_ID}:{port}"))
            .context("the page's WebAuthn origin")?;
        let webauthn = WebauthnBuilder::new(RP_ID, &rp_origin)
            .and_then(|b| b.rp_name("Maven").build())
            .map_err(|e| anyhow::anyhow!("cannot set up WebAuthn for {rp_origin}: {e}"))?;
        Ok(Web {
            addr,
            hosts,
            origins,
            cookie: format!("maven_session_{port}"),
            passphrase_hash: cfg.passphrase_hash.clone(),
            creds: creds::Creds::new(store.clone()),
            store,
            sessions: Sessions::default(),
            webauthn,
            clock,
            passphrase_failures: Mutex::new((0, None)),
        })
    }

    /// The page's address as the owner opens it (`localhost`, where passkeys work).
    pub(crate) fn base_url(&self) -> String {
        format!("http://{RP_ID}:{}", self.addr.port())
    }

    /// Makes a one-time enrollment link valid for ten minutes (the `web_enroll` IPC method).
    pub(crate) fn enroll_link(&self) -> Value {
        let token = self.sessions.new_enrollment(self.clock.now());
        let link = EnrollLink {
            url: format!("{}/enroll#{token}", self.base_url()),
            valid_s: session::ENROLL_VALID.as_secs(),
        };
        serde_json::to_value(link).unwrap_or(Value::Null)
    }

    fn host_ok(&self, host: &str) -> bool {
        let (name, port) = if let Some(rest) = host.strip_prefix('[') {
            match rest.split_once(']') {
                Some((inner, tail)) => (format!("[{inner}]"), tail.strip_prefix(':')),
                None => return false,
            }
        } else {
            match host.split_once(':') {
                Some((n, p)) => (n.to_owned(), Some(p)),
                None => (host.to_owned(), None),
            }
        };
        let port_ok = match port {
            Some(p) => p.parse::<u16>().ok() == Some(self.addr.port()),
            None => self.addr.port() == 80,
        };
        port_ok && self.hosts.contains(&normal_host(&name))
    }

    fn origin_ok(&self, origin: &str) -> bool {
        let o = origin.to_ascii_lowercase();
        self.origins.contains(&o)
            || (self.addr.port() == 80 && self.hosts.iter().any(|h| o == format!("http://{h}")))
    }

    /// The session cookie's value in these headers, if any.
    fn cookie_of(&self, headers: &HeaderMap) -> Option<String> {
        let prefix = format!("{}=", self.cookie);
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .map(str::trim)
            .find_map(|c| c.strip_prefix(prefix.as_str()))
            .map(str::to_owned)
    }

    fn set_cookie(&self, value: &str) -> HeaderValue {
        // The value is hex, so the header is always valid ASCII.
        HeaderValue::from_str(&format!(
            "{}={value}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie
        ))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    /// The live session of these headers, or a new one (with the `Set-Cookie` to send).
    fn ensure_session(&self, headers: &HeaderMap) -> (String, Option<HeaderValue>) {
        let now = self.clock.now();
        if let Some(c) = self.cookie_of(headers) {
            if self.sessions.with(&c, now, |_| ()).is_some() {
                return (c, None);
            }
        }
        let c = self.sessions.create(now);
        let set = self.set_cookie(&c);
        (c, Some(set))
    }

    /// The fresh step-up of a session, or the refusal to send.
    fn fresh_step_up(&self, cookie: &str) -> Result<stepup::StepUp, AppError> {
        let now = self.clock.now();
        let step = self
            .sessions
            .with(cookie, now, |s| s.step_up.clone())
            .ok_or_else(no_session)?;
        match step {
            None => Err(AppError::new(
                StatusCode::UNAUTHORIZED,
                "step_up_required",
                "enabling or disabling an act needs a step-up: verify with your passkey (or the configured passphrase)",
            )),
            Some(s) if now.saturating_duration_since(s.at()) > session::STEP_UP_FRESH => {
                Err(AppError::new(
                    StatusCode::UNAUTHORIZED,
                    "step_up_stale",
                    "the last step-up is more than 5 minutes old: verify again",
                ))
            }
            Some(s) => Ok(s),
        }
    }
}

fn no_session() -> AppError {
    AppError::new(
        StatusCode::UNAUTHORIZED,
        "no_session",
        "no session: open the page first (GET /tools or GET /api/session)",
    )
}

/// The session cookie a guarded POST came with (put there by [`post_guard`]).
#[derive(Clone)]
struct SessionCookie(String);

/// The router's shared state.
#[derive(Clone)]
pub(crate) struct App {
    web: Arc<Web>,
    status: Arc<dyn StatusSource>,
}

impl App {
    pub(crate) fn new(web: Arc<Web>, status: Arc<dyn StatusSource>) -> App {
        App { web, status }
    }
}

/// Every route of the page and its API, inside the hardening layers.
pub(crate) fn router(app: App) -> Router {
    Router::new()
        .route("/", get(pages::root))
        .route("/tools", get(pages::tools))
        .route("/enroll", get(pages::enroll))
        .route("/static/page.js", get(pages::script))
        .route("/static/page.css", get(pages::style))
        .route("/api/session", get(api::session))
        .route("/api/tools", get(api::tools))
        .route("/api/mcp_servers", get(api::mcp_servers))
        .route("/api/feeds", get(api::feeds))
        .route("/api/acts_log", get(api::acts_log))
        .route("/api/tools/{name}/enable", post(api::enable))
        .route("/api/tools/{name}/disable", post(api::disable))
        .route("/api/enroll/start", post(auth::enroll_start))
        .route("/api/enroll/finish", post(auth::enroll_finish))
        .route("/api/stepup/passkey/start", post(auth::passkey_start))
        .route("/api/stepup/passkey/finish", post(auth::passkey_finish))
        .route("/api/stepup/passphrase", post(auth::passphrase))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            post_guard,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            host_guard,
        ))
        .layer(axum::middleware::from_fn(security_headers))
        .with_state(app)
}

async fn not_found() -> AppError {
    AppError::new(StatusCode::NOT_FOUND, "not_found", "no such page")
}

async fn security_headers(req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    let h = r.headers_mut();
    let set = |h: &mut HeaderMap, k: HeaderName, v: &'static str| {
        h.insert(k, HeaderValue::from_static(v));
    };
    set(h, header::CONTENT_SECURITY_POLICY, CSP);
    set(h, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(h, header::REFERRER_POLICY, "no-referrer");
    set(h, header::X_FRAME_OPTIONS, "DENY");
    set(h, header::CACHE_CONTROL, "no-store");
    set(
        h,
        HeaderName::from_static("cross-origin-opener-policy"),
        "same-origin",
    );
    set(
        h,
        HeaderName::from_static("cross-origin-resource-policy"),
        "same-origin",
    );
    r
}

async fn host_guard(State(app): State<App>, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.as_str().to_owned()));
    match host {
        Some(h) if app.web.host_ok(&h) => next.run(req).await,
        Some(h) => {
            tracing::warn!(host = %h.chars().take(100).collect::<String>(), "web: request for a host the page does not serve refused");
            AppError::new(
                StatusCode::MISDIRECTED_REQUEST,
                "host",
                "this page answers only to its configured host names (web.hosts)",
            )
            .into_response()
        }
        None => {
            AppError::new(StatusCode::MISDIRECTED_REQUEST, "host", "no Host header").into_response()
        }
    }
}

async fn post_guard(State(app): State<App>, mut req: Request, next: Next) -> Response {
    if req.method() == Method::GET || req.method() == Method::HEAD {
        return next.run(req).await;
    }
    let web = &app.web;
    let headers = req.headers();
    let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
    match origin {
        Some(o) if web.origin_ok(o) => {}
        _ => {
            return AppError::new(
                StatusCode::FORBIDDEN,
                "origin",
                "refused: the request's Origin is not this page",
            )
            .into_response()
        }
    }
    let Some(cookie) = web.cookie_of(headers) else {
        return no_session().into_response();
    };
    let sent = headers
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let ok = web.sessions.with(&cookie, web.clock.now(), |s| {
        session::same_secret(&s.csrf, &sent)
    });
    match ok {
        None => return no_session().into_response(),
        Some(false) => {
            return AppError::new(
                StatusCode::FORBIDDEN,
                "csrf",
                "refused: missing or wrong CSRF token (x-csrf-token)",
            )
            .into_response()
        }
        Some(true) => {}
    }
    req.extensions_mut().insert(SessionCookie(cookie));
    next.run(req).await
}

/// Binds the page and builds its state, for the daemon.
///
/// The page listens on `web.listen` (default 127.0.0.1:8765, loopback only), also on embedded
/// defaults with no configuration file: listening on loopback sends nothing anywhere.
/// A page that cannot start (the port is taken) is logged as an error and the daemon runs on
/// without it: the page is one way in among others, and `maven web enroll` then says so.
pub(crate) async fn start(
    config: &config::Config,
    store: &store::Store,
) -> Option<(Arc<Web>, TcpListener)> {
    let (listener, addr) = match bind(&config.web).await {
        Ok(b) => b,
        Err(e) => {
            tracing::error!("{e:#}; the daemon runs without the page (is another program on that port? set web.listen)");
            return None;
        }
    };
    match Web::new(&config.web, addr, store.clone(), Arc::new(SystemClock)) {
        Ok(w) => {
            tracing::info!(url = %format!("{}/tools", w.base_url()), "the page is listening");
            Some((Arc::new(w), listener))
        }
        Err(e) => {
            tracing::error!("{e:#}; the daemon runs without the page");
            None
        }
    }
}

/// Binds the page's listener on `web.listen`; returns it with the address actually bound.
pub(crate) async fn bind(cfg: &WebConfig) -> anyhow::Result<(TcpListener, SocketAddr)> {
    let l = TcpListener::bind(cfg.listen)
        .await
        .with_context(|| format!("cannot listen on {} (web.listen)", cfg.listen))?;
    let addr = l.local_addr().context("the page's listening address")?;
    if !addr.ip().is_loopback() {
        tracing::warn!(%addr, "the page listens beyond loopback (web.listen); it is plain HTTP");
    }
    Ok((l, addr))
}

/// Serves the page until `cancel` fires, then lets open requests finish.
pub(crate) async fn serve(listener: TcpListener, app: App, cancel: CancellationToken) {
    let router = router(app);
    let r = axum::serve(listener, router)
        .with_graceful_shutdown(cancel.cancelled_owned())
        .await;
    if let Err(e) = r {
        tracing::error!(error = %e, "the page's server stopped");
    }
}

#[cfg(test)]
mod tests;
