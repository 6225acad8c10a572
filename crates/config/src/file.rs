//! The configuration file's own shape, typed: what a writer of the file (`maven mcp import`)
//! builds and serialises, and what the reader's walk ([`crate::Config::parse`], which names
//! every error by its path) is checked against: the keys the walk accepts for a block are the
//! fields of its type here, and a test fails when the two part. Values stay as written: a
//! `${VAR}` reference is not expanded, a duration is its text ("30s").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The keys of an `mcp_servers` block, as the walk accepts them.
pub(crate) const MCP_BLOCK_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "url",
    "headers",
    "allow_private",
    "host_interval",
    "enabled",
    "allow_tools",
    "max_tools",
    "timeouts",
    "protocol",
    "oauth",
    "sandbox",
];

/// The keys of a block's `sandbox` object, as the walk accepts them.
pub(crate) const SANDBOX_KEYS: &[&str] = &[
    "read",
    "write",
    "network",
    "hosts",
    "connect",
    "memory",
    "processes",
    "disk",
    "allow_shared_code",
];

/// The keys of a block's `timeouts`, as the walk accepts them.
pub(crate) const TIMEOUT_KEYS: &[&str] = &["init", "list", "call"];

/// A whole configuration file: its `mcp_servers` typed, every other block kept as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigFile {
    /// The `mcp_servers` blocks, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp_servers: BTreeMap<String, McpBlock>,
    /// Every other key of the file, as written.
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

impl ConfigFile {
    /// The file as JSON, pretty-printed, as a person would write it.
    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// One `mcp_servers` block as written: a local server (`command`) or an HTTP one (`url`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpBlock {
    /// A local server's program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Its environment (values may be `${VAR}` references).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// An HTTP server's endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent to it (values may be `${VAR}` references).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Whether the endpoint may be on a private or loopback address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_private: Option<bool>,
    /// Least time between two requests to the endpoint's host ("1s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_interval: Option<String>,
    /// Whether the daemon dials it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The tools it may offer (absent: any, within `max_tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_tools: Option<Vec<String>>,
    /// How many tools it may offer without `allow_tools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tools: Option<u64>,
    /// Its deadlines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<TimeoutsBlock>,
    /// The era it is spoken to in ("auto", "2026-07-28", "2025-11-25").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// An HTTP server's OAuth settings, as written (the walk checks them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<Value>,
    /// A local server's sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxBlock>,
}

/// A block's `timeouts`, each a duration as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeoutsBlock {
    /// Each exchange of the handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<String>,
    /// A listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<String>,
    /// A call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
}

/// A block's `sandbox`: on or off, or its policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SandboxBlock {
    /// `true` (the default policy) or `false` (the owner's explicit choice to run it as
    /// themselves).
    On(bool),
    /// The default policy with these grants and bounds.
    Policy(Box<SandboxPolicy>),
}

/// A `sandbox` object: grants and bounds, each as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxPolicy {
    /// Paths it may read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Paths it may write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// `true` (through Maven), `false` or `"direct"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Value>,
    /// Hosts it may reach through Maven besides public addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Local endpoints it may connect to (`127.0.0.1:5432`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect: Vec<String>,
    /// Its memory bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Value>,
    /// Its process bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<Value>,
    /// Its disk bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<Value>,
    /// Whether it may read shared code directories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_shared_code: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: &Value) -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    }

    fn sorted(k: &[&str]) -> Vec<String> {
        let mut k: Vec<String> = k.iter().map(|s| s.to_string()).collect();
        k.sort();
        k
    }

    /// Every field set, so that each is serialised.
    fn full() -> McpBlock {
        McpBlock {
            command: Some("srv".into()),
            args: vec!["a".into()],
            env: [("K".into(), "${K}".into())].into(),
            url: Some("https://a.example/mcp".into()),
            headers: [("H".into(), "${H}".into())].into(),
            allow_private: Some(true),
            host_interval: Some("1s".into()),
            enabled: Some(false),
            allow_tools: Some(vec!["t".into()]),
            max_tools: Some(3),
            timeouts: Some(TimeoutsBlock {
                init: Some("10s".into()),
                list: Some("10s".into()),
                call: Some("1m".into()),
            }),
            protocol: Some("auto".into()),
            oauth: Some(serde_json::json!({})),
            sandbox: Some(SandboxBlock::Policy(Box::new(SandboxPolicy {
                read: vec!["/r".into()],
                write: vec!["/w".into()],
                network: Some(Value::Bool(true)),
                hosts: vec!["h.example".into()],
                connect: vec!["127.0.0.1:1".into()],
                memory: Some(1.into()),
                processes: Some(1.into()),
                disk: Some(1.into()),
                allow_shared_code: Some(true),
            }))),
        }
    }

    #[test]
    fn the_walk_accepts_exactly_the_keys_of_the_typed_block() {
        let v = serde_json::to_value(full()).unwrap();
        assert_eq!(keys(&v), sorted(MCP_BLOCK_KEYS));
        assert_eq!(keys(&v["sandbox"]), sorted(SANDBOX_KEYS));
        assert_eq!(keys(&v["timeouts"]), sorted(TIMEOUT_KEYS));
        // A key the type does not have is refused by it, as the walk refuses it.
        let mut bad = v.clone();
        bad["cwd"] = "/".into();
        assert!(serde_json::from_value::<McpBlock>(bad).is_err());
        assert_eq!(serde_json::from_value::<McpBlock>(v).unwrap(), full());
    }

    #[test]
    fn a_written_file_reads_back_and_validates() {
        let mut file: ConfigFile =
            serde_json::from_str(r#"{"feeds": [{"name": "a", "url": "https://a.example/rss"}]}"#)
                .unwrap();
        file.mcp_servers.insert(
            "files".into(),
            McpBlock {
                command: Some("npx".into()),
                args: vec!["-y".into(), "@x/files".into()],
                env: [("TOKEN".into(), "${MCP_FILES_TOKEN}".into())].into(),
                enabled: Some(false),
                sandbox: Some(SandboxBlock::Policy(Box::new(SandboxPolicy {
                    write: vec!["/tmp".into()],
                    ..SandboxPolicy::default()
                }))),
                ..McpBlock::default()
            },
        );
        let text = file.to_text();
        let back: ConfigFile = serde_json::from_str(&text).unwrap();
        assert_eq!(back, file);
        let c = crate::Config::parse("c.json", text.as_bytes(), &|v| {
            (v == "MCP_FILES_TOKEN").then(|| "x".to_owned())
        })
        .unwrap();
        assert_eq!(c.feeds.len(), 1);
        assert!(!c.mcp_servers["files"].enabled);
    }
}
