//! Maven's IPC vocabulary, shared by the daemon, the command line and the page: no IO.
//!
//! - [`protocol`] — where the socket is, how a message is framed (one JSON value per line,
//!   bounded in size) and the JSON-RPC 2.0 objects, the error codes among them ([`RpcError`]).
//! - [`methods`] — every method typed both ways: a [`Request`] read from the wire in one place,
//!   and the [`Reply`] each gives, tagged by its [`Method`]. The daemon reads a `Request` and
//!   writes a `Reply`; the command line writes the `Request` and reads the `Reply` back with the
//!   same types.
//! - [`views`] — the typed shape of every reply and page answer (I-3), which the `--json` of the
//!   commands that ask the daemon prints.
//!
//! There is deliberately no method that calls a tool or enables one: mutation has exactly one
//! path (a turn with its confirmation) and enabling has exactly one path (the page with
//! step-up).

#![warn(clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

pub mod methods;
pub mod protocol;
pub mod views;

pub use methods::{Method, Reply, Request};
pub use protocol::RpcError;
