//! The JSON-RPC 2.0 core shared by both transports (M-1, M-2): outgoing frame encoding, the
//! pending-request table, classification of incoming frames, violation counting, answers to
//! server requests, notification dispatch and the inbound rate limit.
//!
//! No lock here is ever held across an `.await`: the table is a `std::sync::Mutex` touched only
//! by short synchronous sections.

use std::collections::{HashMap, VecDeque};
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use std::borrow::Cow;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use crate::error::{CloseReason, Error, Violation};
use crate::text::cap_string;
use crate::{Limits, ServerRequestHandler};

/// What a pending request receives.
pub(crate) type Reply = Result<Box<RawValue>, Error>;

/// Counters of one connection, readable at any time without locking.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) violations: AtomicU64,
    pub(crate) garbage_lines: AtomicU64,
    pub(crate) rate_limited: AtomicU64,
    pub(crate) server_requests: AtomicU64,
    pub(crate) notifications: AtomicU64,
    pub(crate) late_answers: AtomicU64,
    pub(crate) peak_line_bytes: AtomicUsize,
}

/// A snapshot of a connection's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Protocol violations (M-1): unknown or inexact ids, both/neither result and error,
    /// batches, malformed frames, duplicate answers.
    pub violations: u64,
    /// Lines on stdout that were not JSON (counted and dropped).
    pub garbage_lines: u64,
    /// Inbound requests and notifications dropped by the rate limit.
    pub rate_limited: u64,
    /// Requests the server sent to the client.
    pub server_requests: u64,
    /// Notifications the server sent.
    pub notifications: u64,
    /// Answers to requests this client had already given up (ignored, not violations).
    pub late_answers: u64,
    /// The most bytes of one frame ever held by the stdio reader (never more than the frame
    /// cap plus one).
    pub peak_line_bytes: usize,
}

/// How many given-up request ids are remembered so their late answers are ignored quietly.
const CANCELLED_MEMORY: usize = 256;
/// Longest log message kept from `notifications/message`.
const LOG_MESSAGE_CAP: usize = 512;
/// How many log messages are kept.
const LOG_RING: usize = 32;
/// Longest error message kept from a JSON-RPC error.
const ERROR_MESSAGE_CAP: usize = 1024;

/// Hashes request ids for the pending table. The table only ever holds ids this client issued
/// (sequential, never chosen by the server; a server's id only looks one up), so no key can be
/// crafted to collide and SipHash's protection buys nothing here: one multiply spreads them.
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, id: u64) {
        self.0 = (self.0 ^ id).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Pending = HashMap<u64, oneshot::Sender<Reply>, std::hash::BuildHasherDefault<IdHasher>>;

struct Table {
    pending: Pending,
    cancelled: VecDeque<u64>,
    closed: Option<CloseReason>,
    bucket: TokenBucket,
    logs: VecDeque<String>,
    /// Where a legacy `elicitation/create` goes while a call made for the owner is in flight.
    held: Option<tokio::sync::mpsc::Sender<HeldAsk>>,
    /// The client declared `elicitation`: one nobody holds is declined, not refused.
    decline_elicitation: bool,
}

/// A legacy server request held for the owner: an `elicitation/create` received while a call
/// made for the owner was in flight. Its answer is sent later ([`encode_answer`]).
#[derive(Debug)]
pub(crate) struct HeldAsk {
    pub(crate) id: Box<RawValue>,
    pub(crate) params: Value,
}

/// The connection-wide JSON-RPC state. One per connection, shared by the transport's reader
/// and every caller.
pub(crate) struct Core {
    next_id: AtomicU64,
    table: Mutex<Table>,
    pub(crate) counters: Counters,
    list_changed: watch::Sender<u64>,
    /// True once the connection is closed (see [`Core::closed_signal`]).
    closed: watch::Sender<bool>,
    handler: Option<Arc<dyn ServerRequestHandler>>,
}

/// What the transport must do after a frame was handled.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Inbound {
    /// Nothing more.
    Done,
    /// Send this frame (an answer to a server request) back to the server.
    Answer(Vec<u8>),
    /// The bytes were not a JSON-RPC message at all (not JSON, or not an object).
    Garbage,
}

/// A reserved request id whose entry is removed from the table when dropped, so a caller whose
/// future is dropped leaves nothing behind (and a late answer is ignored, not counted).
pub(crate) struct Ticket<'a> {
    core: &'a Core,
    pub(crate) id: u64,
    pub(crate) rx: Option<oneshot::Receiver<Reply>>,
    armed: bool,
}

impl Ticket<'_> {
    /// The answer arrived; nothing to forget.
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.core.forget(self.id);
        }
    }
}

/// One incoming message, every member borrowed from the frame (`id`, `params`, `result` and
/// `error` kept raw and present even when `null`). Read by hand rather than derived, with the
/// derive's rules: unknown members skipped, a repeated member refused, `method` a string or
/// `null`; `jsonrpc` is compared as it is read.
#[derive(Default)]
struct RawMessage<'a> {
    /// `jsonrpc` is written exactly `"2.0"`.
    version_ok: bool,
    id: Option<&'a RawValue>,
    method: Option<Cow<'a, str>>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

impl<'de> Deserialize<'de> for RawMessage<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = RawMessage<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        fn once<'de, A: MapAccess<'de>, T>(
            slot: &mut Option<T>,
            name: &'static str,
            map: &mut A,
            read: impl FnOnce(&mut A) -> Result<T, A::Error>,
        ) -> Result<(), A::Error> {
            if slot.is_some() {
                return Err(de::Error::duplicate_field(name));
            }
            *slot = Some(read(map)?);
            Ok(())
        }
        let mut jsonrpc: Option<bool> = None;
        let mut method: Option<Option<Cow<'de, str>>> = None;
        let mut m = RawMessage::default();
        let raw = |map: &mut A| map.next_value::<&'de RawValue>();
        while let Some(key) = map.next_key::<Member>()? {
            match key {
                // Kept raw: the exact text is compared, escapes are never decoded.
                Member::Jsonrpc => once(&mut jsonrpc, "jsonrpc", &mut map, |map| {
                    map.next_value::<&'de RawValue>()
                        .map(|v| v.get() == "\"2.0\"")
                })?,
                Member::Id => once(&mut m.id, "id", &mut map, raw)?,
                Member::Method => once(&mut method, "method", &mut map, |map| {
                    map.next_value::<Option<MethodName<'de>>>()
                        .map(|n| n.map(|n| n.0))
                })?,
                Member::Params => once(&mut m.params, "params", &mut map, raw)?,
                Member::Result => once(&mut m.result, "result", &mut map, raw)?,
                Member::Error => once(&mut m.error, "error", &mut map, raw)?,
                Member::Other => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        m.version_ok = jsonrpc == Some(true);
        m.method = method.flatten();
        Ok(m)
    }
}

/// The name of a message member.
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Member;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, k: &str) -> Result<Member, E> {
                Ok(match k {
                    "jsonrpc" => Member::Jsonrpc,
                    "id" => Member::Id,
                    "method" => Member::Method,
                    "params" => Member::Params,
                    "result" => Member::Result,
                    "error" => Member::Error,
                    _ => Member::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

/// `method`: a string (borrowed unless it has escapes); any other type is malformed.
struct MethodName<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for MethodName<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MethodName<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(MethodName(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(MethodName(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

#[derive(Deserialize)]
struct ErrorObject<'a> {
    code: i64,
    #[serde(default)]
    message: String,
    #[serde(default, borrow)]
    data: Option<&'a RawValue>,
}

/// Most versions kept from an `UnsupportedProtocolVersion` error's `supported` list.
const SUPPORTED_CAP: usize = 16;
/// Longest version string kept from it.
const VERSION_CAP: usize = 64;

#[derive(Deserialize)]
struct UnsupportedData {
    supported: Vec<Value>,
    #[serde(default)]
    requested: Value,
}

/// The error a JSON-RPC error object stands for: the modern era's own codes get variants of
/// their own (with the server's `supported` list, capped), every other code is `Rpc`.
fn rpc_error(e: ErrorObject<'_>) -> Error {
    let message = cap_string(e.message, ERROR_MESSAGE_CAP);
    match e.code {
        crate::era::UNSUPPORTED_VERSION => {
            let data = e
                .data
                .and_then(|d| serde_json::from_str::<UnsupportedData>(d.get()).ok());
            match data {
                Some(d) => Error::UnsupportedVersion {
                    requested: d
                        .requested
                        .as_str()
                        .map(|s| cap_string(s.to_owned(), VERSION_CAP))
                        .unwrap_or_default(),
                    supported: d
                        .supported
                        .iter()
                        .filter_map(Value::as_str)
                        .take(SUPPORTED_CAP)
                        .map(|s| cap_string(s.to_owned(), VERSION_CAP))
                        .collect(),
                },
                None => Error::Rpc {
                    code: e.code,
                    message,
                },
            }
        }
        crate::era::HEADER_MISMATCH => Error::HeaderMismatch { message },
        code => Error::Rpc { code, message },
    }
}

impl Core {
    pub(crate) fn new(limits: &Limits, handler: Option<Arc<dyn ServerRequestHandler>>) -> Self {
        Core {
            next_id: AtomicU64::new(1),
            table: Mutex::new(Table {
                pending: Pending::default(),
                cancelled: VecDeque::with_capacity(CANCELLED_MEMORY),
                closed: None,
                bucket: TokenBucket::new(limits.inbound_burst, limits.inbound_per_second),
                logs: VecDeque::new(),
                held: None,
                decline_elicitation: false,
            }),
            counters: Counters::default(),
            list_changed: watch::Sender::new(0),
            closed: watch::Sender::new(false),
            handler,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding this lock cannot leave the table inconsistent (each section is
        // a single insert/remove), so a poisoned lock is still usable.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reserve an id and register it as pending. Fails when the connection is closed.
    pub(crate) fn register(&self) -> Result<Ticket<'_>, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let mut t = self.lock();
        if let Some(r) = &t.closed {
            return Err(Error::Closed(r.clone()));
        }
        t.pending.insert(id, tx);
        drop(t);
        Ok(Ticket {
            core: self,
            id,
            rx: Some(rx),
            armed: true,
        })
    }

    /// Give up on a request: its late answer will be ignored.
    pub(crate) fn forget(&self, id: u64) {
        let mut t = self.lock();
        if t.pending.remove(&id).is_some() {
            if t.cancelled.len() == CANCELLED_MEMORY {
                t.cancelled.pop_front();
            }
            t.cancelled.push_back(id);
        }
    }

    /// Mark the connection closed and fail every pending request with the reason. The first
    /// reason wins.
    pub(crate) fn close(&self, reason: CloseReason) {
        let drained: Vec<_> = {
            let mut t = self.lock();
            if t.closed.is_none() {
                t.closed = Some(reason);
            }
            t.pending.drain().map(|(_, v)| v).collect()
        };
        let reason = self.close_reason().unwrap_or(CloseReason::ServerGone);
        for tx in drained {
            let _ = tx.send(Err(Error::Closed(reason.clone())));
        }
        self.closed.send_replace(true);
    }

    /// A signal that turns true when the connection closes (its reason is then set).
    pub(crate) fn closed_signal(&self) -> watch::Receiver<bool> {
        self.closed.subscribe()
    }

    /// Why the connection closed, if it did.
    pub(crate) fn close_reason(&self) -> Option<CloseReason> {
        self.lock().closed.clone()
    }

    /// Whether this request still waits for its answer.
    pub(crate) fn is_pending(&self, id: u64) -> bool {
        self.lock().pending.contains_key(&id)
    }

    pub(crate) fn stats(&self) -> Stats {
        let c = &self.counters;
        Stats {
            violations: c.violations.load(Ordering::Relaxed),
            garbage_lines: c.garbage_lines.load(Ordering::Relaxed),
            rate_limited: c.rate_limited.load(Ordering::Relaxed),
            server_requests: c.server_requests.load(Ordering::Relaxed),
            notifications: c.notifications.load(Ordering::Relaxed),
            late_answers: c.late_answers.load(Ordering::Relaxed),
            peak_line_bytes: c.peak_line_bytes.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn list_changed(&self) -> watch::Receiver<u64> {
        self.list_changed.subscribe()
    }

    pub(crate) fn logs(&self) -> Vec<String> {
        self.lock().logs.iter().cloned().collect()
    }

    /// Route legacy `elicitation/create` requests to `to` (a call for the owner is in flight).
    /// Returns false when another call already holds them.
    pub(crate) fn hold_asks(&self, to: tokio::sync::mpsc::Sender<HeldAsk>) -> bool {
        let mut t = self.lock();
        if t.held.as_ref().is_some_and(|h| !h.is_closed()) {
            return false;
        }
        t.held = Some(to);
        true
    }

    /// Stop routing them to `to` (its call ended); a later holder is left alone.
    pub(crate) fn release_asks(&self, to: &tokio::sync::mpsc::Sender<HeldAsk>) {
        let mut t = self.lock();
        if t.held.as_ref().is_some_and(|h| h.same_channel(to)) {
            t.held = None;
        }
    }

    /// The client declared `elicitation` in its initialize: an elicitation that no call for the
    /// owner holds is declined rather than refused.
    pub(crate) fn declines_elicitation(&self) {
        self.lock().decline_elicitation = true;
    }

    fn violation(&self, what: &str) {
        self.counters.violations.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(what, "mcp protocol violation");
    }

    /// Handle one frame from the server (a line without its newline, or one SSE event's data,
    /// or an HTTP JSON body).
    pub(crate) fn on_frame(&self, bytes: &[u8]) -> Inbound {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        match first {
            None => return Inbound::Done,
            Some(b'[') => {
                // Batches are refused (M-1): counted, nothing in them is acted on.
                if serde_json::from_slice::<&RawValue>(bytes).is_ok() {
                    self.violation("batch");
                    return Inbound::Done;
                }
                return Inbound::Garbage;
            }
            Some(b'{') => {}
            Some(_) => return Inbound::Garbage,
        }
        // Checked once for the whole frame, so the reader need not check each string again;
        // a frame that is not UTF-8 takes the byte reader, which judges it as before.
        let parsed = match std::str::from_utf8(bytes) {
            Ok(text) => serde_json::from_str::<RawMessage<'_>>(text),
            Err(_) => serde_json::from_slice::<RawMessage<'_>>(bytes),
        };
        let msg = match parsed {
            Ok(m) => m,
            Err(e) if e.is_syntax() || e.is_eof() => return Inbound::Garbage,
            Err(_) => {
                self.violation("malformed message");
                return Inbound::Done;
            }
        };
        if !msg.version_ok {
            self.violation("jsonrpc member is not \"2.0\"");
            return Inbound::Done;
        }
        match (msg.method, msg.id) {
            (Some(method), Some(id)) => self.on_request(&method, id, msg.params),
            (Some(method), None) => {
                self.on_notification(&method, msg.params);
                Inbound::Done
            }
            (None, Some(id)) => {
                self.on_response(id, msg.result, msg.error);
                Inbound::Done
            }
            (None, None) => {
                self.violation("neither method nor id");
                Inbound::Done
            }
        }
    }

    fn on_response(&self, id: &RawValue, result: Option<&RawValue>, error: Option<&RawValue>) {
        // Exact ids only: the id must be written as a plain JSON integer that this client
        // issued. "1" (a string), 1.0 and 1e0 never match request 1.
        let Ok(id) = id.get().parse::<u64>() else {
            self.violation("response id is not an integer this client issues");
            return;
        };
        let entry = {
            let mut t = self.lock();
            match t.pending.remove(&id) {
                Some(e) => Some(e),
                None => {
                    if t.cancelled.contains(&id) {
                        self.counters.late_answers.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    None
                }
            }
        };
        let Some(tx) = entry else {
            self.violation("response to no pending request");
            return;
        };
        let reply = match (result, error) {
            (Some(r), None) => Ok(r.to_owned()),
            (None, Some(e)) => match serde_json::from_str::<ErrorObject<'_>>(e.get()) {
                Ok(e) => Err(rpc_error(e)),
                Err(_) => {
                    self.violation("malformed error object");
                    Err(Error::Violation(Violation::MalformedError))
                }
            },
            (Some(_), Some(_)) => {
                self.violation("both result and error");
                Err(Error::Violation(Violation::ResultAndError))
            }
            (None, None) => {
                self.violation("neither result nor error");
                Err(Error::Violation(Violation::NeitherResultNorError))
            }
        };
        // The caller may have given up in the meantime; that is not the server's fault.
        let _ = tx.send(reply);
    }

    fn admit(&self) -> bool {
        let ok = self.lock().bucket.take(Instant::now());
        if !ok {
            self.counters.rate_limited.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }

    fn on_request(&self, method: &str, id: &RawValue, params: Option<&RawValue>) -> Inbound {
        self.counters
            .server_requests
            .fetch_add(1, Ordering::Relaxed);
        let valid_id = {
            let s = id.get();
            s.starts_with('"') || s.parse::<i64>().is_ok()
        };
        if !valid_id {
            self.violation("request id is neither a string nor an integer");
            return Inbound::Done;
        }
        if !self.admit() {
            return Inbound::Done;
        }
        if method == "elicitation/create" {
            let (held, decline) = {
                let t = self.lock();
                (t.held.clone(), t.decline_elicitation)
            };
            if let Some(tx) = held {
                let params: Value = params
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or(Value::Null);
                match tx.try_send(HeldAsk {
                    id: id.to_owned(),
                    params,
                }) {
                    Ok(()) => return Inbound::Done,
                    // More questions at once than the owner is asked: declined.
                    Err(_) => {
                        return Inbound::Answer(encode_answer(
                            id,
                            Ok(Some(serde_json::json!({"action": "decline"}))),
                        ))
                    }
                }
            }
            if decline && self.handler.is_none() {
                return Inbound::Answer(encode_answer(
                    id,
                    Ok(Some(serde_json::json!({"action": "decline"}))),
                ));
            }
        }
        let answer = if method == "ping" {
            Ok(None)
        } else if let Some(h) = &self.handler {
            let params: serde_json::Value = params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or(serde_json::Value::Null);
            match h.handle(method, &params) {
                Some(Ok(v)) => Ok(Some(v)),
                Some(Err((code, message))) => Err((code, message)),
                None => Err((-32601, "Method not found".to_owned())),
            }
        } else {
            Err((-32601, "Method not found".to_owned()))
        };
        Inbound::Answer(encode_answer(id, answer))
    }

    fn on_notification(&self, method: &str, params: Option<&RawValue>) {
        self.counters.notifications.fetch_add(1, Ordering::Relaxed);
        if !self.admit() {
            return;
        }
        match method {
            "notifications/tools/list_changed" => {
                self.list_changed.send_modify(|n| *n = n.wrapping_add(1));
            }
            "notifications/message" => {
                let text = params.map(|p| p.get()).unwrap_or("");
                let text = cap_string(text.to_owned(), LOG_MESSAGE_CAP);
                let mut t = self.lock();
                if t.logs.len() == LOG_RING {
                    t.logs.pop_front();
                }
                t.logs.push_back(text);
            }
            // Progress, cancellations of server requests (answered at once anyway), resource
            // updates and anything unknown: counted above, otherwise ignored.
            _ => {}
        }
    }
}

/// Encode a request (with `Some(id)`) or a notification, ending with one newline, in one buffer.
pub(crate) fn encode<P: serde::Serialize + ?Sized>(
    id: Option<u64>,
    method: &str,
    params: Option<&P>,
) -> Vec<u8> {
    encode_with_meta(id, method, params, None)
}

/// [`encode`], with `meta` (a whole `"_meta":{…}` member, written once per connection) added
/// as the last member of the params object (which it creates when there are no params).
pub(crate) fn encode_with_meta<P: serde::Serialize + ?Sized>(
    id: Option<u64>,
    method: &str,
    params: Option<&P>,
    meta: Option<&[u8]>,
) -> Vec<u8> {
    let mut buf = Vec::with_capacity(96 + method.len() + meta.map_or(0, <[u8]>::len));
    buf.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
    if let Some(id) = id {
        // Writing into a Vec cannot fail.
        buf.extend_from_slice(b"\"id\":");
        let _ = serde_json::to_writer(&mut buf, &id);
        buf.push(b',');
    }
    buf.extend_from_slice(b"\"method\":");
    write_str(&mut buf, method);
    match (params, meta) {
        (Some(p), meta) => {
            buf.extend_from_slice(b",\"params\":");
            let start = buf.len();
            let _ = serde_json::to_writer(&mut buf, p);
            if let Some(meta) = meta {
                splice_meta(&mut buf, start, meta);
            }
        }
        (None, Some(meta)) => {
            buf.extend_from_slice(b",\"params\":{");
            buf.extend_from_slice(meta);
            buf.push(b'}');
        }
        (None, None) => {}
    }
    buf.extend_from_slice(b"}\n");
    buf
}

/// Add `meta` as the last member of the JSON object written at `buf[start..]`; a params value
/// that is not an object is left as it is.
fn splice_meta(buf: &mut Vec<u8>, start: usize, meta: &[u8]) {
    if buf.get(start) != Some(&b'{') || buf.last() != Some(&b'}') {
        return;
    }
    buf.pop();
    if buf.len() > start + 1 {
        buf.push(b',');
    }
    buf.extend_from_slice(meta);
    buf.push(b'}');
}

/// What a retried modern `tools/call` carries besides the name and arguments (multi
/// round-trip requests): the answers to the server's input requests and its state, echoed.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Retry<'a> {
    pub(crate) input_responses: Option<&'a serde_json::Map<String, serde_json::Value>>,
    pub(crate) request_state: Option<&'a str>,
}

/// Encode a `tools/call` request, ending with one newline: the params written member by
/// member into the frame, with no intermediate value.
#[cfg(test)]
pub(crate) fn encode_tool_call(
    id: u64,
    name: &str,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Vec<u8> {
    encode_tool_call_with(id, name, arguments, None, Retry::default())
}

/// Encode a `tools/call` request, ending with one newline: the params written member by
/// member into the frame, with no intermediate value; with the modern `_meta` member and a
/// retry's members when given.
pub(crate) fn encode_tool_call_with(
    id: u64,
    name: &str,
    arguments: &serde_json::Map<String, serde_json::Value>,
    meta: Option<&[u8]>,
    retry: Retry<'_>,
) -> Vec<u8> {
    let mut buf = Vec::with_capacity(128 + name.len() + meta.map_or(0, <[u8]>::len));
    buf.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut buf, &id);
    buf.extend_from_slice(b",\"method\":\"tools/call\",\"params\":{\"name\":");
    write_str(&mut buf, name);
    buf.extend_from_slice(b",\"arguments\":");
    let _ = serde_json::to_writer(&mut buf, arguments);
    if let Some(r) = retry.input_responses {
        buf.extend_from_slice(b",\"inputResponses\":");
        let _ = serde_json::to_writer(&mut buf, r);
    }
    if let Some(s) = retry.request_state {
        buf.extend_from_slice(b",\"requestState\":");
        // Escaped by serde_json exactly as received once decoded: the server gets its string
        // back byte for byte.
        let _ = serde_json::to_writer(&mut buf, s);
    }
    if let Some(meta) = meta {
        buf.push(b',');
        buf.extend_from_slice(meta);
    }
    buf.extend_from_slice(b"}}\n");
    buf
}

/// Write a JSON string: as it is when nothing in it needs an escape (the common case of method
/// and tool names), else escaped by serde_json.
fn write_str(buf: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        buf.push(b'"');
        buf.extend_from_slice(s.as_bytes());
        buf.push(b'"');
    } else {
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *buf, s);
    }
}

/// Encode the answer to a server request, echoing its id verbatim.
pub(crate) fn encode_answer(
    id: &RawValue,
    answer: Result<Option<serde_json::Value>, (i64, String)>,
) -> Vec<u8> {
    let mut buf = Vec::with_capacity(96);
    buf.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    buf.extend_from_slice(id.get().as_bytes());
    match answer {
        Ok(None) => buf.extend_from_slice(b",\"result\":{}"),
        Ok(Some(v)) => {
            buf.extend_from_slice(b",\"result\":");
            let _ = serde_json::to_writer(&mut buf, &v);
        }
        Err((code, message)) => {
            let _ = write!(buf, ",\"error\":{{\"code\":{code},\"message\":");
            let _ = serde_json::to_writer(&mut buf, &message);
            buf.push(b'}');
        }
    }
    buf.extend_from_slice(b"}\n");
    buf
}

/// A token bucket on tokio's clock (deterministic under paused time).
#[derive(Debug)]
struct TokenBucket {
    capacity: f64,
    per_second: f64,
    tokens: f64,
    last: Option<Instant>,
}

impl TokenBucket {
    fn new(capacity: u32, per_second: u32) -> Self {
        TokenBucket {
            capacity: f64::from(capacity.max(1)),
            per_second: f64::from(per_second),
            tokens: f64::from(capacity.max(1)),
            last: None,
        }
    }

    fn take(&mut self, now: Instant) -> bool {
        if let Some(last) = self.last {
            let dt = now.saturating_duration_since(last).as_secs_f64();
            self.tokens = (self.tokens + dt * self.per_second).min(self.capacity);
        }
        self.last = Some(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core() -> Core {
        Core::new(&Limits::default(), None)
    }

    fn answer_of(core: &Core, frame: &str) -> Option<serde_json::Value> {
        match core.on_frame(frame.as_bytes()) {
            Inbound::Answer(b) => Some(serde_json::from_slice(&b).unwrap()),
            _ => None,
        }
    }

    #[test]
    fn encode_is_one_compact_line() {
        let p = serde_json::json!({"name": "echo", "arguments": {"text": "a\nb"}});
        let f = encode(Some(7), "tools/call", Some(&p));
        assert_eq!(f.iter().filter(|b| **b == b'\n').count(), 1);
        assert_eq!(f.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&f).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":p})
        );
        let args = serde_json::json!({"text": "a\"b\\c\u{1}é", "n": [1, null]});
        let serde_json::Value::Object(args) = args else {
            unreachable!()
        };
        for name in ["echo", "we\"ird\\na\nme\u{7f}é"] {
            let f = encode_tool_call(9, name, &args);
            assert_eq!(f.iter().filter(|b| **b == b'\n').count(), 1);
            let v: serde_json::Value = serde_json::from_slice(&f).unwrap();
            let want = serde_json::json!({"jsonrpc":"2.0","id":9,"method":"tools/call",
                "params":{"name":name,"arguments":args}});
            assert_eq!(v, want);
            assert_eq!(f, encode(Some(9), "tools/call", Some(&want["params"])));
        }
        let n = encode::<serde_json::Value>(None, "notifications/initialized", None);
        assert_eq!(
            n,
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
        );
    }

    #[tokio::test]
    async fn exact_ids_and_one_of_result_or_error() {
        // (frame given the pending id, expected outcome, violations added)
        let cases: &[(&str, &str, u64)] = &[
            (r#"{"jsonrpc":"2.0","id":ID,"result":{"a":1}}"#, "ok", 0),
            (r#"{"jsonrpc":"2.0","id":ID,"result":null}"#, "ok", 0),
            (
                r#"{"jsonrpc":"2.0","id":ID,"error":{"code":-32000,"message":"no"}}"#,
                "rpc",
                0,
            ),
            (
                r#"{"jsonrpc":"2.0","id":ID,"result":{},"error":{"code":1,"message":""}}"#,
                "both",
                1,
            ),
            (
                r#"{"jsonrpc":"2.0","id":ID,"result":null,"error":null}"#,
                "both",
                1,
            ),
            (r#"{"jsonrpc":"2.0","id":ID}"#, "neither", 1),
            (r#"{"jsonrpc":"2.0","id":ID,"error":"bad"}"#, "malformed", 1),
            (r#"{"jsonrpc":"2.0","id":"ID","result":{}}"#, "pending", 1),
            (r#"{"jsonrpc":"2.0","id":ID.0,"result":{}}"#, "pending", 1),
            (r#"{"jsonrpc":"2.0","id":1000ID,"result":{}}"#, "pending", 1),
            (r#"{"jsonrpc":"1.0","id":ID,"result":{}}"#, "pending", 1),
            (r#"{"id":ID,"result":{}}"#, "pending", 1),
            (
                r#"{"jsonrpc":"2.0","id":ID,"id":ID,"result":{}}"#,
                "pending",
                1,
            ),
            (r#"[{"jsonrpc":"2.0","id":ID,"result":{}}]"#, "pending", 1),
        ];
        for (frame, expect, violations) in cases {
            let core = core();
            let mut ticket = core.register().unwrap();
            let frame = frame.replace("ID", &ticket.id.to_string());
            assert_eq!(core.on_frame(frame.as_bytes()), Inbound::Done, "{frame}");
            let got = ticket.rx.as_mut().unwrap().try_recv();
            let outcome = match got {
                Ok(Ok(_)) => "ok",
                Ok(Err(Error::Rpc { code: -32000, .. })) => "rpc",
                Ok(Err(Error::Violation(Violation::ResultAndError))) => "both",
                Ok(Err(Error::Violation(Violation::NeitherResultNorError))) => "neither",
                Ok(Err(Error::Violation(Violation::MalformedError))) => "malformed",
                Err(oneshot::error::TryRecvError::Empty) => "pending",
                other => panic!("{frame}: {other:?}"),
            };
            assert_eq!(outcome, *expect, "{frame}");
            assert_eq!(core.stats().violations, *violations, "{frame}");
        }
    }

    #[tokio::test]
    async fn late_answer_to_a_forgotten_request_is_ignored() {
        let core = core();
        let id = {
            let t = core.register().unwrap();
            t.id
        };
        core.on_frame(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).as_bytes());
        let s = core.stats();
        assert_eq!((s.violations, s.late_answers), (0, 1));
        // A second answer to an answered request is a violation.
        let mut t = core.register().unwrap();
        let f = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, t.id);
        core.on_frame(f.as_bytes());
        t.disarm();
        core.on_frame(f.as_bytes());
        assert_eq!(core.stats().violations, 1);
    }

    #[tokio::test]
    async fn server_requests_get_ping_or_method_not_found() {
        let cases: &[(&str, serde_json::Value)] = &[
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
                serde_json::json!({"jsonrpc":"2.0","id":5,"result":{}}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage","params":{}}"#,
                serde_json::json!({"jsonrpc":"2.0","id":"s-1","error":{"code":-32601,"message":"Method not found"}}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"roots/list"}"#,
                serde_json::json!({"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"Method not found"}}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"hi"}}"#,
                serde_json::json!({"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"whatever/else"}"#,
                serde_json::json!({"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"Method not found"}}),
            ),
        ];
        for (frame, want) in cases {
            assert_eq!(answer_of(&core(), frame).as_ref(), Some(want), "{frame}");
        }
        // Notifications are never answered.
        assert_eq!(
            core().on_frame(br#"{"jsonrpc":"2.0","method":"ping"}"#),
            Inbound::Done
        );
        // An id that is neither a string nor an integer gets no answer and is counted.
        let c = core();
        assert_eq!(
            c.on_frame(br#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#),
            Inbound::Done
        );
        assert_eq!(c.stats().violations, 1);
    }

    #[tokio::test]
    async fn garbage_is_classified() {
        for g in ["hello", "{not json", "42", "\"str\"", "[1,"] {
            assert_eq!(core().on_frame(g.as_bytes()), Inbound::Garbage, "{g}");
        }
        assert_eq!(core().on_frame(b"   "), Inbound::Done);
    }

    #[tokio::test(start_paused = true)]
    async fn inbound_requests_are_rate_limited() {
        let limits = Limits {
            inbound_burst: 10,
            inbound_per_second: 5,
            ..Limits::default()
        };
        let core = Core::new(&limits, None);
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let answered = (0..100)
            .filter(|_| matches!(core.on_frame(ping), Inbound::Answer(_)))
            .count();
        assert_eq!(answered, 10);
        assert_eq!(core.stats().rate_limited, 90);
        tokio::time::advance(std::time::Duration::from_secs(1)).await;
        let answered = (0..100)
            .filter(|_| matches!(core.on_frame(ping), Inbound::Answer(_)))
            .count();
        assert_eq!(answered, 5);
    }

    #[tokio::test]
    async fn list_changed_is_a_signal() {
        let core = core();
        let mut rx = core.list_changed();
        core.on_frame(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
        assert!(rx.has_changed().unwrap());
        assert_eq!(*rx.borrow_and_update(), 1);
    }

    #[tokio::test]
    async fn close_fails_pending_and_refuses_new() {
        let core = core();
        let mut t = core.register().unwrap();
        core.close(CloseReason::ServerGone);
        let r = t.rx.as_mut().unwrap().try_recv().unwrap();
        assert!(matches!(r, Err(Error::Closed(CloseReason::ServerGone))));
        assert!(core.register().err().unwrap().is_closed());
    }

    /// The message reader as first written (derived), to check the hand-written one against.
    #[derive(Deserialize)]
    struct Derived<'a> {
        #[serde(default, borrow)]
        jsonrpc: Option<&'a RawValue>,
        #[serde(default, borrow, deserialize_with = "present")]
        id: Option<&'a RawValue>,
        #[serde(default, borrow)]
        method: Option<Cow<'a, str>>,
        #[serde(default, borrow, deserialize_with = "present")]
        params: Option<&'a RawValue>,
        #[serde(default, borrow, deserialize_with = "present")]
        result: Option<&'a RawValue>,
        #[serde(default, borrow, deserialize_with = "present")]
        error: Option<&'a RawValue>,
    }

    fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
        <&RawValue as Deserialize>::deserialize(d).map(Some)
    }

    /// What a reader made of a frame, comparable across the two readers.
    type Reading = Result<(bool, [Option<String>; 5]), &'static str>;

    fn classify<T>(
        r: serde_json::Result<T>,
        view: impl FnOnce(T) -> (bool, [Option<String>; 5]),
    ) -> Reading {
        match r {
            Ok(m) => Ok(view(m)),
            Err(e) if e.is_syntax() || e.is_eof() => Err("garbage"),
            Err(_) => Err("malformed"),
        }
    }

    fn both_readings(frame: &[u8]) -> (Reading, Reading) {
        let raw = |r: Option<&RawValue>| r.map(|r| r.get().to_owned());
        let old = classify(serde_json::from_slice::<Derived<'_>>(frame), |m| {
            (
                m.jsonrpc.map(RawValue::get) == Some("\"2.0\""),
                [
                    raw(m.id),
                    m.method.map(Cow::into_owned),
                    raw(m.params),
                    raw(m.result),
                    raw(m.error),
                ],
            )
        });
        let parsed = match std::str::from_utf8(frame) {
            Ok(text) => serde_json::from_str::<RawMessage<'_>>(text),
            Err(_) => serde_json::from_slice::<RawMessage<'_>>(frame),
        };
        let new = classify(parsed, |m| {
            (
                m.version_ok,
                [
                    raw(m.id),
                    m.method.map(Cow::into_owned),
                    raw(m.params),
                    raw(m.result),
                    raw(m.error),
                ],
            )
        });
        (old, new)
    }

    #[test]
    fn message_reader_agrees_with_the_derived_one() {
        let frames: &[&[u8]] = &[
            br#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#,
            br#"{"jsonrpc":"2\u002e0","id":1,"result":{}}"#,
            br#"{"jsonrpc":null,"id":1,"result":{}}"#,
            br#"{"jsonrpc":"\ud800","id":1,"result":{}}"#,
            br#"{"jsonrpc":2.0,"id":1,"result":{}}"#,
            br#"{"jsonrpc":["2.0"],"id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"error":null,"error":null}"#,
            br#"{"jsonrpc":"2.0","method":"a","method":"b"}"#,
            br#"{"jsonrpc":"2.0","method":null,"method":"b"}"#,
            br#"{"jsonrpc":"2.0","method":7}"#,
            br#"{"jsonrpc":"2.0","method":{"x":1}}"#,
            br#"{"jsonrpc":"2.0","method":"p\u0069ng","id":"a"}"#,
            br#"{"jsonrpc":"2.0","m\u0065thod":"ping","id":"a"}"#,
            br#"{"jsonrpc":"2.0","id":null,"result":null,"params":null}"#,
            br#"{"jsonrpc":"2.0","x":[1,{"y":"z"}],"id":3,"result":[]}"#,
            b"{\"jsonrpc\":\"2.0\",\"x\":\"\xff\",\"id\":3,\"result\":1}",
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"\xff\"}",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"\xc3\xa9\"}",
            br#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":"\ud800"}"#,
            br#"{}"#,
            br#"{"a":1e999}"#,
        ];
        for f in frames {
            let (old, new) = both_readings(f);
            assert_eq!(old, new, "{}", String::from_utf8_lossy(f));
        }
    }

    fn arb_frame() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let key = prop_oneof![
            Just("jsonrpc"),
            Just("id"),
            Just("method"),
            Just("params"),
            Just("result"),
            Just("error"),
            Just("other"),
        ];
        let value = prop_oneof![
            Just("\"2.0\"".to_owned()),
            Just("null".to_owned()),
            Just("1".to_owned()),
            Just("-1.5e3".to_owned()),
            Just("\"ping\"".to_owned()),
            Just("\"2\\u002e0\"".to_owned()),
            Just("{\"a\":[true,false]}".to_owned()),
            Just("[]".to_owned()),
            Just("\"\u{e9}\"".to_owned()),
            Just("\"\\ud800\"".to_owned()),
        ];
        (
            proptest::collection::vec((key, value), 0..7),
            any::<u8>(),
            any::<usize>(),
        )
            .prop_map(|(members, byte, at)| {
                let body: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                let mut f = format!("{{{}}}", body.join(",")).into_bytes();
                // Now and then, one arbitrary byte replaced (invalid UTF-8, broken syntax).
                if byte > 0xc0 {
                    let at = at % f.len();
                    f[at] = byte;
                }
                f
            })
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256)) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
            rt.block_on(async { let _ = core().on_frame(&bytes); });
        }

        #[test]
        fn message_reader_agrees_on_generated_frames(frame in arb_frame()) {
            let (old, new) = both_readings(&frame);
            proptest::prop_assert_eq!(old, new, "{}", String::from_utf8_lossy(&frame));
        }
    }
}
