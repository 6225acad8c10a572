//! OAuth login links and the authorizations waiting for their callback (see `web::oauth`), in
//! memory only: a restart voids them (the owner starts again).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::StatusCode;

use super::error::AppError;
use super::session;

/// How long a login link, and an authorization waiting for its callback, are valid.
pub(crate) const VALID: Duration = Duration::from_secs(10 * 60);
/// Login links outstanding at once; the oldest is voided beyond this.
const MAX_LINKS: usize = 8;
/// Authorizations waiting for their callback at once; the oldest is voided beyond this.
const MAX_PENDING: usize = 16;
/// Largest callback query read.
pub(crate) const MAX_QUERY: usize = 8 * 1024;

pub(super) struct Waiting {
    pub(super) server: String,
    pub(super) pending: ::oauth::Pending,
    until: Instant,
}

#[derive(Default)]
struct Inner {
    /// Hash of a login link's token → (server, when it expires).
    links: HashMap<String, (String, Instant)>,
    /// Hash of an authorization's `state` → what completes it.
    waiting: HashMap<String, Waiting>,
}

/// Login links and the authorizations waiting for their callback, in memory only: a restart
/// voids them (the owner starts again).
#[derive(Default)]
pub(crate) struct Flows {
    inner: Mutex<Inner>,
}

/// Why a callback found nothing to complete.
pub(super) enum Lookup {
    Unknown,
    Expired(String),
}

impl Flows {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every operation is a single insert or remove: a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new one-time login link's token for `server`; only its hash is kept.
    pub(crate) fn new_link(&self, server: &str, now: Instant) -> String {
        let token = session::token();
        let mut g = self.lock();
        g.links.retain(|_, (_, until)| *until > now);
        while g.links.len() >= MAX_LINKS {
            let oldest = g
                .links
                .iter()
                .min_by_key(|(_, (_, until))| *until)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => g.links.remove(&k),
                None => break,
            };
        }
        g.links
            .insert(session::hash(&token), (server.to_owned(), now + VALID));
        token
    }

    /// Uses up a login link: its server, or why not.
    pub(super) fn take_link(&self, token: &str, now: Instant) -> Result<String, AppError> {
        let taken = self.lock().links.remove(&session::hash(token.trim()));
        match taken {
            Some((server, until)) if until > now => Ok(server),
            Some(_) => Err(AppError::new(
                StatusCode::FORBIDDEN,
                "oauth_link",
                "this authorization link expired (it is valid 10 minutes): run `maven mcp login NAME` for a new one",
            )),
            None => Err(AppError::new(
                StatusCode::FORBIDDEN,
                "oauth_link",
                "this authorization link is unknown or was used (it works once): run `maven mcp login NAME` for a new one",
            )),
        }
    }

    pub(super) fn wait(&self, server: &str, pending: ::oauth::Pending, now: Instant) {
        let mut g = self.lock();
        g.waiting.retain(|_, w| w.until > now);
        while g.waiting.len() >= MAX_PENDING {
            let oldest = g
                .waiting
                .iter()
                .min_by_key(|(_, w)| w.until)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => g.waiting.remove(&k),
                None => break,
            };
        }
        g.waiting.insert(
            session::hash(pending.state()),
            Waiting {
                server: server.to_owned(),
                pending,
                until: now + VALID,
            },
        );
    }

    /// Takes the authorization this `state` belongs to (used once, whatever the outcome).
    pub(super) fn take(&self, state: &str, now: Instant) -> Result<Waiting, Lookup> {
        match self.lock().waiting.remove(&session::hash(state)) {
            Some(w) if w.until > now => Ok(w),
            Some(w) => Err(Lookup::Expired(w.server)),
            None => Err(Lookup::Unknown),
        }
    }
}
