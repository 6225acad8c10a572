//! Redirects (W-6, W-4): every hop re-vetted, at most 3, method rules, headers dropped across
//! origins, none at all on a door that allows private addresses.

use webfetch::header::{HeaderName, HeaderValue};
use webfetch::{Kind, Method, Request};

use crate::support::*;

const CODES: [u16; 5] = [301, 302, 303, 307, 308];

/// A "public" server (127.0.0.2) redirecting to forbidden targets: refused, and the only
/// connection ever attempted is the one to the first hop.
#[tokio::test]
async fn redirects_to_forbidden_targets_are_refused() {
    let targets: &[(&str, &str)] = &[
        ("http://127.0.0.1:{lp}/", "refused: 127.0.0.1 is loopback"),
        (
            "http://169.254.169.254/latest/meta-data/",
            "refused: 169.254.169.254 is link-local (cloud metadata)",
        ),
        ("http://[::ffff:10.0.0.1]/", "refused: 10.0.0.1 is private"),
        ("http://0x7f.1/", "refused: 127.0.0.1 is loopback"),
        ("http://localhost/", "refused: localhost is a local name"),
        (
            "http://evil.test/",
            "refused: evil.test resolved to 10.0.0.7 (private)",
        ),
        (
            "ftp://example.test/",
            "refused: scheme \"ftp\" is not http or https",
        ),
        (
            "file:///etc/passwd",
            "refused: scheme \"file\" is not http or https",
        ),
    ];
    // A real loopback listener as a target, so a guard failure would show up as a connection.
    let local = serve(LOOPBACK, ok_path).await;
    for code in CODES {
        for &(location, want) in targets {
            let location = location.replace("{lp}", &local.port().to_string());
            let loc = location.clone();
            let server = serve(PUBLIC_A, move |_| {
                let loc = loc.clone();
                async move { redirect(code, &loc) }
            })
            .await;
            let resolver = Scripted::new(&[("evil.test", &[&["10.0.0.7"]])]);
            let dials = Dials::default();
            let f = fetcher(door("fetch"), resolver, &dials);
            let err = f.get(&server.url("/start")).await.unwrap_err();
            assert_eq!(err.to_string(), want, "{code} -> {location}");
            assert_eq!(dials.all(), vec![server.addr], "{code} -> {location}");
        }
    }
    assert_eq!(local.conns(), 0);
}

/// Three redirects are followed; the fourth is refused.
#[tokio::test]
async fn at_most_three_redirects() {
    for code in CODES {
        let server = serve(PUBLIC_A, move |s| async move {
            let n: u32 = s.path.trim_start_matches('/').parse().unwrap_or(0);
            if n < 10 {
                redirect(code, &format!("/{}", n + 1))
            } else {
                resp(200, &[], b"end")
            }
        })
        .await;
        let dials = Dials::default();
        let f = fetcher(door("fetch"), Scripted::default(), &dials);

        let ok = f.get(&server.url("/7")).await.unwrap();
        assert_eq!(ok.redirects(), 3, "{code}");
        assert!(ok.url().ends_with("/10"), "{code}");
        assert_eq!(ok.bytes().await.unwrap(), "end");

        let before = server.seen().len();
        let err = f.get(&server.url("/0")).await.unwrap_err();
        assert_eq!(err.to_string(), "refused: more than 3 redirects", "{code}");
        assert_eq!(err.kind(), Kind::Refused);
        // The first request and three followed hops; the fourth hop was never requested.
        assert_eq!(server.seen().len() - before, 4, "{code}");
    }
}

#[tokio::test]
async fn private_door_follows_no_redirect() {
    for code in CODES {
        let server = serve(LOOPBACK, move |s| async move {
            if s.path == "/" {
                redirect(code, "/same-origin")
            } else {
                resp(200, &[], b"")
            }
        })
        .await;
        let f = lan();
        let err = f.get(&server.url("/")).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "refused: redirect on a door that allows private addresses",
            "{code}"
        );
        assert_eq!(server.seen().len(), 1);
    }
}

fn secret_request(method: Method, url: String) -> Request {
    Request::new(method, url)
        .body("payload")
        .header(
            HeaderName::from_static("authorization"),
            HeaderValue::from_static("Bearer s3cret"),
        )
        .header(
            HeaderName::from_static("cookie"),
            HeaderValue::from_static("sid=1"),
        )
        .header(
            HeaderName::from_static("x-api-key"),
            HeaderValue::from_static("k"),
        )
        .header(
            HeaderName::from_static("accept"),
            HeaderValue::from_static("application/json"),
        )
        .header(
            HeaderName::from_static("content-type"),
            HeaderValue::from_static("application/json"),
        )
}

/// Cross-origin hops keep only harmless headers; same-origin hops keep all of them.
#[tokio::test]
async fn credentials_are_dropped_across_origins() {
    let b = serve(PUBLIC_B, ok_path).await;
    let b_url = b.url("/landing");
    let a = serve(PUBLIC_A, move |s| {
        let b_url = b_url.clone();
        async move {
            match s.path.as_str() {
                "/cross" => redirect(307, &b_url),
                "/same" => redirect(307, "/landing"),
                _ => resp(200, &[], b""),
            }
        }
    })
    .await;
    let f = fetcher(door("fetch"), Scripted::default(), &Dials::default());

    f.send(secret_request(Method::POST, a.url("/cross")))
        .await
        .unwrap();
    let seen = b.seen();
    let landed = seen.last().unwrap();
    assert_eq!(landed.header("authorization"), None);
    assert_eq!(landed.header("cookie"), None);
    assert_eq!(landed.header("x-api-key"), None);
    assert_eq!(landed.header("accept"), Some("application/json"));
    assert_eq!(landed.header("host"), Some(b.addr.to_string().as_str()));
    assert_eq!(landed.method, "POST");
    assert_eq!(landed.body, b"payload");

    f.send(secret_request(Method::POST, a.url("/same")))
        .await
        .unwrap();
    let seen = a.seen();
    let landed = seen.last().unwrap();
    assert_eq!(landed.path, "/landing");
    assert_eq!(landed.header("authorization"), Some("Bearer s3cret"));
    assert_eq!(landed.header("cookie"), Some("sid=1"));
    assert_eq!(landed.header("x-api-key"), Some("k"));
}

/// 303 turns anything but HEAD into GET; 301/302 turn POST into GET; 307/308 keep the method
/// and the body.
#[tokio::test]
async fn method_rules() {
    let table: &[(u16, Method, &str, bool)] = &[
        (301, Method::POST, "GET", false),
        (302, Method::POST, "GET", false),
        (303, Method::POST, "GET", false),
        (307, Method::POST, "POST", true),
        (308, Method::POST, "POST", true),
        (301, Method::GET, "GET", true),
        (303, Method::HEAD, "HEAD", true),
        (303, Method::DELETE, "GET", false),
        (307, Method::DELETE, "DELETE", true),
        (302, Method::DELETE, "DELETE", true),
    ];
    for (code, method, want, body_kept) in table.iter().cloned() {
        let server = serve(PUBLIC_A, move |s| async move {
            if s.path == "/from" {
                redirect(code, "/to")
            } else {
                resp(200, &[], b"")
            }
        })
        .await;
        let f = fetcher(door("fetch"), Scripted::default(), &Dials::default());
        let resp = f
            .send(secret_request(method.clone(), server.url("/from")))
            .await
            .unwrap();
        resp.bytes().await.unwrap();
        let seen = server.seen();
        let to = seen.iter().find(|s| s.path == "/to").unwrap();
        assert_eq!(to.method, want, "{code} {method}");
        let expect_body: &[u8] = if body_kept { b"payload" } else { b"" };
        assert_eq!(to.body, expect_body, "{code} {method}");
        if !body_kept {
            assert_eq!(to.header("content-type"), None, "{code} {method}");
        }
    }
}

#[tokio::test]
async fn redirect_to_a_name_is_resolved_and_vetted() {
    let b = serve(PUBLIC_B, ok_path).await;
    let loc = format!("http://next.test:{}/there", b.port());
    let a = serve(PUBLIC_A, move |_| {
        let loc = loc.clone();
        async move { redirect(302, &loc) }
    })
    .await;
    let resolver = Scripted::new(&[("next.test", &[&["127.0.0.3"]])]);
    let dials = Dials::default();
    let f = fetcher(door("fetch"), resolver.clone(), &dials);
    let resp = f.get(&a.url("/")).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.url(), format!("http://next.test:{}/there", b.port()));
    assert_eq!(resp.bytes().await.unwrap(), "/there");
    assert_eq!(resolver.calls(), 1);
    assert_eq!(dials.all(), vec![a.addr, b.addr]);
}

/// `follow_redirects(false)`: the redirect is the answer, on every door; its `Location` is
/// never dialled (a forbidden one is not even judged), and a door that allows private
/// addresses returns it instead of refusing.
#[tokio::test]
async fn a_redirect_not_followed_is_the_answer_and_nothing_is_dialled_after_it() {
    let local = serve(LOOPBACK, ok_path).await;
    for code in CODES {
        for location in [
            format!("http://127.0.0.1:{}/", local.port()),
            "http://169.254.169.254/latest/meta-data/".to_owned(),
        ] {
            let loc = location.clone();
            let server = serve(PUBLIC_A, move |_| {
                let loc = loc.clone();
                async move { redirect(code, &loc) }
            })
            .await;
            let dials = Dials::default();
            let f = fetcher(door("fetch"), Scripted::default(), &dials);
            let resp = f
                .send(Request::get(server.url("/start")).follow_redirects(false))
                .await
                .unwrap();
            assert_eq!(resp.status().as_u16(), code);
            assert_eq!(resp.header_str("location"), Some(location.as_str()));
            assert_eq!(resp.redirects(), 0);
            assert_eq!(dials.all(), vec![server.addr], "{code} -> {location}");
        }
        // On a door that allows private addresses too (which refuses to follow any redirect).
        let lan_server = serve(LOOPBACK, move |_| async move { redirect(code, "/next") }).await;
        let resp = lan()
            .send(Request::get(lan_server.url("/start")).follow_redirects(false))
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), code);
        assert_eq!(lan_server.seen().len(), 1, "the Location was not requested");
    }
    assert_eq!(local.conns(), 0);
}
