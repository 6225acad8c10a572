//! The owner's confirmation of a destructive act (A-11, T-2).
//!
//! A destructive act never runs on the turn that asks for it: the executor hands back a
//! [`Request`], the turn pipeline keeps it as the one pending act, and only the owner's answer on
//! the next turn, within [`CONFIRM_WINDOW`], turns it into a [`Confirmation`]. A
//! `Confirmation` has private fields and no constructor: [`Request::answer`] is the only way to
//! get one, and [`crate::Executor::run_confirmed`] the only way to run a destructive act.
//!
//! ```compile_fail
//! let forged = allowlist::Confirmation { act: "wipe".into(),
//!     args: allowlist::Args::Tail(String::new()), utterance: String::new(),
//!     confirmed_by: "owner".into() };
//! ```

use std::time::Duration;

use serde_json::{Map, Value};
use tokio::time::Instant;

/// What an act runs with.
#[derive(Debug, Clone, PartialEq)]
pub enum Args {
    /// The rest of the owner's sentence, bound positionally (A-10): the rules router's.
    Tail(String),
    /// Named arguments a model chose, checked against the tool's input schema; an act that may
    /// write runs on them only after the owner saw them and said yes.
    Named(Map<String, Value>),
    /// Named arguments the owner said, each the words (or a list's value for them) in a slot a
    /// sentence template names: checked against the schema like a model's, but no guess, so a
    /// read-only act runs on them at once; an act that may write still asks first.
    Said(Map<String, Value>),
}

impl Args {
    /// The arguments as the owner is shown them: the tail as said, or the JSON verbatim.
    pub fn shown(&self) -> String {
        match self {
            Args::Tail(t) => format!("{t:?}"),
            Args::Named(m) | Args::Said(m) => Value::Object(m.clone()).to_string(),
        }
    }

    /// The named arguments, a model's or said; `None` for a tail.
    pub fn named(&self) -> Option<&Map<String, Value>> {
        match self {
            Args::Tail(_) => None,
            Args::Named(m) | Args::Said(m) => Some(m),
        }
    }
}

/// How long a pending confirmation waits for its yes.
pub const CONFIRM_WINDOW: Duration = Duration::from_secs(120);

/// A destructive act waiting for the owner's yes. Made only by [`crate::Executor::prepare`].
#[derive(Debug, Clone)]
pub struct Request {
    pub(crate) act: String,
    pub(crate) args: Args,
    pub(crate) utterance: String,
    pub(crate) asked: Instant,
}

impl Request {
    /// The row the request would run.
    pub fn act(&self) -> &str {
        &self.act
    }

    /// What it would run with.
    pub fn args(&self) -> &Args {
        &self.args
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
            args: self.args,
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

/// The owner's yes to one act with exactly the arguments the owner was shown.
#[derive(Debug)]
pub struct Confirmation {
    act: String,
    args: Args,
    utterance: String,
    confirmed_by: String,
}

impl Confirmation {
    /// The row confirmed.
    pub fn act(&self) -> &str {
        &self.act
    }

    pub(crate) fn parts(&self) -> (&Args, &str, &str) {
        (&self.args, &self.utterance, &self.confirmed_by)
    }
}
