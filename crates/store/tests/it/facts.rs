//! Facts: key → value.

use crate::Db;

#[tokio::test]
async fn facts_are_set_replaced_listed_and_deleted() {
    let db = Db::new().await;
    let s = &db.store;
    assert_eq!(s.fact("rss:etag:a").await.unwrap(), None);
    s.set_fact("rss:etag:a", "\"v1\"").await.unwrap();
    s.set_fact("rss:etag:a", "\"v2\"").await.unwrap();
    s.set_fact("rss:etag:b", "\"b\"").await.unwrap();
    s.set_fact("persona", "").await.unwrap();
    assert_eq!(
        s.fact("rss:etag:a").await.unwrap().as_deref(),
        Some("\"v2\"")
    );
    assert_eq!(s.fact("persona").await.unwrap().as_deref(), Some(""));
    assert_eq!(
        s.facts_with_prefix("rss:etag:").await.unwrap(),
        vec![
            ("rss:etag:a".to_owned(), "\"v2\"".to_owned()),
            ("rss:etag:b".to_owned(), "\"b\"".to_owned())
        ]
    );
    assert!(s.delete_fact("rss:etag:a").await.unwrap());
    assert!(!s.delete_fact("rss:etag:a").await.unwrap());
    assert_eq!(s.fact("rss:etag:a").await.unwrap(), None);
    let err = s.set_fact("", "v").await.unwrap_err();
    assert!(err.is_constraint(), "{err:?}");
}
