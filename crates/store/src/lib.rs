//! store crate.
