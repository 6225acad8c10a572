//! One-time tokens kept in memory: enrollment links, OAuth login links and the authorizations
//! waiting for their callback. Each is kept only as the hash of its token, for a lifetime,
//! used once (taken out whatever the outcome), and at most a capacity at once (the one that
//! expires first is voided beyond it). A restart voids them all.
//!
//! Sessions are not one-time (a cookie is used on every request and lives while it is used):
//! they keep their own map in `session`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::RngCore;
use sha2::{Digest, Sha256};

/// A fresh random token: 32 bytes, hex.
pub(crate) fn token() -> String {
    let mut b = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut b);
    hex::encode(b)
}

/// Tokens are kept only as hashes, so a memory dump or a debug print holds nothing usable.
pub(crate) fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Why a token found nothing.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Spent<V> {
    /// Never made here, already used, or voided beyond the capacity.
    Unknown,
    /// Made here and not used, but its lifetime passed: what it was for.
    Expired(V),
}

/// One-time tokens of one kind, each worth a `V` until it is used or expires.
pub(crate) struct OneTime<V> {
    /// Hash of a token → what it is worth and when it expires.
    live: Mutex<HashMap<String, (V, Instant)>>,
    valid: Duration,
    capacity: usize,
}

impl<V> OneTime<V> {
    /// Tokens valid for `valid`, at most `capacity` outstanding at once.
    pub(crate) fn new(valid: Duration, capacity: usize) -> OneTime<V> {
        OneTime {
            live: Mutex::new(HashMap::new()),
            valid,
            capacity,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (V, Instant)>> {
        // Every operation is a single insert or remove: a poisoned lock is still consistent.
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new random token worth `v` from `now`; only its hash is kept.
    pub(crate) fn issue(&self, v: V, now: Instant) -> String {
        let token = token();
        self.insert(&token, v, now);
        token
    }

    /// Keeps `token` (one made elsewhere, such as an OAuth `state`) worth `v` from `now`.
    pub(crate) fn insert(&self, token: &str, v: V, now: Instant) {
        let mut g = self.lock();
        g.retain(|_, (_, until)| *until > now);
        while g.len() >= self.capacity.max(1) {
            let first = g
                .iter()
                .min_by_key(|(_, (_, until))| *until)
                .map(|(k, _)| k.clone());
            match first {
                Some(k) => g.remove(&k),
                None => break,
            };
        }
        g.insert(hash(token), (v, now + self.valid));
    }

    /// Uses up `token`: what it is worth, or why not. Taken out whatever the answer.
    pub(super) fn take(&self, token: &str, now: Instant) -> Result<V, Spent<V>> {
        self.take_hashed(&hash(token), now)
    }

    /// [`OneTime::take`] of the token with this hash.
    pub(super) fn take_hashed(&self, token_hash: &str, now: Instant) -> Result<V, Spent<V>> {
        match self.lock().remove(token_hash) {
            Some((v, until)) if until > now => Ok(v),
            Some((v, _)) => Err(Spent::Expired(v)),
            None => Err(Spent::Unknown),
        }
    }

    /// Whether the token with this hash is live now (it stays so: nothing is used up).
    pub(super) fn is_live_hashed(&self, token_hash: &str, now: Instant) -> bool {
        self.lock()
            .get(token_hash)
            .is_some_and(|(_, until)| *until > now)
    }

    /// Tokens kept now (expired ones included until the next insert).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: Duration = Duration::from_secs(600);

    /// The map on tokio's paused clock: time moves only when the test advances it.
    fn now() -> Instant {
        tokio::time::Instant::now().into_std()
    }

    #[tokio::test(start_paused = true)]
    async fn a_token_is_worth_its_value_until_it_expires() {
        let m = OneTime::new(VALID, 4);
        let t = m.issue("notes", now());
        tokio::time::advance(VALID - Duration::from_millis(1)).await;
        assert!(m.is_live_hashed(&hash(&t), now()));
        assert_eq!(m.take(&t, now()), Ok("notes"));
        let late = m.issue("files", now());
        tokio::time::advance(VALID).await;
        assert!(!m.is_live_hashed(&hash(&late), now()));
        assert_eq!(
            m.take(&late, now()),
            Err(Spent::Expired("files")),
            "an expired token says what it was for"
        );
        assert_eq!(m.take(&late, now()), Err(Spent::Unknown), "and is gone");
    }

    #[tokio::test(start_paused = true)]
    async fn a_token_is_used_once_whatever_the_answer() {
        let m = OneTime::new(VALID, 4);
        let t = m.issue(1, now());
        assert_eq!(m.take(&t, now()), Ok(1));
        assert_eq!(m.take(&t, now()), Err(Spent::Unknown), "used once");
        m.insert("state-from-elsewhere", 2, now());
        assert_eq!(m.take_hashed(&hash("state-from-elsewhere"), now()), Ok(2));
        assert_eq!(m.take("never-made", now()), Err(Spent::Unknown));
        assert_eq!(m.len(), 0, "nothing is kept after its use");
    }

    #[tokio::test(start_paused = true)]
    async fn beyond_its_capacity_the_first_to_expire_is_voided() {
        let m = OneTime::new(VALID, 3);
        let mut tokens = Vec::new();
        for i in 0..5 {
            tokens.push(m.issue(i, now()));
            tokio::time::advance(Duration::from_secs(1)).await;
        }
        assert_eq!(m.len(), 3, "at most its capacity");
        assert_eq!(
            m.take(&tokens[0], now()),
            Err(Spent::Unknown),
            "the oldest voided"
        );
        assert_eq!(m.take(&tokens[1], now()), Err(Spent::Unknown));
        assert_eq!(m.take(&tokens[4], now()), Ok(4), "the newest kept");
        // Expired tokens make room before any live one is voided.
        tokio::time::advance(VALID).await;
        let fresh: Vec<_> = (10..13).map(|i| m.issue(i, now())).collect();
        for (t, i) in fresh.iter().zip(10..) {
            assert_eq!(m.take(t, now()), Ok(i));
        }
    }
}
