//! `maven doctor [--json]`: is this set-up right? Every check changes nothing: the config
//! validates; the data directory, database and socket belong to the current user with private
//! modes; a daemon on the data directory answers `status` (a short deadline); each enabled
//! stdio server's command resolves; each HTTP door's URL passes its door's vetting (no request,
//! no lookup); the page's port is free or held by our daemon (a bind on loopback, released at
//! once). Two probes reach out, each through its door and within [`PROBE_DEADLINE`]: the model
//! router's endpoint gets one GET (the model is never asked), and each configured speech service
//! (`voice.asr`, `voice.tts`, `voice.wake`) one Wyoming `describe`, whose `info` must offer a
//! program of its kind.
//!
//! Beside a running daemon, its `status` view (typed, never its text) adds a line per MCP server
//! and per feed the daemon runs (`daemon mcp:NAME`, `daemon feed:NAME`): its state and last
//! error. An enabled server that is not ready fails the report, but one still connecting within
//! [`CONNECT_GRACE`] of the daemon's start, which is a warning; a feed that keeps failing is a
//! warning (the daemon retries it on its schedule), one the daemon stopped polling a failure.
//!
//! One line per check, `ok|warn|fail  <check>: <what> — <what to do>`; with `--json` an array
//! of `{check, status, message, fix}`. Exit 0, or 1 when any check fails.

use crate::exit::{out, outln};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use config::{Config, McpTarget, RouterKind};
use serde::Serialize;
use serde_json::json;

use crate::exit::EXIT_FAILED;
use crate::ipc::client::{self as ipc, IpcError};
use wire::protocol::socket_path;

/// How long the daemon has to answer `status`.
const STATUS_DEADLINE: Duration = Duration::from_secs(3);
/// How long after the daemon's start a server still connecting is only a warning.
pub(crate) const CONNECT_GRACE: Duration = Duration::from_secs(30);
/// The database file's name inside the data directory (the daemon's `DB_NAME`).
const DB_NAME: &str = "maven.db";

/// A check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Check {
    pub(crate) check: String,
    pub(crate) status: Status,
    pub(crate) message: String,
    pub(crate) fix: String,
}

fn check(name: impl Into<String>, status: Status, message: String, fix: &str) -> Check {
    Check {
        check: name.into(),
        status,
        message,
        fix: fix.to_owned(),
    }
}

/// Runs every check and prints the report.
pub(crate) async fn run(config_path: Option<&Path>, data_dir: &Path, as_json: bool) -> ExitCode {
    let checks = checks(config_path, data_dir).await;
    if as_json {
        outln!("{}", json!(checks));
    } else {
        out!("{}", to_text(&checks));
    }
    if checks.iter().any(|c| c.status == Status::Fail) {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// The text report: one line per check; a message of several lines (the config's problems)
/// continues indented below its line.
fn to_text(checks: &[Check]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for c in checks {
        let mut lines = c.message.lines();
        let first = lines.next().unwrap_or("");
        let rest: Vec<&str> = lines.collect();
        if rest.is_empty() {
            let _ = writeln!(
                s,
                "{:<4}  {}: {} — {}",
                c.status.as_str(),
                c.check,
                first,
                c.fix
            );
        } else {
            let _ = writeln!(
                s,
                "{:<4}  {}: the configuration does not validate — {}",
                c.status.as_str(),
                c.check,
                c.fix
            );
            for l in c.message.lines() {
                let _ = writeln!(s, "      {l}");
            }
        }
    }
    s
}

/// Every check, in the order a new user meets them.
pub(crate) async fn checks(config_path: Option<&Path>, data_dir: &Path) -> Vec<Check> {
    let mut out = Vec::new();
    let cfg = config_check(config_path, &mut out);
    data_dir_checks(data_dir, &mut out);
    let status = daemon_check(data_dir, &mut out).await;
    if let Some(cfg) = cfg {
        stdio_checks(&cfg, &mut out);
        grant_checks(&cfg, data_dir, &mut out);
        sandbox_check(&cfg, &mut out);
        door_checks(&cfg, &mut out);
        out.push(port_check(cfg.web.listen, status.is_some()));
        if let Some(c) = router_probe(&cfg).await {
            out.push(c);
        }
        voice_probes(&cfg, &mut out).await;
        out.push(sentences_check(&cfg, config_path));
    }
    if let Some(status) = &status {
        running_checks(status, &mut out);
    }
    out
}

/// The owner's sentence files: each problem with its file, line and column, or how many
/// templates of theirs load.
fn sentences_check(cfg: &Config, config_path: Option<&Path>) -> Check {
    let problems = crate::cmd::sentences::problems(cfg, config_path);
    if problems.is_empty() {
        let files = crate::phrases::paths(cfg, config_path).len();
        return check(
            "sentences",
            Status::Ok,
            format!("{files} sentence file(s) of yours load, besides the phrasebook"),
            "nothing to do",
        );
    }
    check(
        "sentences",
        Status::Fail,
        shown::line(&problems.join("; ")).into_owned(),
        "fix the file at the line and column named (maven sentences check names each problem); until then only the phrasebook is used",
    )
}

/// How long a probe of an endpoint (the model router, a speech service) may take.
const PROBE_DEADLINE: Duration = Duration::from_secs(5);

/// The model router's endpoint asked once (a GET through the `router` door: any HTTP answer
/// says something listens there; nothing is sent to the model). `None` for the rules router.
async fn router_probe(cfg: &Config) -> Option<Check> {
    if cfg.router.kind != RouterKind::Llm {
        return None;
    }
    let url = cfg.router.url.as_deref()?;
    let shown_url = shown::line(&crate::json::mask_word(url, false)).into_owned();
    let label = "router endpoint";
    let door = match cfg.door(&config::Door::Router) {
        Ok(d) => d,
        Err(e) => {
            return Some(check(
                label,
                Status::Fail,
                e.to_string(),
                "fix the configuration",
            ))
        }
    };
    let fetcher = webfetch::Fetcher::new(door);
    let fix = format!(
        "start the model server at {shown_url}, or fix router.url (or set \"router\": {{\"kind\": \"rules\"}}); until then every turn the rules router cannot place falls back to it, and says so"
    );
    Some(
        match tokio::time::timeout(PROBE_DEADLINE, fetcher.get(url)).await {
            Ok(Ok(r)) => check(
                label,
                Status::Ok,
                format!(
                    "{shown_url} answers (HTTP {} to a GET; the model is asked only by a turn)",
                    r.status().as_u16()
                ),
                "nothing to do",
            ),
            Ok(Err(e)) => check(
                label,
                Status::Fail,
                format!("{shown_url}: no answer: {}", shown::line(&e.to_string())),
                &fix,
            ),
            Err(_) => check(
                label,
                Status::Fail,
                format!(
                    "{shown_url}: no answer within {} s",
                    PROBE_DEADLINE.as_secs()
                ),
                &fix,
            ),
        },
    )
}

/// Each configured speech service (`voice.asr`, `voice.tts`, `voice.wake`) dialled through the
/// `voice` door and asked `describe`: it must answer `info` offering a program of its kind.
async fn voice_probes(cfg: &Config, out: &mut Vec<Check>) {
    let door = match super::listen::Door::of(cfg) {
        Ok(d) => d,
        Err(e) => {
            out.push(check(
                "voice".to_owned(),
                Status::Fail,
                e.to_string(),
                "fix the configuration",
            ));
            return;
        }
    };
    for (key, addr, kind) in [
        ("asr", &cfg.voice.asr, "speech-to-text"),
        ("tts", &cfg.voice.tts, "text-to-speech"),
        ("wake", &cfg.voice.wake, "wake-word"),
    ] {
        let Some(addr) = addr else { continue };
        let label = format!("voice {key}");
        let at = shown::line(&addr.to_string()).into_owned();
        let fix = format!(
            "start the {kind} service (see the README's \"Voice\"), or fix voice.{key}; a loopback or LAN service needs \"voice\": {{\"allow_private\": true}}"
        );
        let asked = tokio::time::timeout(PROBE_DEADLINE, async {
            let limits = wyoming::ClientLimits::default();
            let mut c = wyoming::Client::connect(addr, &door, limits).await?;
            c.describe().await
        })
        .await;
        let info = match asked {
            Ok(Ok(info)) => info,
            Ok(Err(e)) => {
                out.push(check(
                    label,
                    Status::Fail,
                    // With its causes: the door's refusal, the connection's error.
                    format!(
                        "{at}: {}",
                        shown::line(&format!("{:#}", anyhow::Error::new(e)))
                    ),
                    &fix,
                ));
                continue;
            }
            Err(_) => {
                out.push(check(
                    label,
                    Status::Fail,
                    format!(
                        "{at}: no info within {} s of describe",
                        PROBE_DEADLINE.as_secs()
                    ),
                    &fix,
                ));
                continue;
            }
        };
        let programs = match key {
            "asr" => &info.asr,
            "tts" => &info.tts,
            _ => &info.wake,
        };
        let named = |p: &wyoming::events::Program| match &p.version {
            Some(v) => format!("{} {}", shown::line(&p.name), shown::line(v)),
            None => shown::line(&p.name).into_owned(),
        };
        out.push(if programs.is_empty() {
            check(
                label,
                Status::Fail,
                format!("{at} answers describe, but offers no {kind} program"),
                &format!("point voice.{key} at a {kind} service"),
            )
        } else {
            check(
                label,
                Status::Ok,
                format!(
                    "{at} answers describe: {} ({kind})",
                    programs.iter().map(named).collect::<Vec<_>>().join(", ")
                ),
                "nothing to do",
            )
        });
    }
}

fn config_check(path: Option<&Path>, out: &mut Vec<Check>) -> Option<Config> {
    match Config::load(path) {
        Ok(c) => {
            let message = match &c.source {
                Some(p) => format!("{} validates ({})", p.display(), c.counts()),
                None => format!(
                    "no file at {}; every default applies (nothing external)",
                    config::default_config_path().display()
                ),
            };
            out.push(check("config", Status::Ok, message, "nothing to do"));
            Some(c)
        }
        Err(e) => {
            out.push(check(
                "config",
                Status::Fail,
                shown::block(&e.to_string()).into_owned(),
                "fix the file (`maven config check` lists the same problems); the checks that \
                 need the configuration were skipped",
            ));
            None
        }
    }
}

/// The current user (the effective uid), without `unsafe`.
fn current_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn data_dir_checks(dir: &Path, out: &mut Vec<Check>) {
    let shown = dir.display().to_string();
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            out.push(check(
                "data-dir",
                Status::Warn,
                format!("{shown} does not exist yet"),
                "`maven daemon` creates it (mode 0700) on its first start",
            ));
            return;
        }
        Err(e) => {
            out.push(check(
                "data-dir",
                Status::Fail,
                format!("cannot read {shown}: {e}"),
                "check the path given with --data or MAVEN_DATA and its parents' permissions",
            ));
            return;
        }
    };
    if !meta.is_dir() {
        out.push(check(
            "data-dir",
            Status::Fail,
            format!("{shown} is not a directory"),
            "point --data (or MAVEN_DATA) at a directory, or remove what is there",
        ));
        return;
    }
    let dir_check = private(
        "data-dir",
        &shown,
        &meta,
        0o700,
        &format!("chmod 700 {shown}"),
    );
    out.push(dir_check);
    for (name, what, want) in [("database", DB_NAME, 0o600), ("socket", "", 0o600)] {
        let path: PathBuf = if name == "socket" {
            socket_path(dir)
        } else {
            dir.join(what)
        };
        let shown = path.display().to_string();
        match std::fs::symlink_metadata(&path) {
            Ok(m) => {
                let right_kind = if name == "socket" {
                    m.file_type().is_socket()
                } else {
                    m.is_file()
                };
                if !right_kind {
                    out.push(check(
                        name,
                        Status::Fail,
                        format!(
                            "{shown} is not a {}",
                            if name == "socket" { "socket" } else { "file" }
                        ),
                        "move it away; the daemon creates its own",
                    ));
                    continue;
                }
                out.push(private(
                    name,
                    &shown,
                    &m,
                    want,
                    &format!("chmod 600 {shown}"),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let what = if name == "socket" {
                    "no socket (no daemon has it open)"
                } else {
                    "no database yet"
                };
                out.push(check(
                    name,
                    Status::Ok,
                    format!("{shown}: {what}"),
                    "nothing to do; the daemon creates it (mode 0600)",
                ));
            }
            Err(e) => out.push(check(
                name,
                Status::Fail,
                format!("cannot read {shown}: {e}"),
                "check the data directory's permissions",
            )),
        }
    }
}

/// Owned by the current user, and no permission bit for the group or others (the store creates
/// its database 0600 and the IPC server its socket 0600, so anything wider was changed by hand).
fn private(name: &str, shown: &str, meta: &std::fs::Metadata, want: u32, fix: &str) -> Check {
    let uid = current_uid();
    let mode = meta.permissions().mode() & 0o7777;
    if meta.uid() != uid {
        return check(
            name,
            Status::Fail,
            format!(
                "{shown} belongs to uid {}, not to the current user (uid {uid})",
                meta.uid()
            ),
            &format!("run Maven as its owner, or `chown {uid} {shown}`"),
        );
    }
    if mode & 0o077 != 0 {
        return check(
            name,
            Status::Fail,
            format!("{shown} has mode {mode:04o}: others may read it (want {want:04o})"),
            fix,
        );
    }
    check(
        name,
        Status::Ok,
        format!("{shown}: yours, mode {mode:04o}"),
        "nothing to do",
    )
}

/// Whether a daemon on `data_dir` answers `status` within the deadline: its status when it does.
async fn daemon_check(data_dir: &Path, out: &mut Vec<Check>) -> Option<wire::views::StatusView> {
    let sock = socket_path(data_dir).display().to_string();
    match tokio::time::timeout(
        STATUS_DEADLINE,
        ipc::ask::<wire::views::StatusView>(data_dir, &wire::methods::Request::Status),
    )
    .await
    {
        Ok(Ok(v)) => {
            let (version, up) = (&v.version, v.uptime_s);
            out.push(check(
                "daemon",
                Status::Ok,
                format!(
                    "a daemon answers on {sock} (version {}, up {up} s)",
                    shown::line(version)
                ),
                "nothing to do",
            ));
            Some(v)
        }
        Ok(Err(IpcError::NoDaemon { reason, .. })) => {
            out.push(check(
                "daemon",
                Status::Warn,
                format!(
                    "no daemon is running on {} ({})",
                    data_dir.display(),
                    shown::line(&reason)
                ),
                "start one with `maven daemon` (or as a service, see the README)",
            ));
            None
        }
        Ok(Err(e)) => {
            out.push(check(
                "daemon",
                Status::Fail,
                format!(
                    "the daemon on {sock} did not answer status: {}",
                    shown::line(&e.to_string())
                ),
                "read its log; restart it if it stays so",
            ));
            None
        }
        Err(_) => {
            out.push(check(
                "daemon",
                Status::Fail,
                format!(
                    "the daemon on {sock} did not answer status within {} s",
                    STATUS_DEADLINE.as_secs()
                ),
                "read its log; restart it if it stays so",
            ));
            None
        }
    }
}

/// A line per enabled MCP server and per feed the running daemon polls, from its status view.
fn running_checks(status: &wire::views::StatusView, out: &mut Vec<Check>) {
    let uptime = Duration::from_secs(status.uptime_s);
    out.extend(
        status
            .mcp_servers
            .iter()
            .filter_map(|s| server_check(s, uptime)),
    );
    out.extend(status.feeds.iter().filter_map(feed_check));
    if let Some(r) = &status.router {
        if let Some(e) = &r.last_error {
            out.push(check(
                "daemon router",
                Status::Warn,
                format!(
                    "the daemon's last request to the model failed at {}: {}; the rules router answered",
                    r.last_error_at.as_deref().map_or("-".into(), shown::line),
                    shown::line(e)
                ),
                "see `router endpoint` above; `maven status` shows the router's last answer",
            ));
        }
    }
}

/// An enabled server as the daemon sees it; `None` for one the configuration leaves off.
pub(crate) fn server_check(s: &wire::views::ServerStatusView, uptime: Duration) -> Option<Check> {
    use wire::views::ServerState as S;
    if !s.enabled {
        return None;
    }
    let name = shown::line(&s.name);
    let label = format!("daemon mcp:{name}");
    let error = s
        .last_error
        .as_deref()
        .map(|e| format!("; last error: {}", shown::line(e)))
        .unwrap_or_default();
    let state = shown::line(&s.state.text()).into_owned();
    let started = uptime.as_secs();
    let (status, message, fix) = match &s.state {
        S::Ready => {
            let tools = s.tools_offered.map_or_else(
                || "its tools not listed yet".to_owned(),
                |n| format!("{n} tools offered"),
            );
            (
                Status::Ok,
                format!(
                    "ready ({tools}, {} proposed, {} enabled)",
                    s.tools_proposed, s.tools_enabled
                ),
                "nothing to do".to_owned(),
            )
        }
        S::Connecting | S::NotConnected if uptime < CONNECT_GRACE => (
            Status::Warn,
            format!("{state}: the daemon started {started} s ago{error}"),
            "run `maven doctor` again in a few seconds".to_owned(),
        ),
        S::Connecting | S::NotConnected => (
            Status::Fail,
            format!("still {state} {started} s after the daemon started{error}"),
            format!(
                "read its stderr in `maven mcp status` and the daemon's log; `maven mcp inspect {name}` dials it alone"
            ),
        ),
        S::BackingOff { .. } | S::Stopped => (
            Status::Fail,
            format!("{state}{error}"),
            format!(
                "fix what the error names (its stderr is in `maven mcp status`; `maven mcp inspect {name}` dials it alone); the daemon dials it again by itself"
            ),
        ),
        S::CommandNotFound => (
            Status::Fail,
            format!("{state}{error}"),
            format!(
                "install it, or fix mcp_servers.{name}.command, then `maven reload`"
            ),
        ),
        S::SandboxRefused => (
            Status::Fail,
            format!("{state}{error}"),
            format!(
                "fix what the sandbox checks name, or set \"sandbox\": false in mcp_servers.{name}, then `maven reload`"
            ),
        ),
        S::NeedsAuthorization => (
            Status::Fail,
            format!("{state}{error}"),
            format!("run `maven mcp login {name}`"),
        ),
        S::OverCap(_) => (
            Status::Fail,
            state.clone(),
            format!(
                "name the tools it may offer: `maven mcp allow {name} TOOL…` (`maven mcp inspect {name}` says which claim to be read-only)"
            ),
        ),
        S::Dark | S::Unknown => (
            Status::Warn,
            format!("{state}{error}"),
            "read `maven mcp status` and the daemon's log".to_owned(),
        ),
    };
    Some(Check {
        check: label,
        status,
        message,
        fix,
    })
}

/// A feed the daemon polls (or stopped polling), from its status; `None` for one the
/// configuration leaves off.
pub(crate) fn feed_check(f: &wire::views::FeedView) -> Option<Check> {
    let live = f.live.as_ref()?;
    let name = shown::line(&f.name);
    let label = format!("daemon feed:{name}");
    let error = f.last_error.as_deref().map(shown::line);
    let next = f
        .next_poll
        .as_deref()
        .map_or(std::borrow::Cow::Borrowed("none"), shown::line);
    Some(match (f.enabled, error) {
        // Configured off: nothing to say.
        (false, None) => return None,
        (false, Some(e)) => check(
            label,
            Status::Fail,
            format!("the daemon stopped polling it: {e}"),
            &format!("fix or remove the feed \"{name}\" in the configuration, then `maven reload`"),
        ),
        (true, Some(e)) if live.failures > 0 => check(
            label,
            Status::Warn,
            format!("{} failed poll(s) in a row: {e}; next poll {next}", live.failures),
            &format!("check its URL (`maven fetch URL --door feed:{name}`); the daemon retries it on its schedule"),
        ),
        (true, _) => {
            let last = f
                .last_success
                .as_deref()
                .map_or(std::borrow::Cow::Borrowed("not polled yet"), |t| {
                    std::borrow::Cow::Owned(format!("last polled {}", shown::line(t)))
                });
            check(
                label,
                Status::Ok,
                format!("{last}; next poll {next}"),
                "nothing to do",
            )
        }
    })
}

fn stdio_checks(cfg: &Config, out: &mut Vec<Check>) {
    for (name, block) in &cfg.mcp_servers {
        if !block.enabled {
            continue;
        }
        let McpTarget::Stdio { command, env, .. } = &block.target else {
            continue;
        };
        let label = format!("mcp:{name}");
        let shown_cmd = shown::line(command);
        // The PATH the daemon looks the command up in, sandboxed or not: the same words.
        let path = crate::confine::block_path(env);
        match sandbox::find_command(command, path.as_deref()) {
            Ok(p) => out.push(check(
                label,
                Status::Ok,
                format!("{shown_cmd} resolves to {}", p.display()),
                "nothing to do",
            )),
            Err(e @ sandbox::CommandNotFound::NoSuchFile { .. }) => out.push(check(
                label,
                Status::Fail,
                shown::line(&e.to_string()).into_owned(),
                &format!("install it, or fix mcp_servers.{name}.command"),
            )),
            Err(e @ sandbox::CommandNotFound::NotOnPath { .. }) => out.push(check(
                label,
                Status::Fail,
                shown::line(&e.to_string()).into_owned(),
                &format!("install it, or give its absolute path in mcp_servers.{name}.command"),
            )),
        }
    }
}

/// each enabled sandboxed server's grants as its sandbox will take them: one that is a
/// link (or passes through one) keeps it from starting; one that does not exist is left out.
fn grant_checks(cfg: &Config, data_dir: &Path, out: &mut Vec<Check>) {
    for (name, block) in &cfg.mcp_servers {
        if !block.enabled {
            continue;
        }
        let label = format!("sandbox grants mcp:{name}");
        if let Some(policy) = &block.sandbox {
            for why in crate::confine::root_unwritable(data_dir, name, &policy.write) {
                out.push(check(
                    label.clone(),
                    Status::Fail,
                    why,
                    "fix the owner as said, then `maven reload`; until then its start is refused",
                ));
            }
        }
        match crate::confine::plan(cfg, data_dir, name, cfg.web.listen.port()) {
            Some(Err(e @ sandbox::PlanError::Grant(_))) => out.push(check(
                label,
                Status::Fail,
                shown::line(&e.to_string()).into_owned(),
                &format!("remove the link and make it a real directory or file, or point mcp_servers.{name}.sandbox at the real path; the server does not start until then"),
            )),
            Some(Ok(plan)) if !plan.absent.is_empty() => {
                let list: Vec<String> = plan
                    .absent
                    .iter()
                    .map(|p| shown::line(&p.display().to_string()).into_owned())
                    .collect();
                out.push(check(
                    label,
                    Status::Warn,
                    format!("{} does not exist: left out (not created, not bound)", list.join(", ")),
                    "create it before the server starts if the server should have it",
                ));
            }
            _ => {}
        }
    }
}

/// whether this kernel can sandbox the enabled sandboxed servers (only when there is one).
fn sandbox_check(cfg: &Config, out: &mut Vec<Check>) {
    let sandboxed: Vec<&str> = cfg
        .mcp_servers
        .values()
        .filter(|b| b.enabled && b.sandbox.is_some())
        .map(|b| b.name.as_str())
        .collect();
    if sandboxed.is_empty() {
        return;
    }
    out.push(match sandbox::probe() {
        Ok(()) => check(
            "sandbox",
            Status::Ok,
            format!(
                "the kernel has what the sandbox of {} needs (Landlock ABI 6, user namespaces)",
                sandboxed.join(", ")
            ),
            "nothing to do",
        ),
        Err(m) => check(
            "sandbox",
            Status::Fail,
            format!("{} will not start: {m}", sandboxed.join(", ")),
            "run Linux 6.12 or later with Landlock enabled and unprivileged user namespaces allowed, or set \"sandbox\": false in the block (it then runs as you)",
        ),
    });
    for (what, held, message) in sandbox::bounds() {
        out.push(check(
            format!("sandbox bounds: {what}"),
            if held { Status::Ok } else { Status::Fail },
            message,
            if held {
                "nothing to do"
            } else {
                "run a kernel with PID namespaces and seccomp, or set \"sandbox\": false in the block"
            },
        ));
    }
}

fn door_checks(cfg: &Config, out: &mut Vec<Check>) {
    let mut doors: Vec<(config::Door, String, String)> = Vec::new();
    for (name, block) in &cfg.mcp_servers {
        if let (true, McpTarget::Http { url, .. }) = (block.enabled, &block.target) {
            doors.push((
                config::Door::Mcp(name.clone()),
                url.clone(),
                format!("mcp_servers.{name}"),
            ));
        }
    }
    for feed in cfg.feeds.iter().filter(|f| f.enabled) {
        doors.push((
            config::Door::Feed(feed.name.clone()),
            feed.url.clone(),
            format!("the feed {:?}", feed.name),
        ));
    }
    if cfg.router.kind == RouterKind::Llm {
        if let Some(url) = &cfg.router.url {
            doors.push((config::Door::Router, url.clone(), "router".into()));
        }
    }
    for (door, url, block) in doors {
        out.push(door_check(cfg, &door, &url, &block));
    }
}

fn door_check(cfg: &Config, door_name: &config::Door, url: &str, block: &str) -> Check {
    let label = format!("door {door_name}");
    let shown_url = shown::line(url);
    let door = match cfg.door(door_name) {
        Ok(d) => d,
        Err(e) => return check(label, Status::Fail, e.to_string(), "fix the configuration"),
    };
    match webfetch::Fetcher::new(door).vet(url) {
        Ok(()) => {
            let by_name = matches!(
                url::Url::parse(url)
                    .ok()
                    .and_then(|u| u.host().map(|h| h.to_owned())),
                Some(url::Host::Domain(_))
            );
            let message = if by_name {
                format!("{shown_url}: ok (resolved at connect time)")
            } else {
                format!("{shown_url}: allowed")
            };
            check(label, Status::Ok, message, "nothing to do")
        }
        Err(e) => check(
            label,
            Status::Fail,
            format!("{shown_url}: {}", shown::line(&e.to_string())),
            &super::door_fix(block),
        ),
    }
}

/// The loopback address the check binds: the configured one when it is loopback, else the
/// loopback of its family on the same port.
fn loopback(listen: SocketAddr) -> SocketAddr {
    if listen.ip().is_loopback() {
        return listen;
    }
    let ip = match listen.ip() {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
    };
    SocketAddr::new(ip, listen.port())
}

fn port_check(listen: SocketAddr, daemon_answers: bool) -> Check {
    let addr = loopback(listen);
    match TcpListener::bind(addr) {
        Ok(l) => {
            drop(l);
            check(
                "web",
                Status::Ok,
                format!("{listen} (web.listen) is free"),
                "nothing to do",
            )
        }
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && daemon_answers => check(
            "web",
            Status::Ok,
            format!("{listen} (web.listen) is taken by the daemon on this data directory"),
            "nothing to do",
        ),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => check(
            "web",
            Status::Fail,
            format!("{listen} (web.listen) is taken by another program"),
            "stop that program, or set web.listen to a free port",
        ),
        Err(e) => check(
            "web",
            Status::Fail,
            format!("cannot bind {addr} (web.listen {listen}): {e}"),
            "set web.listen to a loopback address and a port above 1023",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_bare_names_through_path_and_paths_as_they_are() {
        let resolve = |c: &str, p: Option<&std::ffi::OsStr>| sandbox::find_command(c, p).ok();
        let path = std::ffi::OsString::from("/nonexistent-dir::/bin:/usr/bin");
        assert!(resolve("sh", Some(&path)).is_some());
        assert!(resolve("no-such-command-here", Some(&path)).is_none());
        assert!(resolve("sh", None).is_none());
        assert!(resolve("/bin/sh", None).is_some());
        assert!(resolve("/etc/passwd", None).is_none());
        assert!(resolve("", Some(&path)).is_none());
    }

    #[test]
    fn text_lines_and_multi_line_messages() {
        let checks = [
            check("daemon", Status::Warn, "none".into(), "start one"),
            check("config", Status::Fail, "a: x\nb: y".into(), "fix it"),
        ];
        let t = to_text(&checks);
        assert_eq!(
            t,
            "warn  daemon: none — start one\n\
             fail  config: the configuration does not validate — fix it\n      a: x\n      b: y\n"
        );
    }

    fn server(state: serde_json::Value, last_error: Option<&str>) -> wire::views::ServerStatusView {
        serde_json::from_value(json!({
            "name": "s", "transport": "stdio", "target": "x", "enabled": true,
            "state": state, "trust": "t", "protocol_version": null, "era": null,
            "era_chosen": null, "server_info": null, "tools_offered": null,
            "tools_proposed": 0, "tools_enabled": 0, "tools_refused": [],
            "last_error": last_error, "next_retry": null, "stderr_tail": null,
            "violations": 0, "dials": 1, "unstable": null,
        }))
        .unwrap()
    }

    #[test]
    fn a_server_still_connecting_is_a_warning_only_in_the_first_seconds() {
        let at = |secs| {
            let c = server_check(
                &server(json!("connecting"), None),
                Duration::from_secs(secs),
            )
            .unwrap();
            (c.status, c.message)
        };
        assert_eq!(
            at(3),
            (
                Status::Warn,
                "connecting: the daemon started 3 s ago".to_owned()
            )
        );
        assert_eq!(
            at(45),
            (
                Status::Fail,
                "still connecting 45 s after the daemon started".to_owned()
            )
        );
        let c = server_check(
            &server(json!("sandbox_refused"), Some("no Landlock")),
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(
            (c.status, c.message.as_str()),
            (
                Status::Fail,
                "not started: its sandbox cannot be applied; last error: no Landlock"
            ),
            "a refusal fails at once, grace or not"
        );
        let c = server_check(
            &server(json!("needs_authorization"), None),
            Duration::from_secs(100),
        )
        .unwrap();
        assert_eq!(
            (c.status, c.fix.as_str()),
            (Status::Fail, "run `maven mcp login s`")
        );
        let mut off = server(json!("dark"), None);
        off.enabled = false;
        assert!(server_check(&off, Duration::ZERO).is_none());
    }

    #[test]
    fn a_feed_failing_is_a_warning_and_one_the_daemon_stopped_a_failure() {
        let feed = |enabled: bool, error: Option<&str>, failures: u32| {
            serde_json::from_value::<wire::views::FeedView>(json!({
                "name": "news", "url": "https://a.example/f", "enabled": enabled,
                "last_success": null, "last_error": error, "next_poll": "2026-12-03T22:00:00Z",
                "items_noted": 0, "state": "x", "moved_to": null, "failures": failures,
                "warning": null,
            }))
            .unwrap()
        };
        let c = feed_check(&feed(true, None, 0)).unwrap();
        assert_eq!(
            (c.status, c.message.as_str()),
            (Status::Ok, "not polled yet; next poll 2026-12-03T22:00:00Z")
        );
        let c = feed_check(&feed(true, Some("HTTP 500"), 2)).unwrap();
        assert_eq!(
            (c.status, c.message.as_str()),
            (
                Status::Warn,
                "2 failed poll(s) in a row: HTTP 500; next poll 2026-12-03T22:00:00Z"
            )
        );
        let c = feed_check(&feed(false, Some("gone (410)"), 1)).unwrap();
        assert_eq!(
            (c.status, c.message.as_str()),
            (Status::Fail, "the daemon stopped polling it: gone (410)")
        );
        assert!(feed_check(&feed(false, None, 0)).is_none());
    }

    #[test]
    fn loopback_keeps_the_port() {
        let a: SocketAddr = "0.0.0.0:8765".parse().unwrap();
        assert_eq!(loopback(a), "127.0.0.1:8765".parse::<SocketAddr>().unwrap());
        let b: SocketAddr = "[::1]:9".parse().unwrap();
        assert_eq!(loopback(b), b);
    }
}
