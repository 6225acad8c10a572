//! Running acts: may a row run, positional binding, and the executor.
//!
//! [`may_run`] is the one answer to "may this row run now". The executor is reached only from a
//! turn; there is no IPC method or page route that calls it. It re-reads the row and asks
//! [`may_run`], runs a destructive row only with a [`Confirmation`], sends rows with
//! `cmd = ["mcp", …]` to the connection manager (only the tool name and the bound arguments
//! leave Maven), and runs local acts by exec — argv, no shell — with a timeout and an output
//! cap. "mcp" is never executed as a program. Every execution,
//! whatever its outcome, lands in `acts_log`.

mod bind;
mod executor;
mod process;

pub use bind::{bind_positional, BindError};
pub use executor::{Executor, InputStep, Next, Ran};
pub use process::run_argv;

use std::time::Duration;

use store::{ToolKind, ToolRow, ToolState};

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
pub(super) enum Approved<'a> {
    Mcp { allow_tools: &'a [String] },
    Local(&'a LocalAct),
}

/// [`may_run`], keeping what the configuration approves for the run itself.
pub(super) fn approved<'a>(
    row: &ToolRow,
    approvals: &'a Approvals,
) -> Result<Approved<'a>, String> {
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
