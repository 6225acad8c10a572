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
use crate::rpc::{encode_answer, Core, HeldAsk};
use crate::tools::ToolOutcome;

/// How an answer reaches the server.
#[derive(Clone)]
pub(crate) enum Replier {
    Stdio(crate::stdio::StdioSender),
    Http(Arc<crate::http::HttpLink>),
}

impl Replier {
    /// Send the answer `frame` (best effort: the call's own outcome says what happened).
    pub(crate) async fn send(&self, frame: Vec<u8>, core: &Core) {
        match self {
            Replier::Stdio(s) => {
                let _ = s.send(frame, core);
            }
            Replier::Http(h) => {
                let _ = h.send_answer(&frame, core).await;
            }
        }
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
}

impl Drop for LegacyCall {
    fn drop(&mut self) {
        // Never leave the server waiting on a question nobody will answer.
        let Some(id) = self.answer_to.take() else {
            return;
        };
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
