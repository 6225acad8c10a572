//! The page's connection limits and the counters `maven status` shows under `web` (H-1).

/// The busy answer: written without waiting to a connection beyond the bound, and the answer
/// of a reserved slot to a request that is not a signed-in session's.
pub(super) const BUSY: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n\
Connection: close\r\nContent-Length: 84\r\nRetry-After: 10\r\n\r\n\
{\"error\":\"busy\",\"message\":\"the page serves too many connections; try again shortly\"}";
/// The body of [`BUSY`].
pub(super) const BUSY_MESSAGE: &str = "the page serves too many connections; try again shortly";

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// The page's connection limits and counters (shown in `maven status` under `web`).
#[derive(Debug)]
pub struct Limits {
    /// Connections served at once; more are answered 503 and closed at once.
    pub(crate) max_connections: usize,
    /// Of [`Limits::max_connections`], the slots kept for signed-in sessions: a connection
    /// that takes one when the others are full is served only for a signed-in session's
    /// requests (else 503 and closed).
    pub(crate) reserved: usize,
    /// A request's head must arrive within this, from the connection's start or from the
    /// previous answer: a half-sent request and an idle keep-alive connection both end here.
    pub(crate) header_deadline: Duration,
    /// A request is answered within this, its body read included (else 408).
    pub(crate) request_deadline: Duration,
    /// No connection lives longer than this.
    pub(crate) connection_lifetime: Duration,
    /// Connections open now.
    pub(crate) open: AtomicUsize,
    /// Connections refused since start-up.
    pub(crate) refused: AtomicU64,
    /// Connections from another user's process (or one that could not be told) closed at
    /// accept since start-up.
    pub(crate) other_uid_refused: AtomicU64,
}

/// The slots of [`Limits::reserved`] for a bound of `max` connections: an eighth, at least
/// one (when there are two slots or more) and at most eight.
pub(crate) fn reserved_for(max: usize) -> usize {
    if max < 2 {
        0
    } else {
        (max / 8).clamp(1, 8)
    }
}

/// Default of [`Limits::max_connections`].
pub const MAX_CONNECTIONS: usize = 64;
/// Default of [`Limits::header_deadline`].
pub(crate) const HEADER_DEADLINE: Duration = Duration::from_secs(10);
/// Default of [`Limits::request_deadline`].
pub(crate) const REQUEST_DEADLINE: Duration = Duration::from_secs(30);
/// Default of [`Limits::connection_lifetime`].
pub(crate) const CONNECTION_LIFETIME: Duration = Duration::from_secs(300);

impl Limits {
    /// The defaults, with at most `max_connections` connections.
    pub fn new(max_connections: usize) -> Limits {
        Limits {
            max_connections,
            reserved: reserved_for(max_connections),
            header_deadline: HEADER_DEADLINE,
            request_deadline: REQUEST_DEADLINE,
            connection_lifetime: CONNECTION_LIFETIME,
            open: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
            other_uid_refused: AtomicU64::new(0),
        }
    }

    /// Answers a connection beyond the bound with 503 (without waiting) and closes it.
    pub(super) fn refuse(&self, stream: &tokio::net::TcpStream) {
        // Whatever the client already sent is read first, so the close is a FIN after the
        // answer rather than a reset that may discard it.
        let mut sink = [0u8; 4096];
        let _ = stream.try_read(&mut sink);
        let _ = stream.try_write(BUSY);
        let n = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        // The first refusal and every hundredth: a flood does not flood the log.
        if n % 100 == 1 {
            tracing::warn!(
                max = self.max_connections,
                refused = n,
                "the page refused a connection: every connection slot is in use"
            );
        }
    }
}

/// How often at most the log says that connections of other users were refused.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// The refusals of other users' connections (by the gate, at accept), logged once a minute at
/// most.
#[derive(Default)]
pub(super) struct Refusals {
    /// When the last line was logged, and how many were refused since.
    last: std::sync::Mutex<(Option<std::time::Instant>, u64)>,
}

impl Refusals {
    /// Counts a refusal of `uid` (`None`: it could not be told) and logs it when the last
    /// line is a minute old.
    pub(super) fn refused(&self, uid: Option<u32>, owner: u32, now: std::time::Instant) {
        let mut g = self.last.lock().unwrap_or_else(|p| p.into_inner());
        g.1 += 1;
        if g.0
            .is_some_and(|t| now.saturating_duration_since(t) < LOG_EVERY)
        {
            return;
        }
        let n = std::mem::take(&mut g.1);
        g.0 = Some(now);
        drop(g);
        match uid {
            Some(uid) => tracing::warn!(
                uid,
                owner,
                refused = n,
                "the page closed a connection from another user's process: it serves only its owner's (logged once a minute at most)"
            ),
            None => tracing::warn!(
                owner,
                refused = n,
                "the page closed a connection whose process it could not tell (its socket was gone, or the kernel's socket diagnostics, NETLINK_SOCK_DIAG with tcp_diag, did not answer): it serves only its owner's (logged once a minute at most)"
            ),
        }
    }
}
