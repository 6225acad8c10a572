//! When a feed is fetched next: its interval, what the server asked for, exponential backoff
//! on failure, jitter, and the per-host gate shared by all feeds.
//!
//! The failures, their backoff and the jitter of every delay are a [`backoff::Backoff`]
//! (from the interval doubling to [`MAX_DELAY`], spread upward, never below the floor).
//! Everything here is on tokio's clock, so tests drive it with a paused clock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use backoff::Backoff;
use tokio::time::Instant;

use crate::http::Freshness;

/// No feed waits longer than this between two fetches, whatever the server asked for.
pub const MAX_DELAY: Duration = Duration::from_secs(24 * 60 * 60);

/// The first poll after start comes within this spread (or a quarter of the interval, if less),
/// so feeds configured together do not fire together.
pub(crate) const FIRST_SPREAD: Duration = Duration::from_secs(30);

/// How a poll went, as far as the schedule cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Fetched (200 or 304): the next poll honours the feed's `ttl` and the response's
    /// freshness hints.
    Success {
        /// RSS `<ttl>`.
        ttl: Option<Duration>,
        /// Cache-Control / Expires / Retry-After.
        fresh: Freshness,
    },
    /// Failed: back off, at least as long as `Retry-After` says.
    Failure {
        /// The server's `Retry-After`.
        retry_after: Option<Duration>,
    },
    /// Never again (410 Gone).
    Stop,
}

/// The schedule of one feed: its interval, the floor, and the consecutive failures.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    interval: Duration,
    min: Duration,
    /// The consecutive failures: interval, 2×, 4×, … up to [`MAX_DELAY`].
    backoff: Backoff,
}

impl Schedule {
    /// `interval` is raised to `min` and clamped at [`MAX_DELAY`].
    pub(crate) fn new(interval: Duration, min: Duration, failures: u32) -> Schedule {
        let min = min.min(MAX_DELAY);
        let interval = interval.max(min).min(MAX_DELAY);
        Schedule {
            interval,
            min,
            backoff: Backoff::new(interval, MAX_DELAY)
                .upward(min)
                .with_failures(failures),
        }
    }

    /// Consecutive failures so far.
    pub(crate) fn failures(&self) -> u32 {
        self.backoff.failures()
    }

    /// The delay before the next poll, before jitter; `None` after [`Verdict::Stop`].
    pub(crate) fn base_delay(&mut self, v: Verdict) -> Option<Duration> {
        let d = match v {
            Verdict::Stop => return None,
            Verdict::Success { ttl, fresh } => {
                self.backoff.reset();
                [ttl, fresh.max_age, fresh.retry_after]
                    .into_iter()
                    .flatten()
                    .fold(self.interval, Duration::max)
            }
            // interval, 2×, 4×, … : the first retry comes at the usual time; Retry-After
            // wins over a shorter one.
            Verdict::Failure { retry_after } => self.backoff.grow(retry_after),
        };
        Some(d.max(self.min).min(MAX_DELAY))
    }

    /// The delay before the next poll, jittered by `unit` (uniform in `[0, 1)`): upward,
    /// never below the floor nor what the server asked for.
    pub(crate) fn next_delay(&mut self, v: Verdict, unit: f64) -> Option<Duration> {
        let asked = match v {
            Verdict::Success { fresh, .. } => fresh.retry_after,
            Verdict::Failure { retry_after } => retry_after,
            Verdict::Stop => None,
        };
        self.base_delay(v)
            .map(|d| self.backoff.spread(d, asked, unit))
    }

    /// The delay before the first poll after start, jittered by `unit`.
    pub(crate) fn first_delay(&self, unit: f64) -> Duration {
        (self.interval / 4)
            .min(FIRST_SPREAD)
            .mul_f64(unit.clamp(0.0, 1.0))
    }
}

/// Spreads a delay by up to a tenth, upward, so it never drops below what the server or the
/// floor asked for; a delay clamped at the 24 h cap spreads downward (never below `floor`):
/// the spread [`Schedule::next_delay`] gives every delay.
#[cfg(test)]
pub(crate) fn jitter(d: Duration, floor: Duration, unit: f64) -> Duration {
    backoff::spread_up(d, floor, MAX_DELAY, unit)
}

/// One request per host per interval **across feeds**: webfetch's limiter belongs to one door,
/// and every feed is a door of its own, so two feeds on one host are spaced here.
#[derive(Debug, Default)]
pub(crate) struct HostGate {
    next: Mutex<HashMap<String, Instant>>,
}

impl HostGate {
    /// Reserves the next free slot for `host` and returns when it comes.
    pub(crate) fn reserve(&self, host: &str, interval: Duration) -> Instant {
        let now = Instant::now();
        // A poisoned lock only means a panic mid-update of a map of instants; still usable.
        let mut map = self.next.lock().unwrap_or_else(|e| e.into_inner());
        let slot = match map.get(host) {
            Some(t) if *t > now => *t,
            _ => now,
        };
        map.insert(host.to_owned(), slot + interval);
        slot
    }

    /// Takes `host`'s slot now if it is free, else says how long until it is: a poll asked
    /// for out of schedule (`maven feeds refresh`) keeps the host's spacing and does not wait.
    pub(crate) fn try_reserve(&self, host: &str, interval: Duration) -> Result<(), Duration> {
        let now = Instant::now();
        let mut map = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = map.get(host).filter(|t| **t > now) {
            return Err(*t - now);
        }
        map.insert(host.to_owned(), now + interval);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIN: Duration = Duration::from_secs(300);

    fn ok() -> Verdict {
        Verdict::Success {
            ttl: None,
            fresh: Freshness::default(),
        }
    }

    #[test]
    fn interval_never_below_the_floor_and_never_above_a_day() {
        let mut s = Schedule::new(Duration::from_secs(10), MIN, 0);
        assert_eq!(s.base_delay(ok()), Some(MIN));
        let mut s = Schedule::new(Duration::from_secs(3 * 86_400), MIN, 0);
        assert_eq!(s.base_delay(ok()), Some(MAX_DELAY));
    }

    #[test]
    fn hints_raise_the_interval_and_never_lower_it() {
        type Row = (Option<u64>, Option<u64>, Option<u64>, u64);
        let table: &[Row] = &[
            (None, None, None, 1800),
            (Some(3600), None, None, 3600),
            (None, Some(7200), None, 7200),
            (None, None, Some(5400), 5400),
            (Some(60), Some(60), Some(60), 1800),
            (Some(3600), Some(7200), Some(600), 7200),
            (Some(10 * 86_400), None, None, 86_400),
        ];
        for &(ttl, max_age, retry, want) in table {
            let mut s = Schedule::new(Duration::from_secs(1800), MIN, 0);
            let v = Verdict::Success {
                ttl: ttl.map(Duration::from_secs),
                fresh: Freshness {
                    max_age: max_age.map(Duration::from_secs),
                    retry_after: retry.map(Duration::from_secs),
                },
            };
            assert_eq!(
                s.base_delay(v),
                Some(Duration::from_secs(want)),
                "{ttl:?} {max_age:?} {retry:?}"
            );
        }
    }

    #[test]
    fn failures_back_off_exponentially_to_a_day_and_a_success_resets() {
        let mut s = Schedule::new(Duration::from_secs(600), MIN, 0);
        let fail = Verdict::Failure { retry_after: None };
        let got: Vec<u64> = (0..10)
            .map(|_| s.base_delay(fail).unwrap().as_secs())
            .collect();
        assert_eq!(
            got,
            [600, 1200, 2400, 4800, 9600, 19_200, 38_400, 76_800, 86_400, 86_400]
        );
        assert_eq!(s.failures(), 10);
        assert_eq!(s.base_delay(ok()), Some(Duration::from_secs(600)));
        assert_eq!(s.failures(), 0);
        // Retry-After wins over a shorter backoff, but not over the cap.
        let r = Verdict::Failure {
            retry_after: Some(Duration::from_secs(5000)),
        };
        assert_eq!(s.base_delay(r), Some(Duration::from_secs(5000)));
        let r = Verdict::Failure {
            retry_after: Some(Duration::from_secs(u64::MAX)),
        };
        assert_eq!(s.base_delay(r), Some(MAX_DELAY));
        assert_eq!(s.base_delay(Verdict::Stop), None);
    }

    proptest! {
        #[test]
        fn every_delay_is_between_the_floor_and_a_day(
            interval in 0u64..400_000,
            min in 0u64..100_000,
            failures in 0u32..100,
            retry in proptest::option::of(0u64..u64::MAX),
            ttl in proptest::option::of(0u64..1_000_000),
            unit in 0.0f64..1.0,
            success in any::<bool>(),
        ) {
            let min = Duration::from_secs(min).min(MAX_DELAY);
            let mut s = Schedule::new(Duration::from_secs(interval), min, failures);
            let v = if success {
                Verdict::Success {
                    ttl: ttl.map(Duration::from_secs),
                    fresh: Freshness { max_age: None, retry_after: retry.map(Duration::from_secs) },
                }
            } else {
                Verdict::Failure { retry_after: retry.map(Duration::from_secs) }
            };
            let base = s.clone().base_delay(v).unwrap();
            let d = s.next_delay(v, unit).unwrap();
            prop_assert!(d >= min, "{d:?} < {min:?}");
            prop_assert!(d <= MAX_DELAY);
            prop_assert!(d.abs_diff(base) <= base / 10 + Duration::from_nanos(1));
            if let Some(r) = retry {
                let r = Duration::from_secs(r);
                prop_assert!(d >= r.min(MAX_DELAY), "{d:?} < retry-after {r:?}");
            }
        }

        #[test]
        fn backoff_never_shrinks_while_failing(interval in 1u64..100_000, n in 1usize..40) {
            let mut s = Schedule::new(Duration::from_secs(interval), MIN, 0);
            let mut last = Duration::ZERO;
            for _ in 0..n {
                let d = s.base_delay(Verdict::Failure { retry_after: None }).unwrap();
                prop_assert!(d >= last);
                last = d;
            }
        }
    }

    #[test]
    fn jitter_spreads_upward_and_downward_at_the_cap() {
        let d = Duration::from_secs(1000);
        assert_eq!(jitter(d, MIN, 0.0), d);
        assert_eq!(jitter(d, MIN, 0.5), Duration::from_secs(1050));
        assert_eq!(jitter(d, MIN, f64::NAN), d);
        assert_eq!(jitter(MAX_DELAY, MIN, 0.5), MAX_DELAY - MAX_DELAY / 20);
        let s = Schedule::new(Duration::from_secs(3600), MIN, 0);
        assert_eq!(s.first_delay(0.0), Duration::ZERO);
        assert_eq!(s.first_delay(0.5), FIRST_SPREAD / 2);
        let s = Schedule::new(Duration::from_secs(8), Duration::from_secs(1), 0);
        assert_eq!(s.first_delay(1.0), Duration::from_secs(2));
    }

    #[tokio::test(start_paused = true)]
    async fn host_gate_spaces_requests_per_host() {
        let g = HostGate::default();
        let t0 = Instant::now();
        let i = Duration::from_secs(1);
        assert_eq!(g.reserve("a.example", i), t0);
        assert_eq!(g.reserve("a.example", i), t0 + i);
        assert_eq!(g.reserve("b.example", i), t0);
        assert_eq!(g.reserve("a.example", Duration::from_secs(5)), t0 + 2 * i);
        assert_eq!(g.reserve("a.example", i), t0 + 7 * i);
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(g.reserve("a.example", i), t0 + Duration::from_secs(60));
    }
}
