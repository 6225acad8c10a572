//! Round-trip timing of `tools/call` over stdio (P-1), with the raw pipe floor beside it.
//!
//! ```text
//! cargo build --release -p testkit --bin testkit-mcp
//! cargo run --release -p mcp --example roundtrip -- target/release/testkit-mcp --fast
//! ```
//!
//! Everything after the first argument is passed to the server. Pin both processes to one CPU
//! (`taskset -c 0 cargo run ...`) as the benchmarks do. Prints p50/p99 in microseconds for
//! sequential calls, for 64 calls in flight (per call), and for the raw pipe floor (`cat`).

#![allow(clippy::disallowed_macros, reason = "an example prints what it got")]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

const WARMUP: usize = 2_000;
const SAMPLES: usize = 20_000;

fn percentiles(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort_unstable();
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q) as usize].as_secs_f64() * 1e6;
    (at(0.50), at(0.99))
}

#[expect(
    clippy::disallowed_methods,
    reason = "a latency example measures wall time"
)]
async fn pipe_floor() -> (f64, f64) {
    let mut child = tokio::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("cat");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let line = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}
"#;
    let mut buf = Vec::with_capacity(256);
    let mut times = Vec::with_capacity(SAMPLES);
    for i in 0..WARMUP + SAMPLES {
        let t = Instant::now();
        stdin.write_all(line).await.expect("write");
        buf.clear();
        stdout.read_until(b'\n', &mut buf).await.expect("read");
        if i >= WARMUP {
            times.push(t.elapsed());
        }
    }
    percentiles(times)
}

#[tokio::main(flavor = "current_thread")]
#[expect(
    clippy::disallowed_methods,
    reason = "a latency example measures wall time"
)]
async fn main() -> Result<(), mcp::Error> {
    let mut args = std::env::args().skip(1);
    let command = args.next().expect("usage: roundtrip SERVER [ARGS…]");
    let config = mcp::ServerConfig {
        protocol: mcp::Protocol::Auto,
        name: "bench".to_owned(),
        transport: mcp::Transport::Stdio {
            command,
            args: args.collect(),
            env: BTreeMap::new(),
        },
        timeouts: mcp::McpTimeouts::default(),
    };
    let client = Arc::new(mcp::Client::connect(&config, mcp::ClientOptions::default()).await?);
    let mut arguments = serde_json::Map::new();
    arguments.insert("text".to_owned(), "hello".into());

    let mut seq = Vec::with_capacity(SAMPLES);
    for i in 0..WARMUP + SAMPLES {
        let t = Instant::now();
        client.call_tool("echo", arguments.clone()).await?;
        if i >= WARMUP {
            seq.push(t.elapsed());
        }
    }
    let (p50, p99) = percentiles(seq);
    println!("stdio sequential      p50 {p50:7.1} µs   p99 {p99:7.1} µs");

    let mut per_call = Vec::with_capacity(SAMPLES);
    let rounds = SAMPLES / 64;
    for _ in 0..rounds {
        let t = Instant::now();
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..64 {
            let c = client.clone();
            let a = arguments.clone();
            set.spawn(async move { c.call_tool("echo", a).await.map(|_| ()) });
        }
        while let Some(r) = set.join_next().await {
            r.expect("task")?;
        }
        per_call.push(t.elapsed() / 64);
    }
    let (p50, p99) = percentiles(per_call);
    println!("stdio 64 in flight    p50 {p50:7.1} µs   p99 {p99:7.1} µs  (per call)");

    let (p50, p99) = pipe_floor().await;
    println!("raw pipe floor (cat)  p50 {p50:7.1} µs   p99 {p99:7.1} µs");
    client.close().await;
    Ok(())
}
