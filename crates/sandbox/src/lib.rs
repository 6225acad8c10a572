//! The sandbox of a local (stdio) MCP server (X-1..X-4).
//!
//! Three parts:
//! - [`Policy`]: what the owner wrote in a block's `sandbox` key (or the default).
//! - [`Plan`]: the policy resolved against one server and this machine — the program that is
//!   executed, every directory it may read, execute and write, its private directory, what is
//!   hidden, its limits. The daemon resolves it ([`Plan::resolve`]); `maven mcp inspect` and
//!   status show it ([`Plan::trust`]).
//! - the launcher ([`launch`]): the `maven` binary re-executed as
//!   `maven __sandbox-exec PLAN -- COMMAND ARGS…`, single-threaded, before any runtime. It
//!   enters new user, mount, IPC (and, without network, network) namespaces, hides the data
//!   directory under an empty tmpfs, sets the limits, applies a Landlock ruleset (files, TCP,
//!   signal and abstract-socket scoping) and, for a daemon running as root, a seccomp filter,
//!   drops every capability and executes the server. Any step that fails stops the launch: the
//!   server never runs unsandboxed ([`probe`] tells the daemon beforehand what is missing).

// Policy code: a failure is an error value, never a panic. Tests may.
#![warn(clippy::expect_used, clippy::panic)]

mod launch;
mod plan;
mod shared;

pub use launch::{bounds, close_inherited, group, hidden, init, launch, probe, Missing};
pub use plan::{
    prepare, private_dir, Context, Grant, Plan, PlanError, Policy, Why, CREDENTIALS, DEFAULT_DISK,
    DEFAULT_MEMORY, DEFAULT_PROCESSES, DEVICES, GROUP_ARG, HIDDEN, INIT_ARG, LAUNCHER_ARG,
    MAX_PROCESSES, MIN_DISK, MIN_MEMORY, SYSTEM_READ,
};
pub use shared::{own_code, shared_code, SHARED_CODE};
