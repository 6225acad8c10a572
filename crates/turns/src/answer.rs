//! The answer of one turn, as a structure every front end renders: Maven's own sentences apart
//! from a server's words (each with the server's name), the act that ran or waits, what the
//! owner's next turn may answer, and the language the answer is written in.
//!
//! The turn builds an [`Answer`]; the terminal, the page, IPC's JSON and speech render it. No
//! front end builds one, and none needs to guess whose words it is showing: a [`Part`] says.

use serde::{Deserialize, Serialize};

/// The language an answer is written in (and an intent was spoken in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Russian.
    Ru,
}

/// One piece of an answer, in the order it is said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Part {
    /// Maven's own words.
    Maven {
        /// The words.
        text: String,
    },
    /// Maven's words that quote values exactly (a question's arguments): every renderer gives
    /// them as written, a voice included (no address shortened, no mark dropped).
    Exact {
        /// The words.
        text: String,
    },
    /// What an act returned: its server's (or its local command's) words, never Maven's, and
    /// never an instruction to Maven. `server` is `None` for a local command.
    Output {
        /// The server's name; `None` for a local command.
        server: Option<String>,
        /// What it returned, capped.
        text: String,
    },
    /// A server's question to the owner, exact: a renderer marks every line as the server's.
    Question {
        /// The server that asks.
        server: String,
        /// Its words, exact.
        text: String,
    },
    /// Items Maven lists (acts, feed items, notes), each on its own.
    List {
        /// The items, in order.
        items: Vec<Item>,
    },
}

/// One item of a [`Part::List`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// The item's words (a note's text is someone else's: a feed's or a tool's).
    pub text: String,
    /// Where it came from, when that is worth saying (a note's source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Its address, shown as text and never opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// How deep the list sits under the line before it (0: none), for the terminal.
    #[serde(default)]
    pub depth: u8,
}

/// The act a turn ran, or asked about, and how that went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Act {
    /// The row's name (`todo_list_tasks`).
    pub name: String,
    /// What became of it.
    pub outcome: Outcome,
}

/// What became of the act of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It ran and its server answered.
    Ran,
    /// It ran and its server reported an error.
    Failed,
    /// Maven did not run it (not enabled, arguments it will not guess, expired, ...).
    Refused,
    /// It was sent and never answered: it may have run.
    Unknown,
    /// It waits for the owner's yes.
    AwaitsConfirmation,
    /// It is in flight and its server asked the owner something.
    AwaitsAnswer,
    /// The owner said no.
    Cancelled,
}

/// What the owner's next turn answers, when this turn asked something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "awaits", rename_all = "snake_case")]
pub enum Awaits {
    /// An act that may write awaits a yes: its row, the rest of the sentence that asked.
    Confirm {
        /// The act's row.
        act: String,
        /// The rest of the sentence that asked (the rules router's positional argument).
        tail: String,
        /// The named arguments it would run with, exactly as shown (a model's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        /// Seconds left to answer.
        expires_in_s: u64,
    },
    /// A server's question about an act in flight: the act, the server that asks.
    Question {
        /// The act in flight.
        act: String,
        /// The server that asks.
        asks: String,
        /// Seconds left to answer.
        expires_in_s: u64,
    },
}

/// The answer to one turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// What is said, in order.
    pub parts: Vec<Part>,
    /// The act this turn ran or asked about, if any.
    #[serde(default)]
    pub act: Option<Act>,
    /// What the owner's next turn answers, if this turn asked something.
    #[serde(default)]
    pub pending: Option<Awaits>,
    /// The language the answer is written in.
    #[serde(default)]
    pub lang: Lang,
    /// False when an act was refused or failed, or the turn itself failed.
    pub ok: bool,
    /// False when Maven could not tell what the sentence asks (a voice system then hands it
    /// to another agent: Wyoming's `not-handled`).
    #[serde(default = "understood")]
    pub understood: bool,
}

fn understood() -> bool {
    true
}

impl Answer {
    /// Maven's words alone, in English, as a success.
    pub fn say(text: impl Into<String>) -> Answer {
        Answer::maven(text, true)
    }

    /// Maven's words alone, in English, as a failure.
    pub fn refuse(text: impl Into<String>) -> Answer {
        Answer::maven(text, false)
    }

    fn maven(text: impl Into<String>, ok: bool) -> Answer {
        Answer {
            parts: vec![Part::Maven { text: text.into() }],
            act: None,
            pending: None,
            lang: Lang::En,
            ok,
            understood: true,
        }
    }

    /// The same answer, written in `lang`.
    pub fn in_lang(mut self, lang: Lang) -> Answer {
        self.lang = lang;
        self
    }

    /// The same answer, about `act`.
    pub fn about(mut self, name: &str, outcome: Outcome) -> Answer {
        self.act = Some(Act {
            name: name.to_owned(),
            outcome,
        });
        self
    }

    /// Maven's words before everything else.
    pub fn prefixed(mut self, text: &str) -> Answer {
        if !text.is_empty() {
            self.parts.insert(
                0,
                Part::Maven {
                    text: text.to_owned(),
                },
            );
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_reads_back_from_its_json() {
        let a = Answer {
            parts: vec![
                Part::Maven {
                    text: "todo_list ran; the MCP server \"todo\" returned:".into(),
                },
                Part::Output {
                    server: Some("todo".into()),
                    text: "1. milk".into(),
                },
                Part::Question {
                    server: "todo".into(),
                    text: "Which list?".into(),
                },
                Part::List {
                    items: vec![Item {
                        text: "a".into(),
                        from: Some("rss:x".into()),
                        link: None,
                        depth: 1,
                    }],
                },
            ],
            act: Some(Act {
                name: "todo_list".into(),
                outcome: Outcome::AwaitsAnswer,
            }),
            pending: Some(Awaits::Question {
                act: "todo_list".into(),
                asks: "todo".into(),
                expires_in_s: 120,
            }),
            lang: Lang::Ru,
            ok: true,
            understood: true,
        };
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["parts"][1]["kind"], "output");
        assert_eq!(v["pending"]["awaits"], "question");
        assert_eq!(v["act"]["outcome"], "awaits_answer");
        assert_eq!(v["lang"], "ru");
        assert_eq!(serde_json::from_value::<Answer>(v).unwrap(), a);
    }
}
