//! Notes: unique (source, key), newest first, prefixes, paging, counts, full-text search.

use proptest::prop_assert;
use store::{NewNote, NotesQuery};

use crate::{note, Db};

#[tokio::test]
async fn a_duplicate_note_is_ignored_and_the_first_kept() {
    let db = Db::new().await;
    let first = db
        .store
        .add_note(note("rss:a", "k", "one"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.text, "one");
    assert_eq!(first.link.as_deref(), Some("https://example.org/k"));
    assert!(db
        .store
        .add_note(note("rss:a", "k", "two"))
        .await
        .unwrap()
        .is_none());
    // Same key, other source: a different note.
    assert!(db
        .store
        .add_note(note("rss:b", "k", "three"))
        .await
        .unwrap()
        .is_some());
    let got = db.store.note_by_key("rss:a", "k").await.unwrap().unwrap();
    assert_eq!(got, first);
    assert!(db
        .store
        .note_by_key("rss:a", "nope")
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn notes_come_newest_first_with_prefix_limit_and_paging() {
    let db = Db::new().await;
    let sources = ["rss:a", "rss:b", "chat", "rss:a", "rss:ab", "rss:%"];
    let mut ids = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let n = db
            .store
            .add_note(note(s, &format!("k{i}"), &format!("t{i}")))
            .await
            .unwrap();
        ids.push(n.unwrap().id);
    }
    let q = |prefix: Option<&str>, limit, before_id| NotesQuery {
        source_prefix: prefix.map(str::to_owned),
        limit,
        before_id,
    };
    let keys = |v: Vec<store::Note>| v.into_iter().map(|n| n.key).collect::<Vec<_>>();
    let cases: Vec<(NotesQuery, Vec<&str>)> = vec![
        (q(None, 50, None), vec!["k5", "k4", "k3", "k2", "k1", "k0"]),
        (q(None, 2, None), vec!["k5", "k4"]),
        (q(None, 2, Some(ids[4])), vec!["k3", "k2"]),
        (
            q(Some("rss:"), 50, None),
            vec!["k5", "k4", "k3", "k1", "k0"],
        ),
        (q(Some("rss:a"), 50, None), vec!["k4", "k3", "k0"]),
        // Prefixes are literal: % is not a wildcard.
        (q(Some("rss:%"), 50, None), vec!["k5"]),
        (q(Some("nothing"), 50, None), vec![]),
        (q(None, 0, None), vec![]),
    ];
    for (query, want) in cases {
        let got = keys(db.store.notes(query.clone()).await.unwrap());
        assert_eq!(got, want, "{query:?}");
    }
    assert_eq!(NotesQuery::default().limit, 50);
}

#[tokio::test]
async fn note_counts_per_source() {
    let db = Db::new().await;
    for (s, k) in [
        ("rss:a", "1"),
        ("rss:a", "2"),
        ("rss:b", "1"),
        ("chat", "1"),
    ] {
        db.store.add_note(note(s, k, "t")).await.unwrap();
    }
    let all = db.store.note_counts(None).await.unwrap();
    let pairs: Vec<(String, u64)> = all.iter().map(|c| (c.source.clone(), c.count)).collect();
    assert_eq!(
        pairs,
        vec![("chat".into(), 1), ("rss:a".into(), 2), ("rss:b".into(), 1)]
    );
    let rss = db.store.note_counts(Some("rss:")).await.unwrap();
    assert_eq!(rss.len(), 2);
}

#[tokio::test]
async fn notes_that_break_the_schema_bounds_are_refused() {
    let db = Db::new().await;
    let long = "x".repeat(70_000);
    let cases: Vec<(&str, NewNote)> = vec![
        ("empty source", note("", "k", "t")),
        ("empty key", note("s", "", "t")),
        ("huge text", note("s", "k", &long)),
        ("huge key", note("s", &long, "t")),
    ];
    for (what, n) in cases {
        let err = db.store.add_note(n).await.unwrap_err();
        assert!(
            matches!(err, store::Error::Constraint(_)),
            "{what}: {err:?}"
        );
    }
    assert!(db
        .store
        .notes(NotesQuery::default())
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn search_finds_words_in_any_case_and_script() {
    let db = Db::new().await;
    for (k, t) in [
        ("1", "Rust 1.85 released with new lints"),
        ("2", "Новости о погоде в Москве"),
        ("3", "Weather news: café opens"),
        ("4", "rust never sleeps"),
        ("5", "Летим на самолете в Казань"),
    ] {
        db.store.add_note(note("rss:x", k, t)).await.unwrap();
    }
    let keys = |v: Vec<store::Note>| {
        let mut k: Vec<String> = v.into_iter().map(|n| n.key).collect();
        k.sort();
        k
    };
    let cases: &[(&str, &[&str])] = &[
        ("rust", &["1", "4"]),
        ("RUST lints", &["1"]),
        ("новости", &["2"]),
        ("ПОГОДЕ москве", &["2"]),
        ("cafe", &["3"]),
        ("absent", &[]),
        // Word forms, by their Snowball stems.
        ("lint", &["1"]),
        ("новость", &["2"]),
        ("погода", &["2"]),
        ("самолет", &["5"]),
        ("самолетом казани", &["5"]),
        ("", &[]),
        ("   ", &[]),
    ];
    for (q, want) in cases {
        assert_eq!(
            keys(db.store.search_notes(q, 10).await.unwrap()),
            *want,
            "{q:?}"
        );
    }
    assert_eq!(db.store.search_notes("rust", 1).await.unwrap().len(), 1);
}

#[tokio::test]
async fn search_syntax_in_the_owners_text_is_never_an_error() {
    let db = Db::new().await;
    db.store
        .add_note(note("s", "1", "AND OR NOT near"))
        .await
        .unwrap();
    for q in [
        "AND", "\"", "NEAR(a b", "a* OR", "text:foo", "(", "^x", "-x", "'\"'", "a\"b",
    ] {
        db.store.search_notes(q, 5).await.unwrap();
    }
    assert_eq!(db.store.search_notes("and or", 5).await.unwrap().len(), 1);
}

#[test]
fn any_search_text_is_answered() {
    use proptest::test_runner::{Config, TestRunner};
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let db = rt.block_on(Db::new());
    rt.block_on(db.store.add_note(note("s", "1", "some text")))
        .unwrap();
    let mut runner = TestRunner::new(Config::with_cases(256));
    runner
        .run(&"\\PC{0,40}", |q| {
            let got = rt.block_on(db.store.search_notes(&q, 5));
            prop_assert!(got.is_ok(), "{q:?}: {got:?}");
            Ok(())
        })
        .unwrap();
}

#[tokio::test]
async fn the_published_limits_are_the_schemas() {
    use store::{limits, FeedBatch};
    let db = Db::new().await;
    let s = &db.store;
    let x = |n: usize| "é".repeat(n); // characters, not bytes
    let at = NewNote {
        source: x(limits::NOTE_SOURCE),
        key: x(limits::NOTE_KEY),
        text: x(limits::NOTE_TEXT),
        link: Some(x(limits::NOTE_LINK)),
        published: None,
    };
    s.add_note(at.clone()).await.unwrap().unwrap();
    let over: Vec<NewNote> = vec![
        NewNote {
            source: x(limits::NOTE_SOURCE + 1),
            ..at.clone()
        },
        NewNote {
            key: x(limits::NOTE_KEY + 1),
            ..at.clone()
        },
        NewNote {
            key: "k2".into(),
            text: x(limits::NOTE_TEXT + 1),
            ..at.clone()
        },
        NewNote {
            key: "k3".into(),
            link: Some(x(limits::NOTE_LINK + 1)),
            ..at.clone()
        },
    ];
    for n in over {
        assert!(s.add_note(n).await.unwrap_err().is_constraint());
    }
    s.set_fact(&x(limits::FACT_KEY), &x(limits::FACT_VALUE))
        .await
        .unwrap();
    assert!(s
        .set_fact(&x(limits::FACT_KEY + 1), "v")
        .await
        .unwrap_err()
        .is_constraint());
    assert!(s
        .set_fact("k", &x(limits::FACT_VALUE + 1))
        .await
        .unwrap_err()
        .is_constraint());
    let seen = |feed: String, key: String| FeedBatch {
        feed,
        seen_keys: vec![key],
        ..FeedBatch::default()
    };
    s.commit_feed_batch(seen(x(limits::FEED_NAME), x(limits::SEEN_KEY)))
        .await
        .unwrap();
    for b in [
        seen(x(limits::FEED_NAME + 1), "k".into()),
        seen("f".into(), x(limits::SEEN_KEY + 1)),
    ] {
        assert!(s.commit_feed_batch(b).await.unwrap_err().is_constraint());
    }
    let mut t = crate::mcp_tool("srv", "t");
    t.name = "n".repeat(limits::TOOL_NAME);
    s.propose_tool(t.clone()).await.unwrap();
    t.name.push('n');
    t.tool = "t2".into();
    t.cmd[2] = "t2".into();
    assert!(s.propose_tool(t).await.unwrap_err().is_constraint());
}

#[tokio::test]
async fn a_note_keeps_its_items_published_time_and_a_batch_writes_it() {
    let db = Db::new().await;
    let at = time::macros::datetime!(2026-11-30 05:06:07.123 UTC);
    let mut n = note("rss:a", "k", "one");
    n.published = Some(at);
    let added = db.store.add_note(n).await.unwrap().unwrap();
    assert_eq!(added.published, Some(at));
    let mut later = note("rss:a", "k2", "two");
    later.published = None;
    db.store
        .commit_feed_batch(store::FeedBatch {
            feed: "a".into(),
            notes: vec![later],
            seen_keys: vec!["k2".into()],
            facts: Vec::new(),
            remove_facts: Vec::new(),
        })
        .await
        .unwrap();
    let got = db.store.note_by_key("rss:a", "k").await.unwrap().unwrap();
    assert_eq!(got.published, Some(at));
    let rows = db
        .store
        .notes(NotesQuery {
            source_prefix: Some("rss:".into()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    let published: Vec<_> = rows.iter().map(|r| (r.key.as_str(), r.published)).collect();
    assert_eq!(published, [("k2", None), ("k", Some(at))]);
    let found = db.store.search_notes("one", 5).await.unwrap();
    assert_eq!(found[0].published, Some(at));
}

#[tokio::test]
async fn notes_come_newest_first_by_their_published_time_else_their_noted_time() {
    let db = Db::new().await;
    let at = |s: &str| {
        time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap()
    };
    // Noted in this order, as a poll of a feed that lists its items in any order notes them.
    for (key, published) in [
        ("may-12", Some("2025-05-12T08:00:00Z")),
        ("may-11", Some("2025-05-11T08:00:00Z")),
        ("old-a", Some("2003-06-03T09:39:21Z")),
        ("undated", None),
        ("old-b", Some("2003-05-30T11:06:42Z")),
        ("may-13", Some("2025-05-13T08:00:00Z")),
    ] {
        let mut n = note("rss:a", key, key);
        n.published = published.map(at);
        db.store.add_note(n).await.unwrap().unwrap();
    }
    let got: Vec<String> = db
        .store
        .notes(NotesQuery::default())
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.key)
        .collect();
    // The undated one was noted now: newer than every published time.
    assert_eq!(
        got,
        ["undated", "may-13", "may-12", "may-11", "old-a", "old-b"]
    );
}
