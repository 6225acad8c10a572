//! The initialize handshake both transports run: the request's params, the reading of the
//! answer, and the protocol versions this client speaks. The client runs it on connect; the
//! HTTP transport runs it again when the server loses the session.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::config::ClientOptions;
use crate::error::Error;
use crate::text::cap_string;

/// The protocol version this client asks for.
pub const PROTOCOL_VERSION: &str = "2025-11-25";
/// Every protocol version this client accepts in an initialize answer.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// Longest server name or version string kept from the handshake.
const INFO_CAP: usize = 256;
/// Longest `instructions` kept from the handshake.
const INSTRUCTIONS_CAP: usize = 4096;

/// What the handshake established.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The negotiated protocol version (one of [`SUPPORTED_PROTOCOL_VERSIONS`]).
    pub protocol_version: String,
    /// `serverInfo.name` (capped).
    pub name: String,
    /// `serverInfo.version` (capped).
    pub version: String,
    /// The server's declared capabilities, as received.
    pub capabilities: Value,
    /// `instructions` (capped), if any.
    pub instructions: Option<String>,
}

impl ServerInfo {
    /// Handshake facts without capabilities or instructions (for reports and tests).
    pub fn new(
        protocol_version: impl Into<String>,
        name: impl Into<String>,
        version: impl Into<String>,
    ) -> ServerInfo {
        ServerInfo {
            protocol_version: protocol_version.into(),
            name: name.into(),
            version: version.into(),
            capabilities: Value::Object(Map::new()),
            instructions: None,
        }
    }
}

#[derive(Deserialize)]
struct InitializeResult {
    #[serde(rename = "protocolVersion")]
    protocol_version: Value,
    #[serde(default)]
    capabilities: Value,
    #[serde(rename = "serverInfo", default)]
    server_info: Value,
    #[serde(default)]
    instructions: Value,
}

/// The initialize request's params.
pub(crate) fn initialize_params(options: &ClientOptions) -> Value {
    serde_json::json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": options.capabilities,
        "clientInfo": {"name": options.client_name, "version": options.client_version},
    })
}

pub(crate) fn parse_initialize(raw: &RawValue) -> Result<ServerInfo, Error> {
    let bad = |reason: &str| Error::BadResult {
        method: "initialize".to_owned(),
        reason: reason.to_owned(),
    };
    let r: InitializeResult =
        serde_json::from_str(raw.get()).map_err(|_| bad("not an initialize result"))?;
    let Value::String(version) = r.protocol_version else {
        return Err(bad("protocolVersion is not a string"));
    };
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&version.as_str()) {
        return Err(Error::UnsupportedProtocol {
            offered: cap_string(version, 64),
        });
    }
    let field = |k: &str| {
        r.server_info
            .get(k)
            .and_then(Value::as_str)
            .map(|s| cap_string(s.to_owned(), INFO_CAP))
            .unwrap_or_default()
    };
    Ok(ServerInfo {
        protocol_version: version,
        name: field("name"),
        version: field("version"),
        capabilities: r.capabilities,
        instructions: r
            .instructions
            .as_str()
            .map(|s| cap_string(s.to_owned(), INSTRUCTIONS_CAP)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_answers() {
        let cases: &[(&str, Result<&str, &str>)] = &[
            (
                r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
                Ok("2025-11-25"),
            ),
            (
                r#"{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
                Ok("2025-06-18"),
            ),
            (
                r#"{"protocolVersion":"2025-03-26","serverInfo":{"name":"s"}}"#,
                Ok("2025-03-26"),
            ),
            (
                r#"{"protocolVersion":"2024-11-05","serverInfo":{"name":"s"}}"#,
                Err("unsupported"),
            ),
            (r#"{"protocolVersion":"2099-01-01"}"#, Err("unsupported")),
            (r#"{"protocolVersion":20251125}"#, Err("bad")),
            (r#"{"serverInfo":{}}"#, Err("bad")),
            (r#"[]"#, Err("bad")),
        ];
        for (json, want) in cases {
            let raw = RawValue::from_string((*json).to_owned()).unwrap();
            let got = parse_initialize(&raw);
            match (got, want) {
                (Ok(info), Ok(v)) => assert_eq!(info.protocol_version, *v),
                (Err(Error::UnsupportedProtocol { .. }), Err("unsupported")) => {}
                (Err(Error::BadResult { .. }), Err("bad")) => {}
                (got, want) => panic!("{json}: {got:?} vs {want:?}"),
            }
        }
    }
}
