//! webfetch crate.
