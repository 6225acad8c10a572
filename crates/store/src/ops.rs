//! The queries. Each function here runs on the worker thread, takes the connection, and is one
//! transaction (or one statement).

use std::collections::HashSet;

use rusqlite::{named_params, params, Connection, OptionalExtension, Row, TransactionBehavior};
use time::OffsetDateTime;

use crate::model::{ToolChange, ToolKind};
use crate::{
    ActLogRow, ActResult, Error, FeedBatch, FeedBatchOutcome, NewActLog, NewNote, NewTool, Note,
    NotesQuery, Redefinition, SourceCount, ToolEvent, ToolRow, ToolState,
};

/// Unix milliseconds, the stored form of every timestamp.
pub(crate) fn to_ms(t: OffsetDateTime) -> i64 {
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

pub(crate) fn from_ms(ms: i64) -> Result<OffsetDateTime, Error> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .map_err(|e| Error::corrupt(format!("stored timestamp {ms} out of range: {e}")))
}

fn now_ms() -> i64 {
    to_ms(OffsetDateTime::now_utc())
}

fn json_col(text: &str, what: &str) -> Result<serde_json::Value, Error> {
    serde_json::from_str(text)
        .map_err(|e| Error::corrupt(format!("stored {what} is not JSON: {e}")))
}

fn to_json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    // Serializing strings and `serde_json::Value` cannot fail (no maps with non-string keys).
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_owned())
}

fn limit(n: u32) -> i64 {
    i64::from(n)
}

// ---------------------------------------------------------------------------------------------
// notes

const NOTE_COLS: &str = "id, source, key, text, link, created, published";

/// A note's columns as read: id, source, key, text, link, created, published.
type NoteRow = (
    i64,
    String,
    String,
    String,
    Option<String>,
    i64,
    Option<i64>,
);

fn note_from_row(r: &Row<'_>) -> rusqlite::Result<NoteRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
    ))
}

fn finish_note((id, source, key, text, link, created, published): NoteRow) -> Result<Note, Error> {
    Ok(Note {
        id,
        source,
        key,
        text,
        link,
        created: from_ms(created)?,
        published: published.map(from_ms).transpose()?,
    })
}

/// Inserts a note unless (source, key) exists; returns its id when written.
fn insert_note(conn: &Connection, n: &NewNote, now: i64) -> Result<Option<i64>, Error> {
    let mut st = conn.prepare_cached(
        "INSERT INTO notes (source, key, text, link, created, published)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (source, key) DO NOTHING RETURNING id",
    )?;
    let published = n.published.map(to_ms);
    Ok(st
        .query_row(
            params![n.source, n.key, n.text, n.link, now, published],
            |r| r.get(0),
        )
        .optional()?)
}

pub(crate) fn add_note(conn: &mut Connection, n: &NewNote) -> Result<Option<Note>, Error> {
    let now = now_ms();
    match insert_note(conn, n, now)? {
        None => Ok(None),
        Some(id) => Ok(Some(Note {
            id,
            source: n.source.clone(),
            key: n.key.clone(),
            text: n.text.clone(),
            link: n.link.clone(),
            created: from_ms(now)?,
            published: n.published.map(to_ms).map(from_ms).transpose()?,
        })),
    }
}

pub(crate) fn notes(conn: &mut Connection, q: &NotesQuery) -> Result<Vec<Note>, Error> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {NOTE_COLS} FROM notes
         WHERE (:prefix IS NULL OR substr(source, 1, length(:prefix)) = :prefix)
           AND (:before IS NULL OR id < :before)
         ORDER BY coalesce(published, created) DESC, id DESC LIMIT :limit"
    ))?;
    let rows = st.query_map(
        named_params! {":prefix": q.source_prefix, ":before": q.before_id, ":limit": limit(q.limit)},
        note_from_row,
    )?;
    rows.map(|r| finish_note(r?)).collect()
}

pub(crate) fn note_by_key(
    conn: &mut Connection,
    source: &str,
    key: &str,
) -> Result<Option<Note>, Error> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {NOTE_COLS} FROM notes WHERE source = ?1 AND key = ?2"
    ))?;
    st.query_row(params![source, key], note_from_row)
        .optional()?
        .map(finish_note)
        .transpose()
}

/// Turns owner text into an FTS5 query that cannot be a syntax error: each whitespace-separated
/// word becomes a quoted phrase (inner quotes doubled), all of them required.
pub(crate) fn fts_query(text: &str) -> Option<String> {
    let quoted = |w: &str| format!("\"{}\"", w.replace('"', "\"\""));
    let words: Vec<String> = text
        .split_whitespace()
        .take(32)
        .map(|w| {
            // The word as said, or any word that begins with its stem (Snowball, English or
            // Russian by its letters): "самолет" finds "самолете", "kernels" finds "kernel".
            let lower = w.to_lowercase().replace('ё', "е");
            // Only a word of letters alone: anything else the tokenizer may split or drop,
            // and a phrase it drops whole cannot stand in an OR.
            let letters = lower.chars().all(char::is_alphabetic);
            let stem = word_stem(&lower);
            if letters && stem.chars().count() >= 3 && stem.chars().all(char::is_alphabetic) {
                format!("({} OR {} *)", quoted(w), quoted(&stem))
            } else {
                quoted(w)
            }
        })
        .collect();
    (!words.is_empty()).then(|| words.join(" AND "))
}

/// The Snowball stem of one lowercase word: Russian when it has a Cyrillic letter, else
/// English.
fn word_stem(word: &str) -> String {
    use rust_stemmers::{Algorithm, Stemmer};
    let cyrillic = word.chars().any(|c| ('\u{0400}'..='\u{04FF}').contains(&c));
    let algo = if cyrillic {
        Algorithm::Russian
    } else {
        Algorithm::English
    };
    Stemmer::create(algo).stem(word).into_owned()
}

pub(crate) fn search_notes(conn: &mut Connection, text: &str, n: u32) -> Result<Vec<Note>, Error> {
    let Some(q) = fts_query(text) else {
        return Ok(Vec::new());
    };
    let mut st = conn.prepare_cached(
        "SELECT n.id, n.source, n.key, n.text, n.link, n.created, n.published
         FROM notes_fts JOIN notes AS n ON n.id = notes_fts.rowid
         WHERE notes_fts MATCH ?1 ORDER BY notes_fts.rank, n.id DESC LIMIT ?2",
    )?;
    let rows = st.query_map(params![q, limit(n)], note_from_row)?;
    rows.map(|r| finish_note(r?)).collect()
}

pub(crate) fn note_counts(
    conn: &mut Connection,
    prefix: Option<&str>,
) -> Result<Vec<SourceCount>, Error> {
    let mut st = conn.prepare_cached(
        "SELECT source, count(*), max(created) FROM notes
         WHERE (:prefix IS NULL OR substr(source, 1, length(:prefix)) = :prefix)
         GROUP BY source ORDER BY source",
    )?;
    let rows = st.query_map(named_params! {":prefix": prefix}, |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })?;
    rows.map(|r| {
        let (source, count, newest) = r?;
        Ok(SourceCount {
            source,
            count: u64::try_from(count).unwrap_or(0),
            newest: from_ms(newest)?,
        })
    })
    .collect()
}

// ---------------------------------------------------------------------------------------------
// facts

pub(crate) fn fact(conn: &mut Connection, key: &str) -> Result<Option<String>, Error> {
    let mut st = conn.prepare_cached("SELECT value FROM facts WHERE key = ?1")?;
    Ok(st.query_row([key], |r| r.get(0)).optional()?)
}

fn put_fact(conn: &Connection, key: &str, value: &str, now: i64) -> Result<(), Error> {
    let mut st = conn.prepare_cached(
        "INSERT INTO facts (key, value, updated) VALUES (?1, ?2, ?3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
    )?;
    st.execute(params![key, value, now])?;
    Ok(())
}

fn remove_fact(conn: &Connection, key: &str) -> Result<bool, Error> {
    let mut st = conn.prepare_cached("DELETE FROM facts WHERE key = ?1")?;
    Ok(st.execute([key])? > 0)
}

pub(crate) fn set_fact(conn: &mut Connection, key: &str, value: &str) -> Result<(), Error> {
    put_fact(conn, key, value, now_ms())
}

pub(crate) fn delete_fact(conn: &mut Connection, key: &str) -> Result<bool, Error> {
    remove_fact(conn, key)
}

pub(crate) fn facts_with_prefix(
    conn: &mut Connection,
    prefix: &str,
) -> Result<Vec<(String, String)>, Error> {
    let mut st = conn.prepare_cached(
        "SELECT key, value FROM facts WHERE substr(key, 1, length(?1)) = ?1 ORDER BY key",
    )?;
    let rows = st.query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

// ---------------------------------------------------------------------------------------------
// feeds

pub(crate) fn commit_feed_batch(
    conn: &mut Connection,
    b: &FeedBatch,
) -> Result<FeedBatchOutcome, Error> {
    if b.feed.is_empty() {
        return Err(Error::invalid("feed batch", "empty feed name"));
    }
    let now = now_ms();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut out = FeedBatchOutcome::default();
    for n in &b.notes {
        match insert_note(&tx, n, now)? {
            Some(id) => {
                out.notes_inserted += 1;
                out.inserted_ids.push(id);
            }
            None => out.notes_existing += 1,
        }
    }
    for key in &b.seen_keys {
        let existed: bool = tx
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM feed_seen WHERE feed = ?1 AND key = ?2)")?
            .query_row(params![b.feed, key], |r| r.get(0))?;
        tx.prepare_cached(
            "INSERT INTO feed_seen (feed, key, first_seen, last_seen) VALUES (?1, ?2, ?3, ?3)
             ON CONFLICT (feed, key) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen)",
        )?
        .execute(params![b.feed, key, now])?;
        if existed {
            out.seen_refreshed += 1;
        } else {
            out.seen_new += 1;
        }
    }
    for (k, v) in &b.facts {
        put_fact(&tx, k, v, now)?;
        out.facts_written += 1;
    }
    for k in &b.remove_facts {
        if remove_fact(&tx, k)? {
            out.facts_written += 1;
        }
    }
    tx.commit()?;
    Ok(out)
}

pub(crate) fn seen_keys(
    conn: &mut Connection,
    feed: &str,
    keys: &[String],
) -> Result<HashSet<String>, Error> {
    let mut st = conn.prepare_cached(
        "SELECT key FROM feed_seen WHERE feed = ?1 AND key IN (SELECT value FROM json_each(?2))",
    )?;
    let rows = st.query_map(params![feed, to_json(&keys)], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(crate) fn is_new_feed(conn: &mut Connection, feed: &str) -> Result<bool, Error> {
    let mut st =
        conn.prepare_cached("SELECT NOT EXISTS (SELECT 1 FROM feed_seen WHERE feed = ?1)")?;
    Ok(st.query_row([feed], |r| r.get(0))?)
}

pub(crate) fn seen_count(conn: &mut Connection, feed: &str) -> Result<u64, Error> {
    let mut st = conn.prepare_cached("SELECT count(*) FROM feed_seen WHERE feed = ?1")?;
    let n: i64 = st.query_row([feed], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

pub(crate) fn prune_seen(
    conn: &mut Connection,
    feed: &str,
    keep: &[String],
    older_than: OffsetDateTime,
) -> Result<u64, Error> {
    if keep.is_empty() {
        // An empty or failed fetch is no evidence that anything went away.
        return Ok(0);
    }
    let mut st = conn.prepare_cached(
        "DELETE FROM feed_seen WHERE feed = ?1 AND last_seen < ?2
           AND key NOT IN (SELECT value FROM json_each(?3))",
    )?;
    let n = st.execute(params![feed, to_ms(older_than), to_json(&keep)])?;
    Ok(u64::try_from(n).unwrap_or(u64::MAX))
}

pub(crate) fn prune_seen_beyond(
    conn: &mut Connection,
    feed: &str,
    keep: &[String],
    max: u64,
) -> Result<u64, Error> {
    let room = max.saturating_sub(u64::try_from(keep.len()).unwrap_or(u64::MAX));
    let mut st = conn.prepare_cached(
        "DELETE FROM feed_seen WHERE feed = ?1 AND key IN (
             SELECT key FROM feed_seen
              WHERE feed = ?1 AND key NOT IN (SELECT value FROM json_each(?2))
              ORDER BY last_seen DESC, first_seen DESC LIMIT -1 OFFSET ?3)",
    )?;
    let n = st.execute(params![
        feed,
        to_json(&keep),
        i64::try_from(room).unwrap_or(i64::MAX)
    ])?;
    Ok(u64::try_from(n).unwrap_or(u64::MAX))
}

pub(crate) fn notes_since(
    conn: &mut Connection,
    source: &str,
    since: OffsetDateTime,
) -> Result<u64, Error> {
    let mut st =
        conn.prepare_cached("SELECT count(*) FROM notes WHERE source = ?1 AND created >= ?2")?;
    let n: i64 = st.query_row(params![source, to_ms(since)], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

// ---------------------------------------------------------------------------------------------
// tools

const TOOL_COLS: &str = "name, kind, server, tool, cmd, scope, state, destructive, fingerprint, \
                         description, input_schema, shape, approved_shape, provenance, created, updated";

struct RawTool {
    name: String,
    kind: String,
    server: String,
    tool: String,
    cmd: String,
    scope: String,
    state: String,
    destructive: bool,
    fingerprint: Option<String>,
    description: String,
    input_schema: String,
    shape: String,
    approved_shape: Option<String>,
    provenance: String,
    created: i64,
    updated: i64,
}

fn raw_tool(r: &Row<'_>) -> rusqlite::Result<RawTool> {
    Ok(RawTool {
        name: r.get(0)?,
        kind: r.get(1)?,
        server: r.get(2)?,
        tool: r.get(3)?,
        cmd: r.get(4)?,
        scope: r.get(5)?,
        state: r.get(6)?,
        destructive: r.get(7)?,
        fingerprint: r.get(8)?,
        description: r.get(9)?,
        input_schema: r.get(10)?,
        shape: r.get(11)?,
        approved_shape: r.get(12)?,
        provenance: r.get(13)?,
        created: r.get(14)?,
        updated: r.get(15)?,
    })
}

fn parse_state(s: &str) -> Result<ToolState, Error> {
    s.parse()
        .map_err(|_| Error::corrupt(format!("stored tool state {s:?} is unknown")))
}

fn finish_tool(r: RawTool) -> Result<ToolRow, Error> {
    Ok(ToolRow {
        cmd: serde_json::from_str(&r.cmd).map_err(|e| {
            Error::corrupt(format!(
                "stored cmd of {} is not a string list: {e}",
                r.name
            ))
        })?,
        state: parse_state(&r.state)?,
        input_schema: json_col(&r.input_schema, "input schema")?,
        shape: json_col(&r.shape, "shape")?,
        approved_shape: r
            .approved_shape
            .as_deref()
            .map(|s| json_col(s, "approved shape"))
            .transpose()?,
        created: from_ms(r.created)?,
        updated: from_ms(r.updated)?,
        name: r.name,
        kind: r
            .kind
            .parse()
            .map_err(|_| Error::corrupt(format!("stored tool kind {:?} is unknown", r.kind)))?,
        server: r.server,
        tool: r.tool,
        scope: r.scope,
        destructive: r.destructive,
        fingerprint: r.fingerprint,
        description: r.description,
        provenance: r.provenance,
    })
}

fn get_tool(conn: &Connection, name: &str) -> Result<Option<ToolRow>, Error> {
    let mut st = conn.prepare_cached(&format!("SELECT {TOOL_COLS} FROM tools WHERE name = ?1"))?;
    st.query_row([name], raw_tool)
        .optional()?
        .map(finish_tool)
        .transpose()
}

fn must_tool(conn: &Connection, name: &str) -> Result<ToolRow, Error> {
    get_tool(conn, name)?.ok_or_else(|| Error::NotFound(format!("tool {name}")))
}

pub(crate) fn tool(conn: &mut Connection, name: &str) -> Result<Option<ToolRow>, Error> {
    get_tool(conn, name)
}

pub(crate) fn tools(conn: &mut Connection) -> Result<Vec<ToolRow>, Error> {
    all_tools(conn)
}

fn all_tools(conn: &Connection) -> Result<Vec<ToolRow>, Error> {
    let mut st = conn.prepare_cached(&format!("SELECT {TOOL_COLS} FROM tools ORDER BY name"))?;
    let rows = st.query_map([], raw_tool)?;
    rows.map(|r| finish_tool(r?)).collect()
}

fn input_schema_of(shape: &serde_json::Value) -> serde_json::Value {
    shape
        .get("inputSchema")
        .cloned()
        .unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new()))
}

/// The checks the schema also makes, here for a clear message before SQLite says "CHECK failed".
fn check_cmd(kind: ToolKind, server: &str, tool: &str, cmd: &[String]) -> Result<(), Error> {
    let mcp = ToolKind::Mcp.as_str();
    match kind {
        ToolKind::Mcp => {
            if server.is_empty() {
                return Err(Error::invalid("tool", "an mcp row needs a server"));
            }
            if cmd != [mcp, server, tool] {
                return Err(Error::invalid(
                    "tool cmd",
                    format!(
                        "an mcp row's cmd must be [\"mcp\", {server:?}, {tool:?}], got {cmd:?}"
                    ),
                ));
            }
        }
        ToolKind::Local => {
            if !server.is_empty() {
                return Err(Error::invalid("tool", "a local row has no server"));
            }
            match cmd.first() {
                None => return Err(Error::invalid("tool cmd", "a local row needs an argv")),
                Some(a) if a == mcp => {
                    return Err(Error::invalid(
                        "tool cmd",
                        "a local argv never starts with \"mcp\" (\"mcp\" is never executed)",
                    ))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

fn insert_event(
    conn: &Connection,
    tool: &str,
    from: Option<ToolState>,
    to: ToolState,
    reason: &str,
    actor: &str,
    now: i64,
) -> Result<(), Error> {
    let mut st = conn.prepare_cached(
        "INSERT INTO tool_events (tool, from_state, to_state, reason, actor, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    st.execute(params![
        tool,
        from.map(ToolState::as_str),
        to.as_str(),
        reason,
        actor,
        now
    ])?;
    Ok(())
}

pub(crate) fn propose_tool(conn: &mut Connection, t: &NewTool) -> Result<ToolRow, Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let row = propose_in(&tx, t, now_ms())?;
    tx.commit()?;
    Ok(row)
}

fn propose_in(tx: &Connection, t: &NewTool, now: i64) -> Result<ToolRow, Error> {
    check_cmd(t.kind, &t.server, &t.tool, &t.cmd)?;
    if get_tool(tx, &t.name)?.is_some() {
        return Err(Error::AlreadyExists(format!("tool named {}", t.name)));
    }
    let same_identity: Option<String> = tx
        .prepare_cached("SELECT name FROM tools WHERE kind = ?1 AND server = ?2 AND tool = ?3")?
        .query_row(params![t.kind.as_str(), t.server, t.tool], |r| r.get(0))
        .optional()?;
    if let Some(other) = same_identity {
        return Err(Error::AlreadyExists(format!(
            "tool identity ({}, {:?}, {:?}) as row {other}",
            t.kind, t.server, t.tool
        )));
    }
    tx.prepare_cached(
        "INSERT INTO tools (name, kind, server, tool, cmd, scope, state, destructive, fingerprint,
                            description, input_schema, shape, approved_shape, provenance,
                            created, updated)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'proposed', ?7, ?8, ?9, ?10, ?11, NULL, ?12, ?13, ?13)",
    )?
    .execute(params![
        t.name,
        t.kind.as_str(),
        t.server,
        t.tool,
        to_json(&t.cmd),
        t.scope,
        t.destructive,
        t.fingerprint,
        t.description,
        to_json(&input_schema_of(&t.shape)),
        to_json(&t.shape),
        t.provenance,
        now
    ])?;
    let actor = if t.kind == ToolKind::Mcp {
        "discovery"
    } else {
        "config"
    };
    insert_event(
        tx,
        &t.name,
        None,
        ToolState::Proposed,
        &t.provenance,
        actor,
        now,
    )?;
    must_tool(tx, &t.name)
}

pub(crate) fn set_tool_state(
    conn: &mut Connection,
    name: &str,
    to: ToolState,
    reason: &str,
    actor: &str,
) -> Result<ToolRow, Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let row = state_in(&tx, name, to, reason, actor, now_ms())?;
    tx.commit()?;
    Ok(row)
}

pub(crate) fn enable_where(
    conn: &mut Connection,
    pick: &dyn Fn(&ToolRow) -> bool,
    reason: &str,
    actor: &str,
) -> Result<Vec<ToolRow>, Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now_ms();
    let mut enabled = Vec::new();
    for row in all_tools(&tx)? {
        if row.state.can_become(ToolState::Enabled) && pick(&row) {
            enabled.push(state_in(
                &tx,
                &row.name,
                ToolState::Enabled,
                reason,
                actor,
                now,
            )?);
        }
    }
    tx.commit()?;
    Ok(enabled)
}

fn state_in(
    tx: &Connection,
    name: &str,
    to: ToolState,
    reason: &str,
    actor: &str,
    now: i64,
) -> Result<ToolRow, Error> {
    let row = must_tool(tx, name)?;
    if !row.state.can_become(to) {
        return Err(Error::BadTransition {
            name: name.to_owned(),
            from: row.state,
            to,
        });
    }
    // Enabling pins the shape the owner saw, for the page's diff after a redefinition.
    // Withdrawing and re-proposing are discovery's verdicts about the row itself, so the reason
    // becomes its provenance (why and when); the owner's enable/disable keep it.
    tx.prepare_cached(
        "UPDATE tools SET state = ?2, updated = ?3,
                approved_shape = CASE WHEN ?2 = 'enabled' THEN shape ELSE approved_shape END,
                provenance = CASE WHEN ?2 IN ('withdrawn', 'proposed') THEN ?4 ELSE provenance END
         WHERE name = ?1",
    )?
    .execute(params![name, to.as_str(), now, reason])?;
    insert_event(tx, name, Some(row.state), to, reason, actor, now)?;
    must_tool(tx, name)
}

/// The actor of every change a listing makes.
const DISCOVERY: &str = "discovery";

pub(crate) fn apply_listing<T>(
    conn: &mut Connection,
    plan: impl FnOnce(&[ToolRow]) -> (Vec<ToolChange>, T),
) -> Result<(Vec<ToolRow>, T), Error> {
    let now = now_ms();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let rows = all_tools(&tx)?;
    let (changes, out) = plan(&rows);
    let mut touched = Vec::with_capacity(changes.len());
    for change in &changes {
        let row = match change {
            ToolChange::Propose(t) => propose_in(&tx, t, now)?,
            ToolChange::Reoffer { name, reason } => {
                state_in(&tx, name, ToolState::Proposed, reason, DISCOVERY, now)?
            }
            ToolChange::Withdraw { name, reason } => {
                state_in(&tx, name, ToolState::Withdrawn, reason, DISCOVERY, now)?
            }
            ToolChange::Adopt { name, fingerprint } => adopt_in(&tx, name, fingerprint)?,
            ToolChange::Redefine { name, redefinition } => {
                redefine_in(&tx, name, redefinition, DISCOVERY, now)?
            }
        };
        touched.push(row);
    }
    tx.commit()?;
    Ok((touched, out))
}

fn redefine_in(
    tx: &Connection,
    name: &str,
    r: &Redefinition,
    actor: &str,
    now: i64,
) -> Result<ToolRow, Error> {
    let row = must_tool(tx, name)?;
    let cmd = match &r.cmd {
        None => row.cmd.clone(),
        Some(c) => {
            if row.kind != ToolKind::Local {
                return Err(Error::invalid(
                    "redefinition",
                    "an mcp row's cmd is fixed by its identity",
                ));
            }
            check_cmd(row.kind, &row.server, &row.tool, c)?;
            c.clone()
        }
    };
    let destructive = row.destructive || r.raise_destructive;
    tx.prepare_cached(
        "UPDATE tools SET state = 'proposed', destructive = ?2, fingerprint = ?3, description = ?4,
                input_schema = ?5, shape = ?6, cmd = ?7, provenance = ?8, updated = ?9
         WHERE name = ?1",
    )?
    .execute(params![
        name,
        destructive,
        r.fingerprint,
        r.description,
        to_json(&input_schema_of(&r.shape)),
        to_json(&r.shape),
        to_json(&cmd),
        r.provenance,
        now
    ])?;
    insert_event(
        tx,
        name,
        Some(row.state),
        ToolState::Proposed,
        &r.provenance,
        actor,
        now,
    )?;
    must_tool(tx, name)
}

fn adopt_in(tx: &Connection, name: &str, fp: &str) -> Result<ToolRow, Error> {
    let row = must_tool(tx, name)?;
    match row.fingerprint.as_deref() {
        None => {
            tx.prepare_cached("UPDATE tools SET fingerprint = ?2 WHERE name = ?1")?
                .execute(params![name, fp])?;
        }
        Some(have) if have == fp => {}
        Some(_) => {
            return Err(Error::invalid(
                "fingerprint adoption",
                format!("tool {name} already has a different fingerprint; that is a redefinition"),
            ))
        }
    }
    must_tool(tx, name)
}

pub(crate) fn tool_events(
    conn: &mut Connection,
    name: Option<&str>,
    n: u32,
) -> Result<Vec<ToolEvent>, Error> {
    let mut st = conn.prepare_cached(
        "SELECT id, tool, from_state, to_state, reason, actor, at FROM tool_events
         WHERE (?1 IS NULL OR tool = ?1) ORDER BY id DESC LIMIT ?2",
    )?;
    let rows = st.query_map(params![name, limit(n)], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, String>(5)?,
            r.get::<_, i64>(6)?,
        ))
    })?;
    rows.map(|r| {
        let (id, tool, from, to, reason, actor, at) = r?;
        Ok(ToolEvent {
            id,
            tool,
            from: from.as_deref().map(parse_state).transpose()?,
            to: parse_state(&to)?,
            reason,
            actor,
            at: from_ms(at)?,
        })
    })
    .collect()
}

// ---------------------------------------------------------------------------------------------
// acts

pub(crate) fn log_act(conn: &mut Connection, a: &NewActLog) -> Result<i64, Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if get_tool(&tx, &a.tool)?.is_none() {
        return Err(Error::NotFound(format!("tool {}", a.tool)));
    }
    let id = tx
        .prepare_cached(
            "INSERT INTO acts_log (at, tool, utterance, arguments, confirmed_by, outcome, ok,
                                   duration_ms, result)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
        )?
        .query_row(
            params![
                now_ms(),
                a.tool,
                a.utterance,
                to_json(&a.arguments),
                a.confirmed_by,
                a.outcome,
                a.result == ActResult::Ok,
                i64::try_from(a.duration_ms).unwrap_or(i64::MAX),
                a.result.as_str()
            ],
            |r| r.get(0),
        )?;
    tx.commit()?;
    Ok(id)
}

pub(crate) fn settle_act(
    conn: &mut Connection,
    id: i64,
    result: ActResult,
    outcome: &str,
    duration_ms: u64,
) -> Result<(), Error> {
    let n = conn
        .prepare_cached(
            "UPDATE acts_log SET outcome = ?2, ok = ?3, duration_ms = ?4, result = ?5
             WHERE id = ?1 AND result = 'unknown'",
        )?
        .execute(params![
            id,
            outcome,
            result == ActResult::Ok,
            i64::try_from(duration_ms).unwrap_or(i64::MAX),
            result.as_str()
        ])?;
    if n == 0 {
        return Err(Error::NotFound(format!("an unsettled act {id}")));
    }
    Ok(())
}

pub(crate) fn acts_log(conn: &mut Connection, n: u32) -> Result<Vec<ActLogRow>, Error> {
    let mut st = conn.prepare_cached(
        "SELECT id, at, tool, utterance, arguments, confirmed_by, outcome, ok, duration_ms,
                result
         FROM acts_log ORDER BY id DESC LIMIT ?1",
    )?;
    let rows = st.query_map([limit(n)], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, Option<String>>(5)?,
            r.get::<_, String>(6)?,
            r.get::<_, bool>(7)?,
            r.get::<_, i64>(8)?,
            r.get::<_, String>(9)?,
        ))
    })?;
    rows.map(|r| {
        let (id, at, tool, utterance, arguments, confirmed_by, outcome, ok, duration, result) = r?;
        let result = result
            .parse()
            .map_err(|()| Error::corrupt(format!("stored act result {result:?} is unknown")))?;
        Ok(ActLogRow {
            id,
            at: from_ms(at)?,
            tool,
            utterance,
            arguments: json_col(&arguments, "act arguments")?,
            confirmed_by,
            outcome,
            ok,
            result,
            duration_ms: u64::try_from(duration).unwrap_or(0),
        })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::fts_query;

    #[test]
    fn owner_text_becomes_quoted_phrases() {
        let cases: &[(&str, Option<&str>)] = &[
            ("", None),
            ("  \t\n ", None),
            // A word of letters: as said, or any word that begins with its stem.
            ("rust", Some("(\"rust\" OR \"rust\" *)")),
            (
                "new  rust",
                Some("(\"new\" OR \"new\" *) AND (\"rust\" OR \"rust\" *)"),
            ),
            ("самолете", Some("(\"самолете\" OR \"самолет\" *)")),
            // Anything else, quoted as it is.
            (
                "say \"hi\"",
                Some("(\"say\" OR \"say\" *) AND \"\"\"hi\"\"\""),
            ),
            ("NEAR(a", Some("\"NEAR(a\"")),
            ("of", Some("\"of\"")),
        ];
        for (input, want) in cases {
            assert_eq!(fts_query(input).as_deref(), *want, "{input:?}");
        }
        let many = "w ".repeat(100);
        assert_eq!(fts_query(&many).map(|q| q.matches('"').count()), Some(64));
    }
}
