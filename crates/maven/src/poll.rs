//! The feed poller in the daemon (F-5..F-8).
//!
//! No enabled feed → no poller, no task, no request (F-8). Each feed gets its own webfetch
//! door, `feed:<name>`, built from the config exactly as `maven fetch --door` builds it.

use anyhow::Context;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use config::Config;

/// Builds the poller and spawns its schedules; `None` when no feed is enabled.
pub(crate) async fn start(
    config: &Config,
    store: &store::Store,
    cancel: &CancellationToken,
    tracker: &TaskTracker,
) -> anyhow::Result<Option<poller::Poller>> {
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
    let poller = poller::Poller::new(store.clone(), specs, opts)
        .await
        .context("cannot load the feeds' state")?;
    let (p, c) = (poller.clone(), cancel.clone());
    tracker.spawn(async move { p.run(c).await });
    tracing::info!(
        feeds = config.feeds.iter().filter(|f| f.enabled).count(),
        "feed poller started"
    );
    Ok(Some(poller))
}
