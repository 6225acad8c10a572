//! Turns (T-1..T-5): one utterance in, one [`Answer`] out. This is the **only** path by which
//! anything runs an act, and every front end (the terminal, the page, IPC, speech) renders the
//! answer it gives; none builds one.
//!
//! A router picks what the turn does (`rules`, or `llm` with the rules router as its fallback).
//! A destructive act is never run on the first turn: it is held as the one pending act, and
//! runs only when the next turn is an explicit yes (yes/y/да) within two minutes. Any other
//! turn drops the pending act. Results are reduced to text, capped, and kept apart as their
//! server's words ([`Part::Output`]): a result is data, not an instruction to Maven.
//!
//! A modern MCP server may answer a call with a question (an elicitation): the turn answers
//! with the server's question as a [`Part::Question`] (a renderer marks every line with the
//! server's name, `todo › …`), and the owner's next turn is the answer ("no" declines), within
//! the same two minutes. A question asking for a secret is declined without being shown, and a
//! round whose every question was declined so is sent on at once: it never takes the owner's
//! next turn. A URL is shown as text and nothing is opened.

#![warn(clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

pub mod answer;
pub mod conversation;
pub mod llm;
pub mod render;
pub mod rules;
pub mod templates;
pub mod voice;

use std::fmt::Write as _;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use store::{Store, ToolRow, ToolState};

use allowlist::{Args, ExecError, Executor, InputStep, Ran, Request, Waiting, CONFIRM_WINDOW};
pub use answer::{Act, Answer, Awaits, Item, Lang, Outcome, Part};
pub use conversation::{Conversation, Front};
use rules::{ActName, Decision};

/// The fact that remembers where the owner stopped reading the feeds digest.
const DIGEST_FACT: &str = "digest:last_note_id";
/// Items in one digest, and per feed.
const DIGEST_CAP: usize = 20;
const DIGEST_PER_FEED: usize = 5;
/// Longest text of one note in an answer.
const NOTE_TEXT_CAP: usize = 300;

/// What a conversation's next turn answers: a destructive act's confirmation, or a server's
/// question.
#[derive(Debug)]
enum Held {
    /// An act awaiting the owner's yes; asked by voice, the yes must carry the one-time word.
    Confirm(Request, Option<&'static str>),
    Input(Box<Waiting>),
}

/// A server's question that the owner's next turn answers, as the page shows it: the
/// server's words exact (its message, then the address or one line per field), and what Maven
/// says after them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// The server that asks.
    pub server: String,
    /// The act in flight.
    pub act: String,
    /// The server's words, exact.
    pub words: String,
    /// What Maven says after them: how to answer.
    pub how: String,
}

/// The line that says which of a server's questions Maven declined without showing them.
fn declined_line(server: &str, fields: &[String]) -> String {
    if fields.is_empty() {
        return String::new();
    }
    format!(
        "{} asked for a secret ({}); Maven declined it without showing it.",
        shown::line(server),
        fields
            .iter()
            .map(|f| format!("{:?}", shown::line(f)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The server's words of a question, exact (the message, then the address to visit or one
/// line per field), and what Maven says after them.
fn words(ask: &mcp::Ask) -> (String, &'static str) {
    let mut text = ask.message.clone();
    let how = match &ask.kind {
        mcp::AskKind::Url { url } => {
            let _ = write!(text, "\n(visit) {url}");
            "It asks you to visit that address (Maven opens nothing). Say yes when done, or no."
        }
        mcp::AskKind::Form { fields } if fields.is_empty() => "Say yes to go on, or no to decline.",
        mcp::AskKind::Form { fields } => {
            for f in fields {
                let _ = write!(
                    text,
                    "\n({}{}: {}{}) {}",
                    f.name,
                    if f.required { ", required" } else { "" },
                    f.kind,
                    choices(f),
                    f.title
                );
            }
            if fields.len() == 1 {
                "Answer with the value of that field, or no to decline."
            } else {
                "Answer as `name: value; name: value` with the field names above, or no to decline."
            }
        }
        _ => "Say no to decline.",
    };
    (text, how)
}

/// The question a waiting call asks the owner, for the page.
fn question(w: &Waiting) -> Option<Question> {
    let ask = w.ask()?;
    let (text, how) = words(ask);
    Some(Question {
        server: w.server().to_owned(),
        act: w.act().to_owned(),
        words: text,
        how: how.to_owned(),
    })
}

/// The answer of a turn whose act waits for the owner's answer to the server's question.
fn ask_owner(w: &Waiting) -> Answer {
    let declined = declined_line(w.server(), w.declined_secrets());
    let Some(ask) = w.ask() else {
        return Answer::say(declined);
    };
    let server = shown::line(w.server());
    let (text, how) = words(ask);
    Answer {
        parts: vec![
            Part::Maven {
                text: format!(
                    "{server} asks; its words, each line marked \"{server}{}\":",
                    render::QUOTE_MARK.trim_end()
                ),
            },
            Part::Question {
                server: w.server().to_owned(),
                text,
            },
            Part::Maven {
                text: how.to_owned(),
            },
        ],
        act: None,
        pending: Some(Awaits::Question {
            act: w.act().to_owned(),
            asks: w.server().to_owned(),
            expires_in_s: CONFIRM_WINDOW.as_secs(),
        }),
        lang: Lang::En,
        ok: true,
        understood: true,
    }
    .prefixed(&declined)
    .about(w.act(), Outcome::AwaitsAnswer)
}

fn choices(f: &mcp::Field) -> String {
    if f.choices.is_empty() {
        return String::new();
    }
    let c: Vec<String> = f.choices.iter().map(|c| c.to_owned()).collect();
    format!(", one of {}", c.join(" / "))
}

/// The answer of a turn whose act finished (or failed).
/// Maven's words in the language of the owner's sentence.
fn tr(lang: Lang, en: String, ru: String) -> String {
    match lang {
        Lang::En => en,
        Lang::Ru => ru,
    }
}

/// "I won't run that: …", in the sentence's language (the reason is the allowlist's words).
fn wont(lang: Lang, reason: &dyn std::fmt::Display) -> String {
    tr(
        lang,
        format!("I won't run that: {reason}."),
        format!("Не выполню: {reason}."),
    )
}

fn report_done(row: &ToolRow, result: Result<Ran, ExecError>, lang: Lang) -> Answer {
    match result {
        Ok(ran) => {
            let server = (row.kind == store::ToolKind::Mcp).then(|| row.server.clone());
            let head = match (&server, ran.ok, lang) {
                (Some(s), true, Lang::En) => format!("{} ran; the MCP server {s:?} returned:", row.name),
                (Some(s), false, Lang::En) => {
                    format!("{} ran; the MCP server {s:?} reported an error:", row.name)
                }
                (None, true, Lang::En) => format!("{} ran; a local command returned:", row.name),
                (None, false, Lang::En) => {
                    format!("{} ran; a local command reported an error:", row.name)
                }
                (Some(s), true, Lang::Ru) => format!("{} выполнено; MCP-сервер {s:?} ответил:", row.name),
                (Some(s), false, Lang::Ru) => {
                    format!("{} выполнено; MCP-сервер {s:?} сообщил об ошибке:", row.name)
                }
                (None, true, Lang::Ru) => format!("{} выполнено; локальная команда ответила:", row.name),
                (None, false, Lang::Ru) => {
                    format!("{} выполнено; локальная команда сообщила об ошибке:", row.name)
                }
            };
            let mut parts = vec![Part::Maven { text: head }];
            if ran.text.trim().is_empty() {
                parts.push(Part::Maven {
                    text: tr(lang, "(nothing)".into(), "(ничего)".into()),
                });
            } else {
                parts.push(Part::Output {
                    server,
                    text: ran.text.trim_end().to_string(),
                });
            }
            if let Some(cut) = ran.cut {
                parts.push(Part::Maven {
                    text: cut.to_string(),
                });
            }
            Answer {
                parts,
                act: None,
                pending: None,
                lang,
                ok: ran.ok,
                understood: true,
            }
            .about(
                &row.name,
                if ran.ok {
                    Outcome::Ran
                } else {
                    Outcome::Failed
                },
            )
        }
        Err(ExecError::Refused(r)) => Answer::refuse(wont(lang, &r))
            .in_lang(lang)
            .about(&row.name, Outcome::Refused),
        // Sent, never answered: it may have run. Said as such, and never sent again by Maven.
        Err(ExecError::Unknown { who, reason }) => Answer::refuse(format!(
            "{}: outcome unknown: {who} may have run it ({reason}). Check with the service itself before asking for it again; Maven does not retry it.",
            row.name
        ))
        .about(&row.name, Outcome::Unknown),
        // Not run: its server could not be reached or refused the call, the local command
        // could not start, the row could not be read again or recorded, or its arguments do
        // not bind.
        Err(
            e @ (ExecError::Call(_)
            | ExecError::Spawn { .. }
            | ExecError::Wait { .. }
            | ExecError::Store(_)
            | ExecError::NotRecorded(_)
            | ExecError::NeedsConfirmation(_)
            | ExecError::Bind(_)
            | ExecError::Args(_)),
        ) => Answer::refuse(format!("{} did not run: {e}", row.name))
            .about(&row.name, Outcome::Refused),
    }
}

/// A configured feed as the digest speaks of it: its name and, while its polls fail, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedHealth {
    /// The feed's name.
    pub name: String,
    /// The last poll's error, while the feed is failing.
    pub failing: Option<String>,
}

/// Where the digest learns which feeds are configured and which fail (the daemon's poller).
pub type FeedsSource = std::sync::Arc<dyn Fn() -> Vec<FeedHealth> + Send + Sync>;

/// The longest error of a failing feed the digest says.
const FEED_ERROR_CAP: usize = 120;

/// The turn pipeline. The turns of one conversation run one at a time, in order; those of
/// different conversations at the same time.
pub struct Turns {
    store: Store,
    executor: Executor,
    /// Replaced whole by a reload of the configuration ([`Turns::reconfigure`]).
    llm: std::sync::RwLock<Option<Arc<llm::LlmRouter>>>,
    /// The configured feeds, when known: the digest names the failing ones, and says how to
    /// add one when there is none.
    feeds: Option<FeedsSource>,
    /// The sentence templates (the owner's and the phrasebook), replaced whole by a reload.
    templates: std::sync::RwLock<Arc<templates::Templates>>,
    /// Each server's `serverInfo.name`, which the phrasebook is keyed by.
    server_names: Option<templates::ServerNames>,
    /// Each conversation's state: what its next turn answers (held across its turn, never
    /// across another conversation's), and the server's question it shows.
    conversations: conversation::Slots<Held, Question>,
}

impl Turns {
    /// The pipeline over the owner's `store`, running acts through `executor`, with the `llm`
    /// router when one is configured (else the rules router alone).
    pub fn new(store: Store, executor: Executor, llm: Option<llm::LlmRouter>) -> Turns {
        Turns {
            store,
            executor,
            llm: std::sync::RwLock::new(llm.map(Arc::new)),
            feeds: None,
            templates: std::sync::RwLock::new(Arc::new(templates::Templates::phrasebook())),
            server_names: None,
            conversations: conversation::Slots::new(conversation::MAX_CONVERSATIONS),
        }
    }

    /// What a reload of the configuration changes: what it approves, and the model router
    /// (`None`: the rules router alone). A confirmation or a question already pending stays;
    /// an act confirmed under the old approvals is judged again, against these, when it runs.
    pub fn reconfigure(&self, approvals: Arc<allowlist::Approvals>, llm: Option<llm::LlmRouter>) {
        self.executor.set_approvals(approvals);
        *self.llm.write().unwrap_or_else(|p| p.into_inner()) = llm.map(Arc::new);
    }

    /// The same pipeline, its digest told of the configured feeds by `feeds`.
    pub fn with_feeds(mut self, feeds: FeedsSource) -> Turns {
        self.feeds = Some(feeds);
        self
    }

    /// The same pipeline, the phrasebook told which server is which by `names`.
    pub fn with_server_names(mut self, names: templates::ServerNames) -> Turns {
        self.server_names = Some(names);
        self
    }

    /// Routes by `templates` from now on (the owner's files as loaded, and the phrasebook).
    pub fn set_templates(&self, templates: templates::Templates) {
        *self.templates.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(templates);
    }

    /// The templates in force.
    pub fn templates(&self) -> Arc<templates::Templates> {
        self.templates
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Each configured server's `serverInfo.name`, as far as it is known.
    pub fn server_names(&self) -> std::collections::BTreeMap<String, String> {
        self.server_names.as_ref().map(|f| f()).unwrap_or_default()
    }

    /// Which sentence template would route `text` (typed) and to what act, or why none does.
    pub async fn explain(&self, text: &str) -> String {
        let rows = match self.store.tools().await {
            Ok(r) => r,
            Err(e) => return format!("the acts cannot be read: {e}"),
        };
        let text = text.trim();
        self.templates().explain(
            text,
            rules::lang_of(text),
            "typed",
            &rows,
            &self.server_names(),
        )
    }

    /// The server's question `conversation`'s next turn answers, while it stands (two
    /// minutes).
    pub fn question(&self, conversation: &Conversation) -> Option<Question> {
        self.conversations.shows(conversation)
    }

    /// Runs one turn of `conversation`: `text` as typed, or a transcript when the front end
    /// is spoken (made into the words said, [`voice::normalise`], and a question before an
    /// act that may write asked with a one-time word only this conversation's next answer can
    /// give). The turns of one conversation run in order; another conversation's turn never
    /// waits for them.
    pub async fn turn(&self, conversation: &Conversation, text: &str) -> Answer {
        let said;
        let text = if conversation.spoken() {
            said = voice::normalise(text);
            said.as_str()
        } else {
            text
        };
        let slot = self.conversations.of(conversation);
        // This conversation's lock, for the whole turn: its turns keep their order and what it
        // holds stays single. No other conversation waits on it.
        let mut pending = slot.lock().await;
        let previous = pending.take();
        // Boxed: a turn's future holds the whole call (executor, manager, client, a grant),
        // too large for a task's stack in a debug build.
        let result = Box::pin(self.turn_inner(text, previous, conversation)).await;
        let asked = match &result {
            Ok((_, Some(Held::Input(w)))) => question(w),
            _ => None,
        };
        let answer = match result {
            Ok((answer, next)) => {
                *pending = next;
                answer
            }
            Err(e) => {
                tracing::error!(error = %e, conversation = %conversation, "turn failed");
                Answer::refuse(format!("Something went wrong: {e}"))
            }
        };
        self.conversations.ended(conversation, asked);
        answer
    }

    async fn turn_inner(
        &self,
        text: &str,
        previous: Option<Held>,
        conversation: &Conversation,
    ) -> Result<(Answer, Option<Held>), store::Error> {
        let text = text.trim();
        if text.is_empty() {
            return Ok((
                Answer::say("Say something, e.g. \"what can you do?\""),
                None,
            ));
        }
        // The turn's language, decided once: every sentence of its answer is in it.
        let lang = rules::lang_of(text);
        let previous = match (previous, conversation.spoken()) {
            // The turn after a server's question is its answer.
            (Some(Held::Input(w)), _) => return Ok(self.answer_input(w, text, lang).await),
            // Asked by voice: only this conversation's answer carrying the word runs it; a
            // bare yes hears the question again; a no cancels.
            (Some(Held::Confirm(r, Some(word))), true) => {
                // A no at the start ("no", "no, orange", "нет, апельсин", "не надо", "don't")
                // cancels, whatever else was said.
                let first = text.split(' ').next().unwrap_or("");
                let no = rules::yes_no(text) == Some(false)
                    || rules::yes_no(first) == Some(false)
                    || text.starts_with("не ")
                    || text.starts_with("don't")
                    || text.starts_with("do not ");
                if no {
                    return Ok(self.confirm(false, text, Some(r), lang).await);
                }
                let heard = voice::hear(text, word);
                if heard == voice::Heard::Other {
                    tracing::info!(act = %r.act(), "pending confirmation dropped by another turn");
                    None
                } else {
                    let why = match heard {
                        voice::Heard::Confirmed => {
                            return Ok(self.confirm(true, text, Some(r), lang).await)
                        }
                        voice::Heard::PlainYes => {
                            let again = Answer::say(tr(
                            lang,
                            format!(
                                "A plain yes does not run {}. To run it, say: yes, {}.",
                                r.act(),
                                word
                            ),
                            format!(
                                "Одного «да» мало, чтобы выполнить {}. Чтобы выполнить, скажите: да, {}.",
                                r.act(),
                                word
                            ),
                        ))
                        .in_lang(lang)
                        .about(r.act(), Outcome::AwaitsConfirmation);
                            return Ok((again, Some(Held::Confirm(r, Some(word)))));
                        }
                        voice::Heard::WrongWord => tr(
                            lang,
                            "it names a word other than this question's".to_owned(),
                            "названо не то слово".to_owned(),
                        ),
                        voice::Heard::NotAlone => tr(
                            lang,
                            "a confirmation is yes and the word, with little else".to_owned(),
                            "подтверждение — это «да» и слово, почти без других слов".to_owned(),
                        ),
                        voice::Heard::Other => String::new(),
                    };
                    tracing::info!(act = %r.act(), reason = %why, "spoken confirmation refused; the question ends");
                    let ended = Answer::say(tr(
                    lang,
                    format!(
                        "That does not confirm {}: {why}. Nothing ran; ask again for a new word.",
                        r.act()
                    ),
                    format!(
                        "Это не подтверждение {}: {why}. Ничего не выполнено; попросите снова, будет новое слово.",
                        r.act()
                    ),
                ))
                .in_lang(lang)
                .about(r.act(), Outcome::Cancelled);
                    return Ok((ended, None));
                }
            }
            // A typed question takes a typed yes.
            (Some(Held::Confirm(r, None)), false) => Some(r),
            // A conversation's front end is spoken or typed for good: never so.
            (Some(Held::Confirm(r, _)), _) => {
                tracing::info!(act = %r.act(), "pending confirmation dropped: answered otherwise than it was asked");
                None
            }
            (None, _) => None,
        };
        if let Some(yes) = rules::yes_no(text) {
            return Ok(self.confirm(yes, text, previous, lang).await);
        }
        if let Some(p) = &previous {
            tracing::info!(act = %p.act(), "pending confirmation dropped by another turn");
        }
        let rows = self.store.tools().await?;
        // Sentence templates first: the owner's, then the phrasebook. Their arguments are the
        // owner's words in the slots a template names, never a guess.
        let names = self.server_names();
        let front = if conversation.spoken() {
            "voice"
        } else {
            "typed"
        };
        let templates = self.templates();
        if let Some(r) = templates.route(text, lang, front, &rows, &names) {
            tracing::info!(act = %r.act, template = %r.template.at, "a sentence template matched");
            return Ok(self
                .run_act(&r.act, Args::Said(r.arguments), text, conversation, lang)
                .await);
        }
        let enabled: Vec<&ToolRow> = rows
            .iter()
            .filter(|r| r.state == ToolState::Enabled)
            .collect();
        let acts: Vec<ActName> = enabled
            .iter()
            .map(|r| ActName {
                name: r.name.clone(),
                tool: r.tool.clone(),
            })
            .collect();
        let router = self.llm.read().unwrap_or_else(|p| p.into_inner()).clone();
        let mut fell_back: Option<llm::LlmError> = None;
        let decision = match router.as_deref() {
            None => rules::route_in(text, lang, &acts),
            Some(llm) => {
                let catalogue: Vec<llm::CatalogueEntry> = enabled
                    .iter()
                    .zip(&acts)
                    .map(|(r, a)| llm::CatalogueEntry {
                        act: a.clone(),
                        description: allowlist::catalogue::cap_description(
                            &r.description,
                            allowlist::DESCRIPTION_CAP,
                        )
                        .to_string(),
                        schema: r.input_schema.clone(),
                    })
                    .collect();
                // Built-in intents first: they need no model.
                match rules::route_in(text, lang, &acts) {
                    Decision::CannotHelp(_) => match llm.route(text, &catalogue).await {
                        Ok(d) => d,
                        Err(e) => {
                            tracing::warn!(error = %e, "the llm router gave no decision; answering with the rules router");
                            fell_back = Some(e);
                            rules::route_in(text, lang, &acts)
                        }
                    },
                    d => d,
                }
            }
        };
        let outcome = match decision {
            Decision::FeedsDigest(lang) => (self.digest(lang).await?, None),
            Decision::NotesSearch(q, lang) => (self.search(&q, lang).await?, None),
            Decision::Help(lang) => (
                with_phrases(
                    help(&enabled, &self.executor.approvals(), lang),
                    &enabled,
                    &templates,
                    &names,
                    lang,
                ),
                None,
            ),
            Decision::Say(answer) => (Answer::say(answer), None),
            Decision::CannotHelp(lang) => {
                // Naming an act that exists but may not run deserves its reason.
                let others: Vec<ActName> = rows
                    .iter()
                    .filter(|r| r.state != ToolState::Enabled)
                    .map(|r| ActName {
                        name: r.name.clone(),
                        tool: r.tool.clone(),
                    })
                    .collect();
                match rules::match_act(text, &others)
                    .and_then(|(name, _)| rows.iter().find(|r| r.name == name))
                    .and_then(|r| {
                        allowlist::may_run(r, &self.executor.approvals())
                            .err()
                            .map(|reason| (r, reason))
                    }) {
                    Some((r, reason)) => (
                        Answer::refuse(wont(lang, &reason))
                            .in_lang(lang)
                            .about(&r.name, Outcome::Refused),
                        None,
                    ),
                    None => {
                        let mut a = with_phrases(
                            cannot_help(text, &enabled, &self.executor.approvals(), lang),
                            &enabled,
                            &templates,
                            &names,
                            lang,
                        );
                        a.understood = false;
                        (a, None)
                    }
                }
            }
            Decision::Confirm(yes) => self.confirm(yes, text, None, lang).await,
            Decision::RunAct { name, tail } => {
                self.run_act(&name, Args::Tail(tail), text, conversation, lang)
                    .await
            }
            Decision::CallAct { name, arguments } => {
                self.run_act(&name, Args::Named(arguments), text, conversation, lang)
                    .await
            }
        };
        let mut outcome = outcome;
        if let Some(e) = fell_back {
            // One line: the model router failed, and who answered instead.
            let lang = outcome.0.lang;
            outcome.0.parts.push(Part::Maven {
                text: tr(
                    lang,
                    format!(
                        "(The model router gave no answer — {e} — so the rules router answered.)"
                    ),
                    format!("(Модель не ответила — {e} — поэтому ответил маршрутизатор правил.)"),
                ),
            });
        }
        Ok(outcome)
    }

    /// Which router chooses what a turn does, and how the model router's last request went.
    pub fn router(&self) -> Router {
        match self
            .llm
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_deref()
        {
            None => Router::Rules,
            Some(l) => Router::Llm {
                url: l.url().to_owned(),
                model: l.model().to_owned(),
                last: l.last(),
            },
        }
    }

    async fn run_act(
        &self,
        name: &str,
        args: Args,
        utterance: &str,
        conversation: &Conversation,
        lang: Lang,
    ) -> (Answer, Option<Held>) {
        let row = match self.store.tool(name).await {
            Ok(Some(r)) => r,
            Ok(None) => {
                return (
                    Answer::refuse(tr(
                        lang,
                        format!("There is no act called {name}."),
                        format!("Действия {name} нет."),
                    ))
                    .in_lang(lang),
                    None,
                )
            }
            Err(e) => return (Answer::refuse(format!("Something went wrong: {e}")), None),
        };
        let request = match self.executor.prepare(&row, &args, utterance) {
            Ok(allowlist::run::Next::Run) => {
                #[expect(clippy::disallowed_methods, reason = "a turn runs the act")]
                let ran = self.executor.run(&row.name, &args, utterance).await;
                return self.report(&row, ran, lang).await;
            }
            Ok(allowlist::run::Next::Confirm(request)) => request,
            Err(ExecError::Refused(reason)) => {
                return (
                    Answer::refuse(wont(lang, &reason))
                        .in_lang(lang)
                        .about(&row.name, Outcome::Refused),
                    None,
                )
            }
            // Refuse what cannot be bound before asking for a confirmation.
            Err(e) => {
                return (
                    Answer::refuse(e.to_string()).about(&row.name, Outcome::Refused),
                    None,
                )
            }
        };
        // Every argument verbatim, and each optional one left unset named as such: the owner's
        // yes is to exactly what is shown.
        let (with, tail, arguments) = match &args {
            Args::Tail(t) if t.is_empty() => (String::new(), String::new(), None),
            // A template with no slot: nothing to show.
            Args::Said(m) if m.is_empty() => (String::new(), String::new(), None),
            Args::Tail(t) => (
                tr(lang, format!(" with {t:?}"), format!(" с {t:?}")),
                t.clone(),
                None,
            ),
            Args::Named(m) | Args::Said(m) => {
                let unset = allowlist::run::schema::unset(&row.input_schema, m);
                let unset = match (unset.is_empty(), lang) {
                    (true, Lang::En) => "none".to_owned(),
                    (true, Lang::Ru) => "нет".to_owned(),
                    (false, _) => unset.join(", "),
                };
                (
                    tr(
                        lang,
                        format!(" with {} (not set: {unset})", args.shown()),
                        format!(" с {} (не заданы: {unset})", args.shown()),
                    ),
                    String::new(),
                    Some(m.clone()),
                )
            }
        };
        let mut spoken = None;
        let answer = match conversation.spoken() {
            false => {
                // Characters that render as nothing are shown escaped by every front end; the
                // question says how many there are, so none passes unseen.
                let hidden = match &args {
                    Args::Tail(t) => shown::invisible_count(t),
                    Args::Named(_) | Args::Said(_) => shown::invisible_count(&args.shown()),
                };
                let hidden = match hidden {
                    0 => String::new(),
                    n => tr(
                        lang,
                        format!(
                            " Its arguments hold {n} invisible characters, each shown as \\u{{…}}."
                        ),
                        format!(
                            " В аргументах невидимых символов: {n}, каждый показан как \\u{{…}}."
                        ),
                    ),
                };
                Answer::say(tr(
                    lang,
                    format!("About to run {}{with}.{hidden} Run it? (yes/no)", row.name),
                    format!(
                        "Собираюсь выполнить {}{with}.{hidden} Выполнить? (да/нет)",
                        row.name
                    ),
                ))
            }
            true => {
                // Read word for word, or not asked by voice at all.
                let said = match voice::spoken_arguments(&args) {
                    Ok(said) => said,
                    Err(why) => {
                        let why = why.why(lang);
                        tracing::info!(act = %row.name, reason = %why, "a spoken question needs the screen");
                        let refused = Answer::refuse(tr(
                            lang,
                            format!("This one needs the screen: {why}. Nothing is waiting; type it with maven say."),
                            format!("Это нужно смотреть на экране: {why}. Ничего не ждёт; наберите это в maven say."),
                        ))
                        .in_lang(lang)
                        .about(&row.name, Outcome::Refused);
                        return (refused, None);
                    }
                };
                let word = voice::one_time_word(lang);
                let ask = tr(
                    lang,
                    format!("To run it, say: yes, {word}."),
                    format!("Чтобы выполнить, скажите: да, {word}."),
                );
                spoken = Some(word);
                match said {
                    None => Answer::say(tr(
                        lang,
                        format!("About to run {}. {ask}", row.name),
                        format!("Собираюсь выполнить {}. {ask}", row.name),
                    )),
                    Some(said) => {
                        let not_set = match &args {
                            Args::Named(m) | Args::Said(m) => {
                                let unset = allowlist::run::schema::unset(&row.input_schema, m);
                                match (unset.is_empty(), lang) {
                                    (true, _) => String::new(),
                                    (false, Lang::En) => {
                                        format!(" (not set: {})", unset.join(", "))
                                    }
                                    (false, Lang::Ru) => {
                                        format!(" (не заданы: {})", unset.join(", "))
                                    }
                                }
                            }
                            Args::Tail(_) => String::new(),
                        };
                        Answer {
                            parts: vec![
                                Part::Maven {
                                    text: tr(
                                        lang,
                                        format!("About to run {}", row.name),
                                        format!("Собираюсь выполнить {}", row.name),
                                    ),
                                },
                                Part::Exact {
                                    text: tr(
                                        lang,
                                        format!("with {said}{not_set}."),
                                        format!("с {said}{not_set}."),
                                    ),
                                },
                                Part::Maven { text: ask },
                            ],
                            ..Answer::say(String::new())
                        }
                    }
                }
            }
        };
        let mut answer = answer
            .in_lang(lang)
            .about(&row.name, Outcome::AwaitsConfirmation);
        answer.pending = Some(Awaits::Confirm {
            act: row.name.clone(),
            tail,
            arguments,
            expires_in_s: CONFIRM_WINDOW.as_secs(),
        });
        (answer, Some(Held::Confirm(request, spoken)))
    }

    async fn confirm(
        &self,
        yes: bool,
        said: &str,
        previous: Option<Request>,
        lang: Lang,
    ) -> (Answer, Option<Held>) {
        let Some(p) = previous else {
            return (
                Answer::say(tr(
                    lang,
                    "There is nothing to confirm.".into(),
                    "Подтверждать нечего.".into(),
                ))
                .in_lang(lang),
                None,
            );
        };
        let confirmation = match p.answer(yes, said) {
            allowlist::Answer::Expired(p) => {
                return (
                    Answer::refuse(tr(
                        lang,
                        format!(
                            "Too late: the request to run {} expired. Ask again.",
                            p.act()
                        ),
                        format!(
                            "Слишком поздно: запрос на {} истёк. Попросите ещё раз.",
                            p.act()
                        ),
                    ))
                    .in_lang(lang)
                    .about(p.act(), Outcome::Refused),
                    None,
                )
            }
            allowlist::Answer::Declined(p) => {
                return (
                    Answer::say(tr(
                        lang,
                        format!("Cancelled: {} was not run.", p.act()),
                        format!("Отменено: {} не выполнено.", p.act()),
                    ))
                    .in_lang(lang)
                    .about(p.act(), Outcome::Cancelled),
                    None,
                )
            }
            allowlist::Answer::Confirmed(c) => c,
        };
        let row = match self.store.tool(confirmation.act()).await {
            Ok(Some(r)) => r,
            Ok(None) => {
                return (
                    Answer::refuse(format!("{} no longer exists.", confirmation.act())),
                    None,
                )
            }
            Err(e) => return (Answer::refuse(format!("Something went wrong: {e}")), None),
        };
        #[expect(clippy::disallowed_methods, reason = "a turn runs the act")]
        let ran = self.executor.run_confirmed(confirmation).await;
        self.report(&row, ran, lang).await
    }

    /// The answer of a turn that ran (or tried to run) `row`, and the question it waits on.
    /// A round whose every question Maven declined itself (secrets) is sent on at once: only a
    /// question the owner was shown waits for the owner's next turn.
    #[expect(
        clippy::disallowed_methods,
        reason = "a turn answers the server's question and the act goes on"
    )]
    async fn report(
        &self,
        row: &ToolRow,
        mut result: Result<Ran, ExecError>,
        lang: Lang,
    ) -> (Answer, Option<Held>) {
        let mut declined: Vec<String> = Vec::new();
        loop {
            let w = match result {
                Ok(Ran {
                    waiting: Some(w), ..
                }) => w,
                done => {
                    return (
                        report_done(row, done, lang).prefixed(&declined.join("\n")),
                        None,
                    )
                }
            };
            if w.ask().is_some() {
                let out = ask_owner(&w).prefixed(&declined.join("\n"));
                return (out, Some(Held::Input(w)));
            }
            declined.push(declined_line(w.server(), w.declined_secrets()));
            declined.retain(|l| !l.is_empty());
            result = match self.executor.answer_input(w, "").await {
                InputStep::Ran(r) => r,
                // With no question left none of these can be, but each is answered.
                InputStep::More(w) | InputStep::Again(w, _) => Ok(Ran {
                    text: String::new(),
                    ok: true,
                    waiting: Some(w),
                    cut: None,
                }),
                InputStep::Expired(w) => Err(ExecError::Refused(allowlist::Refusal::Expired {
                    server: shown::line(w.server()).into_owned(),
                })),
            };
        }
    }

    /// The owner's answer to the server's question of the last turn.
    #[expect(
        clippy::disallowed_methods,
        reason = "a turn answers the server's question and the act goes on"
    )]
    async fn answer_input(
        &self,
        w: Box<Waiting>,
        text: &str,
        lang: Lang,
    ) -> (Answer, Option<Held>) {
        let act = w.act().to_owned();
        match self.executor.answer_input(w, text).await {
            InputStep::Expired(w) => (
                Answer::refuse(format!(
                    "Too late: {} asked more than two minutes ago; {act} was not finished. Ask again.",
                    shown::line(w.server())
                ))
                .about(&act, Outcome::Refused),
                None,
            ),
            InputStep::Again(w, reason) => {
                let out = ask_owner(&w).prefixed(&format!("That does not answer it: {reason}."));
                (out, Some(Held::Input(w)))
            }
            InputStep::More(w) => {
                let out = ask_owner(&w);
                (out, Some(Held::Input(w)))
            }
            InputStep::Ran(result) => match self.store.tool(&act).await {
                Ok(Some(row)) => self.report(&row, result, lang).await,
                Ok(None) => (Answer::refuse(format!("{act} no longer exists.")), None),
                Err(e) => (Answer::refuse(format!("Something went wrong: {e}")), None),
            },
        }
    }

    async fn digest(&self, lang: Lang) -> Result<Answer, store::Error> {
        let health = self.feeds.as_ref().map(|f| f());
        if health.as_ref().is_some_and(Vec::is_empty) {
            return Ok(Answer::say(match lang {
                Lang::En => "You have no feeds yet. Add one with `maven feeds add URL` (a feed's address, or a site's page that links to one).",
                Lang::Ru => "Лент пока нет. Добавьте ленту: `maven feeds add URL` (адрес ленты или страницы сайта, которая на неё ссылается).",
            })
            .in_lang(lang));
        }
        let failing: Vec<String> = health
            .iter()
            .flatten()
            .filter_map(|f| {
                let e = f.failing.as_deref()?;
                Some(format!(
                    "{} ({})",
                    shown::line(&f.name),
                    shown::line(&shown::cut(e, FEED_ERROR_CAP))
                ))
            })
            .collect();
        let failing_part = (!failing.is_empty()).then(|| Part::Maven {
            text: match lang {
                Lang::En => format!("Failing: {}.", failing.join("; ")),
                Lang::Ru => format!("Не обновляются: {}.", failing.join("; ")),
            },
        });
        let answer = self.digest_notes(lang).await?;
        Ok(match failing_part {
            Some(p) => {
                let mut a = answer;
                a.parts.push(p);
                a
            }
            None => answer,
        })
    }

    async fn digest_notes(&self, lang: Lang) -> Result<Answer, store::Error> {
        let last: i64 = self
            .store
            .fact(DIGEST_FACT)
            .await?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let notes = self
            .store
            .notes(store::NotesQuery {
                source_prefix: Some("rss:".into()),
                limit: 500,
                ..Default::default()
            })
            .await?;
        let fresh: Vec<&store::Note> = notes.iter().filter(|n| n.id > last).collect();
        if fresh.is_empty() {
            return Ok(Answer::say(match lang {
                Lang::En => "Nothing new in your feeds since you last asked.",
                Lang::Ru => "В лентах ничего нового с тех пор, как вы спрашивали.",
            })
            .in_lang(lang));
        }
        // Grouped by feed, feeds in order of their newest item, items newest first.
        let mut groups: Vec<(&str, Vec<&store::Note>)> = Vec::new();
        for n in &fresh {
            let feed = n.source.strip_prefix("rss:").unwrap_or(&n.source);
            match groups.iter_mut().find(|(f, _)| *f == feed) {
                Some((_, items)) => items.push(n),
                None => groups.push((feed, vec![n])),
            }
        }
        let mut parts = Vec::new();
        let mut shown = 0usize;
        for (feed, items) in &groups {
            if shown >= DIGEST_CAP {
                break;
            }
            parts.push(Part::Maven {
                text: match lang {
                    Lang::En => format!("{feed} ({} new):", items.len()),
                    Lang::Ru => format!("{feed} (новых: {}):", items.len()),
                },
            });
            let mut list = Vec::new();
            for n in items.iter().take(DIGEST_PER_FEED) {
                if shown >= DIGEST_CAP {
                    break;
                }
                list.push(note_item(n, None, 1));
                shown += 1;
            }
            parts.push(Part::List { items: list });
        }
        if fresh.len() > shown {
            parts.push(Part::Maven {
                text: match lang {
                    Lang::En => format!("…and {} more.", fresh.len() - shown),
                    Lang::Ru => format!("…и ещё {}.", fresh.len() - shown),
                },
            });
        }
        let newest = fresh.iter().map(|n| n.id).max().unwrap_or(last);
        self.store
            .set_fact(DIGEST_FACT, &newest.to_string())
            .await?;
        Ok(Answer {
            parts,
            act: None,
            pending: None,
            lang,
            ok: true,
            understood: true,
        })
    }

    async fn search(&self, q: &str, lang: Lang) -> Result<Answer, store::Error> {
        let found = self.store.search_notes(q, 10).await?;
        if found.is_empty() {
            return Ok(Answer::say(match lang {
                Lang::En => format!("No notes about {q:?}."),
                Lang::Ru => format!("Заметок про «{q}» нет."),
            })
            .in_lang(lang));
        }
        let items = found
            .iter()
            .map(|n| note_item(n, Some(n.source.clone()), 0))
            .collect();
        Ok(Answer {
            parts: vec![Part::List { items }],
            act: None,
            pending: None,
            lang,
            ok: true,
            understood: true,
        })
    }
}

/// A note (a feed item's title and summary, capped) as an item of an answer.
fn note_item(n: &store::Note, from: Option<String>, depth: u8) -> Item {
    Item {
        text: shown::cut(&n.text, NOTE_TEXT_CAP).into_owned(),
        from,
        link: n.link.clone(),
        depth,
    }
}

/// The router of the turns, as a status shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Router {
    /// The rules router alone.
    Rules,
    /// A model router, with the rules router as its fallback.
    Llm {
        /// Its chat-completions URL.
        url: String,
        /// The model's name.
        model: String,
        /// How its last request went; `None` before the first.
        last: Option<llm::Last>,
    },
}

/// What the rest of a sentence does for an act, as help says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    /// It runs bare: the rest of the sentence is not used.
    Nothing,
    /// The rest of the sentence is its one argument (or a local act's last word).
    Rest,
    /// It needs named arguments, which only a model (or the service itself) gives.
    Named,
    /// The rest of the sentence would be its one argument once its server's `allow_tools`
    /// names it.
    OnceAllowed,
}

/// Whether the rest of a sentence becomes `row`'s argument under the positional rule.
fn takes(row: &ToolRow, approvals: &allowlist::Approvals) -> Takes {
    if row.kind == store::ToolKind::Local {
        return Takes::Rest;
    }
    let required: Vec<&str> = row
        .input_schema
        .get("required")
        .and_then(serde_json::Value::as_array)
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    if required.is_empty() {
        return Takes::Nothing;
    }
    let named = approvals
        .servers
        .get(&row.server)
        .is_some_and(|a| a.contains(&row.tool));
    match allowlist::bind_positional(
        row,
        if named {
            std::slice::from_ref(&row.tool)
        } else {
            &[]
        },
        "1",
    ) {
        Ok(_) => Takes::Rest,
        // A number the tail "1" fits, or a string: bound; anything else needs names.
        Err(allowlist::BindError::BadNumber { .. }) => Takes::Rest,
        Err(allowlist::BindError::NotNamed { .. }) => Takes::OnceAllowed,
        Err(_) => Takes::Named,
    }
}

/// A server's description on one line: every run of whitespace (its blank lines too) one
/// space, capped.
fn one_line(s: &str, cap: usize) -> String {
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    shown::cut(&joined, cap).into_owned()
}

/// How an act is said: its name's words, but a server's tool of the server's own name ("fetch
/// fetch") by the tool's name alone when no other enabled act has that tool name (the rules
/// router takes it so).
fn phrase(r: &ToolRow, enabled: &[&ToolRow]) -> String {
    let spoken = r.name.replace('_', " ");
    let tool = |r: &ToolRow| r.tool.replace(['_', '-', '.'], " ").to_lowercase();
    let t = tool(r);
    let unique = enabled.iter().filter(|o| tool(o) == t).count() == 1;
    if r.kind == store::ToolKind::Mcp && unique && spoken == format!("{t} {t}") {
        t
    } else {
        spoken
    }
}

fn act_items(enabled: &[&ToolRow], approvals: &allowlist::Approvals, lang: Lang) -> Vec<Item> {
    enabled
        .iter()
        .map(|r| {
            let phrase = phrase(r, enabled);
            // Its own full stop would run into the "; " that follows.
            let d = one_line(&r.description, 100);
            let d = d.trim_end_matches(['.', ' ']);
            let allow = format!("maven mcp allow {} {}", r.server, r.tool);
            let how = match (takes(r, approvals), lang) {
                (Takes::Nothing, Lang::En) => format!("say \"{phrase}\""),
                (Takes::Rest, Lang::En) => format!("say \"{phrase} …\" (the rest of the sentence is its argument)"),
                (Takes::Named, Lang::En) => format!("\"{phrase}\" needs named arguments, which only a model router (the \"router\" block, kind \"llm\") fills from your own words; or use the service itself"),
                (Takes::OnceAllowed, Lang::En) => format!("\"{phrase} …\" takes the rest of the sentence as its argument once its server's allow_tools names it: {allow}"),
                (Takes::Nothing, Lang::Ru) => format!("скажите «{phrase}»"),
                (Takes::Rest, Lang::Ru) => format!("скажите «{phrase} …» (остаток фразы — его аргумент)"),
                (Takes::Named, Lang::Ru) => format!("«{phrase}» требует именованных аргументов: их заполняет только модель (блок «router», kind «llm») по вашим словам; или воспользуйтесь самим сервисом"),
                (Takes::OnceAllowed, Lang::Ru) => format!("«{phrase} …» примет остаток фразы как аргумент, когда его назовут в allow_tools сервера: {allow}"),
            };
            let w = match (r.destructive, lang) {
                (true, Lang::En) => " (asks first)",
                (true, Lang::Ru) => " (спросит сначала)",
                (false, _) => "",
            };
            Item {
                text: format!("{phrase} — {d}{w}; {how}"),
                from: None,
                link: None,
                depth: 1,
            }
        })
        .collect()
}

/// Edit distance between two short texts, by characters (at most 64 of each compared).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.get(j).copied().unwrap_or(0) + 1;
            if let Some(c) = cur.get_mut(j + 1) {
                *c = sub.min(del).min(ins);
            }
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

/// The enabled act whose spoken form is nearest the start of the sentence, when it is close
/// (a typo or a recogniser's split: at most a quarter of its letters differ, two at least).
fn nearest<'a>(text: &str, enabled: &[&'a ToolRow]) -> Option<&'a ToolRow> {
    let said = rules::normalise(text);
    let mut best: Option<(usize, &ToolRow)> = None;
    for r in enabled {
        let form = r.name.replace('_', " ");
        let n = form.split(' ').count();
        let start: String = said.split(' ').take(n).collect::<Vec<_>>().join(" ");
        let d = distance(&start, &form);
        let close = d <= (form.chars().count() / 4).max(2);
        if close && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, r));
        }
    }
    best.map(|(_, r)| r)
}

fn help(enabled: &[&ToolRow], approvals: &allowlist::Approvals, lang: Lang) -> Answer {
    let mut out = match lang {
        Lang::En => String::from(
            "I can tell you what's new in your feeds (\"what's new in my feeds?\"), search your notes (\"notes about …\")",
        ),
        Lang::Ru => String::from(
            "Я могу рассказать, что нового в лентах («что нового в лентах?»), найти заметки («заметки про …»)",
        ),
    };
    if enabled.is_empty() {
        out.push_str(match lang {
            Lang::En => ". No acts are enabled yet: enable them on the page.",
            Lang::Ru => ". Включённых действий пока нет: включите их на странице.",
        });
        return Answer::say(out).in_lang(lang);
    }
    out.push_str(match lang {
        Lang::En => ", and run these acts:",
        Lang::Ru => " и выполнить эти действия:",
    });
    with_acts(out, enabled, approvals, lang)
}

fn cannot_help(
    text: &str,
    enabled: &[&ToolRow],
    approvals: &allowlist::Approvals,
    lang: Lang,
) -> Answer {
    let mut out = match lang {
        Lang::En => String::from("I can't help with that."),
        Lang::Ru => String::from("С этим я не помогу."),
    };
    if let Some(r) = nearest(text, enabled) {
        let phrase = phrase(r, enabled);
        out.push_str(&match lang {
            Lang::En => format!(" Did you mean \"{phrase}\"?"),
            Lang::Ru => format!(" Может быть, «{phrase}»?"),
        });
    }
    out.push_str(match lang {
        Lang::En => " Try \"what's new in my feeds?\", \"notes about …\"",
        Lang::Ru => " Попробуйте «что нового в лентах?», «заметки про …»",
    });
    if enabled.is_empty() {
        return Answer::say(out).in_lang(lang);
    }
    out.push_str(match lang {
        Lang::En => ", or one of your acts:",
        Lang::Ru => " или одно из действий:",
    });
    with_acts(out, enabled, approvals, lang)
}

/// Each listed act with a phrase of its templates, when one serves it (the owner's first, in
/// the answer's language first): "…; or say \"what time is it in {city}\"".
fn with_phrases(
    mut answer: Answer,
    enabled: &[&ToolRow],
    templates: &templates::Templates,
    names: &std::collections::BTreeMap<String, String>,
    lang: Lang,
) -> Answer {
    for part in &mut answer.parts {
        let Part::List { items } = part else {
            continue;
        };
        for (item, row) in items.iter_mut().zip(enabled) {
            let serving = templates.serving(row, names.get(&row.server).map(String::as_str));
            let in_lang = serving
                .iter()
                .find(|(_, l, _)| *l == lang)
                .or_else(|| serving.first());
            if let Some((_, _, t)) = in_lang {
                let phrase = templates::sample(&t.text);
                item.text.push_str(&tr(
                    lang,
                    format!("; or say \"{phrase}\""),
                    format!("; или скажите «{phrase}»"),
                ));
            }
        }
    }
    answer
}

/// Maven's sentence, then the enabled acts as a list.
fn with_acts(
    sentence: String,
    enabled: &[&ToolRow],
    approvals: &allowlist::Approvals,
    lang: Lang,
) -> Answer {
    Answer {
        parts: vec![
            Part::Maven { text: sentence },
            Part::List {
                items: act_items(enabled, approvals, lang),
            },
        ],
        act: None,
        pending: None,
        lang,
        ok: true,
        understood: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    /// The owner's terminal.
    fn term() -> Conversation {
        Conversation::terminal()
    }

    /// The Wyoming voice conversation `id`.
    fn voice(id: &str) -> Conversation {
        Conversation::new(Front::Voice, id)
    }

    fn mcp_row(server: &str, tool: &str) -> ToolRow {
        ToolRow {
            name: allowlist::naming::flatten_name(server, tool),
            kind: store::ToolKind::Mcp,
            server: server.into(),
            tool: tool.into(),
            cmd: vec!["mcp".into(), server.into(), tool.into()],
            scope: format!("mcp:{server}"),
            state: ToolState::Enabled,
            destructive: false,
            fingerprint: None,
            description: String::new(),
            input_schema: serde_json::json!({}),
            shape: serde_json::json!({}),
            approved_shape: None,
            provenance: String::new(),
            created: time::OffsetDateTime::UNIX_EPOCH,
            updated: time::OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_tool_named_as_its_server_is_said_once_and_routed_so() {
        let fetch = mcp_row("fetch", "fetch");
        let todo = mcp_row("todo", "list_tasks");
        assert_eq!(phrase(&fetch, &[&fetch, &todo]), "fetch");
        assert_eq!(phrase(&todo, &[&fetch, &todo]), "todo list tasks");
        // Said once, it is what the rules router runs.
        let acts: Vec<rules::ActName> = [&fetch, &todo]
            .iter()
            .map(|r| rules::ActName {
                name: r.name.clone(),
                tool: r.tool.clone(),
            })
            .collect();
        assert_eq!(
            rules::match_act("fetch https://example.org/", &acts),
            Some(("fetch_fetch".into(), "https://example.org/".into()))
        );
        // Another server's tool of that name: the full name, which alone is unambiguous.
        let other = mcp_row("web", "fetch");
        assert_eq!(phrase(&fetch, &[&fetch, &other]), "fetch fetch");
    }

    /// Brings a row to `to` the way the daemon does: the owner (with a step-up) enables and
    /// disables, a listing withdraws.
    async fn set_state(s: &Store, name: &str, to: ToolState, reason: &str) {
        let (name, reason) = (name.to_owned(), reason.to_owned());
        if let ToolState::Withdrawn = to {
            let change = store::ToolChange::Withdraw { name, reason };
            s.apply_listing(move |_| (vec![change], ())).await.unwrap();
            return;
        }
        let step = stepup::testing::step_up();
        s.owner_sets_tool_state(&name, to, &step, &reason)
            .await
            .unwrap();
    }

    /// A local act as the configuration's `acts` would have it.
    fn act(name: &str, cmd: &[&str], read_only: bool) -> allowlist::LocalAct {
        allowlist::LocalAct {
            name: name.into(),
            cmd: cmd.iter().map(|s| s.to_string()).collect(),
            read_only,
            timeout: Duration::from_secs(30),
            max_output: 64 * 1024,
        }
    }

    async fn setup(acts: Vec<allowlist::LocalAct>) -> (tempfile::TempDir, Store, Turns) {
        let dir = tempfile::tempdir().unwrap();
        #[expect(clippy::disallowed_methods, reason = "a test's own database")]
        let store = Store::open(&dir.path().join("m.db")).await.unwrap();
        let approvals = allowlist::Approvals {
            servers: Default::default(),
            acts,
        };
        allowlist::reconcile::propose_local_acts(&store, &approvals.acts, None)
            .await
            .unwrap();
        let executor = Executor::new(store.clone(), Arc::new(approvals), None);
        let turns = Turns::new(store.clone(), executor, None);
        (dir, store, turns)
    }

    #[tokio::test(start_paused = true)]
    async fn a_pending_confirmation_expires_after_two_minutes() {
        let (dir, store, turns) =
            setup(vec![act("wipe", &["rm", "-f", "/nonexistent/x"], false)]).await;
        set_state(&store, "wipe", ToolState::Enabled, "t").await;
        let asked = turns.turn(&term(), "wipe").await;
        assert_eq!(asked.text(), "About to run wipe. Run it? (yes/no)");
        assert_eq!(
            asked.pending,
            Some(Awaits::Confirm {
                act: "wipe".into(),
                tail: String::new(),
                arguments: None,
                expires_in_s: 120
            })
        );
        assert_eq!(
            asked.act,
            Some(Act {
                name: "wipe".into(),
                outcome: Outcome::AwaitsConfirmation
            })
        );
        tokio::time::advance(CONFIRM_WINDOW + Duration::from_secs(1)).await;
        let late = turns.turn(&term(), "yes").await;
        assert_eq!(
            late.text(),
            "Too late: the request to run wipe expired. Ask again."
        );
        assert!(!late.ok);
        assert!(store.acts_log(10).await.unwrap().is_empty(), "nothing ran");
        drop(dir);
    }

    #[tokio::test]
    async fn each_conversation_confirms_only_its_own_question() {
        let (_dir, store, turns) = setup(vec![
            act("wipe_cache", &["rm", "-f", "/nonexistent/x"], false),
            act("uptime", &["true"], true),
        ])
        .await;
        set_state(&store, "wipe_cache", ToolState::Enabled, "t").await;
        set_state(&store, "uptime", ToolState::Enabled, "t").await;
        let page = Conversation::new(Front::Page, "s1");
        let listen = Conversation::new(Front::Listen, "4242");
        let word_of = |text: String| {
            text.rsplit(", ")
                .next()
                .and_then(|w| w.strip_suffix('.'))
                .unwrap_or_else(|| panic!("{text}"))
                .to_owned()
        };
        // Four conversations, one question each.
        assert_eq!(
            turns.turn(&term(), "wipe_cache").await.text(),
            "About to run wipe_cache. Run it? (yes/no)"
        );
        assert_eq!(
            turns.turn(&page, "wipe_cache").await.text(),
            "About to run wipe_cache. Run it? (yes/no)"
        );
        let kitchen = word_of(turns.turn(&voice("kitchen"), "Wipe cache.").await.text());
        let session = word_of(turns.turn(&listen, "Wipe cache.").await.text());
        // Another turn elsewhere, one that runs an act too, drops none of them.
        assert!(turns
            .turn(&voice("bedroom"), "uptime")
            .await
            .text()
            .starts_with("uptime ran;"));
        // The page's no cancels the page's question only.
        assert_eq!(
            turns.turn(&page, "no").await.text(),
            "Cancelled: wipe_cache was not run."
        );
        // The terminal's yes runs the terminal's.
        assert!(turns
            .turn(&term(), "yes")
            .await
            .text()
            .starts_with("wipe_cache ran;"));
        // A word said in another conversation confirms nothing there and ends nothing here.
        let elsewhere = turns
            .turn(&voice("bedroom"), &format!("Yes, {kitchen}."))
            .await
            .text();
        assert!(!elsewhere.contains("ran;"), "{elsewhere}");
        assert!(turns
            .turn(&voice("kitchen"), &format!("Yes, {kitchen}."))
            .await
            .text()
            .starts_with("wipe_cache ran;"));
        assert!(turns
            .turn(&listen, &format!("Yes, {session}."))
            .await
            .text()
            .starts_with("wipe_cache ran;"));
        let log = store.acts_log(10).await.unwrap();
        let wipes = log.iter().filter(|l| l.tool == "wipe_cache").count();
        assert_eq!(wipes, 3, "{log:?}");
        // Each conversation named as its log line says it.
        assert_eq!(term().to_string(), "terminal");
        assert_eq!(voice("kitchen").to_string(), "voice, kitchen");
        assert_eq!(Conversation::new(Front::Page, "").to_string(), "page");
        assert_eq!(listen.to_string(), "listen, 4242");
    }

    #[tokio::test]
    async fn a_russian_sentence_is_answered_in_russian() {
        let (_dir, store, turns) =
            setup(vec![act("wipe", &["rm", "-f", "/nonexistent/x"], false)]).await;
        set_state(&store, "wipe", ToolState::Enabled, "t").await;
        let asked = turns.turn(&term(), "wipe пожалуйста").await;
        assert_eq!(
            asked.text(),
            "Собираюсь выполнить wipe с \"пожалуйста\". Выполнить? (да/нет)"
        );
        assert_eq!(asked.lang, Lang::Ru);
        let no = turns.turn(&term(), "нет").await;
        assert_eq!(no.text(), "Отменено: wipe не выполнено.");
        assert_eq!(no.lang, Lang::Ru);
        assert_eq!(
            turns.turn(&term(), "да").await.text(),
            "Подтверждать нечего."
        );
        // An English "no" to a Russian question is answered in English.
        turns.turn(&term(), "wipe пожалуйста").await;
        assert_eq!(
            turns.turn(&term(), "no").await.text(),
            "Cancelled: wipe was not run."
        );
        assert!(store.acts_log(10).await.unwrap().is_empty(), "nothing ran");
    }

    #[tokio::test]
    async fn help_says_how_to_run_each_act_and_a_near_miss_is_named() {
        let dir = tempfile::tempdir().unwrap();
        #[expect(clippy::disallowed_methods, reason = "a test's own database")]
        let store = Store::open(&dir.path().join("m.db")).await.unwrap();
        let tools: Vec<mcp::Tool> = [
            serde_json::json!({"name": "list_tasks", "description": "Lists tasks.\n\n\n• not an item\n\nof a project",
                "annotations": {"readOnlyHint": true},
                "inputSchema": {"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}}),
            serde_json::json!({"name": "clear_done", "description": "Removes done tasks.",
                "inputSchema": {"type": "object"}}),
            serde_json::json!({"name": "create_entities", "description": "Creates entities.",
                "inputSchema": {"type": "object", "properties": {"entities": {"type": "array"}}, "required": ["entities"]}}),
        ]
        .into_iter()
        .filter_map(mcp::Tool::from_value)
        .collect();
        let policy = allowlist::ServerPolicy {
            name: "todo".into(),
            allow_tools: vec![
                "list_tasks".into(),
                "clear_done".into(),
                "create_entities".into(),
            ],
            max_tools: 12,
        };
        allowlist::reconcile(&store, &policy, &tools).await.unwrap();
        for n in ["todo_list_tasks", "todo_clear_done", "todo_create_entities"] {
            set_state(&store, n, ToolState::Enabled, "t").await;
        }
        let approvals = allowlist::Approvals {
            servers: [("todo".to_owned(), policy.allow_tools.clone())].into(),
            acts: Vec::new(),
        };
        let executor = Executor::new(store.clone(), Arc::new(approvals), None);
        let turns = Turns::new(store.clone(), executor, None);
        let help = turns.turn(&term(), "help").await.text();
        let lines: Vec<&str> = help.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                "  • todo clear done — Removes done tasks (asks first); say \"todo clear done\"",
                "  • todo create entities — Creates entities (asks first); \"todo create entities\" needs named arguments, which only a model router (the \"router\" block, kind \"llm\") fills from your own words; or use the service itself",
                "  • todo list tasks — Lists tasks. • not an item of a project; say \"todo list tasks …\" (the rest of the sentence is its argument)",
            ],
            "{help}"
        );
        let miss = turns.turn(&term(), "todo lsit tasks inbox").await.text();
        assert!(
            miss.starts_with("I can't help with that. Did you mean \"todo list tasks\"?"),
            "{miss}"
        );
        let far = turns.turn(&term(), "book me a flight").await.text();
        assert!(!far.contains("Did you mean"), "{far}");
        let ru = turns.turn(&term(), "помощь").await.text();
        assert!(
            ru.contains("скажите «todo list tasks …» (остаток фразы — его аргумент)"),
            "{ru}"
        );
    }

    #[tokio::test]
    async fn an_owners_template_routes_to_its_act_and_a_write_still_asks() {
        let (_dir, store, turns) = setup(vec![
            act("wipe_cache", &["rm", "-f", "/nonexistent/x"], false),
            act("uptime", &["true"], true),
        ])
        .await;
        set_state(&store, "wipe_cache", ToolState::Enabled, "t").await;
        let files = [templates::SentenceFile {
            name: "sentences/en/mine.yaml".into(),
            lang: Some(Lang::En),
            text: "language: en\nintents:\n  wipe_cache:\n    data:\n      - sentences:\n          - \"(clean|wipe) [out] the cache [please]\"\n  uptime:\n    data:\n      - sentences:\n          - \"how long have you been up\"\n".into(),
        }];
        turns.set_templates(templates::Templates::load(&files).unwrap());
        let asked = turns.turn(&term(), "Clean out the cache, please").await;
        assert_eq!(asked.text(), "About to run wipe_cache. Run it? (yes/no)");
        assert!(turns
            .turn(&term(), "yes")
            .await
            .text()
            .starts_with("wipe_cache ran;"));
        // A template of a proposed act says so, in the same words as its name would.
        let proposed = turns.turn(&term(), "how long have you been up").await;
        assert_eq!(
            proposed.text(),
            "I won't run that: uptime is only proposed: enable it on the page first."
        );
        // help names each act's phrase.
        let help = turns.turn(&term(), "help").await.text();
        assert!(help.contains("; or say \"clean the cache\""), "{help}");
        // A file that does not load names its place.
        let broken = [templates::SentenceFile {
            name: "sentences/en/broken.yaml".into(),
            lang: Some(Lang::En),
            text: "intents:\n  wipe_cache:\n    data:\n      - sentences:\n          - \"(unclosed\"\n".into(),
        }];
        let errors = templates::Templates::load(&broken).unwrap_err();
        assert!(
            errors[0]
                .to_string()
                .starts_with("sentences/en/broken.yaml:5:"),
            "{}",
            errors[0]
        );
    }

    #[tokio::test]
    async fn a_wrong_word_or_every_word_ends_a_spoken_question_and_nothing_runs() {
        let (_dir, store, turns) = setup(vec![act(
            "wipe_cache",
            &["rm", "-f", "/nonexistent/x"],
            false,
        )])
        .await;
        set_state(&store, "wipe_cache", ToolState::Enabled, "t").await;
        let word_of = |text: String| {
            text.rsplit(", ")
                .next()
                .and_then(|w| w.strip_suffix('.'))
                .unwrap_or_else(|| panic!("{text}"))
                .to_owned()
        };
        // A wrong word, then the right one: the question ended at the wrong one.
        let word = word_of(turns.turn(&voice("kitchen"), "Wipe cache.").await.text());
        let wrong = if word == "abandon" {
            "ability"
        } else {
            "abandon"
        };
        let ended = turns
            .turn(&voice("kitchen"), &format!("Yes, {wrong}."))
            .await;
        assert_eq!(
            ended.text(),
            "That does not confirm wipe_cache: it names a word other than this question's. \
             Nothing ran; ask again for a new word."
        );
        assert_eq!(
            ended.act.as_ref().map(|a| a.outcome),
            Some(Outcome::Cancelled)
        );
        let late = turns
            .turn(&voice("kitchen"), &format!("Yes, {word}."))
            .await;
        assert!(!late.text().contains("ran;"), "{}", late.text());
        // Every word of the list at once, with a yes.
        turns.turn(&voice("kitchen"), "Wipe cache.").await;
        let all = voice::tests_support::every_word(Lang::En);
        let ended = turns.turn(&voice("kitchen"), &format!("Yes {all}")).await;
        assert!(
            ended.text().starts_with("That does not confirm wipe_cache"),
            "{}",
            ended.text()
        );
        // The word with a speech around it.
        let word = word_of(turns.turn(&voice("kitchen"), "Wipe cache.").await.text());
        let ended = turns
            .turn(
                &voice("kitchen"),
                &format!("Yes, I think it is {word}, so go on."),
            )
            .await;
        assert_eq!(
            ended.text(),
            "That does not confirm wipe_cache: a confirmation is yes and the word, with little \
             else. Nothing ran; ask again for a new word."
        );
        // A Russian question, answered as a recogniser writes it.
        let text = turns
            .turn(&voice("kitchen"), "Wipe cache пожалуйста.")
            .await
            .text();
        let word = word_of(text);
        let ran = turns.turn(&voice("kitchen"), &format!("Да, {word}!")).await;
        assert!(
            ran.text().starts_with("wipe_cache выполнено"),
            "{}",
            ran.text()
        );
        assert_eq!(
            store.acts_log(10).await.unwrap().len(),
            1,
            "one run, the right word's"
        );
    }

    #[tokio::test]
    async fn a_question_too_long_to_speak_needs_the_screen_and_nothing_waits() {
        let (_dir, store, turns) = setup(vec![act(
            "wipe_cache",
            &["rm", "-f", "/nonexistent/x"],
            false,
        )])
        .await;
        set_state(&store, "wipe_cache", ToolState::Enabled, "t").await;
        let long = "x".repeat(voice::MAX_SPOKEN_VALUE + 1);
        let asked = turns
            .turn(&voice("kitchen"), &format!("wipe cache {long}"))
            .await;
        assert_eq!(
            asked.text(),
            format!(
                "This one needs the screen: what you said is {} characters long, more than a \
                 voice reads ({}). Nothing is waiting; type it with maven say.",
                voice::MAX_SPOKEN_VALUE + 1,
                voice::MAX_SPOKEN_VALUE
            )
        );
        assert!(asked.pending.is_none());
        // Nothing waits: a yes with any word has nothing to confirm.
        let after = turns.turn(&voice("kitchen"), "yes").await;
        assert_eq!(after.text(), "There is nothing to confirm.");
        // Typed, the same act asks and shows every character, invisible ones counted.
        let typed = turns
            .turn(&term(), "wipe_cache now\u{200b}\u{e0041}")
            .await
            .text();
        assert!(
            typed.contains("Its arguments hold 2 invisible characters, each shown as \\u{…}."),
            "{typed}"
        );
        assert!(store.acts_log(10).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_spoken_yes_runs_a_write_only_with_the_questions_word_in_its_conversation() {
        let (_dir, store, turns) = setup(vec![act(
            "wipe_cache",
            &["rm", "-f", "/nonexistent/x"],
            false,
        )])
        .await;
        set_state(&store, "wipe_cache", ToolState::Enabled, "t").await;
        // As a recogniser writes it: capitals, a split, a full stop.
        let asked = turns.turn(&voice("kitchen"), "Wipe cache now.").await;
        let text = asked.text();
        let word = text
            .strip_prefix("About to run wipe_cache\nwith now.\nTo run it, say: yes, ")
            .and_then(|w| w.strip_suffix('.'))
            .unwrap_or_else(|| panic!("{text}"))
            .to_owned();
        assert!(
            voice::hear(&format!("yes {word}"), &word) == voice::Heard::Confirmed,
            "{word}"
        );
        // Heard, every argument is read as written.
        assert_eq!(
            render::speech(&asked),
            format!("About to run wipe cache with now. To run it, say: yes, {word}.")
        );
        // A bare yes — a television, a recording — hears the question again.
        let again = turns.turn(&voice("kitchen"), "Yes.").await;
        assert_eq!(
            again.text(),
            format!("A plain yes does not run wipe_cache. To run it, say: yes, {word}.")
        );
        // The word from another conversation, or typed, runs nothing, and the question stands
        // in its own conversation.
        let elsewhere = turns
            .turn(&voice("bedroom"), &format!("Yes, {word}."))
            .await;
        assert!(
            elsewhere.text().starts_with("I can't help with that."),
            "{}",
            elsewhere.text()
        );
        assert_eq!(
            turns.turn(&term(), "yes").await.text(),
            "There is nothing to confirm."
        );
        assert!(store.acts_log(10).await.unwrap().is_empty(), "nothing ran");
        assert_eq!(
            turns.turn(&voice("kitchen"), "Yes.").await.text(),
            format!("A plain yes does not run wipe_cache. To run it, say: yes, {word}.")
        );
        // Asked again, answered with the word in the same conversation: it runs.
        let text = turns.turn(&voice("kitchen"), "wipe cache now").await.text();
        let word = text
            .rsplit(", ")
            .next()
            .and_then(|w| w.strip_suffix('.'))
            .unwrap()
            .to_owned();
        let ran = turns
            .turn(&voice("kitchen"), &format!("Yes, {}!", word.to_uppercase()))
            .await;
        assert!(ran.text().starts_with("wipe_cache ran;"), "{}", ran.text());
        let log = store.acts_log(10).await.unwrap();
        assert_eq!(log.len(), 1);
        assert_eq!(
            log[0].confirmed_by.as_deref(),
            Some(format!("owner (\"yes {word}\")").as_str())
        );
        // A typed question keeps its plain yes; a spoken one is not answered by typing.
        turns.turn(&term(), "wipe_cache now").await;
        assert!(turns
            .turn(&term(), "yes")
            .await
            .text()
            .starts_with("wipe_cache ran;"));
        turns.turn(&voice("kitchen"), "wipe cache").await;
        assert_eq!(
            turns.turn(&term(), "yes").await.text(),
            "There is nothing to confirm."
        );
        // A no with the word is still a no.
        let text = turns.turn(&voice("kitchen"), "wipe cache now").await.text();
        let word = text
            .rsplit(", ")
            .next()
            .and_then(|w| w.strip_suffix('.'))
            .unwrap()
            .to_owned();
        assert_eq!(
            turns
                .turn(&voice("kitchen"), &format!("No, {word}."))
                .await
                .text(),
            "Cancelled: wipe_cache was not run."
        );
        turns.turn(&voice("kitchen"), "wipe cache now").await;
        assert_eq!(
            turns.turn(&voice("kitchen"), "Don't, please.").await.text(),
            "Cancelled: wipe_cache was not run."
        );
        assert_eq!(
            store.acts_log(10).await.unwrap().len(),
            2,
            "nothing more ran"
        );
        // Russian: the word is Russian.
        let ru = turns
            .turn(&voice("kitchen"), "Wipe cache пожалуйста.")
            .await
            .text();
        assert!(ru.contains("Чтобы выполнить, скажите: да, "), "{ru}");
        assert_eq!(
            turns.turn(&voice("kitchen"), "Нет.").await.text(),
            "Отменено: wipe_cache не выполнено."
        );
    }

    #[test]
    fn act_names_are_matched_across_a_recognisers_splits_and_joins() {
        let acts = [
            ActName {
                name: "todo_list_tasks".into(),
                tool: "list_tasks".into(),
            },
            ActName {
                name: "todolist_clear".into(),
                tool: "clear".into(),
            },
        ];
        let m = |t: &str| rules::match_act(&voice::normalise(t), &acts);
        assert_eq!(
            m("To do list tasks inbox."),
            Some(("todo_list_tasks".into(), "inbox".into()))
        );
        assert_eq!(
            m("Todolist tasks garden"),
            Some(("todo_list_tasks".into(), "garden".into()))
        );
        assert_eq!(
            m("to do list clear"),
            Some(("todolist_clear".into(), String::new()))
        );
        assert_eq!(
            m("list tasks in box"),
            Some(("todo_list_tasks".into(), "in box".into()))
        );
        assert_eq!(m("to do lists"), None);
    }

    #[tokio::test]
    async fn acts_that_may_not_run_say_why() {
        let (_dir, store, turns) = setup(vec![
            act("off", &["true"], true),
            act("gone", &["true"], true),
        ])
        .await;
        set_state(&store, "off", ToolState::Disabled, "t").await;
        set_state(
            &store,
            "gone",
            ToolState::Withdrawn,
            "withdrawn: test reason",
        )
        .await;
        let t = turns.turn(&term(), "off").await;
        assert_eq!(t.text(), "I won't run that: off is disabled.");
        let t = turns.turn(&term(), "gone").await;
        assert_eq!(
            t.text(),
            "I won't run that: gone was withdrawn: withdrawn: test reason."
        );
        assert!(!t.ok);
    }

    #[tokio::test]
    async fn the_digest_reads_new_feed_notes_once_grouped_by_feed() {
        let (_dir, store, turns) = setup(Vec::new()).await;
        for (src, key, text) in [
            ("rss:lwn", "1", "Kernel 7.0 released"),
            ("rss:habr", "a", "Новости Rust"),
            ("rss:lwn", "2", "Rust in the kernel"),
            ("note", "x", "not a feed"),
        ] {
            store
                .add_note(store::NewNote {
                    source: src.into(),
                    key: key.into(),
                    text: text.into(),
                    link: Some(format!("https://example.org/{key}")),
                    published: None,
                })
                .await
                .unwrap();
        }
        let t = turns.turn(&term(), "what's new in my feeds?").await;
        assert_eq!(
            t.text(),
            "lwn (2 new):\n  • Rust in the kernel\n    https://example.org/2\n  • Kernel 7.0 released\n    https://example.org/1\nhabr (1 new):\n  • Новости Rust\n    https://example.org/a"
        );
        let t = turns.turn(&term(), "что нового в лентах?").await;
        assert_eq!(
            t.text(),
            "В лентах ничего нового с тех пор, как вы спрашивали."
        );
        // With the configured feeds known, a failing one is named after the news, and no
        // feed at all says how to add one.
        let feeds = Arc::new(std::sync::Mutex::new(vec![
            FeedHealth {
                name: "lwn".into(),
                failing: None,
            },
            FeedHealth {
                name: "habr".into(),
                failing: Some("http status 500 Internal Server Error".into()),
            },
        ]));
        let f2 = feeds.clone();
        let executor = Executor::new(
            store.clone(),
            Arc::new(allowlist::Approvals::default()),
            None,
        );
        let told = Turns::new(store.clone(), executor, None)
            .with_feeds(Arc::new(move || f2.lock().unwrap().clone()));
        assert_eq!(
            told.turn(&term(), "news").await.text(),
            "Nothing new in your feeds since you last asked.\nFailing: habr (http status 500 Internal Server Error)."
        );
        assert_eq!(
            told.turn(&term(), "что нового в лентах?").await.text(),
            "В лентах ничего нового с тех пор, как вы спрашивали.\nНе обновляются: habr (http status 500 Internal Server Error)."
        );
        feeds.lock().unwrap().clear();
        assert!(told
            .turn(&term(), "news")
            .await
            .text()
            .starts_with("You have no feeds yet. Add one with `maven feeds add URL`"));
        assert!(told
            .turn(&term(), "что нового")
            .await
            .text()
            .starts_with("Лент пока нет. Добавьте ленту: `maven feeds add URL`"));
        let t = turns.turn(&term(), "notes about kernel").await;
        assert!(
            t.text().contains("Kernel 7.0 released") && t.text().contains("Rust in the kernel"),
            "{}",
            t.text()
        );
        let t = turns.turn(&term(), "заметки про новости").await;
        assert!(t.text().contains("Новости Rust"), "{}", t.text());
    }
}
