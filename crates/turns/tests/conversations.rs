//! Turns of different conversations never wait on each other; the turns of one conversation
//! keep their order. Real pieces: a store in a temporary directory, the executor, and a slow
//! stdio MCP server (`testkit-mcp --call-delay-ms`).

// Helpers outside `#[test]` functions unwrap too: a failed setup is a failed test.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use mcp::{Managed, Manager, ManagerOptions, McpTimeouts, ServerConfig, Transport};
use store::{Store, ToolState};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use turns::{Conversation, Front, Outcome, Turns};

/// How long the slow server takes to answer a call.
const DELAY: Duration = Duration::from_secs(6);

/// `testkit-mcp`, built now when it is not yet (a build of this package's tests does not
/// build another package's binary).
fn testkit_mcp() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap().to_path_buf();
    let bin = dir.join("testkit-mcp");
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = std::process::Command::new(cargo)
            .args(["build", "-p", "testkit", "--bin", "testkit-mcp"])
            .status()
            .unwrap();
        assert!(st.success(), "cannot build testkit-mcp");
    }
    assert!(bin.exists(), "no testkit-mcp at {}", bin.display());
    bin
}

/// Waits for `f`, at most 30 s.
async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within 30 s"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_act_in_one_conversation_delays_no_other_and_its_next_turn_waits() {
    let dir = tempfile::tempdir().unwrap();
    #[expect(clippy::disallowed_methods, reason = "a test's own database")]
    let store = Store::open(&dir.path().join("m.db")).await.unwrap();

    // The slow server, dialled and listed.
    let config = ServerConfig {
        protocol: mcp::Protocol::Auto,
        name: "slow".into(),
        transport: Transport::Stdio {
            command: testkit_mcp().display().to_string(),
            args: vec!["--call-delay-ms".into(), DELAY.as_millis().to_string()],
            env: BTreeMap::new(),
        },
        timeouts: McpTimeouts {
            init: Duration::from_secs(20),
            list: Duration::from_secs(20),
            call: Duration::from_secs(60),
        },
    };
    let (manager, mut listings) = Manager::new(
        vec![Managed {
            config,
            enabled: true,
        }],
        ManagerOptions::default(),
    );
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    manager.spawn(&cancel, &tracker);
    let listed = within("the listing", listings.recv()).await.unwrap();
    let policy = allowlist::ServerPolicy {
        name: "slow".into(),
        allow_tools: vec!["echo".into()],
        max_tools: 12,
    };
    allowlist::reconcile(&store, &policy, &listed.tools)
        .await
        .unwrap();
    let step = stepup::testing::step_up();
    store
        .owner_sets_tool_state("slow_echo", ToolState::Enabled, &step, "t")
        .await
        .unwrap();
    let approvals = allowlist::Approvals {
        servers: [("slow".to_owned(), policy.allow_tools.clone())].into(),
        acts: Vec::new(),
    };
    let executor =
        allowlist::Executor::new(store.clone(), Arc::new(approvals), Some(manager.clone()));
    let turns = Arc::new(Turns::new(store.clone(), executor, None));

    // Each turn says when it ended, in the order they end.
    let (done, mut ended) = tokio::sync::mpsc::unbounded_channel::<(&'static str, Instant)>();
    let spawn = |name: &'static str, c: Conversation, text: &'static str| {
        let (turns, done) = (turns.clone(), done.clone());
        tokio::spawn(async move {
            let answer = turns.turn(&c, text).await;
            let _ = done.send((name, Instant::now()));
            answer
        })
    };
    let kitchen = Conversation::new(Front::Voice, "kitchen");
    let started = Instant::now();
    let slow = spawn("kitchen: slow echo", kitchen.clone(), "slow echo hello");
    // The call is in flight once it is written to acts_log.
    within("the slow call", async {
        while store.acts_log(10).await.unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    // The same conversation's next turn, queued behind it.
    let next = spawn("kitchen: help", kitchen.clone(), "help");
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Other conversations: the terminal's digest and help, a page's help.
    let asked = Instant::now();
    let digest = spawn("terminal: digest", Conversation::terminal(), "what's new?");
    let help = spawn("page: help", Conversation::new(Front::Page, "s1"), "help");
    let digest = within("the digest", digest).await.unwrap();
    let help = within("the page's help", help).await.unwrap();
    let quick = asked.elapsed();
    assert!(
        digest.text().starts_with("Nothing new in your feeds"),
        "{}",
        digest.text()
    );
    assert!(help.text().starts_with("I can tell you"), "{}", help.text());
    assert!(
        quick < DELAY / 2,
        "the other conversations waited {quick:?} for the slow act"
    );
    assert!(!slow.is_finished(), "the slow act is still in flight");

    let slow = within("the slow act", slow).await.unwrap();
    assert_eq!(
        slow.act.as_ref().map(|a| a.outcome),
        Some(Outcome::Ran),
        "{}",
        slow.text()
    );
    assert!(slow.text().contains("hello"), "{}", slow.text());
    let next = within("the kitchen's help", next).await.unwrap();
    assert!(next.text().starts_with("I can tell you"), "{}", next.text());

    drop(done);
    let mut order = Vec::new();
    while let Some((name, at)) = ended.recv().await {
        order.push((name, at));
    }
    let names: Vec<&str> = order.iter().map(|(n, _)| *n).collect();
    let pos = |n: &str| names.iter().position(|m| *m == n).unwrap();
    assert!(
        pos("terminal: digest") < pos("kitchen: slow echo"),
        "{names:?}"
    );
    assert!(pos("page: help") < pos("kitchen: slow echo"), "{names:?}");
    // One conversation's turns in order: its help waited for its slow act.
    assert!(
        pos("kitchen: slow echo") < pos("kitchen: help"),
        "{names:?}"
    );
    let slow_ended = order[pos("kitchen: slow echo")].1;
    assert!(
        slow_ended.duration_since(started) >= DELAY / 2,
        "the slow act took {:?}",
        slow_ended.duration_since(started)
    );

    cancel.cancel();
    tracker.close();
    within("the manager's tasks", tracker.wait()).await;
    manager.close().await;
}
