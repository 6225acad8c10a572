//! The body cap (W-7): at exactly the cap, one byte over, an oversized Content-Length,
//! chunked, gzip (decompressed size capped), endless streams; streaming for SSE.

use std::io::Write;

use webfetch::header::{HeaderName, HeaderValue};
use webfetch::{Kind, Request, DEFAULT_MAX_BODY};

use crate::support::*;

const CAP: usize = DEFAULT_MAX_BODY as usize;

fn chunked(body: &[u8], piece: usize) -> Vec<u8> {
    let mut out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for c in body.chunks(piece) {
        out.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        out.extend_from_slice(c);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

async fn server() -> Server {
    serve(LOOPBACK, |s| async move {
        let path = s.path.as_str();
        match path {
            "/exact" => resp(200, &[], &vec![b'a'; CAP]),
            "/over" => resp(200, &[], &vec![b'a'; CAP + 1]),
            "/liar" => Reply::ThenClose(
                b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\nshort".to_vec(),
            ),
            "/chunked-exact" => Reply::Raw(chunked(&vec![b'b'; CAP], 65536)),
            "/chunked-over" => Reply::Raw(chunked(&vec![b'b'; CAP + 1], 65536)),
            "/gzip-exact" => resp(200, &[("Content-Encoding", "gzip")], &gzip(&vec![0; CAP])),
            "/gzip-over" => resp(
                200,
                &[("Content-Encoding", "gzip")],
                &gzip(&vec![0; CAP + 1]),
            ),
            "/gzip-bomb" => resp(
                200,
                &[("Content-Encoding", "gzip")],
                &gzip(&vec![0; 16 * 1024 * 1024]),
            ),
            "/gzip-broken" => resp(200, &[("Content-Encoding", "gzip")], b"not gzip at all"),
            "/brotli" => resp(200, &[("Content-Encoding", "br")], b"xx"),
            "/not-modified" => Reply::Raw(
                b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99999999\r\nContent-Encoding: gzip\r\nETag: \"v2\"\r\n\r\n"
                    .to_vec(),
            ),
            "/endless" => Reply::Stream {
                head: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec(),
                chunk: {
                    let mut c = b"4000\r\n".to_vec();
                    c.extend_from_slice(&[b'e'; 0x4000]);
                    c.extend_from_slice(b"\r\n");
                    c
                },
                count: None,
            },
            _ => resp(404, &[], b""),
        }
    })
    .await
}

#[tokio::test]
async fn body_cap_table() {
    let server = server().await;
    let f = lan();
    // (path, Ok(len) or Err(kind), refused before reading the body?)
    let table: &[(&str, Result<usize, Kind>, bool)] = &[
        ("/exact", Ok(CAP), false),
        ("/over", Err(Kind::TooLarge), true),
        ("/liar", Err(Kind::TooLarge), true),
        ("/chunked-exact", Ok(CAP), false),
        ("/chunked-over", Err(Kind::TooLarge), false),
        ("/gzip-exact", Ok(CAP), false),
        ("/gzip-over", Err(Kind::TooLarge), false),
        ("/gzip-bomb", Err(Kind::TooLarge), false),
        ("/gzip-broken", Err(Kind::Http), false),
        ("/brotli", Err(Kind::Http), true),
        ("/not-modified", Ok(0), false),
        ("/endless", Err(Kind::TooLarge), false),
    ];
    for (path, want, early) in table {
        let got = match f.get(&server.url(path)).await {
            Err(e) => {
                assert!(*early, "{path}: refused before the body: {e}");
                Err(e)
            }
            Ok(resp) => {
                assert!(!*early, "{path}: should fail at the head");
                resp.bytes().await
            }
        };
        match (got, want) {
            (Ok(b), Ok(n)) => assert_eq!(b.len(), *n, "{path}"),
            (Err(e), Err(k)) => {
                assert_eq!(e.kind(), *k, "{path}: {e}");
                if *k == Kind::TooLarge {
                    assert_eq!(e.to_string(), "too large: body exceeds 2097152 bytes");
                }
            }
            (got, want) => panic!("{path}: got {got:?}, want {want:?}"),
        }
    }
}

#[tokio::test]
async fn door_cap_applies_while_streaming() {
    let server = server().await;
    let mut d = private_door();
    d.max_body = 100_000;
    let f = fetcher(d, Scripted::default(), &Dials::default());
    let mut body = f.get(&server.url("/endless")).await.unwrap().into_body();
    let mut total = 0usize;
    let err = loop {
        match body.chunk().await {
            Ok(Some(c)) => total += c.len(),
            Ok(None) => panic!("an endless body ended"),
            Err(e) => break e,
        }
    };
    assert!(total <= 100_000, "{total}");
    assert_eq!(err.to_string(), "too large: body exceeds 100000 bytes");
    // The stream is over after an error.
    assert!(body.chunk().await.unwrap().is_none());
}

/// An SSE response read event by event as chunks arrive; response headers surfaced.
#[tokio::test]
async fn streaming_sse_and_response_headers() {
    let events = b"event: message\ndata: {\"a\":1}\n\n: ping\n\ndata: {\"b\":2}\n\n".to_vec();
    let server = serve(LOOPBACK, move |s| {
        let events = events.clone();
        async move {
            assert_eq!(s.method, "POST");
            let mut r = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nMcp-Session-Id: abc-123\r\nETag: \"v1\"\r\nRetry-After: 7\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            for line in events.split_inclusive(|b| *b == b'\n') {
                r.extend_from_slice(format!("{:x}\r\n", line.len()).as_bytes());
                r.extend_from_slice(line);
                r.extend_from_slice(b"\r\n");
            }
            r.extend_from_slice(b"0\r\n\r\n");
            Reply::Raw(r)
        }
    })
    .await;
    let f = lan();
    let req = Request::post(
        server.url("/mcp"),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    )
    .header(
        HeaderName::from_static("accept"),
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    let resp = f.send(req).await.unwrap();
    assert_eq!(resp.header_str("mcp-session-id"), Some("abc-123"));
    assert_eq!(resp.header_str("etag"), Some("\"v1\""));
    assert_eq!(resp.header_str("retry-after"), Some("7"));
    assert_eq!(resp.header_str("content-type"), Some("text/event-stream"));
    let mut body = resp.into_body();
    let mut all = Vec::new();
    let mut chunks = 0;
    while let Some(c) = body.chunk().await.unwrap() {
        all.extend_from_slice(&c);
        chunks += 1;
    }
    assert!(chunks >= 1);
    assert_eq!(
        all,
        b"event: message\ndata: {\"a\":1}\n\n: ping\n\ndata: {\"b\":2}\n\n"
    );
    assert_eq!(body.received(), all.len() as u64);
}

/// What goes on the wire: method, body, caller headers, and the headers webfetch owns.
#[tokio::test]
async fn post_with_headers() {
    let server = serve(LOOPBACK, |_| async {
        resp(
            201,
            &[("Last-Modified", "Mon, 30 Nov 2026 05:00:00 GMT")],
            b"made",
        )
    })
    .await;
    let f = lan();
    let resp = f
        .post(
            &server.url("/items?x=1#frag"),
            HeaderValue::from_static("application/json"),
            "{\"k\":1}",
        )
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    assert_eq!(
        resp.header_str("last-modified"),
        Some("Mon, 30 Nov 2026 05:00:00 GMT")
    );
    assert_eq!(resp.bytes().await.unwrap(), "made");
    let seen = server.seen();
    let s = &seen[0];
    assert_eq!((s.method.as_str(), s.path.as_str()), ("POST", "/items?x=1"));
    assert_eq!(s.body, b"{\"k\":1}");
    assert_eq!(s.header("content-type"), Some("application/json"));
    assert_eq!(s.header("content-length"), Some("7"));
    assert_eq!(s.header("host"), Some(server.addr.to_string().as_str()));
    assert_eq!(s.header("accept-encoding"), Some("gzip"));
    assert!(s
        .header("user-agent")
        .unwrap()
        .starts_with("maven-webfetch/"));
}

#[tokio::test]
async fn error_for_status() {
    let server = serve(LOOPBACK, |_| async { resp(404, &[], b"nope") }).await;
    let f = lan();
    let err = f
        .get(&server.url("/"))
        .await
        .unwrap()
        .error_for_status()
        .unwrap_err();
    assert_eq!(err.kind(), Kind::Http);
    assert_eq!(err.status().map(|s| s.as_u16()), Some(404));
    assert_eq!(err.to_string(), "http status 404 Not Found");
}
