//! Running acts: may a row run, positional binding, and the executor.
//!
//! [`may_run`] is the one answer to "may this row run now". The executor is reached only from a
//! turn; there is no IPC method or page route that calls it. It re-reads the row and asks
//! [`may_run`], runs a destructive row only with a [`Confirmation`], sends rows with
//! `cmd = ["mcp", …]` to the connection manager (only the tool name and the bound arguments
//! leave Maven), and runs local acts by exec — argv, no shell — with a timeout and an output
//! cap. "mcp" is never executed as a program. Every execution,
//! whatever its outcome, lands in `acts_log`.

mod bind;
mod executor;
mod policy;
mod process;
mod ran;
pub mod schema;

pub use bind::{bind_positional, BindError};
pub use executor::{Executor, InputStep, Next};
pub use policy::{may_run, Approvals, LocalAct, Refusal};
pub use process::run_argv;
pub use ran::{cut_text, Cut, ExecError, Ran, RESULT_CAP};
