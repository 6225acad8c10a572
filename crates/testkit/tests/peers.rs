//! Real MCP peers, installed by `scripts/install-test-peers.sh` into `testenv/`, driven through
//! the `mcp` client: `@modelcontextprotocol/server-everything` (npm; it speaks 2025-11-25), a
//! server on the official Python SDK 2.3 (`testenv/python_server.py`; it speaks both eras) and one
//! on the TypeScript SDK 2.x (`testenv/ts_server.mjs`; 2026-07-28 only, or both with `legacy`),
//! each over stdio and over Streamable HTTP on 127.0.0.1, in the era `auto` picks and in each era
//! the configuration can pin.
//!
//! A missing peer is a failure naming the install script, never a silent pass.

#![allow(
    clippy::disallowed_methods,
    reason = "the client's own tests call real peers' tools directly, with no daemon"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mcp::{Client, ClientOptions, Era, Error, McpTimeouts, Protocol, ServerConfig, Transport};
use serde_json::{json, Value};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::timeout;

/// How long a peer may take to start and announce its listener (node and the Python SDK load
/// hundreds of modules; CI machines are slow and shared).
const START_DEADLINE: Duration = Duration::from_secs(60);

/// What the launchers print on stderr once an HTTP listener is up.
const LISTENING_MARKER: &str = "MCP_PEER_LISTENING ";

/// Longest stderr line read while waiting for the marker.
const MAX_LINE: usize = 64 * 1024;

/// The test environment at the repository root.
fn testenv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testenv")
}

/// A launcher script of the test environment, after checking that what it launches is installed.
fn launcher(script: &str) -> PathBuf {
    let env = testenv();
    let needed = match script {
        "run-everything.sh" => vec![
            env.join("node_modules/.bin/node"),
            env.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        ],
        "run-python-server.sh" => vec![env.join(".venv/bin/python")],
        "run-ts-server.sh" => vec![
            env.join("node_modules/.bin/node"),
            env.join("node_modules/@modelcontextprotocol/server/dist/index.mjs"),
        ],
        other => panic!("no such launcher: {other}"),
    };
    for path in needed {
        assert!(
            path.exists(),
            "test peer missing: {} does not exist; run scripts/install-test-peers.sh",
            path.display()
        );
    }
    env.join(script)
}

/// A peer serving Streamable HTTP on 127.0.0.1, killed when dropped.
struct HttpPeer {
    /// The MCP endpoint, e.g. `http://127.0.0.1:40123/mcp`.
    url: String,
    /// The port it listens on.
    port: u16,
    /// Killed on drop.
    child: Child,
}

impl HttpPeer {
    /// Starts `testenv/<script> http 0` (a free port) and waits for the listener announcement
    /// on stderr.
    async fn start(script: &str) -> HttpPeer {
        HttpPeer::start_on(script, 0, &[]).await
    }

    /// Starts `testenv/<script> http <port> <extra…>` and waits for the listener announcement.
    async fn start_on(script: &str, port: u16, extra: &[&str]) -> HttpPeer {
        let path = launcher(script);
        let mut child = Command::new(&path)
            .args(["http", &port.to_string()])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e}", path.display()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut lines = BufReader::new(stderr);
        let announced = timeout(START_DEADLINE, wait_for_marker(&mut lines))
            .await
            .unwrap_or_else(|_| {
                panic!("{script} did not announce a listener within {START_DEADLINE:?}")
            })
            .unwrap_or_else(|seen| panic!("{script} ended before listening; stderr:\n{seen}"));
        // Keep draining stderr so the peer never blocks on a full pipe.
        tokio::spawn(drain(lines));
        let base = announced.trim_end_matches("/mcp").to_owned();
        let port = base
            .strip_prefix("http://127.0.0.1:")
            .and_then(|p| p.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("{script} announced a listener off loopback: {announced}"));
        HttpPeer {
            url: format!("{base}/mcp"),
            port,
            child,
        }
    }

    /// Kills the peer and waits until it is reaped (its port is free again).
    async fn stop(mut self) {
        self.child.kill().await.expect("killing the peer");
    }
}

/// Reads stderr lines until the listener marker; returns the announced URL, or what was seen.
async fn wait_for_marker<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> Result<String, String> {
    let mut seen = String::new();
    loop {
        let mut line = Vec::new();
        let n = (&mut *reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| format!("{seen}\n(reading stderr failed: {e})"))?;
        if n == 0 {
            return Err(seen);
        }
        let text = String::from_utf8_lossy(&line);
        if let Some(url) = text.trim_end().strip_prefix(LISTENING_MARKER) {
            return Ok(url.to_owned());
        }
        if seen.len() < MAX_LINE {
            seen.push_str(&text);
        }
    }
}

async fn drain<R: AsyncRead + Unpin>(mut reader: BufReader<R>) {
    let mut sink = Vec::new();
    while let Ok(n) = reader.read_until(b'\n', &mut sink).await {
        if n == 0 {
            break;
        }
        sink.clear();
    }
}

/// The local addresses of the TCP sockets listening on `port`, read from /proc/net/tcp{,6}
/// (hex `addr:port` as the kernel writes it), so the check opens no socket itself.
fn listeners_on(port: u16) -> Vec<String> {
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for row in text.lines().skip(1) {
            let cols: Vec<&str> = row.split_whitespace().collect();
            // cols[1] = local "ADDR:PORT", cols[3] = state; 0A is LISTEN.
            let (Some(local), Some(state)) = (cols.get(1), cols.get(3)) else {
                continue;
            };
            let Some((addr, p)) = local.split_once(':') else {
                continue;
            };
            if *state == "0A" && u16::from_str_radix(p, 16).ok() == Some(port) {
                found.push(addr.to_owned());
            }
        }
    }
    found
}

/// 127.0.0.1 as /proc/net/tcp writes it (little-endian on the machines we run on).
const LOOPBACK_V4_HEX: &str = "0100007F";

#[tokio::test]
async fn server_everything_http_listens_on_loopback_only() {
    let peer = HttpPeer::start("run-everything.sh").await;
    assert_eq!(
        listeners_on(peer.port),
        vec![LOOPBACK_V4_HEX.to_owned()],
        "{}",
        peer.url
    );
}

#[tokio::test]
async fn ts_server_http_listens_on_loopback_only() {
    let peer = HttpPeer::start("run-ts-server.sh").await;
    assert_eq!(
        listeners_on(peer.port),
        vec![LOOPBACK_V4_HEX.to_owned()],
        "{}",
        peer.url
    );
}

#[tokio::test]
async fn python_server_http_listens_on_loopback_only() {
    let peer = HttpPeer::start("run-python-server.sh").await;
    assert_eq!(
        listeners_on(peer.port),
        vec![LOOPBACK_V4_HEX.to_owned()],
        "{}",
        peer.url
    );
}

/// What a peer must offer and answer.
struct Expect {
    /// The launcher script in testenv/.
    launcher: &'static str,
    /// Arguments after `stdio` / `http PORT`.
    extra: &'static [&'static str],
    /// The configuration's `protocol` key.
    protocol: Protocol,
    /// The era the client must end up in, and how it says it chose it (a prefix).
    era: Era,
    chosen: &'static str,
    /// `serverInfo.name`.
    server_name: &'static str,
    /// How many tools Maven (which declares `elicitation`) is offered.
    tools: usize,
    /// Tools that claim `readOnlyHint: true`; every other tool must not.
    read_only: &'static [&'static str],
    /// Tools that claim `destructiveHint: true`.
    destructive_hint: &'static [&'static str],
    /// The tool called, its arguments and the text of its answer.
    call: &'static str,
    arguments: fn() -> Value,
    answer: &'static str,
    /// Whether the server announces `tools/list_changed` right after `initialized` on the
    /// connection itself (stdio; over HTTP it goes to the standalone GET stream).
    list_changed: bool,
}

/// Thirteen, and the two elicitation tools it offers a client that declares `elicitation`.
const EVERYTHING_TOOLS: usize = 15;

fn everything(list_changed: bool) -> Expect {
    Expect {
        launcher: "run-everything.sh",
        extra: &[],
        protocol: Protocol::Auto,
        era: Era::Legacy,
        chosen: "fell back to initialize",
        server_name: "mcp-servers/everything",
        tools: EVERYTHING_TOOLS,
        read_only: &[
            "echo",
            "get-annotated-message",
            "get-env",
            "get-resource-links",
            "get-resource-reference",
            "get-structured-content",
            "get-sum",
            "get-tiny-image",
            "trigger-long-running-operation",
        ],
        destructive_hint: &[],
        call: "echo",
        arguments: || json!({"message": "hello from maven"}),
        answer: "Echo: hello from maven",
        list_changed,
    }
}

/// What `auto` and each pin should end up in against a server speaking both eras.
fn pinned(protocol: Protocol) -> (Era, &'static str) {
    match protocol {
        Protocol::Auto => (Era::Modern, "server/discover lists 2026-07-28"),
        Protocol::Modern => (Era::Modern, "pinned to 2026-07-28 by the configuration"),
        Protocol::Legacy => (Era::Legacy, "pinned to 2025-11-25 by the configuration"),
    }
}

fn python(protocol: Protocol) -> Expect {
    let (era, chosen) = pinned(protocol);
    Expect {
        launcher: "run-python-server.sh",
        extra: &[],
        protocol,
        era,
        chosen,
        server_name: "maven-python-peer",
        tools: 2,
        read_only: &["lookup_word"],
        destructive_hint: &["delete_note"],
        call: "lookup_word",
        arguments: || json!({"word": "maven"}),
        answer: "one who is expert in a particular field",
        list_changed: false,
    }
}

/// Deadlines generous enough for a loaded CI machine starting node or Python.
fn timeouts() -> McpTimeouts {
    McpTimeouts {
        init: START_DEADLINE,
        list: Duration::from_secs(30),
        call: Duration::from_secs(30),
    }
}

/// The TypeScript SDK server: modern only, or (`legacy`) both eras.
fn typescript(protocol: Protocol, legacy: bool) -> Expect {
    let (era, chosen) = pinned(protocol);
    Expect {
        launcher: "run-ts-server.sh",
        extra: if legacy { &["legacy"] } else { &[] },
        protocol,
        era,
        chosen,
        server_name: "maven-ts-peer",
        ..python(protocol)
    }
}

fn stdio_config(expect: &Expect) -> ServerConfig {
    let mut args = vec!["stdio".to_owned()];
    args.extend(expect.extra.iter().map(|a| (*a).to_owned()));
    ServerConfig {
        protocol: expect.protocol,
        name: "peer".to_owned(),
        transport: Transport::Stdio {
            command: launcher(expect.launcher).to_string_lossy().into_owned(),
            args,
            env: BTreeMap::new(),
        },
        timeouts: timeouts(),
    }
}

fn http_config(peer: &HttpPeer, protocol: Protocol) -> ServerConfig {
    let mut door = webfetch::DoorConfig::new("mcp:peer");
    // The peer listens on 127.0.0.1.
    door.allow_private = true;
    door.host_interval = Duration::ZERO;
    ServerConfig {
        protocol,
        name: "peer".to_owned(),
        transport: Transport::Http {
            url: peer.url.clone(),
            headers: BTreeMap::new(),
            door,
        },
        timeouts: timeouts(),
    }
}

/// The opening (initialize or server/discover) in the expected era, tools/list, the expected
/// annotations, one call, close.
async fn exercise(config: &ServerConfig, expect: &Expect) {
    let client = Client::connect(config, ClientOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{}: connect: {e}", expect.launcher));
    let info = client.server_info();
    let what = format!("{} {:?}", expect.launcher, expect.protocol);
    assert_eq!(client.era(), expect.era, "{what}: {}", info.chosen);
    assert!(
        info.chosen.starts_with(expect.chosen),
        "{what}: chosen {:?}",
        info.chosen
    );
    let version = match expect.era {
        Era::Legacy => mcp::PROTOCOL_VERSION,
        Era::Modern => mcp::MODERN_VERSION,
    };
    assert_eq!(info.protocol_version, version, "{what}");
    if expect.era == Era::Modern {
        assert!(
            info.supported.iter().any(|v| v == mcp::MODERN_VERSION),
            "{what}: {:?}",
            info.supported
        );
    }
    assert_eq!(info.name, expect.server_name);

    if expect.list_changed {
        let mut changed = client.list_changed();
        timeout(Duration::from_secs(30), changed.wait_for(|n| *n >= 1))
            .await
            .expect("no tools/list_changed after initialized")
            .expect("the connection ended before tools/list_changed");
    }

    let listing = client.list_tools().await.expect("tools/list");
    let names: Vec<&str> = listing.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(listing.tools.len(), expect.tools, "tools: {names:?}");
    assert_eq!(listing.skipped, 0);
    assert!(
        names.contains(&expect.call),
        "no `{}` in {names:?}",
        expect.call
    );
    for tool in &listing.tools {
        let claimed = expect.read_only.contains(&tool.name.as_str());
        assert_eq!(
            tool.read_only_claim(),
            claimed,
            "readOnlyHint of {}",
            tool.name
        );
        assert_eq!(tool.destructive(), !claimed, "destructive of {}", tool.name);
        let hint = tool
            .raw
            .get("annotations")
            .and_then(|a| a.get("destructiveHint"));
        if expect.destructive_hint.contains(&tool.name.as_str()) {
            assert_eq!(
                hint,
                Some(&Value::Bool(true)),
                "destructiveHint of {}",
                tool.name
            );
        }
    }

    let Value::Object(arguments) = (expect.arguments)() else {
        panic!("arguments are an object")
    };
    let outcome = client
        .call_tool(expect.call, arguments)
        .await
        .unwrap_or_else(|e| panic!("tools/call {}: {e}", expect.call));
    assert!(!outcome.is_error, "{}", outcome.text);
    assert!(!outcome.truncated);
    assert_eq!(outcome.text, expect.answer);
    // The modern health check (server/discover) or ping.
    client
        .ping()
        .await
        .unwrap_or_else(|e| panic!("{what}: health check: {e}"));

    assert_eq!(client.stats().violations, 0, "{:?}", client.stats());
    let pid = client.pid();
    assert_eq!(pid.is_some(), client.transport_name() == "stdio");
    client.close().await;
    assert!(client.closed().is_some());
    // A stdio server is gone and reaped once close() returns (no zombie: /proc/<pid> is gone).
    if let Some(pid) = pid {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "{} (pid {pid}) still exists after close",
            expect.launcher
        );
    }
}

#[tokio::test]
async fn server_everything_stdio() {
    let expect = everything(true);
    exercise(&stdio_config(&expect), &expect).await;
}

#[tokio::test]
async fn server_everything_streamable_http() {
    let expect = everything(false);
    let peer = HttpPeer::start(expect.launcher).await;
    exercise(&http_config(&peer, expect.protocol), &expect).await;
}

async fn over_http(expect: &Expect) {
    let peer = HttpPeer::start_on(expect.launcher, 0, expect.extra).await;
    exercise(&http_config(&peer, expect.protocol), expect).await;
}

// The Python SDK 2.3 serves both eras on both transports: `auto` picks 2026-07-28.

#[tokio::test]
async fn python_sdk_server_stdio() {
    for protocol in [Protocol::Auto, Protocol::Modern, Protocol::Legacy] {
        let expect = python(protocol);
        exercise(&stdio_config(&expect), &expect).await;
    }
}

#[tokio::test]
async fn python_sdk_server_streamable_http() {
    for protocol in [Protocol::Auto, Protocol::Modern, Protocol::Legacy] {
        over_http(&python(protocol)).await;
    }
}

// The TypeScript SDK 2.x, modern only (`legacy: 'reject'`), and serving both eras.

#[tokio::test]
async fn ts_sdk_server_stdio() {
    for protocol in [Protocol::Auto, Protocol::Modern] {
        let expect = typescript(protocol, false);
        exercise(&stdio_config(&expect), &expect).await;
    }
    let expect = typescript(Protocol::Legacy, true);
    exercise(&stdio_config(&expect), &expect).await;
}

#[tokio::test]
async fn ts_sdk_server_streamable_http() {
    for protocol in [Protocol::Auto, Protocol::Modern] {
        over_http(&typescript(protocol, false)).await;
    }
    over_http(&typescript(Protocol::Legacy, true)).await;
}

/// A client pinned to 2025-11-25 against the modern-only TypeScript server: its -32022 answer
/// to `initialize`, with the versions it speaks, is the error.
#[tokio::test]
async fn ts_sdk_modern_only_server_refuses_a_pinned_legacy_client() {
    let expect = typescript(Protocol::Legacy, false);
    let peer = HttpPeer::start(expect.launcher).await;
    for (over, config) in [
        ("stdio", stdio_config(&expect)),
        ("http", http_config(&peer, Protocol::Legacy)),
    ] {
        let e = Client::connect(&config, ClientOptions::default())
            .await
            .expect_err("a modern-only server refuses initialize");
        assert!(
            matches!(&e, Error::UnsupportedVersion { supported, .. }
                if supported == &[mcp::MODERN_VERSION]),
            "{over}: {e:?}"
        );
    }
}

/// The TypeScript server's listing carries `ttlMs: 0`; the next listing is a minute away.
#[tokio::test]
async fn ts_sdk_ttl_is_clamped_to_a_minute() {
    let expect = typescript(Protocol::Modern, false);
    let client = Client::connect(&stdio_config(&expect), ClientOptions::default())
        .await
        .expect("connect");
    let listing = client.list_tools().await.expect("tools/list");
    assert_eq!(listing.ttl, Some(Duration::ZERO));
    assert_eq!(
        listing.next_listing(Duration::from_secs(3600)),
        mcp::MIN_TTL
    );
    client.close().await;
}

/// The server restarts on the same port and forgets the session: server-everything answers the
/// next request 400 "No valid session ID provided", the Python SDK 404 "Session not found".
/// The client re-initializes once and the call goes through.
async fn session_loss_recovered(expect: &Expect) {
    let peer = HttpPeer::start_on(expect.launcher, 0, expect.extra).await;
    let port = peer.port;
    let client = Client::connect(
        &http_config(&peer, expect.protocol),
        ClientOptions::default(),
    )
    .await
    .expect("connect");
    assert_eq!(client.era(), expect.era);
    client.list_tools().await.expect("tools/list");
    peer.stop().await;
    let _restarted = HttpPeer::start_on(expect.launcher, port, expect.extra).await;

    let Value::Object(arguments) = (expect.arguments)() else {
        panic!("arguments are an object")
    };
    let outcome = client
        .call_tool(expect.call, arguments)
        .await
        .unwrap_or_else(|e| panic!("tools/call after the session was lost: {e}"));
    assert_eq!(outcome.text, expect.answer);
    assert!(client.closed().is_none());
    client.close().await;
}

#[tokio::test]
async fn server_everything_streamable_http_session_loss() {
    session_loss_recovered(&everything(false)).await;
}

#[tokio::test]
async fn python_sdk_server_streamable_http_session_loss() {
    session_loss_recovered(&python(Protocol::Legacy)).await;
}

/// The modern era has no session to lose: a restarted server simply answers the next request.
#[tokio::test]
async fn modern_servers_restarted_need_nothing_recovered() {
    session_loss_recovered(&python(Protocol::Modern)).await;
    session_loss_recovered(&typescript(Protocol::Modern, false)).await;
}
