//! A server installed the way its README says — a plain `npm install --prefix DIR PACKAGE` —
//! runs sandboxed as `DIR/node_modules/.bin/NAME`, with no `read` grant: its program imports
//! its dependencies from `DIR/node_modules`, which the sandbox makes readable by itself and
//! names in the trust line ("its packages").

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::{by_name, eventually, Home};

/// The plain install of scripts/install-test-peers.sh, canonical; `None` (and why, printed)
/// when the npm peers are not installed.
fn plain_npm() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testenv/plain-npm");
    let bin = dir.join("node_modules/.bin/mcp-server-memory");
    let node = dir.join("../node_modules/.bin/node");
    if !bin.exists() || !node.exists() {
        eprintln!(
            "skipped: the npm test peers are not installed ({} or {} is missing); run scripts/install-test-peers.sh",
            bin.display(),
            node.display()
        );
        return None;
    }
    Some(std::fs::canonicalize(dir).unwrap())
}

fn ready(home: &Home, server: &str) -> Value {
    eventually(&format!("{server} ready"), || {
        let st = home.json(&["mcp", "status", "--json"]);
        let s = by_name(&st, server);
        assert!(
            s["state"] != "sandbox_refused" && s["state"] != "command_not_found",
            "{s}"
        );
        (s["state"] == "ready").then(|| s.clone())
    })
}

#[test]
fn a_server_installed_by_a_plain_npm_install_runs_sandboxed() {
    let Some(dir) = plain_npm() else {
        return;
    };
    let node_modules = dir.join("node_modules");
    let command = node_modules.join(".bin/mcp-server-memory");
    // Its `#!/usr/bin/env node` finds the test peers' node first.
    let node_bin = std::fs::canonicalize(dir.join("../node_modules/.bin")).unwrap();
    let home = Home::new();
    let config = |memory: &Path| {
        json!({
            "web": {"listen": "127.0.0.1:0"},
            "mcp_servers": {"mem": {
                "command": command, "enabled": true,
                "env": {
                    "PATH": format!("{}:/usr/bin:/bin", node_bin.display()),
                    "MEMORY_FILE_PATH": memory,
                },
                "sandbox": {"network": false}
            }}
        })
        .to_string()
    };
    // The memory file lives in the server's private directory, the one place it writes.
    let memory = home.data().join("sandbox/mem/memory.jsonl");
    home.write_config(&config(&memory));
    let d = home.start_logging_to(&home.dir.path().join("daemon.log"));
    let st = ready(&home, "mem");
    // No `read` grant: the sandbox grants the packages by itself, and says so.
    let trust = st["trust"].as_str().unwrap();
    assert!(
        trust.starts_with("sandboxed local process: ")
            && trust.contains(&format!("{} (its packages)", node_modules.display())),
        "{trust}"
    );
    assert!(trust.contains("no network"), "{trust}");
    eventually("mem_read_graph proposed", || {
        let t = home.json(&["tools", "--json"]);
        t.as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "mem_read_graph")
            .then_some(())
    });
    // The owner enables one tool (through the store: the page is the product's path), and a
    // turn calls it.
    assert!(d.signal("-TERM").status.success());
    std::fs::write(
        &memory,
        "{\"type\":\"entity\",\"name\":\"maven-test-entity\",\"entityType\":\"note\",\"observations\":[\"written before the start\"]}\n",
    )
    .unwrap();
    home.enable(&["mem_read_graph"]);
    let _d = home.start_logging_to(&home.dir.path().join("daemon.log"));
    ready(&home, "mem");
    let said = home.say_confirming("mem read graph");
    assert!(said.contains("maven-test-entity"), "{said}");
    assert!(said.contains("written before the start"), "{said}");
}
