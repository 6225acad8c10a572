//! The owner's path through OAuth on the page: a one-time login link (`maven mcp login NAME`)
//! or the MCP servers card's Connect button, a fresh step-up, the redirect to the
//! authorization server, and the callback the authorization server sends the browser back to.
//!
//! The callback (`GET /oauth/callback`) comes from the authorization server's cross-site
//! redirect, which does not carry the SameSite=Strict session cookie. What binds it to the
//! owner's step-up is the one-time `state`: an authorization begun behind a fresh step-up is
//! kept here under it (ten minutes, used once, whatever the outcome), and `OAuth::complete`
//! checks `state` and `iss` again before the code is redeemed. No token reaches the page.

use crate::error::Code;
use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use wire::views::AuthorizeReply;

use super::app::{no_session, App, SessionCookie};
use super::error::AppError;
use super::flows::{Lookup, MAX_QUERY};
use super::pages::text;

/// The session's step-up of the last five minutes (`session::STEP_UP_FRESH`), as an extractor:
/// a handler that takes one runs only behind a fresh step-up, and the step that changes an
/// authorization ([`begin`], [`forget`]) takes it by value, so the gate is held by a type, as
/// `store::Store::owner_sets_tool_state` holds it with its `stepup::StepUp`.
#[must_use = "the step-up gates a change: hand it to the step that makes it"]
pub(super) struct FreshStepUp(stepup::StepUp);

impl FromRequestParts<App> for FreshStepUp {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, AppError> {
        let cookie = parts
            .extensions
            .get::<SessionCookie>()
            .ok_or_else(no_session)?;
        app.web
            .fresh_step_up(&cookie.0)
            .map(FreshStepUp)
            .map_err(|mut e| {
                if e.code == Code::StepUpRequired {
                    e.message = "authorizing an MCP server needs a step-up: verify with your passkey (or the configured passphrase)".to_owned();
                }
                e
            })
    }
}

fn no_server(name: &str) -> AppError {
    AppError::new(
        StatusCode::NOT_FOUND,
        Code::NotFound,
        format!(
            "no enabled HTTP server named {:?} is configured",
            shown::capped(name, 100)
        ),
    )
}

/// Begins the authorization of `server` (discovery, registration) behind the session's fresh
/// step-up, and keeps it under its `state`; answers the URL the browser is sent to.
async fn begin(
    app: &App,
    server: &str,
    step: FreshStepUp,
) -> Result<Json<AuthorizeReply>, AppError> {
    let FreshStepUp(owner) = step;
    let oauth = app
        .host
        .authorization(server)
        .ok_or_else(|| no_server(server))?;
    let challenge = oauth.last_challenge().await.unwrap_or_default();
    let pending = oauth.begin(&challenge).await.map_err(|e| {
        AppError::new(
            StatusCode::BAD_GATEWAY,
            Code::Oauth,
            format!(
                "{}: the authorization could not start: {e}",
                shown::line(server)
            ),
        )
    })?;
    let url = pending.url.clone();
    let issuer = pending.issuer().to_owned();
    app.web
        .oauth
        .wait(server, pending, &owner, app.web.clock.now());
    tracing::info!(server = %server, issuer = %issuer, by = %owner.actor(), "OAuth authorization begun on the page");
    Ok(Json(AuthorizeReply {
        server: server.to_owned(),
        issuer,
        redirect: url,
    }))
}

#[derive(Deserialize)]
pub(super) struct LoginReq {
    token: String,
}

/// `POST /api/oauth/login {"token"}`: the login link's step. A fresh step-up first (the link is
/// not used up without one), then the link is used up and the authorization begun.
pub(super) async fn login(
    State(app): State<App>,
    step: FreshStepUp,
    Json(req): Json<LoginReq>,
) -> Result<Json<AuthorizeReply>, AppError> {
    let server = app.web.oauth.take_link(&req.token, app.web.clock.now())?;
    begin(&app, &server, step).await
}

/// `POST /api/mcp_servers/{name}/connect`: the card's Connect, the same flow as a login link.
pub(super) async fn connect(
    State(app): State<App>,
    step: FreshStepUp,
    Path(name): Path<String>,
) -> Result<Json<AuthorizeReply>, AppError> {
    begin(&app, &name, step).await
}

/// `POST /api/mcp_servers/{name}/disconnect`: forgets the server's tokens (revoked first where
/// the authorization server offers it) and dials it again, so it shows "needs authorization".
pub(super) async fn disconnect(
    State(app): State<App>,
    step: FreshStepUp,
    Path(name): Path<String>,
) -> Result<Json<wire::views::ForgottenView>, AppError> {
    let by = forget(&app, &name, step).await?;
    tracing::info!(server = %name, by = %by, "OAuth credentials forgotten on the page");
    Ok(Json(wire::views::ForgottenView {
        server: name,
        forgotten: true,
    }))
}

/// Forgets the tokens of `server` behind the session's fresh step-up, and dials it again;
/// answers whose step-up it was (the audit trail's actor).
async fn forget(app: &App, name: &str, step: FreshStepUp) -> Result<String, AppError> {
    let FreshStepUp(owner) = step;
    let oauth = app
        .host
        .authorization(name)
        .ok_or_else(|| no_server(name))?;
    oauth.logout().await.map_err(|e| {
        AppError::new(
            StatusCode::BAD_GATEWAY,
            Code::Oauth,
            format!("{}: {e}", shown::line(name)),
        )
    })?;
    app.host.redial(name);
    Ok(owner.actor())
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
    let Some(oauth) = app.host.authorization(&w.server) else {
        return refused(
            port,
            "oauth",
            &format!("{}: not configured any more", w.server),
        );
    };
    let url = format!("{}?{query}", app.web.callback_url());
    if let Err(e) = oauth.complete(w.pending, &url).await {
        let code = match &e {
            ::oauth::AuthError::StateMismatch => "oauth_state",
            ::oauth::AuthError::IssMismatch { .. } => "oauth_iss",
            ::oauth::AuthError::Declined { .. } => "oauth_declined",
            _ => "oauth",
        };
        return refused(port, code, &format!("{}: {e}", w.server));
    }
    app.host.redial(&w.server);
    let issuer = match oauth.status().await {
        ::oauth::AuthStatus::Authorized { issuer, .. } => issuer,
        ::oauth::AuthStatus::NeedsAuthorization => String::new(),
    };
    tracing::info!(server = %w.server, %issuer, by = %w.by, "OAuth authorization completed on the page");
    answer(
        port,
        StatusCode::OK,
        "authorized",
        "Authorized",
        &format!("{}: authorized by {issuer}", w.server),
    )
}
