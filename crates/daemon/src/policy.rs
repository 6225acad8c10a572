//! What the configuration approves, in the allowlist's terms: each server block's policy (its
//! `allow_tools` and `max_tools`) and the approvals the executor asks before every run. The
//! configuration knows nothing of the allowlist; the daemon and `mcp inspect` make these here.

use config::{Config, McpServerConfig};

/// What the allowlist needs to know of one server block.
pub fn server(block: &McpServerConfig) -> allowlist::ServerPolicy {
    allowlist::ServerPolicy {
        name: block.name.clone(),
        allow_tools: block.allow_tools.clone(),
        max_tools: usize::try_from(block.max_tools).unwrap_or(usize::MAX),
    }
}

/// What the configuration approves to run, for the allowlist's executor: each server block's
/// `allow_tools`, and the local acts.
pub fn approvals(config: &Config) -> allowlist::Approvals {
    allowlist::Approvals {
        servers: config
            .mcp_servers
            .iter()
            .map(|(name, block)| (name.clone(), block.allow_tools.clone()))
            .collect(),
        acts: config
            .acts
            .iter()
            .map(|a| allowlist::LocalAct {
                name: a.name.clone(),
                cmd: a.cmd.clone(),
                read_only: a.read_only,
                timeout: a.timeout,
                max_output: a.max_output,
            })
            .collect(),
    }
}
