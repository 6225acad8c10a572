//! A call that waits for the owner: a modern MCP server answered `tools/call` with
//! `input_required` and an elicitation. The turn that ran the act answers with the server's
//! question (marked as the server's words); the owner's next turn answers it, within the same
//! two minutes as a confirmation, and [`Executor::answer_input`] retries the call with the
//! answer. An elicitation that asks for a secret (a field named like a password, token or key)
//! is declined without being shown; a URL elicitation is shown as text and nothing is opened.
//! Only the executor makes a [`Waiting`] (its fields are private to this crate), so a turn
//! cannot make one up; `Executor::answer_input` answers it.

use serde_json::{Map, Value};
use store::ToolRow;

/// A call waiting for the owner's answer to the server's question.
#[derive(Debug, Clone)]
pub struct Waiting {
    pub(crate) act: String,
    pub(crate) server: String,
    pub(crate) needed: mcp::InputNeeded,
    /// Index in `needed.asks` of the question being asked.
    pub(crate) next: usize,
    pub(crate) replies: Map<String, Value>,
    /// Elicitations declined without asking (secrets): their fields' names.
    pub(crate) declined_secrets: Vec<String>,
    pub(crate) asked: tokio::time::Instant,
    pub(crate) utterance: String,
    pub(crate) confirmed_by: Option<String>,
}

impl Waiting {
    /// The question(s) of `needed`, for the call of `row`; the origin (utterance, who
    /// confirmed) carried over from the round before, when there was one.
    pub(crate) fn new(
        row: &ToolRow,
        needed: mcp::InputNeeded,
        origin: Option<&Waiting>,
    ) -> Waiting {
        let mut w = Waiting {
            act: row.name.clone(),
            server: row.server.clone(),
            needed,
            next: 0,
            replies: Map::new(),
            declined_secrets: Vec::new(),
            asked: tokio::time::Instant::now(),
            utterance: origin.map(|o| o.utterance.clone()).unwrap_or_default(),
            confirmed_by: origin.and_then(|o| o.confirmed_by.clone()),
        };
        w.skip_secrets();
        w
    }

    /// The act.
    pub fn act(&self) -> &str {
        &self.act
    }

    /// The MCP server asking.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The question being asked.
    pub fn ask(&self) -> Option<&mcp::Ask> {
        self.needed.asks.get(self.next)
    }

    /// Names of the fields of elicitations declined because they asked for a secret.
    pub fn declined_secrets(&self) -> &[String] {
        &self.declined_secrets
    }

    pub(crate) fn set_origin(&mut self, utterance: &str, confirmed_by: Option<&str>) {
        utterance.clone_into(&mut self.utterance);
        self.confirmed_by = confirmed_by.map(str::to_owned);
    }

    /// Skips (declining) the questions that ask for a secret; true when one is left to ask.
    pub(crate) fn skip_secrets(&mut self) -> bool {
        while let Some(ask) = self.needed.asks.get(self.next) {
            let mcp::AskKind::Secret { field } = &ask.kind else {
                return true;
            };
            self.declined_secrets.push(field.clone());
            self.replies.insert(ask.key.clone(), mcp::Ask::decline());
            self.next += 1;
        }
        false
    }
}
