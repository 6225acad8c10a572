//! Turns (T-1..T-5): one utterance in, one [`Answer`] out. This is the **only** path by which
//! anything runs an act, and every front end (the terminal, the page, IPC, speech) renders the
//! answer it gives; none builds one.
//!
//! Every turn belongs to a [`Conversation`]: its front end (the terminal, the page, a voice
//! conversation, a `maven listen` session) and its name there. The turns of one conversation
//! run in order; those of different conversations at the same time, and none waits on
//! another's model request, store call or tool call.
//!
//! A router picks what the turn does (`rules`, or `llm` with the rules router as its fallback).
//! The turn's language is decided once, from its sentence, and everything it says is in it
//! ([`phrases`]). A destructive act is never run on the first turn: it is held as its
//! conversation's pending act, and runs only when that conversation's next turn is an explicit
//! yes (yes/y, or the same in Russian) within two minutes; any other turn of the conversation
//! drops it, and a turn of another conversation neither confirms nor drops it. Results are
//! reduced to text, capped, and kept apart as their server's words ([`Part::Output`]): a result
//! is data, not an instruction to Maven.
//!
//! A modern MCP server may answer a call with a question (an elicitation): the turn answers
//! with the server's question as a [`Part::Question`] (a renderer marks every line with the
//! server's name, `todo › …`), and the conversation's next turn is the answer ("no"
//! declines), within the same two minutes. A question asking for a secret is declined without being shown, and a
//! round whose every question was declined so is sent on at once: it never takes the owner's
//! next turn. A URL is shown as text and nothing is opened.

#![warn(clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

pub mod answer;
pub mod conversation;
pub mod llm;
pub mod phrases;
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
    phrases::en::declined_secrets(
        &shown::line(server),
        &fields
            .iter()
            .map(|f| format!("{:?}", shown::line(f)))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// The server's words of a question, exact (the message, then the address to visit or one
/// line per field), and what Maven says after them.
fn words(ask: &mcp::Ask) -> (String, &'static str) {
    let mut text = ask.message.clone();
    let how = match &ask.kind {
        mcp::AskKind::Url { url } => {
            let _ = write!(text, "\n(visit) {url}");
            phrases::en::visit_how()
        }
        mcp::AskKind::Form { fields } if fields.is_empty() => phrases::en::go_on_how(),
        mcp::AskKind::Form { fields } => {
            for f in fields {
                let _ = write!(
                    text,
                    "\n({}{}: {}{}) {}",
                    f.name,
                    if f.required {
                        phrases::en::required()
                    } else {
                        ""
                    },
                    f.kind,
                    choices(f),
                    f.title
                );
            }
            if fields.len() == 1 {
                phrases::en::one_field_how()
            } else {
                phrases::en::fields_how()
            }
        }
        _ => phrases::en::decline_how(),
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
                text: phrases::en::asks_its_words(&server, render::QUOTE_MARK.trim_end()),
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
    phrases::en::one_of(&c.join(" / "))
}

/// "I won't run that: …", in the sentence's language (the reason is the allowlist's words).
fn wont(lang: Lang, reason: &dyn std::fmt::Display) -> String {
    phrases::wont(lang, reason)
}

/// The answer of a turn whose act finished (or failed).
fn report_done(row: &ToolRow, result: Result<Ran, ExecError>, lang: Lang) -> Answer {
    match result {
        Ok(ran) => {
            let server = (row.kind == store::ToolKind::Mcp).then(|| row.server.clone());
            let head = phrases::ran_head(lang, &row.name, server.as_deref(), ran.ok);
            let mut parts = vec![Part::Maven { text: head }];
            if ran.text.trim().is_empty() {
                parts.push(Part::Maven {
                    text: phrases::returned_nothing(lang),
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
        Err(ExecError::Unknown { who, reason }) => {
            Answer::refuse(phrases::en::outcome_unknown(&row.name, &who, &reason))
                .about(&row.name, Outcome::Unknown)
        }
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
        ) => Answer::refuse(phrases::en::did_not_run(&row.name, &e))
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
            Err(e) => return phrases::en::acts_unreadable(&e),
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
                Answer::refuse(phrases::en::went_wrong(&e))
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
            return Ok((Answer::say(phrases::en::say_something()), None));
        }
        // The turn's language, decided once: every sentence of its answer is in it.
        let lang = rules::lang_of(text);
        let previous = match (previous, conversation.spoken()) {
            // The turn after a server's question is its answer.
            (Some(Held::Input(w)), _) => return Ok(self.answer_input(w, text, lang).await),
            // Asked by voice: only this conversation's answer carrying the word runs it; a
            // bare yes hears the question again; a no cancels.
            (Some(Held::Confirm(r, Some(word))), true) => {
                // A no at the start ("no", "no, orange", "don't", the same in Russian)
                // cancels, whatever else was said.
                let first = text.split(' ').next().unwrap_or("");
                let no = rules::yes_no(text) == Some(false)
                    || rules::yes_no(first) == Some(false)
                    || phrases::starts_as_no(text);
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
                            let again = Answer::say(phrases::plain_yes(lang, r.act(), word))
                                .in_lang(lang)
                                .about(r.act(), Outcome::AwaitsConfirmation);
                            return Ok((again, Some(Held::Confirm(r, Some(word)))));
                        }
                        voice::Heard::WrongWord => phrases::wrong_word(lang),
                        voice::Heard::NotAlone => phrases::not_alone(lang),
                        voice::Heard::Other => String::new(),
                    };
                    tracing::info!(act = %r.act(), reason = %why, "spoken confirmation refused; the question ends");
                    let ended = Answer::say(phrases::not_confirmed(lang, r.act(), &why))
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
                text: phrases::router_fell_back(lang, &e),
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
                    Answer::refuse(phrases::no_such_act(lang, name)).in_lang(lang),
                    None,
                )
            }
            Err(e) => return (Answer::refuse(phrases::en::went_wrong(&e)), None),
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
            Args::Tail(t) => (phrases::with_tail(lang, t), t.clone(), None),
            Args::Named(m) | Args::Said(m) => {
                let unset = allowlist::run::schema::unset(&row.input_schema, m);
                let unset = match unset.is_empty() {
                    true => phrases::none_unset(lang),
                    false => unset.join(", "),
                };
                (
                    phrases::with_named(lang, &args.shown(), &unset),
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
                    n => phrases::invisible(lang, n),
                };
                Answer::say(phrases::run_it(lang, &row.name, &with, &hidden))
            }
            true => {
                // Read word for word, or not asked by voice at all.
                let said = match voice::spoken_arguments(&args) {
                    Ok(said) => said,
                    Err(why) => {
                        let why = why.why(lang);
                        tracing::info!(act = %row.name, reason = %why, "a spoken question needs the screen");
                        let refused = Answer::refuse(phrases::needs_the_screen(lang, &why))
                            .in_lang(lang)
                            .about(&row.name, Outcome::Refused);
                        return (refused, None);
                    }
                };
                let word = voice::one_time_word(lang);
                let ask = phrases::say_yes_and(lang, word);
                spoken = Some(word);
                match said {
                    None => Answer::say(phrases::about_to_run_and(lang, &row.name, &ask)),
                    Some(said) => {
                        let not_set = match &args {
                            Args::Named(m) | Args::Said(m) => {
                                let unset = allowlist::run::schema::unset(&row.input_schema, m);
                                match unset.is_empty() {
                                    true => String::new(),
                                    false => phrases::not_set(lang, &unset.join(", ")),
                                }
                            }
                            Args::Tail(_) => String::new(),
                        };
                        Answer {
                            parts: vec![
                                Part::Maven {
                                    text: phrases::about_to_run(lang, &row.name),
                                },
                                Part::Exact {
                                    text: phrases::with_said(lang, &said, &not_set),
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
                Answer::say(phrases::nothing_to_confirm(lang)).in_lang(lang),
                None,
            );
        };
        let confirmation = match p.answer(yes, said) {
            allowlist::Answer::Expired(p) => {
                return (
                    Answer::refuse(phrases::too_late(lang, p.act()))
                        .in_lang(lang)
                        .about(p.act(), Outcome::Refused),
                    None,
                )
            }
            allowlist::Answer::Declined(p) => {
                return (
                    Answer::say(phrases::cancelled(lang, p.act()))
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
                    Answer::refuse(phrases::en::no_longer_exists(confirmation.act())),
                    None,
                )
            }
            Err(e) => return (Answer::refuse(phrases::en::went_wrong(&e)), None),
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
                Answer::refuse(phrases::en::asked_too_long_ago(
                    &shown::line(w.server()),
                    &act,
                ))
                .about(&act, Outcome::Refused),
                None,
            ),
            InputStep::Again(w, reason) => {
                let out =
                    ask_owner(&w).prefixed(&phrases::en::does_not_answer(&reason.to_string()));
                (out, Some(Held::Input(w)))
            }
            InputStep::More(w) => {
                let out = ask_owner(&w);
                (out, Some(Held::Input(w)))
            }
            InputStep::Ran(result) => match self.store.tool(&act).await {
                Ok(Some(row)) => self.report(&row, result, lang).await,
                Ok(None) => (Answer::refuse(phrases::en::no_longer_exists(&act)), None),
                Err(e) => (Answer::refuse(phrases::en::went_wrong(&e)), None),
            },
        }
    }

    async fn digest(&self, lang: Lang) -> Result<Answer, store::Error> {
        let health = self.feeds.as_ref().map(|f| f());
        if health.as_ref().is_some_and(Vec::is_empty) {
            return Ok(Answer::say(phrases::no_feeds(lang)).in_lang(lang));
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
            text: phrases::failing(lang, &failing.join("; ")),
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
            return Ok(Answer::say(phrases::nothing_new(lang)).in_lang(lang));
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
                text: phrases::feed_new(lang, feed, items.len()),
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
                text: phrases::and_n_more(lang, fresh.len() - shown),
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
            return Ok(Answer::say(phrases::no_notes(lang, q)).in_lang(lang));
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
            let how = match takes(r, approvals) {
                Takes::Nothing => phrases::say_bare(lang, &phrase),
                Takes::Rest => phrases::say_rest(lang, &phrase),
                Takes::Named => phrases::needs_named(lang, &phrase),
                Takes::OnceAllowed => phrases::once_allowed(lang, &phrase, &allow),
            };
            let w = match r.destructive {
                true => phrases::asks_first(lang),
                false => String::new(),
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
    let mut out = phrases::help(lang);
    if enabled.is_empty() {
        out.push_str(&phrases::no_acts(lang));
        return Answer::say(out).in_lang(lang);
    }
    out.push_str(&phrases::and_these_acts(lang));
    with_acts(out, enabled, approvals, lang)
}

fn cannot_help(
    text: &str,
    enabled: &[&ToolRow],
    approvals: &allowlist::Approvals,
    lang: Lang,
) -> Answer {
    let mut out = phrases::cannot_help(lang);
    if let Some(r) = nearest(text, enabled) {
        let phrase = phrase(r, enabled);
        out.push_str(&phrases::did_you_mean(lang, &phrase));
    }
    out.push_str(&phrases::try_these(lang));
    if enabled.is_empty() {
        return Answer::say(out).in_lang(lang);
    }
    out.push_str(&phrases::or_your_acts(lang));
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
                item.text.push_str(&phrases::or_say(lang, &phrase));
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

#[path = "tests/turns.rs"]
#[cfg(test)]
mod tests;
