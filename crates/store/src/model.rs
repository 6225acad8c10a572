//! The values that go in and come out of the store.

use std::fmt;

use time::OffsetDateTime;

/// A note to write: one fact Maven learned (a feed item, a remembered sentence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNote {
    /// Where it came from, e.g. `rss:<feed>`.
    pub source: String,
    /// Identity within the source; (source, key) is unique.
    pub key: String,
    /// Plain text.
    pub text: String,
    /// Where to read more.
    pub link: Option<String>,
    /// When its item says it was published, if it says.
    pub published: Option<OffsetDateTime>,
}

/// A stored note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// Row id; grows with time (never reused).
    pub id: i64,
    /// Where it came from, e.g. `rss:<feed>`.
    pub source: String,
    /// Identity within the source.
    pub key: String,
    /// Plain text.
    pub text: String,
    /// Where to read more.
    pub link: Option<String>,
    /// When it was written.
    pub created: OffsetDateTime,
    /// When its item says it was published, if it says.
    pub published: Option<OffsetDateTime>,
}

/// Which notes [`crate::Store::notes`] returns (newest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotesQuery {
    /// Only sources starting with this (e.g. `rss:`); `None` = all.
    pub source_prefix: Option<String>,
    /// At most this many (default 50).
    pub limit: u32,
    /// Only notes older than this id (paging backwards).
    pub before_id: Option<i64>,
}

impl Default for NotesQuery {
    fn default() -> Self {
        NotesQuery {
            source_prefix: None,
            limit: 50,
            before_id: None,
        }
    }
}

/// How many notes one source holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceCount {
    /// The source, e.g. `rss:<feed>`.
    pub source: String,
    /// Number of notes.
    pub count: u64,
    /// When its newest note was written.
    pub newest: OffsetDateTime,
}

/// The state of an allowlist row.
///
/// Allowed changes (anything else is [`Error::BadTransition`](crate::Error::BadTransition), in the store's code and in a
/// schema trigger): see [`ToolState::can_become`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolState {
    /// Discovered or configured, waiting for the owner; never runs.
    Proposed,
    /// Approved by the owner; may run.
    Enabled,
    /// Turned off by the owner; never runs.
    Disabled,
    /// No longer offered by its (connected) server; never runs.
    Withdrawn,
}

impl ToolState {
    /// Every state, in declaration order.
    pub const ALL: [ToolState; 4] = [
        ToolState::Proposed,
        ToolState::Enabled,
        ToolState::Disabled,
        ToolState::Withdrawn,
    ];

    /// The stored spelling: `proposed`, `enabled`, `disabled`, `withdrawn`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolState::Proposed => "proposed",
            ToolState::Enabled => "enabled",
            ToolState::Disabled => "disabled",
            ToolState::Withdrawn => "withdrawn",
        }
    }

    /// The transition table. A state never "becomes" itself.
    ///
    /// - proposed → enabled | disabled | withdrawn (owner approves or rejects; server drops it)
    /// - enabled → disabled | proposed | withdrawn (owner turns off; redefined; dropped)
    /// - disabled → enabled | proposed | withdrawn
    /// - withdrawn → proposed (offered again: it comes back as a proposal, never enabled)
    pub fn can_become(self, to: ToolState) -> bool {
        use ToolState::*;
        matches!(
            (self, to),
            (Proposed, Enabled | Disabled | Withdrawn)
                | (Enabled, Disabled | Proposed | Withdrawn)
                | (Disabled, Enabled | Proposed | Withdrawn)
                | (Withdrawn, Proposed)
        )
    }
}

impl fmt::Display for ToolState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an allowlist row runs: a tool of an MCP server, or a local command from the
/// configuration. Stored as `mcp` / `local`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolKind {
    /// A tool of an MCP server: `cmd = ["mcp", server, tool]`.
    Mcp,
    /// A local command (argv) from the configuration's `acts`.
    Local,
}

impl ToolKind {
    /// The stored spelling: `mcp` or `local`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Mcp => "mcp",
            ToolKind::Local => "local",
        }
    }
}

impl fmt::Display for ToolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool to propose.
///
/// For `kind = "mcp"`: `server` is the server's config name, `tool` the tool's exact remote
/// name, `cmd` must be `["mcp", server, tool]` and `scope` `mcp:<server>`. For `kind = "local"`:
/// `server` is empty, `tool` is the act's config name and `cmd` the argv, whose first element is
/// never `"mcp"`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTool {
    /// Local name (unique), `[A-Za-z0-9_.-]{1,160}`.
    pub name: String,
    /// What the row runs.
    pub kind: ToolKind,
    /// Server config name; `""` for local.
    pub server: String,
    /// Remote tool name (mcp) or act name (local).
    pub tool: String,
    /// `["mcp", server, tool]` or the local argv.
    pub cmd: Vec<String>,
    /// e.g. `mcp:<server>` or `local`.
    pub scope: String,
    /// The tool may write (does not claim read-only).
    pub destructive: bool,
    /// Fingerprint of the declared shape, with its scheme prefix.
    pub fingerprint: Option<String>,
    /// Description (capped by the caller).
    pub description: String,
    /// The raw declared tool object; its `inputSchema` becomes [`ToolRow::input_schema`].
    pub shape: serde_json::Value,
    /// Why the row exists (who proposed it, when, from where).
    pub provenance: String,
}

/// A new declared shape for an existing row (a fingerprint mismatch, an edited local act).
#[derive(Debug, Clone, PartialEq)]
pub struct Redefinition {
    /// The new fingerprint.
    pub fingerprint: String,
    /// The new description.
    pub description: String,
    /// The new raw declared tool object.
    pub shape: serde_json::Value,
    /// A new argv for a local row (`None` keeps it). Refused for mcp rows, whose cmd is fixed
    /// by identity.
    pub cmd: Option<Vec<String>>,
    /// Raise destructive (it stopped claiming read-only). `false` keeps the stored value:
    /// destructive is never lowered.
    pub raise_destructive: bool,
    /// The new provenance, saying what changed; also the event's reason.
    pub provenance: String,
}

/// One change a complete listing makes to the allowlist, applied with the others in one
/// transaction by [`crate::Store::apply_listing`]. Each writes a `tool_events` row with actor
/// `discovery` (a proposal of a local row: `config`).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolChange {
    /// A new identity becomes a proposed row.
    Propose(NewTool),
    /// A withdrawn row offered again becomes proposed; `reason` becomes its provenance.
    Reoffer {
        /// The row.
        name: String,
        /// Why (and when), e.g. `offered again by mcp:kit at …`.
        reason: String,
    },
    /// A row that predates fingerprints adopts one silently (no event, no state change).
    Adopt {
        /// The row.
        name: String,
        /// Its fingerprint, with the scheme prefix.
        fingerprint: String,
    },
    /// A new declared shape: the row drops to proposed (see [`Redefinition`]).
    Redefine {
        /// The row.
        name: String,
        /// The new shape and its provenance.
        redefinition: Redefinition,
    },
    /// A tool its connected server no longer offers; `reason` becomes its provenance.
    Withdraw {
        /// The row.
        name: String,
        /// Why (and when).
        reason: String,
    },
}

/// A row of the act allowlist.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRow {
    /// Local name (unique).
    pub name: String,
    /// What the row runs.
    pub kind: ToolKind,
    /// Server config name; `""` for local.
    pub server: String,
    /// Remote tool name (mcp) or act name (local).
    pub tool: String,
    /// `["mcp", server, tool]` or the local argv.
    pub cmd: Vec<String>,
    /// e.g. `mcp:<server>`.
    pub scope: String,
    /// Current state.
    pub state: ToolState,
    /// The tool may write; only ever raised.
    pub destructive: bool,
    /// Fingerprint of the stored shape; `None` for rows that predate fingerprints.
    pub fingerprint: Option<String>,
    /// Description.
    pub description: String,
    /// The shape's `inputSchema` (or `{}`).
    pub input_schema: serde_json::Value,
    /// The current declared shape.
    pub shape: serde_json::Value,
    /// The shape when the row was last enabled (for the page's diff); `None` if never enabled.
    pub approved_shape: Option<serde_json::Value>,
    /// Why the row is what it is.
    pub provenance: String,
    /// When the row was proposed.
    pub created: OffsetDateTime,
    /// When it last changed.
    pub updated: OffsetDateTime,
}

impl ToolRow {
    /// Only enabled rows may run.
    pub fn is_runnable(&self) -> bool {
        self.state == ToolState::Enabled
    }
}

/// One entry of the allowlist's audit trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEvent {
    /// Row id; grows with time.
    pub id: i64,
    /// The tool's local name.
    pub tool: String,
    /// State before; `None` when the row was created.
    pub from: Option<ToolState>,
    /// State after (equal to `from` for a redefinition of a proposed row).
    pub to: ToolState,
    /// Why.
    pub reason: String,
    /// Who: `owner`, `discovery`, `config`, …
    pub actor: String,
    /// When.
    pub at: OffsetDateTime,
}

/// An executed act to record.
#[derive(Debug, Clone, PartialEq)]
pub struct NewActLog {
    /// The tool's local name (must exist).
    pub tool: String,
    /// The owner's sentence.
    pub utterance: String,
    /// Arguments sent.
    pub arguments: serde_json::Value,
    /// Who confirmed it (`None` for a read-only act run without a confirm turn).
    pub confirmed_by: Option<String>,
    /// What came back (capped by the caller).
    pub outcome: String,
    /// What became of it (its `ok` follows: ok only for [`ActResult::Ok`]).
    pub result: ActResult,
    /// How long it ran.
    pub duration_ms: u64,
}

/// The prefix of the outcome text of an act that was sent and never answered: the act may have
/// run. What the store reads is the row's [`ActResult`]; the text is for people.
pub const OUTCOME_UNKNOWN: &str = "unknown:";

/// What became of a recorded act: the `result` column of `acts_log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActResult {
    /// It ran and succeeded (`ok`).
    Ok,
    /// It did not run, or it ran and reported a failure (`error: …`).
    Failed,
    /// It was sent and no answer came back (`unknown: …`): it may have run.
    Unknown,
}

impl ActResult {
    /// `"ok"`, `"failed"`, `"unknown"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActResult::Ok => "ok",
            ActResult::Failed => "failed",
            ActResult::Unknown => "unknown",
        }
    }
}

impl std::str::FromStr for ActResult {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        [ActResult::Ok, ActResult::Failed, ActResult::Unknown]
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or(())
    }
}

/// A recorded act.
#[derive(Debug, Clone, PartialEq)]
pub struct ActLogRow {
    /// Row id; grows with time.
    pub id: i64,
    /// When it was recorded.
    pub at: OffsetDateTime,
    /// The tool's local name.
    pub tool: String,
    /// The owner's sentence.
    pub utterance: String,
    /// Arguments sent.
    pub arguments: serde_json::Value,
    /// Who confirmed it.
    pub confirmed_by: Option<String>,
    /// What came back.
    pub outcome: String,
    /// It succeeded (`result` is [`ActResult::Ok`]).
    pub ok: bool,
    /// What became of it, as stored.
    pub result: ActResult,
    /// How long it ran.
    pub duration_ms: u64,
}

impl ActLogRow {
    /// What became of it.
    pub fn result(&self) -> ActResult {
        self.result
    }
}

/// One poll's worth of feed results, committed in one transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeedBatch {
    /// The feed's config name.
    pub feed: String,
    /// New items as notes; (source, key) already present are skipped, never duplicated.
    pub notes: Vec<NewNote>,
    /// Item keys of this fetch to mark seen (first_seen kept, last_seen refreshed).
    pub seen_keys: Vec<String>,
    /// Facts to set (validators, `rss:latest:<feed>`), written with the items.
    pub facts: Vec<(String, String)>,
    /// Facts to delete (a validator the server stopped sending).
    pub remove_facts: Vec<String>,
}

/// What [`crate::Store::commit_feed_batch`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeedBatchOutcome {
    /// Notes written.
    pub notes_inserted: u32,
    /// Notes skipped because (source, key) existed (a replay, a repeated id).
    pub notes_existing: u32,
    /// Ids of the notes written, in batch order.
    pub inserted_ids: Vec<i64>,
    /// Keys marked seen for the first time.
    pub seen_new: u32,
    /// Keys already seen whose last_seen was refreshed.
    pub seen_refreshed: u32,
    /// Facts set plus facts removed.
    pub facts_written: u32,
}

/// Bounds the schema enforces (in characters). Writes beyond them fail with
/// [`Error::Constraint`](crate::Error::Constraint) and roll back their whole transaction, so callers cap or hash first.
pub mod limits {
    /// Longest note source.
    pub const NOTE_SOURCE: usize = 256;
    /// Longest note key.
    pub const NOTE_KEY: usize = 2048;
    /// Longest note text.
    pub const NOTE_TEXT: usize = 65536;
    /// Longest note link.
    pub const NOTE_LINK: usize = 8192;
    /// Longest fact key.
    pub const FACT_KEY: usize = 512;
    /// Longest fact value.
    pub const FACT_VALUE: usize = 65536;
    /// Longest feed name in seen marks.
    pub const FEED_NAME: usize = 256;
    /// Longest seen key.
    pub const SEEN_KEY: usize = 2048;
    /// Longest tool local name (`[A-Za-z0-9_.-]`).
    pub const TOOL_NAME: usize = 160;
}

/// An enrolled passkey.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasskeyRow {
    /// The credential id, lowercase hex.
    pub id: String,
    /// The credential as the WebAuthn library serialised it (JSON, opaque to the store).
    pub passkey: String,
    /// When it was enrolled.
    pub created: OffsetDateTime,
    /// When it last verified a step-up.
    pub last_used: Option<OffsetDateTime>,
}
