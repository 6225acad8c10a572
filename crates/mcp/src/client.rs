//! The MCP client (M-5, M-6): handshake, listings, calls, deadlines.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::watch;

use crate::error::{CloseReason, Error, Incomplete};
use crate::handshake::{self, ServerInfo};
use crate::rpc::{self, Core, Stats};
use crate::tools::{reduce_content, Tool, ToolOutcome};
use crate::{ClientOptions, ServerConfig, Transport};

/// A complete listing of a server's tools.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolList {
    /// The tools, in the server's order.
    pub tools: Vec<Tool>,
    /// How many pages it took.
    pub pages: usize,
    /// Entries skipped because they were not objects with a string `name`.
    pub skipped: usize,
}

impl ToolList {
    /// A one-page listing of these tools (for reports and tests built without a server).
    pub fn from_tools(tools: Vec<Tool>) -> ToolList {
        ToolList {
            tools,
            pages: 1,
            skipped: 0,
        }
    }
}

enum Link {
    Stdio(crate::stdio::StdioLink),
    Http(Arc<crate::http::HttpLink>),
}

/// A connection to one MCP server: a handle whose methods take `&self` and may run
/// concurrently (share it in an `Arc`). Each client owns its own process or HTTP session, its
/// own pending table and counters; nothing is shared between clients, so a manager can hold
/// many and one misbehaving server cannot affect another.
///
/// Drop behaviour: dropping the client cancels its tasks; a stdio server then goes through
/// the shutdown sequence on the runtime (stdin closed, SIGTERM, SIGKILL to its group, reaped).
/// Prefer [`Client::close`], which waits for that to finish.
///
/// Cancel safety: every method may be dropped at any await point. A dropped request leaves no
/// entry in the pending table (its late answer is ignored, not counted as a violation) and
/// never a half-written frame (stdio frames are queued whole). Only a request that runs past
/// its *own* deadline sends `notifications/cancelled` and drops the connection (M-6).
pub struct Client {
    core: Arc<Core>,
    link: Link,
    info: ServerInfo,
    config: ServerConfig,
    options: ClientOptions,
    listener: std::sync::Mutex<Option<tokio_util::task::AbortOnDropHandle<()>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.config.name)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Dial the server and run the handshake (initialize + notifications/initialized) within
    /// `config.timeouts.init`.
    pub async fn connect(config: &ServerConfig, options: ClientOptions) -> Result<Client, Error> {
        Client::dial(config, options).await.map_err(|(e, _)| e)
    }

    /// [`Client::connect`], also giving back, when the dial fails after the server started,
    /// the tail of its stderr (a stdio server that exits during the handshake says why there:
    /// "missing API_KEY").
    pub async fn dial(
        config: &ServerConfig,
        options: ClientOptions,
    ) -> Result<Client, (Error, Option<String>)> {
        let core = Arc::new(Core::new(&options.limits, options.handler.clone()));
        let link = match &config.transport {
            Transport::Stdio { command, args, env } => Link::Stdio(
                crate::stdio::StdioLink::spawn(command, args, env, &options.limits, core.clone())
                    .await
                    .map_err(|e| (e, None))?,
            ),
            Transport::Http { url, headers, door } => Link::Http(Arc::new(
                crate::http::HttpLink::new(url, headers, door, &options).map_err(|e| (e, None))?,
            )),
        };
        let mut client = Client {
            core,
            link,
            info: ServerInfo {
                protocol_version: String::new(),
                name: String::new(),
                version: String::new(),
                capabilities: Value::Null,
                instructions: None,
            },
            config: config.clone(),
            options,
            listener: std::sync::Mutex::new(None),
        };
        match client.handshake().await {
            Ok(info) => {
                client.info = info;
                Ok(client)
            }
            Err(e) => {
                client.core.close(CloseReason::HandshakeFailed);
                client.close().await;
                Err((e, client.stderr_tail()))
            }
        }
    }

    async fn handshake(&self) -> Result<ServerInfo, Error> {
        let params = handshake::initialize_params(&self.options);
        let timeout = self.config.timeouts.init;
        let raw = self
            .request_raw("initialize", Some(&params), timeout)
            .await?;
        let info = handshake::parse_initialize(&raw)?;
        if let Link::Http(h) = &self.link {
            h.set_protocol_version(&info.protocol_version);
        }
        self.notify("notifications/initialized", None).await?;
        if let (Link::Http(h), true) = (&self.link, self.options.standalone_stream) {
            let task = h.open_standalone(self.core.clone(), timeout).await?;
            if let Ok(mut slot) = self.listener.lock() {
                *slot = task.map(tokio_util::task::AbortOnDropHandle::new);
            }
        }
        Ok(info)
    }

    /// What the handshake established.
    pub fn server_info(&self) -> &ServerInfo {
        &self.info
    }

    /// The configuration this client was dialled with.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The connection's counters (violations, garbage lines, rate-limited frames, …).
    pub fn stats(&self) -> Stats {
        self.core.stats()
    }

    /// A signal that changes each time the server sends `notifications/tools/list_changed`.
    pub fn list_changed(&self) -> watch::Receiver<u64> {
        self.core.list_changed()
    }

    /// The last log messages (`notifications/message`) the server sent, capped.
    pub fn log_messages(&self) -> Vec<String> {
        self.core.logs()
    }

    /// The tail of the server's stderr (stdio only), never parsed.
    pub fn stderr_tail(&self) -> Option<String> {
        match &self.link {
            Link::Stdio(s) => Some(s.stderr.tail()),
            Link::Http(_) => None,
        }
    }

    /// The server process's id (stdio only).
    pub fn pid(&self) -> Option<u32> {
        match &self.link {
            Link::Stdio(s) => s.pid,
            Link::Http(_) => None,
        }
    }

    /// "stdio" or "http".
    pub fn transport_name(&self) -> &'static str {
        match &self.link {
            Link::Stdio(_) => "stdio",
            Link::Http(_) => "http",
        }
    }

    /// Why the connection is closed, or `None` while it is usable. A closed client never
    /// recovers: dial a new one.
    pub fn closed(&self) -> Option<CloseReason> {
        self.core.close_reason()
    }

    /// Close the connection and wait until it is gone: stdio closes stdin, waits, signals the
    /// group and reaps the child; HTTP sends DELETE for its session.
    pub async fn close(&self) {
        self.core.close(CloseReason::ClosedByClient);
        if let Ok(mut slot) = self.listener.lock() {
            slot.take();
        }
        match &self.link {
            Link::Stdio(s) => s.close().await,
            Link::Http(h) => h.close().await,
        }
    }

    fn drop_connection(&self, reason: CloseReason) {
        self.core.close(reason);
        match &self.link {
            Link::Stdio(s) => s.shutdown(),
            Link::Http(h) => h.abandon(),
        }
    }

    /// Send a notification.
    pub async fn notify(&self, method: &str, params: Option<&Value>) -> Result<(), Error> {
        let frame = rpc::encode(None, method, params);
        match &self.link {
            Link::Stdio(s) => s.send(frame, &self.core),
            Link::Http(h) => tokio::time::timeout(
                self.config.timeouts.init,
                h.post_message(&frame, &self.core, self.config.timeouts.init),
            )
            .await
            .map_err(|_| Error::Timeout {
                method: method.to_owned(),
                after: self.config.timeouts.init,
            })?,
        }
    }

    /// Send any request and return its raw `result`, under `timeout`. On expiry the request is
    /// cancelled (`notifications/cancelled`) and the connection dropped.
    pub async fn request(
        &self,
        method: &str,
        params: Option<&Value>,
        timeout: Duration,
    ) -> Result<Box<RawValue>, Error> {
        self.request_raw(method, params, timeout).await
    }

    async fn request_raw<P: serde::Serialize>(
        &self,
        method: &str,
        params: Option<&P>,
        timeout: Duration,
    ) -> Result<Box<RawValue>, Error> {
        self.request_frame(method, |id| rpc::encode(Some(id), method, params), timeout)
            .await
    }

    /// Send the request that `encode` writes for the id it is given, and wait for its raw
    /// `result` under `timeout`.
    async fn request_frame(
        &self,
        method: &str,
        encode: impl FnOnce(u64) -> Vec<u8>,
        timeout: Duration,
    ) -> Result<Box<RawValue>, Error> {
        let mut ticket = self.core.register()?;
        let id = ticket.id;
        let frame = encode(id);
        let Some(rx) = ticket.rx.take() else {
            // register() always fills rx.
            return Err(Error::Closed(CloseReason::ServerGone));
        };
        let exchange = async {
            match &self.link {
                Link::Stdio(s) => s.send(frame, &self.core)?,
                Link::Http(h) => {
                    h.exchange(frame, id, method, &self.core, &self.options, timeout)
                        .await?
                }
            }
            match rx.await {
                Ok(r) => r,
                Err(_) => Err(Error::Closed(
                    self.core.close_reason().unwrap_or(CloseReason::ServerGone),
                )),
            }
        };
        let outcome = match tokio::time::timeout(timeout, exchange).await {
            // A webfetch deadline (response headers, body) is this request's deadline too.
            Ok(Err(Error::Http(e))) if e.is_timeout() => None,
            Ok(r) => Some(r),
            Err(_) => None,
        };
        match outcome {
            Some(r) => {
                ticket.disarm();
                r
            }
            None => {
                // Forget first, so an answer racing with the notice is a late answer.
                drop(ticket);
                if method != "initialize" {
                    let params = serde_json::json!({
                        "requestId": id,
                        "reason": "deadline exceeded",
                    });
                    let notice = rpc::encode(None, "notifications/cancelled", Some(&params));
                    match &self.link {
                        Link::Stdio(s) => {
                            let _ = s.send(notice, &self.core);
                        }
                        Link::Http(h) => h.send_notice_briefly(notice, &self.core).await,
                    }
                }
                self.drop_connection(CloseReason::RequestTimedOut {
                    method: method.to_owned(),
                });
                Err(Error::Timeout {
                    method: method.to_owned(),
                    after: timeout,
                })
            }
        }
    }

    /// `ping`, under the list deadline.
    pub async fn ping(&self) -> Result<(), Error> {
        self.request_raw::<Value>("ping", None, self.config.timeouts.list)
            .await
            .map(|_| ())
    }

    /// Every page of `tools/list`: at most [`crate::Limits::page_cap`] pages, no repeated
    /// cursor, each page under `timeouts.list`. Anything short of a complete listing is an
    /// error.
    pub async fn list_tools(&self) -> Result<ToolList, Error> {
        let mut tools: Vec<Tool> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        let mut skipped = 0usize;
        let pages = self
            .paginate("tools/list", "tools", |entry| {
                match Tool::from_value(entry) {
                    Some(t) => {
                        if !names.insert(t.name.clone()) {
                            return Err(Incomplete::DuplicateName { name: t.name });
                        }
                        tools.push(t);
                    }
                    None => skipped += 1,
                }
                Ok(())
            })
            .await?;
        Ok(ToolList {
            tools,
            pages,
            skipped,
        })
    }

    /// Every page of `resources/list`, with the same bounds as [`Client::list_tools`]; each
    /// resource kept as the raw JSON object received.
    pub async fn list_resources(&self) -> Result<Vec<Map<String, Value>>, Error> {
        let mut out = Vec::new();
        self.paginate("resources/list", "resources", |entry| {
            if let Value::Object(m) = entry {
                out.push(m);
            }
            Ok(())
        })
        .await?;
        Ok(out)
    }

    async fn paginate(
        &self,
        method: &'static str,
        key: &str,
        mut each: impl FnMut(Value) -> Result<(), Incomplete>,
    ) -> Result<usize, Error> {
        let limits = &self.options.limits;
        let mut seen: HashSet<String> = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut entries = 0usize;
        let incomplete = |reason| Error::Incomplete {
            method: method.to_owned(),
            reason,
        };
        for page in 1..=limits.page_cap {
            let params = cursor.as_ref().map(|c| serde_json::json!({"cursor": c}));
            let raw = self
                .request_raw(method, params.as_ref(), self.config.timeouts.list)
                .await?;
            let mut obj = match serde_json::from_str::<Value>(raw.get()) {
                Ok(Value::Object(o)) => o,
                _ => {
                    return Err(Error::BadResult {
                        method: method.to_owned(),
                        reason: "the result is not an object".to_owned(),
                    })
                }
            };
            let Some(Value::Array(items)) = obj.remove(key) else {
                return Err(Error::BadResult {
                    method: method.to_owned(),
                    reason: format!("no `{key}` array"),
                });
            };
            entries += items.len();
            if entries > limits.max_list_entries {
                return Err(incomplete(Incomplete::TooManyEntries {
                    cap: limits.max_list_entries,
                }));
            }
            for item in items {
                each(item).map_err(incomplete)?;
            }
            match obj.remove("nextCursor") {
                None | Some(Value::Null) => return Ok(page),
                Some(Value::String(c)) => {
                    if !seen.insert(c.clone()) {
                        return Err(incomplete(Incomplete::RepeatedCursor));
                    }
                    cursor = Some(c);
                }
                Some(_) => {
                    return Err(Error::BadResult {
                        method: method.to_owned(),
                        reason: "nextCursor is not a string".to_owned(),
                    })
                }
            }
        }
        Err(incomplete(Incomplete::PageCap {
            cap: limits.page_cap,
        }))
    }

    /// `tools/call` under `timeouts.call`; the result reduced to text (text blocks kept, other
    /// blocks summarised by type) and capped at [`crate::Limits::result_text_cap`] bytes.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<ToolOutcome, Error> {
        let raw = self
            .request_frame(
                "tools/call",
                |id| rpc::encode_tool_call(id, name, &arguments),
                self.config.timeouts.call,
            )
            .await?;
        ToolOutcome::from_result(&raw, self.options.limits.result_text_cap).map_err(|reason| {
            Error::BadResult {
                method: "tools/call".to_owned(),
                reason,
            }
        })
    }

    /// `resources/read` under `timeouts.call`; the contents reduced to capped text.
    pub async fn read_resource(&self, uri: &str) -> Result<String, Error> {
        let params = serde_json::json!({"uri": uri});
        let raw = self
            .request_raw("resources/read", Some(&params), self.config.timeouts.call)
            .await?;
        let bad = |reason: &str| Error::BadResult {
            method: "resources/read".to_owned(),
            reason: reason.to_owned(),
        };
        let v: Value = serde_json::from_str(raw.get()).map_err(|_| bad("not JSON"))?;
        let Some(Value::Array(contents)) = v.get("contents") else {
            return Err(bad("no `contents` array"));
        };
        Ok(reduce_content(contents, self.options.limits.result_text_cap).0)
    }
}
