//! Keep-alive: a door's idle HTTP/1.1 connections, per origin.
//!
//! A connection enters the pool only after a response body was read to its end, so the
//! connection is idle and was vetted when it was dialled. A pool belongs to one fetcher (one
//! door) and is never shared.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use tokio::time::Instant;

use crate::target::Origin;

/// The sending half of one HTTP/1.1 connection.
pub(crate) type Sender = SendRequest<Full<Bytes>>;

/// Idle connections kept per origin.
const MAX_IDLE_PER_ORIGIN: usize = 16;
/// How long an idle connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug)]
struct Idle {
    sender: Sender,
    peer: SocketAddr,
    since: Instant,
}

#[derive(Debug, Default)]
pub(crate) struct Pool {
    idle: Mutex<HashMap<Origin, Vec<Idle>>>,
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, HashMap<Origin, Vec<Idle>>> {
        // A poisoned lock only means a panic elsewhere mid-update; the map stays consistent
        // (every update is a single push or pop).
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An idle, open connection to this origin, if any.
    pub(crate) fn take(&self, origin: &Origin) -> Option<(Sender, SocketAddr)> {
        let mut map = self.lock();
        let list = map.get_mut(origin)?;
        let now = Instant::now();
        while let Some(idle) = list.pop() {
            if !idle.sender.is_closed() && now.duration_since(idle.since) < IDLE_TIMEOUT {
                return Some((idle.sender, idle.peer));
            }
        }
        map.remove(origin);
        None
    }

    fn put(&self, origin: Origin, sender: Sender, peer: SocketAddr) {
        if sender.is_closed() {
            return;
        }
        let mut map = self.lock();
        let list = map.entry(origin).or_default();
        if list.len() < MAX_IDLE_PER_ORIGIN {
            list.push(Idle {
                sender,
                peer,
                since: Instant::now(),
            });
        }
    }

    /// Number of idle connections (all origins).
    pub(crate) fn idle_count(&self) -> usize {
        self.lock().values().map(Vec::len).sum()
    }
}

/// A connection on loan to a response; given back when the body was read to its end.
#[derive(Debug)]
pub(crate) struct Release {
    pub(crate) pool: Arc<Pool>,
    pub(crate) origin: Origin,
    pub(crate) sender: Sender,
    pub(crate) peer: SocketAddr,
}

impl Release {
    pub(crate) fn release(self) {
        self.pool.put(self.origin, self.sender, self.peer);
    }
}
