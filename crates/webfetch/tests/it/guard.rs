//! The connect-time guard with an injected resolver: every answer vetted, zero connection
//! attempts on refusal, rebinding and mixed answers, DNS errors, resolve and header deadlines.

use std::time::Duration;

use webfetch::{Fetcher, Kind, Phase};

use crate::support::*;

#[tokio::test]
async fn a_private_answer_is_refused_without_connecting() {
    let resolver = Scripted::new(&[("example.test", &[&["10.0.0.7"]])]);
    let dials = Dials::default();
    let f = fetcher(door("fetch"), resolver.clone(), &dials);
    let err = f.get("http://example.test/").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "refused: example.test resolved to 10.0.0.7 (private)"
    );
    assert_eq!(resolver.calls(), 1);
    assert_eq!(dials.count(), 0);
}

#[tokio::test]
async fn forbidden_answers_of_every_kind() {
    let table: &[(&str, &str)] = &[
        (
            "127.0.0.1",
            "refused: n.test resolved to 127.0.0.1 (loopback)",
        ),
        ("::1", "refused: n.test resolved to ::1 (loopback)"),
        (
            "::ffff:10.1.2.3",
            "refused: n.test resolved to 10.1.2.3 (private)",
        ),
        (
            "169.254.169.254",
            "refused: n.test resolved to 169.254.169.254 (link-local (cloud metadata))",
        ),
        (
            "64:ff9b::a00:7",
            "refused: n.test resolved to 64:ff9b::a00:7 (NAT64 carrying 10.0.0.7 (private))",
        ),
        (
            "0.0.0.0",
            "refused: n.test resolved to 0.0.0.0 (unspecified (this network))",
        ),
    ];
    for &(answer, want) in table {
        let resolver = Scripted::new(&[("n.test", &[&[answer]])]);
        let dials = Dials::default();
        let f = fetcher(door("fetch"), resolver, &dials);
        let err = f.get("http://n.test/").await.unwrap_err();
        assert_eq!(err.to_string(), want, "{answer}");
        assert_eq!(dials.count(), 0, "{answer}");
    }
}

#[tokio::test]
async fn one_forbidden_answer_among_public_ones_refuses() {
    let server = serve(PUBLIC_A, ok_path).await;
    for answers in [
        &["127.0.0.2", "10.0.0.7"][..],
        &["10.0.0.7", "127.0.0.2"][..],
        &["127.0.0.2", "127.0.0.3", "169.254.169.254"][..],
    ] {
        let resolver = Scripted::new(&[("mixed.test", &[answers])]);
        let dials = Dials::default();
        let f = fetcher(door("fetch"), resolver, &dials);
        let err = f
            .get(&format!("http://mixed.test:{}/", server.port()))
            .await
            .unwrap_err();
        assert!(err.is_refused(), "{answers:?}: {err}");
        assert_eq!(dials.count(), 0, "{answers:?}");
    }
    assert_eq!(server.conns(), 0);
}

/// First answer public, second private: the second request is refused before dialling.
#[tokio::test]
async fn rebinding_is_refused_on_the_next_lookup() {
    let server = serve(PUBLIC_A, |_| async {
        resp(200, &[("Connection", "close")], b"hello")
    })
    .await;
    let resolver = Scripted::new(&[("rebind.test", &[&["127.0.0.2"], &["10.0.0.7"]])]);
    let dials = Dials::default();
    let f = fetcher(door("fetch"), resolver.clone(), &dials);
    let url = format!("http://rebind.test:{}/", server.port());
    let first = f.get(&url).await.unwrap();
    assert_eq!(first.bytes().await.unwrap(), "hello");
    let err = f.get(&url).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "refused: rebind.test resolved to 10.0.0.7 (private)"
    );
    assert_eq!(resolver.calls(), 2);
    assert_eq!(dials.count(), 1);
    assert_eq!(server.conns(), 1);
}

/// A public name on a door that allows private addresses may resolve to the LAN, never to
/// a metadata address.
#[tokio::test]
async fn private_door_still_refuses_metadata_answers() {
    let resolver = Scripted::new(&[("meta.test", &[&["169.254.169.254"]])]);
    let dials = Dials::default();
    let f = fetcher(private_door(), resolver, &dials);
    let err = f.get("http://meta.test/").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "refused: meta.test resolved to 169.254.169.254 (link-local (cloud metadata))"
    );
    assert_eq!(dials.count(), 0);
}

#[tokio::test]
async fn dns_failures_are_dns_errors() {
    let resolver = Scripted::new(&[("empty.test", &[&[]])]);
    let dials = Dials::default();
    let f = fetcher(door("fetch"), resolver, &dials);
    for url in ["http://empty.test/", "http://unknown.test/"] {
        let err = f.get(url).await.unwrap_err();
        assert_eq!(err.kind(), Kind::Dns, "{url}: {err}");
        assert!(err.to_string().starts_with("dns: "), "{err}");
    }
    assert_eq!(dials.count(), 0);
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error() {
    // Bind then drop a listener to get a port with nothing behind it.
    let port = {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        l.local_addr().unwrap().port()
    };
    let dials = Dials::default();
    let f = fetcher(private_door(), Scripted::default(), &dials);
    let err = f
        .get(&format!("http://127.0.0.1:{port}/"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), Kind::Connect, "{err}");
    assert_eq!(dials.count(), 1);
}

#[tokio::test(start_paused = true)]
async fn resolve_deadline() {
    let mut d = door("fetch");
    d.timeouts.resolve = Duration::from_secs(3);
    let f = Fetcher::builder(d).resolver(Never).build();
    let err = f.get("http://slow.test/").await.unwrap_err();
    assert!(
        matches!(
            err,
            webfetch::Error::Timeout {
                phase: Phase::Resolve,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.kind(), Kind::Timeout);
}

#[tokio::test(start_paused = true)]
async fn headers_deadline() {
    let server = serve(LOOPBACK, |_| async { Reply::Mute }).await;
    let mut d = private_door();
    d.timeouts.headers = Duration::from_secs(5);
    let f = fetcher(d, Scripted::default(), &Dials::default());
    let err = f.get(&server.url("/")).await.unwrap_err();
    assert!(
        matches!(
            err,
            webfetch::Error::Timeout {
                phase: Phase::Headers,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "timeout: response headers took longer than 5s"
    );
}

#[tokio::test(start_paused = true)]
async fn total_deadline_covers_the_body() {
    let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n".to_vec();
    let server = serve(LOOPBACK, move |_| {
        let head = head.clone();
        async move { Reply::Stall(head) }
    })
    .await;
    let f = lan();
    let req = webfetch::Request::get(server.url("/")).timeout(Duration::from_secs(7));
    let mut body = f.send(req).await.unwrap().into_body();
    assert_eq!(body.chunk().await.unwrap().unwrap(), "first");
    let err = body.chunk().await.unwrap_err();
    assert!(
        matches!(
            err,
            webfetch::Error::Timeout {
                phase: Phase::Total,
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn connect_method_is_refused() {
    let dials = Dials::default();
    let f = fetcher(private_door(), Scripted::default(), &dials);
    let err = f
        .send(webfetch::Request::new(
            webfetch::Method::CONNECT,
            "http://127.0.0.1:1/",
        ))
        .await
        .unwrap_err();
    assert!(err.is_refused(), "{err}");
    assert_eq!(dials.count(), 0);
}

/// The test-only "pretend public" policy names loopback addresses only, never 127.0.0.1.
#[test]
fn pretend_public_is_loopback_only() {
    use std::net::Ipv4Addr;
    use webfetch::testing::PretendPublic;
    let table = [
        (Ipv4Addr::new(127, 0, 0, 2), true),
        (Ipv4Addr::new(127, 255, 255, 254), true),
        (Ipv4Addr::new(127, 0, 0, 1), false),
        (Ipv4Addr::new(10, 0, 0, 7), false),
        (Ipv4Addr::new(169, 254, 169, 254), false),
        (Ipv4Addr::new(8, 8, 8, 8), false),
    ];
    for (addr, ok) in table {
        assert_eq!(PretendPublic::loopback(addr).is_some(), ok, "{addr}");
    }
}
