//! Integration tests of the feeds crate.

#![allow(clippy::disallowed_macros, reason = "tests print what they measured")]
// Test helpers outside #[test] functions unwrap fixture IO freely.
#![allow(clippy::unwrap_used)]

mod classes;
mod fixtures;
mod gofeed;
mod props;
