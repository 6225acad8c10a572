//! Loopback test servers, a scripted resolver and a recording dialer.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::time::Instant;
use webfetch::testing::PretendPublic;
use webfetch::{DoorConfig, Fetcher, FetcherBuilder, Resolve, Resolving};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) conn: usize,
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) at: Instant,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the server writes back.
pub(crate) enum Reply {
    /// These bytes, then keep reading requests unless they said `Connection: close`.
    Raw(Vec<u8>),
    /// A response head, then this chunk written `count` times (forever when `None`), then
    /// close.
    Stream {
        head: Vec<u8>,
        chunk: Vec<u8>,
        count: Option<usize>,
    },
    /// Write a head and a first chunk, then never write again.
    Stall(Vec<u8>),
    /// Say nothing, keep the connection open.
    Mute,
    /// Answer, then close the connection without saying so.
    ThenClose(Vec<u8>),
}

/// A complete response with a Content-Length.
pub(crate) fn resp(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    Reply::Raw(resp_bytes(status, headers, body))
}

pub(crate) fn resp_bytes(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} X\r\n");
    for (n, v) in headers {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
    {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

/// A redirect.
pub(crate) fn redirect(status: u16, location: &str) -> Reply {
    resp(status, &[("Location", location)], b"")
}

type Handler = Arc<dyn Fn(Seen) -> Pin<Box<dyn Future<Output = Reply> + Send>> + Send + Sync>;

/// A loopback HTTP/1.1 server speaking from a handler.
#[derive(Clone)]
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    conns: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Connections accepted so far.
    pub(crate) fn conns(&self) -> usize {
        self.conns.load(Ordering::SeqCst)
    }

    /// Requests seen so far.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

pub(crate) async fn serve<F, Fut>(ip: Ipv4Addr, handler: F) -> Server
where
    F: Fn(Seen) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Reply> + Send + 'static,
{
    serve_tls(ip, None, handler).await
}

#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
pub(crate) async fn serve_tls<F, Fut>(
    ip: Ipv4Addr,
    tls: Option<tokio_rustls::TlsAcceptor>,
    handler: F,
) -> Server
where
    F: Fn(Seen) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Reply> + Send + 'static,
{
    let listener = TcpListener::bind(SocketAddr::new(IpAddr::V4(ip), 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server {
        addr,
        conns: Arc::new(AtomicUsize::new(0)),
        seen: Arc::new(Mutex::new(Vec::new())),
    };
    let handler: Handler = Arc::new(move |s| Box::pin(handler(s)));
    let s = server.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let conn = s.conns.fetch_add(1, Ordering::SeqCst);
            let (seen, handler, tls) = (s.seen.clone(), handler.clone(), tls.clone());
            tokio::spawn(async move {
                match tls {
                    None => {
                        let _ = connection(stream, conn, seen, handler).await;
                    }
                    Some(acceptor) => {
                        if let Ok(stream) = acceptor.accept(stream).await {
                            let _ = connection(stream, conn, seen, handler).await;
                        }
                    }
                }
            });
        }
    });
    server
}

async fn read_request<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    conn: usize,
) -> io::Result<Option<Seen>> {
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut tmp = [0u8; 8192];
        let n = stream.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    buf.drain(..end + 4);
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let len = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    while buf.len() < len {
        let mut tmp = [0u8; 8192];
        let n = stream.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body: Vec<u8> = buf.drain(..len).collect();
    Ok(Some(Seen {
        conn,
        method,
        path,
        headers,
        body,
        at: Instant::now(),
    }))
}

async fn connection<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    conn: usize,
    seen: Arc<Mutex<Vec<Seen>>>,
    handler: Handler,
) -> io::Result<()> {
    let mut buf = Vec::new();
    while let Some(req) = read_request(&mut stream, &mut buf, conn).await? {
        seen.lock().unwrap().push(req.clone());
        match handler(req).await {
            Reply::Raw(bytes) => {
                stream.write_all(&bytes).await?;
                let head = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
                if head.contains("connection: close") {
                    stream.shutdown().await?;
                    return Ok(());
                }
            }
            Reply::ThenClose(bytes) => {
                stream.write_all(&bytes).await?;
                stream.shutdown().await?;
                return Ok(());
            }
            Reply::Stream { head, chunk, count } => {
                stream.write_all(&head).await?;
                let mut n = 0;
                while count.is_none_or(|c| n < c) {
                    stream.write_all(&chunk).await?;
                    n += 1;
                }
                stream.shutdown().await?;
                return Ok(());
            }
            Reply::Stall(bytes) => {
                stream.write_all(&bytes).await?;
                std::future::pending::<()>().await;
            }
            Reply::Mute => std::future::pending::<()>().await,
        }
    }
    Ok(())
}

/// A resolver answering from a script: per name, a list of answer sets used in turn (the
/// last one repeats); unknown names fail. Counts calls.
#[derive(Clone, Default)]
pub(crate) struct Scripted {
    script: Arc<Mutex<HashMap<String, Vec<Vec<IpAddr>>>>>,
    pub(crate) calls: Arc<AtomicUsize>,
}

impl Scripted {
    pub(crate) fn new(entries: &[(&str, &[&[&str]])]) -> Self {
        let mut script = HashMap::new();
        for (name, sets) in entries {
            let sets: Vec<Vec<IpAddr>> = sets
                .iter()
                .map(|set| set.iter().map(|a| a.parse().unwrap()).collect())
                .collect();
            script.insert(name.to_string(), sets);
        }
        Scripted {
            script: Arc::new(Mutex::new(script)),
            calls: Arc::new(AtomicUsize::new(0)),
        }
    }

    pub(crate) fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Resolve for Scripted {
    fn resolve<'a>(&'a self, host: &'a str) -> Resolving<'a> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut script = self.script.lock().unwrap();
        let answer = match script.get_mut(host) {
            Some(sets) if sets.len() > 1 => Ok(sets.remove(0)),
            Some(sets) => Ok(sets[0].clone()),
            None => Err(io::Error::new(io::ErrorKind::NotFound, "no such name")),
        };
        Box::pin(async move { answer })
    }
}

/// A resolver that never answers.
pub(crate) struct Never;

impl Resolve for Never {
    fn resolve<'a>(&'a self, _host: &'a str) -> Resolving<'a> {
        Box::pin(std::future::pending())
    }
}

/// Records every connection attempt.
#[derive(Clone, Default)]
pub(crate) struct Dials(pub(crate) Arc<Mutex<Vec<SocketAddr>>>);

impl Dials {
    pub(crate) fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    pub(crate) fn all(&self) -> Vec<SocketAddr> {
        self.0.lock().unwrap().clone()
    }
}

pub(crate) const PUBLIC_A: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
pub(crate) const PUBLIC_B: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 3);
pub(crate) const LOOPBACK: Ipv4Addr = Ipv4Addr::LOCALHOST;

/// A door with no rate limit (tests of the limit set their own).
pub(crate) fn door(name: &str) -> DoorConfig {
    let mut d = DoorConfig::new(name);
    d.host_interval = std::time::Duration::ZERO;
    d
}

/// A door that allows private addresses, no rate limit.
pub(crate) fn private_door() -> DoorConfig {
    let mut d = door("lan");
    d.allow_private = true;
    d
}

/// A builder with a recording dialer and the two "public" loopback addresses.
pub(crate) fn builder(door: DoorConfig, resolver: Scripted, dials: &Dials) -> FetcherBuilder {
    let rec = dials.0.clone();
    Fetcher::builder(door)
        .resolver(resolver)
        .on_dial(move |a| rec.lock().unwrap().push(a))
        .pretend_public(PretendPublic::loopback(PUBLIC_A).unwrap())
        .pretend_public(PretendPublic::loopback(PUBLIC_B).unwrap())
}

/// A plain fetcher: public loopback pretend, recording dialer, given resolver.
pub(crate) fn fetcher(door: DoorConfig, resolver: Scripted, dials: &Dials) -> Fetcher {
    builder(door, resolver, dials).build()
}

/// A handler answering every request with 200 and its path as the body.
pub(crate) async fn ok_path(s: Seen) -> Reply {
    resp(200, &[("Content-Type", "text/plain")], s.path.as_bytes())
}

/// A door that allows private addresses, with no resolver script and no recording.
pub(crate) fn lan() -> Fetcher {
    fetcher(private_door(), Scripted::default(), &Dials::default())
}

/// GET a URL and read its whole body; any failure fails the test.
pub(crate) async fn body(f: &Fetcher, url: &str) -> bytes::Bytes {
    f.get(url).await.unwrap().bytes().await.unwrap()
}

/// Runs the one test `name` of this test binary again in a child process with `setup`'s
/// environment (so no other test sees it), and fails unless it ran and passed.
pub(crate) async fn run_child_test(name: &str, setup: impl FnOnce(&mut std::process::Command)) {
    let exe = std::env::current_exe().unwrap();
    let mut c = std::process::Command::new(exe);
    c.args(["--exact", name, "--nocapture", "--test-threads=1"]);
    setup(&mut c);
    let out = tokio::process::Command::from(c).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the child test did not run:\n{stdout}"
    );
}
