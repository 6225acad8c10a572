//! Integration tests of the `maven` binary: real daemon processes on temporary data
//! directories, talked to through the real CLI and the real socket.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly by design")]
#![allow(clippy::disallowed_macros, reason = "tests print what they measured")]

mod support;

mod acts;
mod cli;
mod completions;
mod conversations;
mod crash;
mod daemon;
mod doctor;
mod feeds;
mod first_hour;
mod hardening;
mod invariants;
mod logs;
mod mcp;
mod model;
mod network;
mod notify;
mod npm_install;
mod oauth;
mod oauth_peers;
mod readme_demo;
mod reload;
mod sandboxing;
mod sentences;
mod service;
mod shared_code;
mod soak;
mod turns;
mod untrusted_text;
mod voice;
mod web;
