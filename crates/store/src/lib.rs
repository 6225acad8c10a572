//! Maven's store: one SQLite file, and the only code in the project that speaks SQL.
//!
//! # Design
//!
//! A [`Store`] is a cheap handle (`Clone + Send + Sync`). Opening one starts **one dedicated OS
//! thread** that owns the only [`rusqlite::Connection`]; every method sends a closure to that
//! thread over a bounded channel and awaits a oneshot reply. So:
//!
//! - SQLite never blocks the async runtime: a tokio worker only awaits a channel.
//! - There is exactly one writer, so writes never contend inside the process; requests are
//!   served in the order they were queued. A full queue makes callers wait (backpressure).
//! - Each method is one transaction (or one statement). Multi-row writes such as
//!   [`Store::commit_feed_batch`], [`Store::apply_listing`] and [`Store::owner_sets_tool_state`] commit
//!   everything or nothing.
//! - **Cancellation:** dropping a method's future after the request was queued does not cancel
//!   it; a queued write still commits (or rolls back) as a whole, only its answer is lost. A
//!   write whose future returned `Ok` is durable: the file runs in WAL mode with
//!   `synchronous=FULL`, so a kill -9 or a power cut after the acknowledgement loses nothing.
//! - A panic inside an operation rolls its transaction back, answers [`Error::Panicked`] and the
//!   thread keeps serving.
//! - The thread ends, closing the connection (and checkpointing the WAL), when [`Store::close`]
//!   is called or the last handle is dropped. After `close` every handle answers
//!   [`Error::Closed`].
//!
//! # The file
//!
//! [`Store::open`] creates the file if missing (never its directory), refuses a file written by
//! a newer schema ([`Error::NewerSchema`]) or by another program ([`Error::ForeignDatabase`])
//! **before writing a single byte to it**, then switches to WAL, turns foreign keys on and runs
//! the numbered migrations it lacks in one transaction. The schema version is
//! `PRAGMA user_version`; `PRAGMA application_id` marks the file as Maven's.
//!
//! The schema holds invariants that protect against bugs upstream: CHECK constraints on every
//! enumerated column, a trigger that refuses lowering `destructive`, a trigger holding the tool
//! state transition table ([`ToolState::can_become`]), rows created only as proposed, identity
//! columns that never change, and an append-only audit trail. The text bounds are published
//! in [`limits`].
//!
//! # Tables
//!
//! `tools` (the act allowlist; identity (kind, server, tool) unique), `tool_events` (its audit
//! trail), `notes` (unique (source, key), with an FTS5 index `notes_fts`), `facts`, `feed_seen`
//! (which item keys each feed has shown, for baselines and pruning), `acts_log` (every executed
//! act, with what became of it: ok, failed or unknown), `passkeys` (the page's enrolled
//! credentials) and `mcp_oauth` (the OAuth credentials of MCP servers as opaque JSON documents,
//! one row per (server, issuer), each save replacing its row in one transaction, so a kill -9
//! leaves the old row or the new one). A row's kind is a [`ToolKind`], never a string.
//!
//! # Example
//!
//! ```no_run
//! # async fn demo() -> Result<(), store::Error> {
//! let store = store::Store::open(std::path::Path::new("/var/lib/maven/maven.db")).await?;
//! let note = store::NewNote {
//!     source: "rss:lwn".into(),
//!     key: "https://lwn.net/Articles/1/".into(),
//!     text: "A headline".into(),
//!     link: Some("https://lwn.net/Articles/1/".into()),
//!     published: None,
//! };
//! assert!(store.add_note(note.clone()).await?.is_some());
//! assert!(store.add_note(note).await?.is_none()); // (source, key) is unique
//! store.close().await?;
//! # Ok(()) }
//! ```

#![warn(clippy::expect_used, clippy::panic)]

mod error;
mod model;
mod names;
mod oauth;
mod ops;
mod schema;
mod web;

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::Connection;
use time::OffsetDateTime;
use tokio::sync::{mpsc, oneshot};

pub use error::Error;
pub use model::{
    limits, ActLogRow, ActResult, FeedBatch, FeedBatchOutcome, NewActLog, NewNote, NewTool, Note,
    NotesQuery, PasskeyRow, Redefinition, SourceCount, ToolChange, ToolEvent, ToolKind, ToolRow,
    ToolState, OUTCOME_UNKNOWN,
};

/// How many requests may wait for the worker before callers are made to wait.
const QUEUE: usize = 256;

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

enum Msg {
    Job(Job),
    Close(oneshot::Sender<()>),
}

/// A handle to the store. Cheap to clone; all clones share one worker thread and one
/// connection. See the crate documentation for the design.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    tx: mpsc::Sender<Msg>,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .finish()
    }
}

impl Store {
    /// Opens (creating if missing, never creating its directory) and migrates the database at
    /// `path`. A file from a newer schema or another program is refused and left untouched.
    pub async fn open(path: &Path) -> Result<Store, Error> {
        let (tx, rx) = mpsc::channel::<Msg>(QUEUE);
        let (ready_tx, ready_rx) = oneshot::channel::<Result<(), Error>>();
        let owned = path.to_owned();
        std::thread::Builder::new()
            .name("maven-store".to_owned())
            .spawn(move || worker(&owned, rx, ready_tx))
            .map_err(|e| Error::Open {
                path: path.to_owned(),
                message: format!("cannot start the store thread: {e}"),
            })?;
        ready_rx.await.map_err(|_| Error::Panicked)??;
        Ok(Store {
            inner: Arc::new(Inner {
                tx,
                path: path.to_owned(),
            }),
        })
    }

    /// The file this store was opened on.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Closes the store: waits for queued requests to finish, closes the connection (the WAL is
    /// checkpointed) and stops the worker. Every handle answers [`Error::Closed`] afterwards.
    /// Closing twice is not an error.
    pub async fn close(&self) -> Result<(), Error> {
        let (tx, rx) = oneshot::channel();
        if self.inner.tx.send(Msg::Close(tx)).await.is_err() {
            return Ok(());
        }
        // The worker answers after the connection is closed; a lost answer means it is gone.
        let _ = rx.await;
        Ok(())
    }

    /// Runs `f` on the worker thread and returns its answer.
    async fn call<R, F>(&self, f: F) -> Result<R, Error>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, Error> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            // The caller may have gone away; the work is done either way.
            let _ = tx.send(f(conn));
        });
        self.inner
            .tx
            .send(Msg::Job(job))
            .await
            .map_err(|_| Error::Closed)?;
        match rx.await {
            Ok(r) => r,
            // The job was dropped without answering: it panicked, or the worker stopped.
            Err(_) if self.inner.tx.is_closed() => Err(Error::Closed),
            Err(_) => Err(Error::Panicked),
        }
    }

    /// The schema version of the open file (equal to the newest this build knows).
    pub async fn schema_version(&self) -> Result<u32, Error> {
        self.call(|c| schema::version(c)).await
    }

    /// The newest schema version this build knows.
    pub fn supported_schema_version() -> u32 {
        schema::latest_version()
    }

    // -----------------------------------------------------------------------------------------
    // notes

    /// Writes a note; `None` when (source, key) already exists (nothing is changed then).
    pub async fn add_note(&self, n: NewNote) -> Result<Option<Note>, Error> {
        self.call(move |c| ops::add_note(c, &n)).await
    }

    /// Notes, newest first: by the time their item was published, else when they were noted.
    pub async fn notes(&self, q: NotesQuery) -> Result<Vec<Note>, Error> {
        self.call(move |c| ops::notes(c, &q)).await
    }

    /// The note with this (source, key).
    pub async fn note_by_key(&self, source: &str, key: &str) -> Result<Option<Note>, Error> {
        let (source, key) = (source.to_owned(), key.to_owned());
        self.call(move |c| ops::note_by_key(c, &source, &key)).await
    }

    /// Full-text search of note texts (FTS5, Unicode case folding, diacritics ignored).
    ///
    /// Every whitespace-separated word of `query` must occur; the words are matched literally,
    /// so FTS syntax in the owner's text (`AND`, `*`, quotes, `NEAR(`) is never interpreted and
    /// never an error. Best match first; an empty query finds nothing.
    pub async fn search_notes(&self, query: &str, limit: u32) -> Result<Vec<Note>, Error> {
        let q = query.to_owned();
        self.call(move |c| ops::search_notes(c, &q, limit)).await
    }

    /// How many notes each source holds, ordered by source; only sources starting with
    /// `source_prefix` when given (e.g. `rss:`).
    pub async fn note_counts(
        &self,
        source_prefix: Option<&str>,
    ) -> Result<Vec<SourceCount>, Error> {
        let p = source_prefix.map(str::to_owned);
        self.call(move |c| ops::note_counts(c, p.as_deref())).await
    }

    // -----------------------------------------------------------------------------------------
    // facts

    /// The value of a fact.
    pub async fn fact(&self, key: &str) -> Result<Option<String>, Error> {
        let k = key.to_owned();
        self.call(move |c| ops::fact(c, &k)).await
    }

    /// Sets (or replaces) a fact.
    pub async fn set_fact(&self, key: &str, value: &str) -> Result<(), Error> {
        let (k, v) = (key.to_owned(), value.to_owned());
        self.call(move |c| ops::set_fact(c, &k, &v)).await
    }

    /// Deletes a fact; `true` if it existed.
    pub async fn delete_fact(&self, key: &str) -> Result<bool, Error> {
        let k = key.to_owned();
        self.call(move |c| ops::delete_fact(c, &k)).await
    }

    /// Every fact whose key starts with `prefix`, ordered by key.
    pub async fn facts_with_prefix(&self, prefix: &str) -> Result<Vec<(String, String)>, Error> {
        let p = prefix.to_owned();
        self.call(move |c| ops::facts_with_prefix(c, &p)).await
    }

    // -----------------------------------------------------------------------------------------
    // feeds

    /// Writes one poll's notes, seen marks and facts in **one transaction**: all of it or none.
    ///
    /// Notes whose (source, key) exists and seen keys already marked are skipped/refreshed, so
    /// replaying a batch (after a crash between commit and acknowledgement) never duplicates.
    /// Put the validators and `rss:latest:<feed>` in `facts` so they are stored only together
    /// with the items of their response.
    pub async fn commit_feed_batch(&self, batch: FeedBatch) -> Result<FeedBatchOutcome, Error> {
        self.call(move |c| ops::commit_feed_batch(c, &batch)).await
    }

    /// Which of `keys` are already marked seen for `feed`.
    pub async fn seen_keys(&self, feed: &str, keys: &[String]) -> Result<HashSet<String>, Error> {
        let (f, k) = (feed.to_owned(), keys.to_vec());
        self.call(move |c| ops::seen_keys(c, &f, &k)).await
    }

    /// `true` when nothing was ever marked seen for `feed` (its next fetch is a baseline).
    pub async fn is_new_feed(&self, feed: &str) -> Result<bool, Error> {
        let f = feed.to_owned();
        self.call(move |c| ops::is_new_feed(c, &f)).await
    }

    /// How many keys are marked seen for `feed`.
    pub async fn seen_count(&self, feed: &str) -> Result<u64, Error> {
        let f = feed.to_owned();
        self.call(move |c| ops::seen_count(c, &f)).await
    }

    /// Forgets the seen keys of `feed` beyond the `max` most recently seen, never one of
    /// `keep` (the current fetch): enough to cover what the feed serves, nothing beyond.
    /// Returns how many were forgotten.
    pub async fn prune_seen_beyond(
        &self,
        feed: &str,
        keep: &[String],
        max: u64,
    ) -> Result<u64, Error> {
        let (f, k) = (feed.to_owned(), keep.to_vec());
        self.call(move |c| ops::prune_seen_beyond(c, &f, &k, max))
            .await
    }

    /// How many notes of `source` were written at or after `since`.
    pub async fn notes_since(&self, source: &str, since: OffsetDateTime) -> Result<u64, Error> {
        let s = source.to_owned();
        self.call(move |c| ops::notes_since(c, &s, since)).await
    }

    /// Forgets seen keys of `feed` that are absent from `keep` (the current fetch) **and** were
    /// last seen before `older_than`. An empty `keep` prunes nothing: an empty or failed fetch is
    /// no evidence that anything went away. Returns how many were forgotten.
    pub async fn prune_seen(
        &self,
        feed: &str,
        keep: &[String],
        older_than: OffsetDateTime,
    ) -> Result<u64, Error> {
        let (f, k) = (feed.to_owned(), keep.to_vec());
        self.call(move |c| ops::prune_seen(c, &f, &k, older_than))
            .await
    }

    // -----------------------------------------------------------------------------------------
    // tools

    /// The allowlist, ordered by name.
    pub async fn tools(&self) -> Result<Vec<ToolRow>, Error> {
        self.call(ops::tools).await
    }

    /// One row by local name.
    pub async fn tool(&self, name: &str) -> Result<Option<ToolRow>, Error> {
        let n = name.to_owned();
        self.call(move |c| ops::tool(c, &n)).await
    }

    /// Applies one complete listing in **one** transaction: `plan` is called on the store's
    /// thread with every row as it is inside that transaction, and the changes it returns are
    /// applied in order before the commit; its second value is handed back. So two listings
    /// never interleave, and a crash or an error leaves the allowlist as it was before the
    /// listing. Nothing here can enable a row: the changes only propose, redefine (back to
    /// proposed), adopt a fingerprint, re-offer (withdrawn → proposed) or withdraw.
    pub async fn apply_listing<T, F>(&self, plan: F) -> Result<(Vec<ToolRow>, T), Error>
    where
        F: FnOnce(&[ToolRow]) -> (Vec<ToolChange>, T) + Send + 'static,
        T: Send + 'static,
    {
        self.call(move |c| ops::apply_listing(c, plan)).await
    }

    /// Inserts a row in state proposed plus its creation event (actor `discovery` for mcp rows,
    /// `config` for local ones, reason = provenance), in one transaction.
    /// [`Error::AlreadyExists`] when the name or the identity is taken; [`Error::Invalid`] when
    /// cmd does not match the kind.
    pub async fn propose_tool(&self, t: NewTool) -> Result<ToolRow, Error> {
        self.call(move |c| ops::propose_tool(c, &t)).await
    }

    /// The owner enables or disables a row, and the event names the step-up used
    /// (`owner (passphrase)`, `owner (passkey 1a2b3c4d)`), in one transaction. Only a
    /// [`stepup::StepUp`] opens this door, and only verifying the owner makes one:
    ///
    /// ```compile_fail
    /// # async fn f(store: store::Store) {
    /// // There is no other way to enable a row: no step-up, no call.
    /// store.set_tool_state("kit_list", store::ToolState::Enabled, "because", "owner").await;
    /// # }
    /// ```
    ///
    /// `to` must be enabled or disabled ([`Error::Invalid`] otherwise);
    /// [`Error::BadTransition`] for anything outside [`ToolState::can_become`] (including a state
    /// "becoming" itself). Enabling also pins the current shape as `approved_shape`.
    pub async fn owner_sets_tool_state(
        &self,
        name: &str,
        to: ToolState,
        step_up: &stepup::StepUp,
        reason: &str,
    ) -> Result<ToolRow, Error> {
        if !matches!(to, ToolState::Enabled | ToolState::Disabled) {
            return Err(Error::invalid(
                "owner change",
                format!("the owner enables or disables a row; {to} is discovery's verdict"),
            ));
        }
        let (n, r, a) = (name.to_owned(), reason.to_owned(), step_up.actor());
        self.call(move |c| ops::set_tool_state(c, &n, to, &r, &a))
            .await
    }

    /// The owner enables, in one transaction, every row that may become enabled (proposed or
    /// disabled) and that `pick` chooses, each with its own event naming the step-up; returns
    /// the rows enabled, by name. The rows are read and changed under the one write lock, so
    /// `pick` decides on each row as it is when it changes: a listing that redefined a row
    /// meanwhile (say, raised its `destructive`) is seen. Like
    /// [`Store::owner_sets_tool_state`], only a [`stepup::StepUp`] opens this door.
    pub async fn owner_enables_where(
        &self,
        step_up: &stepup::StepUp,
        reason: &str,
        pick: impl Fn(&ToolRow) -> bool + Send + 'static,
    ) -> Result<Vec<ToolRow>, Error> {
        let (r, a) = (reason.to_owned(), step_up.actor());
        self.call(move |c| ops::enable_where(c, &pick, &r, &a))
            .await
    }

    /// The audit trail, newest first; one tool's when `name` is given.
    pub async fn tool_events(
        &self,
        name: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ToolEvent>, Error> {
        let n = name.map(str::to_owned);
        self.call(move |c| ops::tool_events(c, n.as_deref(), limit))
            .await
    }

    // -----------------------------------------------------------------------------------------
    // acts

    /// Records an executed act; returns its id. [`Error::NotFound`] when the tool row does not
    /// exist.
    pub async fn log_act(&self, a: NewActLog) -> Result<i64, Error> {
        self.call(move |c| ops::log_act(c, &a)).await
    }

    /// Settles an act recorded before it ran as [`ActResult::Unknown`]: what became of it, its
    /// outcome text, how long it took. An act that is never settled (the daemon died
    /// meanwhile) stays unknown, which is the truth. [`Error::NotFound`] when there is no such
    /// unsettled act.
    pub async fn settle_act(
        &self,
        id: i64,
        result: ActResult,
        outcome: String,
        duration_ms: u64,
    ) -> Result<(), Error> {
        self.call(move |c| ops::settle_act(c, id, result, &outcome, duration_ms))
            .await
    }

    /// Executed acts, newest first.
    pub async fn acts_log(&self, limit: u32) -> Result<Vec<ActLogRow>, Error> {
        self.call(move |c| ops::acts_log(c, limit)).await
    }
}

// The page's credentials.
impl Store {
    /// Stores a newly enrolled passkey under its credential id (lowercase hex).
    /// [`Error::AlreadyExists`] when the id is taken; [`Error::Invalid`] for an id that is not
    /// lowercase hex or a document that is not JSON (at most 64 KiB).
    pub async fn add_passkey(&self, id: &str, passkey: &str) -> Result<PasskeyRow, Error> {
        let (i, p) = (id.to_owned(), passkey.to_owned());
        self.call(move |c| web::add(c, &i, &p)).await
    }

    /// Every enrolled passkey, oldest first.
    pub async fn passkeys(&self) -> Result<Vec<PasskeyRow>, Error> {
        self.call(web::all).await
    }

    /// One passkey by id.
    pub async fn passkey(&self, id: &str) -> Result<Option<PasskeyRow>, Error> {
        let i = id.to_owned();
        self.call(move |c| web::get(c, &i)).await
    }

    /// Records that a passkey verified a step-up now, replacing its document when given (the
    /// authenticator's signature counter moved). [`Error::NotFound`] when there is no such id.
    pub async fn passkey_used(&self, id: &str, passkey: Option<&str>) -> Result<(), Error> {
        let (i, p) = (id.to_owned(), passkey.map(str::to_owned));
        self.call(move |c| web::used(c, &i, p.as_deref())).await
    }

    /// Forgets a passkey; `true` if it existed.
    pub async fn remove_passkey(&self, id: &str) -> Result<bool, Error> {
        let i = id.to_owned();
        self.call(move |c| web::remove(c, &i)).await
    }
}

/// The database and its `-wal`/`-shm` companions are the owner's alone: mode 0600 (SQLite
/// creates files by the umask; it gives the companions the database's own mode).
fn private_files(path: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    let mut files = vec![path.to_path_buf()];
    for suffix in ["-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        files.push(PathBuf::from(p));
    }
    for f in files {
        match std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::Open {
                    message: format!("cannot make {} private (mode 0600): {e}", f.display()),
                    path: f,
                })
            }
        }
    }
    Ok(())
}

/// The worker thread: opens the file, reports readiness, then serves until closed.
fn worker(path: &Path, mut rx: mpsc::Receiver<Msg>, ready: oneshot::Sender<Result<(), Error>>) {
    let mut conn = match schema::open(path).and_then(|c| private_files(path).map(|()| c)) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if ready.send(Ok(())).is_err() {
        return;
    }
    while let Some(msg) = rx.blocking_recv() {
        match msg {
            Msg::Job(job) => {
                if catch_unwind(AssertUnwindSafe(|| job(&mut conn))).is_err() {
                    tracing::error!("a store operation panicked; its transaction was rolled back");
                    // A panic between BEGIN and the Transaction guard is impossible, but make
                    // sure no transaction stays open for the next job.
                    if !conn.is_autocommit() {
                        let _ = conn.execute_batch("ROLLBACK");
                    }
                }
            }
            Msg::Close(done) => {
                rx.close();
                // Serve what was queued before the close, then stop.
                while let Ok(Msg::Job(job)) = rx.try_recv() {
                    let _ = catch_unwind(AssertUnwindSafe(|| job(&mut conn)));
                }
                if let Err((_, e)) = conn.close() {
                    tracing::warn!(error = %e, "closing the store connection failed");
                }
                let _ = done.send(());
                return;
            }
        }
    }
}

/// `t` in UTC to the second, as RFC 3339 (`2026-11-30T05:00:00Z`): how every timestamp Maven writes as
/// text looks. Empty only for a time RFC 3339 cannot write (a year outside 0..=9999).
pub fn rfc3339(t: OffsetDateTime) -> String {
    use time::format_description::well_known::Rfc3339;
    t.to_offset(time::UtcOffset::UTC)
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    #[expect(clippy::disallowed_methods, reason = "a test's own database")]
    async fn a_panicking_operation_rolls_back_and_the_worker_survives() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).await.unwrap();
        let err = store
            .call(|c| -> Result<(), Error> {
                let tx = c.transaction()?;
                tx.execute(
                    "INSERT INTO facts (key, value, updated) VALUES ('half', 'done', 0)",
                    [],
                )?;
                panic!("a bug in the middle of a transaction");
            })
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Panicked), "{err:?}");
        assert_eq!(store.fact("half").await.unwrap(), None);
        store.set_fact("after", "ok").await.unwrap();
        assert_eq!(store.fact("after").await.unwrap().as_deref(), Some("ok"));
    }
}
