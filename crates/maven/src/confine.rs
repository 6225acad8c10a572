//! Which stdio servers run sandboxed, and how. A sandboxed block's command is
//! resolved into a `sandbox::Plan` and started as `maven __sandbox-exec PLAN -- command args…`
//! (this binary, re-executed): the mcp crate spawns it like any other command. A block whose
//! sandbox cannot be applied is never started, and says why.

use std::collections::BTreeMap;
use std::path::Path;

use config::{Config, McpTarget};

/// What the daemon does with one server block.
#[derive(Debug)]
pub(crate) enum Launch {
    /// Start it with this configuration (sandboxed, unsandboxed or HTTP).
    Start(Box<mcp::ServerConfig>),
    /// Its sandbox cannot be applied: it is not started, for this reason.
    Blocked(String),
}

/// The plan of a sandboxed stdio block, or `None` for an HTTP or `"sandbox": false` block.
pub(crate) fn plan(
    config: &Config,
    data_dir: &Path,
    name: &str,
    page_port: u16,
) -> Option<Result<sandbox::Plan, sandbox::PlanError>> {
    let block = config.mcp_servers.get(name)?;
    let McpTarget::Stdio {
        command,
        args,
        env,
        sandbox: Some(policy),
    } = &block.target
    else {
        return None;
    };
    // The child's PATH: the block's own, else the daemon's (as the stdio spawn sets it).
    let path = env
        .get("PATH")
        .map(|v| std::ffi::OsString::from(v.expose().to_string()))
        .or_else(|| std::env::var_os("PATH"));
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
pub(crate) fn launch(
    config: &Config,
    data_dir: &Path,
    name: &str,
    probe: &Result<(), sandbox::Missing>,
    page_port: u16,
) -> Option<Launch> {
    let mut server = config.mcp_server(name)?;
    let Some(plan) = plan(config, data_dir, name, page_port) else {
        // Unsandboxed: still in a PID namespace of its own, through the launcher, so that
        // every process it starts ends with it.
        if let mcp::Transport::Stdio { command, args, env } = server.transport {
            let exe = match std::env::current_exe() {
                Ok(p) => p,
                Err(e) => {
                    return Some(Launch::Blocked(format!(
                        "cannot find the maven binary: {e}"
                    )))
                }
            };
            let mut launcher = vec![sandbox::GROUP_ARG.to_owned(), "--".to_owned(), command];
            launcher.extend(args);
            server.transport = mcp::Transport::Stdio {
                command: exe.display().to_string(),
                args: launcher,
                env,
            };
        }
        return Some(Launch::Start(Box::new(server)));
    };
    if let Err(m) = probe {
        return Some(Launch::Blocked(m.to_string()));
    }
    let refused = |why: String| {
        Launch::Blocked(format!(
            "{why}; the server was not started. \"sandbox\": false in its block runs it unsandboxed, as the owner's explicit choice"
        ))
    };
    let plan = match plan {
        Ok(p) => p,
        Err(e) => return Some(refused(e.to_string())),
    };
    if let Err(e) = sandbox::prepare(&plan) {
        tracing::error!(server = %name, "sandbox: its private directory: {e}");
        return Some(refused(format!("sandbox: its private directory: {e}")));
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            return Some(refused(format!(
                "sandbox: cannot find the maven binary: {e}"
            )))
        }
    };
    if let mcp::Transport::Stdio { command, args, env } = server.transport {
        server.transport = mcp::Transport::Stdio {
            command: exe.display().to_string(),
            args: plan.launcher_args(&command, &args),
            env,
        };
    }
    Some(Launch::Start(Box::new(server)))
}

/// Every enabled block's launch.
pub(crate) struct Launches {
    /// The servers the manager runs (dark ones included, never started).
    pub(crate) servers: Vec<mcp::Managed>,
    /// The reasons of those that cannot start.
    pub(crate) blocked: BTreeMap<String, String>,
    /// The trust line of each sandboxed server, from its resolved plan: every path it may
    /// read or write, and why.
    pub(crate) trust: BTreeMap<String, String>,
}

/// Every block's launch, and the reasons of those that cannot start.
pub(crate) fn launches(config: &Config, data_dir: &Path, page_port: u16) -> Launches {
    let probe = sandbox::probe();
    if let Err(m) = &probe {
        let sandboxed = config.mcp_servers.values().any(|b| {
            matches!(
                b.target,
                McpTarget::Stdio {
                    sandbox: Some(_),
                    ..
                }
            )
        });
        if sandboxed {
            tracing::error!("{m}");
        }
    }
    let mut servers = Vec::new();
    let mut blocked = BTreeMap::new();
    let mut trust = BTreeMap::new();
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
        if let Some(Ok(plan)) = plan(config, data_dir, name, page_port) {
            trust.insert(name.clone(), plan.trust());
        }
        match launch(config, data_dir, name, &probe, page_port) {
            Some(Launch::Start(c)) => servers.push(mcp::Managed {
                config: *c,
                enabled: block.enabled,
            }),
            Some(Launch::Blocked(why)) => {
                if block.enabled {
                    tracing::error!(server = %name, "{why}");
                }
                blocked.insert(name.clone(), why);
            }
            None => {}
        }
    }
    Launches {
        servers,
        blocked,
        trust,
    }
}
