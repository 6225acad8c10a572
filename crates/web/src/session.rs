//! Browser sessions, step-up freshness, one-time enrollment tokens and the clock they run on.
//!
//! Everything here lives in memory: a restart ends every session and every step-up (the owner
//! verifies again), and voids every outstanding enrollment link (`maven web enroll` makes a new
//! one). Only the passkeys themselves are persisted, in the store.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use webauthn_rs::prelude::{PasskeyAuthentication, PasskeyRegistration};

use super::once::OneTime;
pub(crate) use super::once::{hash, token};

/// How long a step-up stays fresh (U-2).
pub(crate) const STEP_UP_FRESH: Duration = Duration::from_secs(5 * 60);
/// How long an enrollment link is valid.
pub(crate) const ENROLL_VALID: Duration = Duration::from_secs(10 * 60);
/// A session unused for this long is forgotten (or for `web.session_hours`, when longer).
pub(crate) const SESSION_IDLE: Duration = Duration::from_secs(12 * 60 * 60);
/// A started WebAuthn ceremony must finish within this.
pub(crate) const CEREMONY_VALID: Duration = Duration::from_secs(5 * 60);
/// Sessions kept at once. Beyond this the least recently used session that holds no step-up is
/// dropped; a session that holds a step-up is never pushed out by a new one.
pub(crate) const MAX_SESSIONS: usize = 256;
/// New sessions made within [`CREATE_WINDOW`] for one peer uid: at most this many. On
/// loopback the page serves only its owner's processes, so the owner's budget is the owner's
/// alone; beyond loopback every peer shares the one budget of the unknown uid.
pub(crate) const CREATE_MAX: usize = 30;
/// Peer uids whose budgets are kept at once (beyond it the emptiest is forgotten).
const BUDGETS: usize = 64;
/// The window of [`CREATE_MAX`].
pub(crate) const CREATE_WINDOW: Duration = Duration::from_secs(60);
/// Enrollment links outstanding at once; the oldest is voided beyond this.
const MAX_ENROLLMENTS: usize = 8;

/// Where "now" comes from. Injectable so tests can age a step-up without waiting.
pub trait Clock: Send + Sync + 'static {
    /// The current instant of a monotonic clock.
    fn now(&self) -> Instant;
}

/// The real monotonic clock.
pub struct SystemClock;

impl Clock for SystemClock {
    #[expect(
        clippy::disallowed_methods,
        reason = "the page's one clock: step-ups carry std's `Instant`; tests inject theirs"
    )]
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// One browser's session.
pub(crate) struct Session {
    /// Sent back in the `x-csrf-token` header of every POST.
    pub(crate) csrf: String,
    last_used: Instant,
    /// The last verified step-up (only verifying the owner makes one).
    pub(crate) step_up: Option<stepup::StepUp>,
    /// When this session enrolled a passkey through a one-time link: that signs it in as a
    /// sign-in does (the link came from the owner's own `maven web enroll`), and makes no
    /// step-up (enabling an act still asks the passkey).
    pub(crate) enrolled: Option<Instant>,
    /// A registration in progress: its state and the enrollment token's hash, when it started.
    pub(crate) registration: Option<((PasskeyRegistration, String), Instant)>,
    /// An authentication in progress and when it started.
    pub(crate) authentication: Option<(PasskeyAuthentication, Instant)>,
}

impl Session {
    /// When the session was last signed in: its last step-up, or its enrollment.
    pub(crate) fn signed_in_at(&self) -> Option<Instant> {
        self.step_up
            .as_ref()
            .map(stepup::StepUp::at)
            .max(self.enrolled)
    }
}

/// Compares two secrets without an early exit on the first differing byte.
pub(crate) fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Why no new session was made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SessionRefused {
    /// More than [`CREATE_MAX`] new sessions within [`CREATE_WINDOW`].
    #[error("too many new sessions: at most {CREATE_MAX} a minute; try again in {wait_s} s")]
    TooMany { wait_s: u64 },
    /// Every slot holds a session with a step-up.
    #[error("every one of the {MAX_SESSIONS} sessions holds a step-up; try again later")]
    Full,
}

/// Every session, behind one lock held only for map operations, and the enrollment tokens.
pub(crate) struct Sessions {
    inner: Mutex<Inner>,
    /// A session unused for this long is forgotten.
    idle: Duration,
    /// One-time enrollment tokens.
    enrollments: OneTime<()>,
}

impl Default for Sessions {
    fn default() -> Sessions {
        Sessions::new(SESSION_IDLE)
    }
}

#[derive(Default)]
struct Inner {
    /// Keyed by the hash of the cookie value.
    sessions: HashMap<String, Session>,
    /// Per peer uid (`None`: not known), when its sessions of the last [`CREATE_WINDOW`]
    /// were made, oldest first.
    created: HashMap<Option<u32>, std::collections::VecDeque<Instant>>,
}

impl Sessions {
    /// Sessions forgotten when unused for `idle`.
    pub(crate) fn new(idle: Duration) -> Sessions {
        Sessions {
            inner: Mutex::default(),
            idle,
            enrollments: OneTime::new(ENROLL_VALID, MAX_ENROLLMENTS),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding this lock leaves maps that are still consistent (every
        // operation is a single insert/remove), so a poisoned lock is recovered.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Creates a session for a peer of uid `peer` (`None`: not known); returns the cookie
    /// value (the only copy of the token). Refused beyond [`CREATE_MAX`] new sessions a minute
    /// for that uid, and when every slot holds a step-up.
    pub(crate) fn create(&self, now: Instant, peer: Option<u32>) -> Result<String, SessionRefused> {
        let mut g = self.lock();
        for q in g.created.values_mut() {
            while q
                .front()
                .is_some_and(|t| now.saturating_duration_since(*t) >= CREATE_WINDOW)
            {
                q.pop_front();
            }
        }
        g.created.retain(|_, q| !q.is_empty());
        if g.created.len() >= BUDGETS && !g.created.contains_key(&peer) {
            let emptiest = g
                .created
                .iter()
                .min_by_key(|(_, q)| q.len())
                .map(|(k, _)| *k);
            if let Some(k) = emptiest {
                g.created.remove(&k);
            }
        }
        let budget = g.created.entry(peer).or_default();
        if budget.len() >= CREATE_MAX {
            let wait = budget.front().map_or(CREATE_WINDOW, |t| {
                CREATE_WINDOW.saturating_sub(now.saturating_duration_since(*t))
            });
            return Err(SessionRefused::TooMany {
                wait_s: wait.as_secs().max(1),
            });
        }
        let idle = self.idle;
        g.sessions
            .retain(|_, s| now.saturating_duration_since(s.last_used) < idle);
        if g.sessions.len() >= MAX_SESSIONS {
            // Anonymous sessions go first; one that holds a sign-in is never evicted.
            let oldest = g
                .sessions
                .iter()
                .filter(|(_, s)| s.signed_in_at().is_none())
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => g.sessions.remove(&k),
                None => return Err(SessionRefused::Full),
            };
        }
        g.created.entry(peer).or_default().push_back(now);
        let cookie = token();
        g.sessions.insert(
            hash(&cookie),
            Session {
                csrf: token(),
                last_used: now,
                step_up: None,
                enrolled: None,
                registration: None,
                authentication: None,
            },
        );
        Ok(cookie)
    }

    /// Sessions held now.
    pub(crate) fn len(&self) -> usize {
        self.lock().sessions.len()
    }

    /// Runs `f` on the live session of this cookie value; `None` when there is none.
    pub(crate) fn with<R>(
        &self,
        cookie: &str,
        now: Instant,
        f: impl FnOnce(&mut Session) -> R,
    ) -> Option<R> {
        let key = hash(cookie);
        let mut g = self.lock();
        let live = match g.sessions.get(&key) {
            Some(s) => now.saturating_duration_since(s.last_used) < self.idle,
            None => return None,
        };
        if !live {
            g.sessions.remove(&key);
            return None;
        }
        let s = g.sessions.get_mut(&key)?;
        s.last_used = now;
        Some(f(s))
    }

    /// Makes a one-time enrollment token valid for [`ENROLL_VALID`]; returns it.
    pub(crate) fn new_enrollment(&self, now: Instant) -> String {
        self.enrollments.issue((), now)
    }

    /// Whether the enrollment token with this hash is valid now.
    pub(crate) fn enrollment_valid(&self, token_hash: &str, now: Instant) -> bool {
        self.enrollments.is_live_hashed(token_hash, now)
    }

    /// Uses up an enrollment token; `true` when it was valid.
    pub(crate) fn consume_enrollment(&self, token_hash: &str, now: Instant) -> bool {
        self.enrollments.take_hashed(token_hash, now).is_ok()
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "the page's clock is std's `Instant`; these tests start it at now"
)]
mod tests {
    use super::*;

    #[test]
    fn sessions_expire_when_idle_and_are_capped() {
        let s = Sessions::default();
        let t0 = Instant::now();
        let c = s.create(t0, None).unwrap();
        assert!(s.with(&c, t0 + Duration::from_secs(60), |_| ()).is_some());
        assert!(s
            .with(&c, t0 + Duration::from_secs(60) + SESSION_IDLE, |_| ())
            .is_none());
        assert!(s.with("not-a-session", t0, |_| ()).is_none());
        let first = s.create(t0, None).unwrap();
        let owner = s.create(t0, None).unwrap();
        s.with(&owner, t0, |x| x.step_up = Some(stepup::testing::step_up()))
            .unwrap();
        let step = CREATE_WINDOW / CREATE_MAX as u32 + Duration::from_millis(10);
        let t1 = t0 + CREATE_WINDOW;
        for i in 0..MAX_SESSIONS as u32 {
            s.create(t1 + step * i, None).unwrap();
        }
        let later = t1 + step * MAX_SESSIONS as u32;
        assert!(s.with(&first, later, |_| ()).is_none(), "oldest evicted");
        assert!(
            s.with(&owner, later, |_| ()).is_some(),
            "a session with a step-up is never evicted, however old"
        );
    }

    #[test]
    fn session_creation_is_rate_limited_per_peer_uid() {
        let s = Sessions::default();
        let t0 = Instant::now();
        for _ in 0..CREATE_MAX {
            s.create(t0, Some(65534)).unwrap();
        }
        assert_eq!(
            s.create(t0 + Duration::from_secs(20), Some(65534)),
            Err(SessionRefused::TooMany { wait_s: 40 })
        );
        // Another uid's budget is its own.
        assert!(s.create(t0 + Duration::from_secs(20), Some(1000)).is_ok());
        assert!(s.create(t0 + Duration::from_secs(20), None).is_ok());
        assert!(s.create(t0 + CREATE_WINDOW, Some(65534)).is_ok());
    }

    #[test]
    fn a_longer_sign_in_keeps_its_session() {
        let s = Sessions::new(Duration::from_secs(48 * 3600));
        let t0 = Instant::now();
        let c = s.create(t0, None).unwrap();
        assert!(s.with(&c, t0 + SESSION_IDLE * 3, |_| ()).is_some());
        assert!(s
            .with(
                &c,
                t0 + SESSION_IDLE * 3 + Duration::from_secs(48 * 3600),
                |_| ()
            )
            .is_none());
    }

    #[test]
    fn enrollment_tokens_are_one_time_and_expire() {
        let s = Sessions::default();
        let t0 = Instant::now();
        let t = s.new_enrollment(t0);
        assert!(s.enrollment_valid(&hash(&t), t0));
        assert!(!s.enrollment_valid(&hash(&t), t0 + ENROLL_VALID));
        assert!(s.consume_enrollment(&hash(&t), t0));
        assert!(!s.consume_enrollment(&hash(&t), t0), "used once");
        for _ in 0..MAX_ENROLLMENTS + 3 {
            s.new_enrollment(t0);
        }
        assert!(s.enrollments.len() <= MAX_ENROLLMENTS);
    }

    #[test]
    fn secrets_compare() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "ab"));
    }
}
