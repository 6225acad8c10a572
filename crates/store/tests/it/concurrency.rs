//! Many tasks on many runtime threads share one store.

use std::collections::HashSet;

use store::{FeedBatch, NotesQuery};

use crate::{note, Db};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_tasks_write_and_read_concurrently() {
    let db = Db::new().await;
    let tasks = 16;
    let per_task = 6;
    let mut handles = Vec::new();
    for t in 0..tasks {
        let s = db.store.clone();
        handles.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in 0..per_task {
                let n = s
                    .add_note(note("load", &format!("{t}-{i}"), "x"))
                    .await
                    .unwrap();
                ids.push(n.unwrap().id);
                if i == 0 {
                    // Everyone also writes the same note: exactly one wins.
                    s.add_note(note("load", "shared", "x")).await.unwrap();
                }
                s.set_fact(&format!("task:{t}"), &i.to_string())
                    .await
                    .unwrap();
                if i % 3 == 0 {
                    s.commit_feed_batch(FeedBatch {
                        feed: "f".into(),
                        seen_keys: vec![format!("{t}-{i}")],
                        ..FeedBatch::default()
                    })
                    .await
                    .unwrap();
                    s.notes(NotesQuery {
                        limit: 5,
                        ..NotesQuery::default()
                    })
                    .await
                    .unwrap();
                }
            }
            ids
        }));
    }
    let mut all = HashSet::new();
    for h in handles {
        for id in h.await.unwrap() {
            assert!(all.insert(id), "id {id} handed out twice");
        }
    }
    assert_eq!(all.len(), tasks * per_task);
    let q = NotesQuery {
        limit: 10_000,
        ..NotesQuery::default()
    };
    assert_eq!(db.store.notes(q).await.unwrap().len(), tasks * per_task + 1);
    for t in 0..tasks {
        let v = db.store.fact(&format!("task:{t}")).await.unwrap();
        assert_eq!(v.as_deref(), Some("5"));
    }
    assert_eq!(db.store.seen_count("f").await.unwrap(), (tasks * 2) as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_request_still_commits_whole() {
    let db = Db::new().await;
    // Queue a batch and drop its future at once, before it can be answered.
    let s = db.store.clone();
    let fut = s.commit_feed_batch(FeedBatch {
        feed: "f".into(),
        notes: vec![note("rss:f", "a", "x"), note("rss:f", "b", "y")],
        seen_keys: vec!["a".into(), "b".into()],
        facts: vec![("rss:latest:f".into(), "a".into())],
        ..FeedBatch::default()
    });
    // Polled once (the request is queued), then dropped unanswered.
    let _ = tokio::time::timeout(std::time::Duration::ZERO, fut).await;
    // The request was queued, so it commits whole; requests are served in order, so this
    // read sees it.
    assert_eq!(
        db.store.notes(NotesQuery::default()).await.unwrap().len(),
        2
    );
    assert_eq!(db.store.seen_count("f").await.unwrap(), 2);
    assert_eq!(
        db.store.fact("rss:latest:f").await.unwrap().as_deref(),
        Some("a")
    );
}
