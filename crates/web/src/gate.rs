//! The passphrase step-up's gate: one argon2 verification at a time, and a failure budget
//! reserved before verifying.
//!
//! - At most one verification runs at any moment (argon2id takes its memory per verification,
//!   so memory stays that of one, whatever the number of parallel requests).
//! - An attempt takes a place in the budget of [`MAX_FAILURES`] *before* it is verified and
//!   gives it back only when it succeeds: attempts in flight count as failures, so parallel
//!   guesses can never verify more than [`MAX_FAILURES`] wrong passphrases in a row; the rest
//!   are refused at once, unverified.
//! - [`MAX_FAILURES`] wrong passphrases in a row lock the passphrase for [`LOCK`]; the lock
//!   says when it lifts, counts the attempts it refused, and logs both. It locks the
//!   passphrase only: a passkey step-up still works, which is the owner's path while someone
//!   hammers the passphrase (enroll one with `maven web enroll`, which only the owner's
//!   account can run, since the socket is 0600).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

/// Wrong passphrases in a row (attempts in flight included) before the passphrase locks.
pub(crate) const MAX_FAILURES: u32 = 5;
/// How long the passphrase stays locked.
pub(crate) const LOCK: Duration = Duration::from_secs(60);

/// Why an attempt was refused before it was verified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    /// The passphrase is locked.
    #[error(
        "the passphrase is locked for {lifts_in_s} more s after {MAX_FAILURES} wrong passphrases \
         ({refused} attempts refused meanwhile); a passkey still works"
    )]
    Locked { lifts_in_s: u64, refused: u64 },
    /// Attempts already in flight use up the failure budget.
    #[error(
        "{MAX_FAILURES} passphrase attempts are already being checked; try again in a moment (a passkey still works)"
    )]
    Busy,
}

#[derive(Default)]
struct State {
    /// Wrong passphrases in a row.
    failures: u32,
    /// Attempts admitted and not yet verified.
    in_flight: u32,
    /// The lock's end, while it holds.
    locked_until: Option<Instant>,
    /// Attempts refused since the lock began.
    refused: u64,
}

/// What the gate says, for status.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GateStatus {
    /// Verifications run since start-up.
    pub(crate) verifications: u64,
    /// Attempts refused unverified since start-up (locked or over budget).
    pub(crate) refused: u64,
    /// Seconds until the lock lifts, while it holds.
    pub(crate) locked_for_s: Option<u64>,
}

/// The passphrase gate of the page.
pub(crate) struct Gate {
    state: Mutex<State>,
    one: Semaphore,
    verifications: AtomicU64,
    refused_total: AtomicU64,
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            state: Mutex::new(State::default()),
            one: Semaphore::new(1),
            verifications: AtomicU64::new(0),
            refused_total: AtomicU64::new(0),
        }
    }
}

/// An admitted attempt: its place in the failure budget, until [`Gate::verify`] settles it.
pub(crate) struct Admitted<'a> {
    gate: &'a Gate,
    settled: bool,
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        if !self.settled {
            // A request dropped before its verdict gives its place back, uncounted.
            let mut g = self.gate.lock();
            g.in_flight = g.in_flight.saturating_sub(1);
        }
    }
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every critical section leaves the counters consistent; a poisoned lock is recovered.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a place in the failure budget, or refuses at once.
    pub(crate) fn admit(&self, now: Instant) -> Result<Admitted<'_>, Refused> {
        let mut g = self.lock();
        if let Some(until) = g.locked_until {
            if now < until {
                g.refused += 1;
                self.refused_total.fetch_add(1, Ordering::Relaxed);
                return Err(Refused::Locked {
                    lifts_in_s: until.saturating_duration_since(now).as_secs().max(1),
                    refused: g.refused,
                });
            }
            tracing::info!(
                refused = g.refused,
                "the passphrase lock lifted; {} attempts were refused while it held",
                g.refused
            );
            g.locked_until = None;
            g.refused = 0;
            g.failures = 0;
        }
        if g.failures.saturating_add(g.in_flight) >= MAX_FAILURES {
            self.refused_total.fetch_add(1, Ordering::Relaxed);
            return Err(Refused::Busy);
        }
        g.in_flight += 1;
        Ok(Admitted {
            gate: self,
            settled: false,
        })
    }

    /// Runs `check` (the argon2 verification) with no other verification running, and
    /// settles the attempt: a success clears the failures, a failure counts and may lock.
    pub(crate) async fn verify<T: Send + 'static>(
        &self,
        mut admitted: Admitted<'_>,
        now: impl Fn() -> Instant,
        check: impl FnOnce() -> Option<T> + Send + 'static,
    ) -> Result<Option<T>, String> {
        let permit = self
            .one
            .acquire()
            .await
            .map_err(|e| format!("passphrase check: {e}"))?;
        let n = self.verifications.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::debug!(verification = n, "verifying a passphrase");
        let out = tokio::task::spawn_blocking(check)
            .await
            .map_err(|e| format!("passphrase check: {e}"))?;
        drop(permit);
        admitted.settled = true;
        let mut g = self.lock();
        g.in_flight = g.in_flight.saturating_sub(1);
        if out.is_some() {
            g.failures = 0;
        } else {
            g.failures = g.failures.saturating_add(1);
            if g.failures >= MAX_FAILURES && g.locked_until.is_none() {
                g.locked_until = Some(now() + LOCK);
                g.refused = 0;
                tracing::warn!(
                    failures = g.failures,
                    lock_s = LOCK.as_secs(),
                    "{} wrong passphrases in a row: the passphrase is locked for {} s (a passkey still works)",
                    g.failures,
                    LOCK.as_secs()
                );
            }
        }
        Ok(out)
    }

    /// Counters and the lock, for status.
    pub(crate) fn status(&self, now: Instant) -> GateStatus {
        let g = self.lock();
        GateStatus {
            verifications: self.verifications.load(Ordering::Relaxed),
            refused: self.refused_total.load(Ordering::Relaxed),
            locked_for_s: g
                .locked_until
                .filter(|u| now < *u)
                .map(|u| u.saturating_duration_since(now).as_secs().max(1)),
        }
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "the page's clock is std's `Instant`; these tests start it at now"
)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_budget_is_taken_before_verifying_and_the_lock_lifts() {
        let gate = Gate::default();
        let t0 = Instant::now();
        let admitted: Vec<_> = (0..MAX_FAILURES).map(|_| gate.admit(t0).unwrap()).collect();
        assert_eq!(gate.admit(t0).err(), Some(Refused::Busy));
        for a in admitted {
            assert_eq!(gate.verify(a, || t0, || None::<()>).await, Ok(None));
        }
        assert_eq!(
            gate.admit(t0 + Duration::from_secs(1)).err(),
            Some(Refused::Locked {
                lifts_in_s: 59,
                refused: 1
            })
        );
        assert_eq!(gate.status(t0).verifications, u64::from(MAX_FAILURES));
        let a = gate.admit(t0 + LOCK).unwrap();
        assert_eq!(
            gate.verify(a, || t0 + LOCK, || Some(())).await,
            Ok(Some(()))
        );
        assert_eq!(gate.status(t0 + LOCK).locked_for_s, None);
    }

    #[test]
    fn a_dropped_attempt_gives_its_place_back() {
        let gate = Gate::default();
        let t0 = Instant::now();
        for _ in 0..10 {
            drop(gate.admit(t0).unwrap());
        }
        assert!(gate.admit(t0).is_ok());
    }
}
