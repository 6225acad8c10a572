//! Integration tests of the store, against real SQLite files in temporary directories.

// Helpers outside `#[test]` functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used)]

mod acts;
mod concurrency;
mod crash;
mod facts;
mod feeds;
mod notes;
mod open;
mod passkeys;
mod tools;

use std::path::{Path, PathBuf};

use store::{NewNote, NewTool, Store};
use tempfile::TempDir;

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
    }
}

pub(crate) fn mcp_tool(server: &str, tool: &str) -> NewTool {
    NewTool {
        name: format!("{server}_{tool}"),
        kind: "mcp".to_owned(),
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
        kind: "local".to_owned(),
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
