//! A legacy call that waits for the owner: while a `tools/call` made for the owner is in flight
//! on a 2025-11-25 connection, the server's `elicitation/create` is held (not answered) and the
//! call returns to its caller as a question, exactly like a modern `input_required`. The call
//! itself goes on in a task of its own; the owner's answer is sent as the answer to the held
//! request, and the call is awaited again (it may ask again). A question that is dropped
//! unanswered (the owner never answered) is declined, so the server is never left waiting.

use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::Error;
use crate::link::Replier;
use crate::rpc::{encode_answer, Core, HeldAsk};
use crate::tools::ToolOutcome;

/// How long the owner has to answer a server's question (the confirm window's two minutes).
pub const OWNER_WINDOW: std::time::Duration = std::time::Duration::from_secs(120);

/// The pausable deadline of a legacy call for the owner: while a question is held the call's
/// own deadline does not run (for at most [`OWNER_WINDOW`]), and the time the owner
/// took is added back once the answer is sent.
#[derive(Debug, Default)]
pub(crate) struct Grace(Mutex<GraceState>);

#[derive(Debug, Default)]
struct GraceState {
    paused_since: Option<tokio::time::Instant>,
    owed: std::time::Duration,
}

impl Grace {
    fn state(&self) -> std::sync::MutexGuard<'_, GraceState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A question is held: the deadline stops.
    pub(crate) fn pause(&self) {
        self.state()
            .paused_since
            .get_or_insert_with(tokio::time::Instant::now);
    }

    /// The question is answered: the time it took is owed to the deadline.
    pub(crate) fn resume(&self) {
        let mut s = self.state();
        if let Some(t) = s.paused_since.take() {
            s.owed += t.elapsed();
        }
    }

    /// At the deadline: a later deadline to wait for instead, or `None` to give up.
    pub(crate) fn extend(&self) -> Option<tokio::time::Instant> {
        let now = tokio::time::Instant::now();
        let mut s = self.state();
        if let Some(t) = s.paused_since {
            if t.elapsed() < OWNER_WINDOW {
                return Some(now + std::time::Duration::from_secs(1));
            }
            return None;
        }
        if s.owed > std::time::Duration::ZERO {
            return Some(now + std::mem::take(&mut s.owed));
        }
        None
    }
}

/// The call in flight and the question it waits on.
pub(crate) struct LegacyCall {
    pub(crate) task: JoinHandle<Result<ToolOutcome, Error>>,
    pub(crate) asks: mpsc::Receiver<HeldAsk>,
    /// The held server request the owner is asked (answered at most once).
    pub(crate) answer_to: Option<Box<RawValue>>,
    pub(crate) replier: Replier,
    pub(crate) core: Arc<Core>,
    pub(crate) grace: Arc<Grace>,
}

impl Drop for LegacyCall {
    fn drop(&mut self) {
        // Never leave the server waiting on a question nobody will answer.
        let Some(id) = self.answer_to.take() else {
            return;
        };
        self.grace.resume();
        let frame = encode_answer(&id, Ok(Some(serde_json::json!({"action": "decline"}))));
        let (replier, core) = (self.replier.clone(), self.core.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { replier.send(frame, &core).await });
        }
    }
}

impl LegacyCall {
    /// Answer the held question with `answer`.
    pub(crate) async fn answer(&mut self, answer: Value) {
        if let Some(id) = self.answer_to.take() {
            self.grace.resume();
            let frame = encode_answer(&id, Ok(Some(answer)));
            self.replier.send(frame, &self.core).await;
        }
    }
}

/// The shared handle an [`crate::InputNeeded`] keeps of a legacy call (taken by the answer).
#[derive(Clone)]
pub(crate) struct Held(pub(crate) Arc<Mutex<Option<LegacyCall>>>);

impl Held {
    pub(crate) fn new(call: LegacyCall) -> Held {
        Held(Arc::new(Mutex::new(Some(call))))
    }

    pub(crate) fn take(&self) -> Option<LegacyCall> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Held(legacy call)")
    }
}

impl PartialEq for Held {
    fn eq(&self, other: &Held) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
