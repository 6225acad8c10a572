//! The OAuth credentials table: one row per (server, issuer), replaced whole, and a kill -9
//! during a save (a token exchange or a refresh) loses no kept token and never leaves two.

use store::{Error, Store};

use crate::Db;

const CHILD_ENV: &str = "MAVEN_STORE_OAUTH_CRASH_CHILD_DB";
const TEST_NAME: &str = "oauth::kill_9_during_a_refresh_keeps_one_whole_row";

fn doc(n: u64) -> String {
    // Large enough that a torn write would show.
    serde_json::json!({"issuer": "https://as.example", "n": n, "pad": "x".repeat(20_000)})
        .to_string()
}

#[tokio::test]
async fn one_row_per_server_and_issuer_replaced_whole() {
    let db = Db::new().await;
    let s = &db.store;
    s.save_oauth_credentials("a", "https://as1", "{\"v\":1}")
        .await
        .unwrap();
    s.save_oauth_credentials("a", "https://as1", "{\"v\":2}")
        .await
        .unwrap();
    s.save_oauth_credentials("a", "https://as2", "{\"v\":3}")
        .await
        .unwrap();
    s.save_oauth_credentials("b", "https://as1", "{\"v\":4}")
        .await
        .unwrap();
    assert_eq!(
        s.oauth_credentials("a").await.unwrap(),
        [
            ("https://as1".to_owned(), "{\"v\":2}".to_owned()),
            ("https://as2".to_owned(), "{\"v\":3}".to_owned())
        ]
    );
    assert_eq!(s.oauth_servers().await.unwrap(), ["a", "b"]);
    assert_eq!(s.forget_oauth_credentials("a").await.unwrap(), 2);
    assert!(s.oauth_credentials("a").await.unwrap().is_empty());
    assert_eq!(s.oauth_credentials("b").await.unwrap().len(), 1);
}

#[tokio::test]
async fn malformed_rows_are_refused() {
    let db = Db::new().await;
    let s = &db.store;
    for (server, issuer, doc) in [
        ("", "https://as", "{}"),
        ("a", "", "{}"),
        ("a", "https://as", "not json"),
    ] {
        let e = s
            .save_oauth_credentials(server, issuer, doc)
            .await
            .unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }), "{e:?}");
    }
    let big = format!("\"{}\"", "x".repeat(300 * 1024));
    let e = s
        .save_oauth_credentials("a", "https://as", &big)
        .await
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Invalid {
                what: "oauth credentials",
                ..
            }
        ),
        "{e:?}"
    );
}

#[tokio::test]
async fn kill_9_during_a_refresh_keeps_one_whole_row() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        let store = Store::open(std::path::Path::new(&path)).await.unwrap();
        for n in 0..200_000u64 {
            store
                .save_oauth_credentials("srv", "https://as.example", &doc(n))
                .await
                .unwrap();
            println!("ack {n}");
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("oauth-crash.db");
    let acked = crate::kill_9_after_acks(TEST_NAME, CHILD_ENV, &path, 40);

    let store = Store::open(&path).await.unwrap();
    let rows = store.oauth_credentials("srv").await.unwrap();
    assert_eq!(rows.len(), 1, "exactly one row for the pair");
    let v: serde_json::Value = serde_json::from_str(&rows[0].1).unwrap();
    let n = v["n"].as_u64().unwrap();
    assert!(
        n + 1 >= acked,
        "row {n} is older than the last acknowledged save {acked}"
    );
    assert_eq!(rows[0].1, doc(n), "the row is whole");
}
