//! Running acts: may a row run, positional binding, and the executor.
//!
//! [`may_run`] is the one answer to "may this row run now". The executor is reached only from a
//! turn; there is no IPC method or page route that calls it. It re-reads the row and asks
//! [`may_run`], runs a destructive row only with a [`Confirmation`], sends rows with
//! `cmd = ["mcp", …]` to the connection manager (only the tool name and the bound arguments
//! leave Maven), and runs local acts by exec — argv, no shell — with a timeout and an output
//! cap. "mcp" is never executed as a program. Every execution,
//! whatever its outcome, lands in `acts_log`.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

use store::{Store, ToolKind, ToolRow, ToolState};

use crate::confirm::{Confirmation, Request};
use crate::waiting::Waiting;
use crate::CONFIRM_WINDOW;

/// What the configuration currently approves to run: each MCP server block's `allow_tools`,
/// and the local acts. Built by the daemon from its configuration.
#[derive(Debug, Clone, Default)]
pub struct Approvals {
    /// Configured MCP servers by block name, with their `allow_tools` (empty: any tool).
    pub servers: std::collections::BTreeMap<String, Vec<String>>,
    /// The configuration's `acts`.
    pub acts: Vec<LocalAct>,
}

/// One local act of the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalAct {
    /// Its name, also its row's name.
    pub name: String,
    /// The argv, run without a shell.
    pub cmd: Vec<String>,
    /// It claims not to write.
    pub read_only: bool,
    /// Killed after this long.
    pub timeout: Duration,
    /// Output beyond this many bytes is cut.
    pub max_output: u64,
}

/// Whether `row` may run right now, and why not: its state (only enabled rows run), and what
/// the configuration still approves (its server still configured and, with `allow_tools`, the
/// tool still named; a local act still configured with the same argv). The one answer to the
/// question, asked by the turn pipeline before it asks for a confirmation and by the executor
/// again, on the row re-read, right before it runs.
pub fn may_run(row: &ToolRow, approvals: &Approvals) -> Result<(), String> {
    approved(row, approvals).map(|_| ())
}

/// What the configuration approves for a row that may run: the server's `allow_tools`, or the
/// local act itself.
enum Approved<'a> {
    Mcp { allow_tools: &'a [String] },
    Local(&'a LocalAct),
}

/// [`may_run`], keeping what the configuration approves for the run itself.
fn approved<'a>(row: &ToolRow, approvals: &'a Approvals) -> Result<Approved<'a>, String> {
    match row.state {
        ToolState::Enabled => {}
        ToolState::Proposed => {
            return Err(format!(
                "{} is only proposed: enable it on the page first{}",
                row.name,
                if row.approved_shape.is_some() {
                    " (its server changed it since you approved it)"
                } else {
                    ""
                }
            ))
        }
        ToolState::Disabled => return Err(format!("{} is disabled", row.name)),
        ToolState::Withdrawn => {
            return Err(format!("{} was withdrawn: {}", row.name, row.provenance))
        }
    }
    match row.kind {
        ToolKind::Mcp => {
            let Some(allow_tools) = approvals.servers.get(&row.server) else {
                return Err(format!(
                    "{}: its server {:?} is no longer configured",
                    row.name, row.server
                ));
            };
            if !allow_tools.is_empty() && !allow_tools.contains(&row.tool) {
                return Err(format!(
                    "{}: {} is no longer named in mcp_servers.{}.allow_tools",
                    row.name, row.tool, row.server
                ));
            }
            Ok(Approved::Mcp { allow_tools })
        }
        ToolKind::Local => {
            let Some(act) = approvals.acts.iter().find(|a| a.name == row.tool) else {
                return Err(format!(
                    "{}: no longer in the configuration's acts",
                    row.name
                ));
            };
            if act.cmd != row.cmd {
                return Err(format!(
                    "{}: its command in the configuration changed since it was approved",
                    row.name
                ));
            }
            Ok(Approved::Local(act))
        }
    }
}

/// Why the tail could not become arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// The tool needs arguments Maven will not guess.
    #[error("{tool} needs arguments I will not guess: {}. Use the page or the service itself.", .missing.join(", "))]
    NeedsArgs {
        /// The row.
        tool: String,
        /// The required properties, each with its declared type.
        missing: Vec<String>,
    },
    /// The tail is not a number the schema asks for.
    #[error("{tool}: {property} must be {kind}, and {value:?} is not")]
    BadNumber {
        /// The row.
        tool: String,
        /// The property the tail was bound to.
        property: String,
        /// What the schema asks for (`an integer`, `a number`).
        kind: &'static str,
        /// The tail as said.
        value: String,
    },
}

/// How many local `$ref`s are followed to find a property's type.
const REF_DEPTH: usize = 8;

/// The declared `type` of property `prop`: written on the property, or on what its `$ref`
/// points to inside the same schema (`#/$defs/…`, `#/definitions/…`, any local JSON pointer),
/// at most [`REF_DEPTH`] references deep. A reference to anything outside the schema (a
/// network URI) is never fetched: the type is then unknown, and unknown is refused, not
/// guessed.
fn property_type<'a>(schema: &'a Value, prop: &str) -> Option<&'a str> {
    let mut node = schema.get("properties")?.get(prop)?;
    for _ in 0..=REF_DEPTH {
        if let Some(t) = node.get("type").and_then(Value::as_str) {
            return Some(t);
        }
        let pointer = node.get("$ref")?.as_str()?.strip_prefix('#')?;
        node = if pointer.is_empty() {
            schema
        } else {
            schema.pointer(pointer)?
        };
    }
    None
}

fn describe_property(schema: &Value, prop: &str) -> String {
    match property_type(schema, prop) {
        Some(t) => format!("{prop} ({t})"),
        None => format!("{prop} (not described)"),
    }
}

/// binds the router's text tail to a tool's arguments, or refuses.
///
/// - no required property: runs bare (nothing is guessed from the tail);
/// - read-only (the row is not destructive) **and** named in the server's `allow_tools`
///   **and** exactly one required property that the schema describes as string, number or
///   integer: the tail becomes that property (numbers parsed);
/// - anything else: refused, naming what is missing. A required property the schema never
///   describes is refused, never guessed as a string.
pub fn bind_positional(
    row: &ToolRow,
    allow_tools: &[String],
    tail: &str,
) -> Result<Map<String, Value>, BindError> {
    let schema = &row.input_schema;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if required.is_empty() {
        return Ok(Map::new());
    }
    let needs = || BindError::NeedsArgs {
        tool: row.name.clone(),
        missing: required
            .iter()
            .map(|p| describe_property(schema, p))
            .collect(),
    };
    let named = allow_tools.contains(&row.tool);
    if required.len() != 1 || row.destructive || !named {
        return Err(needs());
    }
    let prop = required[0];
    let kind = property_type(schema, prop);
    let tail = tail.trim();
    if tail.is_empty() {
        return Err(needs());
    }
    let bad = |kind: &'static str| BindError::BadNumber {
        tool: row.name.clone(),
        property: prop.to_string(),
        kind,
        value: tail.to_string(),
    };
    let value = match kind {
        Some("string") => Value::String(tail.to_string()),
        Some("integer") => Value::from(tail.parse::<i64>().map_err(|_| bad("an integer"))?),
        Some("number") => {
            let n: f64 = tail.parse().map_err(|_| bad("a number"))?;
            serde_json::Number::from_f64(n)
                .map(Value::Number)
                .ok_or_else(|| bad("a finite number"))?
        }
        _ => return Err(needs()),
    };
    let mut args = Map::new();
    args.insert(prop.to_string(), value);
    Ok(args)
}

/// Why an act did not run, or failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The row may not run (not enabled, no longer allowed…).
    #[error("{0}")]
    Refused(String),
    /// A destructive row needs the owner's confirmation, every time.
    #[error("{0} writes: it runs only after you confirm it")]
    NeedsConfirmation(String),
    /// The tail could not be bound.
    #[error(transparent)]
    Bind(#[from] BindError),
    /// It ran and failed, or it could not be sent.
    #[error("{0}")]
    Failed(String),
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
    let mut at = cap.min(total);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    let cut = Cut {
        shown: at,
        total,
        more,
    };
    (text, Some(cut))
}

/// Runs enabled acts.
#[derive(Clone)]
pub struct Executor {
    store: Store,
    approvals: Arc<Approvals>,
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
    fn done(text: String, ok: bool) -> Ran {
        Ran {
            text,
            ok,
            waiting: None,
            cut: None,
        }
    }
}

impl Executor {
    /// An executor over the store's rows, what the configuration approves, and the MCP
    /// connection manager (`None`: no MCP server runs).
    pub fn new(store: Store, approvals: Arc<Approvals>, manager: Option<mcp::Manager>) -> Self {
        Executor {
            store,
            approvals,
            manager,
        }
    }

    /// What the configuration approves.
    pub fn approvals(&self) -> &Approvals {
        &self.approvals
    }

    /// Checks `row` before anything runs or is asked: [`may_run`], then (for an MCP row) that
    /// the tail binds. A destructive row comes back as a [`Request`] for the owner.
    pub fn prepare(&self, row: &ToolRow, tail: &str, utterance: &str) -> Result<Next, ExecError> {
        if let Approved::Mcp { allow_tools } =
            approved(row, &self.approvals).map_err(ExecError::Refused)?
        {
            bind_positional(row, allow_tools, tail)?;
        }
        if row.destructive {
            return Ok(Next::Confirm(Request {
                act: row.name.clone(),
                tail: tail.to_owned(),
                utterance: utterance.to_owned(),
                asked: tokio::time::Instant::now(),
            }));
        }
        Ok(Next::Run)
    }

    /// Runs a row that does not write with the router's `tail`; a destructive row is refused
    /// ([`ExecError::NeedsConfirmation`]).
    pub async fn run(&self, name: &str, tail: &str, utterance: &str) -> Result<Ran, ExecError> {
        self.execute(name, tail, utterance, None).await
    }

    /// Runs what the owner confirmed.
    pub async fn run_confirmed(&self, confirmation: Confirmation) -> Result<Ran, ExecError> {
        let (tail, utterance, by) = confirmation.parts();
        self.execute(confirmation.act(), tail, utterance, Some(by))
            .await
    }

    async fn execute(
        &self,
        name: &str,
        tail: &str,
        utterance: &str,
        confirmed_by: Option<&str>,
    ) -> Result<Ran, ExecError> {
        // Read the row again: the owner or discovery may have changed it since the turn began.
        let row = match self.store.tool(name).await {
            Ok(Some(r)) => r,
            Ok(None) => return Err(ExecError::Refused(format!("{name} no longer exists"))),
            Err(e) => return Err(ExecError::Failed(format!("store: {e}"))),
        };
        let approved = approved(&row, &self.approvals).map_err(ExecError::Refused)?;
        if row.destructive && confirmed_by.is_none() {
            return Err(ExecError::NeedsConfirmation(row.name.clone()));
        }
        let arguments = match &approved {
            Approved::Mcp { allow_tools } => {
                Value::Object(bind_positional(&row, allow_tools, tail)?)
            }
            Approved::Local(act) => json!({ "argv": local_argv(act, tail) }),
        };
        if matches!(approved, Approved::Mcp { .. }) && self.manager.is_none() {
            return Err(ExecError::Refused(format!(
                "{}: no MCP server is running",
                row.name
            )));
        }
        let id = self
            .record(&row, utterance, arguments.clone(), confirmed_by)
            .await?;
        let started = Instant::now();
        let mut result = match (approved, arguments) {
            (Approved::Mcp { .. }, Value::Object(args)) => self.run_mcp(&row, args).await,
            (Approved::Local(act), _) => run_local(act, tail).await,
            (Approved::Mcp { .. }, _) => {
                Err(ExecError::Failed("arguments are not an object".into()))
            }
        };
        if let Ok(Ran {
            waiting: Some(w), ..
        }) = &mut result
        {
            w.set_origin(utterance, confirmed_by);
        }
        self.settle(id, &row, &result, started).await;
        result
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
                ok: false,
                duration_ms: 0,
            })
            .await
            .map_err(|e| {
                tracing::error!(act = %row.name, error = %e, "cannot record the act in acts_log");
                ExecError::Failed(format!(
                    "not run: it could not be recorded in acts_log: {e}"
                ))
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
        let (ok, outcome) = match result {
            Ok(r) if r.waiting.is_some() => (true, "waiting: the server asks for input".to_owned()),
            Ok(r) => (
                r.ok,
                if r.ok {
                    "ok".to_string()
                } else {
                    format!("error: {}", first_line(&r.text))
                },
            ),
            Err(e @ ExecError::Unknown { .. }) => {
                (false, format!("{} {e}", store::OUTCOME_UNKNOWN))
            }
            Err(e) => (false, format!("error: {e}")),
        };
        if let Err(e) = self.store.settle_act(id, outcome, ok, duration_ms).await {
            tracing::error!(act = %row.name, error = %e, "cannot record the act's outcome in acts_log");
        }
    }

    async fn run_mcp(&self, row: &ToolRow, args: Map<String, Value>) -> Result<Ran, ExecError> {
        let Some(manager) = &self.manager else {
            return Err(ExecError::Refused(format!(
                "{}: no MCP server is running",
                row.name
            )));
        };
        match manager.start_call(&row.server, &row.tool, args).await {
            Ok(step) => Ok(ran_of(row, step, None)),
            Err(e) => Err(call_error(row, e.outcome_unknown(), e)),
        }
    }
}

/// A failed call: "outcome unknown" when it may have reached the server and no answer came,
/// else it did not run.
fn call_error(row: &ToolRow, unknown: bool, e: impl std::fmt::Display) -> ExecError {
    if unknown {
        ExecError::Unknown {
            who: format!("`{}`", row.server),
            reason: e.to_string(),
        }
    } else {
        ExecError::Failed(e.to_string())
    }
}

/// A local act's argv: its command with the router's tail as the last argument (when there
/// is one).
fn local_argv(act: &LocalAct, tail: &str) -> Vec<String> {
    let mut argv = act.cmd.clone();
    let tail = tail.trim();
    if !tail.is_empty() {
        argv.push(tail.to_string());
    }
    argv
}

/// Runs a local act with the router's tail as its last argument (when there is one).
async fn run_local(act: &LocalAct, tail: &str) -> Result<Ran, ExecError> {
    run_argv(
        &local_argv(act, tail),
        act.timeout,
        usize::try_from(act.max_output).unwrap_or(usize::MAX),
    )
    .await
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(200).collect()
}

/// Runs a program (no shell) with a minimal environment, a deadline and an output cap.
pub async fn run_argv(argv: &[String], timeout: Duration, cap: usize) -> Result<Ran, ExecError> {
    let Some((program, args)) = argv.split_first() else {
        return Err(ExecError::Refused("empty command".into()));
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for k in ["PATH", "HOME", "LANG"] {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| ExecError::Failed(format!("cannot run {program}: {e}")))?;
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let work = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let mut total = 0;
        let read_out = async {
            if let Some(s) = stdout.as_mut() {
                total = read_capped(s, cap, &mut out).await;
            }
        };
        let read_err = async {
            if let Some(s) = stderr.as_mut() {
                read_capped(s, 4096, &mut err).await;
            }
        };
        tokio::join!(read_out, read_err);
        let status = child.wait().await;
        (out, total, err, status)
    };
    match tokio::time::timeout(timeout, work).await {
        // It started and was killed: what it did before is unknown.
        Err(_) => Err(ExecError::Unknown {
            who: "the local command".to_owned(),
            reason: format!("{program} did not finish within {timeout:?} and was killed"),
        }),
        Ok((out, total, err, status)) => {
            let status = status.map_err(|e| ExecError::Failed(format!("{program}: {e}")))?;
            let shown = out.len().min(cap);
            let text = String::from_utf8_lossy(&out[..shown]).into_owned();
            let cut = (total > cap).then_some(Cut {
                shown,
                total,
                more: false,
            });
            if status.success() {
                Ok(Ran {
                    cut,
                    ..Ran::done(text, true)
                })
            } else {
                let err = String::from_utf8_lossy(&err[..err.len().min(4096)]).into_owned();
                Ok(Ran::done(
                    format!(
                        "{program} failed ({status}): {}",
                        first_line(if err.is_empty() { &text } else { &err })
                    ),
                    false,
                ))
            }
        }
    }
}

/// Reads everything, keeping at most `cap + 1` bytes (the rest is drained and dropped so the
/// child never blocks on a full pipe); returns how many bytes there were.
async fn read_capped<R: tokio::io::AsyncRead + Unpin>(
    r: &mut R,
    cap: usize,
    out: &mut Vec<u8>,
) -> usize {
    let mut buf = [0u8; 8192];
    let mut total = 0usize;
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return total,
            Ok(n) => {
                total = total.saturating_add(n);
                let room = (cap + 1).saturating_sub(out.len());
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::OffsetDateTime;

    fn row(tool: &str, destructive: bool, schema: Value) -> ToolRow {
        ToolRow {
            name: format!("srv_{tool}"),
            kind: ToolKind::Mcp,
            server: "srv".into(),
            tool: tool.into(),
            cmd: vec!["mcp".into(), "srv".into(), tool.into()],
            scope: "mcp:srv".into(),
            state: ToolState::Enabled,
            destructive,
            fingerprint: None,
            description: String::new(),
            input_schema: schema,
            shape: json!({}),
            approved_shape: None,
            provenance: String::new(),
            created: OffsetDateTime::UNIX_EPOCH,
            updated: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn allow(t: &str) -> Vec<String> {
        vec![t.to_string()]
    }

    #[test]
    fn binding_follows_local_refs_only() {
        // A local $ref to $defs (2020-12) or definitions: followed to its type.
        for defs in ["$defs", "definitions"] {
            let r = row(
                "get",
                false,
                json!({"type": "object", defs: {"id": {"type": "integer"}, "alias": {"$ref": format!("#/{defs}/id")}},
                       "properties": {"p": {"$ref": format!("#/{defs}/alias")}}, "required": ["p"]}),
            );
            assert_eq!(
                bind_positional(&r, &allow("get"), "7").unwrap()["p"],
                json!(7)
            );
        }
        // A network $ref is never fetched: the type is unknown, and refused.
        let r = row(
            "net",
            false,
            json!({"type": "object", "properties": {"p": {"$ref": "https://schemas.example/id.json"}}, "required": ["p"]}),
        );
        assert_eq!(
            bind_positional(&r, &allow("net"), "x").unwrap_err(),
            BindError::NeedsArgs {
                tool: "srv_net".into(),
                missing: vec!["p (not described)".into()]
            }
        );
        // A dangling pointer and a reference loop: refused, not guessed.
        for p in [
            json!({"$ref": "#/$defs/nope"}),
            json!({"$ref": "#/properties/p"}),
        ] {
            let r = row(
                "odd",
                false,
                json!({"type": "object", "properties": {"p": p}, "required": ["p"]}),
            );
            assert!(matches!(
                bind_positional(&r, &allow("odd"), "x"),
                Err(BindError::NeedsArgs { .. })
            ));
        }
    }

    #[test]
    fn binding_table() {
        let one = |ty: &str| json!({"type": "object", "properties": {"p": {"type": ty}}, "required": ["p"]});
        // No required property: bare, whatever the tail.
        let r = row(
            "list",
            false,
            json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        );
        assert_eq!(bind_positional(&r, &[], "inbox").unwrap(), Map::new());
        // Read-only + allow_tools + one required string: the tail.
        let r = row("list", false, one("string"));
        assert_eq!(
            bind_positional(&r, &allow("list"), " inbox ").unwrap()["p"],
            json!("inbox")
        );
        // Integer parsed; a bad integer is a clear error.
        let r = row("get", false, one("integer"));
        assert_eq!(
            bind_positional(&r, &allow("get"), "42").unwrap()["p"],
            json!(42)
        );
        assert_eq!(
            bind_positional(&r, &allow("get"), "forty")
                .unwrap_err()
                .to_string(),
            "srv_get: p must be an integer, and \"forty\" is not"
        );
        let r = row("num", false, one("number"));
        assert_eq!(
            bind_positional(&r, &allow("num"), "2.5").unwrap()["p"],
            json!(2.5)
        );
        // Not named in allow_tools: refused even though read-only.
        let r = row("list", false, one("string"));
        assert!(matches!(
            bind_positional(&r, &[], "x"),
            Err(BindError::NeedsArgs { .. })
        ));
        // Two required: refused, naming both.
        let r = row(
            "update_task",
            false,
            json!({"type": "object", "properties": {"task_id": {"type": "integer"}, "title": {"type": "string"}}, "required": ["task_id", "title"]}),
        );
        assert_eq!(
            bind_positional(&r, &allow("update_task"), "42").unwrap_err().to_string(),
            "srv_update_task needs arguments I will not guess: task_id (integer), title (string). Use the page or the service itself."
        );
        // A required property the schema never describes: refused, never guessed.
        let r = row("odd", false, json!({"type": "object", "required": ["p"]}));
        assert_eq!(
            bind_positional(&r, &allow("odd"), "x").unwrap_err(),
            BindError::NeedsArgs {
                tool: "srv_odd".into(),
                missing: vec!["p (not described)".into()]
            }
        );
        // A mutating tool with one required string: refused.
        let r = row("delete", true, one("string"));
        assert!(matches!(
            bind_positional(&r, &allow("delete"), "7"),
            Err(BindError::NeedsArgs { .. })
        ));
        // An object-typed property is not guessed either.
        let r = row("obj", false, one("object"));
        assert!(matches!(
            bind_positional(&r, &allow("obj"), "{}"),
            Err(BindError::NeedsArgs { .. })
        ));
        // Empty tail for a required string: refused.
        let r = row("list", false, one("string"));
        assert!(matches!(
            bind_positional(&r, &allow("list"), "  "),
            Err(BindError::NeedsArgs { .. })
        ));
    }

    #[tokio::test]
    async fn local_commands_run_without_a_shell_with_cap_and_timeout() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let r = run_argv(
            &argv(&["echo", "a; rm -rf /"]),
            Duration::from_secs(10),
            100,
        )
        .await
        .unwrap();
        assert!(r.ok);
        assert_eq!(r.text, "a; rm -rf /\n", "passed as one argument, no shell");
        let r = run_argv(
            &argv(&["head", "-c", "100000", "/dev/zero"]),
            Duration::from_secs(10),
            10,
        )
        .await
        .unwrap();
        assert_eq!(r.text.len(), 10);
        assert_eq!(
            r.cut.map(|c| c.to_string()).as_deref(),
            Some("[cut: the result had 100000 bytes; the first 10 are shown]")
        );
        let e = run_argv(&argv(&["sleep", "5"]), Duration::from_millis(100), 10)
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "outcome unknown: the local command may have run it: sleep did not finish within 100ms and was killed"
        );
        let r = run_argv(&argv(&["false"]), Duration::from_secs(10), 10)
            .await
            .unwrap();
        assert!(!r.ok);
        let e = run_argv(&argv(&["/nonexistent/prog"]), Duration::from_secs(10), 10)
            .await
            .unwrap_err();
        assert!(
            e.to_string().starts_with("cannot run /nonexistent/prog:"),
            "{e}"
        );
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
    Again(Box<Waiting>, String),
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
        InputStep::Ran(self.resume(*w).await)
    }

    /// The retry of a call whose questions are all answered (or declined).
    async fn resume(&self, w: Waiting) -> Result<Ran, ExecError> {
        let row = match self.store.tool(&w.act).await {
            Ok(Some(r)) => r,
            Ok(None) => return Err(ExecError::Refused(format!("{} no longer exists", w.act))),
            Err(e) => return Err(ExecError::Failed(format!("store: {e}"))),
        };
        if !matches!(
            approved(&row, &self.approvals).map_err(ExecError::Refused)?,
            Approved::Mcp { .. }
        ) {
            return Err(ExecError::Refused(format!(
                "{} is not an MCP tool",
                row.name
            )));
        }
        let Some(manager) = &self.manager else {
            return Err(ExecError::Refused(format!(
                "{}: no MCP server is running",
                row.name
            )));
        };
        let arguments = Value::Object(w.needed.arguments.clone());
        let id = self
            .record(&row, &w.utterance, arguments, w.confirmed_by.as_deref())
            .await?;
        let started = Instant::now();
        let result = match manager
            .resume_call(&w.server, w.needed.clone(), w.replies.clone())
            .await
        {
            Ok(step) => Ok(ran_of(&row, step, Some(&w))),
            Err(e) => Err(call_error(&row, e.outcome_unknown(), e)),
        };
        self.settle(id, &row, &result, started).await;
        result
    }
}
