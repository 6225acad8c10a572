//! The connection manager against real `testkit-mcp` processes and a black-holed endpoint:
//! isolation, discovery events, refresh, re-dial, dark servers.

// The manager's own tests call its servers' tools (in the daemon only the executor does).
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::time::Duration;

use mcp::manager::CallError;
use mcp::{Managed, Manager, ManagerOptions, McpTimeouts, ServerConfig, ServerState, Transport};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::support::{bounded, options, stdio, Record};

fn named(name: &str, mut c: ServerConfig, enabled: bool) -> Managed {
    c.name = name.to_owned();
    Managed { config: c, enabled }
}

fn fast() -> ManagerOptions {
    ManagerOptions::default()
        .with_client(options())
        .with_backoff(Duration::from_millis(50), Duration::from_millis(200))
        .with_periods(
            Duration::from_millis(200),
            Duration::from_millis(300),
            Duration::from_millis(20),
        )
        .with_min_uptime(Duration::from_millis(0))
}

fn timeouts(init_ms: u64, call_ms: u64) -> McpTimeouts {
    McpTimeouts {
        init: Duration::from_millis(init_ms),
        list: Duration::from_secs(10),
        call: Duration::from_millis(call_ms),
    }
}

fn state_of(m: &Manager, name: &str) -> mcp::ServerStatus {
    m.status()
        .into_iter()
        .find(|s| s.name == name)
        .expect("a configured server")
}

async fn wait_until(mut f: impl FnMut() -> bool) {
    bounded(async {
        while !f() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

fn echo_args(text: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("text".into(), json!(text));
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mute_a_crashing_and_a_black_holed_server_do_not_hold_up_a_good_one() {
    // A loopback listener that accepts and never answers.
    let hole = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", hole.local_addr().unwrap());
    let mut door = webfetch::DoorConfig::new("mcp:hole");
    door.allow_private = true;
    door.host_interval = Duration::ZERO;
    let hole_cfg = ServerConfig {
        protocol: mcp::Protocol::Auto,
        name: "hole".into(),
        transport: Transport::Http {
            url,
            headers: BTreeMap::new(),
            door,
        },
        timeouts: timeouts(500, 10_000),
    };
    let servers = vec![
        named("good", stdio(&[], timeouts(10_000, 10_000)), true),
        named(
            "mute",
            stdio(&["--mute-on-initialize"], timeouts(500, 10_000)),
            true,
        ),
        named(
            "crash",
            stdio(&["--exit-on-start"], timeouts(10_000, 10_000)),
            true,
        ),
        hole_cfg.clone().into_managed(),
    ];
    let (m, mut listings) = Manager::new(servers, fast());
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    m.spawn(&cancel, &tracker);

    // Status answers at once, before any server has finished its handshake.
    let first = m.status();
    assert_eq!(first.len(), 4);
    assert!(first
        .iter()
        .all(|s| s.state != ServerState::Ready || s.name == "good"));

    let d = bounded(listings.recv()).await.unwrap();
    assert_eq!(d.server, "good", "only the good server lists");
    let names: Vec<&str> = d.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "delete_item"]);

    // The good server answers calls while the others are failing.
    let out = bounded(m.call("good", "echo", echo_args("hi")))
        .await
        .unwrap();
    assert!(out.text.contains("hi"), "{out:?}");
    assert_eq!(state_of(&m, "good").state, ServerState::Ready);

    // The others back off with the reason.
    for name in ["mute", "crash", "hole"] {
        wait_until(|| state_of(&m, name).dials >= 2).await;
        let s = state_of(&m, name);
        assert!(
            s.last_error.as_deref().unwrap_or("").starts_with("dial: "),
            "{name}: {s:?}"
        );
        let err = m.call(name, "echo", echo_args("x")).await.unwrap_err();
        assert!(
            matches!(err, CallError::NotConnected { .. }),
            "{name}: {err}"
        );
    }
    cancel.cancel();
    tracker.close();
    bounded(tracker.wait()).await;
    m.close().await;
    drop(hole);
}

trait IntoManaged {
    fn into_managed(self) -> Managed;
}

impl IntoManaged for ServerConfig {
    fn into_managed(self) -> Managed {
        Managed {
            config: self,
            enabled: true,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_list_is_listed_again_on_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tools.json");
    let tool = |name: &str, desc: &str| json!({"name": name, "description": desc, "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}});
    std::fs::write(&file, json!([tool("a", "first")]).to_string()).unwrap();
    let arg = format!("--tools-file={}", file.display());
    let (m, mut listings) = Manager::new(
        vec![named("t", stdio(&[&arg], timeouts(10_000, 10_000)), true)],
        fast(),
    );
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    m.spawn(&cancel, &tracker);
    let d = bounded(listings.recv()).await.unwrap();
    assert_eq!(d.tools[0].description(), Some("first"));

    std::fs::write(
        &file,
        json!([tool("a", "second"), tool("b", "new")]).to_string(),
    )
    .unwrap();
    let d = bounded(async {
        loop {
            let d = listings.recv().await.unwrap();
            if d.tools.len() == 2 {
                return d;
            }
        }
    })
    .await;
    assert_eq!(d.tools[0].description(), Some("second"));
    assert_eq!(state_of(&m, "t").tools_offered, Some(2));
    cancel.cancel();
    tracker.close();
    bounded(tracker.wait()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_gives_up_drops_the_connection_and_the_manager_redials() {
    let (m, mut listings) = Manager::new(
        vec![named(
            "slow",
            stdio(&["--mute-mid-call"], timeouts(10_000, 300)),
            true,
        )],
        fast(),
    );
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    m.spawn(&cancel, &tracker);
    bounded(listings.recv()).await.unwrap();
    assert_eq!(state_of(&m, "slow").dials, 1);
    let err = bounded(m.call("slow", "echo", echo_args("x")))
        .await
        .unwrap_err();
    match &err {
        CallError::Call { source, .. } => assert!(source.is_timeout(), "{err}"),
        other => panic!("expected a timeout, got {other}"),
    }
    // A fresh connection is dialled and becomes ready again.
    wait_until(|| {
        let s = state_of(&m, "slow");
        s.dials >= 2 && s.state == ServerState::Ready
    })
    .await;
    cancel.cancel();
    tracker.close();
    bounded(tracker.wait()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dark_server_is_never_dialled() {
    let rec = Record::new();
    let arg = rec.arg();
    let (m, _listings) = Manager::new(
        vec![named(
            "dark",
            stdio(&[&arg], timeouts(10_000, 10_000)),
            false,
        )],
        fast(),
    );
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    m.spawn(&cancel, &tracker);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(state_of(&m, "dark").state, ServerState::Dark);
    assert_eq!(state_of(&m, "dark").dials, 0);
    assert!(!rec.path.exists(), "the process was never started");
    let err = m.call("dark", "echo", echo_args("x")).await.unwrap_err();
    assert_eq!(err.to_string(), "MCP server \"dark\" is not enabled");
    let err = m.call("nope", "echo", echo_args("x")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "no MCP server named \"nope\" is configured"
    );
    cancel.cancel();
    tracker.close();
    bounded(tracker.wait()).await;
}
