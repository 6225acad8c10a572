//! The feed poller: the IO half of Maven's feeds (F-5..F-8).
//!
//! The `feeds` crate parses bytes and does no IO; this crate fetches those bytes through each
//! feed's own webfetch door, decides which items are new, and writes them to the store.
//!
//! - **One schedule per enabled feed**, on its own interval: never below the configured floor
//!   (`feed_min_interval`), raised by RSS `<ttl>`, `Cache-Control: max-age`, `Expires` and
//!   `Retry-After`, clamped at 24 h, jittered upward so feeds do not fire together. Failures
//!   back off exponentially (interval, 2×, 4×, … capped at 24 h); a success resets.
//! - **Politeness**: every request goes through the feed's [`webfetch::Fetcher`] (its door's
//!   address policy, body cap and deadlines), and feeds on one host are spaced by the door's
//!   `host_interval` here, across doors. Conditional GET with the stored `ETag` and
//!   `Last-Modified` exactly as received; 304 is a success with nothing to parse. 410 Gone
//!   disables the feed (persisted; cleared when the configured URL changes). A redirect is
//!   followed by webfetch and reported in status, never written back into the configuration.
//! - **Exactly once**: each item's identity is computed here ([`identity`]); the notes, the
//!   seen marks, `rss:latest:<feed>` and the response's validators are written in **one store
//!   transaction**, so a crash at any instant neither loses nor duplicates a note. A new feed's
//!   first fetch is a baseline (only the newest few noted); a fetch where most items look new
//!   but carry old dates re-baselines with a warning instead of flooding. Seen keys are
//!   pruned only when absent from a successful, non-empty fetch and old.
//! - Nothing is announced on arrival; status ([`Poller::status`]) shows last success, last
//!   error, next poll and items noted per feed.
//!
//! The daemon builds one [`Poller`] only when at least one feed is enabled, and runs
//! [`Poller::run`] under its cancellation token.
//!
//! When the parser's id rule for an item changes, the key changes with it; `feeds::Item::former_id`
//! says what the id was, `identity::former_keys` gives the key it had, and an item seen under that
//! key is seen: its new key is marked seen in the fetch's transaction and the old one ages out with
//! the pruning, so no item is noted twice and no re-baseline is set off (today: RSS 1.0 items keyed
//! by `dc:identifier` before `rdf:about` became their id).
//!
//! A `HostGate` shared by all feed workers spaces feeds on one host (webfetch's limiter belongs to
//! one door). Its state lives in facts: `rss:latest:`, `rss:http:` (validators), `rss:poll:` (the
//! schedule) and `rss:disabled:<feed>`.
//!
//! Growth is bounded per feed: at most `Options::max_notes_per_day` (500) notes in any 24 hours
//! (counted in the store, `notes_since`; the rest marked seen, and the feed's warning says so), and
//! seen keys pruned beyond twice the latest fetch, at least `Options::seen_floor` (1,000), after
//! each commit (`prune_seen_beyond`).

// This crate reads untrusted bytes: a failure is an error value, never a panic. Tests may
// use `expect` (clippy.toml allows it in tests); a test module that needs `panic!` allows
// `clippy::panic` itself.
#![warn(clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

mod error;
mod facts;
mod http;
pub mod identity;
mod model;
mod plan;
mod schedule;
mod worker;

pub use error::Error;
#[cfg(feature = "test-hooks")]
pub use model::COMMIT_HOLD_ENV;
pub use model::{
    FeedSpec, FeedState, FeedStatus, Options, Outcome, PollReport, Refreshed, MAX_NOTES_PER_DAY,
    SEEN_FLOOR,
};
pub use plan::{Kind, MAX_NOTES_PER_FETCH};
pub use schedule::MAX_DELAY;

/// How long one [`Poller::refresh`] waits, in all, for hosts' spacings to end: a spacing that
/// ends sooner is waited out (the owner asked now, and a second is now); a longer one is said.
pub const REFRESH_WAITS: std::time::Duration = std::time::Duration::from_secs(5);
pub use worker::{MAX_LINK, MAX_SUMMARY_CHARS, MAX_TITLE_CHARS};

use schedule::HostGate;
use worker::Worker;

/// The poller: one worker per configured feed, a host gate shared by all. Cheap to clone.
#[derive(Clone)]
pub struct Poller {
    inner: Arc<Shared>,
}

struct Shared {
    workers: Vec<Arc<Worker>>,
    gate: HostGate,
}

impl std::fmt::Debug for Poller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poller")
            .field("feeds", &self.inner.workers.len())
            .finish_non_exhaustive()
    }
}

impl Poller {
    /// Loads every feed's persisted state. Makes no request.
    pub async fn new(
        store: store::Store,
        feeds: Vec<FeedSpec>,
        opts: Options,
    ) -> Result<Poller, Error> {
        let mut workers = Vec::with_capacity(feeds.len());
        for spec in feeds {
            workers.push(Arc::new(
                Worker::load(spec, store.clone(), opts.clone()).await?,
            ));
        }
        Ok(Poller {
            inner: Arc::new(Shared {
                workers,
                gate: HostGate::default(),
            }),
        })
    }

    /// The status of every feed, in configuration order.
    pub fn status(&self) -> Vec<FeedStatus> {
        self.inner.workers.iter().map(|w| w.status()).collect()
    }

    /// Whether any feed is enabled and not disabled (otherwise [`Poller::run`] returns at once).
    pub fn has_active_feeds(&self) -> bool {
        self.inner.workers.iter().any(|w| w.is_active())
    }

    /// Polls one feed now, outside its schedule and the host gate, and records the result
    /// like a scheduled poll (status, backoff, next poll).
    pub async fn poll_now(&self, name: &str) -> Result<PollReport, Error> {
        let w = self
            .inner
            .workers
            .iter()
            .find(|w| w.spec.name == name)
            .ok_or_else(|| Error::UnknownFeed(name.to_owned()))?;
        if !w.spec.enabled {
            return Err(Error::Disabled {
                reason: "not enabled in the configuration".to_owned(),
            });
        }
        w.poll_recorded().await.0
    }

    /// Polls now what `name` names (one feed, or every active feed), politely: a feed whose
    /// failures hold it back, or whose host was asked less than its door's `host_interval`
    /// ago, is not polled, and its entry says so and when it may be — but a host's spacing
    /// that ends within [`REFRESH_WAITS`] (all the waits of one refresh together) is waited
    /// out, and the feed polled. Feeds are polled one
    /// after another, each recorded like a scheduled poll.
    pub async fn refresh(&self, name: Option<&str>) -> Result<Vec<Refreshed>, Error> {
        let workers: Vec<&Arc<Worker>> = match name {
            Some(n) => {
                let w = self
                    .inner
                    .workers
                    .iter()
                    .find(|w| w.spec.name == n)
                    .ok_or_else(|| Error::UnknownFeed(n.to_owned()))?;
                if !w.spec.enabled {
                    return Err(Error::Disabled {
                        reason: "not enabled in the configuration".to_owned(),
                    });
                }
                if !w.is_active() {
                    return Err(Error::Disabled {
                        reason: w
                            .status()
                            .last_error
                            .unwrap_or_else(|| "stopped by the server".to_owned()),
                    });
                }
                vec![w]
            }
            None => self
                .inner
                .workers
                .iter()
                .filter(|w| w.is_active())
                .collect(),
        };
        let mut out = Vec::with_capacity(workers.len());
        let mut budget = REFRESH_WAITS;
        for w in workers {
            let name = w.spec.name.clone();
            let wall = |d: std::time::Duration| time::OffsetDateTime::now_utc() + d;
            if let Some(at) = w.backing_off() {
                let wait = at.saturating_duration_since(tokio::time::Instant::now());
                out.push(Refreshed::HeldBack {
                    name,
                    reason: format!("backing off after {} failed polls", w.status().failures),
                    until: wall(wait),
                });
                continue;
            }
            let interval = w.spec.fetcher.door().host_interval;
            // A spacing that ends within the refresh's budget is waited out, not refused.
            let mut reserved = self.inner.gate.try_reserve(w.host(), interval);
            while let Err(wait) = reserved {
                if wait > budget {
                    break;
                }
                tokio::time::sleep(wait).await;
                budget = budget.saturating_sub(wait);
                reserved = self.inner.gate.try_reserve(w.host(), interval);
            }
            if let Err(wait) = reserved {
                out.push(Refreshed::HeldBack {
                    name,
                    reason: format!(
                        "its host was asked less than {} ms ago",
                        interval.as_millis()
                    ),
                    until: wall(wait),
                });
                continue;
            }
            let (res, _) = w.poll_recorded().await;
            out.push(Refreshed::Polled {
                name,
                result: res.map_err(|e| e.to_string()),
            });
        }
        Ok(out)
    }

    /// Runs every active feed's schedule until `cancel` fires. Each feed runs on its own task;
    /// one feed's slowness or failure delays no other (except by the shared host gate).
    pub async fn run(&self, cancel: CancellationToken) {
        let tracker = TaskTracker::new();
        for w in self.inner.workers.iter().filter(|w| w.is_active()) {
            let w = Arc::clone(w);
            let shared = Arc::clone(&self.inner);
            let cancel = cancel.clone();
            tracker.spawn(async move { w.run(&shared.gate, &cancel).await });
        }
        tracker.close();
        tracker.wait().await;
    }
}
