//! The page's enrolled passkeys.

use store::Error;

use crate::Db;

#[tokio::test]
async fn passkeys_are_added_listed_used_and_removed() {
    let db = Db::new().await;
    let s = &db.store;
    let a = s.add_passkey("00ff", r#"{"cred": 1}"#).await.unwrap();
    assert_eq!(a.last_used, None);
    s.add_passkey("abcdef", r#"{"cred": 2}"#).await.unwrap();
    let ids: Vec<String> = s
        .passkeys()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&"00ff".to_owned()) && ids.contains(&"abcdef".to_owned()));

    s.passkey_used("00ff", Some(r#"{"cred": 1, "counter": 7}"#))
        .await
        .unwrap();
    let p = s.passkey("00ff").await.unwrap().unwrap();
    assert!(p.last_used.is_some());
    assert_eq!(p.passkey, r#"{"cred": 1, "counter": 7}"#);
    s.passkey_used("abcdef", None).await.unwrap();
    assert_eq!(
        s.passkey("abcdef").await.unwrap().unwrap().passkey,
        r#"{"cred": 2}"#
    );

    assert!(s.remove_passkey("00ff").await.unwrap());
    assert!(!s.remove_passkey("00ff").await.unwrap());
    assert!(s.passkey("00ff").await.unwrap().is_none());
    assert!(s
        .passkey_used("00ff", None)
        .await
        .unwrap_err()
        .is_not_found());
}

#[tokio::test]
async fn bad_passkeys_are_refused() {
    let db = Db::new().await;
    let s = &db.store;
    s.add_passkey("aa", "{}").await.unwrap();
    assert!(s
        .add_passkey("aa", "{}")
        .await
        .unwrap_err()
        .is_already_exists());
    let long = "a".repeat(2050);
    let big = format!("\"{}\"", "x".repeat(70_000));
    let cases: &[(&str, &str, &str)] = &[
        ("uppercase id", "AB", "{}"),
        ("non-hex id", "zz", "{}"),
        ("short id", "a", "{}"),
        ("long id", &long, "{}"),
        ("not JSON", "bb", "{not json"),
        ("huge document", "cc", &big),
    ];
    for (what, id, doc) in cases {
        let err = s.add_passkey(id, doc).await.unwrap_err();
        assert!(matches!(err, Error::Invalid { .. }), "{what}: {err:?}");
    }
    assert!(matches!(
        s.passkey_used("aa", Some("nope")).await.unwrap_err(),
        Error::Invalid { .. }
    ));
    assert_eq!(s.passkeys().await.unwrap().len(), 1);
}
