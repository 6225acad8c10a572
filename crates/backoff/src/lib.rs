//! The one retry delay of Maven: the MCP connection manager's re-dials, the MCP client's
//! re-opened listen stream and the feed poller's failed polls all wait on a [`Backoff`].
//!
//! A [`Backoff`] is a small state machine: the count of consecutive failures. Each failure
//! ([`Backoff::fail`]) counts one and returns the delay before the next attempt — `first`
//! after the first failure, doubling with each further one, never above `cap` — moved by the
//! jitter; a success ([`Backoff::reset`]) forgets the failures. A server's "not before" (a
//! `Retry-After`) raises a delay ([`Backoff::fail_at_least`]) but never above the cap.
//!
//! Every delay is jittered, so that retries that failed together do not fire together. How it
//! spreads is the user's choice ([`Spread`]): up to a tenth either way, or up to a tenth
//! upward only (never below what was asked). Where the jitter comes from is injectable
//! ([`Jitter`]): the thread's random numbers, a seeded generator or a fixed value, so that
//! tests are exact. A leaf: it knows nothing of what is retried, and reads no clock.

#![warn(clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::time::Duration;

use rand::{Rng, SeedableRng};

/// Where the jitter of a [`Backoff`] comes from: a unit value in `[0, 1]` per delay.
#[derive(Clone, Debug)]
pub enum Jitter {
    /// The thread's random numbers (the default).
    Random,
    /// A seeded generator: the same seed gives the same delays.
    Seeded(Box<rand::rngs::StdRng>),
    /// Always this unit: `0.5` is the middle of [`Spread::Around`], `0.0` is no spread at all
    /// for [`Spread::Up`].
    Fixed(f64),
}

impl Jitter {
    /// A generator seeded with `seed`.
    pub fn seeded(seed: u64) -> Jitter {
        Jitter::Seeded(Box::new(rand::rngs::StdRng::seed_from_u64(seed)))
    }

    /// The next unit value, in `[0, 1]`.
    pub fn unit(&mut self) -> f64 {
        match self {
            Jitter::Random => rand::random::<f64>(),
            Jitter::Seeded(r) => r.gen::<f64>(),
            Jitter::Fixed(u) => *u,
        }
    }
}

/// How a delay is spread by the jitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// Up to a tenth either way, never above the cap: the unit `u` moves the delay by
    /// `(2u − 1) · 10 %`.
    Around,
    /// Up to a tenth upward, so never below what was asked; past the cap it is spread into
    /// what is left below the cap, and a delay at the cap spreads downward, never below
    /// `floor` (nor below the delay's own "not before").
    Up {
        /// The least delay there is.
        floor: Duration,
    },
}

/// A retry delay that doubles from `first` to `cap` with each consecutive failure, is reset
/// by a success, and is jittered.
#[derive(Clone, Debug)]
pub struct Backoff {
    first: Duration,
    cap: Duration,
    spread: Spread,
    jitter: Jitter,
    failures: u32,
}

impl Backoff {
    /// `first` after the first failure, doubling to `cap` (raised to `first` if below it);
    /// spread [`Spread::Around`] by [`Jitter::Random`]; no failure yet.
    pub fn new(first: Duration, cap: Duration) -> Backoff {
        Backoff {
            first,
            cap: cap.max(first),
            spread: Spread::Around,
            jitter: Jitter::Random,
            failures: 0,
        }
    }

    /// Spreads upward only ([`Spread::Up`]), never below `floor`.
    pub fn upward(mut self, floor: Duration) -> Backoff {
        self.spread = Spread::Up { floor };
        self
    }

    /// Takes the jitter from `jitter`.
    pub fn with_jitter(mut self, jitter: Jitter) -> Backoff {
        self.jitter = jitter;
        self
    }

    /// Starts from `failures` consecutive failures (a count kept across a restart).
    pub fn with_failures(mut self, failures: u32) -> Backoff {
        self.failures = failures;
        self
    }

    /// Consecutive failures so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// The delay after the first failure.
    pub fn first(&self) -> Duration {
        self.first
    }

    /// The largest delay.
    pub fn cap(&self) -> Duration {
        self.cap
    }

    /// A success: the next failure waits `first` again.
    pub fn reset(&mut self) {
        self.failures = 0;
    }

    /// The delay after the failures so far, before jitter: `first · 2^(failures − 1)`, at most
    /// `cap` (`first` when there is none yet).
    pub fn base(&self) -> Duration {
        let mut d = self.first;
        for _ in 1..self.failures {
            if d.is_zero() || d >= self.cap {
                break;
            }
            d = d.saturating_mul(2);
        }
        d.min(self.cap)
    }

    /// One more failure: counts it and returns the jittered delay before the next attempt.
    pub fn fail(&mut self) -> Duration {
        self.fail_at_least(None)
    }

    /// One more failure, after which the other side asked for `at_least` (a `Retry-After`):
    /// the delay is the longer of the two, at most the cap, jittered never below `at_least`
    /// (unless that is over the cap).
    pub fn fail_at_least(&mut self, at_least: Option<Duration>) -> Duration {
        let d = self.grow(at_least);
        let unit = self.jitter.unit();
        self.spread(d, at_least, unit)
    }

    /// One more failure, before jitter: counts it and returns the longer of [`Backoff::base`]
    /// and `at_least`, at most the cap.
    pub fn grow(&mut self, at_least: Option<Duration>) -> Duration {
        self.failures = self.failures.saturating_add(1);
        at_least
            .map_or(self.base(), |a| self.base().max(a))
            .min(self.cap)
    }

    /// Spreads `d` by `unit` (in `[0, 1]`; anything else is clamped, and a value that is not
    /// a number means no jitter) the way this backoff spreads, never below `at_least` capped.
    pub fn spread(&self, d: Duration, at_least: Option<Duration>, unit: f64) -> Duration {
        let least = at_least.map_or(Duration::ZERO, |a| a.min(self.cap));
        match self.spread {
            Spread::Around => spread_around(d, self.first, self.cap, unit).max(least),
            Spread::Up { floor } => spread_up(d, floor.max(least), self.cap, unit),
        }
    }
}

/// [`Spread::Around`]: `d` moved by `(2·unit − 1) · 10 %`, within `[first · 0.9, cap]`; a
/// `unit` that is not a number is the middle (no change).
pub fn spread_around(d: Duration, first: Duration, cap: Duration, unit: f64) -> Duration {
    let unit = if unit.is_nan() {
        0.5
    } else {
        unit.clamp(0.0, 1.0)
    };
    let j = (unit * 2.0 - 1.0) * 0.1;
    d.mul_f64(1.0 + j).clamp(first.mul_f64(0.9), cap.max(first))
}

/// [`Spread::Up`]: `d` raised by up to a tenth (`unit` of it), so never below what was
/// asked; a delay whose tenth would pass `cap` is spread into what is left below the cap, and
/// a delay at the cap spreads downward, never below `floor`. A `unit` that is not a number
/// is no spread.
pub fn spread_up(d: Duration, floor: Duration, cap: Duration, unit: f64) -> Duration {
    let unit = if unit.is_finite() {
        unit.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let spread = (d / 10).mul_f64(unit);
    if d + spread <= cap {
        d + spread
    } else if d < cap {
        d + (cap - d).mul_f64(unit)
    } else {
        // Only a delay clamped at the cap spreads downward.
        cap.saturating_sub(spread).max(floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const S: Duration = Duration::from_secs(1);

    fn secs(d: Duration) -> f64 {
        d.as_secs_f64()
    }

    #[test]
    fn failures_double_from_first_to_the_cap_and_a_success_resets() {
        let mut b = Backoff::new(S, S * 60).with_jitter(Jitter::Fixed(0.5));
        assert_eq!(b.failures(), 0);
        assert_eq!(b.base(), S, "before any failure the next one waits `first`");
        let got: Vec<Duration> = (0..9).map(|_| b.fail()).collect();
        let want: Vec<Duration> = [1, 2, 4, 8, 16, 32, 60, 60, 60]
            .into_iter()
            .map(|s| S * s)
            .collect();
        assert_eq!(got, want);
        assert_eq!(b.failures(), 9);
        b.reset();
        assert_eq!(b.failures(), 0);
        assert_eq!(b.fail(), S);
        assert_eq!(b.fail(), S * 2);
    }

    #[test]
    fn a_count_kept_across_a_restart_resumes_where_it_was() {
        let mut b = Backoff::new(S * 600, S * 86_400)
            .upward(S * 300)
            .with_jitter(Jitter::Fixed(0.0))
            .with_failures(3);
        assert_eq!(b.base(), S * 2400);
        assert_eq!(b.fail(), S * 4800);
        assert_eq!(b.failures(), 4);
    }

    #[test]
    fn the_cap_is_never_below_first_and_a_zero_first_stays_zero() {
        let b = Backoff::new(S * 10, S);
        assert_eq!((b.first(), b.cap()), (S * 10, S * 10));
        let mut z = Backoff::new(Duration::ZERO, S).with_failures(u32::MAX - 1);
        assert_eq!(z.fail(), Duration::ZERO);
        assert_eq!(z.failures(), u32::MAX);
        assert_eq!(z.grow(None), Duration::ZERO, "the count saturates");
    }

    #[test]
    fn doubling_past_any_exponent_never_overflows() {
        let b = Backoff::new(Duration::from_nanos(1), Duration::MAX).with_failures(u32::MAX);
        assert_eq!(b.base(), Duration::MAX);
        let b = Backoff::new(Duration::from_millis(10), S * 86_400).with_failures(40);
        assert_eq!(b.base(), S * 86_400, "doubling goes on until the cap");
    }

    #[test]
    fn retry_after_raises_a_delay_but_never_past_the_cap() {
        let mut b = Backoff::new(S * 600, S * 86_400)
            .upward(S * 300)
            .with_jitter(Jitter::Fixed(0.0));
        assert_eq!(b.fail_at_least(Some(S * 5000)), S * 5000);
        assert_eq!(
            b.fail_at_least(Some(S * 60)),
            S * 1200,
            "a shorter one changes nothing"
        );
        assert_eq!(b.fail_at_least(Some(Duration::MAX)), S * 86_400);
        // At the cap the spread goes downward, but never below what was asked.
        let mut b = b.with_jitter(Jitter::Fixed(1.0)).with_failures(20);
        assert_eq!(b.fail_at_least(Some(S * 86_400)), S * 86_400);
        assert_eq!(b.fail_at_least(None), S * 86_400 - S * 8640);
        // Below the cap it spreads upward, into what is left below the cap.
        let mut b = b.with_failures(0);
        assert_eq!(b.fail_at_least(Some(S * 86_000)), S * 86_400);
        // Around never goes below it either.
        let mut a = Backoff::new(S * 100, S * 1000).with_jitter(Jitter::Fixed(0.0));
        assert_eq!(a.fail(), S * 90);
        assert_eq!(a.fail_at_least(Some(S * 250)), S * 250);
        assert_eq!(a.fail_at_least(Some(S * 5000)), S * 1000);
    }

    #[test]
    fn around_spreads_a_tenth_either_way_within_the_bounds() {
        let b = Backoff::new(S * 60, S * 1800);
        assert_eq!(b.spread(S * 120, None, 0.0), S * 108);
        assert_eq!(b.spread(S * 120, None, 0.5), S * 120);
        assert_eq!(b.spread(S * 120, None, 1.0), S * 132);
        assert_eq!(
            b.spread(S * 1800, None, 1.0),
            S * 1800,
            "never above the cap"
        );
        assert_eq!(b.spread(S * 1800, None, 0.0), S * 1620);
        assert_eq!(b.spread(S * 120, None, f64::NAN), S * 120);
        assert_eq!(b.spread(S * 120, None, 7.0), S * 132);
    }

    #[test]
    fn up_spreads_upward_and_downward_only_at_the_cap() {
        let b = Backoff::new(S * 10, S * 1000).upward(S * 5);
        assert_eq!(b.spread(S * 100, None, 0.0), S * 100);
        assert_eq!(b.spread(S * 100, None, 0.5), S * 105);
        assert_eq!(b.spread(S * 100, None, f64::INFINITY), S * 100);
        // Past the cap: into what is left below it.
        assert_eq!(b.spread(S * 980, None, 0.5), S * 990);
        // At the cap: downward, never below the floor.
        assert_eq!(b.spread(S * 1000, None, 0.5), S * 950);
        let tight = Backoff::new(S, S * 1000).upward(S * 990);
        assert_eq!(tight.spread(S * 1000, None, 1.0), S * 990);
    }

    #[test]
    fn a_seeded_jitter_repeats_and_a_fixed_one_is_exact() {
        let run = |j: Jitter| {
            let mut b = Backoff::new(S, S * 60).with_jitter(j);
            (0..8).map(|_| b.fail()).collect::<Vec<_>>()
        };
        assert_eq!(run(Jitter::seeded(7)), run(Jitter::seeded(7)));
        assert_ne!(run(Jitter::seeded(7)), run(Jitter::seeded(8)));
        let exact = run(Jitter::Fixed(0.5));
        assert_eq!(exact[..3], [S, S * 2, S * 4]);
        // Seeded delays are jittered: not all of them sit on the unjittered value.
        assert!(run(Jitter::seeded(7))
            .iter()
            .zip(&exact)
            .any(|(a, b)| a != b));
    }

    proptest! {
        #[test]
        fn every_delay_is_within_a_tenth_of_its_base_and_the_bounds(
            first in 1u64..10_000,
            cap in 1u64..100_000,
            floor in 0u64..10_000,
            failures in 0u32..200,
            at_least in proptest::option::of(0u64..200_000),
            seed in any::<u64>(),
            up in any::<bool>(),
        ) {
            let (first, cap, floor) = (S * first as u32, S * cap as u32, S * floor as u32);
            let at_least = at_least.map(|a| S * a as u32);
            let mut b = Backoff::new(first, cap)
                .with_jitter(Jitter::seeded(seed))
                .with_failures(failures);
            if up {
                b = b.upward(floor.min(first));
            }
            let cap = b.cap();
            let base = b.clone().grow(at_least);
            let d = b.fail_at_least(at_least);
            prop_assert_eq!(b.failures(), failures + 1);
            prop_assert!(d <= cap, "{:?} > cap {:?}", d, cap);
            prop_assert!(d.abs_diff(base) <= base / 10 + Duration::from_nanos(1));
            if let Some(a) = at_least {
                prop_assert!(d >= a.min(cap), "{:?} < {:?}", d, a);
            }
            if up && base < cap {
                prop_assert!(d >= base, "upward only below the cap");
            }
            prop_assert!(secs(d) >= secs(first) * 0.9 - 1e-9 || (up && d >= floor.min(first)));
        }

        #[test]
        fn the_base_never_shrinks_while_failing(first in 1u64..100_000, n in 1usize..80) {
            let mut b = Backoff::new(S * first as u32, S * 86_400);
            let mut last = Duration::ZERO;
            for _ in 0..n {
                let d = b.grow(None);
                prop_assert!(d >= last);
                last = d;
            }
        }
    }
}
