//! The typed shapes of what the daemon answers (I-3): `maven status`, `maven tools`,
//! `maven notes`, `maven mcp status`, `maven feeds status`, a turn, an enrollment link and what
//! the daemon holds of a server's OAuth authorization.
//!
//! The daemon builds them, IPC carries them as JSON, the command line and the page read them
//! back typed. The field order is the key order of the JSON (a stable interface); absent values
//! are null. A leaf: it names nothing of the crate.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the allowlist made of a server's last complete listing.
#[derive(Debug, Clone, Default)]
pub(crate) struct DiscoveryNote {
    /// "over cap: …" when the whole server was refused.
    pub(crate) over_cap: Option<String>,
    /// Tools not proposed, with the reason.
    pub(crate) refused: Vec<(String, String)>,
    /// The last error applying a listing to the store.
    pub(crate) error: Option<String>,
    /// Why the server is unstable (its tools change too often), while it is.
    pub(crate) unstable: Option<String>,
}

/// `maven status --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StatusView {
    pub(crate) version: String,
    pub(crate) uptime_s: u64,
    pub(crate) data_dir: String,
    pub(crate) mcp_servers: Vec<ServerStatusView>,
    pub(crate) feeds: Vec<FeedView>,
    pub(crate) acts: ActCounts,
    /// Log lines dropped since start-up because stderr did not keep up (see `logsink`).
    #[serde(default)]
    pub(crate) log_lines_dropped: u64,
    /// The page's limits and counters; null when the page is not running.
    #[serde(default)]
    pub(crate) web: Option<WebStatusView>,
    /// The daemon's limits and what they refused.
    #[serde(default)]
    pub(crate) limits: Option<LimitsView>,
}

/// The page in `maven status`: its connection limits, and the passphrase gate.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct WebStatusView {
    pub(crate) url: String,
    pub(crate) connections: usize,
    pub(crate) max_connections: usize,
    pub(crate) connections_refused: u64,
    pub(crate) header_deadline_s: u64,
    pub(crate) request_deadline_s: u64,
    pub(crate) sessions: usize,
    pub(crate) passphrase_verifications: u64,
    pub(crate) passphrase_attempts_refused: u64,
    /// Seconds until the passphrase lock lifts; null when not locked.
    pub(crate) passphrase_locked_for_s: Option<u64>,
    /// Whether the page serves only its owner's processes: "applies: …" on loopback,
    /// "does not apply: …" when `web.listen` is another address.
    #[serde(default)]
    pub(crate) peer_uid_check: String,
    /// Connections from another user's process closed at accept.
    #[serde(default)]
    pub(crate) connections_refused_other_uid: u64,
    /// Connection slots kept for signed-in sessions.
    #[serde(default)]
    pub(crate) reserved_connections: usize,
    /// How long a step-up keeps a session signed in (`web.session_hours`).
    #[serde(default)]
    pub(crate) session_hours: u64,
}

/// The daemon's own limits in `maven status`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct LimitsView {
    /// The open-descriptor limit the daemon runs under (`RLIMIT_NOFILE`, raised to its hard
    /// limit at start).
    pub(crate) descriptors: u64,
    /// Descriptors kept for the store, the log, MCP servers and feed polls.
    pub(crate) descriptors_reserved: u64,
    pub(crate) ipc_connections: usize,
    pub(crate) ipc_max_connections: usize,
    pub(crate) ipc_connections_refused: u64,
}

/// How many act rows are in each state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ActCounts {
    pub(crate) proposed: usize,
    pub(crate) enabled: usize,
    pub(crate) disabled: usize,
    pub(crate) withdrawn: usize,
}

impl ActCounts {
    /// Each state with its count, in the order of the JSON.
    pub(crate) fn pairs(&self) -> [(&'static str, usize); 4] {
        [
            ("proposed", self.proposed),
            ("enabled", self.enabled),
            ("disabled", self.disabled),
            ("withdrawn", self.withdrawn),
        ]
    }
}

/// One server of `maven mcp status --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ServerStatusView {
    pub(crate) name: String,
    /// "stdio" or "http".
    pub(crate) transport: String,
    /// Where it is, anything secret masked.
    pub(crate) target: String,
    pub(crate) enabled: bool,
    pub(crate) state: String,
    /// The trust level, spelled out.
    pub(crate) trust: String,
    pub(crate) protocol_version: Option<String>,
    /// "modern" (2026-07-28, stateless) or "legacy" (the initialize handshake).
    pub(crate) era: Option<String>,
    /// How the era was chosen (pinned by the configuration, server/discover, a fallback).
    pub(crate) era_chosen: Option<String>,
    pub(crate) server_info: Option<ServerInfo>,
    pub(crate) tools_offered: Option<usize>,
    pub(crate) tools_proposed: usize,
    pub(crate) tools_enabled: usize,
    pub(crate) tools_refused: Vec<RefusedTool>,
    pub(crate) last_error: Option<String>,
    pub(crate) next_retry: Option<String>,
    pub(crate) stderr_tail: Option<String>,
    pub(crate) violations: u64,
    pub(crate) dials: u64,
    /// Why the server is marked unstable (its tools change too often); null when it is not.
    #[serde(default)]
    pub(crate) unstable: Option<String>,
    /// An HTTP server's OAuth state ("needs authorization" or "authorized by ISSUER (…)" in
    /// JSON); never a token or a secret. Absent for a server that never asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) auth: Option<ServerAuth>,
}

/// Where an HTTP server's OAuth authorization stands, for status. JSON carries it as the text
/// the owner reads ([`std::fmt::Display`]): `"needs authorization"` or `"authorized by ISSUER
/// (TERMS)"`; code decides from the variant, never from that text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ServerAuth {
    /// The server asked (or its authorization was forgotten, refused or expired without a
    /// refresh token), and there is no usable authorization.
    NeedsAuthorization,
    /// Authorized by `issuer`; `terms` says with which scopes, until when, and whether it is
    /// refreshed ("scopes: a b; expires …; refresh yes").
    Authorized { issuer: String, terms: String },
}

const NEEDS_AUTHORIZATION: &str = "needs authorization";
const AUTHORIZED_BY: &str = "authorized by ";

impl std::fmt::Display for ServerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerAuth::NeedsAuthorization => f.write_str(NEEDS_AUTHORIZATION),
            ServerAuth::Authorized { issuer, terms } => {
                write!(f, "{AUTHORIZED_BY}{issuer} ({terms})")
            }
        }
    }
}

impl std::str::FromStr for ServerAuth {
    type Err = String;
    fn from_str(s: &str) -> Result<ServerAuth, String> {
        if s == NEEDS_AUTHORIZATION {
            return Ok(ServerAuth::NeedsAuthorization);
        }
        // An issuer is a URL: it has no space, so the first " (" ends it.
        s.strip_prefix(AUTHORIZED_BY)
            .and_then(|rest| rest.split_once(" ("))
            .and_then(|(issuer, terms)| Some((issuer, terms.strip_suffix(')')?)))
            .map(|(issuer, terms)| ServerAuth::Authorized {
                issuer: issuer.to_owned(),
                terms: terms.to_owned(),
            })
            .ok_or_else(|| format!("not an authorization state: {s:?}"))
    }
}

impl Serialize for ServerAuth {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ServerAuth {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ServerAuth, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A server's `serverInfo`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ServerInfo {
    pub(crate) name: String,
    pub(crate) version: String,
}

/// A tool the allowlist did not propose, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RefusedTool {
    pub(crate) tool: String,
    pub(crate) reason: String,
}

/// One feed of `maven feeds status --json`: the I-3 keys, then (once the poller runs) its
/// live state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FeedView {
    pub(crate) name: String,
    /// The URL, anything secret masked.
    pub(crate) url: String,
    pub(crate) enabled: bool,
    pub(crate) last_success: Option<String>,
    pub(crate) last_error: Option<String>,
    pub(crate) next_poll: Option<String>,
    pub(crate) items_noted: Option<u64>,
    /// Absent (no keys at all) while no poller runs.
    #[serde(flatten)]
    pub(crate) live: Option<FeedLive>,
}

/// What the poller adds to a feed's row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FeedLive {
    pub(crate) state: String,
    /// Where a redirect led (the config is never rewritten).
    pub(crate) moved_to: Option<String>,
    pub(crate) failures: u32,
    pub(crate) warning: Option<String>,
}

/// One row of `maven tools --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ToolView {
    pub(crate) name: String,
    pub(crate) state: String,
    pub(crate) destructive: bool,
    pub(crate) scope: String,
    pub(crate) cmd: Vec<String>,
    pub(crate) fingerprint: Option<String>,
    pub(crate) description: String,
    pub(crate) provenance: String,
    pub(crate) updated: Option<String>,
}

/// One row of `maven notes --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct NoteView {
    pub(crate) id: i64,
    pub(crate) source: String,
    pub(crate) key: String,
    pub(crate) text: String,
    pub(crate) link: Option<String>,
    pub(crate) created: Option<String>,
}

/// The answer to one turn (`maven say --json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TurnView {
    pub(crate) answer: String,
    /// The act awaiting a yes, if this turn asked for one.
    pub(crate) pending: Option<Value>,
    /// False when an act was refused or failed.
    pub(crate) ok: bool,
}

/// A server's question that the owner's next turn answers, as the page shows it: the
/// server's words exact (its message, then the address or one line per field), and what Maven
/// says after them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct QuestionView {
    pub(crate) server: String,
    pub(crate) act: String,
    pub(crate) words: String,
    pub(crate) how: String,
}

/// A one-time passkey enrollment link (the `web_enroll` method).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct EnrollLink {
    pub(crate) url: String,
    pub(crate) valid_s: u64,
}

/// A one-time link that starts a server's OAuth authorization on the page (the `mcp_login`
/// method).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct OAuthLink {
    /// The page's `/oauth/login#TOKEN`.
    pub(crate) url: String,
    /// How long it is valid, in seconds.
    pub(crate) valid_s: u64,
}

/// A server's OAuth credentials forgotten (the `mcp_logout` method and the page's Disconnect).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ForgottenView {
    pub(crate) server: String,
    /// Always true: an error is the other answer.
    pub(crate) forgotten: bool,
}

/// Where a server's OAuth authorization stands, as the daemon holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum AuthState {
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
pub(crate) struct AuthView {
    pub(crate) server: String,
    pub(crate) state: AuthState,
    pub(crate) issuer: Option<String>,
    #[serde(default)]
    pub(crate) scopes: Vec<String>,
    /// Unix seconds.
    pub(crate) expires_at: Option<u64>,
    /// Whether a refresh token is kept.
    pub(crate) refresh: Option<bool>,
    /// Why it needs authorization.
    pub(crate) reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::ServerAuth;

    #[test]
    fn a_servers_auth_state_is_the_text_status_has_always_shown() {
        let needs = ServerAuth::NeedsAuthorization;
        let by = ServerAuth::Authorized {
            issuer: "https://as.example".to_owned(),
            terms: "scopes: a b; expires 2026-01-01 00:00 UTC; refresh yes".to_owned(),
        };
        assert_eq!(
            serde_json::to_value(&needs).unwrap(),
            serde_json::json!("needs authorization")
        );
        assert_eq!(
            serde_json::to_value(&by).unwrap(),
            serde_json::json!(
                "authorized by https://as.example (scopes: a b; expires 2026-01-01 00:00 UTC; refresh yes)"
            )
        );
        for s in [needs, by] {
            let back: ServerAuth =
                serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
            assert_eq!(back, s, "read back as it was written");
        }
        assert!(serde_json::from_value::<ServerAuth>(serde_json::json!("authorized")).is_err());
    }
}
