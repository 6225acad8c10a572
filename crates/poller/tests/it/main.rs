//! Integration tests of the poller against scripted loopback HTTP servers and a real store.

// Helpers outside `#[test]` functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used)]

mod polls;
mod server;
mod timing;

use std::time::Duration;

use poller::{FeedSpec, Options, Poller};

/// A temporary store.
pub(crate) struct Env {
    _dir: tempfile::TempDir,
    pub(crate) store: store::Store,
}

impl Env {
    pub(crate) async fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        #[expect(clippy::disallowed_methods, reason = "a test's own database")]
        let store = store::Store::open(&dir.path().join("maven.db"))
            .await
            .unwrap();
        Env { _dir: dir, store }
    }

    /// A poller over these feeds with a 1 s floor (tests call `poll_now` or run it briefly).
    pub(crate) async fn poller(&self, feeds: Vec<FeedSpec>) -> Poller {
        self.poller_with(feeds, options()).await
    }

    pub(crate) async fn poller_with(&self, feeds: Vec<FeedSpec>, opts: Options) -> Poller {
        Poller::new(self.store.clone(), feeds, opts).await.unwrap()
    }

    /// Every note of a feed, oldest first, as (key, text).
    pub(crate) async fn notes(&self, feed: &str) -> Vec<(String, String)> {
        let mut n = self
            .store
            .notes(store::NotesQuery {
                source_prefix: Some(format!("rss:{feed}")),
                limit: 10_000,
                before_id: None,
            })
            .await
            .unwrap();
        n.reverse();
        n.into_iter().map(|n| (n.key, n.text)).collect()
    }
}

pub(crate) fn options() -> Options {
    Options {
        min_interval: Duration::from_secs(1),
        ..Options::default()
    }
}

/// A loopback door (allow_private) with no per-host interval.
pub(crate) fn door(name: &str) -> webfetch::DoorConfig {
    let mut d = webfetch::DoorConfig::new(format!("feed:{name}"));
    d.allow_private = true;
    d.host_interval = Duration::ZERO;
    d
}

pub(crate) fn spec(name: &str, url: &str) -> FeedSpec {
    spec_with(name, url, door(name))
}

pub(crate) fn spec_with(name: &str, url: &str, door: webfetch::DoorConfig) -> FeedSpec {
    FeedSpec {
        name: name.to_owned(),
        url: url.to_owned(),
        enabled: true,
        interval: Duration::from_secs(1),
        baseline: 3,
        fetcher: webfetch::Fetcher::new(door),
    }
}
