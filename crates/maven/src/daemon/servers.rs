//! The MCP servers' place in the daemon: [`Servers`] owns the connection manager, the OAuth
//! registry the manager and the page borrow, what each listing did to the allowlist, the
//! servers that did not start and why, each sandboxed server's plan, and the network door of
//! the servers whose network goes through Maven. It is their only handle: status, a reload's
//! restarts, logout, and which server a process is.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use config::Config;
use wire::protocol::RpcError;
use wire::views::{ReloadView, ServerAuth, ServerStatusView};

use super::shared::{current, lock, read, write, Current};
use crate::json::{self, DiscoveryNote};

/// The daemon's MCP servers.
pub(crate) struct Servers {
    /// The MCP connection manager (with no server, it runs nothing).
    pub(crate) manager: mcp::Manager,
    /// The OAuth authorization of each HTTP server: the one registry the manager and the page
    /// borrow.
    pub(crate) oauth: Arc<::oauth::Registry>,
    /// What the last listing of each server did to the allowlist (for status).
    discovery: Arc<Mutex<HashMap<String, DiscoveryNote>>>,
    /// Servers that are not started, and why: a sandbox that cannot be applied (X-2: fail
    /// closed), or a command that does not exist.
    blocked: RwLock<BTreeMap<String, crate::confine::Blocked>>,
    /// Each sandboxed server's resolved plan (its trust line, what it denies).
    plans: RwLock<BTreeMap<String, sandbox::Plan>>,
    /// The door of the servers whose network goes through Maven (their counters).
    door: Arc<crate::netdoor::Door>,
    data_dir: std::path::PathBuf,
    store: store::Store,
    config: Current,
}

impl Servers {
    /// Plans every configured server and builds the manager, which dials nothing yet
    /// ([`Servers::spawn`] starts the servers' tasks once IPC answers, A-2), with the task that
    /// applies its listings to the allowlist.
    pub(crate) fn start(
        config: &Current,
        store: &store::Store,
        data_dir: &std::path::Path,
        page: &web::Page,
        door: Arc<crate::netdoor::Door>,
        cancel: &CancellationToken,
        tracker: &TaskTracker,
    ) -> Servers {
        let now = current(config);
        let crate::confine::Launches {
            servers,
            blocked,
            plans,
        } = crate::confine::launches(&now, data_dir, page.port(), &door);
        // The authorization servers send the owner back to the page's callback, at the address
        // the page actually bound (`web.listen` may say port 0).
        let redirect_uri = page
            .callback_url()
            .unwrap_or_else(|| crate::oauth::redirect_uri(&now));
        let oauth = crate::oauth::registry(&now, store, redirect_uri, tracker);
        let discovery: Arc<Mutex<HashMap<String, DiscoveryNote>>> = Arc::default();
        let options = manager_options(&now, &oauth);
        let (manager, listings) = mcp::Manager::new(servers, options);
        let (cfg, st, notes, stop) = (
            config.clone(),
            store.clone(),
            discovery.clone(),
            cancel.clone(),
        );
        tracker.spawn(async move {
            crate::churn::run(
                listings,
                stop,
                |server, unstable| {
                    let mut notes = lock(&*notes);
                    let note = notes.entry(server.to_owned()).or_default();
                    if unstable.is_some() && note.unstable.is_none() {
                        tracing::warn!(server = %server, "{}", unstable.as_deref().unwrap_or(""));
                    } else if unstable.is_none() && note.unstable.is_some() {
                        tracing::info!(server = %server, "the server's tools settled: its listings are applied as they come again");
                    }
                    note.unstable = unstable;
                },
                |d, unstable| apply_listing(current(&cfg), &st, &notes, unstable, d),
            )
            .await;
        });
        Servers {
            manager,
            oauth,
            discovery,
            blocked: RwLock::new(blocked),
            plans: RwLock::new(plans),
            door,
            data_dir: data_dir.to_path_buf(),
            store: store.clone(),
            config: config.clone(),
        }
    }

    /// Starts every server's task (the first dials happen there).
    pub(crate) fn spawn(&self, cancel: &CancellationToken, tracker: &TaskTracker) {
        self.manager.spawn(cancel, tracker);
    }

    /// Closes every server's connection (its process ends).
    pub(crate) async fn close(&self) {
        self.manager.close().await;
    }

    /// A reload's servers: only those whose blocks changed (`changed`) are touched; what it
    /// did goes into `view`. `page` is the page in force (its port every sandbox denies, its
    /// callback every authorization server sends the owner back to).
    pub(crate) async fn reload(
        &self,
        config: &Arc<Config>,
        diff: &crate::reload::Diff<'_>,
        page: &web::Page,
        tracker: &TaskTracker,
        view: &mut ReloadView,
    ) {
        let changed = |name: &str| diff.server_changed(name);
        let crate::confine::Launches {
            servers,
            blocked,
            plans,
        } = crate::confine::launches(config, &self.data_dir, page.port(), &self.door);
        view.not_started = blocked
            .iter()
            .map(|(n, b)| (n.clone(), b.why.clone()))
            .collect();
        *write(&self.blocked) = blocked;
        *write(&self.plans) = plans;
        crate::oauth::refill(
            &self.oauth,
            config,
            &self.store,
            // The page's callback as it is now (a reload may have moved the page).
            page.callback_url()
                .unwrap_or_else(|| crate::oauth::redirect_uri(config)),
            &changed,
            tracker,
        );
        let applied = self
            .manager
            .apply(servers, manager_options(config, &self.oauth), changed)
            .await;
        {
            let mut notes = lock(&self.discovery);
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
        let (restarted, switched_on): (Vec<String>, Vec<String>) =
            restarted.into_iter().partition(|n| diff.was_enabled(n));
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
    }

    /// Dials a server again.
    pub(crate) fn redial(&self, server: &str) {
        self.manager.redial(server);
    }

    /// Each configured server's `serverInfo.name`, as its live (or last) connection said it.
    pub(crate) fn names(&self) -> turns::templates::ServerNames {
        let manager = self.manager.clone();
        Arc::new(move || {
            manager
                .status()
                .into_iter()
                .filter_map(|s| s.server_info.map(|(name, _)| (s.name, name)))
                .collect()
        })
    }

    /// Why this server is unstable (its tools change too often), while it is.
    pub(crate) fn unstable(&self, server: &str) -> Option<String> {
        lock(&self.discovery)
            .get(server)
            .and_then(|n| n.unstable.clone())
    }

    /// `maven mcp logout NAME`: forget the server's OAuth credentials (revoked first where
    /// the authorization server offers it) and dial it again. It changes state (the server's
    /// credentials and its connection), and calls no tool and enables none.
    pub(crate) async fn logout(&self, name: &str) -> Result<wire::views::ForgottenView, RpcError> {
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
    pub(crate) fn auth(&self, name: &str) -> Result<wire::views::AuthView, RpcError> {
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
    pub(crate) async fn status(&self) -> Vec<ServerStatusView> {
        let live = self.manager.status();
        let config = current(&self.config);
        let rows = self.store.tools().await.unwrap_or_default();
        // Read in place, after the last await: no lock is held across one.
        let plans = read(&self.plans);
        let blocked = read(&self.blocked);
        let auth = self.auth_states();
        let notes = lock(&self.discovery).clone();
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
                                    at: json::time_str(r.at),
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

    /// The configured stdio server whose process is `pid`, by its command line (the launcher
    /// executes a sandboxed server under its own command and arguments).
    pub(crate) fn server_of(&self, pid: u32) -> Option<String> {
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
        let config = current(&self.config);
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

/// Withdraws every row that a server's block no longer allows (a narrowed `allow_tools` or
/// `max_tools`), at start and at each reload, before the server is listed again.
pub(crate) async fn narrow_all(
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
    notes: &Mutex<HashMap<String, DiscoveryNote>>,
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
    lock(notes).insert(d.server.clone(), note);
}
