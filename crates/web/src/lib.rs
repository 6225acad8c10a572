//! The local page (U-1..U-4): `/tools` with passkey step-up, the MCP servers and feeds cards,
//! recent acts, and the JSON API under `/api` that the page itself uses.
//!
//! Hardening (U-3), applied by layers around every route:
//! - on loopback, a connection from another user's process is closed at accept (by the gate,
//!   `gate::serve`);
//! - every route that shows the owner's data (`/tools` beyond the step-up card, `/api/tools`,
//!   `/api/mcp_servers`, `/api/feeds`, `/api/acts_log`) needs a signed-in session: a step-up
//!   (or a passkey enrolled in that session) within `web.session_hours` (401
//!   `sign_in_required`);
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
//!   `step_up_stale`), and so does a server's "Enable all read-only" (one step-up for that
//!   server's read-only rows, never a write tool), and authorizing an MCP server over OAuth
//!   (`/oauth/login`, Connect, Disconnect); the authorization server's redirect back to `/oauth/callback`
//!   carries no session cookie (SameSite=Strict) and is bound by its one-time `state` instead
//!   (see `oauth`).
//!
//! There is deliberately no route that calls a tool. What the page shows and changes it reads
//! and asks through its [`Host`], which the daemon implements over the store (see `host`).

#![warn(clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod api;
mod app;
mod auth;
mod creds;
mod error;
mod flows;
mod gate;
mod host;
mod limits;
mod listen;
mod oauth;
mod once;
mod pages;
mod session;

use crate::error::Code;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use app::{no_session, SessionCookie, CSRF_HEADER};
pub use app::{App, Conn, Web};
/// The body of the page's requests and answers, for a caller that drives [`router`] without a
/// socket.
pub use axum::body::Body;
use error::AppError;
pub use host::{BoxFuture, Host, HostError, PasskeyRecord, Pick};
pub use limits::{Limits, MAX_CONNECTIONS};
pub use listen::{backoff, Page};
pub use pages::{esc, text};
pub use session::{Clock, SystemClock};

/// For the tests of the page's host (the `testing` feature, which only dev-dependencies turn
/// on): what a browser does that a test cannot.
#[cfg(feature = "testing")]
pub mod testing {
    use super::Web;

    /// Marks the session of the cookie value `cookie` as one that enrolled a passkey now, as a
    /// verified enrollment does (no authenticator in a test); false when there is no such
    /// session.
    pub fn enrolled(web: &Web, cookie: &str) -> bool {
        let now = web.clock.now();
        web.sessions
            .with(cookie, now, |s| s.enrolled = Some(now))
            .is_some()
    }
}

/// Largest request body any route reads.
const MAX_BODY: usize = 64 * 1024;
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Every route of the page and its API, inside the hardening layers.
pub fn router(app: App) -> Router {
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
        .route("/oauth/login", get(pages::oauth_login))
        .route("/oauth/callback", get(oauth::callback))
        .route("/api/oauth/login", post(oauth::login))
        .route("/api/mcp_servers/{name}/connect", post(oauth::connect))
        .route(
            "/api/mcp_servers/{name}/disconnect",
            post(oauth::disconnect),
        )
        .route(
            "/api/mcp_servers/{name}/enable_read_only",
            post(api::enable_read_only),
        )
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
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            body_and_deadline,
        ))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            reserved_guard,
        ))
        .layer(axum::middleware::from_fn(security_headers))
        .with_state(app)
}

async fn not_found() -> AppError {
    AppError::new(StatusCode::NOT_FOUND, Code::NotFound, "no such page")
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

/// A connection in one of the slots kept for signed-in sessions is served only for a
/// signed-in session's requests; any other is answered busy and the connection closed.
async fn reserved_guard(State(app): State<App>, req: Request, next: Next) -> Response {
    let reserved = req.extensions().get::<Conn>().is_some_and(|c| c.reserved);
    if reserved && app.web.signed_in(req.headers()).is_err() {
        let mut r = AppError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            Code::Busy,
            limits::BUSY_MESSAGE,
        )
        .into_response();
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("10"));
        return r;
    }
    next.run(req).await
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
                Code::Host,
                "this page answers only to its configured host names (web.hosts)",
            )
            .into_response()
        }
        None => AppError::new(
            StatusCode::MISDIRECTED_REQUEST,
            Code::Host,
            "no Host header",
        )
        .into_response(),
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
                Code::Origin,
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
                Code::Csrf,
                "refused: missing or wrong CSRF token (x-csrf-token)",
            )
            .into_response()
        }
        Some(true) => {}
    }
    req.extensions_mut().insert(SessionCookie(cookie));
    next.run(req).await
}

/// The page for the daemon: bound on `web.listen` (default 127.0.0.1:8765, loopback only),
/// also on embedded defaults with no configuration file: listening on loopback sends nothing
/// anywhere. A port that is taken is logged as an error and bound again with the one backoff
/// while the daemon runs on (see `listen`): the page is one way in among others, and
/// `maven web enroll` says meanwhile that it is not running. [`run`] serves it.
pub async fn start(config: &config::Config, max_connections: usize) -> Arc<Page> {
    Page::start(
        &config.web,
        max_connections,
        Arc::new(SystemClock),
        listen::backoff(),
    )
    .await
}

/// Serves the page until `cancel` fires: at once when its port was bound at start-up, else
/// once the listener's retries bind it (see `listen`); never when they end.
pub async fn run(page: Arc<Page>, host: Arc<dyn Host>, cancel: CancellationToken) {
    if let Some((listener, web)) = page.listener(&cancel).await {
        serve(listener, App::new(web, host), cancel).await;
    }
}

/// Serves the page until `cancel` fires, then lets open requests finish (briefly).
///
/// The accept loop is `gate::serve`: on loopback a connection whose peer is not a process of
/// the owner's uid is closed at accept, before a byte is read and before it takes a slot
/// (counted in `other_uid_refused`, logged by `Refusals`). Each connection is served by hyper
/// with the deadlines of [`Limits`]; beyond [`Limits::max_connections`] a connection is
/// answered 503 at once and closed, never queued; the last [`Limits::reserved`] slots serve
/// only signed-in sessions.
async fn serve(listener: TcpListener, app: App, cancel: CancellationToken) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let limits = app.web.limits.clone();
    let web = app.web.clone();
    let router = router(app);
    // Beyond loopback the peer's uid cannot be known: anyone reaches the sign-in.
    let mut door = ::gate::Gate::open("the page");
    if let Some(owner) = web.uid_check {
        door = door.owner(owner).on_refusal(move |_, why| {
            let seen = match why {
                ::gate::Refusal::NotOwner { uid, .. } => *uid,
                _ => None,
            };
            web.limits.other_uid_refused.fetch_add(1, Ordering::Relaxed);
            web.refusals.refused(seen, owner, web.clock.now());
        });
    }
    let full = limits.clone();
    let slots = ::gate::Slots::new(limits.max_connections)
        .reserved(limits.reserved)
        .when_full(move |stream: tokio::net::TcpStream, _| full.refuse(&stream));
    let served = cancel.clone();
    let handler = move |stream: tokio::net::TcpStream, admitted: ::gate::Admitted| {
        let open = Open::new(&limits);
        let conn_info = Conn {
            uid: admitted.uid,
            reserved: admitted.reserved,
        };
        let inner = hyper_util::service::TowerToHyperService::new(router.clone());
        let svc =
            hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(conn_info);
                hyper::service::Service::call(&inner, req)
            });
        let (cancel, limits) = (served.clone(), limits.clone());
        async move {
            let (_slot, _open) = (admitted.slot, open);
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_deadline)
                .max_buf_size(MAX_HEAD);
            let conn = builder.serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            let lifetime = tokio::time::sleep(limits.connection_lifetime);
            tokio::pin!(lifetime);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(error = %e, "a page connection ended");
                    }
                }
                _ = &mut lifetime => {
                    tracing::debug!("a page connection outlived its lifetime and was closed");
                }
                _ = cancel.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(2), conn.as_mut()).await;
                }
            }
        }
    };
    ::gate::serve(listener, door, slots, handler, cancel).await;
}

/// One open connection in [`Limits::open`], counted until it is dropped (its connection
/// ended, or the gate aborted it after the grace).
struct Open(Arc<limits::Limits>);

impl Open {
    fn new(limits: &Arc<limits::Limits>) -> Open {
        limits.open.fetch_add(1, Ordering::Relaxed);
        Open(limits.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Largest request head (request line and headers) read, in bytes.
const MAX_HEAD: usize = 64 * 1024;

/// Caps every request body at [`MAX_BODY`] (413, also for routes that read no body) and
/// answers every request within [`Limits::request_deadline`] (408).
async fn body_and_deadline(State(app): State<App>, req: Request, next: Next) -> Response {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return AppError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            Code::TooLarge,
            format!("request bodies are limited to {MAX_BODY} bytes"),
        )
        .into_response();
    }
    let req = req.map(|b| axum::body::Body::new(http_body_util::Limited::new(b, MAX_BODY)));
    match tokio::time::timeout(app.web.limits.request_deadline, next.run(req)).await {
        Ok(r) => r,
        Err(_) => AppError::new(
            StatusCode::REQUEST_TIMEOUT,
            Code::Timeout,
            format!(
                "the request was not complete within {} s",
                app.web.limits.request_deadline.as_secs()
            ),
        )
        .into_response(),
    }
}
