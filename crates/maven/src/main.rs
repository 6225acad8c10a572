//! The `maven` binary: daemon and CLI.
fn main() {}
