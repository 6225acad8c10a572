//! The feed poller in the daemon (F-5..F-8) and its status rows (I-3).
//!
//! No enabled feed → no poller, no task, no request (F-8). Each feed gets its own webfetch
//! door, `feed:<name>`, built from the config exactly as `maven fetch --door` builds it.

use anyhow::Context;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use config::Config;

use crate::json;

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
        let door = config
            .door(&format!("feed:{}", f.name))
            .map_err(anyhow::Error::msg)?;
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

/// One row of `maven feeds status --json`: the I-3 keys, then `state`, `moved_to` (where a
/// redirect led; the config is never rewritten), `failures` and `warning`.
pub(crate) fn status(s: &poller::FeedStatus) -> Value {
    json!({
        "name": s.name,
        "url": json::mask_url(&s.url),
        "enabled": s.enabled,
        "last_success": s.last_success.map_or(Value::Null, json::time),
        "last_error": s.last_error,
        "next_poll": s.next_poll.map_or(Value::Null, json::time),
        "items_noted": s.items_noted,
        "state": s.state.as_str(),
        "moved_to": s.moved_to.as_deref().map(json::mask_url),
        "failures": s.failures,
        "warning": s.warning,
    })
}
