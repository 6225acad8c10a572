//! The JSON API under `/api`: what the page reads, and the two state changes it may make.

use crate::error::Code;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};

use super::app::{no_session, peer_of, App, Conn, SessionCookie};
use super::error::AppError;
use super::{creds, session};
use wire::views::{
    ActState, ActView, FeedView, FreshStepUpView, LeftView, PageAction, PageTool, PageToolView,
    ReadOnlyEnabledView, ServerStatusView, SessionView,
};

/// The kind of an MCP server's row ([`PageTool::kind`]).
pub(super) const MCP: &str = "mcp";
/// How many history entries each act shows.
pub(super) const HISTORY: u32 = 20;
/// How many executed acts the page shows.
pub(super) const ACTS_LOG: u32 = 30;

/// What the session may do now; shared by `/api/session` and the page.
pub(super) async fn session_view(app: &App, cookie: &str) -> Result<SessionView, AppError> {
    let web = &app.web;
    let now = web.clock.now();
    let (csrf, step) = web
        .sessions
        .with(cookie, now, |s| (s.csrf.clone(), s.step_up.clone()))
        .ok_or_else(no_session)?;
    let step = step.and_then(|s| {
        let age = now.saturating_duration_since(s.at());
        session::STEP_UP_FRESH
            .checked_sub(age)
            .filter(|left| !left.is_zero())
            .map(|left| FreshStepUpView {
                method: s.method().to_owned(),
                fresh_for_s: left.as_secs(),
            })
    });
    Ok(SessionView {
        csrf_token: csrf,
        signed_in_for_s: web.signed_in_for(cookie).map(|d| d.as_secs()),
        step_up: step,
        passkeys: creds::count(&*app.host).await?,
        passphrase: web.passphrase_hash.is_some(),
    })
}

/// `GET /api/session`: the CSRF token to send back, how long the session stays signed in, the
/// step-up state, what step-ups exist. Creates the session (and sets its cookie) when the
/// request has none.
pub(super) async fn session(
    State(app): State<App>,
    conn: Option<Extension<Conn>>,
    headers: HeaderMap,
) -> Response {
    let (cookie, set) = match app.web.ensure_session(&headers, peer_of(conn)) {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    match session_view(&app, &cookie).await {
        Ok(v) => {
            let mut r = Json(v).into_response();
            if let Some(set) = set {
                r.headers_mut().insert(header::SET_COOKIE, set);
            }
            r
        }
        Err(e) => e.into_response(),
    }
}

/// Which buttons a row gets: only transitions the owner makes, and never "run". A proposed
/// row waits for a yes: it gets Enable alone (left alone, it stays off).
pub(super) fn actions(state: ActState) -> &'static [PageAction] {
    match state {
        ActState::Proposed => &[PageAction::Enable],
        ActState::Enabled => &[PageAction::Disable],
        ActState::Disabled => &[PageAction::Enable],
        ActState::Withdrawn => &[],
    }
}

/// One act as the API shows it: its row (the description capped by the host), what changed,
/// its history, its buttons.
pub(super) fn tool_view(t: &PageTool) -> PageToolView {
    PageToolView {
        row: t.row.clone(),
        kind: t.kind,
        changed: t.changed.clone(),
        history: t.history.clone(),
        actions: actions(t.state),
    }
}

/// `GET /api/tools` (signed in).
pub(super) async fn tools(
    State(app): State<App>,
    headers: HeaderMap,
) -> Result<Json<Vec<PageToolView>>, AppError> {
    app.web.signed_in(&headers)?;
    let rows = app.host.tools(HISTORY).await?;
    Ok(Json(rows.iter().map(tool_view).collect()))
}

/// `GET /api/mcp_servers` (signed in): the shape of `maven mcp status --json`.
pub(super) async fn mcp_servers(
    State(app): State<App>,
    headers: HeaderMap,
) -> Result<Json<Vec<ServerStatusView>>, AppError> {
    app.web.signed_in(&headers)?;
    Ok(Json(app.host.mcp_servers().await))
}

/// `GET /api/feeds` (signed in): the shape of `maven feeds status --json`.
pub(super) async fn feeds(
    State(app): State<App>,
    headers: HeaderMap,
) -> Result<Json<Vec<FeedView>>, AppError> {
    app.web.signed_in(&headers)?;
    Ok(Json(app.host.feeds().await))
}

/// `GET /api/acts_log` (signed in): the most recent executed acts.
pub(super) async fn acts_log(
    State(app): State<App>,
    headers: HeaderMap,
) -> Result<Json<Vec<ActView>>, AppError> {
    app.web.signed_in(&headers)?;
    Ok(Json(app.host.acts_log(ACTS_LOG).await?))
}

/// `POST /api/tools/{name}/enable`.
pub(super) async fn enable(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
    Path(name): Path<String>,
) -> Result<Json<PageToolView>, AppError> {
    change(&app, &c.0, &name, ActState::Enabled).await
}

/// `POST /api/tools/{name}/disable`.
pub(super) async fn disable(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
    Path(name): Path<String>,
) -> Result<Json<PageToolView>, AppError> {
    change(&app, &c.0, &name, ActState::Disabled).await
}

/// The one path by which a row becomes enabled (or is disabled by the owner): a fresh step-up,
/// then the state change and its audit event naming the step-up, in one store transaction.
async fn change(
    app: &App,
    cookie: &str,
    name: &str,
    to: ActState,
) -> Result<Json<PageToolView>, AppError> {
    let step = app.web.fresh_step_up(cookie)?;
    let not_found = || {
        AppError::new(
            StatusCode::NOT_FOUND,
            Code::NotFound,
            format!("no act named {name:?}"),
        )
    };
    let row = app.host.tool(name, HISTORY).await?.ok_or_else(not_found)?;
    if row.state == to {
        return Err(AppError::new(
            StatusCode::CONFLICT,
            Code::Unchanged,
            format!("{name} is already {to}"),
        ));
    }
    if !row.can_become.contains(&to) {
        return Err(AppError::new(
            StatusCode::CONFLICT,
            Code::BadTransition,
            format!("{name} is {} and cannot become {to} here", row.state),
        ));
    }
    if to == ActState::Enabled && row.kind == MCP {
        if let Some(why) = app.host.unstable(&row.server) {
            return Err(AppError::new(
                StatusCode::CONFLICT,
                Code::Unstable,
                format!(
                    "{name} stays proposed while its server {:?} is {why}",
                    row.server
                ),
            ));
        }
    }
    let actor = step.actor();
    let reason = if to == ActState::Enabled && !row.changed.is_empty() {
        "enabled on the page after reviewing the changed shape".to_owned()
    } else {
        format!("{to} on the page")
    };
    let row = app
        .host
        .owner_sets_tool_state(name, to, &step, &reason, HISTORY)
        .await?;
    tracing::info!(act = %name, state = %to, %actor, "act state changed on the page");
    Ok(Json(tool_view(&row)))
}

/// What a server's "Enable all read-only" makes of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bulk {
    /// Not one of that server's rows waiting for the owner (another server's, a local act, an
    /// enabled or a withdrawn row): none of its business.
    Other,
    /// It enables this one.
    Enables,
    /// It leaves this one to the owner, for this reason.
    Leaves(&'static str),
}

/// What "Enable all read-only" of `server` makes of `r`: it enables an MCP row of that
/// server, proposed or disabled, read-only by the allowlist's own verdict (the row's
/// `destructive`, raised by any listing that stopped claiming read-only and never lowered),
/// whose shape did not change since the owner approved it (a changed one is reviewed on its
/// own).
pub(super) fn bulk_verdict(r: &PageTool, server: &str) -> Bulk {
    if r.kind != MCP || r.server != server || !r.can_become.contains(&ActState::Enabled) {
        Bulk::Other
    } else if r.row.destructive {
        Bulk::Leaves("may write: enable it on its own")
    } else if !r.changed.is_empty() {
        Bulk::Leaves("changed since you approved it: review it on its own")
    } else {
        Bulk::Enables
    }
}

/// `POST /api/mcp_servers/{name}/enable_read_only`: behind one fresh step-up, enables exactly
/// the server's proposed and disabled rows that are read-only (see [`bulk_verdict`]), chosen and changed in one store transaction so that a listing
/// meanwhile cannot slip a write tool in; never a write tool, never a withdrawn row.
pub(super) async fn enable_read_only(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
    Path(server): Path<String>,
) -> Result<Json<ReadOnlyEnabledView>, AppError> {
    let step = app.web.fresh_step_up(&c.0)?;
    let rows = app.host.tools(0).await?;
    if !rows.iter().any(|r| r.kind == MCP && r.server == server) {
        return Err(AppError::new(
            StatusCode::NOT_FOUND,
            Code::NotFound,
            format!("no act of an MCP server named {server:?}"),
        ));
    }
    if let Some(why) = app.host.unstable(&server) {
        return Err(AppError::new(
            StatusCode::CONFLICT,
            Code::Unstable,
            format!("the tools of {server:?} stay proposed while it is {why}"),
        ));
    }
    let actor = step.actor();
    let picked = server.clone();
    let enabled = app
        .host
        .owner_enables_where(
            &step,
            "enabled on the page with the server's other read-only tools",
            Box::new(move |r| bulk_verdict(r, &picked) == Bulk::Enables),
        )
        .await?;
    tracing::info!(%server, acts = enabled.len(), %actor, "read-only acts enabled on the page");
    let left = app
        .host
        .tools(0)
        .await?
        .iter()
        .filter_map(|r| {
            let why = match bulk_verdict(r, &server) {
                Bulk::Other => return None,
                Bulk::Leaves(why) => why,
                // Offered again or changed after the transaction: not enabled by this one.
                Bulk::Enables => "changed meanwhile: look again",
            };
            Some(LeftView {
                name: r.row.name.clone(),
                why,
            })
        })
        .collect();
    Ok(Json(ReadOnlyEnabledView {
        server,
        enabled,
        left,
    }))
}

/// The name a passkey goes by in the audit trail.
pub(super) fn passkey_method(id: &str) -> String {
    format!("passkey {}", creds::short_id(id))
}
