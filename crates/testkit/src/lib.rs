//! Test servers and fixture helpers for Maven tests.
pub mod authserver;
