//! The page's host: the daemon's side of `web::Host`, over the real store. The page holds no
//! store; through [`PageHost`] it reads the acts with their history and the acts log as
//! `wire`'s views (the description capped by `allowlist::DESCRIPTION_CAP` here), keeps the
//! passkeys, makes the owner's changes behind the `stepup::StepUp` its `auth` made
//! (`Store::owner_sets_tool_state`, `Store::owner_enables_where`), reaches the servers' OAuth
//! ([`Authorizations`]) and a turn. The cards come from a [`StatusSource`]: the running daemon,
//! or the configuration alone.

mod diff;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde_json::Value;
use store::{ToolRow, ToolState};
use web::{BoxFuture, Host, HostError, PasskeyRecord, Pick};
use wire::views::{
    ActState, ActView, FeedView, PageTool, ServerStatusView, ShapeChangeView, ToolEventView,
};

use crate::json;

/// What the servers and feeds cards show: the one data source of those cards. The daemon
/// implements it from the MCP connection manager and the feed poller; the shapes are those of
/// `maven mcp status --json` and `maven feeds status --json` (I-3).
pub(crate) trait StatusSource: Send + Sync + 'static {
    /// One object per configured MCP server.
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<ServerStatusView>>;
    /// One object per configured feed.
    fn feeds(&self) -> BoxFuture<'_, Vec<FeedView>>;
    /// Why this MCP server is unstable (its tools change too often), while it is: its rows
    /// are not enabled then.
    fn unstable(&self, _server: &str) -> Option<String> {
        None
    }
    /// The server's question the owner's next turn answers, while one stands.
    fn question(&self) -> Option<turns::Question> {
        None
    }
}

/// The configuration alone: what the cards show before anything connected.
impl StatusSource for config::Config {
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<ServerStatusView>> {
        let v = self
            .mcp_servers
            .values()
            .map(|s| json::server_status(s, None, None, 0, 0))
            .collect();
        Box::pin(std::future::ready(v))
    }
    fn feeds(&self) -> BoxFuture<'_, Vec<FeedView>> {
        let v = self.feeds.iter().map(json::configured_feed).collect();
        Box::pin(std::future::ready(v))
    }
}

/// The page's hold on the servers' OAuth: the daemon's one registry of authorizations (the
/// same the connection manager borrows) and its own handle to dial a server again once its
/// authorization changed. Separate from [`StatusSource`], which only reads.
#[derive(Clone)]
pub(crate) struct Authorizations {
    registry: Arc<::oauth::Registry>,
    redial: Arc<dyn Fn(&str) + Send + Sync>,
}

impl Authorizations {
    /// The page's hold on `registry`; `redial` dials a server again.
    pub(crate) fn new(
        registry: Arc<::oauth::Registry>,
        redial: Arc<dyn Fn(&str) + Send + Sync>,
    ) -> Authorizations {
        Authorizations { registry, redial }
    }

    /// No server has an authorization.
    #[cfg(test)]
    pub(crate) fn none() -> Authorizations {
        Authorizations::new(Arc::default(), Arc::new(|_: &str| {}))
    }
}

/// The daemon as the page's host.
pub(crate) struct PageHost {
    store: store::Store,
    status: Arc<dyn StatusSource>,
    oauth: Authorizations,
    /// The turn pipeline; `None` where none runs (the cards before a daemon, the tests).
    turns: Option<Arc<turns::Turns>>,
}

impl PageHost {
    /// The host over `store`, the cards from `status`.
    pub(crate) fn new(
        store: store::Store,
        status: Arc<dyn StatusSource>,
        oauth: Authorizations,
        turns: Option<Arc<turns::Turns>>,
    ) -> PageHost {
        PageHost {
            store,
            status,
            oauth,
            turns,
        }
    }

    async fn with_history(&self, r: ToolRow, history: u32) -> Result<PageTool, HostError> {
        let h = match history {
            0 => Vec::new(),
            n => self
                .store
                .tool_events(Some(&r.name), n)
                .await
                .map_err(host_error)?,
        };
        Ok(page_tool(&r, &h))
    }
}

/// A store error as the page answers it: a missing row (404), a transition the row cannot make
/// (409), anything else (500).
fn host_error(e: store::Error) -> HostError {
    if e.is_not_found() {
        HostError::NotFound(e.to_string())
    } else if e.is_bad_transition() {
        HostError::BadTransition(e.to_string())
    } else {
        HostError::Failed(format!("store: {e}"))
    }
}

/// A row's state as the page decides on it.
fn act_state(s: ToolState) -> ActState {
    match s {
        ToolState::Proposed => ActState::Proposed,
        ToolState::Enabled => ActState::Enabled,
        ToolState::Disabled => ActState::Disabled,
        ToolState::Withdrawn => ActState::Withdrawn,
    }
}

/// The store's state of a page's state.
fn tool_state(s: ActState) -> ToolState {
    match s {
        ActState::Proposed => ToolState::Proposed,
        ActState::Enabled => ToolState::Enabled,
        ActState::Disabled => ToolState::Disabled,
        ActState::Withdrawn => ToolState::Withdrawn,
    }
}

/// Whether `n` is a name a row can have (anything else is no row).
fn valid_name(n: &str) -> bool {
    allowlist::catalogue::valid_row_name(n)
}

/// The field-by-field difference between the approved shape and the current one, when a row
/// was demoted by a changed fingerprint.
fn changes(r: &ToolRow) -> Vec<diff::Change> {
    match &r.approved_shape {
        Some(a) if *a != r.shape => diff::diff(a, &r.shape),
        _ => Vec::new(),
    }
}

/// One act as the page draws it: its `maven tools` row, descriptions and title capped (they
/// are server-written text, A-9), what changed since its approval, its history.
pub(crate) fn page_tool(r: &ToolRow, history: &[store::ToolEvent]) -> PageTool {
    let cap = allowlist::DESCRIPTION_CAP;
    let mut row = json::tool(r);
    row.description = shown::cut(&r.description, cap).into_owned();
    PageTool {
        row,
        server: r.server.clone(),
        kind: r.kind.as_str(),
        state: act_state(r.state),
        can_become: ToolState::ALL
            .into_iter()
            .filter(|s| r.state.can_become(*s))
            .map(act_state)
            .collect(),
        title: r
            .shape
            .get("title")
            .and_then(Value::as_str)
            .map(|t| shown::cut(t, cap).into_owned()),
        changed: changes(r)
            .into_iter()
            .map(|c| ShapeChangeView {
                field: c.field,
                approved: c.approved,
                now: c.now,
            })
            .collect(),
        history: history
            .iter()
            .map(|e| ToolEventView {
                at: json::time_str(e.at),
                from: e.from.map(ToolState::as_str),
                to: e.to.as_str(),
                actor: e.actor.clone(),
                reason: e.reason.clone(),
            })
            .collect(),
    }
}

/// One executed act as the page shows it (the arguments and output stay in the store).
pub(crate) fn act_view(a: &store::ActLogRow) -> ActView {
    ActView {
        id: a.id,
        at: json::time_str(a.at),
        tool: a.tool.clone(),
        utterance: shown::cut(&a.utterance, 200).into_owned(),
        confirmed_by: a.confirmed_by.clone(),
        ok: a.ok,
        outcome: a.result().as_str(),
        duration_ms: a.duration_ms,
    }
}

impl Host for PageHost {
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<ServerStatusView>> {
        self.status.mcp_servers()
    }

    fn feeds(&self) -> BoxFuture<'_, Vec<FeedView>> {
        self.status.feeds()
    }

    fn unstable(&self, server: &str) -> Option<String> {
        self.status.unstable(server)
    }

    fn question(&self) -> Option<turns::Question> {
        self.status.question()
    }

    fn tools(&self, history: u32) -> BoxFuture<'_, Result<Vec<PageTool>, HostError>> {
        Box::pin(async move {
            let rows = self.store.tools().await.map_err(host_error)?;
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                out.push(self.with_history(r, history).await?);
            }
            Ok(out)
        })
    }

    fn tool<'a>(
        &'a self,
        name: &'a str,
        history: u32,
    ) -> BoxFuture<'a, Result<Option<PageTool>, HostError>> {
        Box::pin(async move {
            if !valid_name(name) {
                return Ok(None);
            }
            match self.store.tool(name).await.map_err(host_error)? {
                Some(r) => Ok(Some(self.with_history(r, history).await?)),
                None => Ok(None),
            }
        })
    }

    fn acts_log(&self, limit: u32) -> BoxFuture<'_, Result<Vec<ActView>, HostError>> {
        Box::pin(async move {
            let rows = self.store.acts_log(limit).await.map_err(host_error)?;
            Ok(rows.iter().map(act_view).collect())
        })
    }

    fn owner_sets_tool_state<'a>(
        &'a self,
        name: &'a str,
        to: ActState,
        step: &'a stepup::StepUp,
        reason: &'a str,
        history: u32,
    ) -> BoxFuture<'a, Result<PageTool, HostError>> {
        Box::pin(async move {
            let row = self
                .store
                .owner_sets_tool_state(name, tool_state(to), step, reason)
                .await
                .map_err(host_error)?;
            self.with_history(row, history).await
        })
    }

    fn owner_enables_where<'a>(
        &'a self,
        step: &'a stepup::StepUp,
        reason: &'a str,
        pick: Pick,
    ) -> BoxFuture<'a, Result<Vec<String>, HostError>> {
        Box::pin(async move {
            let enabled = self
                .store
                .owner_enables_where(step, reason, move |r| pick(&page_tool(r, &[])))
                .await
                .map_err(host_error)?;
            Ok(enabled.into_iter().map(|r| r.name).collect())
        })
    }

    fn passkeys(&self) -> BoxFuture<'_, Result<Vec<PasskeyRecord>, HostError>> {
        Box::pin(async move {
            let rows = self.store.passkeys().await.map_err(host_error)?;
            Ok(rows
                .into_iter()
                .map(|r| PasskeyRecord {
                    id: r.id,
                    passkey: r.passkey,
                })
                .collect())
        })
    }

    fn add_passkey<'a>(
        &'a self,
        id: &'a str,
        passkey: &'a str,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            self.store
                .add_passkey(id, passkey)
                .await
                .map(|_| ())
                .map_err(host_error)
        })
    }

    fn passkey_used<'a>(
        &'a self,
        id: &'a str,
        passkey: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            self.store
                .passkey_used(id, passkey)
                .await
                .map_err(host_error)
        })
    }

    fn authorization(&self, server: &str) -> Option<Arc<::oauth::OAuth>> {
        self.oauth.registry.get(server)
    }

    fn redial(&self, server: &str) {
        (self.oauth.redial)(server);
    }

    fn turn<'a>(&'a self, conversation_id: &'a str, text: &'a str) -> BoxFuture<'a, turns::Answer> {
        // Each signed-in session its own conversation: its pending act and question are its own.
        Box::pin(async move {
            let conversation = turns::Conversation::new(turns::Front::Page, conversation_id);
            match &self.turns {
                Some(t) => t.turn(&conversation, text).await,
                None => turns::Answer::refuse("no turn pipeline runs here"),
            }
        })
    }
}
