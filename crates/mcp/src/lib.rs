//! mcp crate.
