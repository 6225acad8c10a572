//! Proxy settings in the environment are never used (W-2). The variables are set only in a
//! child process (this test binary re-run on one test), so no other test sees them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::support::*;

const CHILD: &str = "WEBFETCH_IT_PROXY_CHILD";

#[tokio::test]
#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
async fn proxy_variables_are_ignored() {
    // A counting listener standing in for a proxy: it must see nothing.
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_addr = proxy.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    tokio::spawn(async move {
        while proxy.accept().await.is_ok() {
            h.fetch_add(1, Ordering::SeqCst);
        }
    });
    let proxy_url = format!("http://{proxy_addr}");
    run_child_test("proxy_env::child_fetches_directly", |c| {
        c.env(CHILD, "1");
        for var in [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            c.env(var, &proxy_url);
        }
        c.env_remove("NO_PROXY").env_remove("no_proxy");
    })
    .await;
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the proxy saw a connection");
}

/// In the child: fetch a loopback server with the proxy variables set; the request must reach
/// the server directly. (Run on its own it checks the same without the variables.)
#[tokio::test]
async fn child_fetches_directly() {
    if std::env::var_os(CHILD).is_some() {
        assert!(
            std::env::var_os("HTTP_PROXY").is_some(),
            "parent set the proxy variables"
        );
    }
    let server = serve(LOOPBACK, ok_path).await;
    let f = lan();
    let resp = f.get(&server.url("/direct")).await.unwrap();
    assert_eq!(resp.remote_addr(), server.addr);
    assert_eq!(resp.bytes().await.unwrap(), "/direct");
    let seen = server.seen();
    assert_eq!(
        seen[0].path, "/direct",
        "origin-form request, not a proxy's absolute form"
    );
}
