//! The daemon's values into the views of the stable machine-readable interface (I-3, the
//! `wire` crate): store, config, poller, mcp and oauth values, secrets masked. Times are
//! RFC 3339 UTC; absent values are null.

use time::OffsetDateTime;

use config::{FeedConfig, McpServerConfig, McpTarget};

use wire::views::{
    ActRecordView, AuthState, AuthView, FeedLive, FeedView, NoteView, RefusedTool, ServerAuth,
    ServerInfo, ServerState, ServerStatusView, ToolView, Transport,
};

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

/// The view of a client target's transport (the config's `McpTarget` is one).
pub(crate) fn transport<S, D>(t: &mcp::Transport<S, D>) -> Transport {
    match t {
        mcp::Transport::Stdio { .. } => Transport::Stdio,
        mcp::Transport::Http { .. } => Transport::Http,
    }
}

/// RFC 3339 in UTC (e.g. `2026-11-30T05:08:27Z`), or `None` for a time that has no such
/// spelling.
pub(crate) fn time_str(t: OffsetDateTime) -> Option<String> {
    Some(store::rfc3339(t)).filter(|s| !s.is_empty())
}

/// What one HTTP server's authorization holds now (no token, no secret): the one reading of
/// it, for `mcp_auth` and for status ([`server_auth`]). Never waits.
pub(crate) fn auth_view(o: &::oauth::OAuth) -> AuthView {
    let mut v = AuthView {
        server: o.server().to_owned(),
        state: AuthState::NotAsked,
        issuer: None,
        scopes: Vec::new(),
        expires_at: None,
        refresh: None,
        reason: None,
        grant: Some(o.grant())
            .filter(|g| !g.needs_owner())
            .map(|g| g.as_str().to_owned()),
    };
    match o.status_now() {
        ::oauth::AuthStatus::Authorized {
            issuer,
            scopes,
            expires_at,
            refresh,
        } => {
            v.state = AuthState::Authorized;
            v.issuer = Some(issuer);
            v.scopes = scopes;
            v.expires_at = expires_at;
            v.refresh = Some(refresh);
        }
        ::oauth::AuthStatus::NeedsAuthorization => {
            if let Some(why) = o.needs_authorization() {
                v.state = AuthState::NeedsAuthorization;
                v.reason = Some(why);
            }
        }
    }
    v
}

/// One HTTP server's OAuth state as status shows it: needs authorization once it asked (or its
/// authorization was forgotten, refused or expired without a refresh token), or authorized by
/// ISSUER with its scopes, its expiry and whether it is refreshed; `None` while it never asked.
pub(crate) fn server_auth(v: &AuthView) -> Option<ServerAuth> {
    match v.state {
        AuthState::NotAsked => None,
        AuthState::NeedsAuthorization => Some(ServerAuth::NeedsAuthorization),
        AuthState::Authorized => {
            let at = v
                .expires_at
                .and_then(|e| i64::try_from(e).ok())
                .and_then(|e| OffsetDateTime::from_unix_timestamp(e).ok());
            let expiry = at
                .and_then(time_str)
                .unwrap_or_else(|| "no expiry given".to_owned());
            let refresh = match (v.refresh == Some(true), at) {
                (true, _) => "refresh yes".to_owned(),
                (false, _) if v.grant.is_some() => {
                    "no refresh token: the grant is made again when it expires".to_owned()
                }
                (false, Some(t)) => format!(
                    "no refresh token: you will be asked again at {:02}:{:02} UTC",
                    t.hour(),
                    t.minute()
                ),
                (false, None) => "no refresh token".to_owned(),
            };
            let scopes = if v.scopes.is_empty() {
                "none".to_owned()
            } else {
                v.scopes.join(" ")
            };
            let grant = v
                .grant
                .as_ref()
                .map(|g| format!("grant {g}; "))
                .unwrap_or_default();
            Some(ServerAuth::Authorized {
                issuer: v.issuer.clone().unwrap_or_default(),
                terms: format!("{grant}scopes: {scopes}; expires {expiry}; {refresh}"),
            })
        }
    }
}

/// One row of `maven tools --json`.
pub(crate) fn tool(r: &store::ToolRow) -> ToolView {
    ToolView {
        name: r.name.clone(),
        state: r.state.as_str().to_owned(),
        destructive: r.destructive,
        scope: r.scope.clone(),
        cmd: r.cmd.clone(),
        fingerprint: r.fingerprint.clone(),
        description: r.description.clone(),
        provenance: r.provenance.clone(),
        updated: time_str(r.updated),
    }
}

/// One row of `maven notes --json`.
pub(crate) fn note(n: &store::Note) -> NoteView {
    NoteView {
        id: n.id,
        source: n.source.clone(),
        key: n.key.clone(),
        text: n.text.clone(),
        link: n.link.clone(),
        created: time_str(n.created),
        published: n.published.and_then(time_str),
    }
}

/// One row of `maven acts --json`: the stored outcome text ("ok: LINE", "error: LINE",
/// "unknown: WHY") split into its word, which the row's `result` column decides, and its line.
pub(crate) fn act_record(a: &store::ActLogRow) -> ActRecordView {
    let line = ["ok:", "error:", store::OUTCOME_UNKNOWN]
        .iter()
        .find_map(|p| a.outcome.strip_prefix(p))
        .unwrap_or(if a.outcome == "ok" { "" } else { &a.outcome });
    ActRecordView {
        id: a.id,
        at: time_str(a.at),
        act: a.tool.clone(),
        utterance: shown::cut(&a.utterance, 200).into_owned(),
        arguments: a.arguments.clone(),
        confirmed_by: a.confirmed_by.clone(),
        outcome: a.result().as_str().to_owned(),
        duration_ms: a.duration_ms,
        result: line.trim().to_owned(),
    }
}

/// What an unsandboxed local server may do (`"sandbox": false`).
pub(crate) const UNSANDBOXED: &str =
    "unsandboxed local process: runs as you, with your files and your network";

/// The trust level of a server, spelled out.
pub(crate) fn trust(s: &McpServerConfig) -> String {
    match (&s.target, &s.sandbox) {
        (McpTarget::Stdio { .. }, Some(p)) => p.trust(),
        (McpTarget::Stdio { .. }, None) => UNSANDBOXED.to_owned(),
        (McpTarget::Http { door, .. }, _) if door.allow_private => {
            "LAN endpoint (allow_private)".to_owned()
        }
        (McpTarget::Http { .. }, _) => "remote endpoint".to_owned(),
    }
}

/// What a secret-looking literal is shown as.
pub(crate) const HIDDEN: &str = "…(hidden)";

/// Flags whose value is a secret: `--token X`, `--api-key=X`.
pub(crate) fn secret_flag(word: &str) -> bool {
    let Some(name) = word.strip_prefix('-') else {
        return false;
    };
    let name = name
        .trim_start_matches('-')
        .to_ascii_lowercase()
        .replace('_', "-");
    [
        "token",
        "password",
        "passwd",
        "passphrase",
        "api-key",
        "apikey",
        "secret",
        "client-secret",
        "access-token",
        "auth-token",
        "pat",
    ]
    .iter()
    .any(|f| name == *f || name.ends_with(&format!("-{f}")))
}

/// Known shapes of tokens: a prefix and at least [`TOKEN_TAIL`] characters of
/// `[A-Za-z0-9_-]` after it.
const TOKEN_SHAPES: &[&str] = &[
    "github_pat_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "glpat-",
    "sk-",
    "sk_live_",
    "rk_live_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxr-",
    "xoxs-",
    "xapp-",
    "AKIA",
];
const TOKEN_TAIL: usize = 10;

/// Where in `word` a known token shape begins (at the start or after a character that is not
/// a letter or digit), if anywhere.
fn token_at(word: &str) -> Option<usize> {
    let tokenish = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    word.char_indices()
        .filter(|(i, _)| {
            *i == 0
                || word[..*i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| !c.is_ascii_alphanumeric())
        })
        .find_map(|(i, _)| {
            let rest = &word[i..];
            TOKEN_SHAPES.iter().find_map(|p| {
                let tail = rest.strip_prefix(p)?;
                let n = tail.chars().take_while(|c| tokenish(*c)).count();
                (n >= TOKEN_TAIL).then_some(i)
            })
        })
}

/// A URL's password (`scheme://user:password@host`) masked.
fn mask_userinfo(word: &str) -> String {
    let Some(scheme_end) = word.find("://") else {
        return word.to_owned();
    };
    let auth_start = scheme_end + 3;
    let rest = &word[auth_start..];
    let auth_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..auth_len].rfind('@') else {
        return word.to_owned();
    };
    match rest[..at].split_once(':') {
        Some((user, pass)) if !pass.is_empty() && !pass.contains("${") => {
            format!("{}{user}:{HIDDEN}{}", &word[..auth_start], &rest[at..])
        }
        _ => word.to_owned(),
    }
}

/// A query parameter whose name says it carries a secret.
fn secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "token", "key", "secret", "password", "passwd", "sig", "auth", "code",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// One word of a target with its secret-looking literal masked; `after_flag` when the word
/// before it was a secret flag. A `${NAME}` reference is shown as it is.
pub(crate) fn mask_word(word: &str, after_flag: bool) -> String {
    if after_flag && !word.starts_with("${") {
        return HIDDEN.to_owned();
    }
    if let Some((flag, value)) = word.split_once('=') {
        if secret_flag(flag) && !value.starts_with("${") {
            return format!("{flag}={HIDDEN}");
        }
    }
    let mut w = mask_userinfo(word);
    if let Some(q) = w.find('?').filter(|_| w.contains("://")) {
        let (base, query) = w.split_at(q + 1);
        let masked: Vec<String> = query
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) if secret_param(k) && !v.is_empty() && !v.starts_with("${") => {
                    format!("{k}={HIDDEN}")
                }
                _ => kv.to_owned(),
            })
            .collect();
        w = format!("{base}{}", masked.join("&"));
    }
    if let Some(i) = token_at(&w) {
        w.truncate(i);
        w.push_str(HIDDEN);
    }
    w
}

/// Where a server is, as the configuration writes it (`${NAME}` references unexpanded), with
/// every literal that looks secret shown as [`HIDDEN`]: a URL's password, the value after
/// `--token`, `--password`, `--api-key`, `--secret` (and their `=` forms), a secret-named
/// query parameter, and the known token shapes (`ghp_…`, `github_pat_…`, `sk-…`, `xox…`).
pub(crate) fn target(written: &str) -> String {
    let mut out = Vec::new();
    let mut after_flag = false;
    for word in written.split(' ') {
        out.push(mask_word(word, after_flag));
        after_flag = secret_flag(word) && !word.contains('=');
    }
    out.join(" ")
}

pub(crate) fn mask_url(u: &str) -> String {
    match url::Url::parse(u) {
        Ok(mut p) => {
            if !p.username().is_empty() || p.password().is_some() {
                let _ = p.set_username("••••");
                let _ = p.set_password(None);
            }
            if p.query().is_some() {
                p.set_query(Some("••••"));
            }
            p.to_string()
        }
        Err(_) => "••••".to_string(),
    }
}

/// One server's status (A-12, I-3): its configuration, the manager's live view (`None` while
/// no manager runs), and what the allowlist made of its last listing.
pub(crate) fn server_status(
    s: &McpServerConfig,
    live: Option<&mcp::ServerStatus>,
    note: Option<&DiscoveryNote>,
    proposed: usize,
    enabled: usize,
) -> ServerStatusView {
    let (state, next_retry) = match live.map(|l| &l.state) {
        None | Some(mcp::ServerState::Dark) if !s.enabled => (ServerState::Dark, None),
        None => (ServerState::NotConnected, None),
        Some(mcp::ServerState::BackingOff { until }) => {
            let t = time_str(OffsetDateTime::from(*until));
            (ServerState::BackingOff { until: t.clone() }, t)
        }
        Some(st) => match note.and_then(|n| n.over_cap.as_ref()) {
            Some(over) if *st == mcp::ServerState::Ready => {
                (ServerState::OverCap(over.clone()), None)
            }
            _ => (server_state(st), None),
        },
    };
    let last_error = live
        .and_then(|l| l.last_error.clone())
        .or_else(|| note.and_then(|n| n.error.clone()));
    // The client says it needs authorization, and why; what to run is the command line's word.
    let last_error = match state {
        ServerState::NeedsAuthorization => Some(format!(
            "{}: run `maven mcp login {}`",
            last_error.as_deref().unwrap_or("needs authorization"),
            s.name
        )),
        _ => last_error,
    };
    ServerStatusView {
        name: s.name.clone(),
        transport: transport(&s.target),
        target: target(&s.written),
        enabled: s.enabled,
        state,
        trust: trust(s),
        protocol_version: live.and_then(|l| l.protocol_version.clone()),
        era: live
            .and_then(|l| l.era.as_ref())
            .map(|(e, _)| e.as_str().to_owned()),
        era_chosen: live
            .and_then(|l| l.era.as_ref())
            .map(|(_, how)| how.clone()),
        server_info: live
            .and_then(|l| l.server_info.as_ref())
            .map(|(n, v)| ServerInfo {
                name: n.clone(),
                version: v.clone(),
            }),
        tools_offered: live.and_then(|l| l.tools_offered),
        tools_proposed: proposed,
        tools_enabled: enabled,
        tools_refused: note
            .map(|n| n.refused.as_slice())
            .unwrap_or_default()
            .iter()
            .chain(live.map(|l| l.rejected.as_slice()).unwrap_or_default())
            .map(|(t, r)| RefusedTool {
                tool: t.clone(),
                reason: r.clone(),
            })
            .collect(),
        last_error,
        next_retry,
        stderr_tail: live.and_then(|l| l.stderr_tail.clone()),
        violations: live.map(|l| l.violations).unwrap_or(0),
        dials: live.map(|l| l.dials).unwrap_or(0),
        unstable: note.and_then(|n| n.unstable.clone()),
        auth: None,
        network: None,
    }
}

/// The manager's state of a server as status says it.
fn server_state(s: &mcp::ServerState) -> ServerState {
    match s {
        mcp::ServerState::Dark => ServerState::Dark,
        mcp::ServerState::Connecting => ServerState::Connecting,
        mcp::ServerState::Ready => ServerState::Ready,
        mcp::ServerState::BackingOff { until } => ServerState::BackingOff {
            until: time_str(OffsetDateTime::from(*until)),
        },
        mcp::ServerState::NeedsAuthorization => ServerState::NeedsAuthorization,
        mcp::ServerState::Stopped => ServerState::Stopped,
        _ => ServerState::Unknown,
    }
}

/// A configured feed as status shows it before any poll.
pub(crate) fn configured_feed(f: &FeedConfig) -> FeedView {
    FeedView {
        name: f.name.clone(),
        url: mask_url(&f.url),
        enabled: f.enabled,
        last_success: None,
        last_error: None,
        next_poll: None,
        items_noted: None,
        live: None,
    }
}

/// One row of `maven feeds status --json`: the I-3 keys, then `state`, `moved_to` (where a
/// redirect led; the config is never rewritten), `failures` and `warning`.
pub(crate) fn feed_status(s: &poller::FeedStatus) -> FeedView {
    FeedView {
        name: s.name.clone(),
        url: mask_url(&s.url),
        enabled: s.enabled,
        last_success: s.last_success.and_then(time_str),
        last_error: s.last_error.clone(),
        next_poll: s.next_poll.and_then(time_str),
        items_noted: Some(s.items_noted),
        live: Some(FeedLive {
            state: s.state.as_str().to_owned(),
            moved_to: s.moved_to.as_deref().map(mask_url),
            failures: s.failures,
            warning: s.warning.clone(),
            refused: s.refused,
        }),
    }
}

/// One feed of `maven feeds refresh`.
pub(crate) fn refreshed(r: poller::Refreshed) -> wire::views::RefreshView {
    let mut v = wire::views::RefreshView {
        name: String::new(),
        polled: false,
        noted: None,
        error: None,
        held_back: None,
        until: None,
    };
    match r {
        poller::Refreshed::Polled { name, result } => {
            v.name = name;
            v.polled = true;
            match result {
                Ok(rep) => {
                    v.noted = Some(match rep.outcome {
                        poller::Outcome::Fetched { noted, .. } => noted,
                        _ => 0,
                    });
                }
                Err(e) => v.error = Some(e),
            }
        }
        poller::Refreshed::HeldBack {
            name,
            reason,
            until,
        } => {
            v.name = name;
            v.held_back = Some(reason);
            v.until = time_str(until);
        }
        _ => {}
    }
    v
}

/// The turns' router as `maven status` shows it.
pub(crate) fn router(r: &turns::Router) -> wire::views::RouterView {
    use wire::views::{RouterKindView, RouterView};
    match r {
        turns::Router::Rules => RouterView {
            kind: RouterKindView::Rules,
            endpoint: None,
            model: None,
            last_answer: None,
            last_error: None,
            last_error_at: None,
        },
        turns::Router::Llm { url, model, last } => {
            let at = |l: &turns::llm::Last| time_str(OffsetDateTime::from(l.at));
            let (mut last_answer, mut last_error, mut last_error_at) = (None, None, None);
            match last {
                Some(l) if l.error.is_none() => last_answer = at(l),
                Some(l) => {
                    last_error.clone_from(&l.error);
                    last_error_at = at(l);
                }
                None => {}
            }
            RouterView {
                kind: RouterKindView::Llm,
                endpoint: Some(mask_word(url, false)),
                model: Some(model.clone()),
                last_answer,
                last_error,
                last_error_at,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_masked() {
        assert_eq!(
            mask_url("https://user:pw@a.example/mcp?token=x"),
            "https://%E2%80%A2%E2%80%A2%E2%80%A2%E2%80%A2@a.example/mcp?%E2%80%A2%E2%80%A2%E2%80%A2%E2%80%A2"
        );
        assert_eq!(mask_url("https://a.example/mcp"), "https://a.example/mcp");
        assert_eq!(mask_url("::"), "••••");
    }

    #[test]
    fn targets_are_shown_as_written_with_secret_literals_hidden() {
        for (written, shown) in [
            (
                "gh-mcp --token ${GITHUB_TOKEN}",
                "gh-mcp --token ${GITHUB_TOKEN}",
            ),
            (
                "gh-mcp --token ghp_abcdefghijklmnop",
                "gh-mcp --token …(hidden)",
            ),
            (
                "srv --password hunter2 --db x",
                "srv --password …(hidden) --db x",
            ),
            (
                "srv --api-key=abc123 --secret s",
                "srv --api-key=…(hidden) --secret …(hidden)",
            ),
            ("srv --API_KEY abc", "srv --API_KEY …(hidden)"),
            (
                "pg-mcp postgresql://app:Sup3rS3cret@localhost/db",
                "pg-mcp postgresql://app:…(hidden)@localhost/db",
            ),
            (
                "pg-mcp postgresql://app:${PG_PASSWORD}@localhost/db",
                "pg-mcp postgresql://app:${PG_PASSWORD}@localhost/db",
            ),
            ("x github_pat_11ABCDEFG0123456789", "x …(hidden)"),
            (
                "x Authorization=Bearer:sk-proj0123456789",
                "x Authorization=Bearer:…(hidden)",
            ),
            ("slack xoxb-1234567890-abcdef", "slack …(hidden)"),
            (
                "https://a.example/mcp?token=abc&x=1",
                "https://a.example/mcp?token=…(hidden)&x=1",
            ),
            (
                "https://a.example/mcp?key=${K}",
                "https://a.example/mcp?key=${K}",
            ),
            // Near misses stay as they are.
            (
                "npx -y @scope/disk-usage-server --pin 3",
                "npx -y @scope/disk-usage-server --pin 3",
            ),
            ("uvx sk-learn-mcp", "uvx sk-learn-mcp"),
            ("srv --token-limit 5", "srv --token-limit 5"),
        ] {
            assert_eq!(target(written), shown, "{written}");
        }
    }

    #[test]
    fn times_are_rfc3339_utc() {
        let t = OffsetDateTime::from_unix_timestamp(1_764_479_307).unwrap();
        assert_eq!(time_str(t).as_deref(), Some("2025-11-30T05:08:27Z"));
    }

    #[test]
    fn a_clients_transport_is_its_own_word_in_the_view() {
        let targets: [mcp::Transport<String, ()>; 2] = [
            mcp::Transport::Stdio {
                command: "x".to_owned(),
                args: Vec::new(),
                env: Default::default(),
            },
            mcp::Transport::Http {
                url: "https://a.example/mcp".to_owned(),
                headers: Default::default(),
                door: (),
            },
        ];
        for t in &targets {
            assert_eq!(transport(t).as_str(), t.name(), "the client's own word");
        }
    }
}
