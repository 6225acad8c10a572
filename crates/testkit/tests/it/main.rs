//! The mcp client against `testkit-mcp`, well-behaved and hostile, over stdio and Streamable
//! HTTP. The server binary is this package's own, found through `CARGO_BIN_EXE_testkit-mcp`.
//!
//! Each hostile test asserts the specific outcome, under short deadlines; none asserts on time.

#![allow(
    clippy::disallowed_methods,
    reason = "the client's own tests call tools directly, with no daemon"
)]
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly by design")]

mod support;

mod http;
mod legacy_ask;
mod manager;
mod modern;
mod oauth;
mod resources;
mod stdio;
