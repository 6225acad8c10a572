//! Maven's allowlist policy: the rules that decide what may run, in one place.
//!
//! - [`catalogue`]: what Maven does with a tool a server offers (a [`Verdict`]), and the limits
//!   every reader of tools shares ([`DEFAULT_MAX_TOOLS`], [`DESCRIPTION_CAP`], the name rules).
//! - [`naming`]: the one local-naming algorithm, used by the daemon and by `maven mcp inspect`.
//! - [`reconcile`]: a complete listing of one server becomes a plan of row changes, which the
//!   store applies in one transaction. Discovery only ever proposes.
//! - [`run`]: may a row run ([`may_run`], the one answer), positional binding and the
//!   [`Executor`].
//! - [`confirm`]: a destructive act runs only with a [`Confirmation`], which only the owner's
//!   "yes" to an earlier [`Request`] produces.
//!
//! Enabling and disabling are not here: only `store::Store::owner_sets_tool_state` changes a
//! row's state for the owner, and it takes a `stepup::StepUp`, which only verifying the owner
//! produces.

#![warn(clippy::expect_used, clippy::panic)]

pub mod catalogue;
pub mod confirm;
pub mod naming;
pub mod reconcile;
pub mod run;
pub mod waiting;

pub use catalogue::{verdicts, Verdict, DEFAULT_MAX_TOOLS, DESCRIPTION_CAP};
pub use confirm::{confirmed_by, Answer, Args, Confirmation, Request, CONFIRM_WINDOW};
pub use naming::{local_name, local_names};
pub use reconcile::{reconcile, Reconciled, ServerPolicy};
pub use run::{
    bind_positional, cut_text, may_run, Approvals, BindError, Cut, ExecError, Executor, InputStep,
    LocalAct, Ran, Refusal, RESULT_CAP,
};
pub use store::{ToolKind, ToolRow, ToolState};
pub use waiting::Waiting;

#[cfg(test)]
mod model_tests;

#[cfg(test)]
pub(crate) mod testing {
    //! The owner's side, for tests.

    use store::{Store, ToolRow, ToolState};

    /// The owner enables or disables a row, as the page does.
    pub(crate) async fn owner_sets(
        s: &Store,
        name: &str,
        to: ToolState,
    ) -> Result<ToolRow, store::Error> {
        s.owner_sets_tool_state(name, to, &stepup::testing::step_up(), "test")
            .await
    }
}
