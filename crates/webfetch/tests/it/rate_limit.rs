//! The per-host rate limit (W-8) on tokio's paused clock: deterministic.

use std::time::Duration;

use crate::support::*;

fn offsets(server: &Server) -> Vec<Duration> {
    let seen = server.seen();
    let t0 = seen[0].at;
    seen.iter().map(|s| s.at - t0).collect()
}

#[tokio::test(start_paused = true)]
async fn one_request_per_host_per_interval() {
    let server = serve(LOOPBACK, ok_path).await;
    let mut d = private_door();
    d.host_interval = Duration::from_secs(1);
    let f = fetcher(d, Scripted::default(), &Dials::default());
    for _ in 0..3 {
        body(&f, &server.url("/")).await;
    }
    let secs = |s| Duration::from_secs(s);
    assert_eq!(offsets(&server), vec![secs(0), secs(1), secs(2)]);
}

#[tokio::test(start_paused = true)]
async fn concurrent_callers_are_spaced_too() {
    let server = serve(LOOPBACK, ok_path).await;
    let mut d = private_door();
    d.host_interval = Duration::from_millis(500);
    let f = fetcher(d, Scripted::default(), &Dials::default());
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let (f, url) = (f.clone(), server.url("/"));
            tokio::spawn(async move { f.get(&url).await?.bytes().await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let ms = |m| Duration::from_millis(m);
    let mut got = offsets(&server);
    got.sort();
    assert_eq!(got, vec![ms(0), ms(500), ms(1000), ms(1500)]);
}

/// Every redirect hop is charged to its host.
#[tokio::test(start_paused = true)]
async fn redirect_hops_are_charged() {
    let server = serve(PUBLIC_A, |s| async move {
        match s.path.as_str() {
            "/1" => redirect(302, "/2"),
            "/2" => redirect(302, "/3"),
            _ => resp(200, &[], b""),
        }
    })
    .await;
    let mut d = door("fetch");
    d.host_interval = Duration::from_secs(2);
    let f = fetcher(d, Scripted::default(), &Dials::default());
    body(&f, &server.url("/1")).await;
    let secs = |s| Duration::from_secs(s);
    assert_eq!(offsets(&server), vec![secs(0), secs(2), secs(4)]);
}

/// Hosts are limited separately; an interval of zero is no limit.
#[tokio::test(start_paused = true)]
async fn hosts_are_separate_and_zero_is_unlimited() {
    let a = serve(PUBLIC_A, ok_path).await;
    let b = serve(PUBLIC_B, ok_path).await;
    let mut d = door("fetch");
    d.host_interval = Duration::from_secs(1);
    let f = fetcher(d, Scripted::default(), &Dials::default());
    let start = tokio::time::Instant::now();
    body(&f, &a.url("/")).await;
    body(&f, &b.url("/")).await;
    assert_eq!(start.elapsed(), Duration::ZERO);

    let unlimited = fetcher(door("fetch"), Scripted::default(), &Dials::default());
    for _ in 0..5 {
        body(&unlimited, &a.url("/")).await;
    }
    assert_eq!(start.elapsed(), Duration::ZERO);
}
