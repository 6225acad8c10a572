//! The connection manager (A-1..A-4, A-12): one task per enabled server, each isolated.
//!
//! Every enabled server gets a task of its own that dials, lists, watches and re-dials it. A
//! server that is black-holed, mute, crashing or slow only ever occupies its own task: no lock
//! is held across an await, so [`Manager::status`] and calls to other servers never wait on it.
//! The first dial happens on that task, never in [`Manager::new`] (boot never waits on a
//! server). Complete listings are sent as [`Discovery`] events on a channel; what to do with
//! them (propose, redefine, withdraw) is the receiver's business — this crate knows nothing of
//! the allowlist.
//!
//! A server that cannot be dialled is retried after [`backoff()`]: from `backoff_min` (1 minute)
//! doubling to `backoff_max` (30 minutes), jittered, reset by a successful listing (each
//! server task holds a [`backoff::Backoff`]). A live connection is pinged every
//! `health_interval`; a failed ping, or a call that gave up (which drops the connection, M-6),
//! makes the task re-dial a fresh connection.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use backoff::Backoff;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::{Client, ClientOptions, Error, ServerConfig, Tool, ToolOutcome};

/// Tuning of the manager. The defaults are the daemon's; tests shorten them.
#[derive(Clone)]
#[non_exhaustive]
pub struct ManagerOptions {
    /// Options of every client the manager dials.
    pub client: ClientOptions,
    /// First retry delay after a failed dial (A-4: 1 minute).
    pub backoff_min: Duration,
    /// Largest retry delay (A-4: 30 minutes).
    pub backoff_max: Duration,
    /// How often a live connection is pinged.
    pub health_interval: Duration,
    /// How often a live server's tools are listed again, besides `list_changed`.
    pub refresh_interval: Duration,
    /// How long a `tools/list_changed` burst is collected before one listing.
    pub debounce: Duration,
    /// A connection that dies sooner than this after its dial counts as a failed dial (so a
    /// server that crashes at once is retried with backoff, not in a loop).
    pub min_uptime: Duration,
    /// The first dials are spread out by this much per server, so starting a hundred servers
    /// does not start a hundred processes in the same instant.
    pub stagger: Duration,
    /// The OAuth authorization of each server that has one (their tokens go in that server's
    /// requests). Borrowed: its owner (the daemon) shares the same one with the page.
    pub oauth: Arc<oauth::Registry>,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        ManagerOptions {
            client: ClientOptions::default(),
            backoff_min: Duration::from_secs(60),
            backoff_max: Duration::from_secs(30 * 60),
            health_interval: Duration::from_secs(60),
            refresh_interval: Duration::from_secs(15 * 60),
            debounce: Duration::from_secs(2),
            min_uptime: Duration::from_secs(10),
            stagger: Duration::from_millis(20),
            oauth: Arc::default(),
        }
    }
}

impl ManagerOptions {
    /// Sets the backoff bounds.
    pub fn with_backoff(mut self, min: Duration, max: Duration) -> Self {
        self.backoff_min = min;
        self.backoff_max = max.max(min);
        self
    }

    /// Sets the health-check and refresh periods.
    pub fn with_periods(mut self, health: Duration, refresh: Duration, debounce: Duration) -> Self {
        self.health_interval = health;
        self.refresh_interval = refresh;
        self.debounce = debounce;
        self
    }

    /// Sets the least uptime of a healthy connection.
    pub fn with_min_uptime(mut self, d: Duration) -> Self {
        self.min_uptime = d;
        self
    }

    /// Sets the spacing of the first dials.
    pub fn with_stagger(mut self, d: Duration) -> Self {
        self.stagger = d;
        self
    }

    /// Authorize each server of the registry with its authorization.
    pub fn with_oauth(mut self, oauth: Arc<oauth::Registry>) -> Self {
        self.oauth = oauth;
        self
    }

    /// Sets the client options.
    pub fn with_client(mut self, client: ClientOptions) -> Self {
        self.client = client;
        self
    }
}

/// One server as the manager is given it.
#[derive(Debug, Clone)]
pub struct Managed {
    /// How to reach it.
    pub config: ServerConfig,
    /// A server that is not enabled stays dark: never dialled by the manager.
    pub enabled: bool,
}

/// A complete, successful listing of one server's tools (M-6: an incomplete listing is never
/// sent).
#[derive(Debug, Clone)]
pub struct Discovery {
    /// The server's name.
    pub server: String,
    /// Its tools, in its order, as declared.
    pub tools: Vec<Tool>,
    /// When the listing completed.
    pub at: SystemTime,
}

/// The state of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerState {
    /// Configured but not enabled: never dialled.
    Dark,
    /// A dial or handshake is under way.
    Connecting,
    /// Connected; its tools were listed (or are being listed).
    Ready,
    /// The last dial failed; the next one is at `until`.
    BackingOff {
        /// When the next dial happens.
        until: SystemTime,
    },
    /// The server asks for an OAuth authorization the owner has not given: not dialled
    /// again until [`Manager::redial`] (after `maven mcp login`).
    NeedsAuthorization,
    /// The manager stopped.
    Stopped,
}

impl ServerState {
    /// A short word for the state: dark, connecting, ready, backing off, stopped.
    pub fn as_str(&self) -> &'static str {
        match self {
            ServerState::Dark => "dark",
            ServerState::Connecting => "connecting",
            ServerState::Ready => "ready",
            ServerState::BackingOff { .. } => "backing off",
            ServerState::NeedsAuthorization => "needs authorization",
            ServerState::Stopped => "stopped",
        }
    }
}

/// A snapshot of one server for status.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerStatus {
    /// The server's name.
    pub name: String,
    /// "stdio" or "http".
    pub transport: &'static str,
    /// Whether the config enables it.
    pub enabled: bool,
    /// What it is doing.
    pub state: ServerState,
    /// The negotiated protocol version of the live (or last) connection.
    pub protocol_version: Option<String>,
    /// The era of the live (or last) connection, and how it was chosen.
    pub era: Option<(crate::Era, String)>,
    /// `serverInfo.name` and `.version`.
    pub server_info: Option<(String, String)>,
    /// Tools the last listing left out because their definition cannot be used (invalid
    /// `x-mcp-header` declarations): name and reason.
    pub rejected: Vec<(String, String)>,
    /// When the next listing is due after the last one (the server's `ttlMs` clamped to
    /// [1 minute, `refresh`], or `refresh`).
    pub relist_after: Option<Duration>,
    /// How many tools the last complete listing had.
    pub tools_offered: Option<usize>,
    /// The last error (dial, listing, health check), if any.
    pub last_error: Option<String>,
    /// When the last complete listing finished.
    pub last_listing: Option<SystemTime>,
    /// Protocol violations counted on the live connection.
    pub violations: u64,
    /// The tail of the server's stderr (stdio).
    pub stderr_tail: Option<String>,
    /// How many times it was dialled.
    pub dials: u64,
}

/// Why a call through the manager failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No server by that name is configured.
    #[error("no MCP server named {0:?} is configured")]
    UnknownServer(String),
    /// The server is configured but not enabled.
    #[error("MCP server {0:?} is not enabled")]
    Dark(String),
    /// The server has no live connection right now.
    #[error("MCP server {server:?} is not connected ({state})")]
    NotConnected {
        /// The server.
        server: String,
        /// Its state, in words.
        state: String,
    },
    /// The call itself failed.
    #[error("MCP server {server:?}: {source}")]
    Call {
        /// The server.
        server: String,
        /// What went wrong.
        #[source]
        source: Error,
    },
}

impl CallError {
    /// Whether the call may have reached the server (see [`Error::was_sent`]): never for a
    /// server that is unknown, dark or not connected.
    pub fn was_sent(&self) -> bool {
        match self {
            CallError::Call { source, .. } => source.was_sent(),
            CallError::UnknownServer(_) | CallError::Dark(_) | CallError::NotConnected { .. } => {
                false
            }
        }
    }

    /// Sent, and no usable answer came back: the server may have run it (see
    /// [`Error::outcome_unknown`]).
    pub fn outcome_unknown(&self) -> bool {
        match self {
            CallError::Call { source, .. } => source.outcome_unknown(),
            _ => false,
        }
    }
}

struct Slot {
    managed: Managed,
    /// Stops this server's task alone (a reload that removes or changes it); a child of the
    /// manager's token once spawned.
    stop: Mutex<Option<CancellationToken>>,
    /// The slot's task, while it runs: [`Manager::apply`] waits for a stopped one to end.
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    inner: Mutex<SlotInner>,
    /// Wakes the server's task when a call saw the connection die.
    kick: Notify,
    /// Set by [`Manager::redial`]: the live connection is dropped and dialled again.
    renew: std::sync::atomic::AtomicBool,
}

/// Where a server's task is, carrying the live connection when there is one: a connection is
/// held exactly while the server is connected, never beside a state that says otherwise.
#[derive(Default)]
enum Live {
    /// Configured but not enabled: never dialled.
    Dark,
    /// A dial or handshake is under way (or about to be, after a lost connection).
    Connecting,
    /// Connected: the one connection calls use.
    Connected(Arc<Client>),
    /// The last dial failed; the next one is at `until`.
    BackingOff { until: SystemTime },
    /// The server asks for the owner's authorization: not dialled again until a redial.
    NeedsAuthorization,
    /// The task stopped (or never ran).
    #[default]
    Stopped,
}

impl Live {
    /// The state as the manager's readers see it.
    fn state(&self) -> ServerState {
        match self {
            Live::Dark => ServerState::Dark,
            Live::Connecting => ServerState::Connecting,
            Live::Connected(_) => ServerState::Ready,
            Live::BackingOff { until } => ServerState::BackingOff { until: *until },
            Live::NeedsAuthorization => ServerState::NeedsAuthorization,
            Live::Stopped => ServerState::Stopped,
        }
    }

    /// The live connection, if connected.
    fn client(&self) -> Option<&Arc<Client>> {
        match self {
            Live::Connected(c) => Some(c),
            _ => None,
        }
    }
}

#[derive(Default)]
struct SlotInner {
    live: Live,
    protocol_version: Option<String>,
    era: Option<(crate::Era, String)>,
    server_info: Option<(String, String)>,
    rejected: Vec<(String, String)>,
    relist_after: Option<Duration>,
    tools_offered: Option<usize>,
    last_error: Option<String>,
    last_listing: Option<SystemTime>,
    stderr_tail: Option<String>,
    violations: u64,
    dials: u64,
}

impl Slot {
    /// The slot's data; the lock is only ever held for a few field reads or writes, never
    /// across an await. A poisoned lock still holds consistent plain data.
    fn lock(&self) -> MutexGuard<'_, SlotInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The connection manager. Cheap to clone: every clone sees the same servers, also after
/// [`Manager::apply`] changed them.
#[derive(Clone)]
pub struct Manager {
    slots: Arc<std::sync::RwLock<BTreeMap<String, Arc<Slot>>>>,
    options: Arc<Mutex<ManagerOptions>>,
    events: mpsc::Sender<Discovery>,
    /// The token and tracker [`Manager::spawn`] was given: servers added later run there.
    running: Arc<Mutex<Option<(CancellationToken, TaskTracker)>>>,
}

/// How long [`Manager::apply`] waits for a stopped server's task: its close (stdin closed,
/// SIGTERM, SIGKILL, each after its grace) ends well within it.
const STOP_WAIT: Duration = Duration::from_secs(15);

/// What [`Manager::apply`] did, each list in name order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Applied {
    /// Servers that were not there before.
    pub added: Vec<String>,
    /// Servers that are gone: their tasks stopped, their connections closed.
    pub removed: Vec<String>,
    /// Servers whose configuration changed: stopped, and started afresh.
    pub restarted: Vec<String>,
    /// Servers left as they were, connection and all.
    pub kept: Vec<String>,
}

impl Slot {
    fn new(m: Managed) -> Slot {
        let live = if m.enabled {
            Live::Connecting
        } else {
            Live::Dark
        };
        Slot {
            managed: m,
            stop: Mutex::new(None),
            task: Mutex::new(None),
            inner: Mutex::new(SlotInner {
                live,
                ..SlotInner::default()
            }),
            kick: Notify::new(),
            renew: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Stops the slot's task: returns it, to be waited for (it closes its connection, a
    /// stdio server's process group reaped, before it ends).
    fn stop(&self) -> Option<tokio::task::JoinHandle<()>> {
        if let Some(t) = self.stop.lock().unwrap_or_else(|p| p.into_inner()).take() {
            t.cancel();
        }
        self.task.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field(
                "servers",
                &self
                    .slots()
                    .iter()
                    .map(|s| s.managed.config.name.clone())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager for these servers. Nothing is dialled until [`Manager::spawn`]; the returned
    /// receiver yields every complete listing.
    pub fn new(
        servers: Vec<Managed>,
        options: ManagerOptions,
    ) -> (Manager, mpsc::Receiver<Discovery>) {
        let (tx, rx) = mpsc::channel(64);
        let slots = servers
            .into_iter()
            .map(|m| (m.config.name.clone(), Arc::new(Slot::new(m))))
            .collect();
        (
            Manager {
                slots: Arc::new(std::sync::RwLock::new(slots)),
                options: Arc::new(Mutex::new(options)),
                events: tx,
                running: Arc::new(Mutex::new(None)),
            },
            rx,
        )
    }

    /// The servers now, in name order (the map's lock is held only to clone it).
    fn slots(&self) -> Vec<Arc<Slot>> {
        self.slots
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    fn slot(&self, server: &str) -> Option<Arc<Slot>> {
        self.slots
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            .cloned()
    }

    fn options(&self) -> ManagerOptions {
        self.options
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Starts the task of one enabled slot under the manager's token, if the manager runs.
    fn start(&self, slot: &Arc<Slot>, first_dial: Duration) {
        let Some((cancel, tracker)) = self
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        else {
            return;
        };
        if !slot.managed.enabled {
            return;
        }
        let stop = cancel.child_token();
        *slot.stop.lock().unwrap_or_else(|p| p.into_inner()) = Some(stop.clone());
        let task = ServerTask {
            slot: slot.clone(),
            options: self.options(),
            events: self.events.clone(),
            cancel: stop,
            first_dial,
        };
        let handle = tracker.spawn(task.run());
        *slot.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
    }

    /// Makes the managed servers these (a reload of the configuration): a server that is new
    /// is started, one that is gone is stopped and its connection closed, one whose block
    /// `changed` says changed is stopped and started afresh, and every other one keeps its
    /// task and its connection. `options` applies to the tasks started from now on.
    pub async fn apply(
        &self,
        servers: Vec<Managed>,
        options: ManagerOptions,
        changed: impl Fn(&str) -> bool,
    ) -> Applied {
        *self.options.lock().unwrap_or_else(|p| p.into_inner()) = options;
        let mut out = Applied::default();
        let mut closing = Vec::new();
        let mut starting = Vec::new();
        {
            let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
            let wanted: std::collections::BTreeSet<String> =
                servers.iter().map(|m| m.config.name.clone()).collect();
            let gone: Vec<String> = slots
                .keys()
                .filter(|k| !wanted.contains(*k))
                .cloned()
                .collect();
            for name in gone {
                if let Some(old) = slots.remove(&name) {
                    closing.extend(old.stop());
                }
                out.removed.push(name);
            }
            for m in servers {
                let name = m.config.name.clone();
                match slots.get(&name) {
                    Some(old) if !changed(&name) && old.managed.enabled == m.enabled => {
                        out.kept.push(name);
                    }
                    Some(old) => {
                        closing.extend(old.stop());
                        let slot = Arc::new(Slot::new(m));
                        slots.insert(name.clone(), slot.clone());
                        starting.push(slot);
                        out.restarted.push(name);
                    }
                    None => {
                        let slot = Arc::new(Slot::new(m));
                        slots.insert(name.clone(), slot.clone());
                        starting.push(slot);
                        out.added.push(name);
                    }
                }
            }
        }
        // A changed server's old process is gone before its new one starts (a server that
        // holds a file, a port, a lock never meets its successor).
        for task in closing {
            if tokio::time::timeout(STOP_WAIT, task).await.is_err() {
                tracing::warn!("a stopped server's task did not end within {STOP_WAIT:?}");
            }
        }
        for slot in &starting {
            self.start(slot, Duration::ZERO);
        }
        out
    }

    /// Starts one task per enabled server on `tracker`, all stopped by `cancel` (and each by
    /// [`Manager::apply`] when it removes or changes it). Returns at once.
    pub fn spawn(&self, cancel: &CancellationToken, tracker: &TaskTracker) {
        *self.running.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((cancel.clone(), tracker.clone()));
        let stagger = self.options().stagger;
        for (i, slot) in self
            .slots()
            .iter()
            .filter(|s| s.managed.enabled)
            .enumerate()
        {
            self.start(
                slot,
                stagger.saturating_mul(u32::try_from(i).unwrap_or(u32::MAX)),
            );
        }
    }

    /// Dial a server again now: a live connection is dropped and dialled afresh (it was
    /// authorized, or its credentials were forgotten), a parked one is dialled, and one
    /// backing off after failed dials is dialled without waiting for the rest of its delay.
    pub fn redial(&self, server: &str) {
        if let Some(slot) = self.slot(server) {
            slot.renew.store(true, std::sync::atomic::Ordering::SeqCst);
            slot.kick.notify_one();
        }
    }

    /// A snapshot of every server, in name order. Never waits on a server.
    pub fn status(&self) -> Vec<ServerStatus> {
        let oauth = self.options().oauth;
        self.slots()
            .iter()
            .map(|slot| {
                let mut i = slot.lock();
                if let Some(c) = i.live.client().cloned() {
                    i.violations = c.stats().violations;
                    i.stderr_tail = c.stderr_tail();
                }
                // Honest state: a connection whose authorization is gone (forgotten, refused,
                // expired without a refresh token) is not ready, whatever the socket says.
                let auth_gone = oauth
                    .get(&slot.managed.config.name)
                    .and_then(|o| o.needs_authorization());
                let mut state = i.live.state();
                let mut last_error = i.last_error.clone();
                if let (ServerState::Ready, Some(why)) = (&state, auth_gone) {
                    state = ServerState::NeedsAuthorization;
                    last_error = Some(format!("needs authorization ({why})"));
                }
                ServerStatus {
                    name: slot.managed.config.name.clone(),
                    transport: slot.managed.config.transport.name(),
                    enabled: slot.managed.enabled,
                    state,
                    protocol_version: i.protocol_version.clone(),
                    era: i.era.clone(),
                    server_info: i.server_info.clone(),
                    rejected: i.rejected.clone(),
                    relist_after: i.relist_after,
                    tools_offered: i.tools_offered,
                    last_error,
                    last_listing: i.last_listing,
                    violations: i.violations,
                    stderr_tail: i.stderr_tail.clone(),
                    dials: i.dials,
                }
            })
            .collect()
    }

    /// Calls `tool` on `server` with named arguments. Only the tool name and these arguments
    /// go to the server. A call that gives up drops the connection (M-6), and the server's task
    /// re-dials a fresh one. A modern server that asks for input gets Maven's own answers and
    /// has its elicitations declined; [`Manager::start_call`] brings them to the owner instead.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<ToolOutcome, CallError> {
        let (slot, client) = self.live(server)?;
        #[expect(
            clippy::disallowed_methods,
            reason = "the manager's call, itself held by the lint"
        )]
        let res = client.call_tool(tool, arguments).await;
        Self::after_call(&slot, &client, server, res)
    }

    /// The first round of a call made for the owner: its result, or what the server asks the
    /// owner ([`crate::CallStep::Input`], in either era), to be answered with
    /// [`Manager::resume_call`].
    pub async fn start_call(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<crate::CallStep, CallError> {
        let (slot, client) = self.live(server)?;
        #[expect(
            clippy::disallowed_methods,
            reason = "the manager's call, itself held by the lint"
        )]
        let res = client.start_owner_call(tool, arguments).await;
        Self::after_call(&slot, &client, server, res)
    }

    /// The next round of a call that waited for input (on the server's live connection,
    /// which need not be the one that asked: the modern era is stateless).
    pub async fn resume_call(
        &self,
        server: &str,
        needed: crate::InputNeeded,
        replies: Map<String, Value>,
    ) -> Result<crate::CallStep, CallError> {
        let (slot, client) = self.live(server)?;
        #[expect(
            clippy::disallowed_methods,
            reason = "the manager's call, itself held by the lint"
        )]
        let res = client.resume_call(needed, replies).await;
        Self::after_call(&slot, &client, server, res)
    }

    fn live(&self, server: &str) -> Result<(Arc<Slot>, Arc<Client>), CallError> {
        let slot = self
            .slot(server)
            .ok_or_else(|| CallError::UnknownServer(server.to_owned()))?;
        if !slot.managed.enabled {
            return Err(CallError::Dark(server.to_owned()));
        }
        let found = {
            let i = slot.lock();
            match i.live.client() {
                Some(c) if c.closed().is_none() => Ok(c.clone()),
                _ => Err(CallError::NotConnected {
                    server: server.to_owned(),
                    state: describe_state(&i),
                }),
            }
        };
        found.map(|c| (slot, c))
    }

    fn after_call<T>(
        slot: &Slot,
        client: &Client,
        server: &str,
        res: Result<T, Error>,
    ) -> Result<T, CallError> {
        if client.closed().is_some() {
            slot.kick.notify_one();
        }
        res.map_err(|source| CallError::Call {
            server: server.to_owned(),
            source,
        })
    }

    /// Closes every live connection and waits for each to be gone (stdio children reaped).
    /// Call after cancelling the tasks.
    pub async fn close(&self) {
        let clients: Vec<Arc<Client>> = self
            .slots()
            .iter()
            .filter_map(|s| {
                let mut i = s.lock();
                match std::mem::take(&mut i.live) {
                    Live::Connected(c) => Some(c),
                    _ => None,
                }
            })
            .collect();
        for c in clients {
            c.close().await;
        }
    }
}

fn describe_state(i: &SlotInner) -> String {
    match &i.live {
        Live::BackingOff { .. } => match &i.last_error {
            Some(e) => format!("backing off after: {e}"),
            None => "backing off".to_owned(),
        },
        l => l.state().as_str().to_owned(),
    }
}

/// the delay before dial attempt number `failures` (1 = after the first failure):
/// `min · 2^(failures-1)`, capped at `max`, then moved by up to ±10 % (`jitter` in [-1, 1]),
/// and never below `min · 0.9` nor above `max`: what the server task's [`Backoff`] waits
/// after that many failures.
pub fn backoff(failures: u32, min: Duration, max: Duration, jitter: f64) -> Duration {
    let b = Backoff::new(min, max).with_failures(failures);
    let unit = if jitter.is_nan() {
        0.5
    } else {
        (jitter.clamp(-1.0, 1.0) + 1.0) / 2.0
    };
    b.spread(b.base(), None, unit)
}

struct ServerTask {
    slot: Arc<Slot>,
    options: ManagerOptions,
    events: mpsc::Sender<Discovery>,
    cancel: CancellationToken,
    /// How long to wait before the first dial (see [`ManagerOptions::stagger`]).
    first_dial: Duration,
}

enum Ended {
    Cancelled,
    /// The connection died or stopped answering; `healthy` when it had run long enough.
    Lost {
        healthy: bool,
    },
    /// Dropped on purpose ([`Manager::redial`]): dialled again at once.
    Renew,
}

impl ServerTask {
    /// The client options of this server: the manager's, with the server's OAuth
    /// authorization if it has one.
    fn client_options(&self) -> ClientOptions {
        let mut o = self.options.client.clone();
        if let Some(a) = self.options.oauth.get(&self.slot.managed.config.name) {
            o.oauth = Some(a.clone());
        }
        o
    }

    fn set(&self, f: impl FnOnce(&mut SlotInner)) {
        f(&mut self.slot.lock());
    }

    async fn run(self) {
        let name = self.slot.managed.config.name.clone();
        let mut failures = Backoff::new(self.options.backoff_min, self.options.backoff_max);
        if !self.first_dial.is_zero() {
            tokio::select! {
                _ = self.cancel.cancelled() => {
                    self.set(|i| i.live = Live::Stopped);
                    return;
                }
                _ = tokio::time::sleep(self.first_dial) => {}
            }
        }
        loop {
            if self.cancel.is_cancelled() {
                break;
            }
            self.set(|i| {
                i.live = Live::Connecting;
                i.dials += 1;
            });
            // This dial is the renewal asked for until now.
            self.slot
                .renew
                .store(false, std::sync::atomic::Ordering::SeqCst);
            tracing::debug!(server = %name, "dialling");
            let dialled = tokio::select! {
                _ = self.cancel.cancelled() => break,
                r = Client::dial(&self.slot.managed.config, self.client_options()) => r,
            };
            let ended = match dialled {
                Ok(client) => {
                    let client = Arc::new(client);
                    let info = client.server_info().clone();
                    tracing::info!(
                        server = %name,
                        protocol = %info.protocol_version,
                        era = info.era.as_str(),
                        chosen = %info.chosen,
                        server_name = %info.name,
                        "connected"
                    );
                    self.set(|i| {
                        i.live = Live::Connected(client.clone());
                        i.protocol_version = Some(info.protocol_version.clone());
                        i.era = Some((info.era, info.chosen.clone()));
                        i.server_info = Some((info.name.clone(), info.version.clone()));
                    });
                    let started = tokio::time::Instant::now();
                    let ended = self.serve(&client, &mut failures).await;
                    self.set(|i| {
                        // The connection is gone: what comes next is a dial (at once, or
                        // after a back-off the loop sets below) or the end.
                        i.live = Live::Connecting;
                        i.stderr_tail = client.stderr_tail();
                        i.violations = client.stats().violations;
                    });
                    client.close().await;
                    match ended {
                        Ended::Cancelled => break,
                        Ended::Renew => continue,
                        Ended::Lost { .. } => Ended::Lost {
                            healthy: started.elapsed() >= self.options.min_uptime,
                        },
                    }
                }
                Err((Error::Auth(e), _)) => {
                    // Not a failure to retry: nothing changes until the owner authorizes (a
                    // token refused for its DPoP binding, a step-up that needs the owner:
                    // the same, with the reason).
                    let why = match e {
                        oauth::AuthError::NeedsAuthorization => {
                            tracing::info!(server = %name, "needs authorization");
                            "needs authorization".to_owned()
                        }
                        e => {
                            tracing::warn!(server = %name, error = %e, "authorization refused");
                            format!("needs authorization ({e})")
                        }
                    };
                    self.set(|i| {
                        i.live = Live::NeedsAuthorization;
                        i.last_error = Some(why);
                    });
                    tokio::select! {
                        _ = self.cancel.cancelled() => break,
                        _ = self.slot.kick.notified() => {}
                    }
                    continue;
                }
                Err((e, stderr_tail)) => {
                    tracing::warn!(server = %name, error = %e, "dial failed");
                    self.set(|i| {
                        i.last_error = Some(format!("dial: {e}"));
                        // What a server that died during the dial said is what the owner needs.
                        if let Some(t) = stderr_tail.filter(|t| !t.is_empty()) {
                            i.stderr_tail = Some(t);
                        }
                    });
                    Ended::Lost { healthy: false }
                }
            };
            let Ended::Lost { healthy } = ended else {
                break;
            };
            if healthy {
                // A connection that served a while and then died is re-dialled at once.
                continue;
            }
            let delay = failures.fail();
            let until = SystemTime::now() + delay;
            self.set(|i| i.live = Live::BackingOff { until });
            tracing::info!(server = %name, delay_s = delay.as_secs_f64(), "backing off before the next dial");
            // A redial ([`Manager::redial`]: the owner fixed something) ends the wait early;
            // a kick left over from a call does not.
            let renewed = async {
                loop {
                    self.slot.kick.notified().await;
                    if self.slot.renew.load(std::sync::atomic::Ordering::SeqCst) {
                        break;
                    }
                }
            };
            tokio::select! {
                _ = self.cancel.cancelled() => break,
                _ = tokio::time::sleep(delay) => {}
                _ = renewed => {
                    tracing::info!(server = %name, "dialling again now, as asked");
                }
            }
        }
        self.set(|i| i.live = Live::Stopped);
    }

    /// Lists, then watches one live connection until it dies or the manager stops.
    async fn serve(&self, client: &Arc<Client>, failures: &mut Backoff) -> Ended {
        let name = &self.slot.managed.config.name;
        let mut list_changed = client.list_changed();
        let mut need_listing = true;
        let mut health = tokio::time::interval(self.options.health_interval);
        health.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        health.tick().await; // the first tick is immediate
                             // The next scheduled listing: `refresh` after the last one, or sooner when the server's
                             // `ttlMs` says its listing goes stale sooner (never sooner than a minute).
        let refresh = tokio::time::sleep(self.options.refresh_interval);
        tokio::pin!(refresh);
        loop {
            if need_listing {
                need_listing = false;
                let listed = tokio::select! {
                    _ = self.cancel.cancelled() => return Ended::Cancelled,
                    r = client.list_tools() => r,
                };
                match listed {
                    Ok(list) => {
                        failures.reset();
                        let now = SystemTime::now();
                        let after = list.next_listing(self.options.refresh_interval);
                        refresh.as_mut().reset(tokio::time::Instant::now() + after);
                        self.set(|i| {
                            i.tools_offered = Some(list.tools.len());
                            i.last_listing = Some(now);
                            i.last_error = None;
                            i.rejected = list.rejected.clone();
                            i.relist_after = Some(after);
                        });
                        tracing::info!(server = %name, tools = list.tools.len(), "tools listed");
                        let event = Discovery {
                            server: name.clone(),
                            tools: list.tools,
                            at: now,
                        };
                        tokio::select! {
                            _ = self.cancel.cancelled() => return Ended::Cancelled,
                            r = self.events.send(event) => if r.is_err() { return Ended::Cancelled },
                        }
                    }
                    Err(e) => {
                        // An incomplete listing proposes and withdraws nothing (M-6).
                        tracing::warn!(server = %name, error = %e, "listing failed");
                        self.set(|i| i.last_error = Some(format!("tools/list: {e}")));
                        if client.closed().is_some() {
                            return Ended::Lost { healthy: false };
                        }
                    }
                }
            }
            tokio::select! {
                _ = self.cancel.cancelled() => return Ended::Cancelled,
                // A server that dies (a stdio server killed by a signal, a crash) is seen at
                // once, with how it ended, not at the next health check.
                () = client.wait_closed() => return self.lost(client),
                _ = self.slot.kick.notified() => {
                    if client.closed().is_some() {
                        return self.lost(client);
                    }
                    if self.slot.renew.swap(false, std::sync::atomic::Ordering::SeqCst) {
                        tracing::info!(server = %name, "dropping the connection to dial again");
                        return Ended::Renew;
                    }
                }
                changed = list_changed.changed() => {
                    if changed.is_err() {
                        return self.lost(client);
                    }
                    // Collect a burst of notifications into one listing.
                    tokio::select! {
                        _ = self.cancel.cancelled() => return Ended::Cancelled,
                        _ = tokio::time::sleep(self.options.debounce) => {}
                    }
                    list_changed.borrow_and_update();
                    need_listing = true;
                }
                _ = &mut refresh => {
                    // Re-armed by the listing; until then, not again.
                    refresh.as_mut().reset(tokio::time::Instant::now() + self.options.refresh_interval);
                    need_listing = true;
                }
                _ = health.tick() => {
                    if client.closed().is_some() {
                        return self.lost(client);
                    }
                    let pinged = tokio::select! {
                        _ = self.cancel.cancelled() => return Ended::Cancelled,
                        r = client.ping() => r,
                    };
                    if let Err(e) = pinged {
                        tracing::warn!(server = %name, error = %e, "health check failed; re-dialling");
                        self.set(|i| i.last_error = Some(format!("ping: {e}")));
                        return Ended::Lost { healthy: true };
                    }
                }
            }
        }
    }

    fn lost(&self, client: &Client) -> Ended {
        let reason = client
            .closed()
            .map(|r| r.to_string())
            .unwrap_or_else(|| "the connection ended".to_owned());
        tracing::warn!(server = %self.slot.managed.config.name, %reason, "connection lost");
        self.set(|i| i.last_error = Some(format!("connection lost: {reason}")));
        Ended::Lost { healthy: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIN: Duration = Duration::from_secs(60);
    const MAX: Duration = Duration::from_secs(1800);

    #[test]
    fn backoff_doubles_from_one_minute_to_thirty() {
        let table = [
            (1, 60),
            (2, 120),
            (3, 240),
            (4, 480),
            (5, 960),
            (6, 1800),
            (7, 1800),
            (100, 1800),
        ];
        for (n, secs) in table {
            assert_eq!(
                backoff(n, MIN, MAX, 0.0),
                Duration::from_secs(secs),
                "attempt {n}"
            );
        }
    }

    proptest! {
        #[test]
        fn backoff_stays_within_bounds(n in 0u32..1000, j in -2.0f64..2.0) {
            let d = backoff(n, MIN, MAX, j);
            prop_assert!(d >= MIN.mul_f64(0.9));
            prop_assert!(d <= MAX);
        }

        #[test]
        fn backoff_never_shrinks_without_jitter(n in 1u32..1000) {
            prop_assert!(backoff(n + 1, MIN, MAX, 0.0) >= backoff(n, MIN, MAX, 0.0));
        }
    }
}
