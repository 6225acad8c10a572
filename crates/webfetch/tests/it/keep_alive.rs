//! Keep-alive within one door for one origin (W-2): reused, several at once, never shared
//! between doors, and a connection the server closed is replaced.

use std::sync::Arc;

use tokio::sync::Barrier;

use crate::support::*;

#[tokio::test]
async fn sequential_requests_share_one_connection() {
    let server = serve(LOOPBACK, ok_path).await;
    let dials = Dials::default();
    let f = fetcher(private_door(), Scripted::default(), &dials);
    for i in 0..5 {
        let got = body(&f, &server.url(&format!("/{i}"))).await;
        assert_eq!(got, format!("/{i}"));
    }
    assert_eq!(server.conns(), 1);
    assert_eq!(dials.count(), 1);
    assert_eq!(f.idle_connections(), 1);
    // Clones of a fetcher are the same door.
    let g = f.clone();
    body(&g, &server.url("/clone")).await;
    assert_eq!(server.conns(), 1);
}

#[tokio::test]
async fn doors_never_share_connections() {
    let server = serve(LOOPBACK, ok_path).await;
    let a = lan();
    let b = lan();
    for _ in 0..2 {
        body(&a, &server.url("/a")).await;
        body(&b, &server.url("/b")).await;
    }
    assert_eq!(server.conns(), 2);
    let seen = server.seen();
    let conn_of = |p: &str| {
        let mut c: Vec<usize> = seen
            .iter()
            .filter(|s| s.path == p)
            .map(|s| s.conn)
            .collect();
        c.dedup();
        c
    };
    assert_eq!(conn_of("/a").len(), 1);
    assert_eq!(conn_of("/b").len(), 1);
    assert_ne!(conn_of("/a"), conn_of("/b"));
}

/// Four requests in flight at once: the server answers none until all four arrived, so this
/// only completes if the door opened several connections to the one origin.
#[tokio::test]
async fn concurrent_requests_use_several_connections() {
    let barrier = Arc::new(Barrier::new(4));
    let server = serve(LOOPBACK, move |s| {
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            ok_path(s).await
        }
    })
    .await;
    let f = lan();
    let mut tasks = Vec::new();
    for i in 0..4 {
        let f = f.clone();
        let url = server.url(&format!("/{i}"));
        tasks.push(tokio::spawn(
            async move { f.get(&url).await?.bytes().await },
        ));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        assert_eq!(t.await.unwrap().unwrap(), format!("/{i}"));
    }
    assert_eq!(server.conns(), 4);
    assert_eq!(f.idle_connections(), 4);
}

/// A body not read to its end does not return its connection to the pool.
#[tokio::test]
async fn unread_body_is_not_pooled() {
    let server = serve(LOOPBACK, ok_path).await;
    let f = lan();
    drop(f.get(&server.url("/x")).await.unwrap());
    assert_eq!(f.idle_connections(), 0);
    body(&f, &server.url("/y")).await;
    assert_eq!(server.conns(), 2);
}

/// The server closes an idle keep-alive connection without saying so: the next request goes
/// out on a fresh connection and succeeds.
#[tokio::test]
async fn a_connection_closed_by_the_server_is_replaced() {
    let server = serve(LOOPBACK, |s| async move {
        Reply::ThenClose(resp_bytes(200, &[], s.path.as_bytes()))
    })
    .await;
    let f = lan();
    for i in 0..3 {
        let got = body(&f, &server.url(&format!("/{i}"))).await;
        assert_eq!(got, format!("/{i}"));
    }
    assert_eq!(server.conns(), 3);
}

#[tokio::test]
async fn connection_close_is_honoured() {
    let server = serve(LOOPBACK, |_| async {
        resp(200, &[("Connection", "close")], b"x")
    })
    .await;
    let f = lan();
    for _ in 0..2 {
        body(&f, &server.url("/")).await;
    }
    assert_eq!(f.idle_connections(), 0);
    assert_eq!(server.conns(), 2);
}

/// A POST written on a reused connection that the server then drops without answering is not
/// sent again on a fresh connection: a JSON-RPC call may write, and must never run twice.
#[tokio::test]
async fn a_post_is_never_sent_twice() {
    let server = serve(LOOPBACK, |s| async move {
        if s.method == "POST" {
            Reply::ThenClose(Vec::new())
        } else {
            resp(200, &[], b"ok")
        }
    })
    .await;
    let f = lan();
    body(&f, &server.url("/warm")).await;
    assert_eq!(
        f.idle_connections(),
        1,
        "the POST goes out on a reused connection"
    );
    let res = f
        .post(
            &server.url("/call"),
            webfetch::HeaderValue::from_static("application/json"),
            "{}",
        )
        .await;
    assert!(res.is_err(), "the dropped answer is an error, not a retry");
    let posts = server.seen().iter().filter(|s| s.method == "POST").count();
    assert_eq!(posts, 1, "the server saw the POST once");
}
