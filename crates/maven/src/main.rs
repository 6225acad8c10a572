//! The `maven` binary: the daemon and the command line that talks to it.
//!
//! Exit codes of every command (SPEC I-4): 0 success, 1 the command failed, 2 a usage or
//! configuration error or no daemon running, 3 refused by policy.

#[allow(dead_code, reason = "the executor is reached from turns")]
mod acts;
mod allowlist;
mod cli;
mod cmd;
mod config;
mod daemon;
mod ipc;
mod json;
mod poll;
mod web;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
