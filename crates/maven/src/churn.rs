//! Servers whose tools keep changing. A server that changes its tools more than
//! [`MAX_CHANGES_PER_HOUR`] times within an hour is *unstable*: its listings are no longer
//! applied as they come but coalesced — the latest one is applied at most once every
//! [`COALESCE`] — so its rows stay proposed (a redefinition always drops a row back to
//! proposed, and the page refuses to enable a row of an unstable server) and `tool_events`
//! gets one redefinition per tool per interval instead of one per change. It settles once an
//! hour holds no more than [`MAX_CHANGES_PER_HOUR`] changes; its latest listing is then
//! applied at once. A leaf: it names nothing of the crate.

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

/// Changes of a server's tools within [`WINDOW`] beyond which it is unstable.
pub(crate) const MAX_CHANGES_PER_HOUR: usize = 6;
/// An unstable server's listings are applied at most once per this interval.
pub(crate) const COALESCE: Duration = Duration::from_secs(10 * 60);
/// The window changes are counted in.
const WINDOW: Duration = Duration::from_secs(60 * 60);

#[derive(Default)]
struct Server {
    /// A digest of the last listing received.
    last: Option<u64>,
    /// When its tools changed, within the window, oldest first.
    changes: VecDeque<Instant>,
    /// The latest listing held back, while unstable.
    pending: Option<mcp::Discovery>,
    /// When a listing was last applied.
    applied: Option<Instant>,
    /// Listings held back and replaced by a later one since it became unstable.
    coalesced: u64,
}

impl Server {
    fn prune(&mut self, now: Instant) {
        while self
            .changes
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= WINDOW)
        {
            self.changes.pop_front();
        }
    }
    fn unstable(&self) -> bool {
        self.changes.len() > MAX_CHANGES_PER_HOUR
    }
    fn interval_passed(&self, now: Instant) -> bool {
        self.applied
            .is_none_or(|t| now.saturating_duration_since(t) >= COALESCE)
    }
}

/// Every server's recent changes.
#[derive(Default)]
pub(crate) struct Churn {
    servers: HashMap<String, Server>,
}

/// A digest of a listing: every tool's fingerprint, in order.
fn digest(d: &mcp::Discovery) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for t in &d.tools {
        t.fingerprint().hash(&mut h);
    }
    h.finish()
}

impl Churn {
    /// A complete listing came in: `Some` to apply it now, `None` when it is held back (the
    /// server is unstable and applied one within [`COALESCE`]).
    pub(crate) fn offer(&mut self, d: mcp::Discovery, now: Instant) -> Option<mcp::Discovery> {
        let dg = digest(&d);
        let s = self.servers.entry(d.server.clone()).or_default();
        if s.last.is_some_and(|l| l != dg) {
            s.changes.push_back(now);
        }
        s.last = Some(dg);
        s.prune(now);
        if !s.unstable() || s.interval_passed(now) {
            s.pending = None;
            s.applied = Some(now);
            return Some(d);
        }
        if s.pending.replace(d).is_some() {
            s.coalesced += 1;
        }
        None
    }

    /// Listings held back that are due now: their interval passed, or their server settled.
    pub(crate) fn due(&mut self, now: Instant) -> Vec<mcp::Discovery> {
        let mut out = Vec::new();
        for s in self.servers.values_mut() {
            s.prune(now);
            if s.pending.is_some() && (!s.unstable() || s.interval_passed(now)) {
                if let Some(d) = s.pending.take() {
                    s.applied = Some(now);
                    out.push(d);
                }
            }
        }
        out
    }

    /// When the next held-back listing falls due (at the latest; settling may come sooner and
    /// is checked then too).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.servers
            .values()
            .filter(|s| s.pending.is_some())
            .filter_map(|s| {
                let by_interval = s.applied.map(|t| t + COALESCE);
                let by_settling = s
                    .changes
                    .len()
                    .checked_sub(MAX_CHANGES_PER_HOUR + 1)
                    .and_then(|i| s.changes.get(i))
                    .map(|t| *t + WINDOW);
                match (by_interval, by_settling) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            })
            .min()
    }

    /// Why the server is unstable, for status; `None` when it is not.
    pub(crate) fn unstable(&self, server: &str) -> Option<String> {
        let s = self.servers.get(server)?;
        s.unstable().then(|| {
            format!(
                "unstable: its tools changed {} times in the last hour (more than {MAX_CHANGES_PER_HOUR}); \
                 its changes are applied at most every {} min and its rows stay proposed until it settles \
                 ({} listings coalesced so far)",
                s.changes.len(),
                COALESCE.as_secs() / 60,
                s.coalesced
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(desc: &str) -> mcp::Discovery {
        let tool = serde_json::json!({"name": "t", "description": desc});
        mcp::Discovery {
            server: "s".into(),
            tools: vec![mcp::Tool::from_value(tool).unwrap()],
            at: std::time::SystemTime::now(),
        }
    }

    #[test]
    fn a_churning_server_is_coalesced_then_settles() {
        let mut c = Churn::default();
        let t0 = Instant::now();
        let sec = Duration::from_secs(1);
        assert!(c.offer(listing("0"), t0).is_some());
        for i in 1..=MAX_CHANGES_PER_HOUR {
            assert!(c
                .offer(listing(&i.to_string()), t0 + sec * i as u32)
                .is_some());
        }
        assert_eq!(c.unstable("s"), None);
        // One change too many: held back, and the next ones replace it.
        assert!(c.offer(listing("x"), t0 + sec * 10).is_none());
        assert!(c.offer(listing("y"), t0 + sec * 11).is_none());
        assert!(c.unstable("s").is_some());
        assert!(c.due(t0 + sec * 12).is_empty());
        let due = c.due(t0 + sec * 6 + COALESCE);
        assert_eq!(due.len(), 1, "the latest listing, once per interval");
        // An unchanged listing is no change; once the hour has passed the server settled.
        let later = t0 + WINDOW + sec * 12;
        assert!(c.offer(listing("y"), later).is_some());
        assert_eq!(c.unstable("s"), None);
    }
}
