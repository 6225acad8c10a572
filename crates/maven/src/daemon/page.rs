//! The page's place in the daemon: [`PageService`] owns the page in force (listening, or
//! retrying its port) and the token that stops it alone, and is its only handle. A reload that
//! changes `web` serves it afresh: its sessions end, and the owner signs in again.

use std::sync::{Arc, RwLock};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use config::Config;

use super::shared::{read, write};

/// What the page is served with: the host of each page, made anew for each (re)start.
pub(crate) type HostMaker = Arc<dyn Fn() -> Arc<dyn web::Host> + Send + Sync>;

/// The local page of the daemon.
pub(crate) struct PageService {
    running: RwLock<(Arc<web::Page>, CancellationToken)>,
    /// How many connections the page may hold (from the descriptor limit).
    connections: usize,
    cancel: CancellationToken,
    tracker: TaskTracker,
    host: std::sync::OnceLock<HostMaker>,
}

impl PageService {
    /// Binds the page of `config` (or starts retrying its port); [`PageService::serve`]
    /// serves it once its host exists.
    pub(crate) async fn bind(
        config: &Config,
        connections: usize,
        cancel: &CancellationToken,
        tracker: &TaskTracker,
    ) -> PageService {
        let page = web::start(config, connections).await;
        PageService {
            running: RwLock::new((page, cancel.child_token())),
            connections,
            cancel: cancel.clone(),
            tracker: tracker.clone(),
            host: std::sync::OnceLock::new(),
        }
    }

    /// Serves the page bound with `host` (made again for each restart).
    pub(crate) fn serve(&self, host: HostMaker) {
        let (page, stop) = read(&self.running).clone();
        self.tracker.spawn(web::run(page, host(), stop));
        let _ = self.host.set(host);
    }

    /// The page in force.
    pub(crate) fn page(&self) -> Arc<web::Page> {
        read(&self.running).0.clone()
    }

    /// Stops the page and serves it afresh on the new `web` block: its sessions end, and its
    /// listener binds (waiting on its backoff while the old one lets go of the port).
    pub(crate) async fn restart(&self, config: &Config) {
        read(&self.running).1.cancel();
        let page = web::start(config, self.connections).await;
        let stop = self.cancel.child_token();
        *write(&self.running) = (page.clone(), stop.clone());
        match self.host.get() {
            Some(host) => {
                self.tracker.spawn(web::run(page, host(), stop));
            }
            None => tracing::error!("the page cannot be served again: it has no host"),
        }
    }
}
