//! The IPC methods, typed both ways: [`Request`] is every method with its parameters, read
//! from a JSON-RPC request in one place (with the errors the socket has always answered), and
//! [`Reply`] is the answer each gives, tagged by its [`Method`]. The daemon reads a `Request`
//! and writes a `Reply`; the command line writes the `Request` and reads the `Reply` back with
//! the same types ([`Reply::parse`] by the method it asked). The JSON-RPC result is the view
//! itself, which is what `--json` prints (I-3). A leaf beside `protocol`: it names only the
//! views.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::protocol::RpcError;
use crate::views::{
    ActRecordView, AuthView, EnrollLink, FeedView, ForgottenView, NoteView, OAuthLink, RefreshView,
    ReloadView, ServerStatusView, StatusView, ToolView, TurnView,
};

/// The longest utterance of one turn, in bytes.
pub const MAX_TURN: usize = 4096;
/// How many notes `notes` answers when no `limit` is given.
pub const NOTES_DEFAULT: u32 = 50;
/// The most notes one `notes` request may ask for.
pub const NOTES_MAX: u64 = 10_000;
/// How many acts `acts` answers when no `limit` is given.
pub const ACTS_DEFAULT: u32 = 20;
/// The most acts one `acts` request may ask for.
pub const ACTS_MAX: u64 = 1000;

/// The methods, by their names on the wire: the tag of every [`Request`] and [`Reply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// `status`.
    Status,
    /// `turn`.
    Turn,
    /// `spoken_turn`.
    SpokenTurn,
    /// `tools`.
    Tools,
    /// `notes`.
    Notes,
    /// `mcp_servers`.
    McpServers,
    /// `feeds`.
    Feeds,
    /// `feeds_refresh`.
    FeedsRefresh,
    /// `mcp_logout`.
    McpLogout,
    /// `mcp_auth`.
    McpAuth,
    /// `mcp_login`.
    McpLogin,
    /// `web_enroll`.
    WebEnroll,
    /// `reload`.
    Reload,
    /// `acts`.
    Acts,
}

impl Method {
    /// Every method.
    pub const ALL: [Method; 14] = [
        Method::Status,
        Method::Turn,
        Method::SpokenTurn,
        Method::Tools,
        Method::Notes,
        Method::McpServers,
        Method::Feeds,
        Method::FeedsRefresh,
        Method::McpLogout,
        Method::McpAuth,
        Method::McpLogin,
        Method::WebEnroll,
        Method::Reload,
        Method::Acts,
    ];

    /// The method's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Method::Status => "status",
            Method::Turn => "turn",
            Method::SpokenTurn => "spoken_turn",
            Method::Tools => "tools",
            Method::Notes => "notes",
            Method::McpServers => "mcp_servers",
            Method::Feeds => "feeds",
            Method::FeedsRefresh => "feeds_refresh",
            Method::McpLogout => "mcp_logout",
            Method::McpAuth => "mcp_auth",
            Method::McpLogin => "mcp_login",
            Method::WebEnroll => "web_enroll",
            Method::Reload => "reload",
            Method::Acts => "acts",
        }
    }

    /// The method of a name on the wire.
    pub fn of(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One IPC request. Every method only reads, but for `turn` (the one path to an act),
/// `mcp_logout` (which forgets a server's credentials) and `feeds_refresh` (which polls feeds
/// now, as their schedules would).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `maven status`.
    Status,
    /// `maven say TEXT`: one turn; with `explain`, the reply also says which sentence
    /// template matched, or why none did.
    Turn {
        /// What the owner said.
        text: String,
        /// Whether the reply says which template matched.
        explain: bool,
    },
    /// `maven listen`: one spoken turn (a transcript) of a conversation.
    SpokenTurn {
        /// The transcript.
        text: String,
        /// The conversation it belongs to (at most 128 bytes).
        conversation: String,
    },
    /// `maven tools`.
    Tools,
    /// `maven notes`: the newest notes, of sources that begin with `source` when given.
    Notes {
        /// The beginning of the sources asked for.
        source: Option<String>,
        /// How many notes at most.
        limit: u32,
    },
    /// `maven mcp status`.
    McpServers,
    /// `maven feeds status`.
    Feeds,
    /// `maven feeds refresh [NAME]`: poll now, within the host's spacing and the backoff.
    FeedsRefresh {
        /// The one feed to poll; every enabled feed when absent.
        name: Option<String>,
    },
    /// `maven mcp logout NAME`.
    McpLogout {
        /// The server's name.
        name: String,
    },
    /// What the daemon holds of a server's authorization (`maven mcp inspect`).
    McpAuth {
        /// The server's name.
        name: String,
    },
    /// `maven mcp login NAME`: a one-time link to the page.
    McpLogin {
        /// The server's name.
        name: String,
    },
    /// `maven web enroll`: a one-time passkey enrollment link.
    WebEnroll,
    /// `maven reload` (and SIGHUP): read the configuration again and apply the difference.
    Reload,
    /// `maven acts`: the newest recorded acts (read-only).
    Acts {
        /// How many acts at most.
        limit: u32,
    },
}

impl Request {
    /// Reads a request's method and parameters. Parameters a method does not take are
    /// ignored; a parameter of the wrong kind is an invalid-params error naming it.
    pub fn parse(method: &str, params: &Value) -> Result<Request, RpcError> {
        let name = || match params.get("name").and_then(Value::as_str) {
            Some(n) => Ok(n.to_owned()),
            None => Err(RpcError::invalid_params("name: expected a string")),
        };
        let Some(m) = Method::of(method) else {
            return Err(RpcError::no_method(method));
        };
        Ok(match m {
            Method::Status => Request::Status,
            Method::Turn => {
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
                    explain: params
                        .get("explain")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                }
            }
            Method::SpokenTurn => {
                let Some(text) = params.get("text").and_then(Value::as_str) else {
                    return Err(RpcError::invalid_params("text: expected a string"));
                };
                if text.len() > MAX_TURN {
                    return Err(RpcError::invalid_params(
                        "text: at most 4096 bytes in one turn",
                    ));
                }
                let Some(conversation) = params.get("conversation").and_then(Value::as_str) else {
                    return Err(RpcError::invalid_params("conversation: expected a string"));
                };
                Request::SpokenTurn {
                    text: text.to_owned(),
                    conversation: shown::cut(conversation, 128).into_owned(),
                }
            }
            Method::Tools => Request::Tools,
            Method::Notes => {
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
            Method::McpServers => Request::McpServers,
            Method::Feeds => Request::Feeds,
            Method::FeedsRefresh => Request::FeedsRefresh {
                name: match params.get("name") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err(RpcError::invalid_params("name: expected a string")),
                },
            },
            Method::McpLogout => Request::McpLogout { name: name()? },
            Method::McpAuth => Request::McpAuth { name: name()? },
            // A missing name is a name no server has: the answer says so.
            Method::McpLogin => Request::McpLogin {
                name: params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            },
            Method::WebEnroll => Request::WebEnroll,
            Method::Reload => Request::Reload,
            Method::Acts => Request::Acts {
                limit: match params.get("limit") {
                    None | Some(Value::Null) => ACTS_DEFAULT,
                    Some(v) => match v.as_u64().filter(|n| (1..=ACTS_MAX).contains(n)) {
                        Some(n) => u32::try_from(n).unwrap_or(ACTS_DEFAULT),
                        None => {
                            return Err(RpcError::invalid_params(format!(
                                "limit: expected an integer from 1 to {ACTS_MAX}, got {v}"
                            )))
                        }
                    },
                },
            },
        })
    }

    /// The request's method.
    pub fn method(&self) -> Method {
        match self {
            Request::Status => Method::Status,
            Request::Turn { .. } => Method::Turn,
            Request::SpokenTurn { .. } => Method::SpokenTurn,
            Request::Tools => Method::Tools,
            Request::Notes { .. } => Method::Notes,
            Request::McpServers => Method::McpServers,
            Request::Feeds => Method::Feeds,
            Request::FeedsRefresh { .. } => Method::FeedsRefresh,
            Request::McpLogout { .. } => Method::McpLogout,
            Request::McpAuth { .. } => Method::McpAuth,
            Request::McpLogin { .. } => Method::McpLogin,
            Request::WebEnroll => Method::WebEnroll,
            Request::Reload => Method::Reload,
            Request::Acts { .. } => Method::Acts,
        }
    }

    /// The request's parameters as the wire carries them.
    pub fn params(&self) -> Value {
        match self {
            Request::Status
            | Request::Tools
            | Request::McpServers
            | Request::Feeds
            | Request::WebEnroll
            | Request::Reload => json!({}),
            Request::Turn {
                text,
                explain: false,
            } => json!({ "text": text }),
            Request::Turn {
                text,
                explain: true,
            } => json!({ "text": text, "explain": true }),
            Request::SpokenTurn { text, conversation } => {
                json!({ "text": text, "conversation": conversation })
            }
            Request::Notes { source, limit } => json!({"source": source, "limit": limit}),
            Request::Acts { limit } => json!({ "limit": limit }),
            Request::FeedsRefresh { name } => json!({ "name": name }),
            Request::McpLogout { name }
            | Request::McpAuth { name }
            | Request::McpLogin { name } => {
                json!({ "name": name })
            }
        }
    }
}

/// The answer of each method, as its view; the JSON is the view's, and which view it is
/// follows from the method asked (the tag), never from the JSON's shape.
#[derive(Debug, Clone)]
pub enum Reply {
    /// The daemon's status.
    Status(Box<StatusView>),
    /// The answer of a turn (spoken or typed).
    Turn(TurnView),
    /// Every act row.
    Tools(Vec<ToolView>),
    /// The newest notes.
    Notes(Vec<NoteView>),
    /// Every configured server.
    McpServers(Vec<ServerStatusView>),
    /// Every configured feed.
    Feeds(Vec<FeedView>),
    /// The feeds polled now, or held back.
    FeedsRefresh(Vec<RefreshView>),
    /// A one-time link to the page's OAuth login.
    McpLogin(OAuthLink),
    /// A server's credentials forgotten.
    McpLogout(ForgottenView),
    /// What the daemon holds of a server's authorization.
    McpAuth(AuthView),
    /// A one-time passkey enrollment link.
    WebEnroll(EnrollLink),
    /// What a reload did.
    Reload(ReloadView),
    /// The newest recorded acts.
    Acts(Vec<ActRecordView>),
}

impl Reply {
    /// The method this reply answers.
    pub fn method(&self) -> Method {
        match self {
            Reply::Status(_) => Method::Status,
            Reply::Turn(_) => Method::Turn,
            Reply::Tools(_) => Method::Tools,
            Reply::Notes(_) => Method::Notes,
            Reply::McpServers(_) => Method::McpServers,
            Reply::Feeds(_) => Method::Feeds,
            Reply::FeedsRefresh(_) => Method::FeedsRefresh,
            Reply::McpLogin(_) => Method::McpLogin,
            Reply::McpLogout(_) => Method::McpLogout,
            Reply::McpAuth(_) => Method::McpAuth,
            Reply::WebEnroll(_) => Method::WebEnroll,
            Reply::Reload(_) => Method::Reload,
            Reply::Acts(_) => Method::Acts,
        }
    }

    /// The reply as the JSON-RPC result: its view.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        match self {
            Reply::Status(v) => serde_json::to_value(v),
            Reply::Turn(v) => serde_json::to_value(v),
            Reply::Tools(v) => serde_json::to_value(v),
            Reply::Notes(v) => serde_json::to_value(v),
            Reply::McpServers(v) => serde_json::to_value(v),
            Reply::Feeds(v) => serde_json::to_value(v),
            Reply::FeedsRefresh(v) => serde_json::to_value(v),
            Reply::McpLogin(v) => serde_json::to_value(v),
            Reply::McpLogout(v) => serde_json::to_value(v),
            Reply::McpAuth(v) => serde_json::to_value(v),
            Reply::WebEnroll(v) => serde_json::to_value(v),
            Reply::Reload(v) => serde_json::to_value(v),
            Reply::Acts(v) => serde_json::to_value(v),
        }
    }

    /// The reply as the JSON-RPC result, for the daemon's answer.
    pub fn into_value(self) -> Result<Value, RpcError> {
        self.to_value()
            .map_err(|e| RpcError::internal(format!("cannot encode the answer: {e}")))
    }

    /// Reads the JSON-RPC result of `method` back as its view.
    pub fn parse(method: Method, v: Value) -> Result<Reply, serde_json::Error> {
        Ok(match method {
            Method::Status => Reply::Status(serde_json::from_value(v)?),
            Method::Turn | Method::SpokenTurn => Reply::Turn(serde_json::from_value(v)?),
            Method::Tools => Reply::Tools(serde_json::from_value(v)?),
            Method::Notes => Reply::Notes(serde_json::from_value(v)?),
            Method::McpServers => Reply::McpServers(serde_json::from_value(v)?),
            Method::Feeds => Reply::Feeds(serde_json::from_value(v)?),
            Method::FeedsRefresh => Reply::FeedsRefresh(serde_json::from_value(v)?),
            Method::McpLogin => Reply::McpLogin(serde_json::from_value(v)?),
            Method::McpLogout => Reply::McpLogout(serde_json::from_value(v)?),
            Method::McpAuth => Reply::McpAuth(serde_json::from_value(v)?),
            Method::WebEnroll => Reply::WebEnroll(serde_json::from_value(v)?),
            Method::Reload => Reply::Reload(serde_json::from_value(v)?),
            Method::Acts => Reply::Acts(serde_json::from_value(v)?),
        })
    }
}

/// A view is taken out of the [`Reply`] of its method; another reply gives itself back.
macro_rules! reply_view {
    ($($variant:ident => $view:ty),* $(,)?) => {$(
        impl TryFrom<Reply> for $view {
            type Error = Reply;
            fn try_from(r: Reply) -> Result<$view, Reply> {
                match r {
                    Reply::$variant(v) => Ok(v),
                    other => Err(other),
                }
            }
        }
    )*};
}

impl TryFrom<Reply> for StatusView {
    type Error = Reply;
    fn try_from(r: Reply) -> Result<StatusView, Reply> {
        match r {
            Reply::Status(v) => Ok(*v),
            other => Err(other),
        }
    }
}

reply_view! {
    Turn => TurnView,
    Tools => Vec<ToolView>,
    Notes => Vec<NoteView>,
    McpServers => Vec<ServerStatusView>,
    Feeds => Vec<FeedView>,
    FeedsRefresh => Vec<RefreshView>,
    McpLogin => OAuthLink,
    McpLogout => ForgottenView,
    McpAuth => AuthView,
    WebEnroll => EnrollLink,
    Reload => ReloadView,
    Acts => Vec<ActRecordView>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{INVALID_PARAMS, METHOD_NOT_FOUND};

    fn refused(method: &str, params: Value) -> (i64, String) {
        let e = Request::parse(method, &params).unwrap_err();
        (e.code, e.message)
    }

    #[test]
    fn every_request_reads_back_from_what_it_sends() {
        for r in [
            Request::Status,
            Request::Turn {
                text: "hi".into(),
                explain: false,
            },
            Request::Turn {
                text: "hi".into(),
                explain: true,
            },
            Request::SpokenTurn {
                text: "hi".into(),
                conversation: "c".into(),
            },
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
            Request::FeedsRefresh { name: None },
            Request::FeedsRefresh {
                name: Some("a".into()),
            },
            Request::McpLogout { name: "a".into() },
            Request::McpAuth { name: "a".into() },
            Request::McpLogin { name: "a".into() },
            Request::WebEnroll,
            Request::Reload,
            Request::Acts { limit: 3 },
            Request::Acts {
                limit: ACTS_DEFAULT,
            },
        ] {
            assert_eq!(Request::parse(r.method().name(), &r.params()).unwrap(), r);
        }
    }

    #[test]
    fn every_reply_reads_back_as_its_method_and_a_view_of_another_method_is_refused() {
        let turn = Reply::Turn(TurnView {
            answer: "hi".into(),
            explain: Some("no sentence template matched".into()),
            turn: turns::Answer::say("hi"),
        });
        let v = turn.to_value().unwrap();
        assert_eq!(v["answer"], "hi");
        assert_eq!(v["parts"][0]["kind"], "maven");
        let back = Reply::parse(Method::Turn, v.clone()).unwrap();
        assert_eq!(back.to_value().unwrap(), v);
        let t: TurnView = back.try_into().unwrap();
        assert!(t.turn.ok);
        // The same JSON read as another method's reply is refused, not guessed.
        assert!(Reply::parse(Method::Tools, v.clone()).is_err());
        let other = Reply::Tools(Vec::new());
        let refused: Result<TurnView, Reply> = other.try_into();
        assert_eq!(refused.unwrap_err().method(), Method::Tools);
        for m in Method::ALL {
            assert_eq!(Method::of(m.name()), Some(m));
            assert_eq!(serde_json::to_value(m).unwrap(), m.name());
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
            (
                "acts",
                json!({"limit": 0}),
                "limit: expected an integer from 1 to 1000, got 0",
            ),
            (
                "acts",
                json!({"limit": 1001}),
                "limit: expected an integer from 1 to 1000, got 1001",
            ),
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
