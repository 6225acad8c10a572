//! Protocol eras. The *legacy* era (2025-11-25 and earlier) opens with the `initialize`
//! handshake and, over HTTP, a session; the *modern* era (2026-07-28) has neither: every request
//! carries its protocol version, the client's capabilities and identity in `_meta`, and
//! `server/discover` says what a server speaks. This module holds the owner's choice, the
//! per-request metadata, the version selection rule and the modern error codes.

use serde_json::Value;

/// The legacy protocol version this client asks for in `initialize`.
pub const PROTOCOL_VERSION: &str = "2025-11-25";
/// Every legacy protocol version this client accepts in an initialize answer.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// The modern protocol version this client speaks.
pub const MODERN_VERSION: &str = "2026-07-28";

/// `HeaderMismatch`: the HTTP headers do not match the body.
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// `MissingRequiredClientCapability`.
pub(crate) const MISSING_CAPABILITY: i64 = -32021;
/// `UnsupportedProtocolVersion`, with `data.supported`.
pub(crate) const UNSUPPORTED_VERSION: i64 = -32022;

/// Whether `code` is one of the error codes only a modern server sends.
pub(crate) fn is_modern_error(code: i64) -> bool {
    matches!(
        code,
        HEADER_MISMATCH | MISSING_CAPABILITY | UNSUPPORTED_VERSION
    )
}

/// Which era to speak to one server: the `protocol` key of its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// Probe for the modern era and fall back to the legacy handshake (the default).
    #[default]
    Auto,
    /// Only 2026-07-28.
    Modern,
    /// Only the `initialize` handshake (2025-11-25 and the versions it accepts).
    Legacy,
}

impl Protocol {
    /// `"auto"`, `"2026-07-28"` or `"2025-11-25"`.
    pub fn parse(s: &str) -> Option<Protocol> {
        match s {
            "auto" => Some(Protocol::Auto),
            MODERN_VERSION => Some(Protocol::Modern),
            PROTOCOL_VERSION => Some(Protocol::Legacy),
            _ => None,
        }
    }

    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Auto => "auto",
            Protocol::Modern => MODERN_VERSION,
            Protocol::Legacy => PROTOCOL_VERSION,
        }
    }
}

/// The era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Era {
    /// `initialize` handshake, sessions, server-initiated requests.
    #[default]
    Legacy,
    /// Stateless, per-request `_meta`, multi round-trip requests.
    Modern,
}

impl Era {
    /// "legacy" or "modern".
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

/// The `"_meta":{…}` member every modern request carries, written once per connection: the
/// protocol version, the client's capabilities and its identity.
pub(crate) fn meta_member(
    capabilities: &Value,
    client_name: &str,
    client_version: &str,
    version: &str,
) -> Vec<u8> {
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {
            "name": client_name,
            "version": client_version,
        },
    });
    let mut out = b"\"_meta\":".to_vec();
    // Writing a Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut out, &meta);
    out
}

/// The capabilities object as the modern era declares it: an object (never null), each
/// declared capability an object, plus `elicitation` (form and URL) when `elicitation`.
pub(crate) fn modern_capabilities(declared: &Value, elicitation: bool) -> Value {
    let mut m: serde_json::Map<String, Value> = match declared {
        Value::Object(m) => m
            .iter()
            .filter(|(_, v)| v.is_object())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        _ => serde_json::Map::new(),
    };
    if elicitation && !m.contains_key("elicitation") {
        m.insert(
            "elicitation".to_owned(),
            serde_json::json!({"form": {}, "url": {}}),
        );
    }
    Value::Object(m)
}

/// The first version of `ours` (in our order of preference) that `theirs` lists.
pub(crate) fn pick<'a>(ours: &[&'a str], theirs: &[String]) -> Option<&'a str> {
    ours.iter().copied().find(|v| theirs.iter().any(|t| t == v))
}

/// Every version this client speaks, modern first.
pub(crate) fn all_versions() -> Vec<&'static str> {
    let mut v = vec![MODERN_VERSION];
    v.extend(SUPPORTED_PROTOCOL_VERSIONS);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_spellings() {
        for p in [Protocol::Auto, Protocol::Modern, Protocol::Legacy] {
            assert_eq!(Protocol::parse(p.as_str()), Some(p));
        }
        assert_eq!(Protocol::parse("2025-06-18"), None);
        assert_eq!(Protocol::parse("AUTO"), None);
    }

    #[test]
    fn meta_member_is_the_three_keys() {
        let m = meta_member(&serde_json::json!({}), "maven", "1", MODERN_VERSION);
        let text = String::from_utf8(m).unwrap();
        let body = text.strip_prefix("\"_meta\":").unwrap();
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["io.modelcontextprotocol/protocolVersion"], MODERN_VERSION);
        assert_eq!(
            v["io.modelcontextprotocol/clientCapabilities"],
            serde_json::json!({})
        );
        assert_eq!(v["io.modelcontextprotocol/clientInfo"]["name"], "maven");
    }

    #[test]
    fn pick_prefers_our_order() {
        let theirs = vec!["2025-06-18".to_owned(), MODERN_VERSION.to_owned()];
        assert_eq!(pick(&all_versions(), &theirs), Some(MODERN_VERSION));
        assert_eq!(pick(&all_versions(), &["1999-01-01".to_owned()]), None);
    }
}
