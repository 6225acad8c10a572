//! The wyoming crate against real Wyoming programs: faster-whisper, Piper and openWakeWord
//! (installed by `scripts/install-test-peers.sh`, offline, with the models PyPI packages carry),
//! the reference Python library as a client of `wyoming::server::serve`, Debian's recordings of
//! people reading, and scripted hostile services. Every connection is to 127.0.0.1 or a Unix
//! socket.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly by design")]
#![allow(clippy::disallowed_macros, reason = "tests print what they measured")]

mod engines;
mod hostile;
mod python_client;
mod support;
