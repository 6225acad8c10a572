//! Who holds a server's credentials for `maven mcp inspect`: the running daemon (which says
//! what it holds over IPC, never its tokens), or, without one, the command itself, reading the
//! kept credentials under the daemon's lock and never writing them.

use std::sync::Arc;

use ::oauth::{CredentialStore, Credentials, OAuth, StoreFuture};
use config::{Config, McpTarget};
use daemon::oauth::{for_server, offline_store, StoreCredentials};

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
        Option<daemon::datadir::DataLock>,
    ),
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
            let db = data_dir.join(daemon::datadir::DB_NAME);
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
