//! The `maven` binary: the daemon and the command line that talks to it.
//!
//! Exit codes of every command (SPEC I-4): 0 success, 1 the command failed, 2 a usage or
//! configuration error or no daemon running, 3 refused by policy.

mod acts;
mod allowlist;
#[cfg(test)]
mod allowlist_model;
mod cli;
mod cmd;
mod daemon;
mod ipc;
mod json;
mod poll;
mod turns;
mod web;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
