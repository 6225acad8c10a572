//! `maven mcp login NAME` and `maven mcp logout NAME`: the owner's commands for a server's
//! OAuth authorization. Login goes through the running daemon's page; logout through the
//! daemon, else offline under its lock.

use std::sync::Arc;

use ::oauth::CredentialStore;
use config::{Config, McpTarget};

use crate::exit::{errln, outln};
use wire::methods::Request;
use wire::views::OAuthLink;

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
    let req = Request::McpLogout { name: name.clone() };
    match crate::ipc::client::ask::<wire::views::ForgottenView>(&data_dir, &req).await {
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
    let (_lock, store) = match crate::oauth::offline_store(&data_dir, &db).await {
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
    let creds: Arc<dyn CredentialStore> = Arc::new(crate::oauth::StoreCredentials {
        store: store.clone(),
    });
    let Some(oauth) = crate::oauth::for_server(&config, &name, creds) else {
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
    let req = Request::McpLogin { name: name.clone() };
    match crate::ipc::client::ask::<OAuthLink>(&data_dir, &req).await {
        Ok(link) => {
            let minutes = link.valid_s / 60;
            outln!(
                "Open this link in a browser on this machine within {minutes} minutes; it works once. \
                 Verify with your passkey (or passphrase) there, and the page sends you to the \
                 authorization server:"
            );
            outln!("{}", shown::line(&link.url));
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
