//! A legacy server's `elicitation/create` sent while a call for the owner is in flight: held,
//! returned as a question, answered later, and the call goes on — over stdio and HTTP.

// The manager's own tests call its servers' tools (in the daemon only the executor does).
#![allow(clippy::disallowed_methods)]

use std::sync::Arc;

use mcp::{CallStep, Client, Protocol, ServerConfig};
use serde_json::Map;

use crate::support::{args, bounded, options, short, stdio, HttpServer};

const ANSWERED: &str =
    "sampling/createMessage:-32601 roots/list:-32601 elicitation/create:no-error";

async fn owner_call(c: &Arc<Client>) {
    let step = c.start_owner_call("echo", args("x")).await.unwrap();
    let CallStep::Input(needed) = step else {
        panic!("the held elicitation did not come back as a question: {step:?}");
    };
    assert_eq!(needed.asks.len(), 1);
    // The owner answers (a form without fields: accepted as it is).
    let reply = needed.asks[0].answer("ok").unwrap();
    let mut replies = Map::new();
    replies.insert(needed.asks[0].key.clone(), reply);
    match c.resume_call(needed, replies).await.unwrap() {
        CallStep::Done(out) => assert_eq!(out.text, ANSWERED),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_held_legacy_elicitation_is_the_owners_question_over_stdio() {
    bounded(async {
        let config = ServerConfig {
            protocol: Protocol::Legacy,
            ..stdio(&["--server-requests"], short())
        };
        let c = Arc::new(Client::connect(&config, options()).await.unwrap());
        owner_call(&c).await;
        // A question the owner never answers is declined when dropped, and the call finishes.
        let CallStep::Input(needed) = c.start_owner_call("echo", args("x")).await.unwrap() else {
            panic!("no question");
        };
        drop(needed);
        // The next owner call is held again (the first one released its hold).
        owner_call(&c).await;
        // A headless call declines it.
        assert_eq!(c.call_tool("echo", args("x")).await.unwrap().text, ANSWERED);
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn the_owners_time_does_not_count_against_the_calls_deadline() {
    bounded(async {
        let mut timeouts = short();
        timeouts.call = std::time::Duration::from_millis(300);
        let config = ServerConfig {
            protocol: Protocol::Legacy,
            ..stdio(&["--server-requests"], timeouts)
        };
        let c = Arc::new(Client::connect(&config, options()).await.unwrap());
        let CallStep::Input(needed) = c.start_owner_call("echo", args("x")).await.unwrap() else {
            panic!("no question");
        };
        // The owner takes longer than the call's whole deadline.
        tokio::time::sleep(std::time::Duration::from_millis(900)).await;
        let mut replies = Map::new();
        replies.insert(
            needed.asks[0].key.clone(),
            needed.asks[0].answer("yes").unwrap(),
        );
        match c.resume_call(needed, replies).await.unwrap() {
            CallStep::Done(out) => assert_eq!(out.text, ANSWERED),
            other => panic!("{other:?}"),
        }
        assert!(c.closed().is_none());
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_held_legacy_elicitation_is_the_owners_question_over_http() {
    bounded(async {
        let server = HttpServer::start(&["--server-requests"]).await;
        let config = ServerConfig {
            protocol: Protocol::Legacy,
            ..server.config(short())
        };
        let c = Arc::new(Client::connect(&config, options()).await.unwrap());
        owner_call(&c).await;
        c.close().await;
    })
    .await;
}
