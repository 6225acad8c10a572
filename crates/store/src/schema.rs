//! Opening a file, refusing what is not ours, and the numbered migrations.
//!
//! The schema version lives in `PRAGMA user_version`; `PRAGMA application_id` marks the file as
//! Maven's. Migration N (1-based) is `MIGRATIONS[N - 1]`; a migration, once released, is never
//! edited — a change is a new entry.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::Error;

/// `PRAGMA application_id` of a Maven database ("MVN1").
pub(crate) const APPLICATION_ID: u32 = 0x4D56_4E31;

/// How long a statement waits for another connection's lock before failing with `Busy`.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The migrations, in order. Index 0 is version 1.
pub(crate) const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6];

/// The newest schema version this build knows.
pub(crate) fn latest_version() -> u32 {
    // The list is a short compile-time constant.
    u32::try_from(MIGRATIONS.len()).unwrap_or(u32::MAX)
}

const V1: &str = r#"
PRAGMA application_id = 1297501745;

CREATE TABLE tools (
    name           TEXT PRIMARY KEY NOT NULL
                   CHECK (length(name) BETWEEN 1 AND 160 AND name NOT GLOB '*[^A-Za-z0-9_.-]*'),
    kind           TEXT NOT NULL CHECK (kind IN ('mcp', 'local')),
    server         TEXT NOT NULL,
    tool           TEXT NOT NULL CHECK (length(tool) BETWEEN 1 AND 256),
    cmd            TEXT NOT NULL CHECK (json_valid(cmd) AND json_type(cmd) = 'array'),
    scope          TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('proposed', 'enabled', 'disabled', 'withdrawn')),
    destructive    INTEGER NOT NULL CHECK (destructive IN (0, 1)),
    fingerprint    TEXT CHECK (fingerprint IS NULL OR length(fingerprint) BETWEEN 1 AND 256),
    description    TEXT NOT NULL,
    input_schema   TEXT NOT NULL CHECK (json_valid(input_schema)),
    shape          TEXT NOT NULL CHECK (json_valid(shape)),
    approved_shape TEXT CHECK (approved_shape IS NULL OR json_valid(approved_shape)),
    provenance     TEXT NOT NULL,
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL,
    UNIQUE (kind, server, tool),
    -- an mcp row is a late-bound reference ["mcp", server, tool], never a binary to exec;
    -- a local row's argv never starts with "mcp" (that would be routed to the manager).
    CHECK (CASE kind
        WHEN 'mcp' THEN length(server) >= 1
            AND json_array_length(cmd) = 3
            AND cmd ->> 0 = 'mcp' AND cmd ->> 1 = server AND cmd ->> 2 = tool
            AND scope = 'mcp:' || server
        ELSE server = ''
            AND json_array_length(cmd) >= 1
            AND cmd ->> 0 IS NOT 'mcp'
        END)
) STRICT;

-- Every row starts as a proposal.
CREATE TRIGGER tools_insert_proposed BEFORE INSERT ON tools
WHEN NEW.state <> 'proposed'
BEGIN SELECT RAISE(ABORT, 'a tool row is always created proposed'); END;

-- destructive is only ever raised.
CREATE TRIGGER tools_destructive_never_lowered BEFORE UPDATE OF destructive ON tools
WHEN OLD.destructive = 1 AND NEW.destructive = 0
BEGIN SELECT RAISE(ABORT, 'destructive is never lowered'); END;

-- Identity never changes: a new identity is a new row.
CREATE TRIGGER tools_identity_fixed BEFORE UPDATE OF name, kind, server, tool ON tools
WHEN NEW.name IS NOT OLD.name OR NEW.kind IS NOT OLD.kind
  OR NEW.server IS NOT OLD.server OR NEW.tool IS NOT OLD.tool
BEGIN SELECT RAISE(ABORT, 'a tool row''s name and identity never change'); END;

-- The transition table (kept equal to ToolState::can_become by a test).
CREATE TRIGGER tools_state_transition BEFORE UPDATE OF state ON tools
WHEN NEW.state IS NOT OLD.state AND (OLD.state || '>' || NEW.state) NOT IN (
    'proposed>enabled', 'proposed>disabled', 'proposed>withdrawn',
    'enabled>disabled', 'enabled>proposed', 'enabled>withdrawn',
    'disabled>enabled', 'disabled>proposed', 'disabled>withdrawn',
    'withdrawn>proposed')
BEGIN SELECT RAISE(ABORT, 'impossible tool state transition'); END;

CREATE TABLE tool_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tool       TEXT NOT NULL REFERENCES tools (name),
    from_state TEXT CHECK (from_state IS NULL
                           OR from_state IN ('proposed', 'enabled', 'disabled', 'withdrawn')),
    to_state   TEXT NOT NULL CHECK (to_state IN ('proposed', 'enabled', 'disabled', 'withdrawn')),
    reason     TEXT NOT NULL,
    actor      TEXT NOT NULL CHECK (length(actor) BETWEEN 1 AND 128),
    at         INTEGER NOT NULL
) STRICT;
CREATE INDEX tool_events_by_tool ON tool_events (tool, id);

-- The audit trail is append-only.
CREATE TRIGGER tool_events_no_update BEFORE UPDATE ON tool_events
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER tool_events_no_delete BEFORE DELETE ON tool_events
BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;

CREATE TABLE notes (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    source  TEXT NOT NULL CHECK (length(source) BETWEEN 1 AND 256),
    key     TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 2048),
    text    TEXT NOT NULL CHECK (length(text) <= 65536),
    link    TEXT CHECK (link IS NULL OR length(link) <= 8192),
    created INTEGER NOT NULL,
    UNIQUE (source, key)
) STRICT;
CREATE INDEX notes_by_source ON notes (source, id);

CREATE VIRTUAL TABLE notes_fts USING fts5 (
    text, content = 'notes', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes BEGIN
    INSERT INTO notes_fts (rowid, text) VALUES (NEW.id, NEW.text);
END;
CREATE TRIGGER notes_fts_delete AFTER DELETE ON notes BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
END;
CREATE TRIGGER notes_fts_update AFTER UPDATE OF text ON notes BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
    INSERT INTO notes_fts (rowid, text) VALUES (NEW.id, NEW.text);
END;

CREATE TABLE facts (
    key     TEXT PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 512),
    value   TEXT NOT NULL CHECK (length(value) <= 65536),
    updated INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE feed_seen (
    feed       TEXT NOT NULL CHECK (length(feed) BETWEEN 1 AND 256),
    key        TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 2048),
    first_seen INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL CHECK (last_seen >= first_seen),
    PRIMARY KEY (feed, key)
) STRICT, WITHOUT ROWID;

CREATE TABLE acts_log (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    at           INTEGER NOT NULL,
    tool         TEXT NOT NULL REFERENCES tools (name),
    utterance    TEXT NOT NULL,
    arguments    TEXT NOT NULL CHECK (json_valid(arguments)),
    confirmed_by TEXT,
    outcome      TEXT NOT NULL,
    ok           INTEGER NOT NULL CHECK (ok IN (0, 1)),
    duration_ms  INTEGER NOT NULL CHECK (duration_ms >= 0)
) STRICT;
CREATE INDEX acts_log_by_tool ON acts_log (tool, id);
"#;

/// Opens `path` (creating the file, never its directory), refuses files that are not ours or
/// are newer, then sets WAL and migrates. Nothing is written before the refusal checks.
pub(crate) fn open(path: &Path) -> Result<Connection, Error> {
    let open_err = |e: rusqlite::Error| Error::Open {
        path: path.to_owned(),
        message: e.to_string(),
    };
    // No SQLITE_OPEN_URI: the path is a path, never a "file:" URI with options.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    #[expect(
        clippy::disallowed_methods,
        reason = "the store is the one crate that opens SQLite; this is its only call site"
    )]
    let mut conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;

    check_ours(&conn, path)?;

    // Hardening: schema objects cannot call functions with side effects, and direct writes to
    // the schema are refused even to this connection.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA,
        false,
    )?;
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Error::Open {
            path: path.to_owned(),
            message: format!("write-ahead logging is not available here (journal_mode {mode})"),
        });
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    // After a checkpoint the log is truncated back to this size rather than left at its peak.
    conn.pragma_update(None, "journal_size_limit", 16 * 1024 * 1024)?;
    migrate(&mut conn, path)?;
    Ok(conn)
}

fn read_u32_pragma(conn: &Connection, name: &str) -> Result<u32, Error> {
    let v: i64 = conn.pragma_query_value(None, name, |r| r.get(0))?;
    // Both pragmas are 32-bit signed in the header; read them as the unsigned bit pattern.
    Ok(u32::from_ne_bytes((v as i32).to_ne_bytes()))
}

/// Refuses a file that is newer than this build or belongs to another program. Reads only.
fn check_ours(conn: &Connection, path: &Path) -> Result<(), Error> {
    let version = read_u32_pragma(conn, "user_version")?;
    if version > latest_version() {
        return Err(Error::NewerSchema {
            path: path.to_owned(),
            found: version,
            supported: latest_version(),
        });
    }
    let application_id = read_u32_pragma(conn, "application_id")?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
    let foreign = if application_id == 0 {
        tables > 0 || version > 0
    } else {
        application_id != APPLICATION_ID
    };
    if foreign {
        return Err(Error::ForeignDatabase {
            path: path.to_owned(),
            application_id,
            tables: u32::try_from(tables).unwrap_or(u32::MAX),
        });
    }
    Ok(())
}

/// Runs the migrations this file lacks, all in one immediate transaction.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Read again under the write lock: another process may have migrated meanwhile.
    let current = read_u32_pragma(&tx, "user_version")?;
    if current > latest_version() {
        return Err(Error::NewerSchema {
            path: path.to_owned(),
            found: current,
            supported: latest_version(),
        });
    }
    let start = usize::try_from(current).unwrap_or(usize::MAX);
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(start) {
        tracing::info!(path = %path.display(), version = i + 1, "applying store migration");
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i + 1)?;
    }
    tx.commit()?;
    Ok(())
}

/// The file's schema version.
pub(crate) fn version(conn: &Connection) -> Result<u32, Error> {
    read_u32_pragma(conn, "user_version")
}

/// Migration 2: the passkeys table.
const V2: &str = r#"
CREATE TABLE passkeys (
    id        TEXT PRIMARY KEY NOT NULL
              CHECK (length(id) BETWEEN 2 AND 2048 AND id NOT GLOB '*[^0-9a-f]*'),
    passkey   TEXT NOT NULL CHECK (length(passkey) <= 65536 AND json_valid(passkey)),
    created   INTEGER NOT NULL,
    last_used INTEGER
) STRICT, WITHOUT ROWID;
"#;

/// Migration 3: the OAuth credentials of MCP servers (see `oauth.rs`), one row per (server,
/// issuer).
const V3: &str = r#"
CREATE TABLE mcp_oauth (
    server      TEXT NOT NULL CHECK (length(server) BETWEEN 1 AND 256),
    issuer      TEXT NOT NULL CHECK (length(issuer) BETWEEN 1 AND 2048),
    credentials TEXT NOT NULL
                CHECK (length(credentials) <= 262144 AND json_valid(credentials)),
    updated     INTEGER NOT NULL,
    PRIMARY KEY (server, issuer)
) STRICT, WITHOUT ROWID;
"#;

/// Migration 4: what became of an act (`result`: ok, failed or unknown) is a column of its own,
/// kept equal to `ok` by a check; the rows before it take theirs from `ok` and the `unknown:`
/// prefix of their outcome text. SQLite cannot add a table check to a table, so the table is
/// built again (ids and the id sequence kept) and its index with it.
const V4: &str = r#"
CREATE TABLE acts_log_v4 (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    at           INTEGER NOT NULL,
    tool         TEXT NOT NULL REFERENCES tools (name),
    utterance    TEXT NOT NULL,
    arguments    TEXT NOT NULL CHECK (json_valid(arguments)),
    confirmed_by TEXT,
    outcome      TEXT NOT NULL,
    ok           INTEGER NOT NULL CHECK (ok IN (0, 1)),
    duration_ms  INTEGER NOT NULL CHECK (duration_ms >= 0),
    result       TEXT NOT NULL CHECK (result IN ('ok', 'failed', 'unknown')),
    CHECK ((ok = 1) = (result = 'ok'))
) STRICT;
INSERT INTO acts_log_v4
    (id, at, tool, utterance, arguments, confirmed_by, outcome, ok, duration_ms, result)
SELECT id, at, tool, utterance, arguments, confirmed_by, outcome, ok, duration_ms,
       CASE WHEN ok = 1 THEN 'ok'
            WHEN substr(outcome, 1, 8) = 'unknown:' THEN 'unknown'
            ELSE 'failed' END
FROM acts_log;
INSERT INTO sqlite_sequence (name, seq)
SELECT 'acts_log_v4', 0 FROM sqlite_sequence WHERE name = 'acts_log'
    AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'acts_log_v4');
UPDATE sqlite_sequence
SET seq = max(seq, (SELECT seq FROM sqlite_sequence WHERE name = 'acts_log'))
WHERE name = 'acts_log_v4' AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'acts_log');
DROP TABLE acts_log;
ALTER TABLE acts_log_v4 RENAME TO acts_log;
CREATE INDEX acts_log_by_tool ON acts_log (tool, id);
"#;

/// Migration 5: a note keeps the time its item says it was published (milliseconds since the
/// epoch, UTC), when its feed gave one; the notes before it have none.
const V5: &str = r#"
ALTER TABLE notes ADD COLUMN published INTEGER;
"#;

/// Migration 6: notes are listed newest first by the time their item was published, else the
/// time they were noted.
const V6: &str = r#"
CREATE INDEX notes_by_when ON notes (coalesce(published, created) DESC, id DESC);
"#;
