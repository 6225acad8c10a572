//! The IPC methods, typed: [`Request`] is every method with its parameters, read from a
//! JSON-RPC request in one place (with the errors the socket has always answered), and
//! [`Reply`] is the answer each gives. The daemon answers a `Request` with a `Reply`; the
//! command line sends a `Request`. A leaf beside `protocol`: it names only the views.

use serde::Serialize;
use serde_json::{json, Value};

use super::protocol::RpcError;
use crate::views::{
    AuthView, EnrollLink, FeedView, ForgottenView, NoteView, OAuthLink, ServerStatusView,
    StatusView, ToolView, TurnView,
};

/// The longest utterance of one turn, in bytes.
pub(crate) const MAX_TURN: usize = 4096;
/// How many notes `notes` answers when no `limit` is given.
pub(crate) const NOTES_DEFAULT: u32 = 50;
/// The most notes one `notes` request may ask for.
pub(crate) const NOTES_MAX: u64 = 10_000;

/// One IPC request. Every method only reads, but for `turn` (the one path to an act) and
/// `mcp_logout` (which forgets a server's credentials).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    /// `maven status`.
    Status,
    /// `maven say TEXT`: one turn.
    Turn { text: String },
    /// `maven tools`.
    Tools,
    /// `maven notes`: the newest notes, of sources that begin with `source` when given.
    Notes { source: Option<String>, limit: u32 },
    /// `maven mcp status`.
    McpServers,
    /// `maven feeds status`.
    Feeds,
    /// `maven mcp logout NAME`.
    McpLogout { name: String },
    /// What the daemon holds of a server's authorization (`maven mcp inspect`).
    McpAuth { name: String },
    /// `maven mcp login NAME`: a one-time link to the page.
    McpLogin { name: String },
    /// `maven web enroll`: a one-time passkey enrollment link.
    WebEnroll,
}

impl Request {
    /// Reads a request's method and parameters. Parameters a method does not take are
    /// ignored; a parameter of the wrong kind is an invalid-params error naming it.
    pub(crate) fn parse(method: &str, params: &Value) -> Result<Request, RpcError> {
        let name = || match params.get("name").and_then(Value::as_str) {
            Some(n) => Ok(n.to_owned()),
            None => Err(RpcError::invalid_params("name: expected a string")),
        };
        Ok(match method {
            "status" => Request::Status,
            "turn" => {
                let Some(text) = params.get("text").and_then(Value::as_str) else {
                    return Err(RpcError::invalid_params("text: expected a string"));
                };
                if text.len() > MAX_TURN {
                    return Err(RpcError::invalid_params(
                        "text: at most 4096 bytes in one turn",
                    ));
                }
                Request::Turn {
                    text: text.to_owned(),
                }
            }
            "tools" => Request::Tools,
            "notes" => {
                let source = match params.get("source") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(v) => {
                        return Err(RpcError::invalid_params(format!(
                            "source: expected a string, got {v}"
                        )))
                    }
                };
                let limit = match params.get("limit") {
                    None | Some(Value::Null) => NOTES_DEFAULT,
                    Some(v) => match v.as_u64().filter(|n| (1..=NOTES_MAX).contains(n)) {
                        Some(n) => u32::try_from(n).unwrap_or(NOTES_DEFAULT),
                        None => {
                            return Err(RpcError::invalid_params(format!(
                                "limit: expected an integer from 1 to 10000, got {v}"
                            )))
                        }
                    },
                };
                Request::Notes { source, limit }
            }
            "mcp_servers" => Request::McpServers,
            "feeds" => Request::Feeds,
            "mcp_logout" => Request::McpLogout { name: name()? },
            "mcp_auth" => Request::McpAuth { name: name()? },
            // A missing name is a name no server has: the answer says so.
            "mcp_login" => Request::McpLogin {
                name: params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            },
            "web_enroll" => Request::WebEnroll,
            _ => return Err(RpcError::no_method(method)),
        })
    }

    /// The method's name on the wire.
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Request::Status => "status",
            Request::Turn { .. } => "turn",
            Request::Tools => "tools",
            Request::Notes { .. } => "notes",
            Request::McpServers => "mcp_servers",
            Request::Feeds => "feeds",
            Request::McpLogout { .. } => "mcp_logout",
            Request::McpAuth { .. } => "mcp_auth",
            Request::McpLogin { .. } => "mcp_login",
            Request::WebEnroll => "web_enroll",
        }
    }

    /// The request's parameters as the wire carries them.
    pub(crate) fn params(&self) -> Value {
        match self {
            Request::Status
            | Request::Tools
            | Request::McpServers
            | Request::Feeds
            | Request::WebEnroll => json!({}),
            Request::Turn { text } => json!({ "text": text }),
            Request::Notes { source, limit } => json!({"source": source, "limit": limit}),
            Request::McpLogout { name }
            | Request::McpAuth { name }
            | Request::McpLogin { name } => {
                json!({ "name": name })
            }
        }
    }
}

/// The answer of each method, as its view; the JSON is the view's.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Reply {
    Status(Box<StatusView>),
    Turn(TurnView),
    Tools(Vec<ToolView>),
    Notes(Vec<NoteView>),
    McpServers(Vec<ServerStatusView>),
    Feeds(Vec<FeedView>),
    McpLogin(OAuthLink),
    McpLogout(ForgottenView),
    McpAuth(AuthView),
    WebEnroll(EnrollLink),
}

impl Reply {
    /// The reply as the JSON-RPC result.
    pub(crate) fn into_value(self) -> Result<Value, RpcError> {
        serde_json::to_value(self)
            .map_err(|e| RpcError::internal(format!("cannot encode the answer: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::protocol::{INVALID_PARAMS, METHOD_NOT_FOUND};

    fn refused(method: &str, params: Value) -> (i64, String) {
        let e = Request::parse(method, &params).unwrap_err();
        (e.code, e.message)
    }

    #[test]
    fn every_request_reads_back_from_what_it_sends() {
        for r in [
            Request::Status,
            Request::Turn { text: "hi".into() },
            Request::Tools,
            Request::Notes {
                source: Some("feed:".into()),
                limit: 7,
            },
            Request::Notes {
                source: None,
                limit: NOTES_DEFAULT,
            },
            Request::McpServers,
            Request::Feeds,
            Request::McpLogout { name: "a".into() },
            Request::McpAuth { name: "a".into() },
            Request::McpLogin { name: "a".into() },
            Request::WebEnroll,
        ] {
            assert_eq!(Request::parse(r.method(), &r.params()).unwrap(), r);
        }
    }

    #[test]
    fn parameters_are_read_as_they_always_were() {
        assert_eq!(
            Request::parse("notes", &Value::Null).unwrap(),
            Request::Notes {
                source: None,
                limit: 50
            }
        );
        assert_eq!(
            Request::parse("mcp_login", &json!({})).unwrap(),
            Request::McpLogin {
                name: String::new()
            }
        );
        // Parameters a method does not take are ignored.
        assert_eq!(
            Request::parse("status", &json!({"x": 1})).unwrap(),
            Request::Status
        );
        for (method, params, message) in [
            ("turn", json!({}), "text: expected a string"),
            ("turn", json!({"text": 3}), "text: expected a string"),
            (
                "turn",
                json!({"text": "x".repeat(4097)}),
                "text: at most 4096 bytes in one turn",
            ),
            (
                "notes",
                json!({"source": 1}),
                "source: expected a string, got 1",
            ),
            (
                "notes",
                json!({"limit": 0}),
                "limit: expected an integer from 1 to 10000, got 0",
            ),
            (
                "notes",
                json!({"limit": 10_001}),
                "limit: expected an integer from 1 to 10000, got 10001",
            ),
            (
                "notes",
                json!({"limit": "5"}),
                "limit: expected an integer from 1 to 10000, got \"5\"",
            ),
            ("mcp_logout", json!({}), "name: expected a string"),
            ("mcp_auth", json!({"name": 1}), "name: expected a string"),
        ] {
            assert_eq!(
                refused(method, params),
                (INVALID_PARAMS, message.to_owned()),
                "{method}"
            );
        }
        assert_eq!(
            refused("enable", json!({})),
            (METHOD_NOT_FOUND, "no such method: enable".to_owned())
        );
        assert!(Request::parse("turn", &json!({"text": "x".repeat(4096)})).is_ok());
    }
}
