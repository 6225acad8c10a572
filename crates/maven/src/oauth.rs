//! The binary's side of MCP OAuth: the credential adapter (the store's table `mcp_oauth`, one
//! row per (server, issuer), behind `oauth::CredentialStore`; never logged, never over IPC or
//! to the page), the authorization of each configured HTTP server built from its block, the
//! daemon's one `oauth::Registry` of them, and what `maven mcp inspect` and `maven mcp logout`
//! read offline (under the daemon's lock). The `maven mcp login` and `logout` commands are
//! `cmd::mcp_login`.

use std::sync::Arc;

use ::oauth::{AuthError, CredentialStore, Credentials, OAuth, OAuthConfig, Registry, StoreFuture};
use config::{Config, McpTarget};

/// Credentials in the store, as the oauth crate's JSON document.
pub(crate) struct StoreCredentials {
    pub(crate) store: store::Store,
}

fn store_error(e: store::Error) -> AuthError {
    AuthError::Store(e.to_string())
}

impl CredentialStore for StoreCredentials {
    fn load<'a>(&'a self, server: &'a str) -> StoreFuture<'a, Vec<Credentials>> {
        Box::pin(async move {
            let rows = self
                .store
                .oauth_credentials(server)
                .await
                .map_err(store_error)?;
            // A row this build cannot read is skipped (it is replaced by the next save).
            Ok(rows
                .into_iter()
                .filter_map(|(_, doc)| serde_json::from_str::<Credentials>(&doc).ok())
                .collect())
        })
    }

    fn save<'a>(&'a self, server: &'a str, creds: &'a Credentials) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let doc = serde_json::to_string(creds)
                .map_err(|e| AuthError::Store(format!("cannot serialise credentials: {e}")))?;
            self.store
                .save_oauth_credentials(server, &creds.issuer, &doc)
                .await
                .map_err(store_error)
        })
    }

    fn forget<'a>(&'a self, server: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.store
                .forget_oauth_credentials(server)
                .await
                .map(|_| ())
                .map_err(store_error)
        })
    }
}

/// The page's OAuth callback, where authorization servers send the owner back.
pub(crate) fn redirect_uri(config: &Config) -> String {
    format!("http://{}/oauth/callback", config.web.listen)
}

/// The daemon's one registry of authorizations: every HTTP server has its OAuth authorization,
/// its credentials in the store; it acts only on a 401 or 403 of its server, or once the owner
/// has authorized it. The connection manager and the page borrow it. The kept credentials are
/// read once, now, on a task of `tracker`: the status reads them without waiting.
pub(crate) fn registry(
    config: &Config,
    store: &store::Store,
    redirect_uri: String,
    tracker: &tokio_util::task::TaskTracker,
) -> Arc<Registry> {
    let registry = Arc::new(Registry::default());
    refill(&registry, config, store, redirect_uri, &|_| true, tracker);
    registry
}

/// Makes the registry's members those of `config` (a reload): the authorization of a server
/// whose block did not change (`changed` says no) is kept as it is, tokens and all; a new or
/// changed one is built afresh and its kept credentials read on a task of `tracker`.
pub(crate) fn refill(
    registry: &Arc<Registry>,
    config: &Config,
    store: &store::Store,
    redirect_uri: String,
    changed: &dyn Fn(&str) -> bool,
    tracker: &tokio_util::task::TaskTracker,
) {
    let creds: Arc<dyn CredentialStore> = Arc::new(StoreCredentials {
        store: store.clone(),
    });
    let mut fresh = Vec::new();
    let members: Vec<Arc<OAuth>> = config
        .mcp_servers
        .keys()
        .filter_map(|name| match registry.get(name) {
            Some(o) if !changed(name) => Some(o),
            _ => {
                let o = Arc::new(for_server_with(
                    config,
                    name,
                    creds.clone(),
                    redirect_uri.clone(),
                )?);
                fresh.push(o.clone());
                Some(o)
            }
        })
        .collect();
    registry.set(members);
    tracker.spawn(async move {
        for o in fresh {
            if let Err(e) = o.load().await {
                tracing::warn!(server = %o.server(), error = %e, "cannot read the kept OAuth credentials");
            }
        }
    });
}

/// The authorization of one configured HTTP server (`None` for a local one), through the
/// server's own door.
pub(crate) fn for_server(
    config: &Config,
    name: &str,
    creds: Arc<dyn CredentialStore>,
) -> Option<OAuth> {
    for_server_with(config, name, creds, redirect_uri(config))
}

fn for_server_with(
    config: &Config,
    name: &str,
    creds: Arc<dyn CredentialStore>,
    redirect_uri: String,
) -> Option<OAuth> {
    let block = config.mcp_servers.get(name)?;
    let McpTarget::Http { url, .. } = &block.target else {
        return None;
    };
    let server = config.mcp_server(name)?;
    let mcp::Transport::Http { door, .. } = &server.transport else {
        return None;
    };
    let fetcher = webfetch::Fetcher::new(door.clone());
    let dpop = block.oauth.dpop;
    Some(
        OAuth::new(
            OAuthConfig {
                server: name.to_owned(),
                resource_url: url.clone(),
                client_id: block.oauth.client_id.clone(),
                client_secret: block
                    .oauth
                    .client_secret
                    .as_ref()
                    .map(|s| s.expose().to_owned()),
                client_metadata_url: block.oauth.client_metadata_url.clone(),
                redirect_uri,
                client_name: "Maven".to_owned(),
            },
            fetcher,
            creds,
        )
        .with_dpop(dpop)
        .with_grant(block.oauth.grant.clone()),
    )
    .map(|o| match &block.oauth.private_key_file {
        Some(path) => o.with_client_key_file(path.clone(), block.oauth.key_id.clone()),
        None => o,
    })
}

/// Credentials read from the store and never written: what `maven mcp inspect` sees offline.
struct ReadOnly(StoreCredentials);

impl CredentialStore for ReadOnly {
    fn load<'a>(&'a self, server: &'a str) -> StoreFuture<'a, Vec<Credentials>> {
        self.0.load(server)
    }

    fn save<'a>(&'a self, _server: &'a str, _creds: &'a Credentials) -> StoreFuture<'a, ()> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn forget<'a>(&'a self, _server: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Who holds a server's credentials for a command of the command line.
pub(crate) enum Holder {
    /// The running daemon, which said this of the server's authorization (`mcp_auth`), or
    /// why it could not; the command never sees its tokens and never opens the store.
    Daemon(Result<wire::views::AuthView, String>),
    /// No daemon runs: the command holds the data directory's lock (so none starts) and
    /// reads the store itself.
    Offline(
        #[allow(dead_code)] // held, not read: the lock lives as long as the command
        Option<crate::datadir::DataLock>,
    ),
}

/// The store of the data directory for an offline command: its lock taken first (the
/// daemon's; it fails when a daemon holds the directory), then the database opened.
/// `Ok(None)` when there is no database yet.
pub(crate) async fn offline_store(
    data_dir: &std::path::Path,
    db: &std::path::Path,
) -> Result<Option<(crate::datadir::DataLock, store::Store)>, String> {
    if !db.exists() {
        return Ok(None);
    }
    let lock = crate::datadir::DataLock::acquire(data_dir).map_err(|e| format!("{e:#}"))?;
    let store = lock
        .open_store()
        .await
        .map_err(|e| format!("cannot open the store {}: {e}", db.display()))?;
    Ok(Some((lock, store)))
}

/// `maven mcp inspect`'s authorization of a server: with a daemon running, one that has no
/// credentials at all (the daemon's never leave it; it says what it holds over IPC);
/// without one, the kept credentials read-only, under the daemon's lock. Never refreshes,
/// registers or writes. `Err`: why it cannot be read.
pub(crate) async fn for_inspect(
    config: &Config,
    name: &str,
    data_dir: &std::path::Path,
) -> Result<Option<(Arc<OAuth>, Holder)>, String> {
    if !matches!(
        config.mcp_servers.get(name).map(|b| &b.target),
        Some(McpTarget::Http { .. })
    ) {
        return Ok(None);
    }
    let memory = || -> Arc<dyn CredentialStore> { Arc::new(::oauth::MemoryStore::default()) };
    let req = wire::methods::Request::McpAuth {
        name: name.to_owned(),
    };
    match crate::ipc::client::ask::<wire::views::AuthView>(data_dir, &req).await {
        Ok(said) => {
            let said = Ok(said);
            Ok(for_server(config, name, memory())
                .map(|o| (Arc::new(o.read_only()), Holder::Daemon(said))))
        }
        Err(crate::ipc::client::IpcError::NoDaemon { .. }) => {
            let db = data_dir.join(crate::datadir::DB_NAME);
            let (creds, lock): (Arc<dyn CredentialStore>, _) = match offline_store(data_dir, &db)
                .await?
            {
                Some((lock, store)) => (Arc::new(ReadOnly(StoreCredentials { store })), Some(lock)),
                None => (memory(), None),
            };
            let Some(o) = for_server(config, name, creds) else {
                return Ok(None);
            };
            let o = Arc::new(o.read_only());
            o.load().await.map_err(|e| e.to_string())?;
            Ok(Some((o, Holder::Offline(lock))))
        }
        // A daemon runs but cannot say (a disabled server, an older daemon): its store is
        // still not ours to open.
        Err(e) => Ok(for_server(config, name, memory())
            .map(|o| (Arc::new(o.read_only()), Holder::Daemon(Err(e.to_string()))))),
    }
}
