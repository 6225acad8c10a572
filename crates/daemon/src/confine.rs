//! Which stdio servers run sandboxed, and how. A sandboxed block's command is
//! resolved into a `sandbox::Plan` and started as `maven __sandbox-exec PLAN -- command args…`
//! (this binary, re-executed): the mcp crate spawns it like any other command. A block whose
//! sandbox cannot be applied is never started, and says why. A block whose command does not
//! exist, sandboxed or not, is not started either: its words name the command and where it
//! was looked for, and nothing of the sandbox (no sandbox setting would make it run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use config::{Config, McpTarget};

/// What the daemon does with one server block.
#[derive(Debug)]
pub enum Launch {
    /// Start it with this configuration (sandboxed, unsandboxed or HTTP).
    Start(Box<mcp::ServerConfig>),
    /// Its sandbox cannot be applied: it is not started, for this reason.
    Blocked(String),
    /// Its command does not exist (sandboxed or not): it is not started, and this says which
    /// command and where it was looked for.
    NotFound(String),
}

/// Why an enabled block is not started.
#[derive(Debug, Clone)]
pub struct Blocked {
    /// The owner's words (status's `last_error`, the log).
    pub why: String,
    /// Its command does not exist: not a sandbox matter.
    pub command_missing: bool,
}

/// The `PATH` a stdio block's command is looked up in: the block's own, else the daemon's (as
/// the stdio spawn sets it for the child).
pub fn block_path(env: &BTreeMap<String, config::Secret>) -> Option<std::ffi::OsString> {
    env.get("PATH")
        .map(|v| std::ffi::OsString::from(v.expose().to_string()))
        .or_else(|| std::env::var_os("PATH"))
}

/// The plan of a sandboxed stdio block, or `None` for an HTTP or `"sandbox": false` block.
pub fn plan(
    config: &Config,
    data_dir: &Path,
    name: &str,
    page_port: u16,
) -> Option<Result<sandbox::Plan, sandbox::PlanError>> {
    let block = config.mcp_servers.get(name)?;
    let (McpTarget::Stdio { command, args, env }, Some(policy)) = (&block.target, &block.sandbox)
    else {
        return None;
    };
    let path = block_path(env);
    let ctx = sandbox::Context {
        data_dir,
        path: path.as_deref(),
        deny_ports: vec![page_port],
        owner_home: std::env::var_os("HOME").map(Into::into),
    };
    Some(sandbox::Plan::resolve(name, policy, command, args, &ctx))
}

/// How to start server `name`: its sandbox applied (when it has one), given what the
/// daemon's [`sandbox::probe`] found. `None` when no such block exists.
pub fn launch(
    config: &Config,
    data_dir: &Path,
    name: &str,
    probe: &Result<(), sandbox::Missing>,
    page_port: u16,
    door: &crate::netdoor::Door,
) -> Option<Launch> {
    launch_planned(
        config,
        name,
        probe,
        plan(config, data_dir, name, page_port),
        door,
    )
}

/// [`launch`], with the block's plan (`None`: an HTTP or unsandboxed block) already made.
fn launch_planned(
    config: &Config,
    name: &str,
    probe: &Result<(), sandbox::Missing>,
    planned: Option<Result<sandbox::Plan, sandbox::PlanError>>,
    door: &crate::netdoor::Door,
) -> Option<Launch> {
    let server = config.mcp_server(name)?;
    let Some(plan) = planned else {
        // Unsandboxed: a command that does not exist is said so before anything starts.
        if let Some(McpTarget::Stdio { command, env, .. }) =
            config.mcp_servers.get(name).map(|b| &b.target)
        {
            if let Err(e) = sandbox::find_command(command, block_path(env).as_deref()) {
                return Some(Launch::NotFound(e.to_string()));
            }
        }
        // Unsandboxed: still in a PID namespace of its own, through the launcher, so that
        // every process it starts ends with it.
        let wrap = |command, args: Vec<String>| {
            let mut v = vec![sandbox::GROUP_ARG.to_owned(), "--".to_owned(), command];
            v.extend(args);
            v
        };
        return Some(match through_launcher(server, wrap, None) {
            Ok(s) => Launch::Start(Box::new(s)),
            Err(e) => Launch::Blocked(e),
        });
    };
    if let Err(m) = probe {
        return Some(Launch::Blocked(m.to_string()));
    }
    let refused = |why: String| {
        Launch::Blocked(format!(
            "{why}; the server was not started. \"sandbox\": false in its block runs it unsandboxed, as the owner's explicit choice"
        ))
    };
    let mut plan = match plan {
        Ok(p) => p,
        // A grant the sandbox refuses (a link) is not fixed by turning the sandbox off.
        Err(e @ sandbox::PlanError::Grant(_)) => {
            return Some(Launch::Blocked(format!("{e}; the server was not started")))
        }
        // No such program: no sandbox setting would make it run, so no word of one.
        Err(sandbox::PlanError::NotFound(e)) => return Some(Launch::NotFound(e.to_string())),
        Err(e) => return Some(refused(e.to_string())),
    };
    if let Err(e) = sandbox::prepare(&mut plan) {
        return Some(refused(format!("sandbox: its private directory: {e}")));
    }
    // Out only through Maven: the launcher hands its namespace's listeners to the door,
    // showing the token this start alone was given.
    let token = match &plan.network {
        sandbox::Network::Proxy { connect, .. } => {
            let relay = match config.door(&config::Door::Sandbox(name.to_owned())) {
                Ok(d) => d,
                Err(e) => return Some(refused(format!("sandbox: its network: {e}"))),
            };
            plan.door = Some(door.path().to_path_buf());
            Some(door.admit(name, relay, connect))
        }
        _ => None,
    };
    Some(
        match through_launcher(
            server,
            |command, args| plan.launcher_args(&command, &args),
            token,
        ) {
            Ok(s) => Launch::Start(Box::new(s)),
            Err(e) => refused(format!("sandbox: {e}")),
        },
    )
}

/// A stdio `server` started by this binary instead, with `wrap(command, args)` as its
/// arguments (the launcher's command line) and the door's `token` in the launcher's
/// environment; any other server as it is.
fn through_launcher(
    mut server: mcp::ServerConfig,
    wrap: impl FnOnce(String, Vec<String>) -> Vec<String>,
    token: Option<String>,
) -> Result<mcp::ServerConfig, String> {
    if let mcp::Transport::Stdio {
        command,
        args,
        mut env,
    } = server.transport
    {
        if let Some(t) = token {
            env.insert(sandbox::DOOR_TOKEN_ENV.to_owned(), t);
        }
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find the maven binary: {e}"))?;
        server.transport = mcp::Transport::Stdio {
            command: exe.display().to_string(),
            args: wrap(command, args),
            env,
        };
    }
    Ok(server)
}

/// Every enabled block's launch.
pub struct Launches {
    /// The servers the manager runs (dark ones included, never started).
    pub servers: Vec<mcp::Managed>,
    /// The reasons of those that cannot start.
    pub blocked: BTreeMap<String, Blocked>,
    /// The resolved plan of each sandboxed server: its trust line (every path it may read or
    /// write, and why), and what it denies.
    pub plans: BTreeMap<String, sandbox::Plan>,
}

/// Every block's launch, and the reasons of those that cannot start.
pub fn launches(
    config: &Config,
    data_dir: &Path,
    page_port: u16,
    door: &crate::netdoor::Door,
) -> Launches {
    let probe = sandbox::probe();
    if let Err(m) = &probe {
        let sandboxed = config.mcp_servers.values().any(|b| b.sandbox.is_some());
        if sandboxed {
            tracing::error!("{m}");
        }
    }
    let mut servers = Vec::new();
    let mut blocked = BTreeMap::new();
    let mut plans = BTreeMap::new();
    for (name, block) in &config.mcp_servers {
        // A dark block is never started: no plan, no private directory (its trust line comes
        // from the policy alone).
        if !block.enabled {
            if let Some(c) = config.mcp_server(name) {
                servers.push(mcp::Managed {
                    config: c,
                    enabled: false,
                });
            }
            continue;
        }
        // One plan per block: what the daemon shows of it is what it applies.
        let planned = plan(config, data_dir, name, page_port);
        if let Some(Ok(p)) = &planned {
            plans.insert(name.clone(), p.clone());
        }
        match launch_planned(config, name, &probe, planned, door) {
            Some(Launch::Start(c)) => servers.push(mcp::Managed {
                config: *c,
                enabled: block.enabled,
            }),
            Some(Launch::Blocked(why)) => {
                tracing::error!(server = %name, "{why}");
                let command_missing = false;
                blocked.insert(
                    name.clone(),
                    Blocked {
                        why,
                        command_missing,
                    },
                );
            }
            Some(Launch::NotFound(why)) => {
                tracing::error!(server = %name, "{why}");
                let command_missing = true;
                blocked.insert(
                    name.clone(),
                    Blocked {
                        why,
                        command_missing,
                    },
                );
            }
            None => {}
        }
    }
    Launches {
        servers,
        blocked,
        plans,
    }
}

/// For a daemon running as root (whose every sandboxed server runs as a uid of its own): each
/// path of `writes` that server `name`'s uid may not write by the path's owner and mode, said
/// with the `chown` line that fixes it; nothing for an ordinary owner, or a path not there.
/// The words `mcp import`, `config check` and `doctor` say before the start (the launcher
/// refuses the start with the same finding).
pub fn root_unwritable(data_dir: &Path, name: &str, writes: &[PathBuf]) -> Vec<String> {
    use std::os::unix::fs::MetadataExt as _;
    if !rustix::process::geteuid().is_root() || writes.is_empty() {
        return Vec::new();
    }
    let home = sandbox::private_dir(data_dir, name);
    let Ok(id) = sandbox::server_uid(&home) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in writes.iter().filter(|p| !p.starts_with(&home)) {
        // A grant that is a link is refused as it is (`sandbox::Policy::refused_grant`).
        if p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            continue;
        }
        let Ok(m) = std::fs::metadata(p) else {
            continue;
        };
        // The bits of a file's mode that apply to that uid.
        let bits = |m: &std::fs::Metadata| {
            if m.uid() == id {
                m.mode() >> 6
            } else if m.gid() == id {
                m.mode() >> 3
            } else {
                m.mode()
            }
        };
        let shown = shown::line(&p.display().to_string()).into_owned();
        // Every directory above it must let that uid through.
        let closed = p
            .ancestors()
            .skip(1)
            .filter_map(|a| std::fs::metadata(a).ok().map(|m| (a, m)))
            .find(|(_, m)| bits(m) & 0o1 == 0);
        if let Some((a, am)) = closed {
            let a = shown::line(&a.display().to_string()).into_owned();
            out.push(format!(
                "a root daemon runs {} as a uid of its own ({id}), which cannot reach {shown}: {a} (owner uid {}, mode {:o}) does not let it through: `chmod o+x {a}` does (or grant a path elsewhere)",
                shown::line(name),
                am.uid(),
                am.mode() & 0o7777
            ));
            continue;
        }
        // Write, and for a directory search, by the bits that apply to that uid.
        let want = if m.is_dir() { 0o3 } else { 0o2 };
        if bits(&m) & want == want {
            continue;
        }
        out.push(format!(
            "a root daemon runs {} as a uid of its own ({id}), which cannot write {shown} (owner uid {}, mode {:o}): `chown -R {id} {shown}` gives it to that uid (for a path only this server uses), or run the daemon as an ordinary user",
            shown::line(name),
            m.uid(),
            m.mode() & 0o7777
        ));
    }
    out
}
