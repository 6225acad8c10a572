//! The model turned into the types of the crates below it: the manager's options, webfetch
//! doors and the MCP crate's server configuration. (What the allowlist approves is made from
//! the model by the daemon: the configuration knows nothing of the allowlist.)

use std::time::Duration;

use crate::{Config, McpTarget, McpTiming};

/// One of the configuration's webfetch doors, each with its own limits: `fetch` (the global
/// block), `router`, `voice` (the speech services `maven listen` and `maven doctor` dial),
/// `feed:NAME`, `mcp:NAME` (an HTTP server) and a sandboxed server's proxy. [`Config::door`]
/// is the one place each is built, every one from the `fetch` block. Its
/// [`std::fmt::Display`] is the door's name in logs and errors; [`std::str::FromStr`] reads
/// the name a person typed (`maven fetch --door`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Door {
    /// The global `fetch` block (`maven fetch`).
    Fetch,
    /// The `llm` router's endpoint.
    Router,
    /// A configured feed, by name.
    Feed(String),
    /// A configured HTTP MCP server, by name.
    Mcp(String),
    /// The proxy of a sandboxed local server whose network goes through Maven (`mcp:NAME` in
    /// logs): the hosts its `sandbox.hosts` names, never one `fetch.deny_hosts` denies.
    Sandbox(String),
    /// The Wyoming speech services (`voice.asr`, `voice.tts`, `voice.wake`).
    Voice,
}

impl std::fmt::Display for Door {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Door::Fetch => f.write_str("fetch"),
            Door::Router => f.write_str("router"),
            Door::Feed(n) => write!(f, "feed:{n}"),
            Door::Mcp(n) | Door::Sandbox(n) => write!(f, "mcp:{n}"),
            Door::Voice => f.write_str("voice"),
        }
    }
}

impl std::str::FromStr for Door {
    type Err = DoorError;
    fn from_str(s: &str) -> Result<Door, DoorError> {
        match s {
            "fetch" => Ok(Door::Fetch),
            "router" => Ok(Door::Router),
            "voice" => Ok(Door::Voice),
            _ => match s.split_once(':') {
                Some(("feed", n)) if !n.is_empty() => Ok(Door::Feed(n.to_owned())),
                Some(("mcp", n)) if !n.is_empty() => Ok(Door::Mcp(n.to_owned())),
                _ => Err(DoorError::Unknown(s.to_owned())),
            },
        }
    }
}

/// Why the configuration has no such door.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DoorError {
    /// A name that is no door at all.
    #[error("unknown door {0:?}: expected fetch, router, voice, feed:<name> or mcp:<name>")]
    Unknown(String),
    /// `feed:NAME` of a feed the configuration does not have.
    #[error("no feed named {0:?} in the config")]
    NoFeed(String),
    /// `mcp:NAME` of a server the configuration does not have.
    #[error("no MCP server named {0:?} in the config")]
    NoServer(String),
    /// `mcp:NAME` of a local (stdio) server, which has no door.
    #[error("MCP server {0:?} is a local process, not an HTTP endpoint")]
    NotHttp(String),
    /// The proxy of a server whose network does not go through Maven.
    #[error("MCP server {0:?} has no network through Maven's proxy")]
    NoProxy(String),
}

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

impl Config {
    /// The webfetch door `door`: the global `fetch` block's limits, and its own overrides.
    pub fn door(&self, door: &Door) -> Result<webfetch::DoorConfig, DoorError> {
        let f = &self.fetch;
        let mut out = webfetch::DoorConfig::new(door.to_string());
        out.allow_hosts = f.allow_hosts.clone();
        out.deny_hosts = f.deny_hosts.clone();
        out.max_body = f.max_body;
        out.host_interval = f.host_interval;
        out.timeouts = f.timeouts;
        match door {
            Door::Fetch => {}
            Door::Voice => {
                out.allow_private = self.voice.allow_private;
                // A conversation is a few requests to one service: no per-host interval.
                out.host_interval = Duration::ZERO;
            }
            Door::Sandbox(server) => {
                let network = self
                    .mcp_servers
                    .get(server)
                    .ok_or_else(|| DoorError::NoServer(server.clone()))?
                    .sandbox
                    .as_ref()
                    .map(|p| &p.network);
                let Some(sandbox::Network::Proxy { hosts, .. }) = network else {
                    return Err(DoorError::NoProxy(server.clone()));
                };
                // The proxy relays connections, not requests: only the host lists apply. The
                // block's hosts are what it may reach; the global denials hold here too.
                let mut proxy = webfetch::DoorConfig::new(door.to_string());
                proxy.allow_hosts = hosts.clone();
                proxy.deny_hosts = out.deny_hosts;
                return Ok(proxy);
            }
            Door::Router => {
                out.allow_private = self.router.allow_private;
                out.timeouts.total = self.router.timeout;
            }
            Door::Feed(feed) => {
                let Some(fc) = self.feeds.iter().find(|x| &x.name == feed) else {
                    return Err(DoorError::NoFeed(feed.clone()));
                };
                out.allow_private = fc.allow_private;
                if let Some(m) = fc.max_body {
                    out.max_body = m;
                }
            }
            Door::Mcp(server) => {
                let Some(sc) = self.mcp_servers.get(server) else {
                    return Err(DoorError::NoServer(server.clone()));
                };
                let McpTarget::Http { door: inputs, .. } = &sc.target else {
                    return Err(DoorError::NotHttp(server.clone()));
                };
                out.allow_private = inputs.allow_private;
                // A JSON-RPC session is many small requests to one endpoint: no per-host
                // interval unless the block asks for one.
                out.host_interval = inputs.host_interval.unwrap_or(Duration::ZERO);
                // The server's own deadlines (M-6) govern its requests: the door's must not cut a
                // slow call short.
                let longest = sc.timeouts.call.max(sc.timeouts.init).max(sc.timeouts.list);
                out.timeouts.headers = out.timeouts.headers.max(longest);
                out.timeouts.total = out.timeouts.total.max(longest);
            }
        }
        Ok(out)
    }

    /// The MCP crate's view of one configured server.
    pub fn mcp_server(&self, name: &str) -> Option<mcp::ServerConfig> {
        let sc = self.mcp_servers.get(name)?;
        // The one place a secret leaves its wrapper: the client sends it.
        let transport = sc
            .target
            .map(
                |s| s.expose().to_string(),
                |_| self.door(&Door::Mcp(name.to_owned())),
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
