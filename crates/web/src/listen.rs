//! The page's listener. It is bound at start-up when its port is free; when the port is busy
//! (a previous daemon still exiting, another program for a moment) the daemon runs on and the
//! listener is bound again and again, waiting on the one retry delay (`backoff::Backoff`),
//! until the port frees: the page then comes up by itself. Meanwhile `maven status` says
//! that the page is not listening, and why.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::app::{Web, RP_ID};
use super::limits::Limits;
use super::session::Clock;
use wire::views::{PageListening, WebStatusView};

/// The wait before the first retry of a busy port; it doubles with each failure.
pub(crate) const RETRY_FIRST: Duration = Duration::from_secs(1);
/// The longest wait between two attempts: a port that frees is taken within about this.
pub(crate) const RETRY_CAP: Duration = Duration::from_secs(15);

/// The page, listening or not yet: its state once bound, and what status says of it;
/// `web::run` serves it.
pub struct Page {
    cfg: config::WebConfig,
    max_connections: usize,
    clock: Arc<dyn Clock>,
    /// The page's state, made once the listener is bound (its address decides the origins).
    web: OnceLock<Arc<Web>>,
    /// The listener bound at start-up, until [`Page::listener`] hands it over.
    bound: Mutex<Option<TcpListener>>,
    /// What status says: listening, or why not.
    listening: Mutex<PageListening>,
    /// The retry delay, taken by [`Page::listener`].
    backoff: Mutex<Option<backoff::Backoff>>,
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page")
            .field("listen", &self.cfg.listen)
            .finish()
    }
}

/// Whether binding may succeed later: the port is busy, or the address is not (yet) on this
/// machine. A refusal that time does not change (a privileged port) is not retried.
fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::AddrInUse | std::io::ErrorKind::AddrNotAvailable
    )
}

/// Binds `addr`; returns the listener with the address actually bound.
async fn bind(addr: SocketAddr) -> std::io::Result<(TcpListener, SocketAddr)> {
    let l = TcpListener::bind(addr).await?;
    let bound = l.local_addr()?;
    Ok((l, bound))
}

fn why(cfg: &config::WebConfig, e: &std::io::Error) -> String {
    format!("cannot listen on {} (web.listen): {e}", cfg.listen)
}

impl Page {
    /// Tries to bind `web.listen` once; a failure is remembered for status and retried by
    /// [`Page::listener`].
    pub async fn start(
        cfg: &config::WebConfig,
        max_connections: usize,
        clock: Arc<dyn Clock>,
        backoff: backoff::Backoff,
    ) -> Arc<Page> {
        let page = Page {
            cfg: cfg.clone(),
            max_connections,
            clock,
            web: OnceLock::new(),
            bound: Mutex::new(None),
            listening: Mutex::new(PageListening::Unknown),
            backoff: Mutex::new(Some(backoff)),
        };
        match bind(cfg.listen).await {
            Ok((l, addr)) => {
                if page.made(addr) {
                    *lock(&page.bound) = Some(l);
                }
            }
            Err(e) => {
                let retrying = transient(&e);
                let why = why(cfg, &e);
                if retrying {
                    tracing::error!("{why}; the daemon runs without the page for now and binds it again until the port frees (is another program on that port? set web.listen)");
                } else {
                    tracing::error!("{why}; the daemon runs without the page");
                }
                page.set(PageListening::NotListening { why, retrying });
            }
        }
        Arc::new(page)
    }

    /// Makes the page's state for the address bound; false (and status says why) when it
    /// cannot be made.
    fn made(&self, addr: SocketAddr) -> bool {
        if !addr.ip().is_loopback() {
            tracing::warn!(%addr, "the page listens beyond loopback (web.listen); it is plain HTTP");
        }
        match Web::new(
            &self.cfg,
            addr,
            self.clock.clone(),
            Limits::new(self.max_connections),
        ) {
            Ok(w) => {
                tracing::info!(url = %format!("{}/tools", w.base_url()), "the page is listening");
                let _ = self.web.set(Arc::new(w));
                self.set(PageListening::Listening {
                    addr: addr.to_string(),
                });
                true
            }
            Err(e) => {
                tracing::error!("{e:#}; the daemon runs without the page");
                self.set(PageListening::NotListening {
                    why: format!("{e:#}"),
                    retrying: false,
                });
                false
            }
        }
    }

    fn set(&self, l: PageListening) {
        *lock(&self.listening) = l;
    }

    /// The page's state, once it listens.
    pub fn web(&self) -> Option<&Arc<Web>> {
        self.web.get()
    }

    /// The page's port: the one bound, else the one configured (0 when `web.listen` says any
    /// port and none is bound yet). Every sandbox denies it.
    pub fn port(&self) -> u16 {
        self.web()
            .map_or(self.cfg.listen.port(), |w| w.addr().port())
    }

    /// The page's OAuth callback, once it listens.
    pub fn callback_url(&self) -> Option<String> {
        self.web().map(|w| w.callback_url())
    }

    /// The page in `maven status`: its limits and counters once it listens; before, the
    /// configured address and why it is not listening.
    pub fn status(&self) -> WebStatusView {
        let listening = lock(&self.listening).clone();
        match self.web() {
            Some(w) => WebStatusView {
                listening,
                ..w.status()
            },
            None => WebStatusView {
                listening,
                url: format!("http://{RP_ID}:{}/tools", self.cfg.listen.port()),
                max_connections: self.max_connections,
                session_hours: self.cfg.session.as_secs() / 3600,
                ..WebStatusView::default()
            },
        }
    }

    /// The listener to serve and the page's state: at once when it was bound at start-up,
    /// else once a retry binds it. Between attempts it waits on the backoff; `None` when
    /// `cancel` fires first or a refusal is not transient (status says so).
    pub(crate) async fn listener(
        &self,
        cancel: &CancellationToken,
    ) -> Option<(TcpListener, Arc<Web>)> {
        let bound = lock(&self.bound).take();
        let listener = match bound {
            Some(l) => l,
            None => self.retry(cancel).await?,
        };
        Some((listener, self.web()?.clone()))
    }

    /// Binds again until it works, a refusal is not transient, or `cancel` fires.
    async fn retry(&self, cancel: &CancellationToken) -> Option<TcpListener> {
        let retrying = matches!(
            *lock(&self.listening),
            PageListening::NotListening { retrying: true, .. }
        );
        let mut backoff = lock(&self.backoff).take()?;
        if !retrying {
            return None;
        }
        loop {
            let wait = backoff.fail();
            tokio::select! {
                _ = cancel.cancelled() => return None,
                _ = tokio::time::sleep(wait) => {}
            }
            match bind(self.cfg.listen).await {
                Ok((l, addr)) => {
                    tracing::info!(%addr, "the page's port is free again");
                    return self.made(addr).then_some(l);
                }
                Err(e) => {
                    let retrying = transient(&e);
                    let why = why(&self.cfg, &e);
                    tracing::debug!(%why, retrying, "the page's port is still not ours");
                    self.set(PageListening::NotListening { why, retrying });
                    if !retrying {
                        tracing::error!("the page stops trying to listen: {e}");
                        return None;
                    }
                }
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every holder only reads or replaces the value, so a poisoned lock still holds a whole
    // one.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The one retry delay of the page's listener.
pub fn backoff() -> backoff::Backoff {
    backoff::Backoff::new(RETRY_FIRST, RETRY_CAP)
}
