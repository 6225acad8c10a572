//! Maven's outbound proxy for sandboxed servers, and the raw relay of an endpoint the owner
//! granted.
//!
//! A sandboxed server lives in a network namespace with only loopback. The daemon receives a
//! listening socket from inside that namespace and serves one of these on it:
//!
//! * [`serve_proxy`]: an HTTP proxy (`CONNECT host:port` for TLS, absolute-URI `http://`
//!   requests for plain HTTP). Every outward connection is [`Fetcher::connect_tcp`]: the
//!   door's host vetting and lists, names resolved by Maven (never by the server), every
//!   answer judged by the address table, the connected peer checked again.
//! * [`serve_granted`]: every accepted connection relayed raw to one address the owner named
//!   (`sandbox.connect`), which the guard would refuse (a local database).
//!
//! Both bound what a server can make Maven hold: at most [`Limits::max_conns`] connections
//! at once (the next one is answered and closed at once), a request head bounded in size and
//! time, and a relay closed after [`Limits::idle`] without a byte either way. Each
//! connection ends in exactly one [`Event`] given to the caller's log, and updates the shared
//! [`Counters`].
//!
//! Both run until their future is dropped; dropping it closes every connection it relays.

use std::future::Future;
use std::io::{self, Write as _};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::error::{Error, Refusal};
use crate::fetcher::Fetcher;

/// The bounds of one served listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most connections relayed at once; one more is answered `503` (the proxy) or closed
    /// (a granted endpoint) at once. Default 64.
    pub max_conns: usize,
    /// Time a proxy client has to send its whole request head. Default 10 s.
    pub head_timeout: Duration,
    /// Largest request head (request line and headers) a proxy client may send, in bytes.
    /// Default 16 KiB.
    pub max_head: usize,
    /// A relayed connection with no byte either way for this long is closed. Default 5 min.
    pub idle: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_conns: 64,
            head_timeout: Duration::from_secs(10),
            max_head: 16 * 1024,
            idle: Duration::from_secs(5 * 60),
        }
    }
}

/// Running totals of one server's relays, shared with whoever shows them (the daemon may give
/// the same counters to a server's proxy and its granted endpoints).
#[derive(Debug, Default)]
pub struct Counters {
    connections: AtomicU64,
    refused: AtomicU64,
    bytes_out: AtomicU64,
    bytes_in: AtomicU64,
    open: AtomicU64,
}

impl Counters {
    /// The counters now.
    pub fn tally(&self) -> Tally {
        Tally {
            connections: self.connections.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            bytes_out: self.bytes_out.load(Ordering::Relaxed),
            bytes_in: self.bytes_in.load(Ordering::Relaxed),
            open: self.open.load(Ordering::Relaxed),
        }
    }
}

/// A reading of [`Counters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Connections accepted (refused ones included).
    pub connections: u64,
    /// Connections the proxy answered with an error of its own (4xx or 5xx), or closed for
    /// being over [`Limits::max_conns`].
    pub refused: u64,
    /// Bytes relayed from the server outward (for plain HTTP, the rewritten request head
    /// included).
    pub bytes_out: u64,
    /// Bytes relayed from the outside to the server (the proxy's own answers excluded).
    pub bytes_in: u64,
    /// Connections open now.
    pub open: u64,
}

/// What the daemon logs for one connection, once, when it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The host the server asked for (as it wrote it, IPv6 without brackets), or the granted
    /// address; empty when the connection ended before naming one.
    pub host: String,
    /// The port asked for (0 when none was named).
    pub port: u16,
    /// The address actually connected to, if any.
    pub peer: Option<SocketAddr>,
    /// Bytes relayed outward.
    pub bytes_out: u64,
    /// Bytes relayed back to the server.
    pub bytes_in: u64,
    /// How it ended.
    pub outcome: Outcome,
}

/// How a relayed connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It ran and closed: one side closed it, or the relay was stopped.
    Closed,
    /// The proxy answered with an error of its own and closed (counted in
    /// [`Tally::refused`]): these are the words sent to the server (the body of the answer).
    Refused(String),
    /// It failed with no answer from the proxy: the server closed before asking, the granted
    /// endpoint did not accept, a relay error, or the idle timeout. The reason.
    Failed(String),
}

/// The daemon's log of [`Event`]s.
pub type Log = Arc<dyn Fn(Event) + Send + Sync>;

/// How long a refused connection is kept to let the client read its answer (then it is
/// closed whatever it does), and the most bytes read from it meanwhile.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_MAX: usize = 64 * 1024;
/// Deadline to connect to a granted endpoint.
const GRANTED_CONNECT: Duration = Duration::from_secs(10);
/// Deadline to write the proxy's own answers.
const ANSWER_WRITE: Duration = Duration::from_secs(5);
/// Buffer of each direction of a relay.
const RELAY_BUF: usize = 16 * 1024;
/// Appended to a refusal by the address table.
const PUBLIC_ONLY: &str =
    "sandboxed servers reach public addresses only (sandbox.connect grants a local endpoint)";

/// Serve an HTTP proxy on `listener` until this future is dropped: `CONNECT host:port` (then
/// a raw tunnel, for TLS) and absolute-URI plain `http://` requests (sent on in origin form,
/// without `Proxy-*`, `Connection` and `Keep-Alive`, with `Connection: close`). Every
/// outward connection is made by [`Fetcher::connect_tcp`] on `fetcher`'s door; a refusal is
/// answered `403`, a failure to connect `502`, a malformed request `400` (`408` when it is
/// slow, `431` when it is too large), one connection over [`Limits::max_conns`] `503`, each
/// with a plain-text body in Maven's words, then closed.
///
/// Dropping the future closes every connection it relays.
pub async fn serve_proxy(
    listener: TcpListener,
    fetcher: Arc<Fetcher>,
    limits: Limits,
    counters: Arc<Counters>,
    log: Log,
) {
    serve(
        listener,
        limits,
        counters,
        log,
        Kind::Proxy,
        move |client, conn| proxy(client, Arc::clone(&fetcher), limits, conn),
    )
    .await;
}

/// Relay every connection accepted on `listener`, raw, to `target` until this future is
/// dropped. `target` is an endpoint the owner granted (`sandbox.connect`, e.g.
/// `127.0.0.1:5432`): it is not vetted (the guard would refuse it; the owner named it), but
/// the same limits, counters and log apply. One connection over [`Limits::max_conns`] is
/// closed at once.
///
/// Dropping the future closes every connection it relays.
pub async fn serve_granted(
    listener: TcpListener,
    target: SocketAddr,
    limits: Limits,
    counters: Arc<Counters>,
    log: Log,
) {
    serve(
        listener,
        limits,
        counters,
        log,
        Kind::Granted,
        move |client, conn| granted(client, target, limits, conn),
    )
    .await;
}

/// What a listener serves, for the answer to one connection too many.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Proxy,
    Granted,
}

/// The door: count, bound, and run each connection in a task of a set that is dropped
/// (aborting them all) with this future.
///
/// The accept loop is `gate::serve`, like every socket Maven serves, and its gate admits any
/// peer: the listener was handed over from a sandboxed server's network namespace, which only
/// that server and what it started (all of them the daemon's descendants, whom this relay
/// exists to serve) can reach, and whose sockets the kernel's socket diagnostics of the
/// daemon's namespace cannot see. Its slots are [`Limits::max_conns`].
async fn serve<H, F>(
    listener: TcpListener,
    limits: Limits,
    counters: Arc<Counters>,
    log: Log,
    kind: Kind,
    handle: H,
) where
    H: Fn(TcpStream, Conn) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let full = {
        let (counters, log) = (Arc::clone(&counters), Arc::clone(&log));
        // Dropped with this future's slots, aborting every answer still lingering.
        let lingering = std::sync::Mutex::new(JoinSet::new());
        move |client: TcpStream, _: &gate::Peer| {
            counters.connections.fetch_add(1, Ordering::Relaxed);
            let words = format!(
                "maven: too many connections from this server ({})",
                limits.max_conns
            );
            counters.refused.fetch_add(1, Ordering::Relaxed);
            log(Event {
                host: String::new(),
                port: 0,
                peer: None,
                bytes_out: 0,
                bytes_in: 0,
                outcome: Outcome::Refused(words.clone()),
            });
            if kind == Kind::Proxy {
                let answer = answer_bytes(StatusCode::SERVICE_UNAVAILABLE, &words);
                let mut lingering = lingering
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                // Reap finished answers so the set holds only what runs.
                while lingering.try_join_next().is_some() {}
                // Closing a socket with unread bytes resets it, and a reset may destroy the
                // answer before the client reads it: linger briefly, as many at once as
                // connections are allowed, else just write what fits and close.
                if lingering.len() < limits.max_conns {
                    lingering.spawn(async move {
                        let mut client = client;
                        let _ = tokio::time::timeout(ANSWER_WRITE, client.write_all(&answer)).await;
                        linger(client).await;
                    });
                } else if let Ok(std) = client.into_std() {
                    let _ = (&std).write(&answer);
                }
            }
        }
    };
    let slots = gate::Slots::new(limits.max_conns).when_full(full);
    let handler = move |client: TcpStream, admitted: gate::Admitted| {
        counters.connections.fetch_add(1, Ordering::Relaxed);
        counters.open.fetch_add(1, Ordering::Relaxed);
        let conn = Conn {
            counters: Arc::clone(&counters),
            log: Arc::clone(&log),
            _slot: admitted.slot,
            host: String::new(),
            port: 0,
            peer: None,
            bytes_out: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            outcome: None,
        };
        handle(client, conn)
    };
    // Served until this future is dropped: no stop of its own.
    let never = gate::CancellationToken::new();
    gate::serve(listener, gate::Gate::open("relay"), slots, handler, never).await;
}

/// One accepted connection: what it asked for and moved so far. Dropping it (the connection
/// ended, or its task was aborted) updates the gauges and logs its one [`Event`].
struct Conn {
    counters: Arc<Counters>,
    log: Log,
    /// Its slot among [`Limits::max_conns`], freed with it.
    _slot: gate::Slot,
    host: String,
    port: u16,
    peer: Option<SocketAddr>,
    bytes_out: AtomicU64,
    bytes_in: AtomicU64,
    outcome: Option<Outcome>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.counters.open.fetch_sub(1, Ordering::Relaxed);
        (self.log)(Event {
            host: std::mem::take(&mut self.host),
            port: self.port,
            peer: self.peer,
            bytes_out: self.bytes_out.load(Ordering::Relaxed),
            bytes_in: self.bytes_in.load(Ordering::Relaxed),
            outcome: self.outcome.take().unwrap_or(Outcome::Closed),
        });
    }
}

impl Conn {
    /// Count `n` bytes relayed outward.
    fn sent(&self, n: usize) {
        let n = n as u64;
        self.bytes_out.fetch_add(n, Ordering::Relaxed);
        self.counters.bytes_out.fetch_add(n, Ordering::Relaxed);
    }

    /// Count `n` bytes relayed back to the server.
    fn received(&self, n: usize) {
        let n = n as u64;
        self.bytes_in.fetch_add(n, Ordering::Relaxed);
        self.counters.bytes_in.fetch_add(n, Ordering::Relaxed);
    }

    /// Answer with an error of the proxy's own, in Maven's words, and close.
    async fn refuse(&mut self, mut client: TcpStream, status: StatusCode, words: String) {
        tracing::debug!(status = status.as_u16(), %words, "relay refused a request");
        self.counters.refused.fetch_add(1, Ordering::Relaxed);
        let answer = answer_bytes(status, &words);
        self.outcome = Some(Outcome::Refused(words));
        let _ = tokio::time::timeout(ANSWER_WRITE, client.write_all(&answer)).await;
        linger(client).await;
    }
}

/// A complete answer of the proxy's own: a plain-text body and `Connection: close`.
fn answer_bytes(status: StatusCode, words: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{words}\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("Error"),
        words.len() + 1,
    )
    .into_bytes()
}

/// Close after an answer: end our side, then read (and drop) what the client still sends for
/// a moment, so the close does not reset the connection before the answer is read.
async fn linger(mut client: TcpStream) {
    let _ = client.shutdown().await;
    let _ = tokio::time::timeout(LINGER, async {
        let mut sink = [0u8; 4096];
        let mut total = 0;
        while total < LINGER_MAX {
            match client.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    })
    .await;
}

/// A raw relay to a granted endpoint.
async fn granted(mut client: TcpStream, target: SocketAddr, limits: Limits, mut conn: Conn) {
    conn.host = target.ip().to_string();
    conn.port = target.port();
    #[expect(
        clippy::disallowed_methods,
        reason = "webfetch is the one place that opens outbound sockets; this endpoint is one the owner granted by name"
    )]
    let connecting = TcpStream::connect(target);
    let mut upstream = match tokio::time::timeout(GRANTED_CONNECT, connecting).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            conn.outcome = Some(Outcome::Failed(format!("connect {target}: {e}")));
            return;
        }
        Err(_) => {
            conn.outcome = Some(Outcome::Failed(format!(
                "connect {target}: no answer within {GRANTED_CONNECT:?}"
            )));
            return;
        }
    };
    let _ = upstream.set_nodelay(true);
    conn.peer = Some(target);
    let outcome = splice(&mut client, &mut upstream, limits.idle, &conn).await;
    conn.outcome = Some(outcome);
}

/// One proxy connection: read the head, route it, dial, relay.
async fn proxy(mut client: TcpStream, fetcher: Arc<Fetcher>, limits: Limits, mut conn: Conn) {
    let head = match read_head(&mut client, &limits).await {
        Ok(head) => head,
        Err(HeadError::Gone(reason)) => {
            conn.outcome = Some(Outcome::Failed(reason));
            return;
        }
        Err(HeadError::Answer(status, words)) => {
            conn.refuse(client, status, words).await;
            return;
        }
    };
    let request = match parse_head(&head.bytes[..head.end]) {
        Ok(r) => r,
        Err(reason) => {
            let words = format!("maven: malformed proxy request: {reason}");
            conn.refuse(client, StatusCode::BAD_REQUEST, words).await;
            return;
        }
    };
    let rest = &head.bytes[head.end..];
    let route = match route(&request) {
        Ok(route) => route,
        Err(words) => {
            conn.refuse(client, StatusCode::BAD_REQUEST, words).await;
            return;
        }
    };
    conn.host = route.host.clone();
    conn.port = route.port;
    let mut upstream = match fetcher.connect_tcp(&route.host, route.port).await {
        Ok((stream, peer)) => {
            conn.peer = Some(peer);
            stream
        }
        Err(e) => {
            let (status, words) = dial_answer(&e, &route.host, route.port);
            conn.refuse(client, status, words).await;
            return;
        }
    };
    let first = match &route.http {
        None => {
            const ESTABLISHED: &[u8] = b"HTTP/1.1 200 Connection established\r\n\r\n";
            let written = tokio::time::timeout(ANSWER_WRITE, client.write_all(ESTABLISHED)).await;
            if !matches!(written, Ok(Ok(()))) {
                conn.outcome = Some(Outcome::Failed(
                    "the client did not take the CONNECT answer".to_owned(),
                ));
                return;
            }
            rest.to_vec()
        }
        Some(origin_form) => {
            let mut first = origin_head(&request, origin_form);
            first.extend_from_slice(rest);
            first
        }
    };
    if !first.is_empty() {
        let written = tokio::time::timeout(limits.idle, upstream.write_all(&first)).await;
        match written {
            Ok(Ok(())) => conn.sent(first.len()),
            Ok(Err(e)) => {
                conn.outcome = Some(Outcome::Failed(format!("relay: {e}")));
                return;
            }
            Err(_) => {
                conn.outcome = Some(Outcome::Failed(idle_words(limits.idle)));
                return;
            }
        }
    }
    let outcome = splice(&mut client, &mut upstream, limits.idle, &conn).await;
    conn.outcome = Some(outcome);
}

fn idle_words(idle: Duration) -> String {
    format!("idle: no byte either way for {idle:?}")
}

/// The request head, and whatever the client sent after it in the same reads.
struct Head {
    bytes: Vec<u8>,
    /// Just past the blank line that ends the head.
    end: usize,
}

enum HeadError {
    /// The client left before a whole head: nothing to answer.
    Gone(String),
    /// Answer this and close.
    Answer(StatusCode, String),
}

/// Read until the blank line that ends the head, within `max_head` bytes and `head_timeout`.
async fn read_head(client: &mut TcpStream, limits: &Limits) -> Result<Head, HeadError> {
    let deadline = Instant::now() + limits.head_timeout;
    let mut bytes = Vec::with_capacity(1024);
    let mut chunk = vec![0u8; 4096];
    loop {
        let read = tokio::time::timeout_at(deadline, client.read(&mut chunk)).await;
        let n =
            match read {
                Err(_) => {
                    return Err(HeadError::Answer(
                        StatusCode::REQUEST_TIMEOUT,
                        format!(
                            "maven: the request head did not arrive within {:?}",
                            limits.head_timeout
                        ),
                    ))
                }
                Ok(Err(e)) => return Err(HeadError::Gone(format!("reading the request: {e}"))),
                Ok(Ok(0)) if bytes.is_empty() => {
                    return Err(HeadError::Gone(
                        "the client closed before sending a request".to_owned(),
                    ))
                }
                Ok(Ok(0)) => return Err(HeadError::Answer(
                    StatusCode::BAD_REQUEST,
                    "maven: malformed proxy request: the connection ended inside the request head"
                        .to_owned(),
                )),
                Ok(Ok(n)) => n,
            };
        let from = bytes.len().saturating_sub(3);
        bytes.extend_from_slice(chunk.get(..n).unwrap_or_default());
        let found = bytes
            .get(from..)
            .and_then(|tail| tail.windows(4).position(|w| w == b"\r\n\r\n"));
        match found {
            Some(i) if from + i + 4 <= limits.max_head => {
                return Ok(Head {
                    end: from + i + 4,
                    bytes,
                })
            }
            Some(_) => return Err(too_large(limits)),
            None if bytes.len() >= limits.max_head => return Err(too_large(limits)),
            None => {}
        }
    }
}

fn too_large(limits: &Limits) -> HeadError {
    HeadError::Answer(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        format!(
            "maven: the request head is larger than {} bytes",
            limits.max_head
        ),
    )
}

/// A parsed request head, borrowing from the bytes read.
struct Request<'a> {
    method: &'a str,
    target: &'a str,
    version: &'a str,
    /// Name and value (without surrounding whitespace), as sent.
    headers: Vec<(&'a str, &'a [u8])>,
}

/// `tchar` of RFC 9110: what a method or a header name is made of.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn token(bytes: &[u8]) -> Option<&str> {
    if bytes.is_empty() || !bytes.iter().all(|&b| is_tchar(b)) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// Parse a request head (ending in CRLFCRLF) strictly: one request line of three parts
/// separated by single spaces, header lines `name: value`, CRLF only, no folded lines, no
/// control characters.
fn parse_head(head: &[u8]) -> Result<Request<'_>, String> {
    // Keep the CR of the last line, so that every line ends in CR once split at LF.
    let head = head.strip_suffix(b"\n\r\n").unwrap_or(head);
    let mut lines = head.split(|&b| b == b'\n').map(|line| {
        line.strip_suffix(b"\r")
            .ok_or_else(|| "a line does not end in CRLF".to_owned())
    });
    let first = lines.next().ok_or_else(|| "no request line".to_owned())??;
    if first.is_empty() {
        return Err("the request line is empty".to_owned());
    }
    let mut parts = first.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("the request line is not METHOD TARGET HTTP/1.1".to_owned());
    };
    let method = token(method).ok_or_else(|| "the method is not a token".to_owned())?;
    if target.is_empty() || !target.iter().all(|b| b.is_ascii_graphic()) {
        return Err("the request target is empty or not visible ASCII".to_owned());
    }
    let target = std::str::from_utf8(target).map_err(|_| "the request target".to_owned())?;
    let version = match version {
        b"HTTP/1.1" => "HTTP/1.1",
        b"HTTP/1.0" => "HTTP/1.0",
        _ => return Err("the version is not HTTP/1.1 or HTTP/1.0".to_owned()),
    };
    let mut headers = Vec::new();
    for line in lines {
        let line = line?;
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Err("a header line has no colon".to_owned());
        };
        let (name, value) = line.split_at(colon);
        let name = token(name)
            .ok_or_else(|| "a header name is not a token (or a line is folded)".to_owned())?;
        let value = value.get(1..).unwrap_or_default();
        if value.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(format!(
                "the value of header {name} has a control character"
            ));
        }
        let value = value.trim_ascii();
        headers.push((name, value));
    }
    Ok(Request {
        method,
        target,
        version,
        headers,
    })
}

/// Where a request goes.
struct Route {
    /// As the client wrote it, IPv6 without brackets.
    host: String,
    port: u16,
    /// For plain HTTP: the origin-form target (path and query) and the `Host` value.
    http: Option<OriginForm>,
}

struct OriginForm {
    path_and_query: String,
    host_header: String,
}

const PROXY_USAGE: &str = "send CONNECT host:port, or an absolute http:// URL";

/// Route a request: `CONNECT host:port`, or an absolute `http://` URL. The error is the
/// whole `400` answer.
fn route(request: &Request<'_>) -> Result<Route, String> {
    let malformed = |reason: String| format!("maven: malformed proxy request: {reason}");
    if request.method == "CONNECT" {
        let (host, port) = authority(request.target)
            .ok_or_else(|| malformed(format!("CONNECT {:?} is not host:port", request.target)))?;
        return Ok(Route {
            host: host.to_owned(),
            port,
            http: None,
        });
    }
    if request.target.starts_with('/') || request.target == "*" {
        return Err(format!(
            "maven: this is Maven's proxy; {PROXY_USAGE} (the request was for {:?} with no host)",
            request.target
        ));
    }
    let url = url::Url::parse(request.target)
        .map_err(|e| malformed(format!("{:?} is not a URL: {e}", request.target)))?;
    match url.scheme() {
        "http" => {}
        "https" => {
            return Err(malformed(format!(
                "an https:// URL goes through CONNECT {}:{} (the client speaks TLS itself)",
                url.host_str().unwrap_or("host"),
                url.port_or_known_default().unwrap_or(443)
            )))
        }
        other => {
            return Err(malformed(format!(
                "scheme {other:?} is not proxied; {PROXY_USAGE}"
            )))
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(malformed("the URL carries credentials".to_owned()));
    }
    let Some(host) = url.host_str() else {
        return Err(malformed("the URL has no host".to_owned()));
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let host_header = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    };
    let path_and_query = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    Ok(Route {
        host: unbracket(host).to_owned(),
        port,
        http: Some(OriginForm {
            path_and_query,
            host_header,
        }),
    })
}

fn unbracket(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// `host:port` of a CONNECT (`[v6]:port` for IPv6); the port is 1 to 65535.
fn authority(target: &str) -> Option<(&str, u16)> {
    let (host, port) = if let Some(rest) = target.strip_prefix('[') {
        let (v6, port) = rest.split_once("]:")?;
        (v6, port)
    } else {
        let (host, port) = target.rsplit_once(':')?;
        if host.contains(':') {
            return None;
        }
        (host, port)
    };
    if host.is_empty() || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let port = port.parse::<u16>().ok().filter(|&p| p != 0)?;
    Some((host, port))
}

/// The request head sent to the origin: the request line in origin form, `Host` from the URL,
/// the client's headers but `Host`, `Proxy-*`, `Connection` and `Keep-Alive`, and
/// `Connection: close`.
fn origin_head(request: &Request<'_>, origin: &OriginForm) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(
        format!(
            "{} {} {}\r\nHost: {}\r\n",
            request.method, origin.path_and_query, request.version, origin.host_header
        )
        .as_bytes(),
    );
    for (name, value) in &request.headers {
        let lower = name.to_ascii_lowercase();
        if lower == "host"
            || lower == "connection"
            || lower == "keep-alive"
            || lower.starts_with("proxy-")
        {
            continue;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out
}

/// The answer to a failed dial: a refusal by the guard is `403` in Maven's words, a host
/// that does not parse `400`, anything else `502`.
fn dial_answer(error: &Error, host: &str, port: u16) -> (StatusCode, String) {
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    match error {
        Error::Refused(refusal) => {
            let why = match refusal {
                Refusal::NotAllowed { host } => format!("{host} is not in sandbox.hosts"),
                Refusal::Address { .. } | Refusal::Resolved { .. } | Refusal::LocalName { .. } => {
                    format!("{refusal}; {PUBLIC_ONLY}")
                }
                other => other.to_string(),
            };
            (
                StatusCode::FORBIDDEN,
                format!("maven: refused {authority}: {why}"),
            )
        }
        Error::InvalidUrl { reason } => (
            StatusCode::BAD_REQUEST,
            format!("maven: malformed proxy request: {reason}"),
        ),
        other => (
            StatusCode::BAD_GATEWAY,
            format!("maven: cannot reach {authority}: {other}"),
        ),
    }
}

/// Relay both ways until the outside closes (after its last byte reached the client), either
/// side fails, or nothing moves for `idle`. The client closing its side only ends the
/// outward direction.
async fn splice(
    client: &mut TcpStream,
    upstream: &mut TcpStream,
    idle: Duration,
    conn: &Conn,
) -> Outcome {
    let (mut client_read, mut client_write) = client.split();
    let (mut up_read, mut up_write) = upstream.split();
    let start = Instant::now();
    let last = AtomicU64::new(0);
    let touch = || {
        let ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        last.store(ms, Ordering::Relaxed);
    };
    let outward = pump(&mut client_read, &mut up_write, &touch, |n| conn.sent(n));
    let inward = pump(&mut up_read, &mut client_write, &touch, |n| {
        conn.received(n)
    });
    let watchdog = async {
        loop {
            let at = start + Duration::from_millis(last.load(Ordering::Relaxed)) + idle;
            if Instant::now() >= at {
                return;
            }
            tokio::time::sleep_until(at).await;
        }
    };
    tokio::pin!(outward, inward, watchdog);
    let mut outward_done = false;
    loop {
        tokio::select! {
            r = &mut outward, if !outward_done => match r {
                Ok(()) => outward_done = true,
                Err(e) => return Outcome::Failed(format!("relay: {e}")),
            },
            r = &mut inward => return match r {
                Ok(()) => Outcome::Closed,
                Err(e) => Outcome::Failed(format!("relay: {e}")),
            },
            () = &mut watchdog => return Outcome::Failed(idle_words(idle)),
        }
    }
}

/// Copy one direction until end of stream, then end the writing side.
async fn pump<R, W>(
    from: &mut R,
    to: &mut W,
    touch: &(impl Fn() + Sync),
    count: impl Fn(usize),
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; RELAY_BUF];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            // The other side may already be gone; that is not this direction's failure.
            let _ = to.shutdown().await;
            return Ok(());
        }
        touch();
        to.write_all(buf.get(..n).unwrap_or_default()).await?;
        count(n);
        touch();
    }
}

/// For the fuzz targets (`webfetch::fuzzing::proxy_head`): parse arbitrary bytes as a
/// request head, route it, and build what would be sent on. Must not panic.
pub(crate) fn fuzz_head(data: &[u8]) {
    let Ok(request) = parse_head(data) else {
        return;
    };
    if let Ok(route) = route(&request) {
        if let Some(origin) = &route.http {
            let _ = origin_head(&request, origin);
        }
        let refusal = Error::Refused(Refusal::NotAllowed {
            host: route.host.clone(),
        });
        let _ = dial_answer(&refusal, &route.host, route.port);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The bounds the README states for a sandboxed server's proxy are the defaults the
    /// daemon serves it with.
    #[test]
    fn the_default_limits_are_the_documented_ones() {
        let l = Limits::default();
        assert_eq!(l.max_conns, 64);
        assert_eq!(l.max_head, 16 * 1024);
        assert_eq!(l.head_timeout, Duration::from_secs(10));
        assert_eq!(l.idle, Duration::from_secs(300));
    }

    use super::*;

    fn parsed(head: &str) -> Result<Route, String> {
        let request = parse_head(head.as_bytes())?;
        route(&request)
    }

    #[test]
    fn heads_are_parsed_strictly() {
        for bad in [
            "\r\n\r\n",
            "GET\r\n\r\n",
            "GET  http://a/ HTTP/1.1\r\n\r\n",
            "GET http://a/ HTTP/2\r\n\r\n",
            "GET http://a/ HTTP/1.1\nHost: a\r\n\r\n",
            "GET http://a/ HTTP/1.1\r\nHost a\r\n\r\n",
            "GET http://a/ HTTP/1.1\r\n folded: x\r\n\r\n",
            "GET http://a/ HTTP/1.1\r\nX: a\x01b\r\n\r\n",
            "G(T http://a/ HTTP/1.1\r\n\r\n",
            "GET http://a/\x7f HTTP/1.1\r\n\r\n",
        ] {
            assert!(parse_head(bad.as_bytes()).is_err(), "{bad:?}");
        }
        let r = parse_head(b"GET http://a/ HTTP/1.1\r\nX-A:  one two \r\nB:\r\n\r\n").unwrap();
        assert_eq!(
            (r.method, r.target, r.version),
            ("GET", "http://a/", "HTTP/1.1")
        );
        assert_eq!(r.headers, vec![("X-A", &b"one two"[..]), ("B", &b""[..])]);
    }

    #[test]
    fn connect_authorities() {
        let table: &[(&str, Option<(&str, u16)>)] = &[
            ("example.com:443", Some(("example.com", 443))),
            ("[2001:db8::1]:443", Some(("2001:db8::1", 443))),
            ("192.0.2.1:8080", Some(("192.0.2.1", 8080))),
            ("example.com", None),
            ("example.com:0", None),
            ("example.com:65536", None),
            ("example.com:+80", None),
            (":443", None),
            ("2001:db8::1:443", None),
            ("[2001:db8::1]", None),
        ];
        for &(text, want) in table {
            assert_eq!(authority(text), want, "{text}");
        }
    }

    #[test]
    fn routes() {
        let r = parsed("GET http://example.com:8080/a/b?c=d#frag HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("example.com", 8080));
        let o = r.http.unwrap();
        assert_eq!(o.path_and_query, "/a/b?c=d");
        assert_eq!(o.host_header, "example.com:8080");
        let r = parsed("GET http://[2001:db8::1]/ HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("2001:db8::1", 80));
        assert_eq!(r.http.unwrap().host_header, "[2001:db8::1]");
        let r = parsed("CONNECT example.com:443 HTTP/1.1\r\n\r\n").unwrap();
        assert!(r.http.is_none());

        let err = |head: &str| parsed(head).err().unwrap();
        assert!(err("GET / HTTP/1.1\r\n\r\n").starts_with("maven: this is Maven's proxy; "));
        assert!(err("OPTIONS * HTTP/1.1\r\n\r\n").starts_with("maven: this is Maven's proxy; "));
        assert!(err("GET https://example.com/ HTTP/1.1\r\n\r\n")
            .contains("an https:// URL goes through CONNECT example.com:443"));
        assert!(err("GET ftp://example.com/ HTTP/1.1\r\n\r\n")
            .contains("scheme \"ftp\" is not proxied"));
        assert!(err("GET http://u:p@example.com/ HTTP/1.1\r\n\r\n")
            .contains("the URL carries credentials"));
        assert!(err("CONNECT example.com HTTP/1.1\r\n\r\n").starts_with(
            "maven: malformed proxy request: CONNECT \"example.com\" is not host:port"
        ));
    }

    #[test]
    fn the_origin_head_drops_proxy_and_hop_by_hop_headers() {
        let request = parse_head(
            b"POST http://example.com/x?y HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic abc\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nKeep-Alive: 5\r\nContent-Length: 2\r\nX-Keep: yes\r\n\r\n",
        )
        .unwrap();
        let route = route(&request).unwrap();
        let origin = route.http.as_ref().unwrap();
        let head = origin_head(&request, origin);
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "POST /x?y HTTP/1.1\r\nHost: example.com\r\nContent-Length: 2\r\nX-Keep: yes\r\nConnection: close\r\n\r\n"
        );
    }

    proptest! {
        /// No bytes make the head reader panic.
        #[test]
        fn any_bytes_are_judged_without_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
            fuzz_head(&data);
        }

        /// What is sent on for any accepted plain request is itself a well-formed head in
        /// origin form, with no proxy or hop-by-hop header but the one `Connection: close`.
        #[test]
        fn the_origin_head_is_well_formed(
            path in "/[a-zA-Z0-9/?=&%._~-]{0,40}",
            headers in proptest::collection::vec(
                ("[A-Za-z][A-Za-z0-9-]{0,12}", "[ -~\t\u{80}-\u{ff}]{0,30}"),
                0..8,
            ),
        ) {
            let mut head = format!("GET http://example.com{path} HTTP/1.1\r\n").into_bytes();
            for (name, value) in &headers {
                head.extend_from_slice(name.as_bytes());
                head.extend_from_slice(b": ");
                // Values as raw bytes (obs-text included), not UTF-8.
                head.extend(value.chars().map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?')));
                head.extend_from_slice(b"\r\n");
            }
            head.extend_from_slice(b"\r\n");
            let Ok(request) = parse_head(&head) else {
                // Only a path the URL parser refuses, or a value with a control character.
                return Ok(());
            };
            let Ok(route) = route(&request) else { return Ok(()) };
            let origin = route.http.as_ref().unwrap();
            let sent = origin_head(&request, origin);
            let again = parse_head(&sent).unwrap();
            prop_assert!(again.target.starts_with('/'));
            let names: Vec<String> =
                again.headers.iter().map(|(n, _)| n.to_ascii_lowercase()).collect();
            prop_assert_eq!(names.iter().filter(|n| *n == "host").count(), 1);
            prop_assert_eq!(names.iter().filter(|n| *n == "connection").count(), 1);
            prop_assert!(!names.iter().any(|n| n.starts_with("proxy-") || n == "keep-alive"));
            prop_assert_eq!(again.headers.last().map(|h| h.1), Some(&b"close"[..]));
        }
    }
}
