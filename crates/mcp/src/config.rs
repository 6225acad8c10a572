//! What the daemon configures: how to reach a server, its deadlines, and the client's bounds.

use std::collections::BTreeMap;
use std::time::Duration;

/// How to reach one MCP server: the one target type of every transport, for the daemon's
/// configuration and for this crate.
///
/// `S` holds a secret (an environment value, a header): the client gets `String`s, the
/// configuration keeps a type of its own that is never shown. `D` is what the endpoint's
/// webfetch door is: the client gets the finished door, the configuration what it is built
/// from. [`Transport::map`] turns one into the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport<S = String, D = webfetch::DoorConfig> {
    /// A local child process speaking line-delimited JSON-RPC on stdin/stdout.
    Stdio {
        /// Program to run (no shell).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment, on top of the minimal PATH, HOME, LANG.
        env: BTreeMap<String, S>,
    },
    /// A Streamable HTTP endpoint reached through a webfetch door of its own.
    Http {
        /// The endpoint URL.
        url: String,
        /// Static headers (bearer tokens) sent only to the endpoint's own origin.
        headers: BTreeMap<String, S>,
        /// The door's limits (allow_private, host_interval, body cap…).
        door: D,
    },
}

impl<S, D> Transport<S, D> {
    /// "stdio" or "http".
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }

    /// The same target with each secret turned by `secret` and the door by `door` (which may
    /// refuse).
    pub fn map<T, E, X>(
        &self,
        secret: impl Fn(&S) -> T,
        door: impl FnOnce(&D) -> Result<E, X>,
    ) -> Result<Transport<T, E>, X> {
        let secrets = |m: &BTreeMap<String, S>| {
            m.iter()
                .map(|(k, v)| (k.clone(), secret(v)))
                .collect::<BTreeMap<_, _>>()
        };
        Ok(match self {
            Transport::Stdio { command, args, env } => Transport::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: secrets(env),
            },
            Transport::Http {
                url,
                headers,
                door: d,
            } => Transport::Http {
                url: url.clone(),
                headers: secrets(headers),
                door: door(d)?,
            },
        })
    }
}

/// Deadlines of the client's requests (M-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpTimeouts {
    /// The opening exchange: `server/discover`, or initialize + notifications/initialized.
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
    /// Which protocol era to speak (the block's `protocol` key).
    pub protocol: crate::era::Protocol,
}

/// Bounds of one connection. The defaults are the daemon's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest frame (stdio line, SSE event, JSON body) in bytes. Default 4 MiB.
    pub frame_cap: usize,
    /// Non-JSON stdout lines tolerated before the connection is dropped. Default 100.
    pub max_garbage_lines: u64,
    /// Inbound requests + notifications allowed in a burst. Default 100.
    pub inbound_burst: u32,
    /// Sustained inbound requests + notifications per second. Default 50.
    pub inbound_per_second: u32,
    /// Bytes of stderr kept (stdio). Default 16 KiB.
    pub stderr_ring: usize,
    /// Pages of a listing before it is declared incomplete. Default 64.
    pub page_cap: usize,
    /// Entries of a listing before it is declared incomplete. Default 10,000.
    pub max_list_entries: usize,
    /// Bytes of text kept from a tool result or a resource. Default 64 KiB.
    pub result_text_cap: usize,
    /// After stdin is closed, how long the server has to exit. Default 2 s.
    pub close_grace: Duration,
    /// After SIGTERM, how long the group has before SIGKILL. Default 2 s.
    pub term_grace: Duration,
    /// SSE reconnections of one request (when the server closes a stream before answering).
    /// Default 3.
    pub sse_reconnects: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            frame_cap: 4 * 1024 * 1024,
            max_garbage_lines: 100,
            inbound_burst: 100,
            inbound_per_second: 50,
            stderr_ring: 16 * 1024,
            page_cap: 64,
            max_list_entries: 10_000,
            result_text_cap: 64 * 1024,
            close_grace: Duration::from_secs(2),
            term_grace: Duration::from_secs(2),
            sse_reconnects: 3,
        }
    }
}

/// Answers server→client requests other than `ping` (test clients only; see the crate docs).
pub trait ServerRequestHandler: Send + Sync {
    /// `Some(Ok(result))` or `Some(Err((code, message)))` to answer; `None` for -32601.
    fn handle(
        &self,
        method: &str,
        params: &serde_json::Value,
    ) -> Option<Result<serde_json::Value, (i64, String)>>;
}

/// How a [`Client`](crate::Client) presents itself and what bounds it keeps.
#[derive(Clone)]
pub struct ClientOptions {
    /// `clientInfo.name`. Default "maven".
    pub client_name: String,
    /// `clientInfo.version`. Default this crate's version.
    pub client_version: String,
    /// The capabilities declared in initialize. Default `{}` (Maven offers the server nothing).
    pub capabilities: serde_json::Value,
    /// Bounds.
    pub limits: Limits,
    /// Answers server requests other than `ping`; `None` (the default) answers -32601.
    pub handler: Option<std::sync::Arc<dyn ServerRequestHandler>>,
    /// The fetcher of an HTTP server's door. `None` (the default) builds one from the door's
    /// config; tests pass one built with a dial hook or a test-only address policy.
    pub http_fetcher: Option<webfetch::Fetcher>,
    /// HTTP only: after the handshake, open the standalone GET stream on which the server
    /// sends requests and notifications that belong to no client request. Default false.
    pub standalone_stream: bool,
    /// Declare the `elicitation` capability (form and URL modes) in both eras, because a
    /// call's elicitations reach whoever made the call ([`crate::Client::start_owner_call`]:
    /// the owner, through a turn; otherwise the handler, else declined). Default true.
    pub owner_elicitation: bool,
    /// HTTP only: the server's OAuth authorization (its tokens go in `Authorization` to the
    /// server's origin; its 401 and 403 are handed to it). `None` (the default): static
    /// headers only.
    pub oauth: Option<std::sync::Arc<oauth::OAuth>>,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("client_name", &self.client_name)
            .field("capabilities", &self.capabilities)
            .field("limits", &self.limits)
            .field("handler", &self.handler.is_some())
            .field("oauth", &self.oauth.is_some())
            .finish()
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            client_name: "maven".to_owned(),
            client_version: env!("CARGO_PKG_VERSION").to_owned(),
            capabilities: serde_json::Value::Object(serde_json::Map::new()),
            limits: Limits::default(),
            handler: None,
            http_fetcher: None,
            standalone_stream: false,
            owner_elicitation: true,
            oauth: None,
        }
    }
}

impl ClientOptions {
    /// Options with these limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Options that declare these capabilities and answer server requests with `handler`.
    pub fn with_handler(
        mut self,
        capabilities: serde_json::Value,
        handler: std::sync::Arc<dyn ServerRequestHandler>,
    ) -> Self {
        self.capabilities = capabilities;
        self.handler = Some(handler);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_maps_its_secrets_and_its_door_and_keeps_the_rest() {
        let env = BTreeMap::from([("TOKEN".to_owned(), 7u8)]);
        let stdio: Transport<u8, ()> = Transport::Stdio {
            command: "srv".into(),
            args: vec!["--x".into()],
            env,
        };
        let mapped = stdio.map(|n| format!("v{n}"), |_| Err::<u16, _>("unused"));
        assert_eq!(
            mapped,
            Ok(Transport::Stdio {
                command: "srv".into(),
                args: vec!["--x".into()],
                env: BTreeMap::from([("TOKEN".to_owned(), "v7".to_owned())]),
            })
        );
        assert_eq!(stdio.name(), "stdio");

        let http: Transport<u8, bool> = Transport::Http {
            url: "https://example.org/mcp".into(),
            headers: BTreeMap::from([("Authorization".to_owned(), 1u8)]),
            door: true,
        };
        assert_eq!(http.name(), "http");
        let mapped = http.map(|n| n.to_string(), |d| Ok::<_, ()>(u16::from(*d)));
        assert_eq!(
            mapped,
            Ok(Transport::Http {
                url: "https://example.org/mcp".into(),
                headers: BTreeMap::from([("Authorization".to_owned(), "1".to_owned())]),
                door: 1u16,
            })
        );
        // A door that cannot be built refuses the whole target.
        assert_eq!(
            http.map(|n| *n, |_| Err::<u16, _>("no door")),
            Err("no door")
        );
    }
}
