//! The owner's confirmation of a destructive act (A-11, T-2).
//!
//! A destructive act never runs on the turn that asks for it: the executor hands back a
//! [`Request`], the turn pipeline keeps it as the one pending act, and only the owner's answer on
//! the next turn, within [`CONFIRM_WINDOW`], turns it into a [`Confirmation`]. A
//! `Confirmation` has private fields and no constructor: [`Request::answer`] is the only way to
//! get one, and [`crate::Executor::run_confirmed`] the only way to run a destructive act.
//!
//! ```compile_fail
//! let forged = allowlist::Confirmation { act: "wipe".into(), tail: String::new(),
//!     utterance: String::new(), confirmed_by: "owner".into() };
//! ```

use std::time::Duration;

use tokio::time::Instant;

/// How long a pending confirmation waits for its yes.
pub const CONFIRM_WINDOW: Duration = Duration::from_secs(120);

/// A destructive act waiting for the owner's yes. Made only by [`crate::Executor::prepare`].
#[derive(Debug, Clone)]
pub struct Request {
    pub(crate) act: String,
    pub(crate) tail: String,
    pub(crate) utterance: String,
    pub(crate) asked: Instant,
}

impl Request {
    /// The row the request would run.
    pub fn act(&self) -> &str {
        &self.act
    }

    /// The router's text tail it would run with.
    pub fn tail(&self) -> &str {
        &self.tail
    }

    /// The owner's answer, said on the turn after the request. `said` is recorded as who
    /// confirmed (`owner ("yes")`).
    pub fn answer(self, yes: bool, said: &str) -> Answer {
        if self.asked.elapsed() > CONFIRM_WINDOW {
            return Answer::Expired(self);
        }
        if !yes {
            return Answer::Declined(self);
        }
        let confirmed_by = format!("owner ({:?})", said.trim());
        Answer::Confirmed(Confirmation {
            act: self.act,
            tail: self.tail,
            utterance: self.utterance,
            confirmed_by,
        })
    }
}

/// What the owner's answer to a [`Request`] made of it.
#[derive(Debug)]
pub enum Answer {
    /// Too late: the window passed.
    Expired(Request),
    /// The owner said no.
    Declined(Request),
    /// The owner said yes in time.
    Confirmed(Confirmation),
}

/// The owner's yes to one destructive act with one tail.
#[derive(Debug)]
pub struct Confirmation {
    act: String,
    tail: String,
    utterance: String,
    confirmed_by: String,
}

impl Confirmation {
    /// The row confirmed.
    pub fn act(&self) -> &str {
        &self.act
    }

    pub(crate) fn parts(&self) -> (&str, &str, &str) {
        (&self.tail, &self.utterance, &self.confirmed_by)
    }
}
