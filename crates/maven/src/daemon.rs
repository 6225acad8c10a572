//! The daemon: start-up, the data directory's lock, the task tree, shutdown.
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

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use config::Config;

use crate::exit::{errln, LogFormat, EXIT_FAILED, EXIT_USAGE};
use crate::ipc::server::{self as ipc, BoxFuture, Dispatch};
use crate::json;
use crate::json::DiscoveryNote;
use crate::page_host::StatusSource;
use wire::methods::{Reply, Request};
use wire::protocol::{self, RpcError};
use wire::views::{
    ActCounts, FeedView, LimitsView, ReloadView, ServerAuth, ServerStatusView, StatusView, TurnView,
};

/// How long shutdown waits for tasks before giving up on them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
pub(crate) use crate::datadir::DB_NAME;

/// What `maven daemon` was asked to do.
pub(crate) struct Options {
    pub(crate) config: Option<PathBuf>,
    pub(crate) data_dir: PathBuf,
    pub(crate) log_format: LogFormat,
    pub(crate) log_filter: Option<String>,
}

/// The configuration in force: replaced whole by a reload, read by every task that needs it.
pub(crate) type Current = Arc<std::sync::RwLock<Arc<Config>>>;

/// The feed poller in force and the token that stops it alone: replaced by a reload.
type Feeds = Arc<std::sync::RwLock<Option<(poller::Poller, CancellationToken)>>>;

/// What request handlers share.
pub(crate) struct State {
    /// The open-descriptor limit the daemon runs under.
    descriptors: u64,
    started: Instant,
    data_dir: PathBuf,
    /// `--config` as given (`None`: the default path), read again by each reload.
    config_path: Option<PathBuf>,
    config: Current,
    store: store::Store,
    /// The feed poller and the token that stops it alone; `None` when no feed is enabled
    /// (F-8: no task, no request).
    poller: Feeds,
    /// The MCP connection manager (with no server, it runs nothing).
    manager: mcp::Manager,
    /// The OAuth authorization of each HTTP server: the one registry the manager and the page
    /// borrow.
    oauth: Arc<::oauth::Registry>,
    /// What the last listing of each server did to the allowlist (for status).
    discovery: Arc<std::sync::Mutex<HashMap<String, DiscoveryNote>>>,
    /// The local page, listening or retrying its port.
    web: std::sync::RwLock<(Arc<web::Page>, CancellationToken)>,
    /// How many connections the page may hold (from the descriptor limit).
    page_connections: usize,
    /// The voice listener's own token (`None`: no `voice.listen`), replaced by a reload.
    voice: std::sync::Mutex<Option<CancellationToken>>,
    /// The turn pipeline: the only path that runs an act.
    turns: Arc<turns::Turns>,
    /// Servers that are not started, and why: a sandbox that cannot be applied (X-2: fail
    /// closed), or a command that does not exist.
    blocked: std::sync::RwLock<BTreeMap<String, crate::confine::Blocked>>,
    /// Each sandboxed server's resolved plan (its trust line, what it denies).
    plans: std::sync::RwLock<BTreeMap<String, sandbox::Plan>>,
    /// The door of the servers whose network goes through Maven (their counters).
    door: Arc<crate::netdoor::Door>,
    /// The daemon's token and task tree, for what a reload starts.
    cancel: CancellationToken,
    tracker: TaskTracker,
    /// Held while a reload applies: a second one meanwhile is refused.
    reloading: tokio::sync::Mutex<()>,
    /// The state itself, for the tasks a reload starts (set once it is made).
    me: std::sync::OnceLock<std::sync::Weak<State>>,
}

pub(crate) fn main(opts: Options) -> ExitCode {
    // Whatever descriptor the daemon was started with beyond 0–2 (a key file, a terminal) is
    // closed before anything else is opened: nothing of it reaches a server or an act.
    sandbox::close_inherited();
    init_logging(opts.log_format, opts.log_filter.as_deref());
    let code = start(opts);
    // Every exit waits, bounded, for the log writer: errors and the shutdown sequence reach
    // stderr before the process ends (see `logsink` for what a crash still loses).
    crate::logsink::closing();
    crate::logsink::flush(crate::logsink::FLUSH_GRACE);
    code
}

fn start(opts: Options) -> ExitCode {
    let loaded = match Config::load(opts.config.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            // Each problem on its own line, so a human reads them and a log keeps them.
            errln!("{e}");
            tracing::error!("the configuration is invalid; the daemon does not start");
            return ExitCode::from(EXIT_USAGE);
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
            return ExitCode::from(EXIT_FAILED);
        }
    };
    match rt.block_on(run(opts.data_dir, opts.config, loaded)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            errln!("maven daemon: {e:#}");
            ExitCode::from(EXIT_FAILED)
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
    narrow_all(&config, &store)
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
    let discovery = Arc::new(std::sync::Mutex::new(HashMap::new()));
    let poller_stop = cancel.child_token();
    let poller = crate::poll::start(&config, &store, &poller_stop, &tracker)
        .await?
        .map(|p| (p, poller_stop));
    // the manager is built here but dials nothing; every first dial happens on its
    // server's own task, after the IPC socket is already answering.
    let descriptors = raise_descriptor_limit();
    let page_connections = page_connections(descriptors);
    let web = web::start(&config, page_connections).await;
    // The page is bound before any server's plan is made: the port every sandbox denies is
    // the one bound (`web.listen` may say port 0), else the one configured.
    let page_port = web.port();
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
    let crate::confine::Launches {
        servers,
        blocked,
        plans,
    } = crate::confine::launches(&config, &data_dir, page_port, &door);
    // The authorization servers send the owner back to the page's callback, at the address
    // the page actually bound (`web.listen` may say port 0).
    let redirect_uri = web
        .callback_url()
        .unwrap_or_else(|| crate::oauth::redirect_uri(&config));
    let oauth = crate::oauth::registry(&config, &store, redirect_uri, &tracker);
    let current: Current = Arc::new(std::sync::RwLock::new(config.clone()));
    let manager = start_manager(
        servers, &current, &store, &discovery, &cancel, &tracker, &oauth,
    );
    let executor = allowlist::Executor::new(store.clone(), approvals, Some(manager.clone()));
    let poller = Arc::new(std::sync::RwLock::new(poller));
    let turns = Arc::new(
        turns::Turns::new(store.clone(), executor, llm_router(&config)?)
            .with_feeds(feed_health(&current, &poller))
            .with_server_names(server_names(&manager)),
    );
    load_templates(&config, config_path.as_deref(), &turns, &store).await;
    let voice = start_voice(&config, &turns, &cancel, &tracker).await;
    let page_stop = cancel.child_token();
    let state = Arc::new(State {
        descriptors,
        started: Instant::now(),
        data_dir: data_dir.clone(),
        config_path,
        config: current,
        store,
        poller,
        manager,
        oauth,
        discovery,
        web: std::sync::RwLock::new((web.clone(), page_stop.clone())),
        page_connections,
        voice: std::sync::Mutex::new(voice),
        turns,
        blocked: std::sync::RwLock::new(blocked),
        plans: std::sync::RwLock::new(plans),
        door,
        cancel: cancel.clone(),
        tracker: tracker.clone(),
        reloading: tokio::sync::Mutex::new(()),
        me: std::sync::OnceLock::new(),
    });
    let _ = state.me.set(Arc::downgrade(&state));
    state.serve_page(web, page_stop);
    tracker.spawn(ipc::serve(listener, state.clone(), cancel.clone()));
    state.manager.spawn(&cancel, &tracker);
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
    if tokio::time::timeout(SHUTDOWN_GRACE, state.manager.close())
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

/// Builds the MCP connection manager and the task that applies its listings to the
/// allowlist. Returns at once: nothing is dialled here.
fn start_manager(
    servers: Vec<mcp::Managed>,
    config: &Current,
    store: &store::Store,
    discovery: &Arc<std::sync::Mutex<HashMap<String, DiscoveryNote>>>,
    cancel: &CancellationToken,
    tracker: &TaskTracker,
    oauth: &Arc<::oauth::Registry>,
) -> mcp::Manager {
    // The caller starts the servers' tasks (`Manager::spawn`) once IPC answers.
    let options = manager_options(&current(config), oauth);
    let (manager, listings) = mcp::Manager::new(servers, options);
    let (config, store, notes, cancel) = (
        config.clone(),
        store.clone(),
        discovery.clone(),
        cancel.clone(),
    );
    tracker.spawn(async move {
        crate::churn::run(
            listings,
            cancel,
            |server, unstable| {
                let mut notes = notes.lock().unwrap_or_else(|p| p.into_inner());
                let note = notes.entry(server.to_owned()).or_default();
                if unstable.is_some() && note.unstable.is_none() {
                    tracing::warn!(server = %server, "{}", unstable.as_deref().unwrap_or(""));
                } else if unstable.is_none() && note.unstable.is_some() {
                    tracing::info!(server = %server, "the server's tools settled: its listings are applied as they come again");
                }
                note.unstable = unstable;
            },
            |d, unstable| apply_listing(current(&config), &store, &notes, unstable, d),
        )
        .await;
    });
    manager
}

/// The configuration in force now.
fn current(config: &Current) -> Arc<Config> {
    config.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The manager's options from the configuration: its timing, the servers' authorizations, and
/// a result's text kept up to the frame cap (the executor cuts it to `allowlist::RESULT_CAP`
/// and says by how much).
fn manager_options(config: &Config, oauth: &Arc<::oauth::Registry>) -> mcp::ManagerOptions {
    let mut options = config
        .mcp_timing
        .manager_options()
        .with_oauth(oauth.clone());
    options.client.limits.result_text_cap = options.client.limits.frame_cap;
    options
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

/// Withdraws every row that a server's block no longer allows (a narrowed `allow_tools` or
/// `max_tools`), at start and at each reload, before the server is listed again.
async fn narrow_all(
    config: &Config,
    store: &store::Store,
) -> Result<Vec<(String, String)>, store::Error> {
    let mut out = Vec::new();
    for block in config.mcp_servers.values() {
        out.extend(allowlist::reconcile::narrow(store, &crate::policy::server(block)).await?);
    }
    Ok(out)
}

/// Hands one listing to the allowlist and keeps what it did for status.
async fn apply_listing(
    config: Arc<Config>,
    store: &store::Store,
    notes: &std::sync::Mutex<HashMap<String, DiscoveryNote>>,
    unstable: Option<String>,
    d: mcp::Discovery,
) {
    let Some(block) = config.mcp_servers.get(&d.server) else {
        return;
    };
    let note = match allowlist::reconcile(store, &crate::policy::server(block), &d.tools).await {
        Ok(r) => DiscoveryNote {
            over_cap: r.over_cap(d.tools.len()),
            refused: r.refused,
            error: None,
            unstable,
        },
        Err(e) => {
            tracing::error!(server = %d.server, error = %e, "cannot apply a listing to the allowlist");
            DiscoveryNote {
                error: Some(format!("store: {e}")),
                unstable,
                ..DiscoveryNote::default()
            }
        }
    };
    if let Some(over) = &note.over_cap {
        tracing::warn!(server = %d.server, "{over}");
    }
    notes
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(d.server.clone(), note);
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
        self.server_of(pid)
    }
}

impl State {
    /// The page in force.
    fn page(&self) -> Arc<web::Page> {
        self.web.read().unwrap_or_else(|p| p.into_inner()).0.clone()
    }

    /// Serves `page` under `stop` (its own token: a reload that changes `web` stops it there).
    fn serve_page(self: &Arc<Self>, page: Arc<web::Page>, stop: CancellationToken) {
        let manager = self.manager.clone();
        let redial = move |server: &str| manager.redial(server);
        let oauth = crate::page_host::Authorizations::new(self.oauth.clone(), Arc::new(redial));
        let host = crate::page_host::PageHost::new(
            self.store.clone(),
            self.clone(),
            oauth,
            Some(self.turns.clone()),
        );
        self.tracker.spawn(web::run(page, Arc::new(host), stop));
    }

    /// The configuration in force.
    fn config(&self) -> Arc<Config> {
        current(&self.config)
    }

    /// `maven reload` and SIGHUP: reads the configuration file again and applies the
    /// difference (see [`crate::reload`]). A file that does not validate is refused with the
    /// error `maven config check` gives, and the configuration in force stays; so does one
    /// whose reload is refused because another is being applied.
    pub(crate) async fn reload(&self) -> Result<ReloadView, RpcError> {
        let Ok(_applying) = self.reloading.try_lock() else {
            return Err(RpcError::internal(
                "a reload is already being applied; nothing changed by this one (try again when it is done)",
            ));
        };
        let config = match Config::load(self.config_path.as_deref()) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!("reload refused, the configuration in force stays: {e}");
                return Err(RpcError::invalid_params(format!(
                    "{e}\nthe configuration in force stays; nothing changed"
                )));
            }
        };
        let config = Arc::new(config);
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
        view.withdrawn = narrow_all(&config, &self.store).await.map_err(internal)?;
        *self.config.write().unwrap_or_else(|p| p.into_inner()) = config.clone();
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
            self.restart_page(&config).await;
            view.page_restarted = true;
        }
        if diff.voice_changed() {
            self.restart_voice(&config).await;
            view.voice_restarted = true;
        }

        // The servers: only those whose blocks changed are touched.
        let changed = |name: &str| diff.server_changed(name);
        let crate::confine::Launches {
            servers,
            blocked,
            plans,
        } = crate::confine::launches(&config, &self.data_dir, self.page().port(), &self.door);
        view.not_started = blocked
            .iter()
            .map(|(n, b)| (n.clone(), b.why.clone()))
            .collect();
        *self.blocked.write().unwrap_or_else(|p| p.into_inner()) = blocked;
        *self.plans.write().unwrap_or_else(|p| p.into_inner()) = plans;
        crate::oauth::refill(
            &self.oauth,
            &config,
            &self.store,
            // The page's callback as it is now (a reload may have moved the page).
            self.page()
                .callback_url()
                .unwrap_or_else(|| crate::oauth::redirect_uri(&config)),
            &changed,
            &self.tracker,
        );
        let applied = self
            .manager
            .apply(servers, manager_options(&config, &self.oauth), changed)
            .await;
        {
            let mut notes = self.discovery.lock().unwrap_or_else(|p| p.into_inner());
            for gone in applied.removed.iter().chain(&applied.restarted) {
                notes.remove(gone);
            }
        }
        let enabled = |n: &String| config.mcp_servers.get(n).is_some_and(|b| b.enabled);
        let (added, dark): (Vec<String>, Vec<String>) =
            applied.added.into_iter().partition(enabled);
        let (restarted, dark_too): (Vec<String>, Vec<String>) =
            applied.restarted.into_iter().partition(enabled);
        // A server switched on was not running: it starts, it does not restart.
        let was_on = |n: &String| diff.was_enabled(n);
        let (restarted, switched_on): (Vec<String>, Vec<String>) =
            restarted.into_iter().partition(was_on);
        view.added = added;
        view.added.extend(switched_on);
        view.added.sort();
        view.restarted = restarted;
        view.not_enabled = dark.into_iter().chain(dark_too).collect();
        view.not_enabled.sort();
        // A removed server the manager never ran (it could not start) is removed all the same.
        view.removed = applied.removed;
        for gone in diff.removed_servers() {
            if !view.removed.contains(gone) {
                view.removed.push(gone.clone());
            }
        }
        view.removed.sort();
        view.kept = applied.kept;
        // A kept server that keeps failing is tried again now: a reload is what the owner does
        // after fixing what it lacked (a directory, a grant's owner, a service it needs).
        let live = self.manager.status();
        for name in &view.kept {
            let failing = live
                .iter()
                .any(|s| s.name == *name && matches!(s.state, mcp::ServerState::BackingOff { .. }));
            if failing {
                self.manager.redial(name);
                view.retried.push(name.clone());
            }
        }

        // The feeds: the poller is started afresh on the new list (its state is in the
        // store: nothing is fetched twice, no item noted twice).
        if diff.feeds_changed() {
            let old = self
                .poller
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if let Some((_, stop)) = old {
                stop.cancel();
            }
            let stop = self.cancel.child_token();
            let poller = crate::poll::start(&config, &self.store, &stop, &self.tracker)
                .await
                .map_err(|e| RpcError::internal(format!("feeds: {e:#}")))?;
            *self.poller.write().unwrap_or_else(|p| p.into_inner()) = poller.map(|p| (p, stop));
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

    /// Stops the page and serves it afresh on the new `web` block: its sessions end, and its
    /// listener binds (waiting on its backoff while the old one lets go of the port).
    async fn restart_page(&self, config: &Config) {
        let old = self.web.read().unwrap_or_else(|p| p.into_inner()).1.clone();
        old.cancel();
        let page = web::start(config, self.page_connections).await;
        let stop = self.cancel.child_token();
        *self.web.write().unwrap_or_else(|p| p.into_inner()) = (page.clone(), stop.clone());
        match self.me.get().and_then(std::sync::Weak::upgrade) {
            Some(me) => me.serve_page(page, stop),
            None => tracing::error!("the page cannot be served again: the daemon is stopping"),
        }
    }

    /// Stops the voice listener and starts it on the new `voice` block; its address may take a
    /// moment to be free again, so a bind that finds it in use is tried again, for 2 s at most.
    async fn restart_voice(&self, config: &Config) {
        if let Some(t) = self.voice.lock().unwrap_or_else(|p| p.into_inner()).take() {
            t.cancel();
        }
        let mut started = None;
        for _ in 0..20 {
            match state_voice_listener(config).await {
                Ok(Some((l, gate))) => {
                    let stop = self.cancel.child_token();
                    self.tracker.spawn(crate::voice::serve(
                        l,
                        gate,
                        self.turns.clone(),
                        stop.clone(),
                    ));
                    started = Some(stop);
                    break;
                }
                Ok(None) => break,
                Err(e) if e.source.kind() == std::io::ErrorKind::AddrInUse => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => {
                    tracing::error!(error = %e, "voice: not serving");
                    break;
                }
            }
        }
        *self.voice.lock().unwrap_or_else(|p| p.into_inner()) = started;
    }

    /// The configured stdio server whose process is `pid`, by its command line (the launcher
    /// executes a sandboxed server under its own command and arguments).
    fn server_of(&self, pid: u32) -> Option<String> {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let argv: Vec<String> = raw
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        // A server runs under this binary's launcher: `maven __group-exec -- COMMAND ARGS…`
        // or `maven __sandbox-exec PLAN -- COMMAND ARGS…`.
        let argv = match argv.get(1).map(String::as_str) {
            Some(sandbox::GROUP_ARG) => argv.get(3..).unwrap_or_default(),
            Some(sandbox::LAUNCHER_ARG) => argv.get(4..).unwrap_or_default(),
            _ => &argv[..],
        };
        let config = self.config();
        let names: Vec<&str> = config
            .mcp_servers
            .values()
            .filter(|b| match &b.target {
                config::McpTarget::Stdio { command, args, .. } => {
                    argv.first() == Some(command) && argv.get(1..) == Some(&args[..])
                }
                config::McpTarget::Http { .. } => false,
            })
            .map(|b| b.name.as_str())
            .collect();
        (!names.is_empty()).then(|| names.join(" or "))
    }

    /// Answers one IPC request. Every method here reads, but for `turn` (the one path to an
    /// act) and four that change the daemon's state and never call or enable a tool:
    /// `mcp_logout` (forgets a server's OAuth credentials and redials it), `mcp_login` and
    /// `web_enroll` (each keeps the hash of a one-time link in memory), `feeds_refresh` (polls
    /// feeds now, as their schedules would).
    async fn answer(&self, req: Request) -> Result<Reply, RpcError> {
        Ok(match req {
            Request::Status => Reply::Status(Box::new(self.status().await?)),
            Request::Turn { text, explain } => {
                // Explained before the turn, which may change what a next one finds.
                let explain = match explain {
                    true => Some(self.turns.explain(&text).await),
                    false => None,
                };
                let turn = self
                    .turns
                    .turn(&turns::Conversation::terminal(), &text)
                    .await;
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
            Request::McpServers => Reply::McpServers(self.mcp_servers().await),
            Request::Acts { limit } => {
                let rows = self.store.acts_log(limit).await.map_err(internal)?;
                Reply::Acts(rows.iter().map(json::act_record).collect())
            }
            Request::Feeds => Reply::Feeds(self.feeds()),
            Request::FeedsRefresh { name } => Reply::FeedsRefresh(self.refresh(name).await?),
            Request::McpLogout { name } => Reply::McpLogout(self.mcp_logout(&name).await?),
            Request::McpAuth { name } => Reply::McpAuth(self.mcp_auth(&name)?),
            Request::McpLogin { name } => {
                // `maven mcp login`: a one-time link to the page, which authorizes.
                let name = name.as_str();
                if self.oauth.get(name).is_none() {
                    return Err(RpcError::invalid_params(format!(
                        "no enabled HTTP server named {name:?} is configured"
                    )));
                }
                match self.page().web().cloned() {
                    Some(w) => Reply::McpLogin(w.oauth_link(name)),
                    None => return Err(RpcError::internal(
                        "the page is not running (web.listen could not be bound; `maven status` says why), and authorization goes through it",
                    )),
                }
            }
            Request::Reload => Reply::Reload(self.reload().await?),
            Request::WebEnroll => match self.page().web().cloned() {
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
            mcp_servers: self.mcp_servers().await,
            feeds: self.feeds(),
            acts: ActCounts {
                proposed: count(store::ToolState::Proposed),
                enabled: count(store::ToolState::Enabled),
                disabled: count(store::ToolState::Disabled),
                withdrawn: count(store::ToolState::Withdrawn),
            },
            log_lines_dropped: crate::logsink::dropped(),
            web: Some(self.page().status()),
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

    /// `maven mcp logout NAME`: forget the server's OAuth credentials (revoked first where
    /// the authorization server offers it) and dial it again. It changes state (the server's
    /// credentials and its connection), and calls no tool and enables none.
    async fn mcp_logout(&self, name: &str) -> Result<wire::views::ForgottenView, RpcError> {
        let Some(oauth) = self.oauth.get(name) else {
            return Err(RpcError::invalid_params(format!(
                "no HTTP server named {name:?} is configured"
            )));
        };
        oauth
            .logout()
            .await
            .map_err(|e| RpcError::internal(e.to_string()))?;
        // As the page's Disconnect: the connection made with the forgotten token is dropped,
        // and the dial that follows finds the server asking again.
        self.manager.redial(name);
        tracing::info!(server = %name, "OAuth credentials forgotten (maven mcp logout)");
        Ok(wire::views::ForgottenView {
            server: name.to_owned(),
            forgotten: true,
        })
    }

    /// `maven mcp inspect NAME` next to a running daemon: the server's authorization as the
    /// daemon holds it (no token, no secret), so the command never opens the store.
    fn mcp_auth(&self, name: &str) -> Result<wire::views::AuthView, RpcError> {
        let Some(oauth) = self.oauth.get(name) else {
            return Err(RpcError::invalid_params(format!(
                "no enabled HTTP server named {name:?} is configured"
            )));
        };
        Ok(json::auth_view(&oauth))
    }

    /// Each HTTP server's OAuth state for status ([`json::server_auth`]). Reads what the
    /// authorizations hold now: never waits on an authorization server.
    fn auth_states(&self) -> HashMap<String, ServerAuth> {
        self.oauth
            .all()
            .iter()
            .filter_map(|o| {
                Some((
                    o.server().to_owned(),
                    json::server_auth(&json::auth_view(o))?,
                ))
            })
            .collect()
    }

    /// Status of every configured server: the manager's live view, what the allowlist
    /// made of its listings, and the counts of its rows.
    pub(crate) async fn mcp_servers(&self) -> Vec<ServerStatusView> {
        let live = self.manager.status();
        let config = self.config();
        let rows = self.store.tools().await.unwrap_or_default();
        // Read in place, after the last await: no lock is held across one.
        let plans = self.plans.read().unwrap_or_else(|p| p.into_inner());
        let blocked = self.blocked.read().unwrap_or_else(|p| p.into_inner());
        let auth = self.auth_states();
        let notes = self
            .discovery
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        config
            .mcp_servers
            .values()
            .map(|block| {
                let status = live.iter().find(|s| s.name == block.name);
                let count = |st: store::ToolState| {
                    rows.iter()
                        .filter(|r| {
                            r.kind == store::ToolKind::Mcp
                                && r.server == block.name
                                && r.state == st
                        })
                        .count()
                };
                let mut view = json::server_status(
                    block,
                    status,
                    notes.get(&block.name),
                    count(store::ToolState::Proposed),
                    count(store::ToolState::Enabled),
                );
                if let Some(plan) = plans.get(&block.name) {
                    view.trust = plan.trust();
                    view.network = self
                        .door
                        .tally(&block.name)
                        .map(|t| wire::views::NetworkView {
                            connections: t.connections,
                            refused: t.refused,
                            open: t.open,
                            bytes_out: t.bytes_out,
                            bytes_in: t.bytes_in,
                            last_refused: self
                                .door
                                .refusals(&block.name)
                                .into_iter()
                                .map(|r| wire::views::RefusedConnection {
                                    at: crate::json::time_str(r.at),
                                    host: r.host,
                                    port: r.port,
                                    why: r.why,
                                })
                                .collect(),
                        });
                    // A server that is not up, whose last words name a path its sandbox
                    // denies: say which key to add, beside what it said.
                    let down = view.state != wire::views::ServerState::Ready;
                    let hint = view
                        .stderr_tail
                        .as_deref()
                        .filter(|_| down)
                        .and_then(|t| plan.denial_hint(t));
                    if let Some(hint) = hint {
                        view.last_error = Some(match view.last_error.take() {
                            Some(e) => format!("{hint} ({e})"),
                            None => hint,
                        });
                    }
                }
                if let Some(b) = blocked.get(&block.name) {
                    if block.enabled {
                        view.state = if b.command_missing {
                            wire::views::ServerState::CommandNotFound
                        } else {
                            wire::views::ServerState::SandboxRefused
                        };
                    }
                    view.last_error = Some(b.why.clone());
                }
                view.auth = auth.get(&block.name).cloned();
                view
            })
            .collect()
    }

    /// `maven feeds refresh [NAME]`: the poller polls now, within each host's spacing and a
    /// failing feed's backoff.
    async fn refresh(
        &self,
        name: Option<String>,
    ) -> Result<Vec<wire::views::RefreshView>, RpcError> {
        let running = self
            .poller
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|(p, _)| p.clone());
        let Some(p) = running else {
            return Err(RpcError::invalid_params(
                match self.config().feeds.is_empty() {
                    true => "no feeds are configured: add one with `maven feeds add URL`",
                    false => "no feed is enabled, so none is polled",
                },
            ));
        };
        let done = p.refresh(name.as_deref()).await.map_err(|e| match e {
            poller::Error::UnknownFeed(_) | poller::Error::Disabled { .. } => {
                RpcError::invalid_params(e.to_string())
            }
            e => RpcError::internal(e.to_string()),
        })?;
        Ok(done.into_iter().map(json::refreshed).collect())
    }

    pub(crate) fn feeds(&self) -> Vec<FeedView> {
        let poller = self.poller.read().unwrap_or_else(|p| p.into_inner());
        match poller.as_ref() {
            Some((p, _)) => p.status().iter().map(json::feed_status).collect(),
            None => self
                .config()
                .feeds
                .iter()
                .map(json::configured_feed)
                .collect(),
        }
    }
}

/// The running daemon: the manager's live view of each server, the poller's of each feed.
impl StatusSource for State {
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<ServerStatusView>> {
        Box::pin(State::mcp_servers(self))
    }
    fn feeds(&self) -> BoxFuture<'_, Vec<FeedView>> {
        Box::pin(std::future::ready(State::feeds(self)))
    }
    fn question(&self) -> Option<turns::Question> {
        self.turns.question(&turns::Conversation::terminal())
    }
    fn unstable(&self, server: &str) -> Option<String> {
        self.discovery
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            .and_then(|n| n.unstable.clone())
    }
}

/// What the digest is told of the feeds: every configured one and, while its polls fail (or a
/// 410 stopped it), the poller's last error.
/// Each configured server's `serverInfo.name`, as its live (or last) connection said it.
fn server_names(manager: &mcp::Manager) -> turns::templates::ServerNames {
    let manager = manager.clone();
    Arc::new(move || {
        manager
            .status()
            .into_iter()
            .filter_map(|s| s.server_info.map(|(name, _)| (s.name, name)))
            .collect()
    })
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

fn feed_health(config: &Current, poller: &Feeds) -> turns::FeedsSource {
    let (config, poller) = (config.clone(), poller.clone());
    Arc::new(move || {
        let running = poller
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|(p, _)| p.status());
        match running {
            Some(status) => status
                .into_iter()
                .map(|s| turns::FeedHealth {
                    failing: s.last_error.filter(|_| s.state != poller::FeedState::Off),
                    name: s.name,
                })
                .collect(),
            None => current(&config)
                .feeds
                .iter()
                .map(|f| turns::FeedHealth {
                    name: f.name.clone(),
                    failing: None,
                })
                .collect(),
        }
    })
}

fn internal(e: store::Error) -> RpcError {
    tracing::error!(error = %e, "store error while answering IPC");
    RpcError::internal(format!("store: {e}"))
}

/// `voice.listen` could not be bound.
#[derive(Debug, thiserror::Error)]
#[error("voice.listen {addr}: cannot listen: {source}")]
struct VoiceBindError {
    addr: std::net::SocketAddr,
    source: std::io::Error,
}

/// Serves the Wyoming protocol on `voice.listen`, if configured, under a token of its own
/// (returned: a reload stops it there). A listen that cannot be had is the owner's to fix and
/// logged; the rest of the daemon runs.
async fn start_voice(
    config: &Config,
    turns: &Arc<turns::Turns>,
    cancel: &CancellationToken,
    tracker: &TaskTracker,
) -> Option<CancellationToken> {
    match state_voice_listener(config).await {
        Ok(Some((l, gate))) => {
            let stop = cancel.child_token();
            tracker.spawn(crate::voice::serve(l, gate, turns.clone(), stop.clone()));
            Some(stop)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::error!(error = %e, "voice: not serving");
            None
        }
    }
}

/// The Wyoming listener of `voice.listen`, bound, with who may connect; `None` without one.
async fn state_voice_listener(
    config: &config::Config,
) -> Result<Option<(tokio::net::TcpListener, crate::voice::Gate)>, VoiceBindError> {
    let Some(addr) = config.voice.listen else {
        return Ok(None);
    };
    let l = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| VoiceBindError { addr, source })?;
    tracing::info!(listen = %addr, "voice: serving the Wyoming protocol");
    Ok(Some((
        l,
        crate::voice::Gate::for_listen(addr, &config.voice.peers),
    )))
}

/// The file a daemon started with `--config explicit` reads, as an absolute path (the default
/// path without one).
pub(crate) fn reads(explicit: Option<&std::path::Path>) -> PathBuf {
    let p = explicit
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(config::default_config_path);
    std::path::absolute(&p).unwrap_or(p)
}
