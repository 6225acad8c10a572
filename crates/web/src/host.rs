//! What the page asks of the daemon that serves it: the [`Host`]. The page holds no store and
//! no connection of its own; it reads the cards, the acts and the passkeys, and makes the
//! owner's changes, through its host, which the daemon implements over the real store. A leaf
//! of the crate: it names `wire`'s views, the step-up, the servers' OAuth and the turn's
//! answer, nothing of the page.
//!
//! There is no method that runs a tool: the page reaches an act only through [`Host::turn`],
//! the turn pipeline with its confirmation.

use std::sync::Arc;

use wire::views::{ActState, ActView, FeedView, PageTool, ServerStatusView};

/// A future the host answers with, boxed so that [`Host`] is object-safe.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// Why the host could not do what the page asked; the page answers each with its own status.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// No such row or passkey (404).
    #[error("{0}")]
    NotFound(String),
    /// A state change the row cannot make (409).
    #[error("{0}")]
    BadTransition(String),
    /// Anything else (500, logged).
    #[error("{0}")]
    Failed(String),
}

/// One enrolled passkey as the host keeps it: its credential id (hex) and the passkey as JSON.
#[derive(Debug, Clone)]
pub struct PasskeyRecord {
    /// Hex of the credential id.
    pub id: String,
    /// The passkey, serialised.
    pub passkey: String,
}

/// A predicate over the rows, applied by the host inside the one transaction that enables.
pub type Pick = Box<dyn Fn(&PageTool) -> bool + Send + Sync + 'static>;

/// The daemon, as the page sees it: what the cards show, the acts and the owner's changes to
/// them (each behind a `stepup::StepUp`, which only `auth` makes), the passkeys, the servers'
/// OAuth, and a turn.
pub trait Host: Send + Sync + 'static {
    /// One object per configured MCP server (the shape of `maven mcp status --json`).
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<ServerStatusView>>;
    /// One object per configured feed.
    fn feeds(&self) -> BoxFuture<'_, Vec<FeedView>>;
    /// Why this MCP server is unstable (its tools change too often), while it is: its rows
    /// are not enabled then.
    fn unstable(&self, server: &str) -> Option<String>;
    /// The server's question the owner's next turn answers, while one stands.
    fn question(&self) -> Option<turns::Question>;

    /// Every act row, each with its `history` newest state changes.
    fn tools(&self, history: u32) -> BoxFuture<'_, Result<Vec<PageTool>, HostError>>;
    /// One act row by name with its `history` newest state changes; `None` when there is no
    /// such row (or the name is not one a row can have).
    fn tool<'a>(
        &'a self,
        name: &'a str,
        history: u32,
    ) -> BoxFuture<'a, Result<Option<PageTool>, HostError>>;
    /// The `limit` most recent executed acts, newest first.
    fn acts_log(&self, limit: u32) -> BoxFuture<'_, Result<Vec<ActView>, HostError>>;
    /// The owner enables or disables one row, behind the step-up that names them in its audit
    /// event (`store::Store::owner_sets_tool_state`); answers the row as it is now, with its
    /// `history` newest state changes.
    fn owner_sets_tool_state<'a>(
        &'a self,
        name: &'a str,
        to: ActState,
        step: &'a stepup::StepUp,
        reason: &'a str,
        history: u32,
    ) -> BoxFuture<'a, Result<PageTool, HostError>>;
    /// The owner enables, behind one step-up, exactly the rows `pick` chooses, chosen and
    /// changed in one transaction (`store::Store::owner_enables_where`); answers their names.
    fn owner_enables_where<'a>(
        &'a self,
        step: &'a stepup::StepUp,
        reason: &'a str,
        pick: Pick,
    ) -> BoxFuture<'a, Result<Vec<String>, HostError>>;

    /// Every enrolled passkey, oldest first.
    fn passkeys(&self) -> BoxFuture<'_, Result<Vec<PasskeyRecord>, HostError>>;
    /// Keeps a newly enrolled passkey.
    fn add_passkey<'a>(
        &'a self,
        id: &'a str,
        passkey: &'a str,
    ) -> BoxFuture<'a, Result<(), HostError>>;
    /// Records a passkey's use (and its new state, when its counter changed).
    fn passkey_used<'a>(
        &'a self,
        id: &'a str,
        passkey: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), HostError>>;

    /// The OAuth authorization of this HTTP server (the daemon's one registry, which the
    /// connection manager borrows too), if it has one.
    fn authorization(&self, server: &str) -> Option<Arc<oauth::OAuth>>;
    /// Dials this server again (it was just authorized or forgotten).
    fn redial(&self, server: &str);

    /// One turn of the owner's conversation `conversation_id` on the page: the turn pipeline,
    /// with its confirmation, the page's only way to an act.
    fn turn<'a>(&'a self, conversation_id: &'a str, text: &'a str) -> BoxFuture<'a, turns::Answer>;
}
