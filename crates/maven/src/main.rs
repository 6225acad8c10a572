//! The `maven` binary: the daemon and the command line that talks to it.
//!
//! Exit codes of every command (I-4): 0 success, 1 the command failed, 2 a usage or
//! configuration error or no daemon running, 3 refused by policy.

#![warn(clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod churn;
mod cli;
mod cmd;
mod confine;
mod daemon;
mod datadir;
mod exit;
mod ipc;
mod json;
mod logsink;
mod netdoor;
mod notify;
mod oauth;
mod page_host;
mod phrases;
mod policy;
mod reload;
mod voice;

use std::process::ExitCode;

fn main() -> ExitCode {
    // The sandbox launcher runs before anything else: single-threaded, no runtime, no
    // logging. It returns only when the sandbox could not be entered.
    if let Some(code) = sandbox::hidden(std::env::args_os()) {
        return code;
    }
    cli::main()
}

#[cfg(test)]
mod testing {
    //! The owner's side, for the unit tests.

    use store::{Store, ToolChange, ToolRow, ToolState};

    /// Brings a row to `to` the way the daemon does: the owner (with a step-up) enables and
    /// disables, a listing re-offers and withdraws.
    pub(crate) async fn set_state(
        s: &Store,
        name: &str,
        to: ToolState,
        reason: &str,
    ) -> Result<ToolRow, store::Error> {
        let (name, reason) = (name.to_owned(), reason.to_owned());
        let change = match to {
            ToolState::Enabled | ToolState::Disabled => {
                let step = stepup::testing::step_up();
                return s.owner_sets_tool_state(&name, to, &step, &reason).await;
            }
            ToolState::Proposed => ToolChange::Reoffer { name, reason },
            ToolState::Withdrawn => ToolChange::Withdraw { name, reason },
        };
        let (mut rows, ()) = s.apply_listing(move |_| (vec![change], ())).await?;
        Ok(rows.remove(0))
    }
}
