//! mcp: a hardened Model Context Protocol client: JSON-RPC 2.0 core, stdio and Streamable HTTP
//! transports, the client, and the connection manager. It knows nothing of the store or the page.

use std::collections::BTreeMap;
use std::time::Duration;

/// How to reach one configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A local child process speaking line-delimited JSON-RPC on stdin/stdout.
    Stdio {
        /// Program to run (no shell).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment, on top of the minimal PATH, HOME, LANG.
        env: BTreeMap<String, String>,
    },
    /// A Streamable HTTP endpoint reached through a webfetch door of its own.
    Http {
        /// The endpoint URL.
        url: String,
        /// Static headers (bearer tokens) sent only to the endpoint's own origin.
        headers: BTreeMap<String, String>,
        /// The door's limits (allow_private, host_interval, body cap…).
        door: webfetch::DoorConfig,
    },
}

/// Deadlines of the client's requests (M-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpTimeouts {
    /// initialize + notifications/initialized.
    pub init: Duration,
    /// Each page of a listing.
    pub list: Duration,
    /// One tools/call.
    pub call: Duration,
}

impl Default for McpTimeouts {
    fn default() -> Self {
        McpTimeouts {
            init: Duration::from_secs(10),
            list: Duration::from_secs(10),
            call: Duration::from_secs(60),
        }
    }
}

/// One configured MCP server, as the daemon hands it to this crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The server's name in the config (`mcp_servers.<name>`).
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Request deadlines.
    pub timeouts: McpTimeouts,
}
