//! The daemon as a real process: IPC, the data directory's lock, crashes and restarts.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{stderr, wait_exit, Home};

fn acts_config(n: usize) -> String {
    let acts: Vec<Value> = (0..n)
        .map(|i| json!({"name": format!("act_{i:03}"), "cmd": ["echo", i.to_string()], "read_only": i % 2 == 0}))
        .collect();
    json!({ "acts": acts }).to_string()
}

#[test]
fn ipc_round_trip_against_a_running_daemon() {
    let home = Home::new();
    home.write_config(&acts_config(3));
    let d = home.start();

    let status = home.json(&["status", "--json"]);
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(status["data_dir"], home.data().display().to_string());
    assert_eq!(status["acts"]["proposed"], 3);
    assert_eq!(status["acts"]["enabled"], 0);
    assert!(status["uptime_s"].is_u64());
    assert_eq!(status["mcp_servers"], json!([]));
    assert_eq!(status["feeds"], json!([]));

    let tools = home.json(&["tools", "--json"]);
    let rows = tools.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["name"], "act_000");
    assert_eq!(rows[0]["state"], "proposed");
    assert_eq!(rows[0]["destructive"], false);
    assert_eq!(rows[1]["destructive"], true);
    assert_eq!(rows[0]["cmd"], json!(["echo", "0"]));
    assert_eq!(rows[0]["scope"], "local");
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "state",
            "destructive",
            "scope",
            "cmd",
            "fingerprint",
            "description",
            "provenance",
            "updated"
        ]
    );
    assert!(rows[0]["updated"].as_str().unwrap().ends_with('Z'));

    assert_eq!(home.json(&["notes", "--json"]), json!([]));
    let human = home.run(&["tools"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("act_001"));

    // Raw protocol: unknown method, bad params, batches, notifications, garbage.
    let r = home.raw(r#"{"jsonrpc":"2.0","id":7,"method":"call_tool","params":{}}"#);
    assert_eq!(r["id"], 7);
    assert_eq!(r["error"]["code"], -32601);
    let r = home.raw(r#"{"jsonrpc":"2.0","id":8,"method":"notes","params":{"limit":0}}"#);
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(
        r["error"]["message"],
        "limit: expected an integer from 1 to 10000, got 0"
    );
    let r = home.raw(r#"[{"jsonrpc":"2.0","id":1,"method":"status"}]"#);
    assert_eq!(r["error"]["code"], -32600);
    let r = home.raw("not json");
    assert_eq!(r["error"]["code"], -32700);
    let out = home.run(&["notes", "--limit", "0"]);
    assert_eq!(out.status.code(), Some(2), "bad params are a usage error");

    let out = d.signal("-TERM");
    assert!(out.status.success(), "graceful exit: {}", stderr(&out));
    assert!(
        !home.data().join("maven.sock").exists(),
        "socket removed on shutdown"
    );
}

#[test]
fn the_socket_and_data_directory_are_private() {
    let home = Home::new();
    let _d = home.start();
    let sock = std::fs::metadata(home.data().join("maven.sock")).unwrap();
    assert_eq!(sock.permissions().mode() & 0o777, 0o600);
    let dir = std::fs::metadata(home.data()).unwrap();
    assert_eq!(dir.permissions().mode() & 0o777, 0o700);
}

#[test]
fn a_second_daemon_on_the_same_data_dir_refuses() {
    let home = Home::new();
    let first = home.start();
    let second = home.spawn();
    let out = wait_exit(second, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "another maven daemon is already running on the data directory {} (pid {})",
            home.data().display(),
            first.pid()
        )),
        "{err}"
    );
    // The first one is unharmed.
    assert!(home.run(&["status"]).status.success());
}

#[test]
fn kill_9_then_restart_finds_every_acknowledged_row() {
    let home = Home::new();
    home.write_config(&acts_config(40));
    let d = home.start();
    let before = home.json(&["tools", "--json"]);
    assert_eq!(before.as_array().unwrap().len(), 40);
    let out = d.signal("-KILL");
    assert!(!out.status.success());
    // The crash left the socket file behind; the next daemon recovers it.
    assert!(home.data().join("maven.sock").exists());

    let d = home.start();
    let after = home.json(&["tools", "--json"]);
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&after), names(&before), "every row once, none lost");
    for (a, b) in after
        .as_array()
        .unwrap()
        .iter()
        .zip(before.as_array().unwrap())
    {
        assert_eq!(a["state"], b["state"]);
        assert_eq!(
            a["updated"], b["updated"],
            "rows not rewritten by the restart"
        );
    }
    drop(d);
}

#[test]
fn a_store_from_a_newer_schema_is_refused_and_left_untouched() {
    let home = Home::new();
    let d = home.start();
    assert!(d.signal("-TERM").status.success());
    let db = home.data().join("maven.db");
    // The schema version is SQLite's user_version: four big-endian bytes at offset 60.
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[60..64].copy_from_slice(&9999u32.to_be_bytes());
    std::fs::write(&db, &bytes).unwrap();

    let out = wait_exit(home.spawn(), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("9999"), "names the version found: {err}");
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "never modified");
}

#[test]
fn with_no_config_the_daemon_opens_no_outbound_socket() {
    let home = Home::new();
    let d = home.start();
    // Every socket the process holds is a Unix socket or a listener on loopback (the page):
    // no connected or connecting TCP socket, no UDP socket.
    let pid = d.pid();
    let mut inodes = Vec::new();
    for fd in std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap() {
        if let Ok(target) = std::fs::read_link(fd.unwrap().path()) {
            let t = target.to_string_lossy().into_owned();
            if let Some(inode) = t.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
                inodes.push(inode.to_string());
            }
        }
    }
    assert!(!inodes.is_empty(), "the IPC socket is there");
    for table in ["tcp", "tcp6", "udp", "udp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let inode = cols.get(9).copied().unwrap_or("");
            if !inodes.iter().any(|i| i == inode) {
                continue;
            }
            let local = cols.get(1).copied().unwrap_or("");
            let listening_on_loopback = table.starts_with("tcp")
                && cols.get(3) == Some(&"0A")
                && (local.starts_with("0100007F:")
                    || local.starts_with("00000000000000000000000001000000:"));
            assert!(listening_on_loopback, "a {table} socket is open: {line}");
        }
    }
}
