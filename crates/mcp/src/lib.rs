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
mod rpc;
mod secret_words;
mod stdio;
mod text;
pub mod tools;

pub use client::{Client, ToolList, MIN_TTL};
pub use config::{
    ClientOptions, Limits, McpTimeouts, ServerConfig, ServerRequestHandler, Transport,
};
pub use era::{Era, Protocol, MODERN_VERSION};
pub use error::{CloseReason, Error, Incomplete, Violation};
pub use handshake::{ServerInfo, PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS};
pub use held::OWNER_WINDOW;
pub use input::{Ask, AskKind, CallStep, Field, InputNeeded};
pub use manager::{Discovery, Managed, Manager, ManagerOptions, ServerState, ServerStatus};
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
