//! `http_floor`: the raw floor of an MCP `tools/call` over HTTP on loopback (see BENCHMARKS.md):
//! what one keep-alive HTTP/1.1 POST and its answer cost with no MCP, no JSON and no async
//! runtime on either side.
//!
//! - `server`: a blocking loopback server, a fixed pool of threads each serving one connection
//!   at a time: the HTTP twin of `testkit-mcp --fast`, so that a client's figure is the
//!   client's. It reads each request's head and its `content-length` body, finds the method and the id by scanning (no JSON
//!   parsing), and answers `initialize` (with an `mcp-session-id`), `server/discover` (2026-07-28
//!   and 2025-11-25), `tools/list` (`echo`), `tools/call` (a canned text; with `resultType` when
//!   the request carries the 2026-07-28 `_meta` envelope) and anything else with an empty
//!   result, all as
//!   `application/json`; a notification gets 202, a GET 405 (no standalone stream), a DELETE
//!   200. Prints its port on stdout's first line. Every client of the P-1 HTTP table, the raw
//!   one included, talks to it.
//! - `client --port P [--seq N] [--warmup N] [--calls N] [--inflight 1,8,64]`: sends the
//!   request Maven's client sends (the same head fields and body) over one keep-alive
//!   connection: sequential latency (p50/p99), then closed-loop throughput with k connections,
//!   each on a thread of its own, sharing the calls. Prints one JSON object per measurement, in
//!   the shape of `mcp-bench` (peer `raw`, transport `http`).

#![allow(
    clippy::disallowed_macros,
    reason = "a benchmark prints its measurements"
)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = Result<T, BoxError>;

/// The `_meta` key that marks a 2026-07-28 request.
const MODERN_KEY: &[u8] = b"\"io.modelcontextprotocol/protocolVersion\"";

const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("server") => server(),
        Some("client") => client(&args[1..]),
        _ => Err("usage: http_floor server | client --port P [--seq N] [--warmup N] [--calls N] [--inflight 1,8,64]".into()),
    };
    match r {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("http_floor: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Reads one request or response head and its `content-length` body into `buf`, the head's
/// first line into `first`; `false` at a clean end of stream before a head starts.
fn read_message(r: &mut BufReader<TcpStream>, first: &mut String, buf: &mut Vec<u8>) -> Res<bool> {
    let mut len = 0usize;
    let mut line = String::new();
    first.clear();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return if first.is_empty() {
                Ok(false)
            } else {
                Err("the peer closed mid-head".into())
            };
        }
        let l = line.trim_end();
        if first.is_empty() {
            first.push_str(l);
            continue;
        }
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse()?;
            }
        }
    }
    buf.resize(len, 0);
    r.read_exact(buf)?;
    Ok(true)
}

/// The bytes after `key` (and any blanks) up to the first byte in `end`.
fn scan<'a>(body: &'a [u8], key: &[u8], end: &[u8]) -> Option<&'a [u8]> {
    let start = body.windows(key.len()).position(|w| w == key)? + key.len();
    let rest = &body[start..];
    let rest = &rest[rest.iter().take_while(|b| **b == b' ').count()..];
    let len = rest
        .iter()
        .position(|b| end.contains(b))
        .unwrap_or(rest.len());
    Some(&rest[..len])
}

/// The answer to one request: status line and extra head fields, then the body.
fn answer(head: &str, body: &[u8], out: &mut Vec<u8>) {
    let method = if head.starts_with("GET ") {
        "GET"
    } else if head.starts_with("DELETE ") {
        "DELETE"
    } else {
        "POST"
    };
    let (status, extra, json): (&str, &str, Vec<u8>) = match method {
        "GET" => ("405 Method Not Allowed", "", Vec::new()),
        "DELETE" => ("200 OK", "", Vec::new()),
        _ => match scan(body, b"\"id\":", b",}") {
            // A notification (or a response): accepted, no body.
            None => ("202 Accepted", "", Vec::new()),
            Some(id) => {
                let m = scan(body, b"\"method\":", b",}").unwrap_or(b"");
                let modern = body.windows(MODERN_KEY.len()).any(|w| w == MODERN_KEY);
                let result: &[u8] = match m {
                    b"\"server/discover\"" => br#"{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"http-floor","version":"1.0.0"}}}"#,
                    b"\"tools/call\"" if modern => br#"{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}"#,
                    b"\"initialize\"" => br#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"http-floor","version":"1.0.0"}}"#,
                    b"\"tools/call\"" => br#"{"content":[{"type":"text","text":"hi"}]}"#,
                    b"\"tools/list\"" => br#"{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"annotations":{"readOnlyHint":true}}]}"#,
                    _ => b"{}",
                };
                let mut j = Vec::with_capacity(128);
                j.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
                j.extend_from_slice(id);
                j.extend_from_slice(b",\"result\":");
                j.extend_from_slice(result);
                j.push(b'}');
                let extra = if m == b"\"initialize\"" {
                    "mcp-session-id: 0123456789abcdef0123456789abcdef\r\n"
                } else {
                    ""
                };
                ("200 OK", extra, j)
            }
        },
    };
    out.clear();
    let _ = write!(
        out,
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n",
        json.len()
    );
    out.extend_from_slice(&json);
}

/// Threads waiting in `accept`, spawned up front: a client that opens a connection per request
/// (rmcp does) then pays for an accept, not for a thread start, and 64 keep-alive connections
/// are served at once.
const ACCEPTORS: usize = 128;

#[expect(
    clippy::disallowed_methods,
    reason = "a benchmark's server, not a door of Maven's"
)]
fn server() -> Res<()> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    println!("{}", l.local_addr()?.port());
    std::io::stdout().flush()?;
    let threads: Vec<_> = (0..ACCEPTORS)
        .map(|_| {
            let l = l.try_clone()?;
            Ok(std::thread::spawn(move || {
                for conn in l.incoming().flatten() {
                    // A connection that fails (reset, bad head) ends; the thread accepts again.
                    let _ = serve(conn);
                }
            }))
        })
        .collect::<Res<_>>()?;
    for t in threads {
        t.join().map_err(|_| "an acceptor thread panicked")?;
    }
    Ok(())
}

fn serve(conn: TcpStream) -> Res<()> {
    conn.set_nodelay(true)?;
    let mut w = conn.try_clone()?;
    let mut r = BufReader::new(conn);
    let (mut head, mut buf, mut out) = (String::new(), Vec::new(), Vec::new());
    while read_message(&mut r, &mut head, &mut buf)? {
        answer(&head, &buf, &mut out);
        w.write_all(&out)?;
    }
    Ok(())
}

struct Conn {
    w: TcpStream,
    r: BufReader<TcpStream>,
    req: Vec<u8>,
    line: String,
    buf: Vec<u8>,
}

impl Conn {
    fn open(port: u16) -> Res<Conn> {
        #[expect(
            clippy::disallowed_methods,
            reason = "a benchmark's raw loopback client: the floor the guarded path is compared to"
        )]
        let s = TcpStream::connect(("127.0.0.1", port))?;
        s.set_nodelay(true)?;
        let req = format!(
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\n\
             mcp-session-id: 0123456789abcdef0123456789abcdef\r\ncontent-length: {}\r\n\r\n{BODY}",
            BODY.len()
        )
        .into_bytes();
        Ok(Conn {
            w: s.try_clone()?,
            r: BufReader::new(s),
            req,
            line: String::new(),
            buf: Vec::new(),
        })
    }

    fn round(&mut self) -> Res<()> {
        self.w.write_all(&self.req)?;
        if !read_message(&mut self.r, &mut self.line, &mut self.buf)? {
            return Err("the server closed the connection".into());
        }
        Ok(())
    }
}

#[expect(clippy::disallowed_methods, reason = "a benchmark measures wall time")]
fn client(args: &[String]) -> Res<()> {
    let (mut port, mut seq, mut warmup, mut calls) = (0u16, 5000usize, 500usize, 10_000usize);
    let mut inflight = vec![1usize, 8, 64];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--port" => port = val()?.parse()?,
            "--seq" => seq = val()?.parse()?,
            "--warmup" => warmup = val()?.parse()?,
            "--calls" => calls = val()?.parse()?,
            "--inflight" => {
                inflight = val()?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?;
            }
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    if port == 0 {
        return Err("--port is required".into());
    }
    let mut c = Conn::open(port)?;
    for _ in 0..warmup {
        c.round()?;
    }
    let mut lat: Vec<Duration> = Vec::with_capacity(seq);
    for _ in 0..seq {
        let t = Instant::now();
        c.round()?;
        lat.push(t.elapsed());
    }
    lat.sort_unstable();
    let at = |q: usize| {
        let i = (lat.len() * q / 100).min(lat.len().saturating_sub(1));
        lat.get(i).map_or(f64::NAN, |d| d.as_secs_f64() * 1e6)
    };
    println!(
        "{}",
        serde_json::json!({"peer": "raw", "transport": "http", "kind": "seq", "n": lat.len(),
                           "p50_us": at(50), "p99_us": at(99)})
    );
    for &k in &inflight {
        let k = k.max(1);
        let mut conns = (0..k).map(|_| Conn::open(port)).collect::<Res<Vec<_>>>()?;
        for c in &mut conns {
            c.round()?; // warm each connection
        }
        let t = Instant::now();
        let threads: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, mut c)| {
                let n = calls / k + usize::from(i < calls % k);
                std::thread::spawn(move || -> Res<()> {
                    for _ in 0..n {
                        c.round()?;
                    }
                    Ok(())
                })
            })
            .collect();
        for th in threads {
            th.join().map_err(|_| "a client thread panicked")??;
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{}",
            serde_json::json!({"peer": "raw", "transport": "http", "kind": "inflight", "k": k,
                               "n": calls, "secs": secs, "calls_per_s": calls as f64 / secs})
        );
    }
    Ok(())
}
