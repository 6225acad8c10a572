//! Where a Wyoming service listens: `tcp://HOST:PORT` or `unix://PATH`.

use std::path::PathBuf;

use crate::Error;

/// A Wyoming service's address.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Address {
    /// `tcp://HOST:PORT`: a host name or an IP address (IPv6 in brackets) and a port that is
    /// not 0. The host is dialled by the caller's [`crate::Dialer`].
    Tcp {
        /// The host as written, brackets removed.
        host: String,
        /// The port.
        port: u16,
    },
    /// `unix://PATH`: an absolute path to a Unix socket.
    Unix(PathBuf),
}

impl Address {
    /// Parses `tcp://HOST:PORT` or `unix://PATH`, naming what is wrong.
    pub fn parse(s: &str) -> Result<Address, Error> {
        let bad = |reason: &str| Error::Address {
            address: s.to_owned(),
            reason: reason.to_owned(),
        };
        if s.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(bad("it has a space or a control character"));
        }
        if let Some(path) = s.strip_prefix("unix://") {
            if path.is_empty() {
                return Err(bad("no socket path after unix://"));
            }
            if !path.starts_with('/') {
                return Err(bad("the socket path must be absolute (unix:///run/x.sock)"));
            }
            return Ok(Address::Unix(PathBuf::from(path)));
        }
        let Some(rest) = s.strip_prefix("tcp://") else {
            return Err(bad("it must start with tcp:// or unix://"));
        };
        if rest.contains(['/', '?', '#', '@']) {
            return Err(bad(
                "a tcp:// address is HOST:PORT, with no path, query or user",
            ));
        }
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let Some((host, after)) = v6.split_once(']') else {
                return Err(bad("an IPv6 host has no closing bracket"));
            };
            if host.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(bad("the bracketed host is not an IPv6 address"));
            }
            let Some(port) = after.strip_prefix(':') else {
                return Err(bad("no :PORT after the host"));
            };
            (host, port)
        } else {
            let Some((host, port)) = rest.rsplit_once(':') else {
                return Err(bad("no :PORT after the host"));
            };
            if host.contains(':') {
                return Err(bad("an IPv6 host must be in brackets ([::1]:10300)"));
            }
            (host, port)
        };
        if host.is_empty() {
            return Err(bad("no host before the port"));
        }
        let port: u16 = port
            .parse()
            .map_err(|_| bad("the port is not a number from 1 to 65535"))?;
        if port == 0 {
            return Err(bad("the port is not a number from 1 to 65535"));
        }
        Ok(Address::Tcp {
            host: host.to_owned(),
            port,
        })
    }
}

impl std::str::FromStr for Address {
    type Err = Error;
    fn from_str(s: &str) -> Result<Address, Error> {
        Address::parse(s)
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Tcp { host, port } if host.contains(':') => write!(f, "tcp://[{host}]:{port}"),
            Address::Tcp { host, port } => write!(f, "tcp://{host}:{port}"),
            Address::Unix(p) => write!(f, "unix://{}", p.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_or_name_their_fault() {
        let ok = [
            (
                "tcp://127.0.0.1:10300",
                Address::Tcp {
                    host: "127.0.0.1".into(),
                    port: 10300,
                },
            ),
            (
                "tcp://whisper.lan:10300",
                Address::Tcp {
                    host: "whisper.lan".into(),
                    port: 10300,
                },
            ),
            (
                "tcp://[::1]:10200",
                Address::Tcp {
                    host: "::1".into(),
                    port: 10200,
                },
            ),
            (
                "unix:///run/piper.sock",
                Address::Unix("/run/piper.sock".into()),
            ),
        ];
        for (s, want) in ok {
            let got = Address::parse(s).unwrap();
            assert_eq!(got, want);
            assert_eq!(got.to_string(), s);
        }
        let bad = [
            ("127.0.0.1:10300", "it must start with tcp:// or unix://"),
            (
                "http://127.0.0.1:10300",
                "it must start with tcp:// or unix://",
            ),
            ("tcp://127.0.0.1", "no :PORT after the host"),
            ("tcp://:10300", "no host before the port"),
            ("tcp://h:0", "the port is not a number from 1 to 65535"),
            ("tcp://h:65536", "the port is not a number from 1 to 65535"),
            ("tcp://h:x", "the port is not a number from 1 to 65535"),
            (
                "tcp://::1:10300",
                "an IPv6 host must be in brackets ([::1]:10300)",
            ),
            ("tcp://[::1:10300", "an IPv6 host has no closing bracket"),
            (
                "tcp://[nope]:1",
                "the bracketed host is not an IPv6 address",
            ),
            (
                "tcp://h:1/x",
                "a tcp:// address is HOST:PORT, with no path, query or user",
            ),
            (
                "tcp://u@h:1",
                "a tcp:// address is HOST:PORT, with no path, query or user",
            ),
            ("unix://", "no socket path after unix://"),
            (
                "unix://run/x.sock",
                "the socket path must be absolute (unix:///run/x.sock)",
            ),
            ("tcp://h:1\n", "it has a space or a control character"),
        ];
        for (s, reason) in bad {
            assert_eq!(
                Address::parse(s).unwrap_err().to_string(),
                format!("bad Wyoming address {s:?}: {reason}")
            );
        }
    }
}
