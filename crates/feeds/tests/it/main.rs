//! Integration tests of the feeds crate.

mod fixtures;
mod gofeed;
mod props;
