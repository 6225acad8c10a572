//! The Streamable HTTP transport (M-4), through a webfetch door of its own.
//!
//! Every client message is one POST (`Accept: application/json, text/event-stream`). The
//! answer is a JSON body or an SSE stream; every message in either goes through
//! [`Core::on_frame`], so server requests and notifications arriving mid-stream are handled
//! (their answers POSTed back) and do not end the wait, which ends when *this* request's
//! pending entry is answered. The session id from the initialize answer is echoed on every
//! later request, with `MCP-Protocol-Version`. A forgotten session (404, or the 400 "no valid
//! session" some servers send) costs one fresh initialize and one retry. Static headers go
//! only to the configured URL (webfetch drops them on a cross-origin redirect, and a door
//! with `allow_private` follows no redirect at all).
//!
//! Everything here runs inside the caller's future, under the caller's deadline: dropping it
//! drops the HTTP exchange; no lock is held across an await except the re-initialize mutex,
//! which is a tokio mutex meant for exactly that.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use webfetch::{header, HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode};

use crate::error::{CloseReason, Error};
use crate::handshake;
use crate::rpc::{self, Core, Inbound};
use crate::{ClientOptions, Limits};

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
/// Most bytes of an error body read to recognise "no valid session".
const ERROR_BODY_CAP: usize = 8 * 1024;
/// Default SSE reconnection delay when the server gave no `retry:`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Longest `retry:` honoured.
const MAX_RETRY: Duration = Duration::from_secs(30);
/// Total deadline of one standalone GET stream (it is resumed when it ends).
const STANDALONE_DEADLINE: Duration = Duration::from_secs(600);
/// Deadline of a held request's answer.
const ANSWER_DEADLINE: Duration = Duration::from_secs(10);
/// Deadline of the best-effort messages (cancellation notice, DELETE).
const NOTICE_DEADLINE: Duration = Duration::from_secs(2);

/// What a modern POST mirrors from its body into headers: `Mcp-Method`, `Mcp-Name` (a
/// tool or prompt name, or a resource URI) and `Mcp-Param-*`, values already encoded.
#[derive(Debug, Default)]
pub(crate) struct Mirror {
    method: String,
    name: Option<String>,
    params: Vec<(String, String)>,
}

impl Mirror {
    /// Nothing mirrored beyond `Mcp-Method` (which the link adds from the method itself).
    pub(crate) fn none() -> Mirror {
        Mirror::default()
    }

    pub(crate) fn of(method: &str, name: Option<&str>, params: Vec<(String, String)>) -> Mirror {
        Mirror {
            method: method.to_owned(),
            name: name.map(crate::headers::encode_value),
            params,
        }
    }

    fn apply(&self, method: &str, h: &mut HeaderMap) -> Result<(), Error> {
        let m = if self.method.is_empty() {
            method
        } else {
            &self.method
        };
        if !m.is_empty() {
            let v = HeaderValue::from_str(&crate::headers::encode_value(m))
                .map_err(|_| Error::Config(format!("method {m:?} cannot be a header value")))?;
            h.insert(HeaderName::from_static(METHOD_HEADER), v);
        }
        if let Some(n) = &self.name {
            let v = HeaderValue::from_str(n)
                .map_err(|_| Error::Config("Mcp-Name cannot be a header value".to_owned()))?;
            h.insert(HeaderName::from_static(NAME_HEADER), v);
        }
        for (k, v) in &self.params {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| Error::Config(format!("invalid header name {k:?}")))?;
            let value = HeaderValue::from_str(v)
                .map_err(|_| Error::Config(format!("invalid value for header {k:?}")))?;
            h.insert(name, value);
        }
        Ok(())
    }
}

/// The client's side of one Streamable HTTP session.
pub(crate) struct HttpLink {
    fetcher: webfetch::Fetcher,
    url: String,
    headers: HeaderMap,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
    reinit: tokio::sync::Mutex<()>,
    limits: Limits,
    abandoned: AtomicBool,
    /// Modern era: no session, the version header always 2026-07-28, request metadata
    /// mirrored into headers, and a JSON-RPC error in a 4xx body read as the answer.
    modern: AtomicBool,
    /// The server's OAuth authorization, if it has one.
    oauth: Option<std::sync::Arc<oauth::OAuth>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl HttpLink {
    pub(crate) fn new(
        url: &str,
        headers: &BTreeMap<String, String>,
        door: &webfetch::DoorConfig,
        options: &ClientOptions,
    ) -> Result<HttpLink, Error> {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| Error::Config(format!("invalid header name {k:?}")))?;
            let mut value = HeaderValue::from_str(v)
                .map_err(|_| Error::Config(format!("invalid value for header {k:?}")))?;
            value.set_sensitive(true);
            map.append(name, value);
        }
        let fetcher = match &options.http_fetcher {
            Some(f) => f.clone(),
            None => webfetch::Fetcher::new(door.clone()),
        };
        Ok(HttpLink {
            fetcher,
            url: url.to_owned(),
            headers: map,
            session: Mutex::new(None),
            version: Mutex::new(None),
            reinit: tokio::sync::Mutex::new(()),
            limits: options.limits.clone(),
            abandoned: AtomicBool::new(false),
            modern: AtomicBool::new(false),
            oauth: options.oauth.clone(),
        })
    }

    pub(crate) fn set_protocol_version(&self, v: &str) {
        *lock(&self.version) = HeaderValue::from_str(v).ok();
    }

    /// Switch eras (before any request of the new era is sent).
    pub(crate) fn set_modern(&self, modern: bool) {
        self.modern.store(modern, Ordering::Relaxed);
        if modern {
            self.set_protocol_version(crate::era::MODERN_VERSION);
            *lock(&self.session) = None;
        } else {
            *lock(&self.version) = None;
        }
    }

    pub(crate) fn oauth_stalled(&self) -> Option<oauth::AuthError> {
        self.oauth.as_ref().and_then(|o| o.stalled())
    }

    fn is_modern(&self) -> bool {
        self.modern.load(Ordering::Relaxed)
    }

    fn request(
        &self,
        method: Method,
        body: Bytes,
        timeout: Duration,
    ) -> (Request, Option<HeaderValue>) {
        // webfetch's total deadline is a backstop behind the caller's own.
        let backstop = timeout.saturating_add(Duration::from_secs(1));
        let mut req = Request::new(method, self.url.clone())
            .body(body)
            .timeout(backstop);
        let h = req.headers_mut();
        for (k, v) in &self.headers {
            h.append(k.clone(), v.clone());
        }
        h.insert(header::ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let session = if self.is_modern() {
            None
        } else {
            lock(&self.session).clone()
        };
        if let Some(s) = &session {
            h.insert(HeaderName::from_static(SESSION_HEADER), s.clone());
        }
        if let Some(v) = lock(&self.version).clone() {
            h.insert(HeaderName::from_static(VERSION_HEADER), v);
        }
        (req, session)
    }

    fn check_open(&self, core: &Core) -> Result<(), Error> {
        if self.abandoned.load(Ordering::Relaxed) {
            return Err(Error::Closed(
                core.close_reason().unwrap_or(CloseReason::ClosedByClient),
            ));
        }
        Ok(())
    }

    /// Send a request of the session. With an OAuth authorization: its headers are added,
    /// and a 401 or 403 is handed to it, which may have the request sent again (a DPoP nonce,
    /// a refreshed token, a fresh or wider authorization), each within its own bounds.
    async fn send(&self, req: Request) -> Result<webfetch::Response, Error> {
        let Some(oauth) = &self.oauth else {
            return self.fetcher.send(req).await.map_err(Error::Http);
        };
        let mut round = oauth::Round::default();
        loop {
            let mut r = req.clone();
            let auth = oauth
                .headers_for(r.method().as_str(), r.url(), &mut round)
                .await
                .map_err(Error::Auth)?;
            for (k, v) in &auth {
                r.headers_mut().insert(k.clone(), v.clone());
            }
            let resp = self.fetcher.send(r).await.map_err(Error::Http)?;
            let again = oauth
                .on_answer(req.url(), resp.status(), resp.headers(), &mut round)
                .await
                .map_err(Error::Auth)?;
            if again == oauth::Verdict::Take {
                return Ok(resp);
            }
        }
    }

    /// POST a request and read its answer (JSON or SSE) until this request's pending entry is
    /// answered. Legacy: handles session loss with one re-initialize and one retry. Modern:
    /// the request metadata goes into headers, and a 4xx/5xx whose JSON body is the JSON-RPC
    /// error of this request is that request's answer.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn exchange(
        &self,
        frame: Vec<u8>,
        id: u64,
        method: &str,
        core: &Core,
        options: &ClientOptions,
        timeout: Duration,
        mirror: &Mirror,
    ) -> Result<(), Error> {
        self.check_open(core)?;
        if self.is_modern() {
            let (mut req, _) = self.request(Method::POST, Bytes::from(frame), timeout);
            mirror.apply(method, req.headers_mut())?;
            let resp = self.send(req).await?;
            let status = resp.status();
            if !status.is_success() {
                return self.error_answer(resp, id, core).await;
            }
            return self.consume(resp, Some(id), core, timeout).await;
        }
        let body = Bytes::from(frame);
        let (req, used_session) = self.request(Method::POST, body.clone(), timeout);
        let resp = self.send(req).await?;
        let resp = match self.session_lost(resp, used_session.is_some()).await? {
            Ok(resp) => resp,
            Err(()) if method == "initialize" => return Err(Error::SessionLost),
            Err(()) => {
                self.reinitialize(used_session, core, options, timeout)
                    .await?;
                let (req, used) = self.request(Method::POST, body, timeout);
                let resp = self.send(req).await?;
                match self.session_lost(resp, used.is_some()).await? {
                    Ok(resp) => resp,
                    Err(()) => return Err(Error::SessionLost),
                }
            }
        };
        let status = resp.status();
        if !status.is_success() {
            // A JSON-RPC error in the body answers the request (a modern-only server refuses
            // `initialize` with 400 and -32022 listing what it speaks).
            return self.error_answer(resp, id, core).await;
        }
        if method == "initialize" {
            *lock(&self.session) = resp
                .header_str(SESSION_HEADER)
                .filter(|s| !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b)))
                .and_then(|s| HeaderValue::from_str(s).ok());
        }
        self.consume(resp, Some(id), core, timeout).await
    }

    /// A modern error status: its JSON body, when it is the JSON-RPC error answer of request
    /// `id`, answers it; anything else is the status.
    async fn error_answer(
        &self,
        resp: webfetch::Response,
        id: u64,
        core: &Core,
    ) -> Result<(), Error> {
        let status = resp.status().as_u16();
        let json = resp
            .header_str(header::CONTENT_TYPE)
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("application/json"));
        if !json {
            return Err(Error::HttpStatus { status });
        }
        let body = read_capped(resp.into_body(), ERROR_BODY_CAP).await;
        #[derive(serde::Deserialize)]
        struct Head<'a> {
            #[serde(borrow)]
            id: Option<&'a serde_json::value::RawValue>,
            #[serde(borrow)]
            error: Option<&'a serde_json::value::RawValue>,
        }
        let ours = serde_json::from_slice::<Head<'_>>(&body)
            .is_ok_and(|h| h.error.is_some() && h.id.is_some_and(|i| i.get() == id.to_string()));
        if ours {
            let _ = core.on_frame(&body);
            if !core.is_pending(id) {
                return Ok(());
            }
        }
        Err(Error::HttpStatus { status })
    }

    /// `Ok(Err(()))` when the server forgot the session: 404, or 400 whose body says "no valid
    /// session".
    async fn session_lost(
        &self,
        resp: webfetch::Response,
        had_session: bool,
    ) -> Result<Result<webfetch::Response, ()>, Error> {
        let status = resp.status();
        if !had_session || (status != StatusCode::NOT_FOUND && status != StatusCode::BAD_REQUEST) {
            return Ok(Ok(resp));
        }
        if status == StatusCode::NOT_FOUND {
            return Ok(Err(()));
        }
        let body = read_capped(resp.into_body(), ERROR_BODY_CAP).await;
        let text = String::from_utf8_lossy(&body).to_ascii_lowercase();
        if text.contains("no valid session") || text.contains("session not found") {
            return Ok(Err(()));
        }
        Err(Error::HttpStatus { status: 400 })
    }

    /// A fresh initialize (and notifications/initialized) after the server forgot the
    /// session; skipped when a concurrent request already did it.
    async fn reinitialize(
        &self,
        lost: Option<HeaderValue>,
        core: &Core,
        options: &ClientOptions,
        timeout: Duration,
    ) -> Result<(), Error> {
        let _guard = self.reinit.lock().await;
        if *lock(&self.session) != lost {
            return Ok(());
        }
        *lock(&self.session) = None;
        let mut ticket = core.register()?;
        let params = handshake::initialize_params(options);
        let frame = rpc::encode(Some(ticket.id), "initialize", Some(&params));
        let (req, _) = self.request(Method::POST, Bytes::from(frame), timeout);
        let resp = self.send(req).await?;
        if !resp.status().is_success() {
            return Err(Error::SessionLost);
        }
        *lock(&self.session) = resp
            .header_str(SESSION_HEADER)
            .and_then(|s| HeaderValue::from_str(s).ok());
        self.consume(resp, Some(ticket.id), core, timeout).await?;
        let Some(rx) = ticket.rx.take() else {
            return Err(Error::SessionLost);
        };
        let raw = rx
            .await
            .map_err(|_| Error::Closed(core.close_reason().unwrap_or(CloseReason::ServerGone)))??;
        ticket.disarm();
        let info = handshake::parse_initialize(&raw)?;
        self.set_protocol_version(&info.protocol_version);
        let note = rpc::encode::<serde_json::Value>(None, "notifications/initialized", None);
        self.post_message(&note, core, timeout, "notifications/initialized")
            .await
    }

    /// POST a notification (`method`) or an answer (`method` empty); the server should say
    /// 202.
    pub(crate) async fn post_message(
        &self,
        frame: &[u8],
        core: &Core,
        timeout: Duration,
        method: &str,
    ) -> Result<(), Error> {
        self.check_open(core)?;
        let (mut req, _) = self.request(Method::POST, Bytes::copy_from_slice(frame), timeout);
        if self.is_modern() {
            Mirror::none().apply(method, req.headers_mut())?;
        }
        let resp = self.send(req).await?;
        if !resp.status().is_success() {
            return Err(Error::HttpStatus {
                status: resp.status().as_u16(),
            });
        }
        // A 200 with a body is tolerated (some servers answer notifications with one); a JSON
        // message in it is handled, but a server request in it is not answered (that would
        // mean a POST answering a POST, without end).
        if resp.status() == StatusCode::ACCEPTED {
            return Ok(());
        }
        let body = read_capped(resp.into_body(), self.limits.frame_cap).await;
        if !body.is_empty() && body.first() == Some(&b'{') {
            let _ = core.on_frame(&body);
        }
        Ok(())
    }

    /// Read an answer body: a JSON message or an SSE stream. With `Some(id)`, stop when that
    /// request is answered (resuming a dropped SSE stream with GET + Last-Event-ID, after the
    /// server's `retry:`); with `None`, read what is there.
    async fn consume(
        &self,
        resp: webfetch::Response,
        id: Option<u64>,
        core: &Core,
        timeout: Duration,
    ) -> Result<(), Error> {
        let status = resp.status();
        if status == StatusCode::ACCEPTED {
            return Ok(());
        }
        if !status.is_success() {
            return Err(Error::HttpStatus {
                status: status.as_u16(),
            });
        }
        let content_type = resp
            .header_str(header::CONTENT_TYPE)
            .unwrap_or("")
            .to_ascii_lowercase();
        let mut body = resp.into_body();
        if !content_type.starts_with("text/event-stream") {
            let bytes = read_frame_body(&mut body, self.limits.frame_cap, core).await?;
            self.dispatch(&bytes, core, timeout).await;
            return self.answered(id, core);
        }
        let mut sse = SseParser::new(self.limits.frame_cap);
        let mut reconnects = 0u32;
        loop {
            let ended = self
                .read_sse(&mut body, &mut sse, id, core, timeout)
                .await?;
            let Some(id) = id else { return Ok(()) };
            if !core.is_pending(id) {
                return Ok(());
            }
            if !ended {
                continue;
            }
            // The stream ended before the answer: resume it, if the server made that possible.
            let Some(last) = sse.last_event_id.clone() else {
                return Err(unanswered(core));
            };
            reconnects += 1;
            if reconnects > self.limits.sse_reconnects {
                return Err(unanswered(core));
            }
            tokio::time::sleep(sse.retry.unwrap_or(DEFAULT_RETRY).min(MAX_RETRY)).await;
            let (mut req, _) = self.request(Method::GET, Bytes::new(), timeout);
            let h = req.headers_mut();
            h.remove(header::CONTENT_TYPE);
            h.insert(
                header::ACCEPT,
                HeaderValue::from_static("text/event-stream"),
            );
            if let Ok(v) = HeaderValue::from_str(&last) {
                h.insert(HeaderName::from_static("last-event-id"), v);
            }
            let resp = self.send(req).await?;
            if !resp.status().is_success() {
                // The server cannot resume the stream (405 and the like): the answer is lost.
                return Err(unanswered(core));
            }
            body = resp.into_body();
            sse.reset_stream();
        }
    }

    /// Read SSE events until `id` is answered (`Ok(false)`) or the stream ends (`Ok(true)`).
    async fn read_sse(
        &self,
        body: &mut webfetch::Body,
        sse: &mut SseParser,
        id: Option<u64>,
        core: &Core,
        timeout: Duration,
    ) -> Result<bool, Error> {
        loop {
            let chunk = match body.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => return Ok(true),
                Err(e) if e.is_too_large() => return Err(Error::Http(e)),
                // A connection closed mid-stream is a disconnection, not a cancellation.
                Err(_) => return Ok(true),
            };
            let mut events = Vec::new();
            if sse.feed(&chunk, &mut events).is_err() {
                core.counters
                    .violations
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let reason = CloseReason::FrameTooLarge {
                    cap: self.limits.frame_cap,
                };
                core.close(reason.clone());
                return Err(Error::Closed(reason));
            }
            for data in events {
                self.dispatch(&data, core, timeout).await;
            }
            if let Some(id) = id {
                if !core.is_pending(id) {
                    return Ok(false);
                }
            }
        }
    }

    fn answered(&self, id: Option<u64>, core: &Core) -> Result<(), Error> {
        match id {
            // A JSON body that was not this request's answer: it will never come.
            Some(id) if core.is_pending(id) => Err(unanswered(core)),
            _ => Ok(()),
        }
    }

    /// One message from the server; an answer to a server request is POSTed back.
    async fn dispatch(&self, bytes: &[u8], core: &Core, timeout: Duration) {
        match core.on_frame(bytes) {
            Inbound::Done => {}
            Inbound::Garbage => {
                core.counters
                    .garbage_lines
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Inbound::Answer(a) => {
                if let Err(e) = self
                    .post_message(&a, core, timeout.min(NOTICE_DEADLINE), "")
                    .await
                {
                    tracing::debug!(error = %e, "answer to a server request not delivered");
                }
            }
        }
    }

    /// Open the standalone GET stream (`Accept: text/event-stream`) and, when the server
    /// offers one (200 + SSE; 405 means it does not), spawn the task that reads it: server
    /// requests are answered by POST, notifications dispatched, a stream that ends is resumed
    /// after `retry:` with Last-Event-ID, at most `sse_reconnects` times in a row. Returns once
    /// the server has answered the GET, so it is registered before the next request.
    pub(crate) async fn open_standalone(
        self: &std::sync::Arc<Self>,
        core: std::sync::Arc<Core>,
        timeout: Duration,
    ) -> Result<Option<tokio::task::JoinHandle<()>>, Error> {
        let Some(body) = tokio::time::timeout(timeout, self.get_stream(None))
            .await
            .ok()
            .flatten()
        else {
            return Ok(None);
        };
        let link = self.clone();
        Ok(Some(tokio::spawn(async move {
            link.listen(body, &core).await;
        })))
    }

    async fn get_stream(&self, last_event_id: Option<&str>) -> Option<webfetch::Body> {
        let (mut req, _) = self.request(Method::GET, Bytes::new(), STANDALONE_DEADLINE);
        let h = req.headers_mut();
        h.remove(header::CONTENT_TYPE);
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        if let Some(v) = last_event_id.and_then(|l| HeaderValue::from_str(l).ok()) {
            h.insert(HeaderName::from_static("last-event-id"), v);
        }
        let resp = self.send(req).await.ok()?;
        let sse = resp
            .header_str(header::CONTENT_TYPE)
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
        (resp.status() == StatusCode::OK && sse).then(|| resp.into_body())
    }

    async fn listen(&self, mut body: webfetch::Body, core: &Core) {
        let mut sse = SseParser::new(self.limits.frame_cap);
        let mut reconnects = 0u32;
        loop {
            if !matches!(
                self.read_sse(&mut body, &mut sse, None, core, NOTICE_DEADLINE)
                    .await,
                Ok(true)
            ) {
                return;
            }
            reconnects += 1;
            if reconnects > self.limits.sse_reconnects || self.abandoned.load(Ordering::Relaxed) {
                return;
            }
            tokio::time::sleep(sse.retry.unwrap_or(DEFAULT_RETRY).min(MAX_RETRY)).await;
            match self.get_stream(sse.last_event_id.as_deref()).await {
                Some(b) => body = b,
                None => return,
            }
            sse.reset_stream();
        }
    }

    /// The answer to a held server request, sent later (briefly, best effort).
    pub(crate) async fn send_answer(&self, frame: &[u8], core: &Core) -> Result<(), Error> {
        tokio::time::timeout(
            ANSWER_DEADLINE,
            self.post_message(frame, core, ANSWER_DEADLINE, ""),
        )
        .await
        .map_err(|_| Error::Timeout {
            method: "an answer to the server".to_owned(),
            after: ANSWER_DEADLINE,
        })?
    }

    /// Best effort, briefly: a cancellation notice after a deadline.
    pub(crate) async fn send_notice_briefly(&self, frame: Vec<u8>, core: &Core) {
        let _ = tokio::time::timeout(
            NOTICE_DEADLINE,
            self.post_message(&frame, core, NOTICE_DEADLINE, "notifications/cancelled"),
        )
        .await;
    }

    /// End the session: DELETE with its id (best effort, briefly).
    pub(crate) async fn close(&self) {
        self.abandoned.store(true, Ordering::Relaxed);
        let Some(session) = lock(&self.session).take() else {
            return;
        };
        let (mut req, _) = self.request(Method::DELETE, Bytes::new(), NOTICE_DEADLINE);
        req.headers_mut().remove(header::CONTENT_TYPE);
        req.headers_mut()
            .insert(HeaderName::from_static(SESSION_HEADER), session);
        let _ = tokio::time::timeout(NOTICE_DEADLINE, self.send(req)).await;
    }

    /// Stop using the session without a goodbye (after a deadline dropped the connection).
    pub(crate) fn abandon(&self) {
        self.abandoned.store(true, Ordering::Relaxed);
    }
}

fn unanswered(core: &Core) -> Error {
    core.counters
        .violations
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Error::Violation(crate::error::Violation::Unanswered)
}

/// Read a JSON answer body of at most `cap` bytes.
async fn read_frame_body(
    body: &mut webfetch::Body,
    cap: usize,
    core: &Core,
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    loop {
        match body.chunk().await {
            Ok(Some(c)) => {
                if out.len() + c.len() > cap {
                    core.counters
                        .violations
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let reason = CloseReason::FrameTooLarge { cap };
                    core.close(reason.clone());
                    return Err(Error::Closed(reason));
                }
                out.extend_from_slice(&c);
            }
            Ok(None) => return Ok(out),
            Err(e) => return Err(Error::Http(e)),
        }
    }
}

/// Up to `cap` bytes of a body, errors ignored (for recognising error bodies).
async fn read_capped(mut body: webfetch::Body, cap: usize) -> Vec<u8> {
    let mut out = Vec::new();
    while let Ok(Some(c)) = body.chunk().await {
        let room = cap.saturating_sub(out.len());
        out.extend_from_slice(&c[..c.len().min(room)]);
        if out.len() >= cap {
            break;
        }
    }
    out
}

/// An incremental `text/event-stream` parser (WHATWG rules: lines end in CRLF, LF or CR;
/// `data` lines joined by LF; `id` without NUL sets the last event id; `retry` digits only;
/// comments and other fields ignored). The cap bounds one line and one event's data, so a
/// stream that never ends a line is never assembled beyond it.
#[derive(Debug)]
pub(crate) struct SseParser {
    cap: usize,
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    skip_lf: bool,
    pub(crate) last_event_id: Option<String>,
    pending_id: Option<String>,
    pub(crate) retry: Option<Duration>,
}

/// One line or one event passed the cap.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct EventTooLarge;

impl SseParser {
    pub(crate) fn new(cap: usize) -> Self {
        SseParser {
            cap,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            skip_lf: false,
            last_event_id: None,
            pending_id: None,
            retry: None,
        }
    }

    /// A new stream (after a reconnection) keeps the last event id and retry.
    pub(crate) fn reset_stream(&mut self) {
        self.line.clear();
        self.data.clear();
        self.has_data = false;
        self.skip_lf = false;
        self.pending_id = None;
    }

    /// Feed bytes; complete events' data (non-empty) are pushed to `out`.
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        out: &mut Vec<Vec<u8>>,
    ) -> Result<(), EventTooLarge> {
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.skip_lf {
                self.skip_lf = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
                None => {
                    if self.line.len() + rest.len() > self.cap {
                        return Err(EventTooLarge);
                    }
                    self.line.extend_from_slice(rest);
                    return Ok(());
                }
                Some(i) => {
                    if self.line.len() + i > self.cap {
                        return Err(EventTooLarge);
                    }
                    self.line.extend_from_slice(&rest[..i]);
                    self.skip_lf = rest[i] == b'\r';
                    rest = &rest[i + 1..];
                    let line = std::mem::take(&mut self.line);
                    self.on_line(&line, out)?;
                    self.line = line;
                    self.line.clear();
                }
            }
        }
        Ok(())
    }

    fn on_line(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), EventTooLarge> {
        if line.is_empty() {
            if let Some(id) = self.pending_id.take() {
                self.last_event_id = Some(id);
            }
            if self.has_data && !self.data.is_empty() {
                out.push(std::mem::take(&mut self.data));
            }
            self.data.clear();
            self.has_data = false;
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                if self.data.len() + value.len() > self.cap {
                    return Err(EventTooLarge);
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"id" if !value.contains(&0) => {
                self.pending_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = std::str::from_utf8(value).unwrap_or("").parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]], cap: usize) -> (Result<Vec<String>, EventTooLarge>, SseParser) {
        let mut p = SseParser::new(cap);
        let mut out = Vec::new();
        for c in chunks {
            if let Err(e) = p.feed(c, &mut out) {
                return (Err(e), p);
            }
        }
        let s = out
            .into_iter()
            .map(|d| String::from_utf8(d).unwrap())
            .collect();
        (Ok(s), p)
    }

    #[test]
    fn sse_table() {
        type Case<'a> = (&'a [&'a [u8]], Result<&'a [&'a str], EventTooLarge>);
        let cases: &[Case<'_>] = &[
            (&[b"data: {\"a\":1}\n\n"], Ok(&["{\"a\":1}"])),
            (
                &[b"id: 1\nretry: 50\ndata: \n\n", b"data: x\n\n"],
                Ok(&["x"]),
            ),
            (&[b"data: a\ndata: b\n\n"], Ok(&["a\nb"])),
            (&[b"data: a\r\n\r\ndata: b\r\r"], Ok(&["a", "b"])),
            (&[b"da", b"ta: sp", b"lit\n", b"\n"], Ok(&["split"])),
            (&[b"data: a\r", b"\n\r", b"\n"], Ok(&["a"])),
            (
                &[b": comment\nevent: message\ndata:nospace\n\n"],
                Ok(&["nospace"]),
            ),
            (&[b"data: unterm"], Ok(&[])),
            (&[b"data: 0123456789ABCDEFG\n\n"], Err(EventTooLarge)),
            (&[b"data: 01234", b"56789ABCDEFG"], Err(EventTooLarge)),
            (
                &[b"data: 0123456789\ndata: 0123456\n\n"],
                Err(EventTooLarge),
            ),
        ];
        for (chunks, want) in cases {
            let (got, _) = events(chunks, 16);
            let want = want
                .as_ref()
                .map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            let want = want.map_err(|_| EventTooLarge);
            assert_eq!(got, want, "{chunks:?}");
        }
    }

    #[test]
    fn sse_id_and_retry() {
        let (_, p) = events(&[b"id: 7\nretry: 250\ndata: \n\nid: 8\nretry: x\n"], 100);
        assert_eq!(p.last_event_id.as_deref(), Some("7"));
        assert_eq!(p.retry, Some(Duration::from_millis(250)));
        let (_, p) = events(&[b"id: 8\n\n"], 100);
        assert_eq!(p.last_event_id.as_deref(), Some("8"));
    }

    proptest::proptest! {
        #[test]
        fn sse_never_holds_more_than_the_cap(chunks in proptest::collection::vec(
            proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64), 0..16)) {
            let mut p = SseParser::new(32);
            let mut out = Vec::new();
            for c in &chunks {
                if p.feed(c, &mut out).is_err() { break; }
                proptest::prop_assert!(p.line.len() <= 32 && p.data.len() <= 32);
            }
            for d in out { proptest::prop_assert!(d.len() <= 32); }
        }
    }
}
