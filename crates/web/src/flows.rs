//! OAuth login links and the authorizations waiting for their callback (see `web::oauth`), in
//! memory only: a restart voids them (the owner starts again). Both are one-time tokens
//! ([`OneTime`]).

use crate::error::Code;
use std::time::{Duration, Instant};

use axum::http::StatusCode;

use super::error::AppError;
use super::once::{OneTime, Spent};

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
    /// Whose step-up began it (the audit trail's actor: "owner (passkey …)").
    pub(super) by: String,
}

/// Login links and the authorizations waiting for their callback, in memory only: a restart
/// voids them (the owner starts again).
pub(crate) struct Flows {
    /// A login link's token → its server.
    links: OneTime<String>,
    /// An authorization's `state` → what completes it.
    waiting: OneTime<Waiting>,
}

impl Default for Flows {
    fn default() -> Flows {
        Flows {
            links: OneTime::new(VALID, MAX_LINKS),
            waiting: OneTime::new(VALID, MAX_PENDING),
        }
    }
}

/// Why a callback found nothing to complete.
pub(super) enum Lookup {
    Unknown,
    Expired(String),
}

impl Flows {
    /// A new one-time login link's token for `server`; only its hash is kept.
    pub(crate) fn new_link(&self, server: &str, now: Instant) -> String {
        self.links.issue(server.to_owned(), now)
    }

    /// Uses up a login link: its server, or why not.
    pub(super) fn take_link(&self, token: &str, now: Instant) -> Result<String, AppError> {
        match self.links.take(token.trim(), now) {
            Ok(server) => Ok(server),
            Err(Spent::Expired(_)) => Err(AppError::new(
                StatusCode::FORBIDDEN,
                Code::OauthLink,
                "this authorization link expired (it is valid 10 minutes): run `maven mcp login NAME` for a new one",
            )),
            Err(Spent::Unknown) => Err(AppError::new(
                StatusCode::FORBIDDEN,
                Code::OauthLink,
                "this authorization link is unknown or was used (it works once): run `maven mcp login NAME` for a new one",
            )),
        }
    }

    /// Keeps an authorization begun behind the owner's step-up `by` until its callback: the
    /// only way one is kept, so a callback completes only what a step-up began.
    pub(super) fn wait(
        &self,
        server: &str,
        pending: ::oauth::Pending,
        by: &stepup::StepUp,
        now: Instant,
    ) {
        let state = pending.state().to_owned();
        self.waiting.insert(
            &state,
            Waiting {
                server: server.to_owned(),
                pending,
                by: by.actor(),
            },
            now,
        );
    }

    /// Takes the authorization this `state` belongs to (used once, whatever the outcome).
    pub(super) fn take(&self, state: &str, now: Instant) -> Result<Waiting, Lookup> {
        self.waiting.take(state, now).map_err(|e| match e {
            Spent::Expired(w) => Lookup::Expired(w.server),
            Spent::Unknown => Lookup::Unknown,
        })
    }
}
