//! The MCP client (M-5, M-6): era selection and the opening exchange, listings, calls
//! (multi round-trip requests included), deadlines.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use backoff::Backoff;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::watch;

use crate::era::{self, Era, Protocol, MODERN_VERSION};
use crate::error::{CloseReason, Error, Incomplete};
use crate::handshake::{self, ServerInfo};
use crate::headers::{self, HeaderParam};
use crate::held;
use crate::http::Mirror;
use crate::input::{self, CallStep, InputNeeded};
use crate::link::{Link, Replier};
use crate::rpc::{self, Core, Stats};
use crate::tools::{reduce_content, Tool, ToolOutcome};
use crate::{ClientOptions, ServerConfig};

use crate::held::OWNER_WINDOW;
/// Held legacy questions of one call at a time (more are declined).
const HELD_ASKS: usize = 4;

/// Shortest re-listing interval a server's `ttlMs` can ask for.
pub const MIN_TTL: Duration = Duration::from_secs(60);

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
    /// Tools left out because their definition cannot be used as sent (invalid `x-mcp-header`
    /// declarations): the name and why.
    pub rejected: Vec<(String, String)>,
    /// The server's freshness hint (`ttlMs` of the first page), as sent.
    pub ttl: Option<Duration>,
}

impl ToolList {
    /// A one-page listing of these tools (for reports and tests built without a server).
    pub fn from_tools(tools: Vec<Tool>) -> ToolList {
        ToolList {
            tools,
            pages: 1,
            skipped: 0,
            rejected: Vec::new(),
            ttl: None,
        }
    }

    /// When to list again: the server's `ttlMs` clamped to [[`MIN_TTL`], `refresh`], or
    /// `refresh` without one.
    pub fn next_listing(&self, refresh: Duration) -> Duration {
        match self.ttl {
            Some(t) => t.clamp(MIN_TTL.min(refresh), refresh),
            None => refresh,
        }
    }
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
    /// The `"_meta":{…}` member of every request, in the modern era.
    meta: Option<Arc<[u8]>>,
    /// The valid `x-mcp-header` declarations of the last listing, by tool (modern HTTP).
    header_params: std::sync::Mutex<HashMap<String, Vec<HeaderParam>>>,
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
    /// Dial the server and open the connection within `config.timeouts.init` per exchange: the
    /// era the configuration pins, or (`auto`) `server/discover` first and the `initialize`
    /// handshake when the server does not speak the modern era.
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
        let link = Link::dial(&config.transport, &options, core.clone())
            .await
            .map_err(|e| (e, None))?;
        let mut client = Client {
            core,
            link,
            info: ServerInfo::new("", "", ""),
            config: config.clone(),
            options,
            listener: std::sync::Mutex::new(None),
            meta: None,
            header_params: std::sync::Mutex::new(HashMap::new()),
        };
        match client.open().await {
            Ok(info) => {
                client.info = info;
                if client.info.era == Era::Modern && client.info.tools_list_changed() {
                    client.listen_for_changes();
                }
                Ok(client)
            }
            Err(e) => {
                client.core.close(CloseReason::HandshakeFailed);
                client.close().await;
                Err((e, client.stderr_tail()))
            }
        }
    }

    fn set_era(&mut self, era: Era) {
        self.meta = match era {
            Era::Modern => Some(
                era::meta_member(
                    &era::modern_capabilities(
                        &self.options.capabilities,
                        self.options.owner_elicitation,
                    ),
                    &self.options.client_name,
                    &self.options.client_version,
                    MODERN_VERSION,
                )
                .into(),
            ),
            Era::Legacy => None,
        };
        self.link.set_modern(era == Era::Modern);
    }

    async fn open(&mut self) -> Result<ServerInfo, Error> {
        match self.config.protocol {
            Protocol::Legacy => {
                self.initialize("pinned to 2025-11-25 by the configuration".to_owned())
                    .await
            }
            Protocol::Modern => self.discover(true).await,
            Protocol::Auto => self.discover(false).await,
        }
    }

    /// `server/discover` (modern era). With `pinned`, anything but a modern answer is an
    /// error; otherwise a server that does not answer it as a modern server gets `initialize`.
    /// `UnsupportedProtocolVersion` listing 2026-07-28 gets one retry, never a second.
    async fn discover(&mut self, pinned: bool) -> Result<ServerInfo, Error> {
        self.set_era(Era::Modern);
        let timeout = self.config.timeouts.init;
        let mut retried = false;
        let reason = loop {
            let outcome = self.probe("server/discover", timeout).await;
            match outcome {
                Ok(raw) => {
                    let Some(mut info) = handshake::parse_discover(&raw) else {
                        break "the server/discover answer is not a discover result".to_owned();
                    };
                    if info.supported.iter().any(|v| v == MODERN_VERSION) {
                        info.protocol_version = MODERN_VERSION.to_owned();
                        info.chosen = if pinned {
                            "pinned to 2026-07-28 by the configuration".to_owned()
                        } else {
                            "server/discover lists 2026-07-28".to_owned()
                        };
                        return Ok(info);
                    }
                    return self.legacy_or_none(pinned, info.supported).await;
                }
                Err(Error::UnsupportedVersion { supported, .. }) => {
                    if !supported.iter().any(|v| v == MODERN_VERSION) {
                        return self.legacy_or_none(pinned, supported).await;
                    }
                    if retried {
                        return Err(Error::EraRefused {
                            pinned: MODERN_VERSION.to_owned(),
                            reason: "the server refused 2026-07-28 again although it lists it"
                                .to_owned(),
                        });
                    }
                    retried = true;
                }
                // A modern server that refuses this request for another reason.
                Err(e) if e.rpc_code().is_some_and(era::is_modern_error) => return Err(e),
                // A 401 or 403 is the authorization's answer, not the era's: falling back to
                // `initialize` would only be refused again (and run discovery twice).
                Err(
                    e
                    @ (Error::Closed(_) | Error::Spawn { .. } | Error::Config(_) | Error::Auth(_)),
                ) => return Err(e),
                Err(e) if e.is_refused() => return Err(e),
                Err(e) => break format!("server/discover: {e}"),
            }
        };
        if pinned {
            return Err(Error::EraRefused {
                pinned: MODERN_VERSION.to_owned(),
                reason,
            });
        }
        self.set_era(Era::Legacy);
        self.initialize(format!("fell back to initialize ({reason})"))
            .await
    }

    /// A modern server that lists no modern version this client speaks: `initialize` when it
    /// lists a legacy one (and the era is not pinned), else no version in common.
    async fn legacy_or_none(
        &mut self,
        pinned: bool,
        theirs: Vec<String>,
    ) -> Result<ServerInfo, Error> {
        let legacy = era::SUPPORTED_PROTOCOL_VERSIONS;
        if !pinned && era::pick(&legacy, &theirs).is_some() {
            self.set_era(Era::Legacy);
            return self
                .initialize(format!("server/discover lists only {theirs:?}: initialize"))
                .await;
        }
        let ours = if pinned {
            vec![MODERN_VERSION.to_owned()]
        } else {
            era::all_versions()
                .iter()
                .map(|v| (*v).to_owned())
                .collect()
        };
        Err(Error::NoCommonVersion { ours, theirs })
    }

    /// One opening request whose deadline does not drop the connection (a legacy server may
    /// simply not answer an unknown method).
    async fn probe(&self, method: &str, timeout: Duration) -> Result<Box<RawValue>, Error> {
        let mut ticket = self.core.register()?;
        let id = ticket.id;
        let meta = self.meta.clone();
        let frame = rpc::encode_with_meta::<Value>(Some(id), method, None, meta.as_deref());
        let Some(rx) = ticket.rx.take() else {
            return Err(Error::Closed(CloseReason::ServerGone));
        };
        let mirror = Mirror::none();
        let exchange = self.send_and_wait(frame, id, method, rx, timeout, &mirror);
        tokio::pin!(exchange);
        match tokio::time::timeout(timeout, &mut exchange).await {
            Ok(r) => {
                ticket.disarm();
                r
            }
            Err(_) => Err(self.deadline_passed(method, timeout)),
        }
    }

    async fn initialize(&self, chosen: String) -> Result<ServerInfo, Error> {
        let params = handshake::initialize_params(&self.options);
        let timeout = self.config.timeouts.init;
        let raw = self
            .request_raw("initialize", Some(&params), timeout)
            .await?;
        let mut info = handshake::parse_initialize(&raw)?;
        info.chosen = chosen;
        if self.options.owner_elicitation {
            self.core.declines_elicitation();
        }
        self.link.set_protocol_version(&info.protocol_version);
        self.notify("notifications/initialized", None).await?;
        if self.options.standalone_stream {
            let task = self
                .link
                .open_standalone(self.core.clone(), timeout)
                .await?;
            if let Ok(mut slot) = self.listener.lock() {
                *slot = task.map(tokio_util::task::AbortOnDropHandle::new);
            }
        }
        Ok(info)
    }

    /// Modern era, for a server that declares `tools.listChanged`: one `subscriptions/listen`
    /// stream opted into `toolsListChanged` only, re-opened with a jittered backoff when it
    /// ends (1 s doubling to 60 s, reset by a stream that lived longer than that). Its
    /// notifications reach [`Client::list_changed`] through the connection's inbound rate
    /// limit, and each of its frames is bounded by the frame cap.
    fn listen_for_changes(&self) {
        let core = self.core.clone();
        let meta = self.meta.clone();
        let link = self.link.replier();
        let options = self.options.clone();
        let task = tokio::spawn(async move {
            let mut backoff = Backoff::new(LISTEN_BACKOFF_MIN, LISTEN_BACKOFF_MAX);
            loop {
                let started = tokio::time::Instant::now();
                if listen_once(&link, &core, meta.as_deref(), &options)
                    .await
                    .is_err()
                    && core.close_reason().is_some()
                {
                    return;
                }
                if started.elapsed() > LISTEN_BACKOFF_MAX {
                    backoff.reset();
                }
                tokio::time::sleep(backoff.fail()).await;
            }
        });
        if let Ok(mut slot) = self.listener.lock() {
            *slot = Some(tokio_util::task::AbortOnDropHandle::new(task));
        }
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
        self.link.stderr_tail()
    }

    /// The server process's id (stdio only).
    pub fn pid(&self) -> Option<u32> {
        self.link.pid()
    }

    /// "stdio" or "http".
    pub fn transport_name(&self) -> &'static str {
        self.link.name()
    }

    /// Why the connection is closed, or `None` while it is usable. A closed client never
    /// recovers: dial a new one.
    pub fn closed(&self) -> Option<CloseReason> {
        self.core.close_reason()
    }

    /// Resolves once the connection is closed (a stdio server that exited: once it is reaped,
    /// so [`Client::closed`] then says how it ended). Cancel safe.
    pub async fn wait_closed(&self) {
        let mut rx = self.core.closed_signal();
        let _ = rx.wait_for(|closed| *closed).await;
    }

    /// Close the connection and wait until it is gone: stdio closes stdin, waits, signals the
    /// group and reaps the child; HTTP sends DELETE for its session.
    pub async fn close(&self) {
        self.core.close(CloseReason::ClosedByClient);
        if let Ok(mut slot) = self.listener.lock() {
            slot.take();
        }
        self.link.close().await;
    }

    fn drop_connection(&self, reason: CloseReason) {
        self.core.close(reason);
        self.link.abandon();
    }

    /// The era this connection speaks.
    pub fn era(&self) -> Era {
        self.info.era
    }

    /// Send a notification.
    pub async fn notify(&self, method: &str, params: Option<&Value>) -> Result<(), Error> {
        let frame = rpc::encode(None, method, params);
        self.link
            .notify(frame, &self.core, self.config.timeouts.init, method)
            .await
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
        let meta = self.meta.as_deref();
        let mirror = Mirror::none();
        self.request_frame(
            method,
            |id| rpc::encode_with_meta(Some(id), method, params, meta),
            timeout,
            &mirror,
        )
        .await
    }

    /// Send the request that `encode` writes for the id it is given, and wait for its raw
    /// `result` under `timeout`. `mirror` is what the modern HTTP transport mirrors into
    /// headers.
    async fn request_frame(
        &self,
        method: &str,
        encode: impl FnOnce(u64) -> Vec<u8>,
        timeout: Duration,
        mirror: &Mirror,
    ) -> Result<Box<RawValue>, Error> {
        self.request_frame_paused(method, encode, timeout, mirror, None)
            .await
    }

    /// [`Client::request_frame`] whose deadline `grace` may stop while the owner is asked
    /// (the transport's own deadlines then allow for [`OWNER_WINDOW`] more).
    async fn request_frame_paused(
        &self,
        method: &str,
        encode: impl FnOnce(u64) -> Vec<u8>,
        timeout: Duration,
        mirror: &Mirror,
        grace: Option<&held::Grace>,
    ) -> Result<Box<RawValue>, Error> {
        let transport_timeout = match grace {
            Some(_) => timeout.saturating_add(OWNER_WINDOW),
            None => timeout,
        };
        let mut ticket = self.core.register()?;
        let id = ticket.id;
        let frame = encode(id);
        let Some(rx) = ticket.rx.take() else {
            // register() always fills rx.
            return Err(Error::Closed(CloseReason::ServerGone));
        };
        let exchange = self.send_and_wait(frame, id, method, rx, transport_timeout, mirror);
        tokio::pin!(exchange);
        let mut until = tokio::time::Instant::now() + timeout;
        let finished = loop {
            tokio::select! {
                r = &mut exchange => break Some(r),
                _ = tokio::time::sleep_until(until) => {
                    match grace.and_then(held::Grace::extend) {
                        Some(later) => until = later,
                        None => break None,
                    }
                }
            }
        };
        let outcome = match finished {
            // A webfetch deadline (response headers, body) is this request's deadline too.
            Some(Err(Error::Http(e))) if e.is_timeout() => None,
            Some(r) => Some(r),
            None => None,
        };
        match outcome {
            Some(r) => {
                ticket.disarm();
                r
            }
            None => {
                // Asked while the exchange is still alive: a request of the authorization
                // flow it was waiting on is still recorded.
                let e = self.deadline_passed(method, timeout);
                // Forget first, so an answer racing with the notice is a late answer.
                drop(ticket);
                // Modern HTTP: the dropped exchange closed the stream, which is the cancellation.
                let modern_http = self.meta.is_some() && self.link.exchange_per_request();
                if method != "initialize" && !modern_http {
                    let params = serde_json::json!({
                        "requestId": id,
                        "reason": "deadline exceeded",
                    });
                    let notice = rpc::encode(None, "notifications/cancelled", Some(&params));
                    self.link.send_cancel_notice(notice, &self.core).await;
                }
                self.drop_connection(CloseReason::RequestTimedOut {
                    method: method.to_owned(),
                });
                Err(e)
            }
        }
    }

    /// The error of a request whose deadline passed (its exchange not dropped yet). For the
    /// opening requests (`initialize`, `server/discover`), inside which a first authorization
    /// runs (discovery, registration, a grant): the request of that flow they were waiting on,
    /// named with its URL, when there is one. Else, and for every other request (which may
    /// have reached the server while another ran the flow), the request's own deadline.
    fn deadline_passed(&self, method: &str, timeout: Duration) -> Error {
        let opening = matches!(method, "initialize" | "server/discover");
        match self.link.oauth_stalled().filter(|_| opening) {
            Some(e) => Error::Auth(e),
            None => Error::Timeout {
                method: method.to_owned(),
                after: timeout,
            },
        }
    }

    /// Send request `id` (its `frame`) and wait for its reply, with no deadline of its own
    /// (the caller's future bounds it; `transport_timeout` is the HTTP exchange's backstop).
    async fn send_and_wait(
        &self,
        frame: Vec<u8>,
        id: u64,
        method: &str,
        rx: tokio::sync::oneshot::Receiver<rpc::Reply>,
        transport_timeout: Duration,
        mirror: &Mirror,
    ) -> Result<Box<RawValue>, Error> {
        self.link
            .send_request(
                frame,
                id,
                method,
                &self.core,
                &self.options,
                transport_timeout,
                mirror,
            )
            .await?;
        match rx.await {
            Ok(r) => r,
            Err(_) => Err(Error::Closed(
                self.core.close_reason().unwrap_or(CloseReason::ServerGone),
            )),
        }
    }

    /// The health check, under the list deadline: `ping` in the legacy era; the modern era has
    /// no `ping`, so `server/discover` (cheap, side-effect free, and it must still list
    /// 2026-07-28).
    pub async fn ping(&self) -> Result<(), Error> {
        if self.info.era == Era::Legacy {
            return self
                .request_raw::<Value>("ping", None, self.config.timeouts.list)
                .await
                .map(|_| ());
        }
        let raw = self
            .request_raw::<Value>("server/discover", None, self.config.timeouts.list)
            .await?;
        match handshake::parse_discover(&raw) {
            Some(info) if info.supported.iter().any(|v| v == MODERN_VERSION) => Ok(()),
            _ => Err(Error::BadResult {
                method: "server/discover".to_owned(),
                reason: "no longer a discover result listing 2026-07-28".to_owned(),
            }),
        }
    }

    /// Every page of `tools/list`: at most [`crate::Limits::page_cap`] pages, no repeated
    /// cursor, each page under `timeouts.list`. Anything short of a complete listing is an
    /// error.
    ///
    /// Over modern HTTP, a tool whose `x-mcp-header` declarations are invalid is left out
    /// (in [`ToolList::rejected`], with the reason); the valid declarations are kept for the
    /// `Mcp-Param-*` headers of its calls.
    pub async fn list_tools(&self) -> Result<ToolList, Error> {
        let mut tools: Vec<Tool> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        let mut skipped = 0usize;
        let mut rejected = Vec::new();
        let mut params = HashMap::new();
        let mirrors = self.mirrors_headers();
        let (pages, ttl) = self
            .paginate("tools/list", "tools", |entry| {
                match Tool::from_value(entry) {
                    Some(t) => {
                        if !names.insert(t.name.clone()) {
                            return Err(Incomplete::DuplicateName { name: t.name });
                        }
                        if mirrors {
                            let schema = t.raw.get("inputSchema").unwrap_or(&Value::Null);
                            match headers::declarations(schema) {
                                Ok(d) if d.is_empty() => {}
                                Ok(d) => {
                                    params.insert(t.name.clone(), d);
                                }
                                Err(reason) => {
                                    tracing::warn!(server = %self.config.name, tool = %crate::text::cap_chars(&t.name, 128), %reason, "tool left out");
                                    rejected.push((t.name, reason));
                                    return Ok(());
                                }
                            }
                        }
                        tools.push(t);
                    }
                    None => skipped += 1,
                }
                Ok(())
            })
            .await?;
        if mirrors {
            if let Ok(mut m) = self.header_params.lock() {
                *m = params;
            }
        }
        Ok(ToolList {
            tools,
            pages,
            skipped,
            rejected,
            ttl,
        })
    }

    /// Whether requests mirror their parameters into HTTP headers (modern HTTP).
    fn mirrors_headers(&self) -> bool {
        self.info.era == Era::Modern && self.link.exchange_per_request()
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

    /// Every page of a listing; the page count and the first page's `ttlMs`.
    async fn paginate(
        &self,
        method: &'static str,
        key: &str,
        mut each: impl FnMut(Value) -> Result<(), Incomplete>,
    ) -> Result<(usize, Option<Duration>), Error> {
        let mut ttl = None;
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
            if page == 1 {
                ttl = obj
                    .get("ttlMs")
                    .and_then(Value::as_f64)
                    .filter(|t| t.is_finite() && *t >= 0.0)
                    .map(|t| Duration::from_millis(t.min(u64::MAX as f64) as u64));
            }
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
                None | Some(Value::Null) => return Ok((page, ttl)),
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

    /// `tools/call` under `timeouts.call` per round; the result reduced to text (text blocks
    /// kept, other blocks summarised by type) and capped at [`crate::Limits::result_text_cap`]
    /// bytes. In the modern era a server that asks for input gets Maven's own answers
    /// (sampling declined, no roots) and, for elicitations, the client's
    /// [`ServerRequestHandler`](crate::ServerRequestHandler) (declined without one); to bring
    /// an elicitation to the owner instead, use [`Client::start_call`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<ToolOutcome, Error> {
        let mut step = self.start_call(name, arguments).await?;
        loop {
            match step {
                CallStep::Done(outcome) => return Ok(outcome),
                CallStep::Input(needed) => {
                    let mut replies = Map::new();
                    for ask in &needed.asks {
                        // A secret is declined without being shown to anyone.
                        let shown = !matches!(ask.kind, input::AskKind::Secret { .. });
                        let answer = self
                            .options
                            .handler
                            .as_ref()
                            .filter(|_| shown)
                            .and_then(|h| h.handle("elicitation/create", &ask_params(ask)))
                            .and_then(Result::ok)
                            .unwrap_or_else(input::Ask::decline);
                        replies.insert(ask.key.clone(), answer);
                    }
                    #[expect(
                        clippy::disallowed_methods,
                        reason = "the client goes on with its own call, answered by its handler"
                    )]
                    let next = self.resume_call(needed, replies).await?;
                    step = next;
                }
            }
        }
    }

    /// The first round of `tools/call`: its result, or what the server asks the owner. The
    /// server's sampling and roots requests are answered by Maven; only elicitations wait.
    pub async fn start_call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallStep, Error> {
        self.call_round(name, &arguments, rpc::Retry::default(), 1, false, None)
            .await
    }

    /// [`Client::start_call`] for a call made for the owner: in the legacy era too, an
    /// `elicitation/create` the server sends while the call is in flight comes back as
    /// [`CallStep::Input`] (the request held, unanswered, the call going on in a task of its
    /// own, its deadline stopped while the question waits, for at most [`OWNER_WINDOW`]);
    /// [`Client::resume_call`] sends the owner's answer and waits on.
    pub async fn start_owner_call(
        self: &Arc<Self>,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallStep, Error> {
        if self.info.era == Era::Modern {
            return self.start_call(name, arguments).await;
        }
        let (tx, rx) = tokio::sync::mpsc::channel(HELD_ASKS);
        if !self.core.hold_asks(tx.clone()) {
            // Another call for the owner holds the questions: this one is headless.
            return self.start_call(name, arguments).await;
        }
        let client = self.clone();
        let (tool, args) = (name.to_owned(), arguments.clone());
        let grace = Arc::new(held::Grace::default());
        let task_grace = grace.clone();
        let task = tokio::spawn(async move {
            let r = client
                .call_round(
                    &tool,
                    &args,
                    rpc::Retry::default(),
                    1,
                    false,
                    Some(&task_grace),
                )
                .await;
            client.core.release_asks(&tx);
            match r? {
                CallStep::Done(outcome) => Ok(outcome),
                _ => Err(Error::BadResult {
                    method: "tools/call".to_owned(),
                    reason: "an input_required result on a legacy connection".to_owned(),
                }),
            }
        });
        let call = held::LegacyCall {
            task,
            asks: rx,
            answer_to: None,
            replier: self.link.replier(),
            core: self.core.clone(),
            grace,
        };
        self.await_legacy(name, &arguments, call, 1).await
    }

    /// Wait on a legacy call for the owner: its result, or its next held question.
    async fn await_legacy(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        mut call: held::LegacyCall,
        round: u32,
    ) -> Result<CallStep, Error> {
        loop {
            enum Next {
                Done(Result<Result<ToolOutcome, Error>, tokio::task::JoinError>),
                Ask(Option<crate::rpc::HeldAsk>),
            }
            let next = tokio::select! {
                r = &mut call.task => Next::Done(r),
                a = call.asks.recv() => Next::Ask(a),
            };
            match next {
                Next::Done(r) => {
                    call.answer_to = None;
                    let outcome = r.map_err(|_| Error::Closed(CloseReason::ServerGone))??;
                    return Ok(CallStep::Done(outcome));
                }
                // Every sender is gone: the call is finishing; wait for it.
                Next::Ask(None) => {
                    let r = (&mut call.task).await;
                    call.answer_to = None;
                    let outcome = r.map_err(|_| Error::Closed(CloseReason::ServerGone))??;
                    return Ok(CallStep::Done(outcome));
                }
                Next::Ask(Some(ask)) => {
                    call.grace.pause();
                    call.answer_to = Some(ask.id);
                    if round > input::MAX_ROUNDS {
                        // A server that asks without end: declined from here on.
                        call.answer(input::Ask::decline()).await;
                        continue;
                    }
                    let params = ask.params;
                    let tool = name.to_owned();
                    match input::legacy(&tool, arguments, &params, round, held::Held::new(call)) {
                        Ok(needed) => return Ok(CallStep::Input(needed)),
                        // The held call is dropped with the error: its question declined.
                        Err(reason) => {
                            return Err(Error::BadInputRequest {
                                method: "elicitation/create".to_owned(),
                                reason,
                            })
                        }
                    }
                }
            }
        }
    }

    /// The next round of a call that waited for input: the original request with a new id,
    /// Maven's own answers plus `replies` (the owner's, by [`input::Ask::key`]), and the
    /// server's `requestState` echoed as received. At most [`input::MAX_ROUNDS`] rounds.
    pub async fn resume_call(
        &self,
        needed: InputNeeded,
        replies: Map<String, Value>,
    ) -> Result<CallStep, Error> {
        if let Some(held) = &needed.held {
            // A legacy call in flight: answer its held question and wait on.
            let Some(mut call) = held.take() else {
                return Err(Error::BadInputRequest {
                    method: "tools/call".to_owned(),
                    reason: "this question was already answered".to_owned(),
                });
            };
            let answer = replies
                .get(input::LEGACY_KEY)
                .cloned()
                .unwrap_or_else(input::Ask::decline);
            call.answer(answer).await;
            return self
                .await_legacy(&needed.tool, &needed.arguments, call, needed.round + 1)
                .await;
        }
        if needed.round >= input::MAX_ROUNDS {
            return Err(Error::TooManyRounds {
                method: "tools/call".to_owned(),
                rounds: needed.round,
            });
        }
        let mut responses = needed.answers;
        responses.extend(replies);
        let retry = rpc::Retry {
            input_responses: Some(&responses),
            request_state: needed.request_state.as_deref(),
        };
        self.call_round(
            &needed.tool,
            &needed.arguments,
            retry,
            needed.round + 1,
            needed.only_sampling,
            None,
        )
        .await
    }

    async fn call_round(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        retry: rpc::Retry<'_>,
        round: u32,
        previous_only_sampling: bool,
        grace: Option<&held::Grace>,
    ) -> Result<CallStep, Error> {
        let mirror = self.call_mirror(name, arguments)?;
        let meta = self.meta.as_deref();
        let raw = self
            .request_frame_paused(
                "tools/call",
                |id| rpc::encode_tool_call_with(id, name, arguments, meta, retry),
                self.config.timeouts.call,
                &mirror,
                grace,
            )
            .await?;
        if self.info.era == Era::Modern {
            if let Some(obj) = input_required(&raw) {
                return input::read(name, arguments, &obj, round, previous_only_sampling)
                    .map(CallStep::Input)
                    .map_err(|reason| Error::BadInputRequest {
                        method: "tools/call".to_owned(),
                        reason,
                    });
            }
        }
        ToolOutcome::from_result(&raw, self.options.limits.result_text_cap)
            .map(CallStep::Done)
            .map_err(|reason| Error::BadResult {
                method: "tools/call".to_owned(),
                reason,
            })
    }

    /// The headers a modern HTTP `tools/call` carries: `Mcp-Name`, and `Mcp-Param-*` for the
    /// tool's declared parameters (from the last listing).
    fn call_mirror(&self, name: &str, arguments: &Map<String, Value>) -> Result<Mirror, Error> {
        if !self.mirrors_headers() {
            return Ok(Mirror::none());
        }
        let declared = self
            .header_params
            .lock()
            .map(|m| m.get(name).cloned())
            .unwrap_or_default();
        let params = match declared {
            Some(d) => {
                headers::param_headers(&d, arguments).map_err(|reason| Error::BadInputRequest {
                    method: "tools/call".to_owned(),
                    reason,
                })?
            }
            None => Vec::new(),
        };
        Ok(Mirror::of("tools/call", Some(name), params))
    }

    /// `resources/read` under `timeouts.call`; the contents reduced to capped text.
    pub async fn read_resource(&self, uri: &str) -> Result<String, Error> {
        let params = serde_json::json!({"uri": uri});
        let meta = self.meta.as_deref();
        let mirror = if self.mirrors_headers() {
            Mirror::of("resources/read", Some(uri), Vec::new())
        } else {
            Mirror::none()
        };
        let not_found = match self.info.era {
            Era::Modern => -32602,
            Era::Legacy => -32002,
        };
        let raw = self
            .request_frame(
                "resources/read",
                |id| rpc::encode_with_meta(Some(id), "resources/read", Some(&params), meta),
                self.config.timeouts.call,
                &mirror,
            )
            .await
            .map_err(|e| match e.rpc_code() {
                Some(c) if c == not_found => Error::ResourceNotFound {
                    uri: crate::text::cap_chars(uri, 256).to_owned(),
                },
                _ => e,
            })?;
        if self.info.era == Era::Modern && input_required(&raw).is_some() {
            return Err(Error::BadInputRequest {
                method: "resources/read".to_owned(),
                reason: "the server asks for input to read a resource, which Maven does not give"
                    .to_owned(),
            });
        }
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

/// The result object when its `resultType` is `input_required` (absent means complete).
fn input_required(raw: &RawValue) -> Option<Map<String, Value>> {
    // Cheap test first: most results are complete.
    if !raw.get().contains("input_required") {
        return None;
    }
    match serde_json::from_str::<Value>(raw.get()) {
        Ok(Value::Object(o))
            if o.get("resultType").and_then(Value::as_str) == Some("input_required") =>
        {
            Some(o)
        }
        _ => None,
    }
}

/// An elicitation as the legacy `elicitation/create` params, for a [`crate::ServerRequestHandler`].
fn ask_params(ask: &input::Ask) -> Value {
    match &ask.kind {
        input::AskKind::Url { url } => {
            serde_json::json!({"mode": "url", "message": ask.message, "url": url})
        }
        input::AskKind::Secret { field } => serde_json::json!({"message": ask.message,
            "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}}}}),
        input::AskKind::Form { fields } => {
            let props: Map<String, Value> = fields
                .iter()
                .map(|f| {
                    (
                        f.key.clone(),
                        serde_json::json!({"type": f.kind, "title": f.title}),
                    )
                })
                .collect();
            serde_json::json!({"message": ask.message, "requestedSchema": {"type": "object", "properties": props}})
        }
    }
}

const LISTEN_BACKOFF_MIN: Duration = Duration::from_secs(1);
const LISTEN_BACKOFF_MAX: Duration = Duration::from_secs(60);
/// Deadline of one `subscriptions/listen` stream; it is re-opened when it ends.
const LISTEN_DEADLINE: Duration = Duration::from_secs(600);

/// One `subscriptions/listen` stream, until it ends (the server answered it, the stream
/// closed, or its deadline passed).
async fn listen_once(
    link: &Replier,
    core: &Core,
    meta: Option<&[u8]>,
    options: &ClientOptions,
) -> Result<(), Error> {
    let mut ticket = core.register()?;
    let id = ticket.id;
    let params = serde_json::json!({"notifications": {"toolsListChanged": true}});
    let frame = rpc::encode_with_meta(Some(id), "subscriptions/listen", Some(&params), meta);
    let Some(rx) = ticket.rx.take() else {
        return Err(Error::Closed(CloseReason::ServerGone));
    };
    let run = async {
        link.send_request(
            frame,
            id,
            "subscriptions/listen",
            core,
            options,
            LISTEN_DEADLINE,
        )
        .await?;
        rx.await
            .map_err(|_| Error::Closed(core.close_reason().unwrap_or(CloseReason::ServerGone)))?
    };
    let r = tokio::time::timeout(LISTEN_DEADLINE, run).await;
    drop(ticket);
    match r {
        Ok(r) => r.map(|_| ()),
        Err(_) => {
            link.end_dropped(id, "re-opening", core);
            Ok(())
        }
    }
}

/// A connection that can list a server's tools and nothing else: what a command that only
/// looks (`maven mcp inspect`) holds. It has no way to call a tool, so holding one is never a
/// side door around the allowlist's executor.
#[derive(Debug)]
pub struct Lister(Client);

impl Lister {
    /// [`Client::dial`], keeping only what lists.
    pub async fn dial(
        config: &ServerConfig,
        options: ClientOptions,
    ) -> Result<Lister, (Error, Option<String>)> {
        Client::dial(config, options).await.map(Lister)
    }

    /// [`Client::list_tools`].
    pub async fn list_tools(&self) -> Result<ToolList, Error> {
        self.0.list_tools().await
    }

    /// [`Client::server_info`].
    pub fn server_info(&self) -> &ServerInfo {
        self.0.server_info()
    }

    /// [`Client::stats`].
    pub fn stats(&self) -> Stats {
        self.0.stats()
    }

    /// [`Client::stderr_tail`].
    pub fn stderr_tail(&self) -> Option<String> {
        self.0.stderr_tail()
    }

    /// [`Client::close`].
    pub async fn close(&self) {
        self.0.close().await
    }
}
