//! What the poller is given and what it reports: the feeds, the options, each feed's status and
//! each poll's outcome.

#[cfg(feature = "test-hooks")]
use std::path::PathBuf;
use std::time::Duration;

use time::OffsetDateTime;

use crate::http;
use crate::plan::Kind;

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

/// Default of [`Options::max_notes_per_day`].
pub const MAX_NOTES_PER_DAY: usize = 500;
/// Default of [`Options::seen_floor`].
pub const SEEN_FLOOR: u64 = 1000;

/// Settings shared by all feeds.
#[derive(Debug, Clone)]
pub struct Options {
    /// No feed is polled more often than this (`feed_min_interval`).
    pub min_interval: Duration,
    /// Seen keys absent from a successful fetch are forgotten after this long.
    pub prune_after: Duration,
    /// At most this many notes come from one feed in any 24 hours; beyond it items are
    /// marked seen without a note, and the feed's status says so.
    pub max_notes_per_day: usize,
    /// Seen keys kept per feed: twice what the feed serves now, at least this many; the
    /// least recently seen beyond are forgotten.
    pub seen_floor: u64,
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
            max_notes_per_day: MAX_NOTES_PER_DAY,
            seen_floor: SEEN_FLOOR,
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
    /// The last poll was refused by the feed's door (its address is private, or a host
    /// list excludes it): the owner's to fix in the configuration.
    pub refused: bool,
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
    pub(crate) fresh: http::Freshness,
}

impl PollReport {
    /// The `Cache-Control` max-age (or `Expires`) of the response.
    pub fn max_age(&self) -> Option<Duration> {
        self.fresh.max_age
    }
}

/// What `Poller::refresh` did with one feed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Refreshed {
    /// Polled now: the poll's report, or its error in words.
    Polled {
        /// The feed.
        name: String,
        /// How the poll went.
        result: Result<PollReport, String>,
    },
    /// Not polled: its backoff or its host's spacing holds it back.
    HeldBack {
        /// The feed.
        name: String,
        /// Why, in words.
        reason: String,
        /// When it may be polled.
        until: OffsetDateTime,
    },
}
