//! The configuration's model: what a validated file says.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// A string that must never be shown: its `Debug` and `Display` print `••••`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub(crate) String);

impl Secret {
    /// Wraps a value that must not be shown.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value itself, for the one place that sends it (a header, a child's environment).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("••••")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("••••")
    }
}

/// The whole configuration, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The file it came from; `None` when no file existed and every default applies.
    pub source: Option<PathBuf>,
    /// The `web` block.
    pub web: WebConfig,
    /// The `router` block.
    pub router: RouterConfig,
    /// The `fetch` block.
    pub fetch: FetchConfig,
    /// The `feeds` list, in file order.
    pub feeds: Vec<FeedConfig>,
    /// `feed_min_interval`: no feed is polled more often than this (default 5 minutes).
    pub feed_min_interval: Duration,
    /// The `mcp_servers` blocks, by name.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// The `mcp_timing` block.
    pub mcp_timing: McpTiming,
    /// The `acts` list, in file order.
    pub acts: Vec<ActConfig>,
    /// The `voice` block.
    pub voice: VoiceConfig,
    /// `sentences`: more sentence files, or folders of them, besides those beside the
    /// configuration file (`sentences/<lang>/*.yaml`).
    pub sentences: Vec<PathBuf>,
}

/// The `voice` block: Maven as a Wyoming conversation agent (`listen`), and the speech
/// services `maven listen` uses (`asr`, `tts`, `wake`).
#[derive(Debug, Clone, PartialEq)]
pub struct VoiceConfig {
    /// Where Maven serves the Wyoming protocol; off when absent.
    pub listen: Option<std::net::SocketAddr>,
    /// The addresses allowed to connect to a `listen` that is not on the loopback.
    pub peers: Vec<std::net::IpAddr>,
    /// The speech-to-text service.
    pub asr: Option<wyoming::Address>,
    /// The text-to-speech service.
    pub tts: Option<wyoming::Address>,
    /// The wake-word service: `maven listen` turns only what follows the wake word.
    pub wake: Option<wyoming::Address>,
    /// The language spoken (`en`, the default, or `ru`).
    pub language: String,
    /// Whether the speech services may be on a private or loopback address (they are doors).
    pub allow_private: bool,
}

impl Default for VoiceConfig {
    fn default() -> Self {
        VoiceConfig {
            listen: None,
            peers: Vec::new(),
            asr: None,
            tts: None,
            wake: None,
            language: "en".to_owned(),
            allow_private: false,
        }
    }
}

/// The `mcp_timing` block: how the connection manager retries, checks and re-lists servers.
/// The defaults are A-4's (1 minute doubling to 30, jittered).
///
/// Not `mcp::ManagerOptions` itself: those also hold the client's options, the debounce and the
/// stagger, which the file does not set, and are neither `Debug` nor comparable. This block
/// produces them with [`McpTiming::manager_options`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpTiming {
    /// First retry delay after a failed dial.
    pub backoff_min: Duration,
    /// Largest retry delay.
    pub backoff_max: Duration,
    /// How often a live server is pinged.
    pub health: Duration,
    /// How often a live server's tools are listed again (besides `list_changed`).
    pub refresh: Duration,
    /// A connection that dies sooner than this after its dial counts as a failed dial.
    pub min_uptime: Duration,
}

impl Default for McpTiming {
    fn default() -> Self {
        let d = mcp::ManagerOptions::default();
        McpTiming {
            backoff_min: d.backoff_min,
            backoff_max: d.backoff_max,
            health: d.health_interval,
            refresh: d.refresh_interval,
            min_uptime: d.min_uptime,
        }
    }
}

/// The `web` block: the local page.
#[derive(Debug, Clone, PartialEq)]
pub struct WebConfig {
    /// The address the page listens on (default `127.0.0.1:8765`).
    pub listen: SocketAddr,
    /// Host names the page answers to (DNS-rebinding defence).
    pub hosts: Vec<String>,
    /// An argon2id hash of the fallback step-up passphrase.
    pub passphrase_hash: Option<Secret>,
    /// How long a step-up keeps a browser session signed in, so that it may see the owner's
    /// data (`session_hours`, default 12, at most 720). Enabling and disabling still need a
    /// step-up of the last five minutes.
    pub session: Duration,
}

/// Default of `web.session_hours`.
pub const DEFAULT_SESSION_HOURS: u64 = 12;
/// Largest `web.session_hours`: thirty days.
pub const MAX_SESSION_HOURS: u64 = 720;

/// Which router chooses what a turn does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouterKind {
    /// Fixed rules, no model (`"rules"`, the default).
    Rules,
    /// An OpenAI-compatible chat-completions endpoint (`"llm"`).
    Llm,
}

/// The `router` block.
#[derive(Debug, Clone, PartialEq)]
pub struct RouterConfig {
    /// `kind`: which router.
    pub kind: RouterKind,
    /// The OpenAI-compatible chat-completions URL (llm router).
    pub url: Option<String>,
    /// The model name sent to the endpoint (llm router).
    pub model: Option<String>,
    /// The model's context size in tokens (at least 512; default 4096).
    pub context_tokens: u64,
    /// Deadline of one request to the endpoint (default 30 s).
    pub timeout: Duration,
    /// Whether the endpoint may be a private or loopback address.
    pub allow_private: bool,
    /// Static headers sent to the endpoint (bearer tokens).
    pub headers: BTreeMap<String, Secret>,
    /// `tools`: whether the model is offered the acts as OpenAI-style tools (`"auto"`, the
    /// default) or asked for constrained JSON (`"off"`, for an endpoint that refuses tools).
    pub tools: RouterTools,
}

/// How the `llm` router asks the model (`router.tools`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouterTools {
    /// Tools with named arguments; an endpoint that refuses them is asked for constrained JSON.
    Auto,
    /// Constrained JSON only (an act and the rest of the sentence).
    Off,
}

/// The `fetch` block: global host lists and the defaults of every door.
///
/// Not a `webfetch::DoorConfig`: a door also has a name, `allow_private`, `allow_cgnat` and
/// `max_redirects`, which this block does not set; [`Config::door`] builds each door from it.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchConfig {
    /// Host patterns every door may reach (empty: any host).
    pub allow_hosts: Vec<String>,
    /// Host patterns no door may reach.
    pub deny_hosts: Vec<String>,
    /// Largest body accepted, in bytes.
    pub max_body: u64,
    /// Least time between two requests to one host.
    pub host_interval: Duration,
    /// Deadlines of each phase of a request (`fetch.timeouts`).
    pub timeouts: webfetch::Timeouts,
}

/// One entry of `feeds`.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedConfig {
    /// The feed's name (letters, digits, `-`, `_`, `.`; unique).
    pub name: String,
    /// The feed's http or https URL.
    pub url: String,
    /// How often it is polled (never below `feed_min_interval`; default 30 minutes).
    pub interval: Duration,
    /// Whether it is polled at all.
    pub enabled: bool,
    /// Its own body cap, instead of the `fetch` block's.
    pub max_body: Option<u64>,
    /// Whether it may be on a private or loopback address.
    pub allow_private: bool,
    /// How many of the newest items the first fetch notes.
    pub baseline: u64,
}

/// How an MCP server is reached: the MCP crate's one target type, holding its secrets as
/// [`Secret`]s and, for HTTP, what its door is built from. [`Config::mcp_server`] turns it
/// into the client's (`mcp::Transport`), with the finished webfetch door.
pub type McpTarget = mcp::Transport<Secret, McpDoor>;

/// What the webfetch door of an HTTP server is built from, besides the `fetch` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpDoor {
    /// Whether the endpoint may be a private or loopback address.
    pub allow_private: bool,
    /// Least time between two requests to the endpoint's host; none unless set.
    pub host_interval: Option<Duration>,
}

/// One entry of `mcp_servers`.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    /// The block's name (`mcp_servers.<name>`).
    pub name: String,
    /// How the server is reached.
    pub target: McpTarget,
    /// A local server's sandbox (`sandbox`, default `true`); `None` for an HTTP server and when
    /// the block says `"sandbox": false`, the owner's explicit choice to run it as themselves.
    pub sandbox: Option<sandbox::Policy>,
    /// The target as the file writes it: the command and its arguments joined by spaces, or
    /// the URL, with every `${NAME}` reference left unexpanded. What status shows (masked).
    pub written: String,
    /// Whether the server is dialled at all (default false).
    pub enabled: bool,
    /// Tool names the owner allows; empty: every tool, up to `max_tools`.
    pub allow_tools: Vec<String>,
    /// Most tools the server may offer without `allow_tools` (default 12).
    pub max_tools: u64,
    /// The server's request deadlines.
    pub timeouts: mcp::McpTimeouts,
    /// Which protocol era to speak: `"auto"` (default), `"2026-07-28"` or `"2025-11-25"`.
    pub protocol: mcp::Protocol,
    /// HTTP only: the `oauth` block (a pre-registered client, a client metadata document).
    /// Without one, an HTTP server that asks for OAuth is authorized with dynamic
    /// registration.
    pub oauth: McpOAuthConfig,
}

/// The `oauth` block of an HTTP server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpOAuthConfig {
    /// `oauth.client_id`: a client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// `oauth.client_secret`: its secret, only as a `${ENV}` reference.
    pub client_secret: Option<Secret>,
    /// `oauth.client_metadata_url`: an https URL of Maven's Client ID Metadata Document,
    /// used as the client id where the authorization server supports them.
    pub client_metadata_url: Option<String>,
    /// `oauth.dpop`: `"auto"` (default: DPoP when both the authorization server and the
    /// server speak it), `"never"`, `"required"`.
    pub dpop: oauth::DpopMode,
    /// `oauth.grant` (with `workload_token_file` or `idp`): how the tokens are obtained;
    /// default the owner's authorization on the page.
    pub grant: oauth::Grant,
    /// `oauth.private_key_file`: a PKCS#8 PEM key (EC P-256 or RSA) the client authenticates
    /// with (`private_key_jwt`) instead of a secret.
    pub private_key_file: Option<std::path::PathBuf>,
    /// `oauth.key_id`: the `kid` of its assertions.
    pub key_id: Option<String>,
}

/// One entry of `acts`: a local command proposed from config.
#[derive(Debug, Clone, PartialEq)]
pub struct ActConfig {
    /// The act's name (lowercase letters, digits and `_`; unique).
    pub name: String,
    /// The argv to run (no shell).
    pub cmd: Vec<String>,
    /// Whether the act only reads; otherwise it is a write, confirmed every time (default false).
    pub read_only: bool,
    /// Deadline of one run (default 30 s).
    pub timeout: Duration,
    /// Most bytes of output kept (default 64 KiB).
    pub max_output: u64,
}
