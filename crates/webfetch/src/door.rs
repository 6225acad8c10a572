//! The limits of one door.

use std::time::Duration;

/// The limits of one door: one configured use of the network (a feed, an MCP server, the
/// router's endpoint, or the global `fetch` block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoorConfig {
    /// Name of the door, as shown in errors and logs: `fetch`, `feed:<name>`, `mcp:<name>`,
    /// `router`.
    pub name: String,
    /// Lift the refusal of loopback, RFC 1918 and ULA addresses (and nothing else). A door that
    /// allows private addresses follows no redirect at all.
    pub allow_private: bool,
    /// With `allow_private`, also lift 100.64.0.0/10 (carrier-grade NAT).
    pub allow_cgnat: bool,
    /// Hosts allowed (global list followed by the door's own); empty = any host.
    pub allow_hosts: Vec<String>,
    /// Hosts refused (global list followed by the door's own); the denylist wins.
    pub deny_hosts: Vec<String>,
    /// Largest body accepted, in bytes, after decompression.
    pub max_body: u64,
    /// Least time between two requests to one host (every redirect hop is charged).
    pub host_interval: Duration,
    /// Most redirects followed (never more than 3).
    pub max_redirects: u8,
    /// Deadlines of each phase of a request.
    pub timeouts: Timeouts,
}

/// Deadlines of the phases of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Name resolution.
    pub resolve: Duration,
    /// TCP connect.
    pub connect: Duration,
    /// TLS handshake.
    pub tls: Duration,
    /// From the request sent to the response headers received.
    pub headers: Duration,
    /// The whole request, body included.
    pub total: Duration,
}

/// Default body cap: 2 MiB.
pub const DEFAULT_MAX_BODY: u64 = 2 * 1024 * 1024;

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            resolve: Duration::from_secs(5),
            connect: Duration::from_secs(10),
            tls: Duration::from_secs(10),
            headers: Duration::from_secs(30),
            total: Duration::from_secs(60),
        }
    }
}

impl DoorConfig {
    /// A door with the default limits and nothing lifted.
    pub fn new(name: impl Into<String>) -> Self {
        DoorConfig {
            name: name.into(),
            allow_private: false,
            allow_cgnat: false,
            allow_hosts: Vec::new(),
            deny_hosts: Vec::new(),
            max_body: DEFAULT_MAX_BODY,
            host_interval: Duration::from_secs(1),
            max_redirects: 3,
            timeouts: Timeouts::default(),
        }
    }
}
