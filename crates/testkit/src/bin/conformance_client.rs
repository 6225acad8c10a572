//! `conformance-client`: the client under test of the official MCP client conformance suite
//! (`@modelcontextprotocol/conformance`, run by `scripts/conformance.sh`).
//!
//! The suite runs `conformance-client <server URL>` with `MCP_CONFORMANCE_SCENARIO` set, and
//! judges what reaches its server. This program drives the `mcp` crate's client through the
//! Streamable HTTP transport: handshake, tool listing, and the calls each scenario expects.
//! It exits 0 when the exchange completed and 1 (with the reason on stderr) when it did not.
//!
//! Unlike the daemon (which offers servers nothing and answers every server request -32601),
//! this client declares the `elicitation` capability and accepts an elicitation with the
//! defaults of its requested schema, as the `elicitation-sep1034-client-defaults` scenario asks.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mcp::{Client, ClientOptions, McpTimeouts, ServerConfig, ServerRequestHandler, Transport};
use serde_json::{json, Map, Value};

/// Every deadline of this client, well inside the suite's own 30 s per scenario.
const DEADLINE: Duration = Duration::from_secs(10);

/// Answers `elicitation/create` by accepting the defaults of the requested schema (SEP-1034);
/// every other server request gets -32601.
struct AcceptDefaults;

impl ServerRequestHandler for AcceptDefaults {
    fn handle(&self, method: &str, params: &Value) -> Option<Result<Value, (i64, String)>> {
        if method != "elicitation/create" {
            return None;
        }
        let mut content = Map::new();
        if let Some(Value::Object(props)) = params.pointer("/requestedSchema/properties") {
            for (name, schema) in props {
                if let Some(default) = schema.get("default") {
                    content.insert(name.clone(), default.clone());
                }
            }
        }
        Some(Ok(json!({"action": "accept", "content": content})))
    }
}

/// Arguments for the tools the suite's scenarios offer; every other tool is called with none.
fn arguments_for(tool: &str) -> Map<String, Value> {
    match tool {
        "add_numbers" => match json!({"a": 2, "b": 3}) {
            Value::Object(m) => m,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

/// Tools each scenario expects to be called.
fn tools_to_call(scenario: &str) -> &'static [&'static str] {
    match scenario {
        "tools_call" => &["add_numbers"],
        "sse-retry" => &["test_reconnection"],
        "elicitation-sep1034-client-defaults" => &["test_client_elicitation_defaults"],
        _ => &[],
    }
}

/// The suite hands out `http://localhost:<port>…`; the door refuses the name `localhost` by
/// policy (W-3) and allows loopback only by address, so dial 127.0.0.1 (the suite's server
/// listens on every interface, IPv4 included).
fn loopback_url(url: &str) -> String {
    match url.strip_prefix("http://localhost") {
        Some(rest) if rest.is_empty() || rest.starts_with([':', '/']) => {
            format!("http://127.0.0.1{rest}")
        }
        _ => url.to_owned(),
    }
}

fn config(url: &str) -> ServerConfig {
    let mut door = webfetch::DoorConfig::new("mcp:conformance");
    // The suite's server listens on localhost.
    door.allow_private = true;
    // The suite times reconnections (sse-retry waits `retry: 500` ms); the door must not add
    // its own spacing between requests to the same host.
    door.host_interval = Duration::ZERO;
    ServerConfig {
        name: "conformance".to_owned(),
        transport: Transport::Http {
            url: loopback_url(url),
            headers: BTreeMap::new(),
            door,
        },
        timeouts: McpTimeouts {
            init: DEADLINE,
            list: DEADLINE,
            call: DEADLINE,
        },
    }
}

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let mut options = ClientOptions {
        client_name: "maven-conformance-client".to_owned(),
        ..ClientOptions::default()
    };
    if scenario.starts_with("elicitation") {
        options = options.with_handler(json!({"elicitation": {}}), Arc::new(AcceptDefaults));
        options.standalone_stream = true;
    }
    let client = Client::connect(&config(url), options)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let info = client.server_info();
    eprintln!(
        "connected to {} {} (protocol {})",
        info.name, info.version, info.protocol_version
    );
    let listing = client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    let names: Vec<&str> = listing.tools.iter().map(|t| t.name.as_str()).collect();
    eprintln!("tools: {names:?}");
    for wanted in tools_to_call(scenario) {
        if !names.contains(wanted) {
            return Err(format!("the server does not offer `{wanted}`"));
        }
        let outcome = client
            .call_tool(wanted, arguments_for(wanted))
            .await
            .map_err(|e| format!("tools/call {wanted}: {e}"))?;
        eprintln!("{wanted}: is_error={} {}", outcome.is_error, outcome.text);
        if outcome.is_error {
            return Err(format!(
                "tools/call {wanted} answered an error: {}",
                outcome.text
            ));
        }
    }
    client.close().await;
    Ok(())
}

fn main() -> ExitCode {
    let Some(url) = std::env::args()
        .nth(1)
        .filter(|_| std::env::args().len() == 2)
    else {
        eprintln!("usage: conformance-client <server URL>  (MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("conformance-client: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&url, &scenario)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client ({scenario}): {e}");
            ExitCode::FAILURE
        }
    }
}
