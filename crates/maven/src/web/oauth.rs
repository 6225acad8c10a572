//! The owner's path through OAuth on the page: a one-time login link (`maven mcp login NAME`)
//! or the MCP servers card's Connect button, a fresh step-up, the redirect to the
//! authorization server, and the callback the authorization server sends the browser back to.
//!
//! The callback (`GET /oauth/callback`) comes from the authorization server's cross-site
//! redirect, which does not carry the SameSite=Strict session cookie. What binds it to the
//! owner's step-up is the one-time `state`: an authorization begun behind a fresh step-up is
//! kept here under it (ten minutes, used once, whatever the outcome), and `OAuth::complete`
//! checks `state` and `iss` again before the code is redeemed. No token reaches the page.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::app::{App, SessionCookie};
use super::error::AppError;
use super::pages::text;
use super::session;

/// How long a login link, and an authorization waiting for its callback, are valid.
pub(crate) const VALID: Duration = Duration::from_secs(10 * 60);
/// Login links outstanding at once; the oldest is voided beyond this.
const MAX_LINKS: usize = 8;
/// Authorizations waiting for their callback at once; the oldest is voided beyond this.
const MAX_PENDING: usize = 16;
/// Largest callback query read.
pub(crate) const MAX_QUERY: usize = 8 * 1024;

struct Waiting {
    server: String,
    pending: mcp::oauth::Pending,
    until: Instant,
}

#[derive(Default)]
struct Inner {
    /// Hash of a login link's token → (server, when it expires).
    links: HashMap<String, (String, Instant)>,
    /// Hash of an authorization's `state` → what completes it.
    waiting: HashMap<String, Waiting>,
}

/// Login links and the authorizations waiting for their callback, in memory only: a restart
/// voids them (the owner starts again).
#[derive(Default)]
pub(crate) struct Flows {
    inner: Mutex<Inner>,
}

/// Why a callback found nothing to complete.
enum Lookup {
    Unknown,
    Expired(String),
}

impl Flows {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every operation is a single insert or remove: a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new one-time login link's token for `server`; only its hash is kept.
    pub(crate) fn new_link(&self, server: &str, now: Instant) -> String {
        let token = session::token();
        let mut g = self.lock();
        g.links.retain(|_, (_, until)| *until > now);
        while g.links.len() >= MAX_LINKS {
            let oldest = g
                .links
                .iter()
                .min_by_key(|(_, (_, until))| *until)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => g.links.remove(&k),
                None => break,
            };
        }
        g.links
            .insert(session::hash(&token), (server.to_owned(), now + VALID));
        token
    }

    /// Uses up a login link: its server, or why not.
    fn take_link(&self, token: &str, now: Instant) -> Result<String, AppError> {
        let taken = self.lock().links.remove(&session::hash(token.trim()));
        match taken {
            Some((server, until)) if until > now => Ok(server),
            Some(_) => Err(AppError::new(
                StatusCode::FORBIDDEN,
                "oauth_link",
                "this authorization link expired (it is valid 10 minutes): run `maven mcp login NAME` for a new one",
            )),
            None => Err(AppError::new(
                StatusCode::FORBIDDEN,
                "oauth_link",
                "this authorization link is unknown or was used (it works once): run `maven mcp login NAME` for a new one",
            )),
        }
    }

    fn wait(&self, server: &str, pending: mcp::oauth::Pending, now: Instant) {
        let mut g = self.lock();
        g.waiting.retain(|_, w| w.until > now);
        while g.waiting.len() >= MAX_PENDING {
            let oldest = g
                .waiting
                .iter()
                .min_by_key(|(_, w)| w.until)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => g.waiting.remove(&k),
                None => break,
            };
        }
        g.waiting.insert(
            session::hash(pending.state()),
            Waiting {
                server: server.to_owned(),
                pending,
                until: now + VALID,
            },
        );
    }

    /// Takes the authorization this `state` belongs to (used once, whatever the outcome).
    fn take(&self, state: &str, now: Instant) -> Result<Waiting, Lookup> {
        match self.lock().waiting.remove(&session::hash(state)) {
            Some(w) if w.until > now => Ok(w),
            Some(w) => Err(Lookup::Expired(w.server)),
            None => Err(Lookup::Unknown),
        }
    }
}

/// The session's fresh step-up, with a refusal that says what it is for.
fn stepped_up(app: &App, cookie: &str) -> Result<(), AppError> {
    app.web.fresh_step_up(cookie).map(|_| ()).map_err(|mut e| {
        if e.code == "step_up_required" {
            e.message = "authorizing an MCP server needs a step-up: verify with your passkey (or the configured passphrase)".to_owned();
        }
        e
    })
}

fn no_server(name: &str) -> AppError {
    AppError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!(
            "no enabled HTTP server named {:?} is configured",
            shown::capped(name, 100)
        ),
    )
}

/// Begins the authorization of `server` (discovery, registration) and keeps it under its
/// `state`; answers the URL the browser is sent to.
async fn begin(app: &App, server: &str) -> Result<Json<Value>, AppError> {
    let oauth = app.status.oauth(server).ok_or_else(|| no_server(server))?;
    let challenge = oauth.last_challenge().await.unwrap_or_default();
    let pending = oauth.begin(&challenge).await.map_err(|e| {
        AppError::new(
            StatusCode::BAD_GATEWAY,
            "oauth",
            format!(
                "{}: the authorization could not start: {e}",
                shown::line(server)
            ),
        )
    })?;
    let url = pending.url.clone();
    let issuer = pending.issuer().to_owned();
    app.web.oauth.wait(server, pending, app.web.clock.now());
    tracing::info!(server = %server, issuer = %issuer, "OAuth authorization begun on the page");
    Ok(Json(
        json!({"server": server, "issuer": issuer, "redirect": url}),
    ))
}

#[derive(Deserialize)]
pub(super) struct LoginReq {
    token: String,
}

/// `POST /api/oauth/login {"token"}`: the login link's step. A fresh step-up first (the link is
/// not used up without one), then the link is used up and the authorization begun.
pub(super) async fn login(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
    Json(req): Json<LoginReq>,
) -> Result<Json<Value>, AppError> {
    stepped_up(&app, &c.0)?;
    let server = app.web.oauth.take_link(&req.token, app.web.clock.now())?;
    begin(&app, &server).await
}

/// `POST /api/mcp_servers/{name}/connect`: the card's Connect, the same flow as a login link.
pub(super) async fn connect(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
    Path(name): Path<String>,
) -> Result<Json<Value>, AppError> {
    stepped_up(&app, &c.0)?;
    begin(&app, &name).await
}

/// `POST /api/mcp_servers/{name}/disconnect`: forgets the server's tokens (revoked first where
/// the authorization server offers it) and dials it again, so it shows "needs authorization".
pub(super) async fn disconnect(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
    Path(name): Path<String>,
) -> Result<Json<Value>, AppError> {
    stepped_up(&app, &c.0)?;
    let oauth = app.status.oauth(&name).ok_or_else(|| no_server(&name))?;
    oauth.logout().await.map_err(|e| {
        AppError::new(
            StatusCode::BAD_GATEWAY,
            "oauth",
            format!("{}: {e}", shown::line(&name)),
        )
    })?;
    app.status.redial(&name);
    tracing::info!(server = %name, "OAuth credentials forgotten on the page");
    Ok(Json(json!({"server": name, "forgotten": true})))
}

/// The callback's answer: a small page, never a token.
fn answer(port: u16, status: StatusCode, code: &str, title: &str, message: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Maven — {t}</title><link rel=\"stylesheet\" href=\"/static/page.css\"></head>\
         <body><main><section class=\"card\" id=\"oauth-result\" data-result=\"{c}\">\
         <h2>{t}</h2><p id=\"oauth-message\">{m}</p>\
         <p><a href=\"http://localhost:{port}/tools\">Back to Tools</a></p></section></main></body></html>",
        t = text(title),
        c = text(code),
        m = text(message),
    );
    (status, Html(html)).into_response()
}

fn refused(port: u16, code: &str, message: &str) -> Response {
    tracing::warn!(%code, %message, "OAuth callback refused");
    answer(
        port,
        StatusCode::BAD_REQUEST,
        code,
        "Not authorized",
        message,
    )
}

/// `GET /oauth/callback?…`: where the authorization server sends the owner back. Bounded
/// (the query at most [`MAX_QUERY`] bytes), bound to its authorization by `state`; `state` and
/// `iss` are checked by `OAuth::complete`, then the code is redeemed, the tokens kept and the
/// server dialled again.
pub(super) async fn callback(State(app): State<App>, RawQuery(query): RawQuery) -> Response {
    let port = app.web.addr.port();
    let query = query.unwrap_or_default();
    if query.len() > MAX_QUERY {
        return refused(
            port,
            "oauth_callback",
            &format!("the callback's query is longer than {MAX_QUERY} bytes"),
        );
    }
    let Some(state) = url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
    else {
        return refused(
            port,
            "oauth_state",
            "the callback carries no state: it belongs to no authorization begun here",
        );
    };
    let w = match app.web.oauth.take(&state, app.web.clock.now()) {
        Ok(w) => w,
        Err(Lookup::Unknown) => {
            return refused(
                port,
                "oauth_state",
                "the callback's state is unknown or was used: it belongs to no authorization waiting here (start again with Connect or `maven mcp login NAME`)",
            )
        }
        Err(Lookup::Expired(server)) => {
            return refused(
                port,
                "oauth_expired",
                &format!(
                    "{server}: this authorization expired (10 minutes): start again with Connect or `maven mcp login {server}`"
                ),
            )
        }
    };
    let Some(oauth) = app.status.oauth(&w.server) else {
        return refused(
            port,
            "oauth",
            &format!("{}: not configured any more", w.server),
        );
    };
    let url = format!("{}?{query}", app.web.callback_url());
    if let Err(e) = oauth.complete(w.pending, &url).await {
        let code = match &e {
            mcp::oauth::AuthError::StateMismatch => "oauth_state",
            mcp::oauth::AuthError::IssMismatch { .. } => "oauth_iss",
            mcp::oauth::AuthError::Declined { .. } => "oauth_declined",
            _ => "oauth",
        };
        return refused(port, code, &format!("{}: {e}", w.server));
    }
    app.status.redial(&w.server);
    let issuer = match oauth.status().await {
        mcp::oauth::AuthStatus::Authorized { issuer, .. } => issuer,
        mcp::oauth::AuthStatus::NeedsAuthorization => String::new(),
    };
    tracing::info!(server = %w.server, %issuer, "OAuth authorization completed on the page");
    answer(
        port,
        StatusCode::OK,
        "authorized",
        "Authorized",
        &format!("{}: authorized by {issuer}", w.server),
    )
}
