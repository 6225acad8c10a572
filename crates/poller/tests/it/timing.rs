//! The scheduled loop against a real server. Assertions are on what the server saw (which
//! feeds, in what spacing), never on how fast anything ran.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::server::{rss, Reply, Server};
use crate::{door, spec_with, Env};

#[tokio::test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test's own server and deadline, outside the poller's clock"
)]
async fn two_feeds_on_one_host_respect_the_per_host_interval() {
    let server = Server::start(|req| Reply::ok(rss(&[(req.path.as_str(), "X", 0)]))).await;
    let env = Env::new().await;
    let host_interval = Duration::from_millis(400);
    let feed = |name: &str, enabled: bool| {
        let mut d = door(name);
        d.host_interval = host_interval;
        let mut s = spec_with(name, &server.url(&format!("/{name}")), d);
        s.interval = Duration::from_millis(10);
        s.enabled = enabled;
        s
    };
    let mut opts = crate::options();
    opts.min_interval = Duration::from_millis(10);
    let p = env
        .poller_with(
            vec![feed("a", true), feed("b", true), feed("off", false)],
            opts,
        )
        .await;
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (p, c) = (p.clone(), cancel.clone());
        async move { p.run(c).await }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while server.count() < 6 {
        assert!(
            std::time::Instant::now() < deadline,
            "six polls did not happen within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cancel.cancel();
    run.await.unwrap();

    let reqs = server.requests();
    let paths: Vec<&str> = reqs.iter().map(|r| r.path.as_str()).collect();
    assert!(paths.contains(&"/a") && paths.contains(&"/b"), "{paths:?}");
    assert!(
        !paths.contains(&"/off"),
        "a feed that is not enabled is never fetched"
    );
    // Each feed alone would poll every 10 ms; sharing a host, no two requests come closer
    // than the host interval (less a margin for the connect of the earlier one).
    for w in reqs.windows(2) {
        let gap = w[1].at - w[0].at;
        assert!(
            gap >= host_interval - Duration::from_millis(100),
            "{gap:?} between {} and {}",
            w[0].path,
            w[1].path
        );
    }
    let st = p.status();
    assert!(st[0].last_success.is_some() && st[1].last_success.is_some());
    assert_eq!(st[2].state, poller::FeedState::Off);
    assert_eq!(st[2].next_poll, None);
}

#[tokio::test]
async fn no_feeds_no_task_no_request() {
    let env = Env::new().await;
    let p = env.poller(Vec::new()).await;
    assert!(!p.has_active_feeds());
    assert!(p.status().is_empty());
    // Returns at once.
    p.run(CancellationToken::new()).await;
}
