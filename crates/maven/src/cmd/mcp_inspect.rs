//! `maven mcp inspect NAME [--config PATH] [--json]` (M-7): dial one configured server through
//! the same client the daemon uses, list its tools, and print the handshake facts and what
//! Maven would do with each tool. Changes nothing in the store and never calls a tool.
//!
//! Exit codes: 0 when the listing completed, or when the server is authorized by the running
//! daemon (whose token never leaves it: `"listed": false`, its tools are in `maven tools`); 1
//! when dialling, the handshake, the authorization or the listing failed (the reason on
//! stderr, the same as `--json` says). Usage and config errors (2) are caught before this runs.

use crate::exit::{errln, out, outln};
use std::path::Path;
use std::process::ExitCode;

use super::{config_name, load_config, runtime};
use crate::exit::{EXIT_FAILED, EXIT_USAGE};

use allowlist::catalogue::{self as tools, Verdict};
use mcp::Tool;
use serde::Serialize;
#[cfg(test)]
use serde_json::json;
use serde_json::Value;
use shown::line;

use crate::views::{AuthState, AuthView, ServerInfo, Transport};

/// `maven mcp inspect NAME [--json]`: the server's block of the configuration, how it starts
/// (its sandbox), who holds its authorization, then [`run`].
pub(crate) fn main(config: Option<&Path>, data_dir: &Path, name: String, json: bool) -> ExitCode {
    let Some(cfg) = load_config(config) else {
        return ExitCode::from(EXIT_USAGE);
    };
    let probe = sandbox::probe();
    let (Some(launch), Some(block)) = (
        crate::confine::launch(&cfg, data_dir, &name, &probe, cfg.web.listen.port()),
        cfg.mcp_servers.get(&name),
    ) else {
        let known: Vec<&str> = cfg.mcp_servers.keys().map(String::as_str).collect();
        errln!(
            "maven mcp inspect: no MCP server named {name:?} in {} (configured: {})",
            config_name(&cfg),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        );
        return ExitCode::from(EXIT_USAGE);
    };
    let server = match launch {
        crate::confine::Launch::Start(s) => *s,
        crate::confine::Launch::Blocked(why) => {
            errln!("maven mcp inspect: {}: {}", line(&name), line(&why));
            return ExitCode::from(1);
        }
    };
    let plan =
        crate::confine::plan(&cfg, data_dir, &name, cfg.web.listen.port()).and_then(Result::ok);
    let policy = block.policy();
    runtime(async move {
        let auth = match crate::oauth::for_inspect(&cfg, &name, data_dir).await {
            Ok(a) => a,
            Err(e) => {
                errln!(
                    "maven mcp inspect: {}: cannot read the kept credentials: {}",
                    line(&name),
                    line(&e)
                );
                return ExitCode::from(EXIT_FAILED);
            }
        };
        crate::cmd::mcp_inspect::run(
            server,
            plan.as_ref(),
            auth,
            &policy.allow_tools,
            policy.max_tools,
            json,
        )
        .await
    })
}

/// Dial `server`, list its tools and print the report (one JSON object with `json`). An HTTP
/// server comes with its OAuth authorization and who holds it (`auth`). It never refreshes,
/// registers or writes credentials: with a daemon running it has none (the daemon's never leave
/// it, and it says over IPC what it holds); offline it sends the kept token as it is. A 401 runs
/// the discovery — never the authorization — whose findings are printed (`"auth"`), and
/// stderr says what the JSON says.
pub(crate) async fn run(
    server: mcp::ServerConfig,
    plan: Option<&sandbox::Plan>,
    auth: Option<(std::sync::Arc<::oauth::OAuth>, crate::oauth::Holder)>,
    allow_tools: &[String],
    max_tools: usize,
    json: bool,
) -> ExitCode {
    let (oauth, holder) = match auth {
        Some((o, h)) => (Some(o), Some(h)),
        None => (None, None),
    };
    let daemon = match &holder {
        Some(crate::oauth::Holder::Daemon(v)) => Some(v.clone()),
        _ => None,
    };
    let options = mcp::ClientOptions {
        oauth: oauth.clone(),
        ..mcp::ClientOptions::default()
    };
    let client = match (mcp::Client::dial(&server, options).await, &oauth) {
        (Ok(c), _) => c,
        (Err((mcp::Error::Auth(e), _)), Some(o)) => {
            let name = line(&server.name);
            if let Some(Ok(d)) = daemon.as_ref().filter(|d| authorized(d)) {
                // The server takes only the daemon's token, which stays in the daemon.
                let auth = daemon_report(d);
                errln!(
                    "maven mcp inspect: {name}: authorized by the running daemon, whose token never leaves it: its tools are in `maven tools`"
                );
                if json {
                    outln!(
                        "{}",
                        to_json(&NotListed {
                            server: &server.name,
                            auth: &auth,
                            listed: Some(false),
                        })
                    );
                } else {
                    out!("{}", auth_text(&server.name, &auth));
                }
                return ExitCode::SUCCESS;
            }
            // Discovery runs here, once, with its own deadlines (not inside a request's).
            if e == ::oauth::AuthError::NeedsAuthorization {
                if let Some(ch) = o.last_challenge().await {
                    let _ = o.discover(&ch).await;
                }
            }
            let auth = auth_report(o, &e, daemon.as_ref()).await;
            let said = auth.facts();
            match said.state {
                AuthWord::Refused => errln!(
                    "maven mcp inspect: {name}: authorization refused: {}",
                    shown::block(said.error.unwrap_or(""))
                ),
                AuthWord::Expired => errln!(
                    "maven mcp inspect: {name}: the access token expired: the daemon refreshes it (start it with `maven daemon`); inspect never does"
                ),
                _ => errln!(
                    "maven mcp inspect: {name}: needs authorization: run `maven mcp login {name}`{}",
                    match said.reason.unwrap_or("") {
                        "" => String::new(),
                        r => format!(" ({})", line(r)),
                    }
                ),
            }
            if json {
                outln!(
                    "{}",
                    to_json(&NotListed {
                        server: &server.name,
                        auth: &auth,
                        listed: None,
                    })
                );
            } else {
                out!("{}", auth_text(&server.name, &auth));
            }
            return ExitCode::from(1);
        }
        (Err((e, stderr_tail)), _) => {
            errln!(
                "maven mcp inspect: {}: cannot dial: {}",
                line(&server.name),
                shown::block(&e.to_string())
            );
            if let Some(t) = stderr_tail.filter(|t| !t.trim().is_empty()) {
                errln!(
                    "  its stderr said:\n    {}",
                    shown::block(t.trim_end()).replace('\n', "\n    ")
                );
            }
            return ExitCode::from(1);
        }
    };
    let listing = client.list_tools().await;
    let stats = client.stats();
    let stderr_tail = client.stderr_tail();
    client.close().await;
    let listing = match listing {
        Ok(l) => l,
        Err(e) => {
            errln!(
                "maven mcp inspect: {}: listing failed: {}",
                line(&server.name),
                shown::block(&e.to_string())
            );
            if let Some(tail) = stderr_tail.filter(|t| !t.trim().is_empty()) {
                errln!("server stderr (tail):\n{}", shown::block(tail.trim_end()));
            }
            return ExitCode::from(1);
        }
    };
    let transport = match &server.transport {
        mcp::Transport::Stdio { .. } => Transport::Stdio,
        mcp::Transport::Http { .. } => Transport::Http,
    };
    let report = Report::new(
        &server.name,
        transport,
        client.server_info(),
        stats.violations,
        &listing,
        allow_tools,
        max_tools,
    );
    let auth = match (&daemon, &oauth) {
        (Some(Ok(d)), _) if d.state == AuthState::Authorized => Some(daemon_report(d)),
        (Some(_), _) | (None, None) => None,
        (None, Some(o)) => match o.status_now() {
            ::oauth::AuthStatus::Authorized {
                issuer,
                scopes,
                expires_at,
                refresh,
            } => Some(AuthReport::Store {
                state: AuthWord::Authorized,
                issuer,
                scopes,
                expires_at,
                refresh,
                held_by: "the store (read-only: no daemon runs)",
            }),
            ::oauth::AuthStatus::NeedsAuthorization => None,
        },
    };
    if json {
        let listed = Listed {
            report: &report,
            sandbox: plan.map(sandbox_json),
            auth,
        };
        outln!("{}", to_json(&listed));
    } else {
        out!("{}", report.to_text());
        if let Some(p) = plan {
            out!("{}", sandbox_text(p));
        }
        if let Some(a) = auth {
            out!("{}", auth_text(&server.name, &a));
        }
    }
    ExitCode::SUCCESS
}

/// A report as one line of JSON (`--json`). Only a path that is not UTF-8 (a sandbox's) cannot
/// be encoded: then stderr says so and the line is `null`.
fn to_json(v: &impl Serialize) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| {
        errln!("maven mcp inspect: cannot write the report as JSON: {e}");
        "null".to_owned()
    })
}

/// `--json` of a listing: the report, the sandbox (null for none), what the authorization is
/// (absent for a server that never asked).
#[derive(Serialize)]
struct Listed<'a> {
    #[serde(flatten)]
    report: &'a Report,
    sandbox: Option<SandboxReport<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auth: Option<AuthReport>,
}

/// `--json` when the tools were not listed: the server's authorization, and `"listed": false`
/// when the running daemon holds it.
#[derive(Serialize)]
struct NotListed<'a> {
    server: &'a str,
    auth: &'a AuthReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    listed: Option<bool>,
}

/// The `"state"` of `"auth"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
enum AuthWord {
    #[serde(rename = "authorized")]
    Authorized,
    #[serde(rename = "needs authorization")]
    NeedsAuthorization,
    #[serde(rename = "not asked")]
    NotAsked,
    #[serde(rename = "refused")]
    Refused,
    /// A kept token that expired (inspect never refreshes it).
    #[serde(rename = "expired: the daemon refreshes it")]
    Expired,
}

impl AuthWord {
    fn as_str(self) -> &'static str {
        match self {
            AuthWord::Authorized => "authorized",
            AuthWord::NeedsAuthorization => "needs authorization",
            AuthWord::NotAsked => "not asked",
            AuthWord::Refused => "refused",
            AuthWord::Expired => "expired: the daemon refreshes it",
        }
    }
}

/// `"auth"`: a server's authorization as inspect found it. No secret is in it.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum AuthReport {
    /// What the running daemon said it holds.
    Daemon {
        state: AuthWord,
        held_by: &'static str,
        scopes: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        issuer: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        expires_at: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        refresh: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// An authorization kept in the store, read with no daemon running.
    Store {
        state: AuthWord,
        issuer: String,
        scopes: Vec<String>,
        expires_at: Option<u64>,
        refresh: bool,
        held_by: &'static str,
    },
    /// No usable authorization: why, and what the discovery found.
    Missing {
        state: AuthWord,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(flatten)]
        found: Option<Found>,
    },
}

/// What inspect found of a server with no usable authorization.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Found {
    /// A kept token that expired, which the daemon refreshes.
    Expired { issuer: String, expires_at: u64 },
    /// The discovery's findings.
    Discovered {
        #[serde(skip_serializing_if = "Option::is_none")]
        resource_metadata_url: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        resource: Option<String>,
        issuer: String,
        server_metadata_url: Option<String>,
        scopes: Vec<String>,
        registration: &'static str,
        dpop: bool,
    },
}

/// Every field of an [`AuthReport`] the text report shows, whichever kind it is.
#[derive(Default)]
struct Facts<'a> {
    state: Option<AuthWord>,
    held_by: Option<&'a str>,
    reason: Option<&'a str>,
    error: Option<&'a str>,
    resource_metadata_url: Option<&'a str>,
    resource: Option<&'a str>,
    server_metadata_url: Option<&'a str>,
    registration: Option<&'a str>,
    issuer: Option<&'a str>,
    scopes: Option<&'a [String]>,
}

/// The facts with a state (every report has one).
struct Said<'a> {
    state: AuthWord,
    error: Option<&'a str>,
    reason: Option<&'a str>,
}

impl AuthReport {
    fn state(&self) -> AuthWord {
        match self {
            AuthReport::Daemon { state, .. }
            | AuthReport::Store { state, .. }
            | AuthReport::Missing { state, .. } => *state,
        }
    }

    fn facts(&self) -> Said<'_> {
        let f = self.fields();
        Said {
            state: self.state(),
            error: f.error,
            reason: f.reason,
        }
    }

    fn fields(&self) -> Facts<'_> {
        match self {
            AuthReport::Daemon {
                state,
                held_by,
                scopes,
                issuer,
                reason,
                ..
            } => Facts {
                state: Some(*state),
                held_by: Some(held_by),
                scopes: Some(scopes),
                issuer: issuer.as_deref(),
                reason: reason.as_deref(),
                ..Facts::default()
            },
            AuthReport::Store {
                state,
                issuer,
                scopes,
                held_by,
                ..
            } => Facts {
                state: Some(*state),
                held_by: Some(held_by),
                scopes: Some(scopes),
                issuer: Some(issuer),
                ..Facts::default()
            },
            AuthReport::Missing {
                state,
                error,
                reason,
                found,
            } => {
                let mut f = Facts {
                    state: Some(*state),
                    error: error.as_deref(),
                    reason: reason.as_deref(),
                    ..Facts::default()
                };
                match found {
                    Some(Found::Expired { issuer, .. }) => f.issuer = Some(issuer),
                    Some(Found::Discovered {
                        resource_metadata_url,
                        resource,
                        issuer,
                        server_metadata_url,
                        scopes,
                        registration,
                        ..
                    }) => {
                        f.resource_metadata_url = resource_metadata_url.as_deref();
                        f.resource = resource.as_deref();
                        f.issuer = Some(issuer);
                        f.server_metadata_url = server_metadata_url.as_deref();
                        f.scopes = Some(scopes);
                        f.registration = Some(registration);
                    }
                    None => {}
                }
                f
            }
        }
    }
}

/// Whether the running daemon holds a usable authorization of the server.
fn authorized(d: &Result<AuthView, String>) -> bool {
    matches!(
        d,
        Ok(AuthView {
            state: AuthState::Authorized,
            ..
        })
    )
}

/// What the running daemon said of the server's authorization, as `"auth"` shows it.
fn daemon_report(d: &AuthView) -> AuthReport {
    AuthReport::Daemon {
        state: match d.state {
            AuthState::Authorized => AuthWord::Authorized,
            AuthState::NeedsAuthorization => AuthWord::NeedsAuthorization,
            AuthState::NotAsked => AuthWord::NotAsked,
        },
        held_by: "the running daemon",
        scopes: d.scopes.clone(),
        issuer: d.issuer.clone(),
        expires_at: d.expires_at,
        refresh: d.refresh,
        reason: d.reason.clone(),
    }
}

/// The sandbox a stdio server runs in (X-4), as `--json` shows it.
#[derive(Serialize)]
struct SandboxReport<'a> {
    trust: String,
    program: &'a std::path::Path,
    /// The readable paths that exist.
    read: Vec<&'a std::path::PathBuf>,
    write: &'a [std::path::PathBuf],
    home: &'a std::path::Path,
    hidden: &'a [std::path::PathBuf],
    network: bool,
    denied_ports: &'a [u16],
    memory: u64,
    processes: u64,
}

fn sandbox_json(p: &sandbox::Plan) -> SandboxReport<'_> {
    SandboxReport {
        trust: p.trust(),
        program: &p.program,
        read: p.read.iter().filter(|d| d.exists()).collect(),
        write: &p.write,
        home: &p.home,
        hidden: &p.hide,
        network: p.network,
        denied_ports: &p.deny_ports,
        memory: p.memory,
        processes: p.processes,
    }
}

/// The same, as the text report ends.
fn sandbox_text(p: &sandbox::Plan) -> String {
    use std::fmt::Write as _;
    let paths = |v: &[std::path::PathBuf]| {
        v.iter()
            .filter(|d| d.exists())
            .map(|d| line(&d.display().to_string()).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = String::new();
    let _ = writeln!(s, "sandbox:   {}", line(&p.trust()));
    let _ = writeln!(
        s,
        "  program:    {}",
        line(&p.program.display().to_string())
    );
    let _ = writeln!(s, "  reads:      {}", paths(&p.read));
    let _ = writeln!(s, "  writes:     {}", paths(&p.write));
    let _ = writeln!(s, "  home, tmp:  {}", line(&p.home.display().to_string()));
    let _ = writeln!(s, "  hidden:     {}", paths(&p.hide));
    let net = if p.network && p.deny_ports.is_empty() {
        "shared".to_owned()
    } else if p.network {
        let ports: Vec<String> = p.deny_ports.iter().map(u16::to_string).collect();
        format!("shared, no TCP connection to port {}", ports.join(", "))
    } else {
        "none (a network namespace of its own, no TCP)".to_owned()
    };
    let _ = writeln!(s, "  network:    {net}");
    let _ = writeln!(
        s,
        "  limits:     {} bytes of address space, {} processes and threads",
        p.memory, p.processes
    );
    s
}

/// What the discovery found (or why it refused), for `"auth"`. No secret is in it.
async fn auth_report(
    oauth: &::oauth::OAuth,
    error: &::oauth::AuthError,
    daemon: Option<&Result<AuthView, String>>,
) -> AuthReport {
    let refused = *error != ::oauth::AuthError::NeedsAuthorization;
    let mut state = if refused {
        AuthWord::Refused
    } else {
        AuthWord::NeedsAuthorization
    };
    let mut error = refused.then(|| error.to_string());
    let reason = match daemon {
        Some(Ok(d)) => d.reason.clone(),
        Some(Err(e)) => Some(format!("the running daemon could not say: {e}")),
        None => oauth.needs_authorization(),
    };
    // A kept token that expired: the daemon refreshes it; inspect never does.
    if let (
        None,
        ::oauth::AuthStatus::Authorized {
            expires_at: Some(e),
            refresh: true,
            issuer,
            ..
        },
    ) = (daemon, oauth.status_now())
    {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        if e <= now && !refused {
            return AuthReport::Missing {
                state: AuthWord::Expired,
                error,
                reason,
                found: Some(Found::Expired {
                    issuer,
                    expires_at: e,
                }),
            };
        }
    }
    let found = match oauth.last_discovery().await {
        Some(Ok(d)) => Some(Found::Discovered {
            resource_metadata_url: d.resource.as_ref().map(|r| r.url.clone()),
            resource: d.resource.as_ref().map(|r| r.resource.clone()),
            issuer: d.server.issuer.clone(),
            server_metadata_url: d.server.url.clone(),
            scopes: d
                .challenge_scope
                .clone()
                .or_else(|| d.resource.as_ref().and_then(|r| r.scopes_supported.clone()))
                .unwrap_or_default(),
            registration: oauth.registration_method(&d.server),
            dpop: d.server.dpop_es256(),
        }),
        Some(Err(e)) => {
            state = AuthWord::Refused;
            error = Some(e.to_string());
            None
        }
        None => None,
    };
    AuthReport::Missing {
        state,
        error,
        reason,
        found,
    }
}

fn auth_text(name: &str, auth: &AuthReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let f = auth.fields();
    fn field(v: Option<&str>) -> Option<std::borrow::Cow<'_, str>> {
        v.map(line)
    }
    let authorized = f.state == Some(AuthWord::Authorized);
    match f.state {
        Some(AuthWord::Authorized) => {
            let _ = writeln!(
                s,
                "auth:      authorized by {}",
                field(f.issuer).unwrap_or_default()
            );
        }
        Some(state) => {
            let _ = writeln!(s, "server:    {}", line(name));
            let _ = writeln!(s, "auth:      {}", state.as_str());
        }
        None => {}
    }
    for (v, label) in [
        (f.held_by, "held by"),
        (f.reason, "reason"),
        (f.error, "error"),
        (f.resource_metadata_url, "resource metadata"),
        (f.resource, "resource"),
        (f.server_metadata_url, "AS metadata"),
        (f.registration, "registration"),
    ] {
        if let Some(v) = field(v) {
            let _ = writeln!(s, "  {label}: {v}");
        }
    }
    if !authorized {
        if let Some(v) = field(f.issuer) {
            let _ = writeln!(s, "  issuer: {v}");
        }
    }
    if let Some(scopes) = f.scopes {
        let list: Vec<String> = scopes.iter().map(|x| line(x).into_owned()).collect();
        let _ = writeln!(
            s,
            "  scopes: {}",
            if list.is_empty() {
                "(none asked)".to_owned()
            } else {
                list.join(" ")
            }
        );
    }
    s
}

/// The longest tool name the text report shows whole: every name the allowlist accepts
/// (`[A-Za-z0-9_.-]{1,128}`); a longer one is cut, with its length.
const NAME_SHOWN: usize = 128;

/// One tool's line of the report.
#[derive(Debug, Serialize)]
struct ToolRow {
    name: String,
    local_name: String,
    fingerprint: String,
    read_only_claim: bool,
    destructive: bool,
    description: String,
    /// "propose" or "refuse".
    #[serde(serialize_with = "verdict_word")]
    verdict: Verdict,
    /// Why it is refused; null when it would be proposed.
    reason: Option<String>,
}

fn verdict_word<S: serde::Serializer>(v: &Verdict, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v.as_str())
}

/// A tool the client left out of the listing, and why.
#[derive(Debug, Serialize)]
struct LeftOut {
    name: String,
    reason: String,
}

/// Everything `inspect` prints; its fields in the order of `--json`.
#[derive(Debug, Serialize)]
struct Report {
    server: String,
    transport: Transport,
    protocol_version: String,
    era: &'static str,
    era_chosen: String,
    server_info: ServerInfo,
    violations: u64,
    tools: Vec<ToolRow>,
    /// Tools the client left out of the listing (invalid `x-mcp-header` declarations).
    left_out: Vec<LeftOut>,
    warnings: Vec<String>,
    /// Over `max_tools` without `allow_tools`: the tools that claim read-only and would be
    /// proposed once named, for a ready `"allow_tools"` line.
    suggested_allow_tools: Option<Vec<String>>,
}

impl Report {
    fn new(
        server: &str,
        transport: Transport,
        info: &mcp::ServerInfo,
        violations: u64,
        listing: &mcp::ToolList,
        allow_tools: &[String],
        max_tools: usize,
    ) -> Report {
        let list: &[Tool] = &listing.tools;
        let verdicts = tools::verdicts(list, allow_tools, max_tools);
        let names = allowlist::local_names(server, list, &Default::default());
        let mut warnings = Vec::new();
        if listing.skipped > 0 {
            warnings.push(format!(
                "{} entries of the listing are not tools (no string name) and were skipped",
                listing.skipped
            ));
        }
        let over_cap = allow_tools.is_empty() && list.len() > max_tools;
        let suggested_allow_tools = over_cap.then(|| suggest_allow_tools(list, max_tools));
        if over_cap {
            warnings.push(format!(
                "the server offers {} tools, more than max_tools ({max_tools}); without \
                 allow_tools it contributes none",
                list.len()
            ));
        }
        for wanted in allow_tools {
            if !list.iter().any(|t| &t.name == wanted) {
                warnings.push(format!(
                    "allow_tools names {wanted:?}, which the server does not offer"
                ));
            }
        }
        if violations > 0 {
            warnings.push(format!("the server broke the protocol {violations} times"));
        }
        let rows = list
            .iter()
            .zip(verdicts)
            .zip(names)
            .map(|((t, verdict), local_name)| {
                let full = t.description().unwrap_or("");
                let description = tools::cap_description(full, tools::DESCRIPTION_CAP);
                if description.len() < full.len() {
                    warnings.push(format!(
                        "the description of {:?} is longer than {} characters and was cut",
                        t.name,
                        tools::DESCRIPTION_CAP
                    ));
                }
                ToolRow {
                    name: t.name.clone(),
                    local_name,
                    fingerprint: t.fingerprint(),
                    read_only_claim: t.read_only_claim(),
                    destructive: t.destructive(),
                    description: description.to_owned(),
                    reason: verdict.reason().map(str::to_owned),
                    verdict,
                }
            })
            .collect();
        Report {
            server: server.to_owned(),
            transport,
            protocol_version: info.protocol_version.clone(),
            era: info.era.as_str(),
            era_chosen: info.chosen.clone(),
            server_info: ServerInfo {
                name: info.name.clone(),
                version: info.version.clone(),
            },
            violations,
            tools: rows,
            left_out: listing
                .rejected
                .iter()
                .map(|(name, reason)| LeftOut {
                    name: name.clone(),
                    reason: reason.clone(),
                })
                .collect(),
            warnings,
            suggested_allow_tools,
        }
    }

    /// The line to paste into the server's block, when there is one to suggest.
    fn paste_line(&self) -> Option<String> {
        let names = self.suggested_allow_tools.as_ref()?;
        let quoted: Vec<String> = names
            .iter()
            .map(|n| Value::from(n.as_str()).to_string())
            .collect();
        Some(format!("\"allow_tools\": [{}]", quoted.join(", ")))
    }

    /// The report as `--json` shows it (without the sandbox and the authorization).
    #[cfg(test)]
    fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(s, "server:    {} ({})", line(&self.server), self.transport);
        let _ = writeln!(s, "protocol:  {}", line(&self.protocol_version));
        let _ = writeln!(s, "era:       {} ({})", self.era, line(&self.era_chosen));
        let _ = writeln!(
            s,
            "offers:    {} {}",
            line(&self.server_info.name),
            line(&self.server_info.version)
        );
        let _ = writeln!(s, "violations: {}", self.violations);
        let _ = writeln!(s, "tools ({}):", self.tools.len());
        for t in &self.tools {
            let _ = writeln!(
                s,
                "  {} -> {}",
                shown::capped(&t.name, NAME_SHOWN),
                shown::capped(&t.local_name, NAME_SHOWN)
            );
            let _ = writeln!(s, "    fingerprint: {}", line(&t.fingerprint));
            let _ = writeln!(
                s,
                "    read-only claim: {}, destructive: {}",
                yes_no(t.read_only_claim),
                yes_no(t.destructive)
            );
            match t.verdict.reason() {
                None => {
                    let _ = writeln!(s, "    verdict: propose");
                }
                Some(r) => {
                    let _ = writeln!(s, "    verdict: refuse ({})", line(r));
                }
            }
            if !t.description.is_empty() {
                let _ = writeln!(s, "    description: {}", line(&t.description));
            }
        }
        for LeftOut { name, reason } in &self.left_out {
            let _ = writeln!(
                s,
                "left out: {} — {}",
                shown::capped(name, NAME_SHOWN),
                line(reason)
            );
        }
        for w in &self.warnings {
            let _ = writeln!(s, "warning: {}", line(w));
        }
        if let (Some(names), Some(paste)) = (&self.suggested_allow_tools, self.paste_line()) {
            if names.is_empty() {
                let _ = writeln!(
                    s,
                    "none of its tools claims read-only: name the tools you want in \
                     mcp_servers.{}:",
                    line(&self.server)
                );
            } else {
                let _ = writeln!(
                    s,
                    "to allow the {} tools that claim read-only, paste into mcp_servers.{}:",
                    names.len(),
                    line(&self.server)
                );
            }
            let _ = writeln!(s, "{}", line(&paste));
        }
        s
    }
}

/// The tools of an over-cap listing that claim read-only (`readOnlyHint`) and would be
/// proposed once named in `allow_tools` (a bad name or schema stays refused), in order.
fn suggest_allow_tools(list: &[Tool], max_tools: usize) -> Vec<String> {
    let read_only: Vec<String> = list
        .iter()
        .filter(|t| t.read_only_claim())
        .map(|t| t.name.clone())
        .collect();
    tools::verdicts(list, &read_only, max_tools)
        .into_iter()
        .zip(list)
        .filter(|(v, _)| v.reason().is_none())
        .map(|(_, t)| t.name.clone())
        .collect()
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(tools: Vec<Value>) -> mcp::ToolList {
        // ToolList is non-exhaustive; build it the way the client does, from a tools/list page.
        let tools: Vec<Tool> = tools.into_iter().filter_map(Tool::from_value).collect();
        mcp::ToolList::from_tools(tools)
    }

    fn info() -> mcp::ServerInfo {
        mcp::ServerInfo::new("2025-11-25", "kit", "1.0")
    }

    #[test]
    fn auth_reports_keep_their_json_shape() {
        for (w, text) in [
            (AuthWord::Authorized, "authorized"),
            (AuthWord::NeedsAuthorization, "needs authorization"),
            (AuthWord::NotAsked, "not asked"),
            (AuthWord::Refused, "refused"),
            (AuthWord::Expired, "expired: the daemon refreshes it"),
        ] {
            assert_eq!(serde_json::to_value(w).unwrap(), json!(text));
            assert_eq!(w.as_str(), text);
        }
        let store = AuthReport::Store {
            state: AuthWord::Authorized,
            issuer: "https://as.example".into(),
            scopes: vec!["read".into()],
            expires_at: None,
            refresh: true,
            held_by: "the store (read-only: no daemon runs)",
        };
        assert_eq!(
            to_json(&store),
            r#"{"state":"authorized","issuer":"https://as.example","scopes":["read"],"expires_at":null,"refresh":true,"held_by":"the store (read-only: no daemon runs)"}"#
        );
        let found = AuthReport::Missing {
            state: AuthWord::NeedsAuthorization,
            error: None,
            reason: Some("the server asked".into()),
            found: Some(Found::Discovered {
                resource_metadata_url: None,
                resource: None,
                issuer: "https://as.example".into(),
                server_metadata_url: None,
                scopes: vec![],
                registration: "dynamic",
                dpop: false,
            }),
        };
        assert_eq!(
            to_json(&found),
            r#"{"state":"needs authorization","reason":"the server asked","issuer":"https://as.example","server_metadata_url":null,"scopes":[],"registration":"dynamic","dpop":false}"#
        );
        let text = auth_text("notes", &found);
        assert_eq!(
            text,
            "server:    notes\nauth:      needs authorization\n  reason: the server asked\n  registration: dynamic\n  issuer: https://as.example\n  scopes: (none asked)\n"
        );
        let refused = AuthReport::Missing {
            state: AuthWord::Refused,
            error: Some("bad".into()),
            reason: None,
            found: None,
        };
        assert_eq!(to_json(&refused), r#"{"state":"refused","error":"bad"}"#);
        let listed = NotListed {
            server: "notes",
            auth: &refused,
            listed: Some(false),
        };
        assert_eq!(
            to_json(&listed),
            r#"{"server":"notes","auth":{"state":"refused","error":"bad"},"listed":false}"#
        );
    }

    #[test]
    fn json_shape() {
        let l = listing(vec![
            json!({"name":"echo","description":"Echo.","inputSchema":{"type":"object"},
                   "annotations":{"readOnlyHint":true}}),
            json!({"name":"bad name","inputSchema":{"type":"object"}}),
        ]);
        let r = Report::new("Kit", Transport::Stdio, &info(), 2, &l, &[], 12).to_json();
        assert_eq!(r["server"], "Kit");
        assert_eq!(r["transport"], "stdio");
        assert_eq!(r["protocol_version"], "2025-11-25");
        assert_eq!(r["era"], "legacy");
        assert_eq!(r["left_out"], json!([]));
        assert_eq!(r["server_info"], json!({"name":"kit","version":"1.0"}));
        assert_eq!(r["violations"], 2);
        let t = &r["tools"][0];
        assert_eq!(t["name"], "echo");
        assert_eq!(t["local_name"], "kit_echo");
        assert!(t["fingerprint"].as_str().unwrap().starts_with("sha256:v1:"));
        assert_eq!(t["read_only_claim"], true);
        assert_eq!(t["destructive"], false);
        assert_eq!(t["verdict"], "propose");
        assert_eq!(t["reason"], Value::Null);
        let bad = &r["tools"][1];
        assert_eq!(bad["verdict"], "refuse");
        assert_eq!(bad["destructive"], true);
        assert!(bad["reason"].as_str().unwrap().contains("name"));
        assert_eq!(r["warnings"][0], "the server broke the protocol 2 times");
    }

    #[test]
    fn over_cap_and_allow_tools_warnings() {
        let many: Vec<Value> = (0..13)
            .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        let r = Report::new(
            "s",
            Transport::Http,
            &info(),
            0,
            &listing(many.clone()),
            &[],
            12,
        )
        .to_json();
        assert!(r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["verdict"] == "refuse"));
        assert!(r["warnings"][0].as_str().unwrap().contains("max_tools"));
        let allow = vec!["t1".to_owned(), "gone".to_owned()];
        let r = Report::new("s", Transport::Http, &info(), 0, &listing(many), &allow, 12).to_json();
        let proposed: Vec<_> = r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["verdict"] == "propose")
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(proposed, [json!("t1")]);
        assert!(r["warnings"][0].as_str().unwrap().contains("\"gone\""));
    }

    #[test]
    fn over_cap_suggests_a_ready_allow_tools_line_of_the_read_only_tools() {
        // 14 tools as the filesystem server offers them: some claim read-only, one of those
        // has a name the allowlist refuses.
        let mut many: Vec<Value> = (0..11)
            .map(|i| json!({"name": format!("write_{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        for name in ["read_file", "list_directory", "bad name"] {
            many.push(json!({"name": name, "inputSchema": {"type": "object"},
                             "annotations": {"readOnlyHint": true}}));
        }
        let r = Report::new(
            "files",
            Transport::Stdio,
            &info(),
            0,
            &listing(many.clone()),
            &[],
            12,
        );
        assert_eq!(
            r.paste_line().as_deref(),
            Some(r#""allow_tools": ["read_file", "list_directory"]"#)
        );
        let text = r.to_text();
        assert!(
            text.ends_with(
                "to allow the 2 tools that claim read-only, paste into mcp_servers.files:\n\
                 \"allow_tools\": [\"read_file\", \"list_directory\"]\n"
            ),
            "{text}"
        );
        assert_eq!(
            r.to_json()["suggested_allow_tools"],
            json!(["read_file", "list_directory"])
        );
        // The suggestion, pasted, proposes exactly those tools.
        let allow = r.suggested_allow_tools.clone().unwrap();
        let pasted = Report::new(
            "files",
            Transport::Stdio,
            &info(),
            0,
            &listing(many),
            &allow,
            12,
        );
        let proposed: Vec<&str> = pasted
            .tools
            .iter()
            .filter(|t| t.verdict.reason().is_none())
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(proposed, ["read_file", "list_directory"]);
        assert_eq!(
            pasted.paste_line(),
            None,
            "nothing to suggest with allow_tools set"
        );
        assert_eq!(pasted.to_json()["suggested_allow_tools"], Value::Null);
    }

    #[test]
    fn over_cap_without_read_only_tools_suggests_an_empty_line_to_fill() {
        let many: Vec<Value> = (0..13)
            .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        let text = Report::new("s", Transport::Http, &info(), 0, &listing(many), &[], 12).to_text();
        assert!(
            text.ends_with(
                "none of its tools claims read-only: name the tools you want in \
                 mcp_servers.s:\n\"allow_tools\": []\n"
            ),
            "{text}"
        );
        let few = listing(vec![
            json!({"name": "a", "inputSchema": {"type": "object"}}),
        ]);
        let r = Report::new("s", Transport::Http, &info(), 0, &few, &[], 12);
        assert!(
            !r.to_text().contains("allow_tools"),
            "under the cap: no hint"
        );
    }

    #[test]
    fn text_escapes_server_written_control_characters() {
        let l = listing(vec![
            json!({"name":"echo","description":"a\u{1b}[31mred\nline",
                                    "inputSchema":{"type":"object"}}),
        ]);
        let hostile = mcp::ServerInfo::new("2025-11-25", "esc\u{1b}]0;pwned\u{7}", "1.0\u{9b}2J");
        let text = Report::new("s", Transport::Stdio, &hostile, 0, &l, &[], 12).to_text();
        assert!(
            text.contains("offers:    esc\\e]0;pwned\\u{7} 1.0\\u{9b}2J"),
            "{text}"
        );
        assert!(
            !text.chars().any(|c| shown::is_hazard(c) && c != '\n'),
            "{text:?}"
        );
        assert!(text.contains("description: a\\e[31mred⏎line"), "{text}");
    }
}
