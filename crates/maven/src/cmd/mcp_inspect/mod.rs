//! `maven mcp inspect NAME [--config PATH] [--json]` (M-7): dial one configured server through
//! the same client the daemon uses, list its tools, and print the handshake facts and what
//! Maven would do with each tool. Changes nothing in the store and never calls a tool.
//!
//! Exit codes: 0 when the listing completed, or when the server is authorized by the running
//! daemon (whose token never leaves it: `"listed": false`, its tools are in `maven tools`); 1
//! when dialling, the handshake, the authorization or the listing failed (the reason on
//! stderr, the same as `--json` says). Usage and config errors (2) are caught before this runs.

mod auth;
mod report;

use crate::exit::{errln, out, outln};
use std::path::Path;
use std::process::ExitCode;

use super::{config_name, load_config, runtime};
use crate::exit::{EXIT_FAILED, EXIT_USAGE};

use serde::Serialize;
use shown::line;

use wire::views::AuthState;

use auth::{auth_report, auth_text, authorized, daemon_report, AuthReport, AuthWord};
use report::Report;

/// `maven mcp inspect NAME [--json]`: the server's block of the configuration, how it starts
/// (its sandbox), who holds its authorization, then [`run`].
pub(crate) fn main(config: Option<&Path>, data_dir: &Path, name: String, json: bool) -> ExitCode {
    let Some(cfg) = load_config(config) else {
        return ExitCode::from(EXIT_USAGE);
    };
    let probe = sandbox::probe();
    // A server whose network goes through Maven hands its listeners to a door of this
    // command's own, served while it runs (the daemon's, if one runs, is not this one's).
    let door = crate::netdoor::Door::new(
        std::env::temp_dir().join(format!("maven-inspect-{}.sock", std::process::id())),
    );
    let (Some(launch), Some(block)) = (
        crate::confine::launch(&cfg, data_dir, &name, &probe, cfg.web.listen.port(), &door),
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
        crate::confine::Launch::Blocked(why) | crate::confine::Launch::NotFound(why) => {
            errln!("maven mcp inspect: {}: {}", line(&name), line(&why));
            return ExitCode::from(1);
        }
    };
    let plan =
        crate::confine::plan(&cfg, data_dir, &name, cfg.web.listen.port()).and_then(Result::ok);
    let policy = crate::policy::server(block);
    runtime(async move {
        let stop = tokio_util::sync::CancellationToken::new();
        let _stop = stop.clone().drop_guard();
        let proxied = plan
            .as_ref()
            .is_some_and(|p| matches!(p.network, sandbox::Network::Proxy { .. }));
        if proxied {
            match door.bind() {
                Ok(l) => {
                    tokio::spawn(door.clone().serve(l, stop));
                }
                Err(e) => errln!(
                    "maven mcp inspect: the sandbox network door {} cannot be bound: {e}",
                    door.path().display()
                ),
            }
        }
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
    let client = match (mcp::Lister::dial(&server, options).await, &oauth) {
        (Ok(c), _) => c,
        (Err((mcp::Error::Auth(e), _)), Some(o)) => {
            let name = line(&server.name);
            if let Some(Ok(d)) = daemon.as_ref().filter(|d| authorized(d)) {
                // The server takes only the daemon's token, which stays in the daemon.
                let auth = daemon_report(d);
                errln!(
                    "maven mcp inspect: {name}: authorized by the running daemon, whose token never leaves it: its tools are in `maven tools`"
                );
                say_not_listed(&server.name, &auth, Some(false), json);
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
            say_not_listed(&server.name, &auth, None, json);
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
    let transport = crate::json::transport(&server.transport);
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

/// Prints what inspect knows of a server it could not list: its authorization, as one line
/// of JSON (with `listed`) or as text.
fn say_not_listed(server: &str, auth: &AuthReport, listed: Option<bool>, json: bool) {
    if json {
        outln!(
            "{}",
            to_json(&NotListed {
                server,
                auth,
                listed,
            })
        );
    } else {
        out!("{}", auth_text(server, auth));
    }
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
    network: &'a sandbox::Network,
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
        network: &p.network,
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
    let net = match &p.network {
        sandbox::Network::Direct if p.deny_ports.is_empty() => "shared (direct)".to_owned(),
        sandbox::Network::Direct => {
            let ports: Vec<String> = p.deny_ports.iter().map(u16::to_string).collect();
            format!(
                "shared (direct), no TCP connection to port {}",
                ports.join(", ")
            )
        }
        sandbox::Network::None => "none (a network namespace of its own, no TCP)".to_owned(),
        sandbox::Network::Proxy { hosts, connect } => {
            let mut s = format!(
                "a network namespace of its own; out only through Maven's proxy at {} (public addresses{})",
                sandbox::PROXY,
                if hosts.is_empty() {
                    String::new()
                } else {
                    format!(" of {}", hosts.join(", "))
                }
            );
            for e in connect {
                s.push_str(&format!("; {} relayed", e.written));
            }
            s
        }
    };
    let _ = writeln!(s, "  network:    {net}");
    let _ = writeln!(
        s,
        "  limits:     {} bytes of address space, {} processes and threads",
        p.memory, p.processes
    );
    s
}

#[cfg(test)]
mod tests {
    use super::auth::Found;
    use super::*;
    use serde_json::json;

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
}
