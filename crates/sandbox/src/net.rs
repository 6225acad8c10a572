//! How a sandboxed server reaches the network (`sandbox.network`, `sandbox.hosts`,
//! `sandbox.connect`): nothing, out only through Maven's proxy, or this machine's network.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use serde::{Deserialize, Serialize};

/// The address, inside a proxied server's own network namespace, of Maven's proxy: what its
/// `HTTPS_PROXY`, `HTTP_PROXY` and `ALL_PROXY` name.
pub const PROXY: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 3128);

/// The environment variable that carries, to the launcher only, the secret it shows the
/// daemon's door socket when it hands over its listeners. The launcher removes it before the
/// server starts.
pub const DOOR_TOKEN_ENV: &str = "MAVEN_SANDBOX_DOOR";

/// How a sandboxed server reaches the network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Network {
    /// `"network": false`: a network namespace of its own with only loopback, and no way out.
    None,
    /// `"network": true` (the default): a network namespace of its own with only loopback; out
    /// only through Maven's proxy at [`PROXY`], which reaches public addresses only (webfetch's
    /// guard), limited to `hosts` when it is not empty; and each `connect` endpoint relayed
    /// raw at the same address and port.
    Proxy {
        /// Host patterns (`api.github.com`, `*.example.org`) it may reach; empty: any public
        /// host.
        hosts: Vec<String>,
        /// Endpoints the guard would refuse that the owner granted (a local database).
        connect: Vec<Endpoint>,
    },
    /// `"network": "direct"`: this machine's network, every TCP port but the page's.
    Direct,
}

impl Default for Network {
    fn default() -> Self {
        Network::Proxy {
            hosts: Vec::new(),
            connect: Vec::new(),
        }
    }
}

impl Network {
    /// Whether the server is in a network namespace of its own (every mode but `direct`).
    pub fn own_namespace(&self) -> bool {
        !matches!(self, Network::Direct)
    }

    /// The endpoints granted with `connect` (none outside the proxy mode).
    pub fn connect(&self) -> &[Endpoint] {
        match self {
            Network::Proxy { connect, .. } => connect,
            _ => &[],
        }
    }
}

/// One `connect` grant: an address and port the server reaches at the same address and port
/// inside its namespace, relayed raw by Maven.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// As the owner wrote it (`127.0.0.1:5432`, `[::1]:6379`, `localhost:5432`).
    pub written: String,
    /// The address and port.
    pub addr: SocketAddr,
}

impl Endpoint {
    /// Reads a `connect` entry: an IP address and port (`127.0.0.1:5432`, `[::1]:5432`) or
    /// `localhost:PORT` (127.0.0.1). The error says what is wrong in the owner's words.
    pub fn parse(entry: &str) -> Result<Endpoint, String> {
        let addr = if let Some(port) = entry.strip_prefix("localhost:") {
            port.parse::<u16>()
                .ok()
                .map(|p| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p))
        } else {
            entry.parse::<SocketAddr>().ok()
        };
        let Some(addr) = addr else {
            return Err(
                "an address and port (127.0.0.1:5432, [::1]:5432, localhost:5432); names are not resolved for connect"
                    .to_owned(),
            );
        };
        if addr.port() == 0 {
            return Err("a port other than 0".to_owned());
        }
        if addr == PROXY {
            return Err(format!(
                "an endpoint other than {PROXY}, where Maven's proxy is"
            ));
        }
        if addr.ip().is_unspecified() || addr.ip().is_multicast() {
            return Err("the address of one host (not 0.0.0.0, ::, or multicast)".to_owned());
        }
        Ok(Endpoint {
            written: entry.to_owned(),
            addr,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_literal_addresses_and_ports() {
        assert_eq!(
            Endpoint::parse("127.0.0.1:5432").map(|e| e.addr),
            Ok("127.0.0.1:5432".parse().unwrap())
        );
        assert_eq!(
            Endpoint::parse("localhost:6379").map(|e| e.addr),
            Ok("127.0.0.1:6379".parse().unwrap())
        );
        assert_eq!(
            Endpoint::parse("[::1]:5432").map(|e| e.addr),
            Ok("[::1]:5432".parse().unwrap())
        );
        for bad in [
            "db.lan:5432",
            "127.0.0.1",
            "127.0.0.1:0",
            "0.0.0.0:80",
            "127.0.0.1:3128",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }
}
