//! S-3: a kill -9 at any instant loses nothing acknowledged and duplicates nothing.
//!
//! The test re-runs its own binary as a child that writes feed batches as fast as it can and
//! prints each acknowledged batch; the parent kills it with SIGKILL mid-stream, reopens the file
//! and checks every acknowledged batch is there, whole, exactly once.

use store::{FeedBatch, NotesQuery, Store};

use crate::note;

const CHILD_ENV: &str = "MAVEN_STORE_CRASH_CHILD_DB";
const TEST_NAME: &str = "crash::kill_9_loses_nothing_acknowledged";

fn batch(i: u32) -> FeedBatch {
    FeedBatch {
        feed: "f".into(),
        notes: (0..3)
            .map(|j| note("rss:f", &format!("{i}-{j}"), "item"))
            .collect(),
        seen_keys: (0..3).map(|j| format!("{i}-{j}")).collect(),
        facts: vec![("rss:latest:f".into(), format!("{i}"))],
        ..FeedBatch::default()
    }
}

async fn child(path: &str) {
    let store = Store::open(std::path::Path::new(path)).await.unwrap();
    // Bounded, in case the parent is gone: it kills us long before this ends.
    for i in 0..200_000u32 {
        store.commit_feed_batch(batch(i)).await.unwrap();
        println!("ack {i}");
    }
}

#[tokio::test]
async fn kill_9_loses_nothing_acknowledged() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        child(&path).await;
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.db");
    let acked = u32::try_from(crate::kill_9_after_acks(TEST_NAME, CHILD_ENV, &path, 40)).unwrap();

    let store = Store::open(&path).await.unwrap();
    let notes = store
        .notes(NotesQuery {
            limit: 1_000_000,
            ..NotesQuery::default()
        })
        .await
        .unwrap();
    let seen = store.seen_count("f").await.unwrap();
    // Every batch is whole: as many notes as seen marks, three per batch.
    assert_eq!(notes.len() as u64, seen);
    assert_eq!(notes.len() % 3, 0);
    let committed = (notes.len() / 3) as u32;
    assert!(
        committed >= acked,
        "{committed} batches on disk, {acked} acknowledged"
    );
    let latest: u32 = store
        .fact("rss:latest:f")
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(latest + 1, committed, "the fact moved with its batch");
    // Replaying everything acknowledged (a restart re-reading the feed) adds nothing.
    for i in 0..committed {
        let out = store.commit_feed_batch(batch(i)).await.unwrap();
        assert_eq!(out.notes_inserted, 0, "batch {i} duplicated");
    }
}
