//! The daemon: start-up, the data directory's lock, the task tree, shutdown, and the wiring of
//! its services.
//!
//! Each service owns its own state and is reached only through its handle: the turn pipeline
//! (`turns::Turns`), the MCP servers ([`servers::Servers`]: the manager, the OAuth registry,
//! the plans, the network door), the feed poller ([`feeds::Feeds`]), the page
//! ([`page::PageService`]) and the voice listener ([`speech::VoiceService`]). [`State`] holds
//! the handles, answers IPC, and applies a reload as a typed difference of the configuration
//! ([`crate::reload::Diff`]) to the services it concerns.
//!
//! Everything the daemon runs is spawned on one [`TaskTracker`] under one
//! [`CancellationToken`]; SIGINT or SIGTERM cancels the token, and the daemon waits (with a
//! deadline) for every task to finish before it removes its socket and releases its lock.
//!
//! The data directory is locked with an OS file lock ([`crate::datadir::DataLock`]), which the
//! kernel releases however the process dies; so a socket file found at start is always stale
//! and is removed. At start the daemon raises its soft `RLIMIT_NOFILE` to the hard limit and
//! keeps [`FD_RESERVE`] descriptors plus one per IPC slot for everything but the page's
//! connections; the page's connection bound is what is left (at most 64), so a flood of the
//! page cannot starve IPC, dials or polls of descriptors. Both limits are in `maven status`.

mod feeds;
mod page;
mod servers;
mod shared;
mod speech;

pub(crate) use shared::Current;
use shared::{current, write};

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::Context;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use config::Config;
use web::BoxFuture;
use wire::methods::{Reply, Request};
use wire::protocol::{self, RpcError};
use wire::views::{
    ActCounts, FeedView, LimitsView, ReloadView, ServerStatusView, StatusView, TurnView,
};

use crate::ipc::server::{self as ipc, Dispatch};
use crate::json;
use crate::logsink::errln;
use crate::page_host::StatusSource;

/// How long shutdown waits for tasks before giving up on them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
pub use crate::datadir::DB_NAME;

/// What `maven daemon` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--config`: the configuration file (`None`: the default path, which may be missing).
    pub config: Option<PathBuf>,
    /// The data directory.
    pub data_dir: PathBuf,
    /// The log's format on stderr.
    pub log_format: LogFormat,
    /// The log's filter (`RUST_LOG`'s syntax; `None`: `RUST_LOG`, else `info`).
    pub log_filter: Option<String>,
}

/// The daemon's log format on stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// One line per event, for a person.
    Human,
    /// One JSON object per event.
    Json,
}

/// Why the daemon did not run, or stopped with an error (said on stderr and in the log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failed {
    /// The configuration does not validate: the daemon did not start.
    Config,
    /// It could not start or run (the data directory, the store, the runtime, a listener).
    Run,
}

/// The handles of the daemon's services, and what IPC answers from.
pub(crate) struct State {
    /// The open-descriptor limit the daemon runs under.
    descriptors: u64,
    started: Instant,
    data_dir: PathBuf,
    /// `--config` as given (`None`: the default path), read again by each reload.
    config_path: Option<PathBuf>,
    config: Current,
    store: store::Store,
    /// The turn pipeline: the only path that runs an act.
    turns: Arc<turns::Turns>,
    /// The MCP servers.
    servers: Arc<servers::Servers>,
    /// The feed poller (F-8: no task, no request while no feed is enabled).
    feeds: Arc<feeds::Feeds>,
    /// The local page, listening or retrying its port.
    page: page::PageService,
    /// The voice listener (`voice.listen`).
    voice: speech::VoiceService,
    tracker: TaskTracker,
    /// Held while a reload applies: a second one meanwhile is refused.
    reloading: tokio::sync::Mutex<()>,
}

/// What the page's cards show of the running daemon: the servers' live view, the poller's of
/// each feed, the terminal's pending question.
struct Cards {
    servers: Arc<servers::Servers>,
    feeds: Arc<feeds::Feeds>,
    turns: Arc<turns::Turns>,
}

impl StatusSource for Cards {
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<ServerStatusView>> {
        Box::pin(self.servers.status())
    }
    fn feeds(&self) -> BoxFuture<'_, Vec<FeedView>> {
        Box::pin(std::future::ready(self.feeds.status()))
    }
    fn question(&self) -> Option<turns::Question> {
        self.turns.question(&turns::Conversation::terminal())
    }
    fn unstable(&self, server: &str) -> Option<String> {
        self.servers.unstable(server)
    }
}

/// Runs the daemon until SIGTERM or SIGINT (each SIGHUP meanwhile reloads the
/// configuration); what failed is said on stderr before it returns.
pub fn main(opts: Options) -> Result<(), Failed> {
    // Whatever descriptor the daemon was started with beyond 0–2 (a key file, a terminal) is
    // closed before anything else is opened: nothing of it reaches a server or an act.
    sandbox::close_inherited();
    init_logging(opts.log_format, opts.log_filter.as_deref());
    let done = start(opts);
    // Every exit waits, bounded, for the log writer: errors and the shutdown sequence reach
    // stderr before the process ends (see `logsink` for what a crash still loses).
    crate::logsink::closing();
    crate::logsink::flush(crate::logsink::FLUSH_GRACE);
    done
}

fn start(opts: Options) -> Result<(), Failed> {
    let loaded = match Config::load(opts.config.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            // Each problem on its own line, so a human reads them and a log keeps them.
            errln!("{e}");
            tracing::error!("the configuration is invalid; the daemon does not start");
            return Err(Failed::Config);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("maven")
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            return Err(Failed::Run);
        }
    };
    match rt.block_on(run(opts.data_dir, opts.config, loaded)) {
        Ok(()) => Ok(()),
        Err(e) => {
            tracing::error!("{e:#}");
            errln!("maven daemon: {e:#}");
            Err(Failed::Run)
        }
    }
}

fn init_logging(format: LogFormat, filter: Option<&str>) {
    use tracing_subscriber::EnvFilter;
    let filter = match filter {
        Some(f) => EnvFilter::new(f),
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(crate::logsink::start());
    let _ = match format {
        // Colour only on a terminal (and not under NO_COLOR): a log file holds text, not
        // terminal control.
        LogFormat::Human => builder
            .with_ansi(colour_stderr())
            .fmt_fields(human_fields())
            .try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// Whether the human log may colour its output: stderr is a terminal and NO_COLOR is unset.
fn colour_stderr() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The fields of a human log line, each value shown through `shown::line`: a value a server
/// wrote (a name, an error that quotes it, a stderr line) can neither start a new line nor
/// drive the terminal. The message is written bare, every other field as `name=value`.
fn human_fields() -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> + 'static {
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(|w, field, value| {
        let text = format!("{value:?}");
        let text = shown::line(&text);
        match field.name() {
            "message" => write!(w, "{text}"),
            name => write!(w, "{name}={text}"),
        }
    })
    .delimited(" ")
}

async fn run(
    data_dir: PathBuf,
    config_path: Option<PathBuf>,
    config: Config,
) -> anyhow::Result<()> {
    prepare_data_dir(&data_dir)?;
    let lock = crate::datadir::DataLock::acquire(&data_dir)?;
    let db = data_dir.join(DB_NAME);
    let store = lock
        .open_store()
        .await
        .with_context(|| format!("cannot open the store {}", db.display()))?;
    match &config.source {
        Some(p) => tracing::info!(config = %p.display(), "configuration loaded"),
        None => tracing::info!("no configuration file: every default applies, nothing external"),
    }
    let approvals = Arc::new(crate::policy::approvals(&config));
    allowlist::reconcile::propose_local_acts(&store, &approvals.acts, config.source.as_deref())
        .await
        .context("cannot propose the configuration's acts")?;
    servers::narrow_all(&config, &store)
        .await
        .context("cannot withdraw what the configuration no longer allows")?;

    let listener = ipc::bind(&data_dir)?;
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    // orphans of the servers stay the daemon's descendants (and the IPC server refuses
    // them); the reaper collects them when they exit.
    match gate::become_subreaper() {
        Ok(()) => {
            tracker.spawn(reap_adopted(cancel.clone()));
        }
        Err(e) => tracing::warn!(error = %e, "cannot become the child subreaper of the servers"),
    }
    let config = Arc::new(config);
    let current: Current = Arc::new(RwLock::new(config.clone()));
    let feeds = Arc::new(feeds::Feeds::start(&current, &store, &cancel, &tracker).await?);
    let descriptors = raise_descriptor_limit();
    let page =
        page::PageService::bind(&config, page_connections(descriptors), &cancel, &tracker).await;
    // The door is bound before any server starts: a proxied server's launcher hands its
    // listeners over there. Without it such a server cannot start (its launcher says so).
    let door = crate::netdoor::Door::in_data_dir(&data_dir);
    match door.bind() {
        Ok(l) => {
            tracker.spawn(door.clone().serve(l, cancel.clone()));
        }
        Err(e) => tracing::error!(
            path = %door.path().display(),
            error = %e,
            "the sandbox network door cannot be bound: servers whose network goes through Maven will not start"
        ),
    }
    // the manager is built here but dials nothing; every first dial happens on its
    // server's own task, after the IPC socket is already answering. The page is bound before
    // any server's plan is made: the port every sandbox denies is the one bound (`web.listen`
    // may say port 0), else the one configured.
    let servers = Arc::new(servers::Servers::start(
        &current,
        &store,
        &data_dir,
        &page.page(),
        door,
        &cancel,
        &tracker,
    ));
    let executor =
        allowlist::Executor::new(store.clone(), approvals, Some(servers.manager.clone()));
    let turns = Arc::new(
        turns::Turns::new(store.clone(), executor, llm_router(&config)?)
            .with_feeds(feeds.health())
            .with_server_names(servers.names()),
    );
    load_templates(&config, config_path.as_deref(), &turns, &store).await;
    let voice = speech::VoiceService::start(&config, &turns, &cancel, &tracker).await;
    page.serve(page_host(&store, &servers, &feeds, &turns));
    let state = Arc::new(State {
        descriptors,
        started: Instant::now(),
        data_dir: data_dir.clone(),
        config_path,
        config: current,
        store,
        turns,
        servers,
        feeds,
        page,
        voice,
        tracker: tracker.clone(),
        reloading: tokio::sync::Mutex::new(()),
    });
    tracker.spawn(ipc::serve(listener, state.clone(), cancel.clone()));
    state.servers.spawn(&cancel, &tracker);
    tracing::info!(
        socket = %protocol::socket_path(&data_dir).display(),
        pid = std::process::id(),
        "ready"
    );
    crate::notify::ready();
    crate::notify::spawn_watchdog(&cancel, &tracker);

    wait_for_signal(&state).await?;
    crate::notify::stopping();
    crate::logsink::closing();
    tracing::info!("shutting down");
    cancel.cancel();
    tracker.close();
    if tokio::time::timeout(SHUTDOWN_GRACE, tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("some tasks did not finish within {SHUTDOWN_GRACE:?}; stopping anyway");
    }
    if tokio::time::timeout(SHUTDOWN_GRACE, state.servers.close())
        .await
        .is_err()
    {
        tracing::warn!("some MCP servers did not close within {SHUTDOWN_GRACE:?}");
    }
    let _ = std::fs::remove_file(protocol::socket_path(&data_dir));
    if let Err(e) = state.store.close().await {
        tracing::warn!(error = %e, "closing the store");
    }
    tracing::info!("stopped");
    Ok(())
}

/// The page's host, made for each (re)start of the page: the real store, the cards from the
/// running services, the servers' OAuth, and a turn.
fn page_host(
    store: &store::Store,
    servers: &Arc<servers::Servers>,
    feeds: &Arc<feeds::Feeds>,
    turns: &Arc<turns::Turns>,
) -> page::HostMaker {
    let (store, servers, feeds, turns) =
        (store.clone(), servers.clone(), feeds.clone(), turns.clone());
    Arc::new(move || {
        let redial = {
            let servers = servers.clone();
            move |server: &str| servers.redial(server)
        };
        let oauth = crate::page_host::Authorizations::new(servers.oauth.clone(), Arc::new(redial));
        let cards = Cards {
            servers: servers.clone(),
            feeds: feeds.clone(),
            turns: turns.clone(),
        };
        Arc::new(crate::page_host::PageHost::new(
            store.clone(),
            Arc::new(cards),
            oauth,
            Some(turns.clone()),
        )) as Arc<dyn web::Host>
    })
}

/// Reaps the orphans the daemon adopted as subreaper, every 2 s and at each SIGCHLD.
async fn reap_adopted(cancel: CancellationToken) {
    use tokio::signal::unix::{signal, SignalKind};
    let mut chld = signal(SignalKind::child()).ok();
    let mut seen = Vec::new();
    loop {
        let sigchld = async {
            match chld.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = sigchld => {}
            _ = tokio::time::sleep(Duration::from_secs(2)) => {}
        }
        // A zombie must outlast a whole pass: the runtime reaps its own children at once.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let n = gate::reap_adopted(&mut seen);
        if n > 0 {
            tracing::debug!(reaped = n, "reaped orphans of the servers");
        }
    }
}

/// Descriptors kept for everything but the page's and the IPC socket's connections: the store
/// and its journal, the log, the listeners, MCP children (three pipes each) and HTTP dials,
/// feed polls. The page's connection bound is what is left, so a flood of the page can never
/// take the descriptors that IPC, dials and polls need.
pub(crate) const FD_RESERVE: u64 = 256;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (what a service manager allows) and
/// returns the limit the daemon runs under.
fn raise_descriptor_limit() -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut lim = getrlimit(Resource::Nofile);
    if let (Some(cur), Some(max)) = (lim.current, lim.maximum) {
        if cur < max {
            lim.current = Some(max);
            if let Err(e) = setrlimit(Resource::Nofile, lim) {
                tracing::debug!(error = %e, "cannot raise the descriptor limit");
            }
        }
    }
    let now = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    tracing::debug!(limit = now, "descriptor limit");
    now
}

/// How many connections the page may hold under a descriptor `limit`: what is left after the
/// reserve and every IPC slot, at most [`web::MAX_CONNECTIONS`], at least 4.
pub(crate) fn page_connections(limit: u64) -> usize {
    let room = limit.saturating_sub(FD_RESERVE + ipc::MAX_CONNECTIONS as u64);
    let n = usize::try_from(room)
        .unwrap_or(usize::MAX)
        .min(web::MAX_CONNECTIONS);
    if n < web::MAX_CONNECTIONS {
        tracing::warn!(
            limit,
            page_connections = n.max(4),
            "the descriptor limit is low: the page serves fewer connections at once (raise `ulimit -n`)"
        );
    }
    n.max(4)
}

/// Waits for SIGTERM or SIGINT; each SIGHUP meanwhile reloads the configuration (as `maven
/// reload` does; what it did, or why it was refused, goes to the log).
async fn wait_for_signal(state: &Arc<State>) -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    let mut hup = signal(SignalKind::hangup()).context("cannot watch SIGHUP")?;
    loop {
        tokio::select! {
            _ = term.recv() => {
                tracing::info!("SIGTERM received");
                return Ok(());
            }
            _ = int.recv() => {
                tracing::info!("SIGINT received");
                return Ok(());
            }
            _ = hup.recv() => {
                tracing::info!("SIGHUP received: reloading the configuration");
                let state = state.clone();
                // On a task of its own: a slow reload never holds up a SIGTERM.
                state.tracker.clone().spawn(async move {
                    if let Err(e) = state.reload().await {
                        tracing::error!("reload refused: {}", e.message);
                    }
                });
            }
        }
    }
}

fn prepare_data_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create the data directory {}", dir.display()))?;
    let meta = std::fs::metadata(dir)
        .with_context(|| format!("cannot read the data directory {}", dir.display()))?;
    if !meta.is_dir() {
        anyhow::bail!("{} is not a directory", dir.display());
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).with_context(
            || {
                format!(
                    "cannot restrict the data directory {} to mode 0700",
                    dir.display()
                )
            },
        )?;
    }
    Ok(())
}

/// The model router of the configuration (`None`: the rules router alone).
fn llm_router(config: &Config) -> anyhow::Result<Option<turns::llm::LlmRouter>> {
    if config.router.kind == config::RouterKind::Rules {
        return Ok(None);
    }
    let door = config.door(&config::Door::Router)?;
    Ok(config.router.url.clone().map(|url| {
        let endpoint = turns::llm::Endpoint {
            url,
            model: config
                .router
                .model
                .clone()
                .unwrap_or_else(|| "default".to_owned()),
            context_tokens: config.router.context_tokens,
            headers: config
                .router
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.expose().to_owned()))
                .collect(),
            tools: config.router.tools == config::RouterTools::Auto,
        };
        turns::llm::LlmRouter::new(endpoint, door)
    }))
}

impl Dispatch for State {
    fn dispatch<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            let req = Request::parse(method, &params)?;
            self.answer(req).await?.into_value()
        })
    }

    fn child_name(&self, pid: u32) -> Option<String> {
        self.servers.server_of(pid)
    }
}

impl State {
    /// The configuration in force.
    fn config(&self) -> Arc<Config> {
        current(&self.config)
    }

    /// `maven reload` and SIGHUP: reads the configuration file again and applies the
    /// difference (see [`crate::reload`]) to the services it concerns. A file that does not
    /// validate is refused with the error `maven config check` gives, and the configuration in
    /// force stays; so does one whose reload is refused because another is being applied.
    pub(crate) async fn reload(&self) -> Result<ReloadView, RpcError> {
        let Ok(_applying) = self.reloading.try_lock() else {
            return Err(RpcError::internal(
                "a reload is already being applied; nothing changed by this one (try again when it is done)",
            ));
        };
        let config = match Config::load(self.config_path.as_deref()) {
            Ok(c) => Arc::new(c),
            Err(e) => {
                tracing::error!("reload refused, the configuration in force stays: {e}");
                return Err(RpcError::invalid_params(format!(
                    "{e}\nthe configuration in force stays; nothing changed"
                )));
            }
        };
        let old = self.config();
        let diff = crate::reload::Diff::new(&old, &config);
        let mut view = ReloadView {
            config: config.source.as_ref().map(|p| p.display().to_string()),
            ..ReloadView::default()
        };
        // The router first: what fails here (a door that cannot be built) changes nothing.
        let llm = llm_router(&config).map_err(|e| {
            RpcError::invalid_params(format!(
                "router: {e:#}\nthe configuration in force stays; nothing changed"
            ))
        })?;
        let approvals = Arc::new(crate::policy::approvals(&config));
        allowlist::reconcile::propose_local_acts(
            &self.store,
            &approvals.acts,
            config.source.as_deref(),
        )
        .await
        .map_err(internal)?;
        view.withdrawn = servers::narrow_all(&config, &self.store)
            .await
            .map_err(internal)?;
        *write(&self.config) = config.clone();
        self.turns.reconfigure(approvals, llm);
        load_templates(
            &config,
            self.config_path.as_deref(),
            &self.turns,
            &self.store,
        )
        .await;
        view.router_changed = diff.router_changed();
        view.acts_changed = diff.acts_changed();

        // The page and the voice listener, before the servers: the page's port is what every
        // sandbox denies.
        if diff.page_changed() {
            self.page.restart(&config).await;
            view.page_restarted = true;
        }
        if diff.voice_changed() {
            self.voice.restart(&config).await;
            view.voice_restarted = true;
        }
        self.servers
            .reload(&config, &diff, &self.page.page(), &self.tracker, &mut view)
            .await;
        if diff.feeds_changed() {
            self.feeds
                .restart()
                .await
                .map_err(|e| RpcError::internal(format!("feeds: {e:#}")))?;
            view.feeds_restarted = true;
        }
        tracing::info!(
            added = ?view.added,
            removed = ?view.removed,
            restarted = ?view.restarted,
            kept = view.kept.len(),
            feeds_restarted = view.feeds_restarted,
            page_restarted = view.page_restarted,
            voice_restarted = view.voice_restarted,
            withdrawn = view.withdrawn.len(),
            "configuration reloaded"
        );
        Ok(view)
    }

    /// Answers one IPC request. Every method here reads, but for `turn` (the one path to an
    /// act) and four that change the daemon's state and never call or enable a tool:
    /// `mcp_logout` (forgets a server's OAuth credentials and redials it), `mcp_login` and
    /// `web_enroll` (each keeps the hash of a one-time link in memory), `feeds_refresh` (polls
    /// feeds now, as their schedules would).
    async fn answer(&self, req: Request) -> Result<Reply, RpcError> {
        Ok(match req {
            Request::Status => Reply::Status(Box::new(self.status().await?)),
            Request::Turn {
                text,
                explain,
                conversation,
            } => {
                // Explained before the turn, which may change what a next one finds.
                let explain = match explain {
                    true => Some(self.turns.explain(&text).await),
                    false => None,
                };
                let conversation = conversation.map_or_else(turns::Conversation::terminal, |c| {
                    turns::Conversation::new(turns::Front::Terminal, &c)
                });
                let turn = self.turns.turn(&conversation, &text).await;
                Reply::Turn(TurnView {
                    answer: turn.text(),
                    explain,
                    turn,
                })
            }
            Request::SpokenTurn { text, conversation } => {
                tracing::info!(conversation = %conversation, "voice turn from maven listen");
                // `maven listen` names its session `listen:<pid>`.
                let id = conversation.strip_prefix("listen:").unwrap_or(&conversation);
                let conversation = turns::Conversation::new(turns::Front::Listen, id);
                let turn = self.turns.turn(&conversation, &text).await;
                Reply::Turn(TurnView {
                    answer: turn.text(),
                    explain: None,
                    turn,
                })
            }
            Request::Tools => {
                let rows = self.store.tools().await.map_err(internal)?;
                Reply::Tools(rows.iter().map(json::tool).collect())
            }
            Request::Notes { source, limit } => {
                let notes = self
                    .store
                    .notes(store::NotesQuery {
                        source_prefix: source,
                        limit,
                        ..Default::default()
                    })
                    .await
                    .map_err(internal)?;
                Reply::Notes(notes.iter().map(json::note).collect())
            }
            Request::McpServers => Reply::McpServers(self.servers.status().await),
            Request::Acts { limit } => {
                let rows = self.store.acts_log(limit).await.map_err(internal)?;
                Reply::Acts(rows.iter().map(json::act_record).collect())
            }
            Request::Feeds => Reply::Feeds(self.feeds.status()),
            Request::FeedsRefresh { name } => Reply::FeedsRefresh(self.feeds.refresh(name).await?),
            Request::McpLogout { name } => Reply::McpLogout(self.servers.logout(&name).await?),
            Request::McpAuth { name } => Reply::McpAuth(self.servers.auth(&name)?),
            Request::McpLogin { name } => {
                // `maven mcp login`: a one-time link to the page, which authorizes.
                let name = name.as_str();
                if self.servers.oauth.get(name).is_none() {
                    return Err(RpcError::invalid_params(format!(
                        "no enabled HTTP server named {name:?} is configured"
                    )));
                }
                match self.page.page().web().cloned() {
                    Some(w) => Reply::McpLogin(w.oauth_link(name)),
                    None => return Err(RpcError::internal(
                        "the page is not running (web.listen could not be bound; `maven status` says why), and authorization goes through it",
                    )),
                }
            }
            Request::Reload => Reply::Reload(self.reload().await?),
            Request::WebEnroll => match self.page.page().web().cloned() {
                Some(w) => Reply::WebEnroll(w.enroll_link()),
                None => return Err(RpcError::internal(
                    "the page is not running: web.listen could not be bound (`maven status` says why)",
                )),
            },
        })
    }

    async fn status(&self) -> Result<StatusView, RpcError> {
        let rows = self.store.tools().await.map_err(internal)?;
        let count = |s: store::ToolState| rows.iter().filter(|r| r.state == s).count();
        Ok(StatusView {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            uptime_s: self.started.elapsed().as_secs(),
            data_dir: self.data_dir.display().to_string(),
            config: Some(reads(self.config_path.as_deref()).display().to_string()),
            mcp_servers: self.servers.status().await,
            feeds: self.feeds.status(),
            acts: ActCounts {
                proposed: count(store::ToolState::Proposed),
                enabled: count(store::ToolState::Enabled),
                disabled: count(store::ToolState::Disabled),
                withdrawn: count(store::ToolState::Withdrawn),
            },
            log_lines_dropped: crate::logsink::dropped(),
            web: Some(self.page.page().status()),
            limits: Some({
                let (open, refused) = ipc::stats();
                LimitsView {
                    descriptors: self.descriptors,
                    descriptors_reserved: FD_RESERVE,
                    ipc_connections: open,
                    ipc_max_connections: ipc::MAX_CONNECTIONS,
                    ipc_connections_refused: refused,
                }
            }),
            router: Some(crate::json::router(&self.turns.router())),
        })
    }
}

/// Reads the owner's sentence files and gives the templates to the turn pipeline. A file that
/// does not load is logged (naming its file, line and column) and the phrasebook alone is used
/// until it is fixed and the configuration reloaded; an intent that names no act is a warning.
async fn load_templates(
    config: &Config,
    config_path: Option<&std::path::Path>,
    turns: &turns::Turns,
    store: &store::Store,
) {
    let (templates, errors) = crate::phrases::load(config, config_path);
    for e in &errors {
        tracing::error!(error = %shown::line(e), "a sentence file does not load; the owner's sentences are not used until it is fixed and the configuration reloaded");
    }
    if let Ok(rows) = store.tools().await {
        for intent in templates.unknown_intents(&rows) {
            tracing::warn!(intent = %shown::line(&intent), "a sentence file's intent names no act (yet)");
        }
    }
    turns.set_templates(templates);
}

fn internal(e: store::Error) -> RpcError {
    tracing::error!(error = %e, "store error while answering IPC");
    RpcError::internal(format!("store: {e}"))
}

/// The file a daemon started with `--config explicit` reads, as an absolute path (the default
/// path without one).
pub fn reads(explicit: Option<&std::path::Path>) -> PathBuf {
    let p = explicit
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(config::default_config_path);
    std::path::absolute(&p).unwrap_or(p)
}
