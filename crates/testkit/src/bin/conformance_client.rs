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

#![allow(
    clippy::disallowed_methods,
    reason = "the conformance suite's client calls the tools each scenario asks for"
)]
#![allow(
    clippy::disallowed_macros,
    reason = "a test tool: its output is for the tests that run it"
)]

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

/// Arguments for the tools the suite's scenarios offer: `add_numbers` gets two numbers; any
/// other tool a value of its type for each required property.
fn arguments_for(tool: &mcp::Tool) -> Map<String, Value> {
    if tool.name == "add_numbers" {
        if let Value::Object(m) = json!({"a": 2, "b": 3}) {
            return m;
        }
    }
    let schema = tool.raw.get("inputSchema");
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut args = Map::new();
    for name in required {
        let kind = schema
            .and_then(|s| s.pointer(&format!("/properties/{name}/type")))
            .and_then(Value::as_str);
        let v = match kind {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!("us-west1"),
        };
        args.insert(name.to_owned(), v);
    }
    args
}

/// Which tools a scenario expects to be called.
enum Calls {
    /// These, by name.
    Named(&'static [&'static str]),
    /// Every tool of the listing (the ones the client kept).
    All,
    /// None: the scenario judges the listing.
    None,
}

fn tools_to_call(scenario: &str) -> Calls {
    match scenario {
        "tools_call" => Calls::Named(&["add_numbers"]),
        "sse-retry" => Calls::Named(&["test_reconnection"]),
        "elicitation-sep1034-client-defaults" => {
            Calls::Named(&["test_client_elicitation_defaults"])
        }
        "sep-2322-client-request-state" | "http-standard-headers" | "http-invalid-tool-headers" => {
            Calls::All
        }
        s if s.starts_with("auth/") => Calls::All,
        _ => Calls::None,
    }
}

/// The suite's context (`MCP_CONFORMANCE_CONTEXT`), as JSON.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

/// The Client ID Metadata Document URL the suite's `auth/basic-cimd` expects.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// The redirect URI registered; the headless user agent reads the redirect to it and never
/// dials it.
const REDIRECT_URI: &str = "http://127.0.0.1/oauth/callback";

/// The calls the suite hands over in `MCP_CONFORMANCE_CONTEXT` (`toolCalls`), if any.
fn context_calls() -> Vec<(String, Map<String, Value>)> {
    let Ok(text) = std::env::var("MCP_CONFORMANCE_CONTEXT") else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    v.get("toolCalls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| {
                    let name = c.get("name")?.as_str()?.to_owned();
                    let args = c.get("arguments").and_then(Value::as_object).cloned();
                    Some((name, args.unwrap_or_default()))
                })
                .collect()
        })
        .unwrap_or_default()
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

fn door() -> webfetch::DoorConfig {
    let mut door = webfetch::DoorConfig::new("mcp:conformance");
    // The suite's server listens on localhost.
    door.allow_private = true;
    // The suite times reconnections (sse-retry waits `retry: 500` ms); the door must not add
    // its own spacing between requests to the same host.
    door.host_interval = Duration::ZERO;
    door
}

fn config(url: &str) -> ServerConfig {
    let door = door();
    ServerConfig {
        protocol: mcp::Protocol::Auto,
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

/// The grant a scenario's client is configured with (as an owner sets `oauth.grant`): the
/// machine-to-machine extensions' grants, with what the suite hands over in its context;
/// else the authorization code flow.
fn grant(scenario: &str, ctx: &Value) -> Result<oauth::Grant, String> {
    let text = |k: &str| {
        ctx.get(k)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("context: no {k}"))
    };
    Ok(match scenario {
        "auth/client-credentials-basic" | "auth/client-credentials-jwt" => {
            oauth::Grant::ClientCredentials
        }
        "auth/enterprise-managed-authorization" => oauth::Grant::Enterprise(oauth::Enterprise {
            token_endpoint: text("idp_token_endpoint")?,
            client_id: text("idp_client_id")?,
            client_secret: text("idp_client_secret").ok(),
            id_token: oauth::TokenSource::Value(text("idp_id_token")?),
        }),
        "auth/wif-jwt-bearer" => {
            oauth::Grant::JwtBearer(oauth::TokenSource::Value(text("valid_jwt")?))
        }
        _ => oauth::Grant::AuthorizationCode,
    })
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
    let config = config(url);
    if scenario.starts_with("auth/") {
        let fetcher = webfetch::Fetcher::new(door());
        let ctx = context();
        let text = |k: &str| ctx.get(k).and_then(Value::as_str).map(str::to_owned);
        let oauth = oauth::OAuth::new(
            oauth::OAuthConfig {
                server: "conformance".to_owned(),
                // The resource is the URL as the suite published it; only dialling maps it.
                resource_url: url.to_owned(),
                client_id: text("client_id"),
                client_secret: text("client_secret"),
                client_metadata_url: Some(CLIENT_METADATA_URL.to_owned()),
                redirect_uri: REDIRECT_URI.to_owned(),
                client_name: "maven-conformance-client".to_owned(),
            },
            fetcher.clone(),
            Arc::new(oauth::MemoryStore::default()),
        )
        .with_dial(Arc::new(|u: &str| loopback_url(u)))
        .with_user_agent(Arc::new(testkit::authserver::Headless {
            fetcher: fetcher.clone(),
            dial: loopback_url,
            deadline: DEADLINE,
        }))
        .with_grant(grant(scenario, &ctx)?);
        let oauth = match text("private_key_pem") {
            Some(pem) => oauth.with_client_key(
                oauth::ClientKey::from_pem(&pem, None).map_err(|e| format!("context: {e}"))?,
            ),
            None => oauth,
        };
        options.oauth = Some(Arc::new(oauth));
        options.http_fetcher = Some(fetcher);
    }
    let client = Client::connect(&config, options)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let info = client.server_info();
    eprintln!(
        "connected to {} {} (protocol {}, {})",
        info.name, info.version, info.protocol_version, info.chosen
    );
    let listing = client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    let names: Vec<&str> = listing.tools.iter().map(|t| t.name.as_str()).collect();
    eprintln!("tools: {names:?}");
    for (name, reason) in &listing.rejected {
        eprintln!("left out {name}: {reason}");
    }
    let mut calls: Vec<(String, Map<String, Value>)> = context_calls();
    if calls.is_empty() {
        let by_name = |n: &str| listing.tools.iter().find(|t| t.name == n);
        match tools_to_call(scenario) {
            Calls::Named(wanted) => {
                for w in wanted {
                    let tool =
                        by_name(w).ok_or_else(|| format!("the server does not offer `{w}`"))?;
                    calls.push((tool.name.clone(), arguments_for(tool)));
                }
            }
            Calls::All => {
                for t in &listing.tools {
                    calls.push((t.name.clone(), arguments_for(t)));
                }
            }
            Calls::None => {}
        }
        if scenario == "json-schema-2020-12-preservation" {
            // Hand the focal tool's schema back as it was received.
            let focal = listing
                .tools
                .iter()
                .find(|t| t.name != "json_schema_echo")
                .ok_or("no focal tool")?;
            let mut args = Map::new();
            args.insert(
                "schema".to_owned(),
                focal.raw.get("inputSchema").cloned().unwrap_or(Value::Null),
            );
            calls.push(("json_schema_echo".to_owned(), args));
        }
    }
    for (name, args) in calls {
        let outcome = client
            .call_tool(&name, args)
            .await
            .map_err(|e| format!("tools/call {name}: {e}"))?;
        eprintln!("{name}: is_error={} {}", outcome.is_error, outcome.text);
        if outcome.is_error {
            return Err(format!(
                "tools/call {name} answered an error: {}",
                outcome.text
            ));
        }
    }
    if scenario == "http-standard-headers" {
        if let Ok(resources) = client.list_resources().await {
            if let Some(uri) = resources
                .iter()
                .find_map(|r| r.get("uri").and_then(Value::as_str))
            {
                client
                    .read_resource(uri)
                    .await
                    .map_err(|e| format!("resources/read: {e}"))?;
            }
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
