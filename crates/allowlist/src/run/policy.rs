//! May a row run: what the configuration approves, and the one answer to the question.

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
