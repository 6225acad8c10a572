//! The feed poller's place in the daemon (F-5..F-8): [`Feeds`] owns the poller in force and the
//! token that stops it alone, and is its only handle: start, replace on a reload, status,
//! refresh, and what the digest is told.
//!
//! No enabled feed → no poller, no task, no request (F-8). Each feed gets its own webfetch
//! door, `feed:<name>`, built from the config exactly as `maven fetch --door` builds it.

use std::sync::{Arc, RwLock};

use anyhow::Context;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use config::Config;
use wire::protocol::RpcError;
use wire::views::{FeedView, RefreshView};

use super::shared::{current, read, write, Current};
use crate::json;

/// The poller in force, and the token that stops it alone.
type Running = Option<(poller::Poller, CancellationToken)>;

/// The feed poller of the daemon; `None` inside while no feed is enabled.
pub(crate) struct Feeds {
    store: store::Store,
    running: RwLock<Running>,
    /// The configuration in force: the feeds status says while no poller runs.
    config: Current,
    cancel: CancellationToken,
    tracker: TaskTracker,
}

impl Feeds {
    /// Starts the poller of `config` (none when no feed is enabled) on the daemon's task tree.
    pub(crate) async fn start(
        config: &Current,
        store: &store::Store,
        cancel: &CancellationToken,
        tracker: &TaskTracker,
    ) -> anyhow::Result<Feeds> {
        let feeds = Feeds {
            store: store.clone(),
            running: RwLock::new(None),
            config: config.clone(),
            cancel: cancel.clone(),
            tracker: tracker.clone(),
        };
        let running = feeds.spawn(&current(config)).await?;
        *write(&feeds.running) = running;
        Ok(feeds)
    }

    /// A reload's new feeds: the poller is stopped and started afresh on the list of the
    /// configuration now in force (its state is in the store: nothing is fetched twice, no item
    /// noted twice).
    pub(crate) async fn restart(&self) -> anyhow::Result<()> {
        if let Some((_, stop)) = write(&self.running).take() {
            stop.cancel();
        }
        let running = self.spawn(&current(&self.config)).await?;
        *write(&self.running) = running;
        Ok(())
    }

    async fn spawn(&self, config: &Config) -> anyhow::Result<Running> {
        if !config.feeds.iter().any(|f| f.enabled) {
            return Ok(None);
        }
        let mut specs = Vec::with_capacity(config.feeds.len());
        for f in &config.feeds {
            let door = config.door(&config::Door::Feed(f.name.clone()))?;
            specs.push(poller::FeedSpec {
                name: f.name.clone(),
                url: f.url.clone(),
                enabled: f.enabled,
                interval: f.interval,
                baseline: usize::try_from(f.baseline).unwrap_or(usize::MAX),
                fetcher: webfetch::Fetcher::new(door),
            });
        }
        let mut opts = poller::Options::from_env();
        opts.min_interval = config.feed_min_interval;
        let poller = poller::Poller::new(self.store.clone(), specs, opts)
            .await
            .context("cannot load the feeds' state")?;
        let stop = self.cancel.child_token();
        let (p, c) = (poller.clone(), stop.clone());
        self.tracker.spawn(async move { p.run(c).await });
        tracing::info!(
            feeds = config.feeds.iter().filter(|f| f.enabled).count(),
            "feed poller started"
        );
        Ok(Some((poller, stop)))
    }

    fn poller(&self) -> Option<poller::Poller> {
        read(&self.running).as_ref().map(|(p, _)| p.clone())
    }

    /// Every configured feed as status shows it: the poller's view, or the configuration's
    /// while none runs.
    pub(crate) fn status(&self) -> Vec<FeedView> {
        match self.poller() {
            Some(p) => p.status().iter().map(json::feed_status).collect(),
            None => current(&self.config)
                .feeds
                .iter()
                .map(json::configured_feed)
                .collect(),
        }
    }

    /// `maven feeds refresh [NAME]`: the poller polls now, within each host's spacing and a
    /// failing feed's backoff.
    pub(crate) async fn refresh(&self, name: Option<String>) -> Result<Vec<RefreshView>, RpcError> {
        let Some(p) = self.poller() else {
            return Err(RpcError::invalid_params(
                match current(&self.config).feeds.is_empty() {
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

    /// What the digest is told of the feeds: every configured one and, while its polls fail
    /// (or a 410 stopped it), the poller's last error.
    pub(crate) fn health(self: &Arc<Self>) -> turns::FeedsSource {
        let me = self.clone();
        Arc::new(move || match me.poller() {
            Some(p) => p
                .status()
                .into_iter()
                .map(|s| turns::FeedHealth {
                    failing: s.last_error.filter(|_| s.state != poller::FeedState::Off),
                    name: s.name,
                })
                .collect(),
            None => current(&me.config)
                .feeds
                .iter()
                .map(|f| turns::FeedHealth {
                    name: f.name.clone(),
                    failing: None,
                })
                .collect(),
        })
    }
}
