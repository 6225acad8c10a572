//! What an execution produced, or why it did not run.

use super::bind::BindError;
use super::policy::Refusal;
use crate::waiting::Waiting;

/// Why an act did not run, or failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The row may not run (not enabled, no longer allowed…).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// A destructive row needs the owner's confirmation, every time.
    #[error("{0} writes: it runs only after you confirm it")]
    NeedsConfirmation(String),
    /// The tail could not be bound.
    #[error(transparent)]
    Bind(#[from] BindError),
    /// Named arguments do not fit the tool's input schema.
    #[error(transparent)]
    Args(#[from] super::schema::ArgError),
    /// The MCP call failed, and did not run (a call that may have run is [`ExecError::Unknown`]).
    #[error(transparent)]
    Call(mcp::manager::CallError),
    /// The row could not be read again before it ran.
    #[error("store: {0}")]
    Store(#[source] store::Error),
    /// The execution could not be written to `acts_log`, so it did not run.
    #[error("not run: it could not be recorded in acts_log: {0}")]
    NotRecorded(#[source] store::Error),
    /// The local command could not be started.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The local command started, and waiting for it failed.
    #[error("{program}: {source}")]
    Wait {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It was sent and no answer came back: whether it ran is unknown. Maven never sends it
    /// again by itself.
    #[error("outcome unknown: {who} may have run it: {reason}")]
    Unknown {
        /// Who may have run it (`` `todo` ``, `the local command`).
        who: String,
        /// Why no answer came.
        reason: String,
    },
}

/// Text of a tool result kept for the answer and the page (the rest is counted, not kept).
pub const RESULT_CAP: usize = 64 * 1024;

/// How much of a result was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Bytes shown.
    pub shown: usize,
    /// Bytes the result had.
    pub total: usize,
    /// The result had more than `total` bytes: counting stopped there.
    pub more: bool,
}

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[cut: the result had {}{} bytes; the first {} are shown]",
            if self.more { "more than " } else { "" },
            self.total,
            self.shown
        )
    }
}

/// Cuts `text` to at most `cap` bytes on a character boundary; says how much when it did.
pub fn cut_text(mut text: String, cap: usize, more: bool) -> (String, Option<Cut>) {
    let total = text.len();
    if total <= cap && !more {
        return (text, None);
    }
    let at = shown::prefix_bytes(&text, cap).len();
    text.truncate(at);
    let cut = Cut {
        shown: at,
        total,
        more,
    };
    (text, Some(cut))
}

/// What one execution produced.
#[derive(Debug, Clone)]
pub struct Ran {
    /// What it said (stdout, or the tool's text), capped.
    pub text: String,
    /// It succeeded (exit 0; not an error result).
    pub ok: bool,
    /// The server asks the owner something before the call can finish (a modern MCP server's
    /// elicitation): the next turn answers it with [`Executor::answer_input`].
    pub waiting: Option<Box<Waiting>>,
    /// The text was cut, and by how much.
    pub cut: Option<Cut>,
}

impl Ran {
    pub(super) fn done(text: String, ok: bool) -> Ran {
        Ran {
            text,
            ok,
            waiting: None,
            cut: None,
        }
    }
}
