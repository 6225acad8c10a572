//! Integration tests of the feeds crate.
// Test helpers outside #[test] functions unwrap fixture IO freely.
#![allow(clippy::unwrap_used)]

mod classes;
mod fixtures;
mod gofeed;
mod props;
