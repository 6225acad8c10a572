//! feeds crate.
