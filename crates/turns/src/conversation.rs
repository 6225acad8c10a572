//! Conversations: every turn belongs to one, named by its front end and its name there. What
//! a turn asks (a confirmation, a server's question) waits for that conversation's next turn
//! alone, and the turns of different conversations never wait on each other.
//!
//! [`Slots`] keeps each conversation's state: an async lock held for the whole of each of its
//! turns (so they keep their order) over what its next turn answers. A conversation idle for
//! longer than [`allowlist::CONFIRM_WINDOW`] is forgotten (what it held has expired), and at
//! most [`MAX_CONVERSATIONS`] are kept: past that the one idle longest is dropped, and the log
//! says so. A conversation with a turn in flight is never dropped.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use allowlist::CONFIRM_WINDOW;

/// The most conversations whose state is kept at once.
pub const MAX_CONVERSATIONS: usize = 256;

/// The longest name of a conversation kept, in characters.
pub const MAX_ID_CHARS: usize = 128;

/// The front end a turn comes from. Whether it is typed or spoken follows from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Front {
    /// `maven say`, in the owner's terminal: typed.
    Terminal,
    /// The page: typed.
    Page,
    /// A Wyoming voice conversation (the `voice.listen` listener): spoken.
    Voice,
    /// A `maven listen` session: spoken.
    Listen,
}

impl Front {
    /// Whether its turns are spoken (a transcript, and a question asked with a one-time word).
    pub fn spoken(self) -> bool {
        matches!(self, Front::Voice | Front::Listen)
    }

    /// Its name, as a log line says it.
    pub fn name(self) -> &'static str {
        match self {
            Front::Terminal => "terminal",
            Front::Page => "page",
            Front::Voice => "voice",
            Front::Listen => "listen",
        }
    }
}

impl fmt::Display for Front {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One conversation: its front end, and its name within it (empty: the front end's one
/// conversation, as the owner's terminal has by default).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Conversation {
    /// The front end.
    pub front: Front,
    /// Its name within the front end: a Wyoming `conversation_id` (else the connection), a
    /// `maven listen` session, a page session, a terminal conversation's name.
    pub id: String,
}

impl Conversation {
    /// The conversation `id` of `front` (cut to [`MAX_ID_CHARS`] characters).
    pub fn new(front: Front, id: &str) -> Conversation {
        Conversation {
            front,
            id: shown::cut(id, MAX_ID_CHARS).into_owned(),
        }
    }

    /// The owner's terminal: `maven say` without a conversation's name.
    pub fn terminal() -> Conversation {
        Conversation::new(Front::Terminal, "")
    }

    /// Whether its turns are spoken.
    pub fn spoken(&self) -> bool {
        self.front.spoken()
    }
}

/// "terminal", "voice, kitchen", "page", "listen, 4242": for a log line or the acts log.
impl fmt::Display for Conversation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.id.is_empty() {
            f.write_str(self.front.name())
        } else {
            write!(f, "{}, {}", self.front.name(), shown::line(&self.id))
        }
    }
}

/// One conversation's state: `T` is what its next turn answers, `Q` what the page shows of it.
struct Slot<T, Q> {
    /// Locked for the whole of each of its turns: they keep their order.
    turn: Arc<tokio::sync::Mutex<Option<T>>>,
    /// What its next turn answers, as shown without waiting for a turn, and when it was asked.
    shows: Option<(Q, Instant)>,
    /// When its last turn ended (or its first began).
    last: Instant,
}

/// Every conversation's state. The map's lock is held only to look a conversation up or to
/// write what it shows, never across an await.
pub(crate) struct Slots<T, Q> {
    map: std::sync::Mutex<HashMap<Conversation, Slot<T, Q>>>,
    cap: usize,
}

impl<T, Q: Clone> Slots<T, Q> {
    pub(crate) fn new(cap: usize) -> Slots<T, Q> {
        Slots {
            map: std::sync::Mutex::new(HashMap::new()),
            cap: cap.max(1),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<Conversation, Slot<T, Q>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lock of `c`'s turns (its state made when it has none), after forgetting the other
    /// conversations idle past the window, and the longest idle past the cap.
    pub(crate) fn of(&self, c: &Conversation) -> Arc<tokio::sync::Mutex<Option<T>>> {
        let mut map = self.map();
        // Only the map holds a conversation's lock while no turn of it is in flight (a clone
        // is made under the map's lock, so a count of one cannot grow meanwhile).
        let idle = |s: &Slot<T, Q>| Arc::strong_count(&s.turn) == 1;
        map.retain(|k, s| k == c || !idle(s) || s.last.elapsed() <= CONFIRM_WINDOW);
        if !map.contains_key(c) {
            while map.len() >= self.cap {
                let oldest = map
                    .iter()
                    .filter(|(_, s)| idle(s))
                    .min_by_key(|(_, s)| s.last)
                    .map(|(k, _)| k.clone());
                let Some(oldest) = oldest else { break };
                tracing::warn!(conversation = %oldest, held = self.cap, "too many conversations: the one idle longest is forgotten, with what it waited for");
                map.remove(&oldest);
            }
        }
        let slot = map.entry(c.clone()).or_insert_with(|| Slot {
            turn: Arc::new(tokio::sync::Mutex::new(None)),
            shows: None,
            last: Instant::now(),
        });
        slot.turn.clone()
    }

    /// At the end of a turn of `c`: what its next turn answers, as shown.
    pub(crate) fn ended(&self, c: &Conversation, shows: Option<Q>) {
        let mut map = self.map();
        if let Some(s) = map.get_mut(c) {
            s.last = Instant::now();
            s.shows = shows.map(|q| (q, Instant::now()));
        }
    }

    /// What `c`'s next turn answers, as shown, while it stands.
    pub(crate) fn shows(&self, c: &Conversation) -> Option<Q> {
        self.map()
            .get(c)
            .and_then(|s| s.shows.as_ref())
            .filter(|(_, at)| at.elapsed() <= CONFIRM_WINDOW)
            .map(|(q, _)| q.clone())
    }

    /// How many conversations are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn conversations_are_forgotten_when_idle_past_the_window_and_past_the_cap() {
        let slots: Slots<u32, String> = Slots::new(3);
        let c = |id: &str| Conversation::new(Front::Voice, id);
        for id in ["a", "b", "c"] {
            *slots.of(&c(id)).lock().await = Some(1);
            slots.ended(&c(id), Some(format!("asks {id}")));
            tokio::time::advance(std::time::Duration::from_secs(1)).await;
        }
        assert_eq!(slots.shows(&c("a")).as_deref(), Some("asks a"));
        // A fourth: the one idle longest goes, with what it held.
        let d = slots.of(&c("d"));
        assert_eq!(slots.len(), 3);
        assert_eq!(slots.shows(&c("a")), None);
        assert_eq!(*slots.of(&c("a")).lock().await, None);
        // Now "b" went for "a"; a conversation with a turn in flight is never dropped.
        let _busy = d.lock().await;
        for id in ["e", "f", "g"] {
            slots.of(&c(id));
        }
        assert!(slots.map().contains_key(&c("d")));
        drop(_busy);
        drop(d);
        // Past the window every idle conversation is forgotten but the one asked for.
        tokio::time::advance(CONFIRM_WINDOW + std::time::Duration::from_secs(1)).await;
        slots.of(&c("z"));
        assert_eq!(slots.len(), 1);
        // What a conversation shows is its own, and only while it stands.
        slots.ended(&c("z"), Some("asks z".to_owned()));
        assert_eq!(slots.shows(&c("y")), None);
        assert_eq!(slots.shows(&c("z")).as_deref(), Some("asks z"));
        tokio::time::advance(CONFIRM_WINDOW + std::time::Duration::from_secs(1)).await;
        assert_eq!(slots.shows(&c("z")), None);
    }
}
