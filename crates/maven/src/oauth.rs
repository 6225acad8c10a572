//! The daemon's side of MCP OAuth: credentials kept by the store (table `mcp_oauth`, one row
//! per (server, issuer); never logged, never over IPC or to the page), and the authorization
//! object of each configured HTTP server, built from its block.

use crate::exit::{errln, outln};
use std::sync::Arc;

use config::{Config, McpTarget};
use mcp::oauth::{AuthError, CredentialStore, Credentials, OAuth, OAuthConfig, StoreFuture};

/// Credentials in the store, as the mcp crate's JSON document.
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

/// The authorization of one configured HTTP server (`None` for a local one), through the
/// server's own door.
pub(crate) fn for_server(
    config: &Config,
    name: &str,
    creds: Arc<dyn CredentialStore>,
) -> Option<OAuth> {
    for_server_with(config, name, creds, redirect_uri(config))
}

pub(crate) fn for_server_with(
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
        .with_dpop(dpop),
    )
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
    Daemon(Result<crate::views::AuthView, String>),
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
    // The one place besides the daemon that opens the store, and only under its lock.
    let store = store::Store::open(db)
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
    let params = serde_json::json!({ "name": name });
    let memory = || -> Arc<dyn CredentialStore> { Arc::new(mcp::oauth::MemoryStore::default()) };
    match crate::ipc::client::call(data_dir, "mcp_auth", params).await {
        Ok(v) => {
            let said = serde_json::from_value::<crate::views::AuthView>(v)
                .map_err(|e| format!("the daemon's answer is not an authorization: {e}"));
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

/// `maven mcp logout NAME`: through the daemon (which holds the tokens in use), else offline.
///
/// Like login, it needs nothing the daemon has: a configuration this shell cannot load is only
/// an obstacle offline, where this command does the forgetting itself.
pub(crate) async fn logout(
    config: Result<Config, String>,
    name: String,
    data_dir: std::path::PathBuf,
    db: std::path::PathBuf,
) -> std::process::ExitCode {
    use std::process::ExitCode;
    if let Ok(config) = &config {
        if !matches!(
            config.mcp_servers.get(&name).map(|b| &b.target),
            Some(McpTarget::Http { .. })
        ) {
            errln!("maven mcp logout: no HTTP server named {name:?} is configured");
            return ExitCode::from(crate::exit::EXIT_USAGE);
        }
    }
    let params = serde_json::json!({ "name": name });
    match crate::ipc::client::call(&data_dir, "mcp_logout", params).await {
        Ok(_) => {
            outln!("{name}: OAuth credentials forgotten");
            return ExitCode::SUCCESS;
        }
        Err(e) if !matches!(e, crate::ipc::client::IpcError::NoDaemon { .. }) => {
            errln!("maven mcp logout: {e}");
            return ExitCode::from(crate::exit::EXIT_FAILED);
        }
        Err(_) => {}
    }
    let config = match config {
        Ok(c) => c,
        Err(e) => {
            errln!("{e}");
            return ExitCode::from(crate::exit::EXIT_USAGE);
        }
    };
    // Offline: under the daemon's lock, so no daemon starts on the credentials meanwhile.
    let (_lock, store) = match offline_store(&data_dir, &db).await {
        Ok(Some(held)) => held,
        Ok(None) => {
            outln!("{name}: no OAuth credentials kept");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            errln!("maven mcp logout: {e}");
            return ExitCode::from(crate::exit::EXIT_FAILED);
        }
    };
    let creds: Arc<dyn CredentialStore> = Arc::new(StoreCredentials {
        store: store.clone(),
    });
    let Some(oauth) = for_server(&config, &name, creds) else {
        errln!("maven mcp logout: {name:?} is not an HTTP server");
        return ExitCode::from(crate::exit::EXIT_USAGE);
    };
    let done = oauth.logout().await;
    let _ = store.close().await;
    match done {
        Ok(()) => {
            outln!("{name}: OAuth credentials forgotten");
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("maven mcp logout: {e}");
            ExitCode::from(crate::exit::EXIT_FAILED)
        }
    }
}

/// `maven mcp login NAME`: asks the running daemon for a one-time link to the page (valid
/// 10 minutes). Opening it needs a fresh step-up (passkey or passphrase); the page then sends
/// the browser to the authorization server, which sends it back to the page's
/// `/oauth/callback`; the daemon redeems the code, keeps the tokens and dials again. The
/// command itself never sees a code or a token.
///
/// It needs nothing the daemon already has: the configuration is only read to refuse a name
/// that is not an HTTP server early, and one this shell cannot load (a `${ENV}` of
/// `client_secret` the daemon resolved) is no obstacle — the daemon judges the name.
pub(crate) async fn login(
    config: Option<Config>,
    name: String,
    data_dir: std::path::PathBuf,
) -> std::process::ExitCode {
    use std::process::ExitCode;
    if let Some(config) = &config {
        if !matches!(
            config.mcp_servers.get(&name).map(|b| &b.target),
            Some(McpTarget::Http { .. })
        ) {
            errln!("maven mcp login: no HTTP server named {name:?} is configured");
            return ExitCode::from(crate::exit::EXIT_USAGE);
        }
    }
    let params = serde_json::json!({ "name": name });
    match crate::ipc::client::call(&data_dir, "mcp_login", params).await {
        Ok(v) => {
            let url = v["url"].as_str().unwrap_or("");
            let minutes = v["valid_s"].as_u64().unwrap_or(600) / 60;
            outln!(
                "Open this link in a browser on this machine within {minutes} minutes; it works once. \
                 Verify with your passkey (or passphrase) there, and the page sends you to the \
                 authorization server:"
            );
            outln!("{}", shown::line(url));
            ExitCode::SUCCESS
        }
        Err(crate::ipc::client::IpcError::NoDaemon { .. }) => {
            errln!(
                "maven mcp login: the daemon is not running: authorization goes through its page; start it first"
            );
            ExitCode::from(crate::exit::EXIT_FAILED)
        }
        Err(e) => {
            errln!("maven mcp login: {e}");
            ExitCode::from(crate::exit::EXIT_FAILED)
        }
    }
}
