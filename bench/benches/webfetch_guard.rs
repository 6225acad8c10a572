//! The guard's overhead per request: webfetch (URL parse and vet, rate-limit check, pool,
//! body cap and deadline) against plain hyper on the same keep-alive connection shape, the
//! same loopback server, in the same run. See BENCHMARKS.md.
//!
//! `cargo bench -p maven-bench --bench webfetch_guard` (pin with `taskset -c 0` to measure
//! without cross-CPU wake-ups). After criterion's report it prints the ratio from interleaved
//! rounds.

#![allow(
    clippy::disallowed_macros,
    reason = "a benchmark prints its measurements"
)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::Criterion;
use http_body_util::{BodyExt, Empty, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::runtime::Runtime;
use webfetch::{DoorConfig, Fetcher};

const BODY: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";

/// A keep-alive HTTP/1.1 server on 127.0.0.1, on its own thread and runtime.
#[expect(
    clippy::disallowed_methods,
    reason = "a benchmark's server, not a door of Maven's"
)]
fn start_server() -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("server runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind loopback");
            tx.send(listener.local_addr().expect("local addr"))
                .expect("send addr");
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let _ = stream.set_nodelay(true);
                tokio::spawn(async move {
                    let service = service_fn(|_req| async {
                        Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from_static(
                            BODY,
                        ))))
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    rx.recv().expect("server address")
}

/// Plain hyper: one connection, handshake, requests in sequence.
async fn plain_client(addr: SocketAddr) -> SendRequest<Empty<Bytes>> {
    #[expect(
        clippy::disallowed_methods,
        reason = "the baseline of this benchmark is a raw hyper client on loopback"
    )]
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect loopback");
    stream.set_nodelay(true).expect("nodelay");
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    sender
}

async fn plain_get(sender: &mut SendRequest<Empty<Bytes>>, addr: SocketAddr) -> usize {
    sender.ready().await.expect("ready");
    let req = hyper::Request::get("/")
        .header(hyper::header::HOST, addr.to_string())
        .body(Empty::new())
        .expect("request");
    let resp = sender.send_request(req).await.expect("response");
    let body = resp.into_body().collect().await.expect("body").to_bytes();
    body.len()
}

fn guarded_fetcher() -> Fetcher {
    let mut door = DoorConfig::new("bench");
    door.allow_private = true;
    door.host_interval = Duration::ZERO;
    Fetcher::new(door)
}

async fn guarded_get(f: &Fetcher, url: &str) -> usize {
    let resp = f.get(url).await.expect("response");
    resp.bytes().await.expect("body").len()
}

fn criterion_pass(c: &mut Criterion, rt: &Runtime, addr: SocketAddr) {
    let url = format!("http://{addr}/");
    let mut sender = rt.block_on(plain_client(addr));
    let fetcher = guarded_fetcher();
    let mut group = c.benchmark_group("webfetch_guard");
    group.bench_function("plain_hyper_keepalive_get", |b| {
        b.iter(|| rt.block_on(plain_get(&mut sender, addr)))
    });
    group.bench_function("webfetch_keepalive_get", |b| {
        b.iter(|| rt.block_on(guarded_get(&fetcher, &url)))
    });
    group.finish();
}

/// Interleaved rounds of both clients; the median per-request time of each and their ratio.
#[expect(clippy::disallowed_methods, reason = "a benchmark measures wall time")]
fn ratio_pass(rt: &Runtime, addr: SocketAddr) {
    const ROUNDS: usize = 15;
    const PER_ROUND: u32 = 2000;
    let url = format!("http://{addr}/");
    let mut sender = rt.block_on(plain_client(addr));
    let fetcher = guarded_fetcher();
    let (mut plain, mut guarded) = (Vec::new(), Vec::new());
    rt.block_on(async {
        for _ in 0..ROUNDS {
            let t = Instant::now();
            for _ in 0..PER_ROUND {
                plain_get(&mut sender, addr).await;
            }
            plain.push(t.elapsed() / PER_ROUND);
            let t = Instant::now();
            for _ in 0..PER_ROUND {
                guarded_get(&fetcher, &url).await;
            }
            guarded.push(t.elapsed() / PER_ROUND);
        }
    });
    plain.sort();
    guarded.sort();
    let (p, g) = (plain[ROUNDS / 2], guarded[ROUNDS / 2]);
    println!(
        "webfetch_guard ratio: plain hyper {:.1} µs/req, webfetch {:.1} µs/req, ratio {:.2}x \
         (median of {ROUNDS} interleaved rounds of {PER_ROUND})",
        p.as_secs_f64() * 1e6,
        g.as_secs_f64() * 1e6,
        g.as_secs_f64() / p.as_secs_f64()
    );
}

fn main() {
    let addr = start_server();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("client runtime");
    let mut c = Criterion::default().configure_from_args();
    criterion_pass(&mut c, &rt, addr);
    c.final_summary();
    ratio_pass(&rt, addr);
}
