//! The `maven` binary: the daemon and the command line that talks to it.
//!
//! Exit codes of every command (I-4): 0 success, 1 the command failed, 2 a usage or
//! configuration error or no daemon running, 3 refused by policy.

#![warn(clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod cli;
mod cmd;
mod exit;
mod ipc;

use std::process::ExitCode;

fn main() -> ExitCode {
    // The sandbox launcher runs before anything else: single-threaded, no runtime, no
    // logging. It returns only when the sandbox could not be entered.
    if let Some(code) = sandbox::hidden(std::env::args_os()) {
        return code;
    }
    cli::main()
}
