//! The model turned into other crates' types: the manager's options, the allowlist's
//! policy and approvals, webfetch doors and the MCP crate's server configuration.

use std::time::Duration;

use crate::{Config, McpServerConfig, McpTarget, McpTiming};

impl McpTiming {
    /// The manager's options with these timings.
    pub fn manager_options(&self) -> mcp::ManagerOptions {
        let d = mcp::ManagerOptions::default();
        let debounce = d.debounce;
        d.with_backoff(self.backoff_min, self.backoff_max)
            .with_periods(self.health, self.refresh, debounce)
            .with_min_uptime(self.min_uptime)
    }
}

impl McpServerConfig {
    /// What the allowlist needs to know of this block.
    pub fn policy(&self) -> allowlist::ServerPolicy {
        allowlist::ServerPolicy {
            name: self.name.clone(),
            allow_tools: self.allow_tools.clone(),
            max_tools: usize::try_from(self.max_tools).unwrap_or(usize::MAX),
        }
    }
}

impl Config {
    /// What the configuration approves to run, for the allowlist's executor: each server
    /// block's `allow_tools`, and the local acts.
    pub fn approvals(&self) -> allowlist::Approvals {
        allowlist::Approvals {
            servers: self
                .mcp_servers
                .iter()
                .map(|(name, block)| (name.clone(), block.allow_tools.clone()))
                .collect(),
            acts: self
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

    /// The webfetch door called `name`: `fetch` (the global block), `feed:<name>`,
    /// `mcp:<name>` (an HTTP server) or `router`.
    pub fn door(&self, name: &str) -> Result<webfetch::DoorConfig, String> {
        let f = &self.fetch;
        let mut door = webfetch::DoorConfig::new(name);
        door.allow_hosts = f.allow_hosts.clone();
        door.deny_hosts = f.deny_hosts.clone();
        door.max_body = f.max_body;
        door.host_interval = f.host_interval;
        door.timeouts = f.timeouts;
        if name == "fetch" {
            return Ok(door);
        }
        if name == "router" {
            door.allow_private = self.router.allow_private;
            door.timeouts.total = self.router.timeout;
            return Ok(door);
        }
        if let Some(feed) = name.strip_prefix("feed:") {
            let Some(fc) = self.feeds.iter().find(|x| x.name == feed) else {
                return Err(format!("no feed named {feed:?} in the config"));
            };
            door.allow_private = fc.allow_private;
            if let Some(m) = fc.max_body {
                door.max_body = m;
            }
            return Ok(door);
        }
        if let Some(server) = name.strip_prefix("mcp:") {
            let Some(sc) = self.mcp_servers.get(server) else {
                return Err(format!("no MCP server named {server:?} in the config"));
            };
            let McpTarget::Http { door: inputs, .. } = &sc.target else {
                return Err(format!(
                    "MCP server {server:?} is a local process, not an HTTP endpoint"
                ));
            };
            door.allow_private = inputs.allow_private;
            // A JSON-RPC session is many small requests to one endpoint: no per-host
            // interval unless the block asks for one.
            door.host_interval = inputs.host_interval.unwrap_or(Duration::ZERO);
            // The server's own deadlines (M-6) govern its requests: the door's must not cut a
            // slow call short.
            let longest = sc.timeouts.call.max(sc.timeouts.init).max(sc.timeouts.list);
            door.timeouts.headers = door.timeouts.headers.max(longest);
            door.timeouts.total = door.timeouts.total.max(longest);
            return Ok(door);
        }
        Err(format!(
            "unknown door {name:?}: expected fetch, router, feed:<name> or mcp:<name>"
        ))
    }

    /// The MCP crate's view of one configured server.
    pub fn mcp_server(&self, name: &str) -> Option<mcp::ServerConfig> {
        let sc = self.mcp_servers.get(name)?;
        // The one place a secret leaves its wrapper: the client sends it.
        let transport = sc
            .target
            .map(
                |s| s.expose().to_string(),
                |_| self.door(&format!("mcp:{name}")),
            )
            .ok()?;
        Some(mcp::ServerConfig {
            protocol: sc.protocol,
            name: name.to_string(),
            transport,
            timeouts: sc.timeouts,
        })
    }
}
