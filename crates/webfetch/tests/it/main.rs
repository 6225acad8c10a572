//! Integration tests of webfetch, on loopback only (127.0.0.0/8).

// Test code: an unwrap that fails is a failing test, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod addr_table;
mod body;
mod guard;
mod keep_alive;
mod props;
mod proxy_env;
mod rate_limit;
mod redirects;
mod relay;
mod support;
mod tls;
mod url_table;
