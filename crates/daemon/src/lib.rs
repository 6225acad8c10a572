//! Maven's daemon (`maven daemon`): the wiring of its services and everything that runs in it
//! but the turn pipeline, the page and the vocabulary, which are crates of their own.
//!
//! [`main`] runs the daemon: the data directory's lock, the store, the services (the MCP
//! servers, the feed poller, the page through its host [`page_host`], the voice listener, the
//! turn pipeline), IPC's server side, the sandbox's network door ([`netdoor`]), the task tree
//! and shutdown. The command line (the `maven` binary) names a few of its modules for the
//! commands that work without a running daemon: the data directory's lock ([`datadir`]), a
//! server's launch and sandbox plan ([`confine`]), its OAuth ([`oauth`]), the owner's sentence
//! files ([`phrases`]), what the configuration approves ([`policy`]) and the views made of the
//! store's and the configuration's values ([`json`]).

#![warn(clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod churn;
pub mod confine;
pub mod datadir;
pub mod ipc;
pub mod json;
mod logsink;
pub mod netdoor;
mod notify;
pub mod oauth;
mod page_host;
pub mod phrases;
pub mod policy;
mod reload;
mod voice;
mod wiring;

pub use wiring::{main, reads, Failed, LogFormat, Options, DB_NAME};

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
