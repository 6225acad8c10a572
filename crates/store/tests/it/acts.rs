//! The log of executed acts.

use crate::{local_tool, Db};
use store::{ActResult, NewActLog};

fn act(tool: &str, ok: bool) -> NewActLog {
    NewActLog {
        tool: tool.to_owned(),
        utterance: "delete task 4".to_owned(),
        arguments: serde_json::json!({"id": 4, "note": "ünïcode"}),
        confirmed_by: Some("owner (yes)".to_owned()),
        outcome: if ok { "deleted" } else { "server said no" }.to_owned(),
        result: if ok { ActResult::Ok } else { ActResult::Failed },
        duration_ms: 1234,
    }
}

#[tokio::test]
async fn acts_are_logged_and_read_newest_first() {
    let db = Db::new().await;
    let s = &db.store;
    s.propose_tool(local_tool("rm_task", &["task", "rm"]))
        .await
        .unwrap();
    let first = s.log_act(act("rm_task", true)).await.unwrap();
    let mut second = act("rm_task", false);
    second.confirmed_by = None;
    second.duration_ms = u64::MAX;
    let second_id = s.log_act(second).await.unwrap();
    assert!(second_id > first);

    let log = s.acts_log(10).await.unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].id, second_id);
    assert!(!log[0].ok);
    assert_eq!(log[0].confirmed_by, None);
    assert_eq!(
        log[0].duration_ms,
        i64::MAX as u64,
        "saturated, not wrapped"
    );
    let a = &log[1];
    assert_eq!((a.id, a.tool.as_str(), a.ok), (first, "rm_task", true));
    assert_eq!(a.utterance, "delete task 4");
    assert_eq!(a.arguments, serde_json::json!({"id": 4, "note": "ünïcode"}));
    assert_eq!(a.confirmed_by.as_deref(), Some("owner (yes)"));
    assert_eq!((a.outcome.as_str(), a.duration_ms), ("deleted", 1234));
    assert_eq!(s.acts_log(1).await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_act_of_an_unknown_tool_is_refused() {
    let db = Db::new().await;
    let err = db.store.log_act(act("ghost", true)).await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert!(db.store.acts_log(10).await.unwrap().is_empty());
}
