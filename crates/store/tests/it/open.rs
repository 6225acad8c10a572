//! Opening, migrating, refusing files that are not ours, closing.

use std::path::Path;

use store::{Error, NotesQuery, Store};

use crate::{local_tool, mcp_tool, note, raw, Db};

/// The newest schema version of this build.
const LATEST: u32 = 6;

/// The SQLite header: bytes 18/19 are 2 in WAL mode; user_version is at 60, application_id at 68.
fn header(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()[..100].to_vec()
}

fn be32(h: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]])
}

#[tokio::test]
async fn empty_file_is_migrated_to_the_latest_version_in_wal_mode() {
    let db = Db::new().await;
    assert_eq!(db.store.schema_version().await.unwrap(), LATEST);
    assert_eq!(Store::supported_schema_version(), LATEST);
    assert_eq!(db.store.path(), db.path());
    // The migration sits in the log until the close checkpoints it into the main file.
    db.store.close().await.unwrap();
    let h = header(&db.path());
    assert_eq!((h[18], h[19]), (2, 2), "write-ahead log mode");
    assert_eq!(be32(&h, 60), LATEST, "user_version");
    assert_eq!(be32(&h, 68), 0x4D56_4E31, "application_id");
}

#[tokio::test]
async fn an_existing_zero_byte_file_is_a_fresh_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    let store = Store::open(&path).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), LATEST);
}

#[tokio::test]
async fn the_directory_is_never_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("maven.db");
    let err = Store::open(&path).await.unwrap_err();
    assert!(matches!(err, Error::Open { .. }), "{err:?}");
    assert!(!dir.path().join("missing").exists());
}

#[tokio::test]
async fn reopening_keeps_everything() {
    let db = Db::new().await;
    let path = db.path();
    let s = &db.store;
    s.add_note(note("rss:a", "k1", "first"))
        .await
        .unwrap()
        .unwrap();
    s.set_fact("rss:latest:a", "k1").await.unwrap();
    s.propose_tool(mcp_tool("vikunja", "list_tasks"))
        .await
        .unwrap();
    crate::set_state(s, "vikunja_list_tasks", store::ToolState::Enabled, "ok")
        .await
        .unwrap();
    s.close().await.unwrap();

    let again = Store::open(&path).await.unwrap();
    assert_eq!(again.schema_version().await.unwrap(), LATEST);
    let notes = again.notes(NotesQuery::default()).await.unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].text, "first");
    assert_eq!(
        again.fact("rss:latest:a").await.unwrap().as_deref(),
        Some("k1")
    );
    let t = again.tool("vikunja_list_tasks").await.unwrap().unwrap();
    assert_eq!(t.state, store::ToolState::Enabled);
    assert_eq!(again.tool_events(None, 10).await.unwrap().len(), 2);
    // Still one note: the unique key survived the reopen.
    assert!(again
        .add_note(note("rss:a", "k1", "first"))
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn a_newer_schema_is_refused_and_the_file_left_byte_for_byte() {
    let db = Db::new().await;
    let path = db.path();
    db.store.add_note(note("rss:a", "k", "text")).await.unwrap();
    db.store.close().await.unwrap();
    assert!(
        !path.with_extension("db-wal").exists(),
        "close checkpoints the log away"
    );

    // Stamp the file as version 999, as a newer build would.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[60..64].copy_from_slice(&999u32.to_be_bytes());
    std::fs::write(&path, &bytes).unwrap();

    let err = Store::open(&path).await.unwrap_err();
    match &err {
        Error::NewerSchema {
            found, supported, ..
        } => {
            assert_eq!((*found, *supported), (999, LATEST));
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    assert!(err.is_refused_file());
    assert!(err.to_string().contains("999"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[tokio::test]
async fn a_newer_rollback_journal_file_is_not_even_switched_to_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("newer.db");
    {
        let c = raw(&path);
        c.execute_batch(
            "PRAGMA application_id = 1297501745; PRAGMA user_version = 9;
             CREATE TABLE future (x INTEGER);",
        )
        .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    assert_eq!((before[18], before[19]), (1, 1));
    let err = Store::open(&path).await.unwrap_err();
    assert!(
        matches!(err, Error::NewerSchema { found: 9, .. }),
        "{err:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[tokio::test]
async fn another_programs_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str)] = &[
        ("tables.db", "CREATE TABLE contacts (name TEXT);"),
        ("appid.db", "PRAGMA application_id = 42;"),
        ("version.db", "PRAGMA user_version = 1;"),
    ];
    for (file, sql) in cases {
        let path = dir.path().join(file);
        raw(&path).execute_batch(sql).unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).await.unwrap_err();
        assert!(
            matches!(err, Error::ForeignDatabase { .. }),
            "{file}: {err:?}"
        );
        assert!(err.is_refused_file());
        assert_eq!(std::fs::read(&path).unwrap(), before, "{file}");
    }
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_corrupt_and_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.db");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();
    let err = Store::open(&path).await.unwrap_err();
    assert!(err.is_corrupt(), "{err:?}");
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
}

#[tokio::test]
async fn close_stops_every_handle_and_is_idempotent() {
    let db = Db::new().await;
    let other = db.store.clone();
    db.store.close().await.unwrap();
    let err = other.add_note(note("s", "k", "t")).await.unwrap_err();
    assert!(err.is_closed(), "{err:?}");
    assert!(other.fact("x").await.unwrap_err().is_closed());
    other.close().await.unwrap();
}

#[tokio::test]
async fn two_handles_on_one_file_see_each_other() {
    let db = Db::new().await;
    let second = Store::open(&db.path()).await.unwrap();
    db.store.set_fact("k", "v").await.unwrap();
    assert_eq!(second.fact("k").await.unwrap().as_deref(), Some("v"));
}

#[tokio::test]
async fn a_version_1_file_is_migrated_forward_keeping_its_data() {
    let db = Db::new().await;
    let path = db.path();
    db.store.add_note(note("rss:a", "k", "kept")).await.unwrap();
    db.store.close().await.unwrap();
    // Turn the file back into what version 1 wrote: no passkeys table, no OAuth table, no
    // published time of a note.
    raw(&path)
        .execute_batch(
            "DROP TABLE passkeys; DROP TABLE mcp_oauth; DROP INDEX notes_by_when; ALTER TABLE notes DROP COLUMN published;
             PRAGMA user_version = 1;",
        )
        .unwrap();

    let store = Store::open(&path).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), LATEST);
    let notes = store.notes(NotesQuery::default()).await.unwrap();
    assert_eq!(notes[0].text, "kept");
    assert_eq!(notes[0].published, None);
    assert!(store.passkeys().await.unwrap().is_empty());
    store.add_passkey("ab01", "{}").await.unwrap();
    assert!(store.oauth_servers().await.unwrap().is_empty());
}

/// `acts_log` as versions 1 to 3 wrote it: no `result` column.
const ACTS_LOG_V3: &str = "
DROP TABLE acts_log;
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
";

#[tokio::test]
async fn a_version_3_file_gets_each_acts_result_from_its_ok_and_its_text() {
    use store::{ActResult, NewActLog};
    let db = Db::new().await;
    let path = db.path();
    db.store
        .propose_tool(local_tool("rm_task", &["task", "rm"]))
        .await
        .unwrap();
    db.store.close().await.unwrap();
    let old = raw(&path);
    old.execute_batch(ACTS_LOG_V3).unwrap();
    for (id, outcome, ok) in [
        (1, "ok", 1),
        (2, "unknown: sent; no answer yet", 0),
        (3, "error: server said no", 0),
        (4, "unknown: `srv` may have run it: timed out", 0),
        // An answer wins over the text.
        (5, "unknown: looks unknown", 1),
    ] {
        old.execute(
            "INSERT INTO acts_log VALUES (?1, 0, 'rm_task', 'say', '{}', NULL, ?2, ?3, 7)",
            rusqlite::params![id, outcome, ok],
        )
        .unwrap();
    }
    // Rows 6 to 9 were written and are gone: their ids are not given again.
    old.execute_batch(
        "UPDATE sqlite_sequence SET seq = 9 WHERE name = 'acts_log';
         DROP INDEX notes_by_when; ALTER TABLE notes DROP COLUMN published; PRAGMA user_version = 3;",
    )
    .unwrap();
    drop(old);

    let store = Store::open(&path).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), LATEST);
    let log = store.acts_log(10).await.unwrap();
    let got: Vec<_> = log
        .iter()
        .rev()
        .map(|a| (a.id, a.outcome.as_str(), a.ok, a.result()))
        .collect();
    assert_eq!(
        got,
        [
            (1, "ok", true, ActResult::Ok),
            (2, "unknown: sent; no answer yet", false, ActResult::Unknown),
            (3, "error: server said no", false, ActResult::Failed),
            (
                4,
                "unknown: `srv` may have run it: timed out",
                false,
                ActResult::Unknown
            ),
            (5, "unknown: looks unknown", true, ActResult::Ok),
        ]
    );
    // An unknown act of the old file is settled once; a failed one is not settled.
    store
        .settle_act(2, ActResult::Failed, "error: boom".into(), 3)
        .await
        .unwrap();
    let err = store
        .settle_act(2, ActResult::Ok, "ok".into(), 3)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    let err = store
        .settle_act(3, ActResult::Ok, "ok".into(), 3)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    let next = store
        .log_act(NewActLog {
            tool: "rm_task".into(),
            utterance: "say".into(),
            arguments: serde_json::json!({}),
            confirmed_by: None,
            outcome: "unknown: sent; no answer yet".into(),
            result: ActResult::Unknown,
            duration_ms: 0,
        })
        .await
        .unwrap();
    assert_eq!(next, 10, "the id sequence is kept");
    store.close().await.unwrap();

    // The schema keeps `ok` and `result` saying the same.
    let e = raw(&path)
        .execute(
            "INSERT INTO acts_log (at, tool, utterance, arguments, outcome, ok, duration_ms, result)
             VALUES (0, 'rm_task', 'say', '{}', 'ok', 1, 0, 'failed')",
            [],
        )
        .unwrap_err();
    assert!(e.to_string().contains("CHECK constraint failed"), "{e}");
}

#[tokio::test]
async fn the_database_and_its_companions_are_the_owners_alone() {
    use std::os::unix::fs::PermissionsExt;
    let db = Db::new().await;
    db.store.set_fact("k", "v").await.unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&db.path()), 0o600);
    for suffix in ["-wal", "-shm"] {
        let mut p = db.path().into_os_string();
        p.push(suffix);
        let p = std::path::PathBuf::from(p);
        if p.exists() {
            assert_eq!(mode(&p), 0o600, "{}", p.display());
        }
    }
}
