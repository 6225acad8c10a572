//! MCP servers under the real daemon: boot never waits on them, discovery only proposes, and a
//! server that goes down withdraws nothing.

use std::net::TcpListener;

use serde_json::{json, Value};

use crate::support::{by_name, eventually, testkit_mcp, Home};

#[test]
fn boot_never_waits_on_servers_and_discovery_only_proposes() {
    let home = Home::new();
    let bin = testkit_mcp();
    let bin = bin.to_str().unwrap();
    let hole = TcpListener::bind("127.0.0.1:0").unwrap();
    let config = |good_args: Value| {
        json!({"mcp_servers": {
            "good": {"command": bin, "args": good_args, "enabled": true},
            "mute": {"command": bin, "args": ["--mute-on-initialize"], "enabled": true, "timeouts": {"init": "30s"}},
            "crash": {"command": bin, "args": ["--crash-mid-call", "--exit-on-start"], "enabled": true},
            "hole": {"url": format!("http://{}/mcp", hole.local_addr().unwrap()), "allow_private": true, "enabled": true, "timeouts": {"init": "30s"}},
            "dark": {"command": bin, "enabled": false}
        }})
        .to_string()
    };
    home.write_config(&config(json!([])));
    let d = home.start();

    // The daemon answered status while the mute and black-holed servers still hang in their
    // 30-second handshakes.
    let st = home.json(&["mcp", "status", "--json"]);
    assert_eq!(by_name(&st, "mute")["state"], "connecting");
    assert_eq!(by_name(&st, "hole")["state"], "connecting");
    assert_eq!(by_name(&st, "dark")["state"], "dark");
    assert_eq!(
        by_name(&st, "hole")["trust"],
        "LAN endpoint (allow_private)"
    );
    assert_eq!(
        by_name(&st, "good")["trust"],
        crate::support::testkit_trust(true)
    );

    // The good server's tools arrive as proposed rows.
    let tools = eventually("the good server's tools", || {
        let t = home.json(&["tools", "--json"]);
        (t.as_array().unwrap().len() == 2).then_some(t)
    });
    for row in tools.as_array().unwrap() {
        assert_eq!(row["state"], "proposed", "{row}");
        assert_eq!(row["scope"], "mcp:good");
        assert!(row["fingerprint"]
            .as_str()
            .unwrap()
            .starts_with("sha256:v1:"));
    }
    let echo = by_name(&tools, "good_echo");
    assert_eq!(echo["destructive"], false);
    assert_eq!(echo["cmd"], json!(["mcp", "good", "echo"]));
    let del = by_name(&tools, "good_delete_item");
    assert_eq!(del["destructive"], true);

    let st = eventually("the crashing server to back off", || {
        let st = home.json(&["mcp", "status", "--json"]);
        by_name(&st, "crash")["state"]["backing_off"]["until"]
            .is_string()
            .then_some(st)
    });
    let good = by_name(&st, "good");
    assert_eq!(good["state"], "ready");
    assert_eq!(good["protocol_version"], "2025-11-25");
    assert_eq!(good["server_info"]["name"], "testkit-mcp");
    assert_eq!(good["tools_offered"], 2);
    assert_eq!(good["tools_proposed"], 2);
    assert!(by_name(&st, "crash")["last_error"]
        .as_str()
        .unwrap()
        .starts_with("dial: "));
    assert!(by_name(&st, "crash")["next_retry"]
        .as_str()
        .unwrap()
        .ends_with('Z'));
    assert!(d.signal("-TERM").status.success());

    // The owner enables echo (through the store: the page is the only path in the product).
    home.enable(&["good_echo"]);

    // The good server now dies at start: a server that is down withdraws nothing.
    home.write_config(&config(json!(["--exit-on-start"])));
    let d = home.start();
    eventually("the good server to fail", || {
        let st = home.json(&["mcp", "status", "--json"]);
        by_name(&st, "good")["state"]
            .get("backing_off")
            .is_some()
            .then_some(())
    });
    let tools = home.json(&["tools", "--json"]);
    let echo = by_name(&tools, "good_echo");
    assert_eq!(
        echo["state"], "enabled",
        "a restart never disarms what the owner approved"
    );
    assert!(tools
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["state"] != "withdrawn"));
    drop(d);
    drop(hole);
}
