//! The executor: re-reads a row, asks `may_run`, writes `acts_log` before it runs, runs,
//! and settles the row with the outcome.

use std::sync::Arc;
use tokio::time::Instant;

use serde_json::{json, Map, Value};

use store::{ActResult, Store, ToolRow};

use super::bind::bind_positional;
use super::policy::{approved, Approvals, Approved, LocalAct, Refusal};
use super::process::{first_line, local_argv, run_local};
use super::ran::{cut_text, ExecError, Ran, RESULT_CAP};
use crate::confirm::{Args, Confirmation, Request};
use crate::waiting::Waiting;
use crate::CONFIRM_WINDOW;

/// Runs enabled acts.
#[derive(Clone)]
pub struct Executor {
    store: Store,
    /// Replaced whole by a reload of the configuration ([`Executor::set_approvals`]).
    approvals: Arc<std::sync::RwLock<Arc<Approvals>>>,
    manager: Option<mcp::Manager>,
}

/// What the turn pipeline does next with an act that may run.
#[derive(Debug)]
pub enum Next {
    /// It does not write: run it now with [`Executor::run`].
    Run,
    /// It writes: ask the owner, and run it only with the [`Confirmation`] the answer gives.
    Confirm(Request),
}

/// One execution of a row: a start with the router's tail, or the retry of a call whose
/// questions are all answered (or declined).
enum Call<'a> {
    Start { args: &'a Args },
    Resume(&'a Waiting),
}

/// What a row's arguments became: an MCP tool's, bound or checked; a local act's tail.
enum Bound<'a> {
    Mcp(Map<String, Value>),
    Local(&'a str),
}

/// `args` for `row`: a tail bound positionally, or named arguments checked against the
/// tool's input schema; a local act takes only a tail.
fn bound<'a>(
    row: &ToolRow,
    approved: &Approved<'_>,
    args: &'a Args,
) -> Result<Bound<'a>, ExecError> {
    match (approved, args) {
        (Approved::Mcp { allow_tools }, Args::Tail(tail)) => {
            Ok(Bound::Mcp(bind_positional(row, allow_tools, tail)?))
        }
        (Approved::Mcp { .. }, Args::Named(m) | Args::Said(m)) => {
            super::schema::validate(&row.name, &row.input_schema, m)?;
            Ok(Bound::Mcp(m.clone()))
        }
        (Approved::Local(_), Args::Tail(tail)) => Ok(Bound::Local(tail)),
        (Approved::Local(_), Args::Named(m) | Args::Said(m)) if m.is_empty() => {
            Ok(Bound::Local(""))
        }
        (Approved::Local(_), Args::Named(_) | Args::Said(_)) => {
            Err(ExecError::Args(super::schema::ArgError {
                tool: row.name.clone(),
                path: String::new(),
                problem: "a local act takes no named arguments".to_owned(),
            }))
        }
    }
}

/// Whether running `row` with `args` needs the owner's yes first: a destructive row always;
/// named arguments (a model's) unless the row claims not to write **and** its server's
/// `allow_tools` names it (the owner's own word that it reads). Arguments the owner said in a
/// template's slots are no guess: only a destructive row asks.
fn needs_confirmation(row: &ToolRow, approved: &Approved<'_>, args: &Args) -> bool {
    if row.destructive {
        return true;
    }
    match (approved, args) {
        (Approved::Mcp { allow_tools }, Args::Named(_)) => !allow_tools.contains(&row.tool),
        _ => false,
    }
}

/// What one execution runs, decided before it is written to `acts_log`.
enum Work<'a> {
    /// A local act with the router's tail.
    Local(&'a LocalAct, &'a str),
    /// An MCP call with the bound arguments.
    Start(&'a mcp::Manager, Map<String, Value>),
    /// The retry of a waiting MCP call with the owner's replies.
    Resume(&'a mcp::Manager, &'a Waiting),
}

impl Work<'_> {
    /// The arguments `acts_log` records.
    fn arguments(&self) -> Value {
        match self {
            Work::Local(act, tail) => json!({ "argv": local_argv(act, tail) }),
            Work::Start(_, args) => Value::Object(args.clone()),
            Work::Resume(_, w) => Value::Object(w.needed.arguments.clone()),
        }
    }
}

impl Executor {
    /// An executor over the store's rows, what the configuration approves, and the MCP
    /// connection manager (`None`: no MCP server runs).
    pub fn new(store: Store, approvals: Arc<Approvals>, manager: Option<mcp::Manager>) -> Self {
        Executor {
            store,
            approvals: Arc::new(std::sync::RwLock::new(approvals)),
            manager,
        }
    }

    /// What the configuration approves, now.
    pub fn approvals(&self) -> Arc<Approvals> {
        self.approvals
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// What the configuration approves from now on (a reload). An act already confirmed is
    /// judged again when it runs, against these.
    pub fn set_approvals(&self, approvals: Arc<Approvals>) {
        *self.approvals.write().unwrap_or_else(|p| p.into_inner()) = approvals;
    }

    /// Checks `row` before anything runs or is asked: [`may_run`], then (for an MCP row) that
    /// the tail binds. A destructive row comes back as a [`Request`] for the owner.
    pub fn prepare(&self, row: &ToolRow, args: &Args, utterance: &str) -> Result<Next, ExecError> {
        let approvals = self.approvals();
        let approved = approved(row, &approvals).map_err(ExecError::Refused)?;
        bound(row, &approved, args)?;
        if needs_confirmation(row, &approved, args) {
            return Ok(Next::Confirm(Request {
                act: row.name.clone(),
                args: args.clone(),
                utterance: utterance.to_owned(),
                asked: tokio::time::Instant::now(),
            }));
        }
        Ok(Next::Run)
    }

    /// Runs a row that does not write with `args`; a row that needs the owner's yes (a
    /// destructive row, or a model's named arguments to a tool the configuration does not name
    /// as read-only) is refused ([`ExecError::NeedsConfirmation`]).
    pub async fn run(&self, name: &str, args: &Args, utterance: &str) -> Result<Ran, ExecError> {
        self.execute(name, utterance, None, Call::Start { args })
            .await
    }

    /// Runs what the owner confirmed.
    pub async fn run_confirmed(&self, confirmation: Confirmation) -> Result<Ran, ExecError> {
        let (args, utterance, by) = confirmation.parts();
        self.execute(
            confirmation.act(),
            utterance,
            Some(by),
            Call::Start { args },
        )
        .await
    }

    /// One execution, whether it starts or resumes: the row read again, [`may_run`]'s
    /// answer asked again on it, the execution written to `acts_log` before it runs, run, and
    /// its `acts_log` row settled with the outcome.
    ///
    /// [`may_run`]: super::may_run
    #[expect(
        clippy::disallowed_methods,
        reason = "the one caller of a server's tool: the row was read again and may_run asked"
    )]
    async fn execute(
        &self,
        name: &str,
        utterance: &str,
        confirmed_by: Option<&str>,
        call: Call<'_>,
    ) -> Result<Ran, ExecError> {
        // Read the row again: the owner or discovery may have changed it since the turn began.
        let row = match self.store.tool(name).await {
            Ok(Some(r)) => r,
            Ok(None) => {
                return Err(ExecError::Refused(Refusal::Gone {
                    act: name.to_owned(),
                }))
            }
            Err(e) => return Err(ExecError::Store(e)),
        };
        let approvals = self.approvals();
        let approved = approved(&row, &approvals).map_err(ExecError::Refused)?;
        let work = self.plan(&row, approved, confirmed_by, call)?;
        let id = self
            .record(&row, utterance, work.arguments(), confirmed_by)
            .await?;
        let started = Instant::now();
        let result = match work {
            Work::Local(act, tail) => run_local(act, tail).await,
            Work::Start(manager, args) => {
                // Boxed: the call's future (client, transport, a grant on a 401) is large.
                let mut result =
                    match Box::pin(manager.start_call(&row.server, &row.tool, args)).await {
                        Ok(step) => Ok(ran_of(&row, step, None)),
                        Err(e) => Err(call_error(&row, e)),
                    };
                if let Ok(Ran {
                    waiting: Some(w), ..
                }) = &mut result
                {
                    w.set_origin(utterance, confirmed_by);
                }
                result
            }
            Work::Resume(manager, w) => {
                match Box::pin(manager.resume_call(&w.server, w.needed.clone(), w.replies.clone()))
                    .await
                {
                    Ok(step) => Ok(ran_of(&row, step, Some(w))),
                    Err(e) => Err(call_error(&row, e)),
                }
            }
        };
        self.settle(id, &row, &result, started).await;
        result
    }

    /// What `call` of `row` runs, or why it does not: a destructive row starts only
    /// confirmed, an MCP row's tail must bind, only an MCP row resumes, and an MCP row needs
    /// the connection manager.
    fn plan<'a>(
        &'a self,
        row: &ToolRow,
        approved: Approved<'a>,
        confirmed_by: Option<&str>,
        call: Call<'a>,
    ) -> Result<Work<'a>, ExecError> {
        let manager = || {
            self.manager.as_ref().ok_or_else(|| {
                ExecError::Refused(Refusal::NoServers {
                    act: row.name.clone(),
                })
            })
        };
        match (call, approved) {
            (Call::Start { args }, approved) => {
                if needs_confirmation(row, &approved, args) && confirmed_by.is_none() {
                    return Err(ExecError::NeedsConfirmation(row.name.clone()));
                }
                match (bound(row, &approved, args)?, approved) {
                    (Bound::Mcp(args), _) => Ok(Work::Start(manager()?, args)),
                    (Bound::Local(tail), Approved::Local(act)) => Ok(Work::Local(act, tail)),
                    (Bound::Local(_), Approved::Mcp { .. }) => {
                        Err(ExecError::Refused(Refusal::NotMcp {
                            act: row.name.clone(),
                        }))
                    }
                }
            }
            (Call::Resume(w), Approved::Mcp { .. }) => Ok(Work::Resume(manager()?, w)),
            (Call::Resume(_), Approved::Local(_)) => Err(ExecError::Refused(Refusal::NotMcp {
                act: row.name.clone(),
            })),
        }
    }

    /// Writes one execution to `acts_log` before it runs, as sent and unanswered: an act whose
    /// answer never comes (the daemon stopped or died meanwhile) keeps that outcome, which is
    /// the truth. An act that cannot be recorded does not run.
    async fn record(
        &self,
        row: &ToolRow,
        utterance: &str,
        arguments: Value,
        confirmed_by: Option<&str>,
    ) -> Result<i64, ExecError> {
        self.store
            .log_act(store::NewActLog {
                tool: row.name.clone(),
                utterance: utterance.to_string(),
                arguments,
                confirmed_by: confirmed_by.map(str::to_string),
                outcome: format!("{} sent; no answer yet", store::OUTCOME_UNKNOWN),
                result: ActResult::Unknown,
                duration_ms: 0,
            })
            .await
            .map_err(|e| {
                tracing::error!(act = %row.name, error = %e, "cannot record the act in acts_log");
                ExecError::NotRecorded(e)
            })
    }

    /// Settles the `acts_log` row of one execution with its outcome.
    async fn settle(
        &self,
        id: i64,
        row: &ToolRow,
        result: &Result<Ran, ExecError>,
        started: Instant,
    ) {
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (result, outcome) = match result {
            Ok(r) if r.waiting.is_some() => (
                ActResult::Ok,
                "waiting: the server asks for input".to_owned(),
            ),
            // The result's first line is kept, so the owner can see it later (`maven acts`),
            // even when nobody waited for the answer.
            Ok(r) if r.ok => match first_line(&r.text) {
                line if line.trim().is_empty() => (ActResult::Ok, "ok".to_string()),
                line => (ActResult::Ok, format!("ok: {line}")),
            },
            Ok(r) => (ActResult::Failed, format!("error: {}", first_line(&r.text))),
            Err(e @ ExecError::Unknown { .. }) => (
                ActResult::Unknown,
                format!("{} {e}", store::OUTCOME_UNKNOWN),
            ),
            Err(e) => (ActResult::Failed, format!("error: {e}")),
        };
        if let Err(e) = self
            .store
            .settle_act(id, result, outcome, duration_ms)
            .await
        {
            tracing::error!(act = %row.name, error = %e, "cannot record the act's outcome in acts_log");
        }
    }
}

/// A failed call: "outcome unknown" when it may have reached the server and no answer came,
/// else it did not run.
fn call_error(row: &ToolRow, e: mcp::manager::CallError) -> ExecError {
    if e.outcome_unknown() {
        ExecError::Unknown {
            who: format!("`{}`", row.server),
            reason: e.to_string(),
        }
    } else {
        ExecError::Call(e)
    }
}

/// What the owner's answer to a waiting call led to.
#[derive(Debug)]
pub enum InputStep {
    /// Another question of the same round.
    More(Box<Waiting>),
    /// The call went on: its result (which may wait again).
    Ran(Result<Ran, ExecError>),
    /// The answer does not fit the question (the reason); the same question stands.
    Again(Box<Waiting>, mcp::AnswerError),
    /// The two minutes passed: nothing was sent.
    Expired(Box<Waiting>),
}

/// The [`Ran`] of one call step of `row`.
fn ran_of(row: &ToolRow, step: mcp::CallStep, origin: Option<&Waiting>) -> Ran {
    match step {
        mcp::CallStep::Done(outcome) => {
            let (text, cut) = cut_text(outcome.text, RESULT_CAP, outcome.truncated);
            Ran {
                cut,
                ..Ran::done(text, !outcome.is_error)
            }
        }
        mcp::CallStep::Input(needed) => Ran {
            text: String::new(),
            ok: true,
            waiting: Some(Box::new(Waiting::new(row, needed, origin))),
            cut: None,
        },
        // CallStep is non-exhaustive.
        _ => Ran::done(
            "the server answered in a way Maven does not know".to_owned(),
            false,
        ),
    }
}

impl Executor {
    /// The owner's answer `text` to the question `w` asks. Every question of the round is
    /// asked in turn; the last answer retries the call (the row read again and `may_run`
    /// asked again first), and the retry is written to `acts_log`. "no" declines.
    pub async fn answer_input(&self, mut w: Box<Waiting>, text: &str) -> InputStep {
        if w.asked.elapsed() > CONFIRM_WINDOW {
            return InputStep::Expired(w);
        }
        if let Some(ask) = w.ask() {
            match ask.answer(text) {
                Ok(v) => {
                    let key = ask.key.clone();
                    w.replies.insert(key, v);
                    w.next += 1;
                }
                Err(reason) => return InputStep::Again(w, reason),
            }
        }
        if w.skip_secrets() {
            w.asked = tokio::time::Instant::now();
            return InputStep::More(w);
        }
        // The retry of a call whose questions are all answered (or declined).
        InputStep::Ran(
            self.execute(
                &w.act,
                &w.utterance,
                w.confirmed_by.as_deref(),
                Call::Resume(&w),
            )
            .await,
        )
    }
}
