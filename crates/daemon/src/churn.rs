//! Servers whose tools keep changing. A server that changes its tools more than
//! [`MAX_CHANGES_PER_HOUR`] times within an hour is *unstable*: its listings are no longer
//! applied as they come but coalesced — the latest one is applied at most once every
//! [`COALESCE`] — so its rows stay proposed (a redefinition always drops a row back to
//! proposed, and the page refuses to enable a row of an unstable server) and `tool_events`
//! gets one redefinition per tool per interval instead of one per change. It settles once an
//! hour holds no more than [`MAX_CHANGES_PER_HOUR`] changes; its latest listing is then
//! applied at once. [`run`] is the loop that feeds every listing through it. A leaf: it names
//! nothing of the crate.
//!
//! Everything here is on tokio's clock, so the loop's tests run on a paused clock.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

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

/// Feeds every listing of `listings` through a [`Churn`] until `cancel` fires or the channel
/// closes. After each listing comes in, `note(server, why_unstable)` says how its server
/// stands; `apply(listing, why_unstable)` gets each listing that is due — at once for a stable
/// server, the latest held back once per [`COALESCE`] for an unstable one, and the held-back
/// one at once when its server settles. One listing is applied at a time, in the order they
/// fall due.
pub(crate) async fn run<N, A, F>(
    mut listings: mpsc::Receiver<mcp::Discovery>,
    cancel: CancellationToken,
    mut note: N,
    mut apply: A,
) where
    N: FnMut(&str, Option<String>),
    A: FnMut(mcp::Discovery, Option<String>) -> F,
    F: Future<Output = ()>,
{
    let mut churn = Churn::default();
    loop {
        // A held-back listing of an unstable server falls due, or a new listing comes.
        let due_at = churn.next_due();
        let ready = tokio::select! {
            _ = cancel.cancelled() => break,
            _ = async {
                match due_at {
                    Some(t) => tokio::time::sleep_until(t).await,
                    None => std::future::pending().await,
                }
            } => churn.due(Instant::now()),
            d = listings.recv() => match d {
                Some(d) => {
                    let server = d.server.clone();
                    let ready = churn.offer(d, Instant::now());
                    if ready.is_none() {
                        tracing::debug!(server = %server, "listing held back: the server is unstable");
                    }
                    note(&server, churn.unstable(&server));
                    ready.into_iter().collect()
                }
                None => break,
            },
        };
        for d in ready {
            let unstable = churn.unstable(&d.server);
            apply(d, unstable).await;
        }
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

#[cfg(test)]
mod loop_tests {
    use std::cell::RefCell;

    use super::*;

    fn listing(server: &str, desc: &str) -> mcp::Discovery {
        let tool = serde_json::json!({"name": "t", "description": desc});
        mcp::Discovery {
            server: server.into(),
            tools: vec![mcp::Tool::from_value(tool).unwrap()],
            at: std::time::SystemTime::now(),
        }
    }

    /// What the loop did, on the virtual clock: each listing applied (server, description,
    /// seconds since the start, whether it was unstable) and each note (server, seconds,
    /// unstable or not).
    #[derive(Default)]
    struct Log {
        applied: Vec<(String, String, u64, bool)>,
        notes: Vec<(String, u64, bool)>,
    }

    /// Runs the loop while `script` sends listings, then closes the channel; returns the log.
    async fn drive<S, Fut>(script: S) -> Log
    where
        S: FnOnce(mpsc::Sender<mcp::Discovery>) -> Fut,
        Fut: Future<Output = ()>,
    {
        let t0 = Instant::now();
        let secs = move || (Instant::now() - t0).as_secs();
        let log = RefCell::new(Log::default());
        let (tx, rx) = mpsc::channel(16);
        let looping = run(
            rx,
            CancellationToken::new(),
            |server, unstable| {
                log.borrow_mut()
                    .notes
                    .push((server.to_owned(), secs(), unstable.is_some()))
            },
            |d, unstable| {
                let desc = d.tools[0].description().unwrap_or_default().to_owned();
                log.borrow_mut()
                    .applied
                    .push((d.server, desc, secs(), unstable.is_some()));
                async {}
            },
        );
        tokio::join!(looping, script(tx));
        log.into_inner()
    }

    async fn send(tx: &mpsc::Sender<mcp::Discovery>, server: &str, desc: &str) {
        tx.send(listing(server, desc)).await.unwrap();
    }

    fn applied(log: &Log) -> Vec<(&str, &str, u64)> {
        log.applied
            .iter()
            .map(|(s, d, t, _)| (s.as_str(), d.as_str(), *t))
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn an_unstable_server_gets_its_latest_listing_once_per_interval_a_stable_one_at_once() {
        let sec = Duration::from_secs(1);
        let log = drive(|tx| async move {
            send(&tx, "calm", "c0").await;
            send(&tx, "s", "0").await;
            for i in 1..=MAX_CHANGES_PER_HOUR {
                tokio::time::sleep(sec).await;
                send(&tx, "s", &i.to_string()).await;
            }
            // t = 6 s. One change too many at 10 s: held back, and the next replaces it.
            tokio::time::sleep(sec * 4).await;
            send(&tx, "s", "x").await;
            tokio::time::sleep(sec).await;
            send(&tx, "s", "y").await;
            // A stable server's listing is applied at once meanwhile.
            tokio::time::sleep(sec).await;
            send(&tx, "calm", "c1").await;
            // 10 min 7 s: after "y" was applied (at 10 min 6 s), "z" waits for the next interval.
            tokio::time::sleep(COALESCE - sec * 5).await;
            send(&tx, "s", "z").await;
            tokio::time::sleep(COALESCE + sec).await;
        })
        .await;
        let c = COALESCE.as_secs();
        assert_eq!(
            applied(&log),
            [
                ("calm", "c0", 0),
                ("s", "0", 0),
                ("s", "1", 1),
                ("s", "2", 2),
                ("s", "3", 3),
                ("s", "4", 4),
                ("s", "5", 5),
                ("s", "6", 6),
                ("calm", "c1", 12),
                ("s", "y", 6 + c),
                ("s", "z", 6 + 2 * c),
            ],
            "\"x\" was replaced by \"y\" before its interval came"
        );
        assert!(log
            .applied
            .iter()
            .all(|(s, d, _, unstable)| { *unstable == (s == "s" && (d == "y" || d == "z")) }));
        let unstable_notes: Vec<u64> = log
            .notes
            .iter()
            .filter(|(_, _, u)| *u)
            .map(|(_, t, _)| *t)
            .collect();
        assert_eq!(unstable_notes, [10, 11, 7 + c]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_held_back_listing_is_applied_at_once_when_its_server_settles() {
        let sec = Duration::from_secs(1);
        let log = drive(|tx| async move {
            send(&tx, "s", "0").await;
            for i in 1..MAX_CHANGES_PER_HOUR {
                tokio::time::sleep(sec).await;
                send(&tx, "s", &i.to_string()).await;
            }
            // t = 5 s; the sixth change at 59 min is still applied at once, the seventh held.
            tokio::time::sleep(Duration::from_secs(59 * 60 - 5)).await;
            send(&tx, "s", "6").await;
            tokio::time::sleep(sec * 30).await;
            send(&tx, "s", "7").await;
            // The change at 1 s leaves the hour at 60 min 1 s, long before the interval.
            tokio::time::sleep(Duration::from_secs(120)).await;
            // Settled: a change is applied as it comes again.
            send(&tx, "s", "8").await;
        })
        .await;
        let m59 = 59 * 60;
        assert_eq!(
            applied(&log),
            [
                ("s", "0", 0),
                ("s", "1", 1),
                ("s", "2", 2),
                ("s", "3", 3),
                ("s", "4", 4),
                ("s", "5", 5),
                ("s", "6", m59),
                ("s", "7", WINDOW.as_secs() + 1),
                ("s", "8", m59 + 30 + 120),
            ]
        );
        assert!(log.applied.iter().all(|(_, _, _, unstable)| !unstable));
        let notes: Vec<(u64, bool)> = log.notes.iter().map(|(_, t, u)| (*t, *u)).collect();
        assert_eq!(notes.last(), Some(&(m59 + 150, false)));
        assert!(notes.contains(&(m59 + 30, true)));
    }
}
