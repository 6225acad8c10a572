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

// This crate reads untrusted bytes: a failure is an error value, never a panic. Tests may
// use `expect` (clippy.toml allows it in tests); a test module that needs `panic!` allows
// `clippy::panic` itself.
#![warn(clippy::expect_used, clippy::panic)]

#[cfg(feature = "test-hooks")]
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

mod error;
mod facts;
mod http;
pub mod identity;
mod plan;
mod schedule;
mod worker;

pub use error::Error;
pub use plan::{Kind, MAX_NOTES_PER_FETCH};
pub use schedule::MAX_DELAY;
pub use worker::{MAX_LINK, MAX_SUMMARY_CHARS, MAX_TITLE_CHARS};

use schedule::HostGate;
use worker::Worker;

/// **Test-only** (compiled only with the `test-hooks` feature, which only dev-dependencies
/// enable). When this environment variable names a file, and that file exists, every feed's
/// poll writes `<file>.held` and waits — right before its store transaction — until the file
/// is removed. Tests use it to kill the daemon in the middle of writing a batch. Unset it does
/// nothing; set, it only delays, never changes what is written. Without the feature the
/// variable is never read.
#[cfg(feature = "test-hooks")]
pub const COMMIT_HOLD_ENV: &str = "MAVEN_TEST_FEED_COMMIT_HOLD";

/// One configured feed, with its own webfetch door.
#[derive(Debug, Clone)]
pub struct FeedSpec {
    /// The feed's name; notes get source `rss:<name>`.
    pub name: String,
    /// The configured URL (never rewritten by a redirect).
    pub url: String,
    /// Whether the feed is polled.
    pub enabled: bool,
    /// The feed's own interval (raised to [`Options::min_interval`]).
    pub interval: Duration,
    /// How many of the newest items a first fetch notes.
    pub baseline: usize,
    /// The feed's door (`feed:<name>`).
    pub fetcher: webfetch::Fetcher,
}

/// Settings shared by all feeds.
#[derive(Debug, Clone)]
pub struct Options {
    /// No feed is polled more often than this (`feed_min_interval`).
    pub min_interval: Duration,
    /// Seen keys absent from a successful fetch are forgotten after this long.
    pub prune_after: Duration,
    /// Test-only commit hold file (see [`COMMIT_HOLD_ENV`]); only with the `test-hooks`
    /// feature.
    #[cfg(feature = "test-hooks")]
    pub commit_hold: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            min_interval: Duration::from_secs(5 * 60),
            prune_after: Duration::from_secs(90 * 24 * 60 * 60),
            #[cfg(feature = "test-hooks")]
            commit_hold: None,
        }
    }
}

impl Options {
    /// The defaults; with the `test-hooks` feature, the commit hold is read from
    /// `MAVEN_TEST_FEED_COMMIT_HOLD` (`COMMIT_HOLD_ENV`). Without the feature no environment
    /// variable is read and this is [`Options::default`].
    pub fn from_env() -> Options {
        Options {
            #[cfg(feature = "test-hooks")]
            commit_hold: std::env::var_os(COMMIT_HOLD_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            ..Options::default()
        }
    }
}

/// Where a feed stands.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FeedState {
    /// Not enabled in the configuration.
    Off,
    /// Waiting for its next poll.
    Scheduled,
    /// A poll is running.
    Polling,
    /// The last poll failed; the next one is backed off.
    BackingOff,
    /// Stopped for good until its URL changes (410 Gone).
    Disabled {
        /// Why.
        reason: String,
    },
}

impl FeedState {
    /// `off`, `scheduled`, `polling`, `backing off`, `disabled`.
    pub fn as_str(&self) -> &'static str {
        match self {
            FeedState::Off => "off",
            FeedState::Scheduled => "scheduled",
            FeedState::Polling => "polling",
            FeedState::BackingOff => "backing off",
            FeedState::Disabled { .. } => "disabled",
        }
    }
}

/// The status of one feed (I-3 `maven feeds status`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FeedStatus {
    /// The feed's name.
    pub name: String,
    /// The configured URL.
    pub url: String,
    /// Enabled in the configuration and not disabled by a 410.
    pub enabled: bool,
    /// Where it stands.
    pub state: FeedState,
    /// The last successful poll (200 or 304).
    pub last_success: Option<OffsetDateTime>,
    /// The error of the last poll, if it failed (or why the feed is disabled).
    pub last_error: Option<String>,
    /// When the next poll is due.
    pub next_poll: Option<OffsetDateTime>,
    /// Notes written from this feed, ever.
    pub items_noted: u64,
    /// Consecutive failed polls.
    pub failures: u32,
    /// Where the last successful poll was redirected to (the configuration is not changed).
    pub moved_to: Option<String>,
    /// The last warning of a successful poll (a re-baseline, a capped flood).
    pub warning: Option<String>,
}

/// What a poll did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// 304: nothing changed, nothing parsed.
    NotModified,
    /// A feed was fetched, parsed and committed.
    Fetched {
        /// Items in the document.
        items: usize,
        /// Notes written.
        noted: u32,
        /// Normal, baseline or re-baseline.
        kind: Kind,
        /// A warning for the owner.
        warning: Option<String>,
    },
}

/// The report of one successful poll.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PollReport {
    /// What happened.
    pub outcome: Outcome,
    /// The feed's RSS `<ttl>`, when the document had one.
    pub ttl: Option<Duration>,
    /// Where a redirect led.
    pub moved_to: Option<String>,
    fresh: http::Freshness,
}

impl PollReport {
    /// The `Cache-Control` max-age (or `Expires`) of the response.
    pub fn max_age(&self) -> Option<Duration> {
        self.fresh.max_age
    }
}

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
