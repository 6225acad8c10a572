//! `maven mcp enable NAME`, `maven mcp disable NAME` and `maven mcp allow NAME TOOL…`: one
//! server's block changed in the configuration file through [`super::config_edit`] (validated
//! first, the previous file kept), then a running daemon reloaded.
//!
//! `allow` names tools in the block's `allow_tools` (added to those already named). When the
//! running daemon has listed the server, a tool it does not offer is refused, naming what it
//! offers; without a listing the names cannot be checked, and that is said.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;

use config::file::ConfigFile;

use crate::exit::{errln, outln, EXIT_FAILED, EXIT_USAGE};
use crate::ipc::client::{self as ipc, IpcError};
use wire::methods::Request;
use wire::views::{ServerStatusView, ToolView};

/// What the command changes in the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// `"enabled": true`.
    Enable,
    /// `"enabled": false`.
    Disable,
    /// These tools added to `allow_tools`.
    Allow(Vec<String>),
}

impl Change {
    fn command(&self) -> &'static str {
        match self {
            Change::Enable => "maven mcp enable",
            Change::Disable => "maven mcp disable",
            Change::Allow(_) => "maven mcp allow",
        }
    }
}

/// Runs the command on the file `config` and the daemon of `data_dir`: exit 0 when written
/// (or already so), 1 when the change was refused (an unknown server or tool, a file that does
/// not validate, the daemon refused the file), 2 for a usage error.
pub(crate) async fn run(config: &Path, data_dir: &Path, name: &str, change: Change) -> ExitCode {
    let cmd = change.command();
    let mut listed = None;
    if let Change::Allow(tools) = &change {
        if let Some(bad) = tools.iter().find(|t| t.trim().is_empty()) {
            errln!("{cmd}: {:?} is not a tool name", shown::line(bad));
            return ExitCode::from(EXIT_USAGE);
        }
        match offered(data_dir, name).await {
            Offered::Listed(offered) => {
                listed = Some(offered.clone());
                let unknown: Vec<&String> =
                    tools.iter().filter(|t| !offered.contains(*t)).collect();
                if !unknown.is_empty() {
                    errln!(
                        "{cmd}: {}; nothing was written to {}",
                        unknown_tools(name, &unknown, &offered),
                        shown::line(&config.display().to_string())
                    );
                    return ExitCode::from(EXIT_FAILED);
                }
            }
            Offered::Unknown(why) => errln!(
                "note: the tool names are not checked: {why}; `maven mcp inspect {}` lists what it offers",
                shown::line(name)
            ),
        }
    }
    let shown_path = config.display().to_string();
    let mut already = None;
    let mut on = true;
    let mut was_unset = false;
    let res = super::config_edit::edit(config, |file| {
        was_unset = file
            .mcp_servers
            .get(name)
            .is_some_and(|b| b.allow_tools.as_ref().is_none_or(Vec::is_empty));
        already = apply(file, &shown_path, name, &change)?;
        on = file.mcp_servers.get(name).and_then(|b| b.enabled) == Some(true);
        // Nothing to change: nothing is written.
        match already {
            Some(_) => Err(String::new()),
            None => Ok(()),
        }
    });
    match (res, already) {
        (_, Some(said)) => {
            outln!("{said} in {}: nothing to change", shown::line(&shown_path));
            ExitCode::SUCCESS
        }
        (Ok(w), None) => {
            outln!("{}", done(name, &change));
            // allow_tools set for the first time: the tools it does not name go.
            if let (true, Change::Allow(tools), Some(offered)) = (was_unset, &change, &listed) {
                let gone: Vec<String> = offered
                    .iter()
                    .filter(|t| !tools.contains(t))
                    .cloned()
                    .collect();
                if !gone.is_empty() {
                    errln!(
                        "note: with allow_tools set, {} offers only the tools it names: {} {} no longer offered (name {} too to keep {}: `maven mcp allow {} {}`)",
                        shown::line(name),
                        names(&gone),
                        if gone.len() == 1 { "is" } else { "are" },
                        if gone.len() == 1 { "it" } else { "them" },
                        if gone.len() == 1 { "it" } else { "them" },
                        shown::line(name),
                        names(&gone).replace(", ", " ")
                    );
                }
            }
            if !on && matches!(change, Change::Allow(_)) {
                errln!(
                    "note: {0} is not enabled: `maven mcp enable {0}` switches it on",
                    shown::line(name)
                );
            }
            if super::config_edit::written_then_reload(&w, data_dir).await {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_FAILED)
            }
        }
        (Err(e), None) => {
            errln!("{cmd}: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// The change made to `file`'s block `name`: `Ok(Some(words))` when the block already says
/// so, an error naming the file when there is no such block.
fn apply(
    file: &mut ConfigFile,
    path: &str,
    name: &str,
    change: &Change,
) -> Result<Option<String>, String> {
    let known: Vec<String> = file
        .mcp_servers
        .keys()
        .map(|k| shown::line(k).into_owned())
        .collect();
    let Some(block) = file.mcp_servers.get_mut(name) else {
        let has = if known.is_empty() {
            "it has no mcp_servers block (`maven mcp import FILE --write` adds some)".to_owned()
        } else {
            format!("its servers: {}", known.join(", "))
        };
        return Err(format!(
            "{}: no server named {:?} in mcp_servers; {has}",
            shown::line(path),
            shown::line(name)
        ));
    };
    let name = shown::line(name);
    match change {
        Change::Enable | Change::Disable => {
            let on = *change == Change::Enable;
            if block.enabled.unwrap_or(false) == on {
                let word = if on { "enabled" } else { "not enabled" };
                return Ok(Some(format!("{name} is already {word}")));
            }
            block.enabled = Some(on);
        }
        Change::Allow(tools) => {
            let list = block.allow_tools.get_or_insert_with(Vec::new);
            let before = list.len();
            for t in tools {
                if !list.contains(t) {
                    list.push(t.clone());
                }
            }
            if list.len() == before {
                return Ok(Some(format!(
                    "mcp_servers.{name}.allow_tools already names {}",
                    names(tools)
                )));
            }
        }
    }
    Ok(None)
}

/// What was changed, in one line.
fn done(name: &str, change: &Change) -> String {
    let name = shown::line(name);
    match change {
        Change::Enable => format!("mcp_servers.{name}: \"enabled\": true"),
        Change::Disable => format!("mcp_servers.{name}: \"enabled\": false"),
        Change::Allow(tools) => {
            format!("mcp_servers.{name}.allow_tools: {} added", names(tools))
        }
    }
}

fn names(tools: &[String]) -> String {
    tools
        .iter()
        .map(|t| shown::line(t).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The refusal of tools the server does not offer.
fn unknown_tools(server: &str, unknown: &[&String], offered: &BTreeSet<String>) -> String {
    let list = |v: &mut dyn Iterator<Item = &String>| {
        v.map(|t| shown::capped(t, 64).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (one, many) = ("offers no tool", "offers no tools");
    format!(
        "the server {:?} {} {}; it offers: {}",
        shown::line(server),
        if unknown.len() == 1 { one } else { many },
        list(&mut unknown.iter().copied()),
        list(&mut offered.iter())
    )
}

/// What the running daemon knows of a server's tools.
enum Offered {
    /// Every tool of its last listing (those it refused included).
    Listed(BTreeSet<String>),
    /// Why the names cannot be checked.
    Unknown(String),
}

async fn offered(data_dir: &Path, name: &str) -> Offered {
    let servers = match ipc::ask::<Vec<ServerStatusView>>(data_dir, &Request::McpServers).await {
        Ok(s) => s,
        Err(IpcError::NoDaemon { .. }) => return Offered::Unknown("no daemon is running".into()),
        Err(e) => return Offered::Unknown(format!("the daemon did not answer ({e})")),
    };
    let Some(server) = servers.iter().find(|s| s.name == name) else {
        return Offered::Unknown("the running daemon does not know this server yet".into());
    };
    if server.tools_offered.is_none() {
        return Offered::Unknown("the running daemon has not listed its tools".into());
    }
    let rows = match ipc::ask::<Vec<ToolView>>(data_dir, &Request::Tools).await {
        Ok(r) => r,
        Err(e) => return Offered::Unknown(format!("the daemon did not answer ({e})")),
    };
    let mut set: BTreeSet<String> = server
        .tools_refused
        .iter()
        .map(|t| t.tool.clone())
        .collect();
    set.extend(rows.into_iter().filter_map(|r| match r.cmd.as_slice() {
        [mcp, s, tool] if mcp == "mcp" && s == name && r.state != "withdrawn" => Some(tool.clone()),
        _ => None,
    }));
    Offered::Listed(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(json: &str) -> ConfigFile {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_block_is_changed_or_said_to_be_so_already() {
        let mut f = file(r#"{"mcp_servers": {"time": {"command": "uvx", "enabled": false}}}"#);
        assert_eq!(apply(&mut f, "c.json", "time", &Change::Enable), Ok(None));
        assert_eq!(f.mcp_servers["time"].enabled, Some(true));
        assert_eq!(
            apply(&mut f, "c.json", "time", &Change::Enable),
            Ok(Some("time is already enabled".into()))
        );
        let allow = Change::Allow(vec!["get_current_time".into(), "convert_time".into()]);
        assert_eq!(apply(&mut f, "c.json", "time", &allow), Ok(None));
        let again = Change::Allow(vec!["convert_time".into(), "x".into()]);
        assert_eq!(apply(&mut f, "c.json", "time", &again), Ok(None));
        assert_eq!(
            f.mcp_servers["time"].allow_tools.as_deref().unwrap(),
            ["get_current_time", "convert_time", "x"]
        );
        assert_eq!(
            apply(&mut f, "c.json", "time", &Change::Allow(vec!["x".into()])),
            Ok(Some("mcp_servers.time.allow_tools already names x".into()))
        );
        assert_eq!(
            apply(&mut f, "c.json", "tmie", &Change::Disable),
            Err("c.json: no server named \"tmie\" in mcp_servers; its servers: time".into())
        );
        let mut empty = file("{}");
        assert_eq!(
            apply(&mut empty, "c.json", "x", &Change::Enable),
            Err("c.json: no server named \"x\" in mcp_servers; it has no mcp_servers block (`maven mcp import FILE --write` adds some)".into())
        );
    }
}
