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

    /// The owner's answer, said on the turn after the request, in the conversation `by`
    /// (`terminal`, `voice, kitchen`, `page`). Who confirmed is recorded as
    /// [`confirmed_by`]`(by, said)`: `owner (terminal: "yes")`.
    pub fn answer(self, yes: bool, by: &str, said: &str) -> Answer {
        if self.asked.elapsed() > CONFIRM_WINDOW {
            return Answer::Expired(self);
        }
        if !yes {
            return Answer::Declined(self);
        }
        let confirmed_by = confirmed_by(by, said);
        Answer::Confirmed(Confirmation {
            act: self.act,
            args: self.args,
            utterance: self.utterance,
            confirmed_by,
        })
    }
}

/// Who confirmed, as the acts log keeps it: the owner, the conversation the yes came from
/// (its front end, and its name there when it has one) and the words of the yes, quoted:
/// `owner (terminal: "yes")`, `owner (voice, kitchen: "yes orange")`, `owner (page: "yes")`.
/// Without a conversation or words, that part is left out: `owner ("yes")`, `owner (page)`.
/// Control characters are shown escaped, never kept.
pub fn confirmed_by(by: &str, said: &str) -> String {
    let by = shown::line(by.trim());
    let said = said.trim();
    match (by.is_empty(), said.is_empty()) {
        (true, true) => "owner".to_owned(),
        (true, false) => format!("owner ({said:?})"),
        (false, true) => format!("owner ({by})"),
        (false, false) => format!("owner ({by}: {said:?})"),
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

#[cfg(test)]
mod tests {
    use super::confirmed_by;

    #[test]
    fn who_confirmed_names_the_conversation_and_quotes_the_yes() {
        assert_eq!(
            confirmed_by("terminal", "yes "),
            r#"owner (terminal: "yes")"#
        );
        assert_eq!(
            confirmed_by("voice, kitchen", "yes orange"),
            r#"owner (voice, kitchen: "yes orange")"#
        );
        assert_eq!(confirmed_by("page", ""), "owner (page)");
        assert_eq!(confirmed_by("", "да"), r#"owner ("да")"#);
        assert_eq!(confirmed_by("", ""), "owner");
        // A line each, whatever the words: a quote or a line break never ends the record early.
        assert_eq!(
            confirmed_by("terminal", "yes\"\nrm"),
            r#"owner (terminal: "yes\"\nrm")"#
        );
        assert!(!confirmed_by("voice, a\nb", "yes").contains('\n'));
    }
}
