//! The typed shapes of what the daemon answers (I-3): `maven status`, `maven tools`,
//! `maven notes`, `maven mcp status`, `maven feeds status`, `maven acts`, a turn, an enrollment
//! link and what the daemon holds of a server's OAuth authorization.
//!
//! The daemon builds them, IPC carries them as JSON, the command line and the page read them
//! back typed. The field order is the key order of the JSON (a stable interface); absent values
//! are null. A leaf: it names nothing of the crate.

use serde::{Deserialize, Serialize};

/// `maven status --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusView {
    /// The daemon's version.
    pub version: String,
    /// Seconds since the daemon started.
    pub uptime_s: u64,
    /// The data directory (absolute).
    pub data_dir: String,
    /// The configuration file the daemon reads, now and at each reload (absolute; it may not
    /// exist yet: the defaults).
    #[serde(default)]
    pub config: Option<String>,
    /// Every configured server, as `maven mcp status` shows it.
    pub mcp_servers: Vec<ServerStatusView>,
    /// Every configured feed, as `maven feeds status` shows it.
    pub feeds: Vec<FeedView>,
    /// How many act rows are in each state.
    pub acts: ActCounts,
    /// Log lines dropped since start-up because stderr did not keep up (see `logsink`).
    #[serde(default)]
    pub log_lines_dropped: u64,
    /// The page's limits and counters; null when the page is not running.
    #[serde(default)]
    pub web: Option<WebStatusView>,
    /// The daemon's limits and what they refused.
    #[serde(default)]
    pub limits: Option<LimitsView>,
    /// Which router chooses what a turn does, and how the model router last answered.
    #[serde(default)]
    pub router: Option<RouterView>,
}

/// The router in `maven status`: its kind, the model's endpoint (secrets masked), and how its
/// last request went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouterView {
    /// Which router it is.
    pub kind: RouterKindView,
    /// The chat-completions URL (`llm`); null for `rules`.
    pub endpoint: Option<String>,
    /// The model's name (`llm`).
    pub model: Option<String>,
    /// When the model last answered (RFC 3339); null when it never did.
    pub last_answer: Option<String>,
    /// Why its last request gave no decision, when it failed; null when it answered.
    pub last_error: Option<String>,
    /// When that request failed.
    pub last_error_at: Option<String>,
}

/// Which router chooses what a turn does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouterKindView {
    /// The rules router alone.
    Rules,
    /// A model router, the rules router its fallback.
    Llm,
}

/// The page in `maven status`: whether it listens, its connection limits, and the passphrase
/// gate.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WebStatusView {
    /// Whether the page listens now, or why not.
    #[serde(default)]
    pub listening: PageListening,
    /// The page's address.
    pub url: String,
    /// Connections open now.
    pub connections: usize,
    /// The most connections served at once (`web.max_connections`).
    pub max_connections: usize,
    /// Connections refused since start-up because every slot was taken.
    pub connections_refused: u64,
    /// Seconds a connection has for its request's headers.
    pub header_deadline_s: u64,
    /// Seconds a request has to be answered.
    pub request_deadline_s: u64,
    /// Sessions the page holds now.
    pub sessions: usize,
    /// Passphrases verified since start-up.
    pub passphrase_verifications: u64,
    /// Passphrase attempts refused since start-up (wrong, or while locked).
    pub passphrase_attempts_refused: u64,
    /// Seconds until the passphrase lock lifts; null when not locked.
    pub passphrase_locked_for_s: Option<u64>,
    /// Whether the page serves only its owner's processes: "applies: …" on loopback,
    /// "does not apply: …" when `web.listen` is another address.
    #[serde(default)]
    pub peer_uid_check: String,
    /// Connections from another user's process closed at accept.
    #[serde(default)]
    pub connections_refused_other_uid: u64,
    /// Connection slots kept for signed-in sessions.
    #[serde(default)]
    pub reserved_connections: usize,
    /// How long a step-up keeps a session signed in (`web.session_hours`).
    #[serde(default)]
    pub session_hours: u64,
}

/// Whether the page listens, as status says it. The JSON names the variant
/// (`{"listening": {"addr": "127.0.0.1:8765"}}`, `{"not_listening": {"why": …, "retrying":
/// true}}`); the owner reads its Display, and no reader parses it back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageListening {
    /// Bound and serving at `addr`.
    Listening {
        /// The address bound.
        addr: String,
    },
    /// Not bound: why the last attempt failed, and whether another one is coming (the
    /// listener retries a busy port with the one backoff).
    NotListening {
        /// Why the last attempt failed.
        why: String,
        /// Whether the listener tries again.
        retrying: bool,
    },
    /// A state this build does not name (an answer from a daemon of another version).
    #[default]
    #[serde(other)]
    Unknown,
}

impl std::fmt::Display for PageListening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageListening::Listening { addr } => write!(f, "listening on {addr}"),
            PageListening::NotListening {
                why,
                retrying: true,
            } => write!(f, "not listening: {why} (retrying)"),
            PageListening::NotListening {
                why,
                retrying: false,
            } => write!(f, "not listening: {why}"),
            PageListening::Unknown => f.write_str("in a state this version does not name"),
        }
    }
}

/// The daemon's own limits in `maven status`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LimitsView {
    /// The open-descriptor limit the daemon runs under (`RLIMIT_NOFILE`, raised to its hard
    /// limit at start).
    pub descriptors: u64,
    /// Descriptors kept for the store, the log, MCP servers and feed polls.
    pub descriptors_reserved: u64,
    /// IPC connections open now.
    pub ipc_connections: usize,
    /// The most IPC connections served at once.
    pub ipc_max_connections: usize,
    /// IPC connections refused since start-up because every slot was taken.
    pub ipc_connections_refused: u64,
}

/// How many act rows are in each state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ActCounts {
    /// Offered by a server or the configuration, waiting for the owner.
    pub proposed: usize,
    /// Enabled by the owner: they may run.
    pub enabled: usize,
    /// Disabled by the owner.
    pub disabled: usize,
    /// Withdrawn: no longer offered or no longer allowed.
    pub withdrawn: usize,
}

impl ActCounts {
    /// Each state with its count, in the order of the JSON.
    pub fn pairs(&self) -> [(&'static str, usize); 4] {
        [
            ("proposed", self.proposed),
            ("enabled", self.enabled),
            ("disabled", self.disabled),
            ("withdrawn", self.withdrawn),
        ]
    }
}

/// One server of `maven mcp status --json` (A-12).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerStatusView {
    /// The server's name in the configuration.
    pub name: String,
    /// How the daemon reaches it.
    pub transport: Transport,
    /// Where it is, anything secret masked.
    pub target: String,
    /// Whether the configuration enables it.
    pub enabled: bool,
    /// What it is doing.
    pub state: ServerState,
    /// The trust level, spelled out.
    pub trust: String,
    /// The MCP protocol version it speaks, once connected.
    pub protocol_version: Option<String>,
    /// "modern" (2026-07-28, stateless) or "legacy" (the initialize handshake).
    pub era: Option<String>,
    /// How the era was chosen (pinned by the configuration, server/discover, a fallback).
    pub era_chosen: Option<String>,
    /// Its `serverInfo`, once connected.
    pub server_info: Option<ServerInfo>,
    /// How many tools its last listing offered.
    pub tools_offered: Option<usize>,
    /// Its rows waiting for the owner.
    pub tools_proposed: usize,
    /// Its rows the owner enabled.
    pub tools_enabled: usize,
    /// The tools the allowlist did not propose, each with why.
    pub tools_refused: Vec<RefusedTool>,
    /// Why its last dial, handshake or listing failed.
    pub last_error: Option<String>,
    /// When it is dialled again (RFC 3339), while it backs off.
    pub next_retry: Option<String>,
    /// The last lines it wrote to stderr (a stdio server), its own words.
    pub stderr_tail: Option<String>,
    /// How many times it broke the protocol's bounds.
    pub violations: u64,
    /// How many times it was dialled since start-up.
    pub dials: u64,
    /// Why the server is marked unstable (its tools change too often); null when it is not.
    #[serde(default)]
    pub unstable: Option<String>,
    /// An HTTP server's OAuth state ("needs authorization" or "authorized by ISSUER (…)" in
    /// JSON); never a token or a secret. Absent for a server that never asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<ServerAuth>,
    /// What a server whose network goes through Maven's proxy did since the daemon started;
    /// absent for any other server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkView>,
}

/// The connections a sandboxed server made through Maven's proxy (and its granted endpoints).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkView {
    /// Connections accepted from the server.
    pub connections: u64,
    /// Of those, refused by Maven (an address the guard refuses, a host outside
    /// `sandbox.hosts`, a malformed request, too many at once).
    pub refused: u64,
    /// Open now.
    pub open: u64,
    /// Bytes the server sent out.
    pub bytes_out: u64,
    /// Bytes that came back to it.
    pub bytes_in: u64,
    /// Its last refused connections, newest first (at most five): what it asked for and why.
    #[serde(default)]
    pub last_refused: Vec<RefusedConnection>,
}

/// A connection Maven's proxy refused a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedConnection {
    /// When (RFC 3339).
    pub at: Option<String>,
    /// The host it asked for, as it wrote it.
    pub host: String,
    /// The port it asked for.
    pub port: u16,
    /// Why, as the proxy answered the server (it names the address a name resolved to).
    pub why: String,
}

/// Where an HTTP server's OAuth authorization stands, for status. The JSON is tagged by
/// `state` (`{"state": "needs_authorization"}`, `{"state": "authorized", "issuer": …, "terms":
/// …}`); the owner reads its [`std::fmt::Display`] ("authorized by ISSUER (TERMS)"), and code
/// decides from the variant, never from that text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerAuth {
    /// The server asked (or its authorization was forgotten, refused or expired without a
    /// refresh token), and there is no usable authorization.
    NeedsAuthorization,
    /// Authorized by `issuer`; `terms` says with which scopes, until when, and whether it is
    /// refreshed ("scopes: a b; expires …; refresh yes").
    Authorized {
        /// The authorization server that issued it.
        issuer: String,
        /// With which scopes, until when, and whether it is refreshed.
        terms: String,
    },
}

impl std::fmt::Display for ServerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerAuth::NeedsAuthorization => f.write_str("needs authorization"),
            ServerAuth::Authorized { issuer, terms } => {
                write!(f, "authorized by {issuer} ({terms})")
            }
        }
    }
}

/// How the daemon reaches a server: `"stdio"` (a child process) or `"http"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// A child process speaking over its stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

impl Transport {
    /// The word of the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a server is doing, as status says it. The JSON names the variant (`"ready"`,
/// `{"backing_off": {"until": "2026-11-30T05:08:27Z"}}`, `{"over_cap": SUMMARY}`); the owner
/// reads [`ServerState::text`] ("backing off until …"), and no reader parses it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// Not enabled by the configuration: never dialled.
    Dark,
    /// Enabled, and no manager runs for it (yet).
    NotConnected,
    /// A dial or handshake is under way.
    Connecting,
    /// Connected; its tools were listed (or are being listed).
    Ready,
    /// The last dial failed; the next one is at `until` (RFC 3339; `None` when the time has
    /// no such spelling, shown as `?`).
    BackingOff {
        /// When it is dialled again.
        until: Option<String>,
    },
    /// The server asks for an OAuth authorization the owner has not given.
    NeedsAuthorization,
    /// The manager stopped.
    Stopped,
    /// Connected, and the allowlist refused the whole server: its one-line summary.
    OverCap(String),
    /// Enabled, and not started because its sandbox cannot be applied (X-2).
    SandboxRefused,
    /// Enabled, and not started because its command does not exist (sandboxed or not).
    CommandNotFound,
    /// A state this build does not name (an answer from a daemon of another version): shown
    /// as such and never decided on.
    #[serde(other)]
    Unknown,
}

impl ServerState {
    /// The state as the owner reads it.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        use std::borrow::Cow::{Borrowed, Owned};
        match self {
            ServerState::Dark => Borrowed("dark"),
            ServerState::NotConnected => Borrowed("not connected"),
            ServerState::Connecting => Borrowed("connecting"),
            ServerState::Ready => Borrowed("ready"),
            ServerState::BackingOff { until } => Owned(format!(
                "backing off until {}",
                until.as_deref().unwrap_or("?")
            )),
            ServerState::NeedsAuthorization => Borrowed("needs authorization"),
            ServerState::Stopped => Borrowed("stopped"),
            ServerState::SandboxRefused => Borrowed("not started: its sandbox cannot be applied"),
            ServerState::CommandNotFound => Borrowed("not started: command not found"),
            ServerState::OverCap(s) => Borrowed(s),
            ServerState::Unknown => Borrowed("in a state this version does not name"),
        }
    }
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

/// A server's `serverInfo`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerInfo {
    /// The name the server gives itself.
    pub name: String,
    /// The version the server gives itself.
    pub version: String,
}

/// A tool the allowlist did not propose, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RefusedTool {
    /// The tool's name as the server offers it.
    pub tool: String,
    /// Why it was not proposed.
    pub reason: String,
}

/// One feed of `maven feeds status --json`: the I-3 keys, then (once the poller runs) its
/// live state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FeedView {
    /// The feed's name in the configuration.
    pub name: String,
    /// The URL, anything secret masked.
    pub url: String,
    /// Whether the configuration enables it.
    pub enabled: bool,
    /// When it was last polled well (RFC 3339).
    pub last_success: Option<String>,
    /// Why its last poll failed.
    pub last_error: Option<String>,
    /// When it is polled next (RFC 3339).
    pub next_poll: Option<String>,
    /// How many of its items are noted.
    pub items_noted: Option<u64>,
    /// Absent (no keys at all) while no poller runs.
    #[serde(flatten)]
    pub live: Option<FeedLive>,
}

/// One feed of `maven feeds refresh`: polled now (with what it noted, or its error), or held
/// back (why, and when it may be polled).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RefreshView {
    /// The feed's name in the configuration.
    pub name: String,
    /// Whether it was polled now.
    pub polled: bool,
    /// Notes written by the poll (0 for a 304).
    pub noted: Option<u32>,
    /// Why the poll failed.
    pub error: Option<String>,
    /// Why it was not polled.
    pub held_back: Option<String>,
    /// When a feed held back may be polled (RFC 3339).
    pub until: Option<String>,
}

/// What the poller adds to a feed's row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FeedLive {
    /// Where its schedule stands: `off`, `scheduled`, `polling`, `backing off` or `disabled`.
    pub state: String,
    /// Where a redirect led (the config is never rewritten).
    pub moved_to: Option<String>,
    /// Polls that failed in a row.
    pub failures: u32,
    /// What its last poll warned of (its own words, shown through `shown`).
    pub warning: Option<String>,
    /// The last poll was refused by the feed's door (present only then).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
}

/// One row of `maven tools --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolView {
    /// The act's local name.
    pub name: String,
    /// Its state: `proposed`, `enabled`, `disabled` or `withdrawn`.
    pub state: String,
    /// Whether it may write (the allowlist's verdict).
    pub destructive: bool,
    /// Where it comes from in the store's terms: `mcp:SERVER` or `local`.
    pub scope: String,
    /// `["mcp", server, tool]`, or a local act's argv.
    pub cmd: Vec<String>,
    /// The fingerprint of its declared shape, with its scheme prefix.
    pub fingerprint: Option<String>,
    /// What it says it does, in its own words.
    pub description: String,
    /// Why the row exists (who proposed it, when, from where).
    pub provenance: String,
    /// When its state last changed (RFC 3339).
    pub updated: Option<String>,
}

/// One act as the page's API shows it (`GET /api/tools`, and the answer of an enable or a
/// disable): its `maven tools` row (the description capped), then what the page adds.
#[derive(Debug, Clone, Serialize)]
pub struct PageToolView {
    /// Its `maven tools` row.
    #[serde(flatten)]
    pub row: ToolView,
    /// "mcp" or "local".
    pub kind: &'static str,
    /// What changed since the owner approved its shape.
    pub changed: Vec<ShapeChangeView>,
    /// Its latest state changes, newest first.
    pub history: Vec<ToolEventView>,
    /// The buttons it gets.
    pub actions: &'static [PageAction],
}

/// An act row's state, as the page decides on it (the store's states, by the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActState {
    /// Offered, waiting for the owner.
    Proposed,
    /// Approved by the owner; may run.
    Enabled,
    /// Turned off by the owner; never runs.
    Disabled,
    /// No longer offered or allowed; never runs.
    Withdrawn,
}

impl ActState {
    /// Every state, in the order the page lists them.
    pub const ALL: [ActState; 4] = [
        ActState::Proposed,
        ActState::Enabled,
        ActState::Disabled,
        ActState::Withdrawn,
    ];

    /// Its name: `proposed`, `enabled`, `disabled`, `withdrawn`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActState::Proposed => "proposed",
            ActState::Enabled => "enabled",
            ActState::Disabled => "disabled",
            ActState::Withdrawn => "withdrawn",
        }
    }
}

impl std::fmt::Display for ActState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One act row as the page draws it and decides on it, read by the daemon from the store:
/// its `maven tools` row with the description capped (A-9), what the cards group and badge it
/// by, and its latest state changes. The page's API answers a [`PageToolView`] made of it.
#[derive(Debug, Clone)]
pub struct PageTool {
    /// Its `maven tools` row, the description capped.
    pub row: ToolView,
    /// Its server's name; empty for the configuration's own acts.
    pub server: String,
    /// "mcp" or "local".
    pub kind: &'static str,
    /// Its state.
    pub state: ActState,
    /// The states it may become (the store's transitions).
    pub can_become: Vec<ActState>,
    /// The `title` of its declared shape, capped; absent when it has none.
    pub title: Option<String>,
    /// What changed since the owner approved its shape.
    pub changed: Vec<ShapeChangeView>,
    /// Its latest state changes, newest first.
    pub history: Vec<ToolEventView>,
}

/// A button of an act's card: a transition the owner makes (never "run"). On the wire its
/// snake_case name, which is also the last segment of its `POST /api/tools/NAME/…`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageAction {
    /// Make a proposed or disabled row runnable.
    Enable,
    /// Stop an enabled row from running.
    Disable,
}

impl PageAction {
    /// Its name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            PageAction::Enable => "enable",
            PageAction::Disable => "disable",
        }
    }

    /// What its button says.
    pub fn label(self) -> &'static str {
        match self {
            PageAction::Enable => "Enable",
            PageAction::Disable => "Disable",
        }
    }
}

/// The answer of a server's "Enable all read-only" (`POST
/// /api/mcp_servers/NAME/enable_read_only`): the rows enabled, and those of that server still
/// waiting for the owner, each with why it was left.
#[derive(Debug, Clone, Serialize)]
pub struct ReadOnlyEnabledView {
    /// The server's name.
    pub server: String,
    /// The rows enabled.
    pub enabled: Vec<String>,
    /// The rows left as they were, each with why.
    pub left: Vec<LeftView>,
}

/// A row a bulk enable left as it was, and why.
#[derive(Debug, Clone, Serialize)]
pub struct LeftView {
    /// The row's name.
    pub name: String,
    /// Why it was left.
    pub why: &'static str,
}

/// One field of a shape that changed since its approval.
#[derive(Debug, Clone, Serialize)]
pub struct ShapeChangeView {
    /// The field's name.
    pub field: String,
    /// What the owner approved; null when it had none.
    pub approved: Option<String>,
    /// What it is now; null when it is gone.
    pub now: Option<String>,
}

/// One state change of an act.
#[derive(Debug, Clone, Serialize)]
pub struct ToolEventView {
    /// When (RFC 3339).
    pub at: Option<String>,
    /// Null when the row was created.
    pub from: Option<&'static str>,
    /// The state it went to.
    pub to: &'static str,
    /// Who changed it (the owner's step-up, discovery, the configuration).
    pub actor: String,
    /// Why, in words.
    pub reason: String,
}

/// One row of `maven notes --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NoteView {
    /// The note's row id.
    pub id: i64,
    /// Where it came from (`feed:NAME`, …).
    pub source: String,
    /// Its key within its source (what "noted exactly once" compares).
    pub key: String,
    /// Its text.
    pub text: String,
    /// Its link.
    pub link: Option<String>,
    /// When it was noted (RFC 3339).
    pub created: Option<String>,
    /// When the item says it was published (RFC 3339), when its feed gave a date.
    #[serde(default)]
    pub published: Option<String>,
}

/// The answer to one turn (`maven say --json`): the turn's structured answer (its parts, the
/// act, what the next turn answers, the language, whether it went well), and `answer`, the
/// same rendered as text for a reader that shows text.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TurnView {
    /// The answer rendered as text.
    pub answer: String,
    /// Which sentence template matched, or why none did (`maven say --explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<String>,
    /// The turn's structured answer.
    #[serde(flatten)]
    pub turn: turns::Answer,
}

/// A step-up made on the page (`/api/stepup/*`): how, and for how long it stays fresh.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepUpReply {
    /// How the owner stepped up: "passphrase", or "passkey ID".
    pub step_up: String,
    /// Seconds it stays fresh.
    pub fresh_for_s: u64,
}

/// A passkey enrolled on the page: how its step-ups are named ("passkey ID").
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnrolledReply {
    /// How the passkey's step-ups are named ("passkey ID").
    pub enrolled: String,
}

/// An OAuth authorization begun on the page: where the browser goes next.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuthorizeReply {
    /// The server's name.
    pub server: String,
    /// Its authorization server.
    pub issuer: String,
    /// The authorization server's URL, with the request in its query.
    pub redirect: String,
}

/// A one-time passkey enrollment link (the `web_enroll` method).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnrollLink {
    /// The page's `/enroll#TOKEN`.
    pub url: String,
    /// How long it is valid, in seconds.
    pub valid_s: u64,
}

/// One executed act as the page's recent acts show it (`GET /api/acts_log`).
#[derive(Debug, Clone, Serialize)]
pub struct ActView {
    /// The act's row id in `acts_log`.
    pub id: i64,
    /// When it ran (RFC 3339).
    pub at: Option<String>,
    /// The act's local name.
    pub tool: String,
    /// The turn that ran it, cut to 200 characters.
    pub utterance: String,
    /// The turn that confirmed it, for a destructive act.
    pub confirmed_by: Option<String>,
    /// Whether it went well.
    pub ok: bool,
    /// `ok`, `failed` or `unknown` (the store's `result` column).
    pub outcome: &'static str,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
}

/// One recorded act of `maven acts --json` (the `acts` method), newest first: when, what, who
/// confirmed it, what became of it and the first line of what it returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActRecordView {
    /// The act's row id in `acts_log`.
    pub id: i64,
    /// When it was recorded, just before it ran (RFC 3339).
    pub at: Option<String>,
    /// The act's local name.
    pub act: String,
    /// The turn that asked for it, cut to 200 characters.
    pub utterance: String,
    /// The arguments it ran with, exactly (a local act's: its argv).
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// Who confirmed it (a destructive act); null for one that needed no confirmation.
    pub confirmed_by: Option<String>,
    /// `ok`, `failed` or `unknown` (sent, and no answer came: it may have run).
    pub outcome: String,
    /// How long it ran, in milliseconds (0 while it runs).
    pub duration_ms: u64,
    /// The first line of what it returned (of the error, for a failure; why the outcome is
    /// unknown); the server's words, exact: a terminal shows them only through `shown`.
    pub result: String,
}

/// A one-time link that starts a server's OAuth authorization on the page (the `mcp_login`
/// method).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OAuthLink {
    /// The page's `/oauth/login#TOKEN`.
    pub url: String,
    /// How long it is valid, in seconds.
    pub valid_s: u64,
}

/// A server's OAuth credentials forgotten (the `mcp_logout` method and the page's Disconnect).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForgottenView {
    /// The server's name.
    pub server: String,
    /// Always true: an error is the other answer.
    pub forgotten: bool,
}

/// What the page's session may do now: `GET /api/session`, and what the page's cards are
/// drawn from. The page's script reads the step-up replies, not this; the cards carry
/// `passkeys` and `passphrase` as the step-up card's `data-` attributes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionView {
    /// The token every POST sends back (`x-csrf-token`).
    pub csrf_token: String,
    /// Seconds the session stays signed in; null when it is not signed in.
    pub signed_in_for_s: Option<u64>,
    /// The step-up that is still fresh; null when there is none.
    pub step_up: Option<FreshStepUpView>,
    /// How many passkeys are enrolled.
    pub passkeys: usize,
    /// Whether a passphrase is configured (`web.passphrase_hash`).
    pub passphrase: bool,
}

/// A session's step-up while it is fresh.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FreshStepUpView {
    /// How it was made: "passphrase", or "passkey ID".
    pub method: String,
    /// Seconds it stays fresh.
    pub fresh_for_s: u64,
}

/// Where a server's OAuth authorization stands, as the daemon holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AuthState {
    /// A usable token (or one the daemon refreshes).
    #[serde(rename = "authorized")]
    Authorized,
    /// The server asked, and there is no usable authorization: `reason` says why.
    #[serde(rename = "needs authorization")]
    NeedsAuthorization,
    /// The server never asked for one.
    #[serde(rename = "not asked")]
    NotAsked,
}

/// What the daemon holds of one server's OAuth authorization (the `mcp_auth` method, which
/// `maven mcp inspect` asks instead of opening the store). Never a token or a secret.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuthView {
    /// The server's name.
    pub server: String,
    /// Where its authorization stands.
    pub state: AuthState,
    /// The authorization server that issued it.
    pub issuer: Option<String>,
    /// The scopes granted.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Unix seconds.
    pub expires_at: Option<u64>,
    /// Whether a refresh token is kept.
    pub refresh: Option<bool>,
    /// Why it needs authorization.
    pub reason: Option<String>,
    /// The grant that needs no person the tokens come by (`oauth.grant`:
    /// `client_credentials`, `enterprise`, `jwt_bearer`); absent for the owner's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn transports_are_the_words_of_the_json() {
        for (t, word) in [(Transport::Stdio, "stdio"), (Transport::Http, "http")] {
            assert_eq!(serde_json::to_value(t).unwrap(), json!(word));
            assert_eq!(serde_json::from_value::<Transport>(json!(word)).unwrap(), t);
            assert_eq!(t.to_string(), word);
        }
        assert!(serde_json::from_value::<Transport>(json!("sse")).is_err());
    }

    #[test]
    fn server_states_are_named_by_their_variant_on_the_wire_and_read_back() {
        let over = "over cap: the server offers 13 tools, more than max_tools (12), and allow_tools is not set";
        for (s, wire, text) in [
            (ServerState::Dark, json!("dark"), "dark"),
            (
                ServerState::NotConnected,
                json!("not_connected"),
                "not connected",
            ),
            (ServerState::Connecting, json!("connecting"), "connecting"),
            (ServerState::Ready, json!("ready"), "ready"),
            (
                ServerState::BackingOff {
                    until: Some("2026-11-30T05:08:27Z".into()),
                },
                json!({"backing_off": {"until": "2026-11-30T05:08:27Z"}}),
                "backing off until 2026-11-30T05:08:27Z",
            ),
            (
                ServerState::BackingOff { until: None },
                json!({"backing_off": {"until": null}}),
                "backing off until ?",
            ),
            (
                ServerState::NeedsAuthorization,
                json!("needs_authorization"),
                "needs authorization",
            ),
            (ServerState::Stopped, json!("stopped"), "stopped"),
            (
                ServerState::OverCap(over.into()),
                json!({ "over_cap": over }),
                over,
            ),
            (
                ServerState::SandboxRefused,
                json!("sandbox_refused"),
                "not started: its sandbox cannot be applied",
            ),
            (
                ServerState::CommandNotFound,
                json!("command_not_found"),
                "not started: command not found",
            ),
        ] {
            assert_eq!(serde_json::to_value(&s).unwrap(), wire, "{s:?}");
            assert_eq!(serde_json::from_value::<ServerState>(wire).unwrap(), s);
            assert_eq!(s.to_string(), text);
        }
        // The words people read are never read back as a state.
        assert_eq!(
            serde_json::from_value::<ServerState>(json!("needs authorization")).unwrap(),
            ServerState::Unknown
        );
        assert_eq!(
            serde_json::from_value::<ServerState>(json!("warming_up")).unwrap(),
            ServerState::Unknown
        );
    }

    #[test]
    fn the_pages_listening_is_named_by_its_variant_on_the_wire_and_read_back() {
        for (s, wire, text) in [
            (
                PageListening::Listening {
                    addr: "127.0.0.1:8765".into(),
                },
                json!({"listening": {"addr": "127.0.0.1:8765"}}),
                "listening on 127.0.0.1:8765",
            ),
            (
                PageListening::NotListening {
                    why: "cannot listen on 127.0.0.1:8765 (web.listen): Address in use".into(),
                    retrying: true,
                },
                json!({"not_listening": {
                    "why": "cannot listen on 127.0.0.1:8765 (web.listen): Address in use",
                    "retrying": true}}),
                "not listening: cannot listen on 127.0.0.1:8765 (web.listen): Address in use (retrying)",
            ),
            (
                PageListening::NotListening {
                    why: "no WebAuthn".into(),
                    retrying: false,
                },
                json!({"not_listening": {"why": "no WebAuthn", "retrying": false}}),
                "not listening: no WebAuthn",
            ),
        ] {
            assert_eq!(serde_json::to_value(&s).unwrap(), wire);
            assert_eq!(serde_json::from_value::<PageListening>(wire).unwrap(), s);
            assert_eq!(s.to_string(), text);
        }
        assert_eq!(
            serde_json::from_value::<PageListening>(json!("warming_up")).unwrap(),
            PageListening::Unknown
        );
        // A reply without the key (another version's daemon) reads as not named.
        let w: WebStatusView = serde_json::from_value(json!({
            "url": "u", "connections": 0, "max_connections": 1, "connections_refused": 0,
            "header_deadline_s": 1, "request_deadline_s": 1, "sessions": 0,
            "passphrase_verifications": 0, "passphrase_attempts_refused": 0,
            "passphrase_locked_for_s": null}))
        .unwrap();
        assert_eq!(w.listening, PageListening::Unknown);
    }

    #[test]
    fn the_session_view_has_the_keys_its_readers_use() {
        // `GET /api/session`: the tests and a browser read `csrf_token` and `signed_in_for_s`.
        let v = serde_json::to_value(SessionView {
            csrf_token: "c".into(),
            signed_in_for_s: Some(7),
            step_up: Some(FreshStepUpView {
                method: "passphrase".into(),
                fresh_for_s: 300,
            }),
            passkeys: 1,
            passphrase: true,
        })
        .unwrap();
        assert_eq!(
            v.to_string(),
            r#"{"csrf_token":"c","signed_in_for_s":7,"step_up":{"method":"passphrase","fresh_for_s":300},"passkeys":1,"passphrase":true}"#
        );
        let signed_out = serde_json::to_value(SessionView {
            csrf_token: "c".into(),
            signed_in_for_s: None,
            step_up: None,
            passkeys: 0,
            passphrase: false,
        })
        .unwrap();
        assert_eq!(signed_out["signed_in_for_s"], json!(null));
        assert_eq!(signed_out["step_up"], json!(null));
    }

    #[test]
    fn a_page_tool_is_its_tools_row_then_what_the_page_adds() {
        let v = serde_json::to_value(PageToolView {
            row: ToolView {
                name: "a".into(),
                state: "proposed".into(),
                destructive: false,
                scope: "read".into(),
                cmd: vec![],
                fingerprint: None,
                description: "d".into(),
                provenance: "-".into(),
                updated: None,
            },
            kind: "mcp",
            changed: vec![ShapeChangeView {
                field: "description".into(),
                approved: Some("x".into()),
                now: None,
            }],
            history: vec![ToolEventView {
                at: None,
                from: None,
                to: "proposed",
                actor: "discovery".into(),
                reason: "offered".into(),
            }],
            actions: &[PageAction::Enable, PageAction::Disable],
        })
        .unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "name",
                "state",
                "destructive",
                "scope",
                "cmd",
                "fingerprint",
                "description",
                "provenance",
                "updated",
                "kind",
                "changed",
                "history",
                "actions"
            ]
        );
        assert_eq!(
            v["changed"],
            json!([{"field": "description", "approved": "x", "now": null}])
        );
        assert_eq!(
            v["history"],
            json!([{"at": null, "from": null, "to": "proposed", "actor": "discovery", "reason": "offered"}])
        );
    }

    #[test]
    fn a_server_status_keeps_its_json_shape() {
        let v = json!({
            "name": "n", "transport": "http", "target": "https://a.example/mcp",
            "enabled": true, "state": "ready", "trust": "remote endpoint",
            "protocol_version": null, "era": null, "era_chosen": null, "server_info": null,
            "tools_offered": null, "tools_proposed": 0, "tools_enabled": 0,
            "tools_refused": [], "last_error": null, "next_retry": null, "stderr_tail": null,
            "violations": 0, "dials": 1, "unstable": null,
        });
        let s: ServerStatusView = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(s.transport, Transport::Http);
        assert_eq!(s.state, ServerState::Ready);
        assert_eq!(serde_json::to_value(&s).unwrap(), v);
    }

    #[test]
    fn a_servers_auth_state_is_tagged_on_the_wire_and_said_in_words() {
        let needs = ServerAuth::NeedsAuthorization;
        let by = ServerAuth::Authorized {
            issuer: "https://as.example".to_owned(),
            terms: "scopes: a b; expires 2026-01-01 00:00 UTC; refresh yes".to_owned(),
        };
        assert_eq!(
            serde_json::to_value(&needs).unwrap(),
            serde_json::json!({"state": "needs_authorization"})
        );
        assert_eq!(
            serde_json::to_value(&by).unwrap(),
            serde_json::json!({"state": "authorized", "issuer": "https://as.example",
                "terms": "scopes: a b; expires 2026-01-01 00:00 UTC; refresh yes"})
        );
        assert_eq!(
            by.to_string(),
            "authorized by https://as.example (scopes: a b; expires 2026-01-01 00:00 UTC; refresh yes)"
        );
        for s in [needs, by] {
            let back: ServerAuth =
                serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
            assert_eq!(back, s, "read back as it was written");
        }
        // The words people read are not a state.
        assert!(
            serde_json::from_value::<ServerAuth>(serde_json::json!("needs authorization")).is_err()
        );
    }
}

/// `maven reload --json`: what a reload of the configuration did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReloadView {
    /// The file read (`None`: no file, every default).
    pub config: Option<String>,
    /// Servers new to the file: started.
    pub added: Vec<String>,
    /// Servers gone from the file: stopped.
    pub removed: Vec<String>,
    /// Servers whose block changed: stopped and started afresh.
    pub restarted: Vec<String>,
    /// Servers left running as they were.
    pub kept: Vec<String>,
    /// Unchanged servers that were backing off after failed dials: dialled again now (what
    /// they lacked may be there now).
    pub retried: Vec<String>,
    /// Of the servers added or changed, those written `"enabled": false`: known, never dialled.
    pub not_enabled: Vec<String>,
    /// Enabled servers that could not be started, each with why (its command is not found,
    /// its sandbox cannot be applied): the same words as `maven mcp status`.
    #[serde(default)]
    pub not_started: Vec<(String, String)>,
    /// Whether the feeds' poller was restarted on the new feeds.
    pub feeds_restarted: bool,
    /// Whether the router was made afresh.
    pub router_changed: bool,
    /// Whether the configuration's acts changed (new ones are proposed).
    pub acts_changed: bool,
    /// Rows withdrawn because the configuration no longer allows them (`allow_tools`,
    /// `max_tools`), each with why.
    pub withdrawn: Vec<(String, String)>,
    /// Whether the page was served afresh (its sessions ended: the owner signs in again).
    pub page_restarted: bool,
    /// Whether the voice listener was started afresh.
    pub voice_restarted: bool,
}
