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

/// Why a row may not run: each reason the owner is told, as a value a caller can decide on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Only proposed: the owner has not enabled it (`changed`: its server changed it since the
    /// owner approved it).
    #[error("{act} is only proposed: enable it on the page first{}", if *.changed { " (its server changed it since you approved it)" } else { "" })]
    Proposed {
        /// The row.
        act: String,
        /// Redefined since its approval.
        changed: bool,
    },
    /// The owner disabled it.
    #[error("{act} is disabled")]
    Disabled {
        /// The row.
        act: String,
    },
    /// Its server no longer offers it.
    #[error("{act} was withdrawn: {why}")]
    Withdrawn {
        /// The row.
        act: String,
        /// The row's provenance: why it was withdrawn.
        why: String,
    },
    /// Its server's block is gone from the configuration.
    #[error("{act}: its server {server:?} is no longer configured")]
    ServerGone {
        /// The row.
        act: String,
        /// The server's block name.
        server: String,
    },
    /// The server's `allow_tools` no longer names it.
    #[error("{act}: {tool} is no longer named in mcp_servers.{server}.allow_tools")]
    NotAllowed {
        /// The row.
        act: String,
        /// The tool's own name.
        tool: String,
        /// The server's block name.
        server: String,
    },
    /// The local act is gone from the configuration.
    #[error("{act}: no longer in the configuration's acts")]
    ActGone {
        /// The row.
        act: String,
    },
    /// The local act's argv changed since the owner approved it.
    #[error("{act}: its command in the configuration changed since it was approved")]
    CommandChanged {
        /// The row.
        act: String,
    },
    /// No row of that name exists (any longer).
    #[error("{act} no longer exists")]
    Gone {
        /// The name asked for.
        act: String,
    },
    /// MCP servers are not managed in this process.
    #[error("{act}: no MCP server is running")]
    NoServers {
        /// The row.
        act: String,
    },
    /// A server's question can only be answered for an MCP tool.
    #[error("{act} is not an MCP tool")]
    NotMcp {
        /// The row.
        act: String,
    },
    /// A local act with no argv.
    #[error("empty command")]
    EmptyCommand,
    /// The server's question of the last turn was asked more than two minutes ago.
    #[error("{server} asked more than two minutes ago")]
    Expired {
        /// The server that asked.
        server: String,
    },
}

/// Whether `row` may run right now, and why not: its state (only enabled rows run), and what
/// the configuration still approves (its server still configured and, with `allow_tools`, the
/// tool still named; a local act still configured with the same argv). The one answer to the
/// question, asked by the turn pipeline before it asks for a confirmation and by the executor
/// again, on the row re-read, right before it runs.
pub fn may_run(row: &ToolRow, approvals: &Approvals) -> Result<(), Refusal> {
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
) -> Result<Approved<'a>, Refusal> {
    let act = || row.name.clone();
    match row.state {
        ToolState::Enabled => {}
        ToolState::Proposed => {
            return Err(Refusal::Proposed {
                act: act(),
                changed: row.approved_shape.is_some(),
            })
        }
        ToolState::Disabled => return Err(Refusal::Disabled { act: act() }),
        ToolState::Withdrawn => {
            return Err(Refusal::Withdrawn {
                act: act(),
                why: row.provenance.clone(),
            })
        }
    }
    match row.kind {
        ToolKind::Mcp => {
            let Some(allow_tools) = approvals.servers.get(&row.server) else {
                return Err(Refusal::ServerGone {
                    act: act(),
                    server: row.server.clone(),
                });
            };
            if !allow_tools.is_empty() && !allow_tools.contains(&row.tool) {
                return Err(Refusal::NotAllowed {
                    act: act(),
                    tool: row.tool.clone(),
                    server: row.server.clone(),
                });
            }
            Ok(Approved::Mcp { allow_tools })
        }
        ToolKind::Local => {
            let Some(a) = approvals.acts.iter().find(|a| a.name == row.tool) else {
                return Err(Refusal::ActGone { act: act() });
            };
            if a.cmd != row.cmd {
                return Err(Refusal::CommandChanged { act: act() });
            }
            Ok(Approved::Local(a))
        }
    }
}
