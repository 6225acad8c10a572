//! Integration tests of the store, against real SQLite files in temporary directories.

#![allow(clippy::disallowed_macros, reason = "tests print what they measured")]
// Helpers outside `#[test]` functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used)]
// The store's own tests open their databases (elsewhere only under the data directory's lock).
#![expect(clippy::disallowed_methods)]

mod acts;
mod concurrency;
mod crash;
mod facts;
mod feeds;
mod notes;
mod oauth;
mod open;
mod passkeys;
mod tools;

use std::path::{Path, PathBuf};

use store::{
    Error, NewNote, NewTool, Redefinition, Store, ToolChange, ToolKind, ToolRow, ToolState,
};
use tempfile::TempDir;

/// Kills the child if the parent fails before it does.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Re-runs this test binary as a child running only `test_name`, with `child_env` set to the
/// database `path`; reads its `ack N` lines until `acks` writes are acknowledged, then kills it
/// with SIGKILL and waits for it. Returns the number of acknowledged writes.
pub(crate) fn kill_9_after_acks(test_name: &str, child_env: &str, path: &Path, acks: u64) -> u64 {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let child = Command::new(std::env::current_exe().unwrap())
        .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env(child_env, path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let mut acked = 0u64;
    while acked < acks {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("the child stopped before {acks} acknowledgements"))
            .unwrap();
        if let Some(n) = line.strip_prefix("ack ") {
            acked = n.parse::<u64>().unwrap() + 1;
        }
    }
    child.0.kill().unwrap(); // SIGKILL
    child.0.wait().unwrap();
    acked
}

/// A fresh store in its own temporary directory.
pub(crate) struct Db {
    pub(crate) dir: TempDir,
    pub(crate) store: Store,
}

impl Db {
    pub(crate) async fn new() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("maven.db")).await.unwrap();
        Db { dir, store }
    }

    pub(crate) fn path(&self) -> PathBuf {
        self.dir.path().join("maven.db")
    }
}

pub(crate) fn note(source: &str, key: &str, text: &str) -> NewNote {
    NewNote {
        source: source.to_owned(),
        key: key.to_owned(),
        text: text.to_owned(),
        link: Some(format!("https://example.org/{key}")),
        published: None,
    }
}

pub(crate) fn mcp_tool(server: &str, tool: &str) -> NewTool {
    NewTool {
        name: format!("{server}_{tool}"),
        kind: ToolKind::Mcp,
        server: server.to_owned(),
        tool: tool.to_owned(),
        cmd: vec!["mcp".to_owned(), server.to_owned(), tool.to_owned()],
        scope: format!("mcp:{server}"),
        destructive: false,
        fingerprint: Some("sha256:aaaa".to_owned()),
        description: format!("{tool} on {server}"),
        shape: serde_json::json!({
            "name": tool,
            "description": format!("{tool} on {server}"),
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
            "annotations": {"readOnlyHint": true}
        }),
        provenance: format!("discovered on {server}"),
    }
}

pub(crate) fn local_tool(name: &str, argv: &[&str]) -> NewTool {
    NewTool {
        name: name.to_owned(),
        kind: ToolKind::Local,
        server: String::new(),
        tool: name.to_owned(),
        cmd: argv.iter().map(|s| (*s).to_owned()).collect(),
        scope: "local".to_owned(),
        destructive: true,
        fingerprint: None,
        description: format!("runs {}", argv.join(" ")),
        shape: serde_json::json!({"cmd": argv}),
        provenance: "config acts".to_owned(),
    }
}

/// A raw connection, to poke the schema's own guards the way a buggy caller never could.
#[expect(
    clippy::disallowed_methods,
    reason = "tests check the schema's triggers and craft foreign files with a raw connection"
)]
pub(crate) fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

/// Brings a row to `to` the way the daemon does: the owner (with a step-up) enables and
/// disables, a listing re-offers and withdraws.
pub(crate) async fn set_state(
    s: &Store,
    name: &str,
    to: ToolState,
    reason: &str,
) -> Result<ToolRow, Error> {
    let (name, reason) = (name.to_owned(), reason.to_owned());
    let change = match to {
        ToolState::Enabled | ToolState::Disabled => {
            return s
                .owner_sets_tool_state(&name, to, &stepup::testing::step_up(), &reason)
                .await
        }
        ToolState::Proposed => ToolChange::Reoffer { name, reason },
        ToolState::Withdrawn => ToolChange::Withdraw { name, reason },
    };
    one(s, change).await
}

/// Applies one change as a listing would.
pub(crate) async fn one(s: &Store, change: ToolChange) -> Result<ToolRow, Error> {
    let (mut rows, ()) = s.apply_listing(move |_| (vec![change], ())).await?;
    Ok(rows.remove(0))
}

pub(crate) async fn redefine(s: &Store, name: &str, r: Redefinition) -> Result<ToolRow, Error> {
    let name = name.to_owned();
    one(
        s,
        ToolChange::Redefine {
            name,
            redefinition: r,
        },
    )
    .await
}

/// Adopts a fingerprint; `true` when the row had none before.
pub(crate) async fn adopt(s: &Store, name: &str, fp: &str) -> Result<bool, Error> {
    let before = s.tool(name).await?.map(|r| r.fingerprint.is_none());
    let (name, fingerprint) = (name.to_owned(), fp.to_owned());
    one(s, ToolChange::Adopt { name, fingerprint }).await?;
    Ok(before.unwrap_or(false))
}

/// A listing of `server` offering `offered`: withdraws, in one transaction, the rows of that
/// server it lacks that are not withdrawn yet.
pub(crate) async fn withdraw_missing(
    s: &Store,
    server: &str,
    offered: &[String],
    reason: &str,
) -> Result<Vec<String>, Error> {
    let (server, offered, reason) = (server.to_owned(), offered.to_vec(), reason.to_owned());
    let (rows, ()) = s
        .apply_listing(move |rows| {
            let changes = rows
                .iter()
                .filter(|r| {
                    r.kind == ToolKind::Mcp
                        && r.server == server
                        && r.state != ToolState::Withdrawn
                        && !offered.contains(&r.tool)
                })
                .map(|r| ToolChange::Withdraw {
                    name: r.name.clone(),
                    reason: reason.clone(),
                })
                .collect();
            (changes, ())
        })
        .await?;
    Ok(rows.into_iter().map(|r| r.name).collect())
}

pub(crate) async fn tools_of_server(s: &Store, server: &str) -> Result<Vec<ToolRow>, Error> {
    let rows = s.tools().await?;
    Ok(rows
        .into_iter()
        .filter(|r| r.kind == ToolKind::Mcp && r.server == server)
        .collect())
}

pub(crate) async fn tool_by_identity(
    s: &Store,
    kind: &str,
    server: &str,
    tool: &str,
) -> Result<Option<ToolRow>, Error> {
    let rows = s.tools().await?;
    Ok(rows
        .into_iter()
        .find(|r| r.kind.as_str() == kind && r.server == server && r.tool == tool))
}
