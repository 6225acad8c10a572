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

/// How long `maven mcp login` waits for the owner to come back from the authorization server.
const LOGIN_VALID: std::time::Duration = std::time::Duration::from_secs(10 * 60);
/// Largest callback request head read.
const CALLBACK_HEAD: usize = 8 * 1024;

/// The owner's browser, for `maven mcp login`: the authorization URL is printed (a one-time
/// link, valid 10 minutes), and the authorization server's redirect comes back to a loopback
/// listener of this command (RFC 8252 §7.3), which hands the callback URL to the flow.
struct Browser {
    listener: tokio::sync::Mutex<Option<tokio::net::TcpListener>>,
    base: String,
}

impl mcp::oauth::UserAgent for Browser {
    fn authorize(
        &self,
        url: String,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, AuthError>> + Send + '_>>
    {
        Box::pin(async move {
            let Some(listener) = self.listener.lock().await.take() else {
                // One authorization per login: a step-up asked mid-login needs a new one.
                return Err(AuthError::NoUserAgent);
            };
            println!(
                "Open this link in a browser on this machine within {} minutes to authorize; it works once:\n{}",
                LOGIN_VALID.as_secs() / 60,
                shown::line(&url)
            );
            let wait = async {
                loop {
                    let (stream, peer) = listener.accept().await.map_err(|e| AuthError::Fetch {
                        what: "callback",
                        reason: e.to_string(),
                    })?;
                    if !peer.ip().is_loopback() {
                        continue;
                    }
                    if let Some(target) = read_callback(stream).await {
                        return Ok(format!("{}{target}", self.base));
                    }
                }
            };
            tokio::time::timeout(LOGIN_VALID, wait)
                .await
                .map_err(|_| AuthError::Timeout {
                    what: "authorization (the owner did not come back)",
                    secs: LOGIN_VALID.as_secs(),
                })?
        })
    }
}

/// Read one request head (capped, within 10 s); `Some(path?query)` for `GET /oauth/callback`,
/// answered with a short page; anything else gets a 404 and `None`.
async fn read_callback(mut stream: tokio::net::TcpStream) -> Option<String> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut head = Vec::new();
    let read = async {
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < CALLBACK_HEAD {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Some(())
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), read)
        .await
        .ok()??;
    let text = String::from_utf8_lossy(&head);
    let target = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("GET "))
        .and_then(|l| l.split(' ').next())
        .filter(|t| t.starts_with("/oauth/callback?"))
        .map(str::to_owned);
    let (status, body) = match &target {
        Some(_) => (
            "200 OK",
            "Maven received the authorization; you can close this tab.",
        ),
        None => ("404 Not Found", "Not found."),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nreferrer-policy: no-referrer\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    target
}

/// `maven mcp login NAME`: authorize an HTTP server now. The server is dialled; its 401 starts
/// the discovery and the registration; the owner opens the printed link; the authorization
/// server sends the browser back to this command's loopback callback; the code is redeemed
/// and the tokens kept in the store. The running daemon then reads them and dials again.
pub(crate) async fn login(
    config: Config,
    name: String,
    data_dir: std::path::PathBuf,
    db: std::path::PathBuf,
) -> std::process::ExitCode {
    use std::process::ExitCode;
    let Some(server) = config
        .mcp_server(&name)
        .filter(|s| matches!(s.transport, mcp::Transport::Http { .. }))
    else {
        eprintln!("maven mcp login: no HTTP server named {name:?} is configured");
        return ExitCode::from(crate::exit::EXIT_USAGE);
    };
    let store = match store::Store::open(&db).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("maven mcp login: {e}");
            return ExitCode::from(crate::exit::EXIT_FAILED);
        }
    };
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", 0)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("maven mcp login: cannot listen on loopback: {e}");
            return ExitCode::from(crate::exit::EXIT_FAILED);
        }
    };
    let base = match listener.local_addr() {
        Ok(a) => format!("http://{a}"),
        Err(e) => {
            eprintln!("maven mcp login: {e}");
            return ExitCode::from(crate::exit::EXIT_FAILED);
        }
    };
    let creds: Arc<dyn CredentialStore> = Arc::new(StoreCredentials { store });
    let Some(oauth) = for_server_with(&config, &name, creds, format!("{base}/oauth/callback"))
    else {
        eprintln!("maven mcp login: no HTTP server named {name:?} is configured");
        return ExitCode::from(crate::exit::EXIT_USAGE);
    };
    let oauth = Arc::new(oauth.with_user_agent(Arc::new(Browser {
        listener: tokio::sync::Mutex::new(Some(listener)),
        base,
    })));
    // Forget what was kept, so the dial meets the server's 401 and authorizes afresh.
    if let Err(e) = oauth.logout().await {
        eprintln!("maven mcp login: {e}");
        return ExitCode::from(crate::exit::EXIT_FAILED);
    }
    let options = mcp::ClientOptions {
        oauth: Some(oauth.clone()),
        ..mcp::ClientOptions::default()
    };
    let mut server = server;
    // The owner has ten minutes; the handshake waits with them.
    server.timeouts.init = server
        .timeouts
        .init
        .max(LOGIN_VALID + std::time::Duration::from_secs(60));
    match mcp::Client::connect(&server, options).await {
        Ok(c) => c.close().await,
        Err(e) => {
            eprintln!("maven mcp login: {name}: {}", shown::block(&e.to_string()));
            return ExitCode::from(crate::exit::EXIT_FAILED);
        }
    }
    match oauth.status().await {
        mcp::oauth::AuthStatus::Authorized { issuer, .. } => {
            println!("{name}: authorized by {}", shown::line(&issuer));
        }
        mcp::oauth::AuthStatus::NeedsAuthorization => {
            // The server took the dial without asking: nothing to authorize.
            println!("{name}: the server did not ask for authorization");
        }
    }
    let params = serde_json::json!({ "name": name });
    match crate::ipc::client::call(&data_dir, "mcp_authorized", params).await {
        Ok(_) | Err(crate::ipc::client::IpcError::NoDaemon { .. }) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("maven mcp login: the daemon did not take the new authorization: {e}");
            ExitCode::from(crate::exit::EXIT_FAILED)
        }
    }
}
