//! Feed batches: atomic, replay-idempotent; seen marks and their pruning.

use std::collections::HashSet;

use store::{Error, FeedBatch, NotesQuery};
use time::{Duration, OffsetDateTime};

use crate::{note, Db};

fn keys(ks: &[&str]) -> Vec<String> {
    ks.iter().map(|k| (*k).to_owned()).collect()
}

fn batch(feed: &str, ks: &[&str]) -> FeedBatch {
    FeedBatch {
        feed: feed.to_owned(),
        notes: ks
            .iter()
            .map(|k| note(&format!("rss:{feed}"), k, &format!("item {k}")))
            .collect(),
        seen_keys: keys(ks),
        facts: vec![
            (
                format!("rss:latest:{feed}"),
                ks.first().copied().unwrap_or("").to_owned(),
            ),
            (format!("rss:etag:{feed}"), "\"e1\"".to_owned()),
        ],
        remove_facts: vec![],
    }
}

#[tokio::test]
async fn a_batch_writes_notes_seen_marks_and_facts() {
    let db = Db::new().await;
    let s = &db.store;
    assert!(s.is_new_feed("news").await.unwrap());
    let out = s
        .commit_feed_batch(batch("news", &["a", "b", "c"]))
        .await
        .unwrap();
    assert_eq!(out.notes_inserted, 3);
    assert_eq!(out.notes_existing, 0);
    assert_eq!(out.inserted_ids.len(), 3);
    assert_eq!(
        (out.seen_new, out.seen_refreshed, out.facts_written),
        (3, 0, 2)
    );
    assert!(!s.is_new_feed("news").await.unwrap());
    assert!(s.is_new_feed("other").await.unwrap());
    assert_eq!(s.seen_count("news").await.unwrap(), 3);
    assert_eq!(
        s.fact("rss:latest:news").await.unwrap().as_deref(),
        Some("a")
    );
    let seen = s.seen_keys("news", &keys(&["a", "c", "z"])).await.unwrap();
    assert_eq!(seen, HashSet::from(["a".to_owned(), "c".to_owned()]));
    assert!(s
        .seen_keys("other", &keys(&["a"]))
        .await
        .unwrap()
        .is_empty());
    assert!(s.seen_keys("news", &[]).await.unwrap().is_empty());
    let counts = s.note_counts(Some("rss:")).await.unwrap();
    assert_eq!(counts.len(), 1);
    assert_eq!(counts[0].count, 3);
}

#[tokio::test]
async fn replaying_a_batch_never_duplicates() {
    let db = Db::new().await;
    let s = &db.store;
    let b = batch("news", &["a", "b"]);
    s.commit_feed_batch(b.clone()).await.unwrap();
    let again = s.commit_feed_batch(b).await.unwrap();
    assert_eq!((again.notes_inserted, again.notes_existing), (0, 2));
    assert!(again.inserted_ids.is_empty());
    assert_eq!((again.seen_new, again.seen_refreshed), (0, 2));
    assert_eq!(s.notes(NotesQuery::default()).await.unwrap().len(), 2);
    // A repeated id inside one batch is written once.
    let mut dup = batch("news", &["c", "c"]);
    dup.seen_keys.dedup();
    let out = s.commit_feed_batch(dup).await.unwrap();
    assert_eq!((out.notes_inserted, out.notes_existing), (1, 1));
}

#[tokio::test]
async fn a_batch_with_one_bad_note_leaves_nothing_behind() {
    let db = Db::new().await;
    let s = &db.store;
    let mut b = batch("news", &["a", "b"]);
    // The last note breaks a schema bound after the others were inserted in the transaction.
    b.notes.push(note("rss:news", "", "no key"));
    b.seen_keys.push("z".to_owned());
    let err = s.commit_feed_batch(b).await.unwrap_err();
    assert!(matches!(err, Error::Constraint(_)), "{err:?}");

    let mut late = batch("news", &["a", "b"]);
    // The failure may come last, after notes, marks and facts: a bad fact key.
    late.facts.push((String::new(), "v".to_owned()));
    let err = s.commit_feed_batch(late).await.unwrap_err();
    assert!(err.is_constraint(), "{err:?}");

    assert!(s.notes(NotesQuery::default()).await.unwrap().is_empty());
    assert!(s.is_new_feed("news").await.unwrap());
    assert_eq!(s.seen_count("news").await.unwrap(), 0);
    assert_eq!(s.fact("rss:latest:news").await.unwrap(), None);
    assert_eq!(s.fact("rss:etag:news").await.unwrap(), None);
    // And the store is usable afterwards.
    s.commit_feed_batch(batch("news", &["a"])).await.unwrap();
}

#[tokio::test]
async fn a_batch_removes_validators_the_server_stopped_sending() {
    let db = Db::new().await;
    let s = &db.store;
    s.set_fact("rss:last-modified:news", "Mon, 30 Nov 2026 00:00:00 GMT")
        .await
        .unwrap();
    let mut b = batch("news", &["a"]);
    b.remove_facts = vec![
        "rss:last-modified:news".to_owned(),
        "rss:never:news".to_owned(),
    ];
    let out = s.commit_feed_batch(b).await.unwrap();
    assert_eq!(out.facts_written, 3);
    assert_eq!(s.fact("rss:last-modified:news").await.unwrap(), None);
}

#[tokio::test]
async fn an_empty_feed_name_is_refused() {
    let db = Db::new().await;
    let err = db
        .store
        .commit_feed_batch(FeedBatch::default())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Invalid { .. }), "{err:?}");
}

#[tokio::test]
async fn pruning_forgets_only_old_keys_absent_from_the_fetch() {
    let db = Db::new().await;
    let s = &db.store;
    s.commit_feed_batch(batch("news", &["a", "b", "c"]))
        .await
        .unwrap();
    s.commit_feed_batch(batch("other", &["b"])).await.unwrap();
    let future = OffsetDateTime::now_utc() + Duration::hours(1);
    let past = OffsetDateTime::now_utc() - Duration::hours(1);

    // Nothing is old enough yet.
    assert_eq!(s.prune_seen("news", &keys(&["a"]), past).await.unwrap(), 0);
    // An empty (or failed) fetch prunes nothing, however old.
    assert_eq!(s.prune_seen("news", &[], future).await.unwrap(), 0);
    assert_eq!(s.seen_count("news").await.unwrap(), 3);
    // Old and absent from the current fetch: forgotten; other feeds untouched.
    assert_eq!(
        s.prune_seen("news", &keys(&["a"]), future).await.unwrap(),
        2
    );
    let left = s.seen_keys("news", &keys(&["a", "b", "c"])).await.unwrap();
    assert_eq!(left, HashSet::from(["a".to_owned()]));
    assert_eq!(s.seen_count("other").await.unwrap(), 1);
    // Notes are never pruned with their marks.
    assert_eq!(s.notes(NotesQuery::default()).await.unwrap().len(), 4);
}
