//! Rough latency and throughput of the store on this machine's disk.
//!
//! `cargo run --release -p store --example store_load`
//!
//! Every write is a durable transaction (WAL, `synchronous=FULL`), so write figures are bounded
//! by the disk's fsync latency; reads and the thread hop are not.

#![allow(clippy::unwrap_used, missing_docs)]
#![allow(
    clippy::disallowed_macros,
    reason = "an example prints what it measured"
)]

use std::time::{Duration, Instant};

use store::{FeedBatch, NewNote, NotesQuery, Store};

fn note(i: usize) -> NewNote {
    NewNote {
        source: format!("rss:feed{}", i % 10),
        key: format!("item-{i}"),
        text: format!(
            "headline number {i} about rust, weather and новости {}",
            i % 97
        ),
        link: Some(format!("https://example.org/{i}")),
        published: None,
    }
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let total: Duration = samples.iter().sum();
    let p = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    println!(
        "{what:<44} n={:<6} mean={:>9.1?} p50={:>9.1?} p99={:>9.1?}",
        samples.len(),
        total / samples.len() as u32,
        p(0.5),
        p(0.99)
    );
}

#[expect(
    clippy::disallowed_methods,
    reason = "a load example measures wall time, on a database of its own"
)]
async fn timed<F: std::future::Future>(f: F) -> Duration {
    let t = Instant::now();
    f.await;
    t.elapsed()
}

#[tokio::main]
#[expect(
    clippy::disallowed_methods,
    reason = "a load example measures wall time, on a database of its own"
)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("load.db")).await.unwrap();

    let mut s = Vec::new();
    for _ in 0..2000 {
        s.push(timed(store.schema_version()).await);
    }
    report("round trip to the worker (schema_version)", s);

    let mut s = Vec::new();
    for i in 0..300 {
        s.push(timed(store.add_note(note(i))).await);
    }
    report("add_note, sequential (one fsync each)", s);

    let mut s = Vec::new();
    for b in 0..100 {
        let notes: Vec<NewNote> = (0..20).map(|j| note(1_000_000 + b * 20 + j)).collect();
        let batch = FeedBatch {
            feed: "bulk".into(),
            seen_keys: notes.iter().map(|n| n.key.clone()).collect(),
            facts: vec![("rss:latest:bulk".into(), b.to_string())],
            notes,
            ..FeedBatch::default()
        };
        s.push(timed(store.commit_feed_batch(batch)).await);
    }
    report("commit_feed_batch, 20 items + 20 seen + 1 fact", s);

    let t = Instant::now();
    let tasks: Vec<_> = (0..64)
        .map(|k| {
            let st = store.clone();
            tokio::spawn(async move {
                for i in 0..10 {
                    st.add_note(note(2_000_000 + k * 10 + i)).await.unwrap();
                }
            })
        })
        .collect();
    for h in tasks {
        h.await.unwrap();
    }
    let e = t.elapsed();
    println!(
        "{:<44} {} notes in {:.1?} = {:.0} notes/s",
        "add_note, 64 tasks in flight",
        640,
        e,
        640.0 / e.as_secs_f64()
    );

    // Fill to ~10k notes in big batches, then read.
    for b in 0..20 {
        let notes: Vec<NewNote> = (0..500).map(|j| note(3_000_000 + b * 500 + j)).collect();
        store
            .commit_feed_batch(FeedBatch {
                feed: "fill".into(),
                notes,
                ..FeedBatch::default()
            })
            .await
            .unwrap();
    }
    let mut s = Vec::new();
    for _ in 0..500 {
        s.push(timed(store.notes(NotesQuery::default())).await);
    }
    report("notes(limit 50) of ~11k", s);
    let mut s = Vec::new();
    for _ in 0..500 {
        let q = NotesQuery {
            source_prefix: Some("rss:feed3".into()),
            ..NotesQuery::default()
        };
        s.push(timed(store.notes(q)).await);
    }
    report("notes(prefix rss:feed3, limit 50) of ~11k", s);
    let mut s = Vec::new();
    for _ in 0..500 {
        s.push(timed(store.search_notes("новости 42", 20)).await);
    }
    report("search_notes(2 words, limit 20) of ~11k", s);
    store.close().await.unwrap();
}
