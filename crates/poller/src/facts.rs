//! What the poller keeps in the store's facts, per feed (all JSON objects):
//!
//! - `rss:latest:<feed>` — how far the feed was read: the newest item's key, the newest item
//!   date read so far, and when. Written in the same transaction as the items.
//! - `rss:http:<feed>` — the validators (`ETag`, `Last-Modified`) exactly as received, with the
//!   URL they belong to. Written in the same transaction as the items of their response.
//! - `rss:poll:<feed>` — the schedule's memory: last success, last error, consecutive
//!   failures, next poll, where a redirect led, the last warning.
//! - `rss:disabled:<feed>` — a 410 Gone: the URL it was said of and why. Ignored (and removed)
//!   once the configured URL differs.

use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub(crate) fn key(kind: &str, feed: &str) -> String {
    format!("rss:{kind}:{feed}")
}

pub(crate) fn fmt_time(t: OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC)
        .format(&Rfc3339)
        .unwrap_or_default()
}

pub(crate) fn parse_time(s: Option<&str>) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s?, &Rfc3339).ok()
}

/// `rss:latest:<feed>`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Latest {
    pub(crate) key: Option<String>,
    pub(crate) date: Option<String>,
    pub(crate) at: Option<String>,
}

/// `rss:http:<feed>`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Http {
    pub(crate) url: String,
    pub(crate) etag: Option<String>,
    pub(crate) last_modified: Option<String>,
}

/// `rss:poll:<feed>`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Poll {
    pub(crate) url: String,
    pub(crate) last_success: Option<String>,
    pub(crate) last_error: Option<String>,
    pub(crate) failures: u32,
    pub(crate) next_poll: Option<String>,
    pub(crate) moved_to: Option<String>,
    pub(crate) warning: Option<String>,
}

/// `rss:disabled:<feed>`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Disabled {
    pub(crate) url: String,
    pub(crate) reason: String,
    pub(crate) at: Option<String>,
}

/// Reads a JSON fact; a value that does not parse (written by hand, or by an older build) is
/// treated as absent.
pub(crate) fn decode<T: for<'de> Deserialize<'de>>(v: Option<String>) -> Option<T> {
    serde_json::from_str(&v?).ok()
}

pub(crate) fn encode<T: Serialize>(v: &T) -> String {
    // Plain structs of strings and integers always serialise.
    serde_json::to_string(v).unwrap_or_default()
}
