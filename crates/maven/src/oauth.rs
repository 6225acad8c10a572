//! The daemon's side of MCP OAuth: credentials kept by the store (table `mcp_oauth`, one row
//! per (server, issuer); never logged, never over IPC or to the page), and the authorization
//! object of each configured HTTP server, built from its block.

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
    Some(OAuth::new(
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
    ))
}

/// For a command that runs without the daemon (`maven mcp inspect`, `maven mcp logout`): the
/// server's authorization with the credentials of the data directory's store when there is
/// one (the daemon may hold it open too), else in memory.
pub(crate) async fn offline(
    config: &Config,
    name: &str,
    db: &std::path::Path,
) -> Option<Arc<OAuth>> {
    let creds: Arc<dyn CredentialStore> = match db.exists() {
        true => match store::Store::open(db).await {
            Ok(store) => Arc::new(StoreCredentials { store }),
            Err(_) => Arc::new(mcp::oauth::MemoryStore::default()),
        },
        false => Arc::new(mcp::oauth::MemoryStore::default()),
    };
    for_server(config, name, creds).map(Arc::new)
}

/// `maven mcp logout NAME`: through the daemon (which holds the tokens in use), else offline.
pub(crate) async fn logout(
    config: Config,
    name: String,
    data_dir: std::path::PathBuf,
    db: std::path::PathBuf,
) -> std::process::ExitCode {
    use std::process::ExitCode;
    if !matches!(
        config.mcp_servers.get(&name).map(|b| &b.target),
        Some(McpTarget::Http { .. })
    ) {
        eprintln!("maven mcp logout: no HTTP server named {name:?} is configured");
        return ExitCode::from(crate::exit::EXIT_USAGE);
    }
    let params = serde_json::json!({ "name": name });
    match crate::ipc::client::call(&data_dir, "mcp_logout", params).await {
        Ok(_) => {
            println!("{name}: OAuth credentials forgotten");
            return ExitCode::SUCCESS;
        }
        Err(e) if !matches!(e, crate::ipc::client::IpcError::NoDaemon { .. }) => {
            eprintln!("maven mcp logout: {e}");
            return ExitCode::from(crate::exit::EXIT_FAILED);
        }
        Err(_) => {}
    }
    let Some(oauth) = offline(&config, &name, &db).await else {
        eprintln!("maven mcp logout: {name:?} is not an HTTP server");
        return ExitCode::from(crate::exit::EXIT_USAGE);
    };
    match oauth.logout().await {
        Ok(()) => {
            println!("{name}: OAuth credentials forgotten");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("maven mcp logout: {e}");
            ExitCode::from(crate::exit::EXIT_FAILED)
        }
    }
}

/// `maven mcp login NAME`: asks the running daemon for a one-time link to the page (valid
/// 10 minutes). Opening it needs a fresh step-up (passkey or passphrase); the page then sends
/// the browser to the authorization server, which sends it back to the page's
/// `/oauth/callback`; the daemon redeems the code, keeps the tokens and dials again. The
/// command itself never sees a code or a token.
pub(crate) async fn login(
    config: Config,
    name: String,
    data_dir: std::path::PathBuf,
) -> std::process::ExitCode {
    use std::process::ExitCode;
    if !matches!(
        config.mcp_servers.get(&name).map(|b| &b.target),
        Some(McpTarget::Http { .. })
    ) {
        eprintln!("maven mcp login: no HTTP server named {name:?} is configured");
        return ExitCode::from(crate::exit::EXIT_USAGE);
    }
    let params = serde_json::json!({ "name": name });
    match crate::ipc::client::call(&data_dir, "mcp_login", params).await {
        Ok(v) => {
            let url = v["url"].as_str().unwrap_or("");
            let minutes = v["valid_s"].as_u64().unwrap_or(600) / 60;
            println!(
                "Open this link in a browser on this machine within {minutes} minutes; it works once. \
                 Verify with your passkey (or passphrase) there, and the page sends you to the \
                 authorization server:"
            );
            println!("{}", shown::line(url));
            ExitCode::SUCCESS
        }
        Err(crate::ipc::client::IpcError::NoDaemon { .. }) => {
            eprintln!(
                "maven mcp login: the daemon is not running: authorization goes through its page; start it first"
            );
            ExitCode::from(crate::exit::EXIT_FAILED)
        }
        Err(e) => {
            eprintln!("maven mcp login: {e}");
            ExitCode::from(crate::exit::EXIT_FAILED)
        }
    }
}
