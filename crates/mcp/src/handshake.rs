//! What a connection learns of its server before anything else: the legacy `initialize`
//! handshake (its params, the reading of its answer, the versions this client accepts in it),
//! and the modern `server/discover` answer. The client runs one of them on connect; the HTTP
//! transport runs initialize again when a legacy server loses the session.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::config::ClientOptions;
use crate::era::Era;
use crate::error::Error;
use crate::text::cap_string;

pub use crate::era::{PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS};

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
    /// The era spoken.
    pub era: Era,
    /// How the era was chosen ("pinned by the configuration", "server/discover", "fell back
    /// to initialize: …").
    pub chosen: String,
    /// The versions the server listed in `server/discover` (modern era; capped).
    pub supported: Vec<String>,
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
            era: Era::Legacy,
            chosen: String::new(),
            supported: Vec::new(),
        }
    }

    /// Whether the server declared `tools.listChanged: true`.
    pub fn tools_list_changed(&self) -> bool {
        self.capabilities.pointer("/tools/listChanged") == Some(&Value::Bool(true))
    }
}

/// Most versions kept from a `server/discover` answer.
const SUPPORTED_CAP: usize = 16;
/// Longest version string kept from it.
const VERSION_CAP: usize = 64;

#[derive(Deserialize)]
struct DiscoverResult {
    #[serde(rename = "supportedVersions")]
    supported_versions: Vec<Value>,
    #[serde(default)]
    capabilities: Value,
    #[serde(rename = "serverInfo", default)]
    server_info: Value,
    #[serde(default)]
    instructions: Value,
    #[serde(rename = "_meta", default)]
    meta: Value,
}

/// A `server/discover` answer, or why it is not one (`None`: not a discover result at all,
/// which a legacy server that answers unknown methods with `{}` produces).
pub(crate) fn parse_discover(raw: &RawValue) -> Option<ServerInfo> {
    let r: DiscoverResult = serde_json::from_str(raw.get()).ok()?;
    let supported: Vec<String> = r
        .supported_versions
        .iter()
        .filter_map(Value::as_str)
        .take(SUPPORTED_CAP)
        .map(|s| cap_string(s.to_owned(), VERSION_CAP))
        .collect();
    if supported.is_empty() {
        return None;
    }
    // The server's identity is in the result's `_meta` (or, from earlier drafts, the body).
    let identity = match r.meta.get("io.modelcontextprotocol/serverInfo") {
        Some(v) if v.is_object() => v.clone(),
        _ => r.server_info,
    };
    let field = |k: &str| {
        identity
            .get(k)
            .and_then(Value::as_str)
            .map(|s| cap_string(s.to_owned(), INFO_CAP))
            .unwrap_or_default()
    };
    Some(ServerInfo {
        protocol_version: String::new(),
        name: field("name"),
        version: field("version"),
        capabilities: if r.capabilities.is_object() {
            r.capabilities
        } else {
            Value::Object(Map::new())
        },
        instructions: r
            .instructions
            .as_str()
            .map(|s| cap_string(s.to_owned(), INSTRUCTIONS_CAP)),
        era: Era::Modern,
        chosen: String::new(),
        supported,
    })
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
    let mut capabilities = options.capabilities.clone();
    if options.owner_elicitation {
        if let Value::Object(m) = &mut capabilities {
            m.entry("elicitation")
                .or_insert_with(|| serde_json::json!({"form": {}, "url": {}}));
        }
    }
    serde_json::json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": capabilities,
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
        era: Era::Legacy,
        chosen: String::new(),
        supported: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discover_answers() {
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        let info = parse_discover(&raw(
            r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"2"}}}"#,
        ))
        .unwrap();
        assert_eq!((info.name.as_str(), info.version.as_str()), ("s", "2"));
        assert_eq!(info.supported, ["2026-07-28"]);
        assert!(info.tools_list_changed());
        let info = parse_discover(&raw(
            r#"{"supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"old"}}"#,
        ))
        .unwrap();
        assert_eq!(info.name, "old");
        assert!(!info.tools_list_changed());
        for not_discover in [
            r#"{}"#,
            r#"{"supportedVersions":[]}"#,
            r#"{"supportedVersions":[1]}"#,
            "[]",
        ] {
            assert!(
                parse_discover(&raw(not_discover)).is_none(),
                "{not_discover}"
            );
        }
    }

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
