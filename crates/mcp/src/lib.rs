//! mcp: a hardened Model Context Protocol client: JSON-RPC 2.0 core, stdio and Streamable HTTP
//! transports, and the client. It knows nothing of the store or the page.
//!
//! # Using the client
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcp::Error> {
//! use std::collections::BTreeMap;
//! let config = mcp::ServerConfig {
//!     protocol: mcp::Protocol::Auto,
//!     name: "files".to_owned(),
//!     transport: mcp::Transport::Stdio {
//!         command: "my-mcp-server".to_owned(),
//!         args: vec![],
//!         env: BTreeMap::new(),
//!     },
//!     timeouts: mcp::McpTimeouts::default(),
//! };
//! let client = mcp::Client::connect(&config, mcp::ClientOptions::default()).await?;
//! let listing = client.list_tools().await?; // complete, or an error
//! for tool in &listing.tools {
//!     println!("{} {}", tool.name, tool.fingerprint());
//! }
//! let mut args = serde_json::Map::new();
//! args.insert("text".to_owned(), "hi".into());
//! let outcome = client.call_tool("echo", args).await?;
//! println!("{}", outcome.text);
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! [`Client::connect`] dials and runs the handshake; [`Client::request`] and [`Client::notify`]
//! send any method (for test clients); [`ClientOptions::capabilities`] and
//! [`ClientOptions::handler`] let a test client declare capabilities and answer server requests
//! (the daemon never sets a handler: every server request but `ping` gets -32601, and a legacy
//! `elicitation/create` goes to the owner during [`Client::start_owner_call`], else is declined).
//!
//! # Bounds and cancel safety
//!
//! Every request has a deadline ([`McpTimeouts`]); on expiry `notifications/cancelled` is sent
//! and the connection is dropped ([`CloseReason::RequestTimedOut`]). Every method of
//! [`Client`] may be dropped at any await point without leaving a pending entry or half a
//! frame behind. The stdio reader holds at most [`Limits::frame_cap`] + 1 bytes of a line
//! ([`Stats::peak_line_bytes`]); a longer line closes the connection
//! ([`CloseReason::FrameTooLarge`]). Listings stop at [`Limits::page_cap`] pages. Inbound
//! requests and notifications pass a token bucket ([`Limits::inbound_burst`],
//! [`Limits::inbound_per_second`]).
//!
//! Pure functions over tools live in [`tools`]: [`tools::fingerprint`] (A-7) and the reduction
//! of results to text. What Maven does with a tool (verdicts, local names) is not protocol: the
//! `allowlist` crate decides it.
//!
//! # How it works
//!
//! `rpc::Core` holds one connection's JSON-RPC state: an integer id counter, the pending table
//! keyed
//! by exact id, the recently given-up ids (their late answers are ignored, not counted), violation
//! counters, a token bucket for inbound requests, and the `list_changed` signal. Every frame from
//! either transport goes through `Core::on_frame`; server requests other than `ping` get -32601,
//! except a legacy `elicitation/create`: held for the owner while a call made for the owner is in
//! flight (`held.rs`: the call goes on in its own task, its deadline stopped while the question
//! waits, at most two minutes; a question dropped unanswered is declined), else declined.
//! The modern era's error codes get variants of their own there (`UnsupportedVersion` with the
//! server's `supported` list, capped; `HeaderMismatch`).
//! `stdio.rs` runs the server in its own process group with a minimal environment; a reader task
//! reads lines with `take(cap + 1).read_until`, so a line over the 4 MiB frame cap is never
//! assembled and ends the connection; a supervisor owns the child (stdin closed → wait → SIGTERM to
//! the group → wait → SIGKILL) and always reaps it. `http.rs` runs each exchange inside the
//! caller's future through the server's own webfetch door: JSON or SSE answers (its own SSE parser,
//! capped per event), server requests answered mid-stream, a dropped SSE stream resumed with
//! `Last-Event-ID`, one re-initialize on session loss, and optionally the standalone GET stream;
//! in the modern era, no session, the request metadata mirrored into headers (`Mcp-Method`,
//! `Mcp-Name`, `Mcp-Param-*`), and the JSON-RPC error in a 4xx body read as the answer.
//!
//! **Eras.** `era.rs` (a leaf) holds the owner's choice (`Protocol`: the block's `protocol` key,
//! `auto` by default), the per-request `_meta` member (protocol version, capabilities, client
//! info — written once per connection and spliced into every request's params) and the version
//! rule. On connect, `auto` sends `server/discover` first: a discover result listing 2026-07-28
//! makes the connection modern; `UnsupportedProtocolVersion` listing it gets exactly one retry
//! (a second refusal is an error, never a loop); a server listing only legacy versions, or
//! answering with anything that is not a recognised modern answer (-32601, `{}`, a 4xx without a
//! modern error body, silence until the deadline — a probe's deadline does not drop the
//! connection), falls back to `initialize`; no version in common is an error naming both lists.
//! A pinned era never falls back. The choice and how it was made are in `ServerInfo::{era,
//! chosen}`, which status and inspect show. The modern health check is `server/discover` (the
//! era has no `ping`); a server that declares `tools.listChanged` gets one `subscriptions/listen`
//! stream opted into `toolsListChanged` only, re-opened with a jittered `backoff::Backoff` (1 s
//! doubling to 60 s), its notifications bounded by the inbound rate limit and the frame cap. A listing's `ttlMs` sets
//! the next re-listing, clamped to [1 minute, `refresh`].
//! `headers.rs` validates a tool's `x-mcp-header` declarations (token names, unique
//! case-insensitively, primitive types, reachable through `properties` only); over modern HTTP a
//! tool with an invalid one is left out of the listing (`ToolList::rejected`, with the reason)
//! and the valid ones become `Mcp-Param-*` headers of its calls, values plain or in the Base64
//! sentinel. `input.rs` reads an `input_required` result (at most 16 input requests, a
//! `requestState` of at most 64 KiB echoed byte for byte, at most 8 rounds): roots get an empty
//! list, sampling is declined (left unanswered; a server that asks only for sampling twice gets an
//! error), elicitations become `Ask`s — form fields, a URL shown as text, or a secret (a field
//! named like a password, token or key) declined unseen. `Client::start_call` returns them as
//! `CallStep::Input` for the owner, `Client::resume_call` retries with a new id;
//! `Client::call_tool` answers them with the client's handler, else declines.
//! `handshake.rs` is the leaf both transports and the client share: the `initialize` request and
//! the reading of its result, and the reading of a `server/discover` result. `config.rs` holds the
//! connection types (`Transport`, `ServerConfig`, `Limits`, `ClientOptions`). `tools.rs` holds the
//! pure functions over tools: the fingerprint and results reduced to text (what Maven does with a
//! tool is the allowlist's). Schemas are kept as received, any 2020-12 keyword included (the
//! fingerprint covers them); nothing in Maven dereferences a network `$ref`.
//!
//! The stdio `tools/call` hot path: a caller takes an id from the pending table (a
//! `std::sync::Mutex` held for one insert; ids are hashed by a multiply, since the table only ever
//! holds ids the client issued), encodes the frame with `rpc::encode_tool_call` (the params
//! written member by member), and writes the whole frame to the child's stdin itself with one
//! non-blocking write; only when the pipe is full, or frames are already queued, does the frame (or
//! its unwritten rest) go to the writer task. The send is synchronous, so a dropped caller never
//! leaves half a frame. The caller then waits on a oneshot under its deadline. The reader task
//! reads one bounded line, checks it for UTF-8 once, and `Core::on_frame` reads the envelope with a
//! hand-written serde visitor: `id`, `result` and `error` stay borrowed raw JSON, the id must match
//! exactly, and the raw result goes through the oneshot. `ToolOutcome::from_result` then reads it
//! in one pass into borrowed views (text borrowed from the frame, other blocks read through and
//! dropped).
//!
//! The manager gives each enabled server a task of its own that dials (never in start-up), lists,
//! pings and re-dials; a failed dial backs off (a `backoff::Backoff`, jittered) between
//! `ManagerOptions`' bounds. No lock is held
//! across an await: `Manager::status` and calls to other servers never wait on a slow one. Complete
//! listings leave as `Discovery` events on a channel; what they mean for the allowlist is the
//! daemon's business.
//!
//! `mcp::Error::was_sent` says whether a request may have reached the server (false only when it
//! certainly did not: spawn, configuration, no connection); `Client::dial` is `connect` that also
//! gives back the stderr tail of a server that died during the handshake (the stderr reader drains
//! what is there for a moment when the connection ends), which the manager keeps for status.
//! `mcp` reaches OAuth through the `oauth` crate's narrow interface, in one place (`http.rs`,
//! `HttpLink::send`): `OAuth::headers_for` (the `Authorization` and `DPoP` headers of a request)
//! and `OAuth::on_answer` (a response → `Verdict::SendAgain` with new headers, `Verdict::Take`,
//! or an `AuthError`, which `mcp::Error::Auth` carries: `needs authorization` among them).

// This crate reads untrusted bytes: a failure is an error value, never a panic.
#![warn(clippy::expect_used, clippy::panic)]

mod client;
mod config;
mod era;
mod error;
mod handshake;
pub mod headers;
mod held;
mod http;
mod input;
mod link;
pub mod manager;
pub mod names;
mod rpc;
mod secret_words;
mod stdio;
mod text;
pub mod tools;

pub use client::{Client, Lister, ToolList, MIN_TTL};
pub use config::{
    ClientOptions, Limits, McpTimeouts, ServerConfig, ServerRequestHandler, Transport,
};
pub use era::{Era, Protocol, MODERN_VERSION};
pub use error::{CloseReason, Error, Incomplete, Violation};
pub use handshake::{ServerInfo, PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS};
pub use held::OWNER_WINDOW;
pub use input::{AnswerError, Ask, AskKind, CallStep, Field, FieldType, InputNeeded};
pub use manager::{
    Applied, Discovery, Managed, Manager, ManagerOptions, ServerState, ServerStatus,
};
pub use rpc::Stats;
pub use tools::{Tool, ToolOutcome};

/// Entry points for the fuzz targets (R-3). Not part of the stable API.
#[doc(hidden)]
#[allow(
    clippy::panic,
    reason = "a fuzz oracle reports a disagreement by panicking"
)]
pub mod fuzzing {
    /// Split arbitrary bytes into frames with the stdio line framer (a small cap) and hand each
    /// to the JSON-RPC core. Must not panic; the framer must never hold more than the cap + 1.
    pub fn line_framer(data: &[u8]) {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
        else {
            return;
        };
        rt.block_on(async {
            let core = crate::rpc::Core::new(&crate::Limits::default(), None);
            let mut rd = tokio::io::BufReader::with_capacity(16, data);
            let mut line = Vec::new();
            while let Ok(Some(end)) = crate::stdio::read_frame(&mut rd, &mut line, 64).await {
                assert!(line.len() <= 65, "the framer held more than its cap");
                let _ = core.on_frame(&line);
                if end != crate::stdio::FrameEnd::Newline {
                    break;
                }
            }
        });
    }

    /// The JSON-RPC message classifier on whole frames of any length (no framer cap): the
    /// input is split at newlines and each piece goes to the core, which has three requests
    /// pending (ids 1, 2, 3) so that answers to them, duplicates and wrong ids are all reached.
    /// Must not panic; an answer the core sends back must be one JSON object on one line.
    pub fn jsonrpc(data: &[u8]) {
        let core = crate::rpc::Core::new(&crate::Limits::default(), None);
        let tickets: Vec<_> = (0..3).filter_map(|_| core.register().ok()).collect();
        for frame in data.split(|b| *b == b'\n') {
            if let crate::rpc::Inbound::Answer(bytes) = core.on_frame(frame) {
                let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
                assert!(!body.contains(&b'\n'), "an answer spans lines");
                assert!(
                    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(body)
                        .is_ok(),
                    "an answer is not a JSON object"
                );
            }
        }
        drop(tickets);
    }

    const RAW_TOKEN: &str = "$serde_json::private::RawValue";

    /// Whether any object in `json` (valid JSON) has a member named `RAW_TOKEN`, escapes
    /// decoded.
    fn names_raw_token(json: &str) -> bool {
        use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
        struct Found(bool);
        impl<'de> Deserialize<'de> for Found {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(V)
            }
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Found;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Found, E> {
                Ok(Found(false))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Found, E> {
                Ok(Found(false))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Found, E> {
                Ok(Found(false))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Found, E> {
                Ok(Found(false))
            }
            fn visit_str<E>(self, _: &str) -> Result<Found, E> {
                Ok(Found(false))
            }
            fn visit_unit<E>(self) -> Result<Found, E> {
                Ok(Found(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Found, A::Error> {
                let mut found = false;
                while let Some(Found(f)) = a.next_element()? {
                    found |= f;
                }
                Ok(Found(found))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Found, A::Error> {
                let mut found = false;
                while let Some(k) = a.next_key::<std::borrow::Cow<'de, str>>()? {
                    found |= k == RAW_TOKEN;
                    let Found(f) = a.next_value()?;
                    found |= f;
                }
                Ok(Found(found))
            }
        }
        // Deep input the generic reading refuses anyway counts as not found.
        serde_json::from_str::<Found>(json).is_ok_and(|Found(f)| f)
    }

    /// The `tools/call` result reader on arbitrary JSON (the first byte picks the text cap).
    /// Must not panic; the text never passes the cap; and where the result is an object with a
    /// non-empty `content` array, the one-pass borrowed reading agrees with the reduction of a
    /// generic `serde_json::Value` reading (text, truncation, `isError`).
    pub fn tool_result(data: &[u8]) {
        let Some((&c, json)) = data.split_first() else {
            return;
        };
        let cap = usize::from(c);
        let Ok(raw) = serde_json::from_slice::<&serde_json::value::RawValue>(json) else {
            return;
        };
        let Ok(out) = crate::ToolOutcome::from_result(raw, cap) else {
            return;
        };
        assert!(out.text.len() <= cap, "the text passed the cap");
        // serde_json's own raw-value token makes the generic reading, not this one, the odd one
        // out (see the test named after it in `tools`): no oracle for such input.
        if names_raw_token(raw.get()) {
            return;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(raw.get()) else {
            panic!("the borrowed reading accepted what a generic reading refuses");
        };
        if let Some(blocks) = v.get("content").and_then(serde_json::Value::as_array) {
            if !blocks.is_empty() {
                let (text, truncated) = crate::tools::reduce_content(blocks, cap);
                assert_eq!(
                    (&out.text, out.truncated),
                    (&text, truncated),
                    "readings differ"
                );
            }
        }
        let flagged = v.get("isError").and_then(serde_json::Value::as_bool) == Some(true);
        assert_eq!(out.is_error, flagged, "isError read differently");
    }

    /// Feed arbitrary bytes to the SSE parser in chunks whose sizes come from the data. Must
    /// not panic; no event may exceed the cap.
    pub fn sse(data: &[u8]) {
        let mut p = crate::http::SseParser::new(64);
        let mut out = Vec::new();
        let step = usize::from(data.first().copied().unwrap_or(1)).max(1);
        for chunk in data.chunks(step) {
            if p.feed(chunk, &mut out).is_err() {
                break;
            }
        }
        assert!(out.iter().all(|e| e.len() <= 64), "an event passed the cap");
    }
}
