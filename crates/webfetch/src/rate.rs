//! The per-host rate limit of a door (W-8), on tokio's clock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// How many hosts are remembered before stale entries are swept.
const SWEEP_AT: usize = 1024;

/// One request per host per `interval`: each caller reserves the next free slot for its host
/// and sleeps until it, so concurrent callers are spaced too. A zero interval disables it.
#[derive(Debug)]
pub(crate) struct RateLimit {
    interval: Duration,
    next: Mutex<HashMap<String, Instant>>,
}

impl RateLimit {
    pub(crate) fn new(interval: Duration) -> Self {
        RateLimit {
            interval,
            next: Mutex::new(HashMap::new()),
        }
    }

    /// Reserve a slot for `host` and return when it comes.
    pub(crate) fn reserve(&self, host: &str) -> Option<Instant> {
        if self.interval.is_zero() {
            return None;
        }
        let now = Instant::now();
        // A poisoned lock only means another caller panicked mid-update of a map of instants;
        // the map is still usable.
        let mut map = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= SWEEP_AT {
            map.retain(|_, t| *t > now);
        }
        let slot = match map.get(host) {
            Some(t) if *t > now => *t,
            _ => now,
        };
        map.insert(host.to_string(), slot + self.interval);
        Some(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn slots_are_spaced_per_host() {
        let rl = RateLimit::new(Duration::from_secs(1));
        let t0 = Instant::now();
        assert_eq!(rl.reserve("a"), Some(t0));
        assert_eq!(rl.reserve("a"), Some(t0 + Duration::from_secs(1)));
        assert_eq!(rl.reserve("b"), Some(t0));
        assert_eq!(rl.reserve("a"), Some(t0 + Duration::from_secs(2)));
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(rl.reserve("a"), Some(t0 + Duration::from_secs(10)));
    }

    #[test]
    fn zero_interval_is_no_limit() {
        let rl = RateLimit::new(Duration::ZERO);
        assert_eq!(rl.reserve("a"), None);
    }
}
