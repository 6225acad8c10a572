//! The relay (`webfetch::relay`) and its dial (`Fetcher::connect_tcp`) on loopback: a raw
//! client speaking HTTP to the proxy, "public" servers on 127.0.0.2 (pretend public), refusals
//! proven to happen before any dial by the recording hook, the head and connection bounds,
//! the granted relay, and the end of every relay when the serve future is dropped.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use webfetch::relay::{self, Counters, Event, Limits, Outcome, Tally};
use webfetch::{Fetcher, Kind};

use crate::support::*;

const PUBLIC_ONLY: &str =
    "sandboxed servers reach public addresses only (sandbox.connect grants a local endpoint)";
/// Longest any single wait of these tests may take before the test fails.
const WAIT: Duration = Duration::from_secs(5);

#[expect(
    clippy::disallowed_methods,
    reason = "a test client of the relay's own loopback listener"
)]
async fn dial(addr: SocketAddr) -> TcpStream {
    TcpStream::connect(addr).await.unwrap()
}

/// A proxy or granted relay served on 127.0.0.1, stopped when dropped.
struct Served {
    addr: SocketAddr,
    task: JoinHandle<()>,
    counters: Arc<Counters>,
    events: Arc<Mutex<Vec<Event>>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Served {
    /// Wait until `n` events were logged; return them all.
    async fn events(&self, n: usize) -> Vec<Event> {
        let until = tokio::time::Instant::now() + WAIT;
        loop {
            let events = self.events.lock().unwrap().clone();
            if events.len() >= n {
                return events;
            }
            assert!(
                tokio::time::Instant::now() < until,
                "waited for {n} events, got {events:?}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Wait until the tally satisfies `done`.
    async fn tally_until(&self, done: impl Fn(&Tally) -> bool) -> Tally {
        let until = tokio::time::Instant::now() + WAIT;
        loop {
            let t = self.counters.tally();
            if done(&t) {
                return t;
            }
            assert!(tokio::time::Instant::now() < until, "tally stuck at {t:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

type Serve = Box<
    dyn FnOnce(
        TcpListener,
        Arc<Counters>,
        relay::Log,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
>;

async fn start(serve: Serve) -> Served {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let counters = Arc::new(Counters::default());
    let events = Arc::new(Mutex::new(Vec::new()));
    let e = events.clone();
    let log: relay::Log = Arc::new(move |ev: Event| e.lock().unwrap().push(ev));
    let task = tokio::spawn(serve(listener, counters.clone(), log));
    Served {
        addr,
        task,
        counters,
        events,
    }
}

async fn proxy(fetcher: Fetcher, limits: Limits) -> Served {
    let fetcher = Arc::new(fetcher);
    start(Box::new(move |l, c, log| {
        Box::pin(relay::serve_proxy(l, fetcher, limits, c, log))
    }))
    .await
}

async fn granted(target: SocketAddr, limits: Limits) -> Served {
    start(Box::new(move |l, c, log| {
        Box::pin(relay::serve_granted(l, target, limits, c, log))
    }))
    .await
}

/// A TCP echo server; counts the connections whose client side ended.
struct Echo {
    addr: SocketAddr,
    ended: Arc<AtomicUsize>,
}

#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
async fn echo(ip: Ipv4Addr) -> Echo {
    let listener = TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let ended = Arc::new(AtomicUsize::new(0));
    let e = ended.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let e = e.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                loop {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if s.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                    }
                }
                e.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    Echo { addr, ended }
}

/// Write `request`, read to the end; the whole answer as text.
async fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = dial(addr).await;
    s.write_all(request).await.unwrap();
    read_to_end(&mut s).await
}

async fn read_to_end(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    tokio::time::timeout(WAIT, s.read_to_end(&mut out))
        .await
        .expect("the answer ended in time")
        .unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// Read exactly `n` bytes.
async fn read_n(s: &mut TcpStream, n: usize) -> String {
    let mut buf = vec![0u8; n];
    tokio::time::timeout(WAIT, s.read_exact(&mut buf))
        .await
        .expect("bytes in time")
        .unwrap();
    String::from_utf8_lossy(&buf).into_owned()
}

const ESTABLISHED: &str = "HTTP/1.1 200 Connection established\r\n\r\n";

/// Open a CONNECT tunnel through the proxy; bytes after the head are sent with it.
async fn tunnel(proxy: SocketAddr, authority: &str, early: &str) -> TcpStream {
    let mut s = dial(proxy).await;
    let head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n{early}");
    s.write_all(head.as_bytes()).await.unwrap();
    assert_eq!(read_n(&mut s, ESTABLISHED.len()).await, ESTABLISHED);
    s
}

/// The status code and body of an answer of the proxy's own.
fn answer(text: &str) -> (u16, &str) {
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text, ""));
    assert!(head.contains("Connection: close"), "{head}");
    assert!(head.contains("Content-Type: text/plain"), "{head}");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.trim_end_matches('\n'))
}

fn public_door() -> webfetch::DoorConfig {
    door("mcp:test")
}

// ---- Fetcher::connect_tcp ----------------------------------------------------------------

#[tokio::test]
async fn connect_tcp_vets_literals_names_and_lists_before_dialling() {
    let resolver = Scripted::new(&[
        ("lan.test", &[&["10.0.0.1"]]),
        ("mixed.test", &[&["127.0.0.2", "10.0.0.1"]]),
    ]);
    let dials = Dials::default();
    let mut d = public_door();
    d.deny_hosts = vec!["denied.test".into()];
    let f = fetcher(d, resolver, &dials);
    let table: &[(&str, &str)] = &[
        ("127.0.0.1", "refused: 127.0.0.1 is loopback"),
        ("0x7f.1", "refused: 127.0.0.1 is loopback"),
        ("::1", "refused: ::1 is loopback"),
        ("[::1]", "refused: ::1 is loopback"),
        ("[::ffff:10.0.0.1]", "refused: 10.0.0.1 is private"),
        (
            "169.254.169.254",
            "refused: 169.254.169.254 is link-local (cloud metadata)",
        ),
        ("localhost", "refused: localhost is a local name"),
        ("a.localhost", "refused: a.localhost is a local name"),
        (
            "lan.test",
            "refused: lan.test resolved to 10.0.0.1 (private)",
        ),
        (
            "mixed.test",
            "refused: mixed.test resolved to 10.0.0.1 (private)",
        ),
        ("denied.test", "refused: denied.test is on the denylist"),
    ];
    for &(host, want) in table {
        let err = f.connect_tcp(host, 443).await.unwrap_err();
        assert_eq!(err.to_string(), want, "{host}");
    }
    for host in ["a b", "", "exa/mple.com", "[::1", "1.2.3.4:80"] {
        let err = f.connect_tcp(host, 443).await.unwrap_err();
        assert_eq!(err.kind(), Kind::InvalidUrl, "{host:?}: {err}");
    }
    let err = f.connect_tcp("example.com", 0).await.unwrap_err();
    assert_eq!(err.kind(), Kind::InvalidUrl, "{err}");
    assert_eq!(dials.count(), 0, "{:?}", dials.all());
}

#[tokio::test]
async fn connect_tcp_dials_a_vetted_answer_and_returns_the_peer() {
    let e = echo(PUBLIC_A).await;
    let resolver = Scripted::new(&[("echo.test", &[&["127.0.0.2"]])]);
    let dials = Dials::default();
    let f = fetcher(public_door(), resolver, &dials);
    let (mut s, peer) = f.connect_tcp("ECHO.test.", e.addr.port()).await.unwrap();
    assert_eq!(peer, e.addr);
    s.write_all(b"ping").await.unwrap();
    assert_eq!(read_n(&mut s, 4).await, "ping");
    assert_eq!(dials.all(), vec![e.addr]);
    // A literal is dialled as is.
    let (_s, peer) = f.connect_tcp("127.0.0.2", e.addr.port()).await.unwrap();
    assert_eq!(peer, e.addr);
}

#[tokio::test(start_paused = true)]
async fn connect_tcp_keeps_the_doors_resolve_deadline() {
    let mut d = public_door();
    d.timeouts.resolve = Duration::from_secs(3);
    let f = Fetcher::builder(d).resolver(Never).build();
    let err = f.connect_tcp("slow.test", 443).await.unwrap_err();
    assert_eq!(err.to_string(), "timeout: resolve took longer than 3s");
}

// ---- the proxy ---------------------------------------------------------------------------

#[tokio::test]
async fn connect_tunnels_to_a_public_server_and_counts_the_bytes() {
    let e = echo(PUBLIC_A).await;
    let resolver = Scripted::new(&[("echo.test", &[&["127.0.0.2"]])]);
    let dials = Dials::default();
    let p = proxy(fetcher(public_door(), resolver, &dials), Limits::default()).await;
    let authority = format!("echo.test:{}", e.addr.port());
    // Bytes sent right after the head, in the same write, are relayed too.
    let mut s = tunnel(p.addr, &authority, "early").await;
    assert_eq!(read_n(&mut s, 5).await, "early");
    s.write_all(b"hello").await.unwrap();
    assert_eq!(read_n(&mut s, 5).await, "hello");
    assert_eq!(p.counters.tally().open, 1);
    // The client ends its side: the server sees the end, closes, and so does the tunnel.
    s.shutdown().await.unwrap();
    assert_eq!(read_to_end(&mut s).await, "");
    let events = p.events(1).await;
    assert_eq!(
        events,
        vec![Event {
            host: "echo.test".into(),
            port: e.addr.port(),
            peer: Some(e.addr),
            bytes_out: 10,
            bytes_in: 10,
            outcome: Outcome::Closed,
        }]
    );
    assert_eq!(
        p.counters.tally(),
        Tally {
            connections: 1,
            refused: 0,
            bytes_out: 10,
            bytes_in: 10,
            open: 0,
        }
    );
    assert_eq!(dials.all(), vec![e.addr]);
}

#[tokio::test]
async fn an_absolute_http_request_is_sent_in_origin_form_without_proxy_headers() {
    let server = serve(PUBLIC_A, |s| async move {
        resp(200, &[("Connection", "close")], s.path.as_bytes())
    })
    .await;
    let p = proxy(
        fetcher(public_door(), Scripted::default(), &Dials::default()),
        Limits::default(),
    )
    .await;
    let port = server.port();
    let request = format!(
        "POST http://127.0.0.2:{port}/path?q=1 HTTP/1.1\r\nHost: elsewhere.test\r\nProxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nX-Trace: 7\r\nContent-Length: 4\r\n\r\nbody"
    );
    let text = exchange(p.addr, request.as_bytes()).await;
    assert!(text.starts_with("HTTP/1.1 200 X\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\n/path?q=1"), "{text}");
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let seen = &seen[0];
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("POST", "/path?q=1")
    );
    assert_eq!(seen.body, b"body");
    assert_eq!(
        seen.header("Host"),
        Some(format!("127.0.0.2:{port}").as_str())
    );
    assert_eq!(seen.header("Connection"), Some("close"));
    assert_eq!(seen.header("X-Trace"), Some("7"));
    for gone in ["Proxy-Authorization", "Proxy-Connection", "Keep-Alive"] {
        assert_eq!(seen.header(gone), None, "{gone} reached the origin");
    }
    let names: Vec<&str> = seen.headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Host", "X-Trace", "Content-Length", "Connection"]);
    let events = p.events(1).await;
    assert_eq!(events[0].outcome, Outcome::Closed);
    assert_eq!(events[0].host, "127.0.0.2");
    assert_eq!(events[0].peer, Some(server.addr));
    assert_eq!(events[0].bytes_in, text.len() as u64);
}

#[tokio::test]
async fn connect_to_loopback_is_refused_before_any_dial() {
    let e = echo(LOOPBACK).await;
    let dials = Dials::default();
    let p = proxy(
        fetcher(public_door(), Scripted::default(), &dials),
        Limits::default(),
    )
    .await;
    let port = e.addr.port();
    let table = [
        (
            format!("127.0.0.1:{port}"),
            format!("maven: refused 127.0.0.1:{port}: 127.0.0.1 is loopback; {PUBLIC_ONLY}"),
        ),
        (
            format!("[::1]:{port}"),
            format!("maven: refused [::1]:{port}: ::1 is loopback; {PUBLIC_ONLY}"),
        ),
        (
            format!("localhost:{port}"),
            format!("maven: refused localhost:{port}: localhost is a local name; {PUBLIC_ONLY}"),
        ),
        (
            "10.1.2.3:5432".to_owned(),
            format!("maven: refused 10.1.2.3:5432: 10.1.2.3 is private; {PUBLIC_ONLY}"),
        ),
    ];
    for (authority, want) in &table {
        let text = exchange(
            p.addr,
            format!("CONNECT {authority} HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{text}");
        assert_eq!(answer(&text), (403, want.as_str()));
    }
    // The same for a plain request.
    let text = exchange(
        p.addr,
        format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert_eq!(answer(&text), (403, table[0].1.as_str()));
    assert_eq!(dials.count(), 0, "{:?}", dials.all());
    assert_eq!(e.ended.load(Ordering::SeqCst), 0);
    let events = p.events(5).await;
    assert_eq!(events[0].outcome, Outcome::Refused(table[0].1.clone()));
    assert_eq!(
        (events[0].host.as_str(), events[0].port),
        ("127.0.0.1", port)
    );
    assert_eq!(events[0].peer, None);
    let t = p.counters.tally();
    assert_eq!(
        (t.connections, t.refused, t.bytes_out, t.bytes_in),
        (5, 5, 0, 0)
    );
}

#[tokio::test]
async fn a_name_resolving_to_a_private_address_is_refused_before_any_dial() {
    let resolver = Scripted::new(&[
        ("intranet.test", &[&["10.0.0.1"]]),
        ("mixed.test", &[&["127.0.0.2", "10.0.0.1"]]),
    ]);
    let dials = Dials::default();
    let p = proxy(
        fetcher(public_door(), resolver.clone(), &dials),
        Limits::default(),
    )
    .await;
    let text = exchange(p.addr, b"CONNECT intranet.test:443 HTTP/1.1\r\n\r\n").await;
    assert_eq!(
        answer(&text),
        (
            403,
            format!(
                "maven: refused intranet.test:443: intranet.test resolved to 10.0.0.1 (private); {PUBLIC_ONLY}"
            )
            .as_str()
        )
    );
    let text = exchange(p.addr, b"GET http://mixed.test/x HTTP/1.1\r\n\r\n").await;
    assert_eq!(
        answer(&text),
        (
            403,
            format!(
                "maven: refused mixed.test:80: mixed.test resolved to 10.0.0.1 (private); {PUBLIC_ONLY}"
            )
            .as_str()
        )
    );
    assert_eq!(resolver.calls(), 2, "Maven resolved the names");
    assert_eq!(dials.count(), 0, "{:?}", dials.all());
}

#[tokio::test]
async fn a_host_outside_the_allow_list_is_refused_and_one_on_it_passes() {
    let e = echo(PUBLIC_A).await;
    let resolver = Scripted::new(&[
        ("api.allowed.test", &[&["127.0.0.2"]]),
        ("other.test", &[&["127.0.0.2"]]),
    ]);
    let dials = Dials::default();
    let mut d = public_door();
    d.allow_hosts = vec!["*.allowed.test".into()];
    let p = proxy(fetcher(d, resolver.clone(), &dials), Limits::default()).await;
    let port = e.addr.port();
    let text = exchange(
        p.addr,
        format!("CONNECT other.test:{port} HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert_eq!(
        answer(&text),
        (
            403,
            format!("maven: refused other.test:{port}: other.test is not in sandbox.hosts")
                .as_str()
        )
    );
    assert_eq!(resolver.calls(), 0, "refused before resolving");
    assert_eq!(dials.count(), 0);
    let mut s = tunnel(p.addr, &format!("api.allowed.test:{port}"), "ok").await;
    assert_eq!(read_n(&mut s, 2).await, "ok");
    assert_eq!(dials.all(), vec![e.addr]);
}

#[tokio::test]
async fn malformed_and_misdirected_requests_get_400() {
    let p = proxy(
        fetcher(public_door(), Scripted::default(), &Dials::default()),
        Limits::default(),
    )
    .await;
    let table: &[(&[u8], &str)] = &[
        (
            b"hello there\r\n\r\n",
            "maven: malformed proxy request: the request line is not METHOD TARGET HTTP/1.1",
        ),
        (
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
            "maven: malformed proxy request: the request line is not METHOD TARGET HTTP/1.1",
        ),
        (
            b"GET http://a.test/ HTTP/1.1\nHost: a.test\r\n\r\n",
            "maven: malformed proxy request: a line does not end in CRLF",
        ),
        (
            b"CONNECT a.test HTTP/1.1\r\n\r\n",
            "maven: malformed proxy request: CONNECT \"a.test\" is not host:port",
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
            "maven: this is Maven's proxy; send CONNECT host:port, or an absolute http:// URL (the request was for \"/\" with no host)",
        ),
        (
            b"GET https://a.test/x HTTP/1.1\r\n\r\n",
            "maven: malformed proxy request: an https:// URL goes through CONNECT a.test:443 (the client speaks TLS itself)",
        ),
        (
            b"GET ftp://a.test/x HTTP/1.1\r\n\r\n",
            "maven: malformed proxy request: scheme \"ftp\" is not proxied; send CONNECT host:port, or an absolute http:// URL",
        ),
        (
            b"CONNECT a%20b:443 HTTP/1.1\r\n\r\n",
            "maven: malformed proxy request: host \"a%20b\": invalid international domain name",
        ),
        (
            b"GET http://a.test/",
            "maven: malformed proxy request: the connection ended inside the request head",
        ),
    ];
    for &(request, want) in table {
        let mut s = dial(p.addr).await;
        s.write_all(request).await.unwrap();
        // The last row ends the request early: end our side.
        s.shutdown().await.unwrap();
        let text = read_to_end(&mut s).await;
        assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
        assert_eq!(answer(&text), (400, want), "{request:?}");
    }
    let t = p.tally_until(|t| t.open == 0).await;
    assert_eq!(
        (t.connections, t.refused),
        (table.len() as u64, table.len() as u64)
    );
}

#[tokio::test]
async fn dial_failures_get_502_naming_them() {
    let resolver = Scripted::new(&[("empty.test", &[&[]])]);
    let dials = Dials::default();
    let p = proxy(fetcher(public_door(), resolver, &dials), Limits::default()).await;
    // A port with nothing behind it on the "public" address.
    let port = {
        let l = TcpListener::bind((PUBLIC_A, 0)).await.unwrap();
        l.local_addr().unwrap().port()
    };
    let text = exchange(p.addr, b"CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(text.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{text}");
    assert_eq!(
        answer(&text),
        (
            502,
            "maven: cannot reach nowhere.test:443: dns: nowhere.test: no such name"
        )
    );
    let text = exchange(p.addr, b"GET http://empty.test/ HTTP/1.1\r\n\r\n").await;
    assert_eq!(
        answer(&text),
        (
            502,
            "maven: cannot reach empty.test:80: dns: empty.test: no addresses"
        )
    );
    let text = exchange(
        p.addr,
        format!("CONNECT 127.0.0.2:{port} HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    let (status, body) = answer(&text);
    assert_eq!(status, 502);
    assert!(
        body.starts_with(&format!(
            "maven: cannot reach 127.0.0.2:{port}: connect: 127.0.0.2:{port}: "
        )),
        "{body}"
    );
    assert!(body.contains("refused"), "{body}");
    let t = p.tally_until(|t| t.open == 0).await;
    assert_eq!((t.connections, t.refused), (3, 3));
}

#[tokio::test]
async fn a_head_over_the_limit_gets_431() {
    let p = proxy(
        fetcher(public_door(), Scripted::default(), &Dials::default()),
        Limits::default(),
    )
    .await;
    let mut request = b"GET http://a.test/ HTTP/1.1\r\nX-Big: ".to_vec();
    request.extend(std::iter::repeat_n(b'a', 20 * 1024));
    request.extend_from_slice(b"\r\n\r\n");
    let text = exchange(p.addr, &request).await;
    assert!(
        text.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{text}"
    );
    assert_eq!(
        answer(&text),
        (431, "maven: the request head is larger than 16384 bytes")
    );
    let events = p.events(1).await;
    assert_eq!(
        events[0].outcome,
        Outcome::Refused("maven: the request head is larger than 16384 bytes".into())
    );
    assert_eq!((events[0].host.as_str(), events[0].port), ("", 0));
}

#[tokio::test]
async fn a_slow_head_gets_408() {
    let limits = Limits {
        head_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let p = proxy(
        fetcher(public_door(), Scripted::default(), &Dials::default()),
        limits,
    )
    .await;
    let started = tokio::time::Instant::now();
    let text = exchange(p.addr, b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.te").await;
    assert!(
        text.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
        "{text}"
    );
    assert_eq!(
        answer(&text),
        (408, "maven: the request head did not arrive within 200ms")
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(200) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
}

#[tokio::test]
async fn one_connection_over_the_limit_gets_503_and_the_others_keep_working() {
    let e = echo(PUBLIC_A).await;
    let limits = Limits {
        max_conns: 2,
        ..Limits::default()
    };
    let p = proxy(
        fetcher(public_door(), Scripted::default(), &Dials::default()),
        limits,
    )
    .await;
    let authority = e.addr.to_string();
    let mut a = tunnel(p.addr, &authority, "").await;
    let mut b = tunnel(p.addr, &authority, "").await;
    let want = "maven: too many connections from this server (2)";
    // One waiting to read, one that sends its request first, then a burst.
    let mut c = dial(p.addr).await;
    let text = read_to_end(&mut c).await;
    assert!(
        text.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{text}"
    );
    assert_eq!(answer(&text), (503, want));
    let text = exchange(
        p.addr,
        format!("CONNECT {authority} HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert_eq!(answer(&text), (503, want));
    for _ in 0..20 {
        let _ = dial(p.addr).await;
    }
    let t = p.tally_until(|t| t.refused == 22).await;
    assert_eq!((t.connections, t.open), (24, 2));
    // The two tunnels still work.
    for s in [&mut a, &mut b] {
        s.write_all(b"still").await.unwrap();
        assert_eq!(read_n(s, 5).await, "still");
    }
    // One ends: its slot is free again.
    drop(a);
    p.tally_until(|t| t.open == 1).await;
    let mut d = tunnel(p.addr, &authority, "again").await;
    assert_eq!(read_n(&mut d, 5).await, "again");
    let events = p.events(23).await;
    let refused: Vec<&Event> = events
        .iter()
        .filter(|e| e.outcome == Outcome::Refused(want.into()))
        .collect();
    assert_eq!(refused.len(), 22);
}

#[tokio::test]
async fn an_idle_tunnel_is_closed() {
    let e = echo(PUBLIC_A).await;
    let limits = Limits {
        idle: Duration::from_millis(200),
        ..Limits::default()
    };
    let p = proxy(
        fetcher(public_door(), Scripted::default(), &Dials::default()),
        limits,
    )
    .await;
    let mut s = tunnel(p.addr, &e.addr.to_string(), "x").await;
    assert_eq!(read_n(&mut s, 1).await, "x");
    let started = tokio::time::Instant::now();
    assert_eq!(read_to_end(&mut s).await, "");
    assert!(started.elapsed() < Duration::from_secs(2));
    let events = p.events(1).await;
    assert_eq!(
        events[0].outcome,
        Outcome::Failed("idle: no byte either way for 200ms".into())
    );
    assert_eq!((events[0].bytes_out, events[0].bytes_in), (1, 1));
}

#[tokio::test]
async fn dropping_the_proxy_closes_its_tunnels() {
    let e = echo(PUBLIC_A).await;
    let p = proxy(
        fetcher(public_door(), Scripted::default(), &Dials::default()),
        Limits::default(),
    )
    .await;
    let mut s = tunnel(p.addr, &e.addr.to_string(), "up").await;
    assert_eq!(read_n(&mut s, 2).await, "up");
    let (addr, events, counters) = (p.addr, p.events.clone(), p.counters.clone());
    drop(p);
    // The client sees the end, and so does the server outside.
    assert_eq!(read_to_end(&mut s).await, "");
    let until = tokio::time::Instant::now() + WAIT;
    while e.ended.load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < until,
            "the outside stayed open"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Its one event is logged, the gauge is back to zero, and nothing listens any more.
    while events.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < until, "no event");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(events.lock().unwrap()[0].outcome, Outcome::Closed);
    assert_eq!(counters.tally().open, 0);
    #[expect(
        clippy::disallowed_methods,
        reason = "a test client of the relay's own loopback listener"
    )]
    let refused = TcpStream::connect(addr).await;
    assert!(refused.is_err(), "the listener is still open");
}

// ---- the granted relay -------------------------------------------------------------------

#[tokio::test]
async fn a_granted_endpoint_is_relayed_raw() {
    let e = echo(LOOPBACK).await;
    let g = granted(e.addr, Limits::default()).await;
    let mut s = dial(g.addr).await;
    s.write_all(b"SELECT 1;").await.unwrap();
    assert_eq!(read_n(&mut s, 9).await, "SELECT 1;");
    s.shutdown().await.unwrap();
    assert_eq!(read_to_end(&mut s).await, "");
    let events = g.events(1).await;
    assert_eq!(
        events,
        vec![Event {
            host: "127.0.0.1".into(),
            port: e.addr.port(),
            peer: Some(e.addr),
            bytes_out: 9,
            bytes_in: 9,
            outcome: Outcome::Closed,
        }]
    );
    assert_eq!(
        g.counters.tally(),
        Tally {
            connections: 1,
            refused: 0,
            bytes_out: 9,
            bytes_in: 9,
            open: 0
        }
    );
}

#[tokio::test]
async fn a_granted_endpoint_that_is_down_fails_and_the_limit_holds() {
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        l.local_addr().unwrap()
    };
    let g = granted(dead, Limits::default()).await;
    let mut s = dial(g.addr).await;
    assert_eq!(read_to_end(&mut s).await, "");
    let events = g.events(1).await;
    let Outcome::Failed(why) = &events[0].outcome else {
        panic!("{events:?}");
    };
    assert!(why.starts_with(&format!("connect {dead}: ")), "{why}");

    let e = echo(LOOPBACK).await;
    let g = granted(
        e.addr,
        Limits {
            max_conns: 1,
            ..Limits::default()
        },
    )
    .await;
    let mut a = dial(g.addr).await;
    a.write_all(b"one").await.unwrap();
    assert_eq!(read_n(&mut a, 3).await, "one");
    let mut b = dial(g.addr).await;
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(WAIT, b.read(&mut buf)).await.unwrap();
    assert!(matches!(n, Ok(0) | Err(_)), "{n:?}");
    let events = g.events(1).await;
    assert_eq!(
        events[0].outcome,
        Outcome::Refused("maven: too many connections from this server (1)".into())
    );
    a.write_all(b"two").await.unwrap();
    assert_eq!(read_n(&mut a, 3).await, "two");
}

#[tokio::test]
async fn dropping_a_granted_relay_closes_its_connections() {
    let e = echo(LOOPBACK).await;
    let g = granted(e.addr, Limits::default()).await;
    let mut s = dial(g.addr).await;
    s.write_all(b"hi").await.unwrap();
    assert_eq!(read_n(&mut s, 2).await, "hi");
    drop(g);
    assert_eq!(read_to_end(&mut s).await, "");
    let until = tokio::time::Instant::now() + WAIT;
    while e.ended.load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < until,
            "the endpoint stayed connected"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

// ---- the test hook -----------------------------------------------------------------------

const CHILD: &str = "WEBFETCH_IT_PRETEND_CHILD";

/// `FetcherBuilder::test_hooks_from_env` reads its variable: run in a child with it set.
#[tokio::test]
async fn pretend_public_comes_from_the_environment() {
    run_child_test("relay::child_pretends_from_the_environment", |c| {
        c.env(CHILD, "1").env(
            webfetch::testing::PRETEND_PUBLIC_ENV,
            "127.0.0.4, 127.0.0.1,10.0.0.1,bad",
        );
    })
    .await;
}

/// In the child (variable set): 127.0.0.4 is public, 127.0.0.1 is not. Run on its own
/// (variable unset): nothing is.
#[tokio::test]
async fn child_pretends_from_the_environment() {
    let set = std::env::var_os(CHILD).is_some();
    let e = echo(Ipv4Addr::new(127, 0, 0, 4)).await;
    let f = Fetcher::builder(public_door())
        .test_hooks_from_env()
        .build();
    let four = f.connect_tcp("127.0.0.4", e.addr.port()).await;
    assert_eq!(four.is_ok(), set, "{four:?}");
    let one = f.connect_tcp("127.0.0.1", e.addr.port()).await.unwrap_err();
    assert_eq!(one.to_string(), "refused: 127.0.0.1 is loopback");
}
