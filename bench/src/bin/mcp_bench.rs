//! `mcp-bench`: the Rust side of `bench/run` (see BENCHMARKS.md).
//!
//! Each subcommand prints one JSON object per measurement on stdout, in the same shape as the
//! TypeScript and Python peers in `bench/peers/`, so `bench/run` can put them side by side:
//!
//! - `stdio --client maven|rmcp|raw [--seq N] [--calls N] [--inflight 1,8,64] -- CMD ARGS...`:
//!   sequential `tools/call` latency (p50/p99) and closed-loop throughput with k calls in flight
//!   over one connection to the stdio server CMD. `raw` is the floor: the same request line
//!   written to CMD and one line read back, with no JSON and no MCP (run it against
//!   `mcp-bench echo-server`).
//! - `http --client maven|rmcp --url URL [...]`: the same over Streamable HTTP.
//! - `--protocol auto|2026-07-28|2025-11-25` (`stdio`, `http`): the era the client speaks
//!   (Maven: the configuration's `protocol` key; rmcp: `ClientLifecycleMode::Discover` for
//!   2026-07-28, its default `initialize` otherwise). Default 2025-11-25. A 2026-07-28 run
//!   reports the peer as `maven-modern` / `rmcp-modern`.
//! - `echo-server`: echoes each stdin line to stdout (the raw floor's server).
//! - `flood --bytes N -- CMD ARGS...`: peak RSS (VmHWM) of this process while a Maven client
//!   reads a tools/call answer of N bytes without a newline from CMD (`testkit-mcp --giant-line`).
//! - `isolate --seq N --healthy CMD --mute CMD`: p50/p99 of calls to a healthy server through
//!   `mcp::Manager`, alone and next to a mute server with calls hanging on it, interleaved.
//! - `blackhole`: a loopback listener that accepts and never answers; prints its port.
//! - `start --launcher MAVEN --sandbox DATA [--seq N] -- CMD ARGS...`: start-to-ready (spawn,
//!   `initialize` answered) of the stdio server CMD, unsandboxed and sandboxed (the default
//!   sandbox, whose network goes through a proxy served here as the daemon serves it; one with
//!   the direct network; one without network), interleaved, N times each.
//!
//! `stdio --client maven --launcher MAVEN --sandbox DATA` runs the server in its default
//! sandbox (the launcher is the `maven` binary); its records name the peer `maven-sandboxed`.
//!
//! Every Rust client runs on a current-thread tokio runtime: `bench/run` pins each client and
//! its server to one CPU, where a second worker thread only adds wake-ups.

#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark measures the client's calls directly, with no daemon"
)]
#![allow(
    clippy::disallowed_macros,
    reason = "a benchmark prints its measurements"
)]

use std::collections::BTreeMap;
use std::io::{BufRead as _, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = Result<T, BoxError>;

/// The request line every client sends (the raw floor sends exactly these bytes).
const RAW_REQUEST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;

#[derive(Debug, Clone)]
struct Opts {
    client: String,
    protocol: mcp::Protocol,
    seq: usize,
    warmup: usize,
    calls: usize,
    inflight: Vec<usize>,
    url: String,
    bytes: u64,
    healthy: Vec<String>,
    mute: Vec<String>,
    cmd: Vec<String>,
    /// `maven`, the sandbox launcher.
    launcher: Option<String>,
    /// The data directory of sandboxed runs: the server's private directory is made under it.
    sandbox: Option<String>,
}

fn parse(args: &[String]) -> Res<Opts> {
    let mut o = Opts {
        client: "maven".to_owned(),
        protocol: mcp::Protocol::Legacy,
        seq: 2000,
        warmup: 200,
        calls: 5000,
        inflight: vec![1, 8, 64],
        url: String::new(),
        bytes: 0,
        healthy: Vec::new(),
        mute: Vec::new(),
        cmd: Vec::new(),
        launcher: None,
        sandbox: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || -> Res<String> {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{a} needs a value").into())
        };
        match a.as_str() {
            "--client" => o.client = val()?,
            "--protocol" => {
                let p = val()?;
                o.protocol = mcp::Protocol::parse(&p).ok_or(format!("unknown protocol {p}"))?;
            }
            "--seq" => o.seq = val()?.parse()?,
            "--warmup" => o.warmup = val()?.parse()?,
            "--calls" => o.calls = val()?.parse()?,
            "--inflight" => {
                o.inflight = val()?
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::parse)
                    .collect::<Result<_, _>>()?;
            }
            "--url" => o.url = val()?,
            "--bytes" => o.bytes = val()?.parse()?,
            "--healthy" => o.healthy = val()?.split_whitespace().map(str::to_owned).collect(),
            "--mute" => o.mute = val()?.split_whitespace().map(str::to_owned).collect(),
            "--launcher" => o.launcher = Some(val()?),
            "--sandbox" => o.sandbox = Some(val()?),
            "--" => {
                o.cmd = it.by_ref().cloned().collect();
            }
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    Ok(o)
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((sub, rest)) = args.split_first() else {
        eprintln!("usage: mcp-bench stdio|http|echo-server|flood|isolate|blackhole [options]");
        return std::process::ExitCode::from(2);
    };
    let result = parse(rest).and_then(|o| match sub.as_str() {
        "echo-server" => echo_server(),
        "blackhole" => blackhole(),
        "stdio" if o.client == "raw" => raw_floor(&o),
        "stdio" | "http" | "flood" | "isolate" | "start" => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async {
                match sub.as_str() {
                    "stdio" | "http" => rpc_bench(sub, &o).await,
                    "flood" => flood(&o).await,
                    "start" => start(&o).await,
                    _ => isolate(&o).await,
                }
            })
        }
        other => Err(format!("unknown subcommand {other}").into()),
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-bench {sub}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// p50 and p99 in microseconds of a set of durations.
fn percentiles(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort_unstable();
    let at = |q: usize| {
        let i = (v.len() * q / 100).min(v.len().saturating_sub(1));
        v.get(i).map_or(f64::NAN, |d| d.as_secs_f64() * 1e6)
    };
    (at(50), at(99))
}

fn emit(v: &Value) {
    println!("{v}");
}

fn seq_record(peer: &str, transport: &str, lat: Vec<Duration>) {
    let n = lat.len();
    let (p50, p99) = percentiles(lat);
    emit(
        &json!({"peer": peer, "transport": transport, "kind": "seq", "n": n,
                 "p50_us": p50, "p99_us": p99}),
    );
}

fn tput_record(peer: &str, transport: &str, k: usize, calls: usize, secs: f64) {
    emit(
        &json!({"peer": peer, "transport": transport, "kind": "inflight", "k": k,
                 "n": calls, "secs": secs, "calls_per_s": calls as f64 / secs}),
    );
}

// ---- the raw floor --------------------------------------------------------------------------

fn echo_server() -> Res<()> {
    let mut rd = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if rd.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        out.write_all(&line)?;
        out.flush()?;
    }
}

#[expect(clippy::disallowed_methods, reason = "a benchmark measures wall time")]
fn raw_floor(o: &Opts) -> Res<()> {
    let (prog, args) = o.cmd.split_first().ok_or("raw needs -- CMD")?;
    let mut child = std::process::Command::new(prog)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut w = child.stdin.take().ok_or("no stdin")?;
    let mut r = std::io::BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let req = format!("{RAW_REQUEST}\n");
    let mut line = Vec::with_capacity(4096);
    let mut round = |w: &mut std::process::ChildStdin| -> Res<()> {
        w.write_all(req.as_bytes())?;
        w.flush()?;
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Err("server closed".into());
        }
        Ok(())
    };
    for _ in 0..o.warmup {
        round(&mut w)?;
    }
    let mut lat = Vec::with_capacity(o.seq);
    for _ in 0..o.seq {
        let t = Instant::now();
        round(&mut w)?;
        lat.push(t.elapsed());
    }
    seq_record("raw", "stdio", lat);
    for &k in &o.inflight {
        // k lines written ahead, then one written per line read: k in flight at all times.
        let t = Instant::now();
        let mut sent = 0;
        let mut got = 0;
        while sent < k.min(o.calls) {
            w.write_all(req.as_bytes())?;
            sent += 1;
        }
        w.flush()?;
        while got < o.calls {
            line.clear();
            if r.read_until(b'\n', &mut line)? == 0 {
                return Err("server closed".into());
            }
            got += 1;
            if sent < o.calls {
                w.write_all(req.as_bytes())?;
                w.flush()?;
                sent += 1;
            }
        }
        tput_record("raw", "stdio", k, o.calls, t.elapsed().as_secs_f64());
    }
    drop(w);
    child.wait()?;
    Ok(())
}

// ---- MCP clients ----------------------------------------------------------------------------

/// One connected client of either implementation, callable from many tasks.
#[derive(Clone)]
enum Peer {
    Maven(Arc<mcp::Client>),
    Rmcp(rmcp::Peer<rmcp::RoleClient>),
}

impl Peer {
    async fn echo(&self) -> Res<()> {
        match self {
            Peer::Maven(c) => {
                let mut args = Map::new();
                args.insert("text".to_owned(), "hi".into());
                c.call_tool("echo", args).await?;
            }
            Peer::Rmcp(p) => {
                let mut args = Map::new();
                args.insert("text".to_owned(), "hi".into());
                p.call_tool(rmcp::model::CallToolRequestParams::new("echo").with_arguments(args))
                    .await?;
            }
        }
        Ok(())
    }
}

fn http_config(name: &str, url: &str, protocol: mcp::Protocol) -> mcp::ServerConfig {
    let mut door = webfetch::DoorConfig::new(format!("mcp:{name}"));
    door.allow_private = true;
    door.host_interval = Duration::ZERO;
    mcp::ServerConfig {
        protocol,
        name: name.to_owned(),
        transport: mcp::Transport::Http {
            url: url.to_owned(),
            headers: BTreeMap::new(),
            door,
        },
        timeouts: mcp::McpTimeouts::default(),
    }
}

fn stdio_config(name: &str, cmd: &[String], protocol: mcp::Protocol) -> Res<mcp::ServerConfig> {
    let (prog, args) = cmd.split_first().ok_or("needs -- CMD")?;
    Ok(mcp::ServerConfig {
        protocol,
        name: name.to_owned(),
        transport: mcp::Transport::Stdio {
            command: prog.clone(),
            args: args.to_vec(),
            env: BTreeMap::new(),
        },
        timeouts: mcp::McpTimeouts::default(),
    })
}

/// `cmd` inside `policy`'s sandbox, launched by `launcher` (the daemon's own wrapping).
fn sandboxed(
    cmd: &[String],
    launcher: &str,
    data: &str,
    policy: &sandbox::Policy,
) -> Res<mcp::ServerConfig> {
    sandboxed_with_door(cmd, launcher, data, policy, None)
}

/// [`sandboxed`], with the door a proxied server's launcher hands its listeners to.
fn sandboxed_with_door(
    cmd: &[String],
    launcher: &str,
    data: &str,
    policy: &sandbox::Policy,
    door: Option<&std::path::Path>,
) -> Res<mcp::ServerConfig> {
    let (prog, args) = cmd.split_first().ok_or("needs -- CMD")?;
    let path = std::env::var_os("PATH");
    let ctx = sandbox::Context {
        data_dir: std::path::Path::new(data),
        path: path.as_deref(),
        deny_ports: vec![8765],
        owner_home: std::env::var_os("HOME").map(Into::into),
    };
    let mut plan = sandbox::Plan::resolve("bench", policy, prog, args, &ctx)?;
    sandbox::prepare(&mut plan)?;
    let mut env = BTreeMap::new();
    if let Some(d) = door {
        plan.door = Some(d.to_path_buf());
        env.insert(sandbox::DOOR_TOKEN_ENV.to_owned(), DOOR_TOKEN.to_owned());
    }
    Ok(mcp::ServerConfig {
        protocol: mcp::Protocol::Legacy,
        name: "bench".to_owned(),
        transport: mcp::Transport::Stdio {
            command: launcher.to_owned(),
            args: plan.launcher_args(prog, args),
            env,
        },
        timeouts: mcp::McpTimeouts::default(),
    })
}

/// The token the bench's door admits.
const DOOR_TOKEN: &str = "bench";

/// A door as the daemon's (`maven`'s `netdoor`): each launcher's listeners, once its token
/// is checked, served by webfetch's proxy until it hangs up.
#[expect(
    clippy::disallowed_methods,
    reason = "a benchmark's server, not a door of Maven's"
)]
fn serve_door(path: &std::path::Path) -> Res<()> {
    let _ = std::fs::remove_file(path);
    let listener = tokio::net::UnixListener::bind(path)?;
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(std) = conn.into_std().and_then(|s| {
                    s.set_nonblocking(false)?;
                    Ok(s)
                }) else {
                    return;
                };
                let Ok((std, Ok(handed))) = tokio::task::spawn_blocking(move || {
                    let h = sandbox::door::receive(&std);
                    (std, h)
                })
                .await
                else {
                    return;
                };
                if handed.token != DOOR_TOKEN {
                    let _ = sandbox::door::answer(&std, Err("unknown token"));
                    return;
                }
                let fetcher = Arc::new(webfetch::Fetcher::new(webfetch::DoorConfig::new("bench")));
                let mut relays = tokio::task::JoinSet::new();
                for (_, l) in handed.listeners {
                    let Ok(l) = l
                        .set_nonblocking(true)
                        .and_then(|()| tokio::net::TcpListener::from_std(l))
                    else {
                        return;
                    };
                    relays.spawn(webfetch::relay::serve_proxy(
                        l,
                        fetcher.clone(),
                        webfetch::relay::Limits::default(),
                        Arc::default(),
                        Arc::new(|_| {}),
                    ));
                }
                if sandbox::door::answer(&std, Ok(())).is_err() {
                    return;
                }
                let Ok(mut conn) = std
                    .set_nonblocking(true)
                    .and_then(|()| tokio::net::UnixStream::from_std(std))
                else {
                    return;
                };
                let mut buf = [0u8; 64];
                while let Ok(n) = tokio::io::AsyncReadExt::read(&mut conn, &mut buf).await {
                    if n == 0 {
                        break;
                    }
                }
            });
        }
    });
    Ok(())
}

/// The stdio config of `o`: sandboxed (without network: the calls measured need none) when
/// `--sandbox` is given.
fn bench_stdio_config(o: &Opts) -> Res<mcp::ServerConfig> {
    match (&o.launcher, &o.sandbox) {
        (Some(l), Some(d)) => sandboxed(
            &o.cmd,
            l,
            d,
            &sandbox::Policy {
                network: sandbox::Network::None,
                ..sandbox::Policy::default()
            },
        ),
        _ => stdio_config("bench", &o.cmd, o.protocol),
    }
}

/// Start-to-ready, variants interleaved: unsandboxed, the default sandbox (network through a
/// proxy), the direct network, no network.
#[expect(clippy::disallowed_methods, reason = "a benchmark measures wall time")]
async fn start(o: &Opts) -> Res<()> {
    let (Some(l), Some(d)) = (&o.launcher, &o.sandbox) else {
        return Err("start needs --launcher and --sandbox".into());
    };
    let no_net = sandbox::Policy {
        network: sandbox::Network::None,
        ..sandbox::Policy::default()
    };
    let direct = sandbox::Policy {
        network: sandbox::Network::Direct,
        ..sandbox::Policy::default()
    };
    let door = std::path::Path::new(d).join("door.sock");
    serve_door(&door)?;
    // As the daemon starts an unsandboxed server: through the launcher, in a PID namespace
    // of its own.
    let mut grouped = vec![sandbox::GROUP_ARG.to_owned(), "--".to_owned()];
    grouped.extend(o.cmd.iter().cloned());
    let variants = [
        (
            "direct (no launcher)",
            stdio_config("bench", &o.cmd, mcp::Protocol::Legacy)?,
        ),
        (
            "unsandboxed",
            stdio_config(
                "bench",
                &std::iter::once(l.clone())
                    .chain(grouped)
                    .collect::<Vec<_>>(),
                mcp::Protocol::Legacy,
            )?,
        ),
        (
            "sandboxed",
            sandboxed_with_door(&o.cmd, l, d, &sandbox::Policy::default(), Some(&door))?,
        ),
        (
            "sandboxed, direct network",
            sandboxed(&o.cmd, l, d, &direct)?,
        ),
        ("sandboxed, no network", sandboxed(&o.cmd, l, d, &no_net)?),
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); variants.len()];
    for _ in 0..o.seq {
        for (i, (_, cfg)) in variants.iter().enumerate() {
            let t = Instant::now();
            let c = mcp::Client::connect(cfg, Default::default()).await?;
            times[i].push(t.elapsed());
            c.close().await;
        }
    }
    for ((name, _), t) in variants.iter().zip(times) {
        let n = t.len();
        let (p50, p99) = percentiles(t);
        emit(
            &json!({"peer": "maven", "kind": "start", "variant": name, "n": n,
                     "p50_ms": p50 / 1000.0, "p99_ms": p99 / 1000.0}),
        );
    }
    Ok(())
}

#[expect(clippy::disallowed_methods, reason = "a benchmark measures wall time")]
async fn rpc_bench(transport: &str, o: &Opts) -> Res<()> {
    use rmcp::ClientServiceExt as _;
    let mut rmcp_service = None;
    let mut maven_client = None;
    let modern = o.protocol == mcp::Protocol::Modern;
    // rmcp's default lifecycle is `initialize`; 2026-07-28 is its `Discover` mode.
    let lifecycle = if modern {
        rmcp::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        }
    } else {
        rmcp::ClientLifecycleMode::Initialize
    };
    let peer = match (o.client.as_str(), transport) {
        ("maven", "stdio") => {
            let c =
                Arc::new(mcp::Client::connect(&bench_stdio_config(o)?, Default::default()).await?);
            maven_client = Some(c.clone());
            Peer::Maven(c)
        }
        ("maven", _) => {
            let cfg = http_config("bench", &o.url, o.protocol);
            let c = Arc::new(mcp::Client::connect(&cfg, Default::default()).await?);
            maven_client = Some(c.clone());
            Peer::Maven(c)
        }
        ("rmcp", "stdio") => {
            let (prog, args) = o.cmd.split_first().ok_or("needs -- CMD")?;
            let mut cmd = tokio::process::Command::new(prog);
            cmd.args(args);
            let t = rmcp::transport::TokioChildProcess::new(cmd)?;
            let s = ().serve_with_lifecycle(t, lifecycle).await?;
            let p = s.peer().clone();
            rmcp_service = Some(s);
            Peer::Rmcp(p)
        }
        ("rmcp", _) => {
            let t = rmcp::transport::StreamableHttpClientTransport::from_uri(o.url.as_str());
            let s = ().serve_with_lifecycle(t, lifecycle).await?;
            let p = s.peer().clone();
            rmcp_service = Some(s);
            Peer::Rmcp(p)
        }
        (other, _) => return Err(format!("unknown client {other}").into()),
    };
    if let Some(c) = &maven_client {
        let want = if modern {
            mcp::Era::Modern
        } else {
            mcp::Era::Legacy
        };
        if c.era() != want {
            return Err(format!("the client speaks {:?}, not {want:?}", c.era()).into());
        }
    }
    let label = match (modern, &o.sandbox) {
        (true, _) => format!("{}-modern", o.client),
        (false, Some(_)) => format!("{}-sandboxed", o.client),
        (false, None) => o.client.clone(),
    };
    // The sequential calls run in a spawned task, as a daemon's calls do: the `block_on`
    // future itself is woken through the runtime's driver (one extra non-blocking poll of the
    // driver per wake-up), which no call in Maven pays.
    let (seq_peer, warmup, seq) = (peer.clone(), o.warmup, o.seq);
    let lat = tokio::spawn(async move {
        for _ in 0..warmup {
            seq_peer.echo().await?;
        }
        let mut lat = Vec::with_capacity(seq);
        for _ in 0..seq {
            let t = Instant::now();
            seq_peer.echo().await?;
            lat.push(t.elapsed());
        }
        Ok::<_, BoxError>(lat)
    })
    .await??;
    seq_record(&label, transport, lat);
    for &k in &o.inflight {
        let secs = closed_loop(&peer, k, o.calls).await?;
        tput_record(&label, transport, k, o.calls, secs);
    }
    if let Some(c) = maven_client {
        c.close().await;
    }
    if let Some(s) = rmcp_service {
        s.cancel().await?;
    }
    Ok(())
}

/// k tasks each calling until `calls` calls were made; returns the elapsed seconds.
#[expect(clippy::disallowed_methods, reason = "a benchmark measures wall time")]
async fn closed_loop(peer: &Peer, k: usize, calls: usize) -> Res<f64> {
    let left = Arc::new(AtomicUsize::new(calls));
    let t = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..k {
        let peer = peer.clone();
        let left = left.clone();
        set.spawn(async move {
            while left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
            {
                peer.echo().await?;
            }
            Ok::<(), BoxError>(())
        });
    }
    while let Some(r) = set.join_next().await {
        r??;
    }
    Ok(t.elapsed().as_secs_f64())
}

// ---- P-3: the newline-less flood -------------------------------------------------------------

fn vm_hwm_kib() -> Res<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .ok_or("no VmHWM in /proc/self/status")?;
    Ok(line
        .split_whitespace()
        .nth(1)
        .ok_or("bad VmHWM line")?
        .parse()?)
}

#[expect(clippy::disallowed_methods, reason = "a benchmark measures wall time")]
async fn flood(o: &Opts) -> Res<()> {
    let limits = mcp::Limits::default();
    let cap = limits.frame_cap;
    let client = mcp::Client::connect(
        &stdio_config("flood", &o.cmd, o.protocol)?,
        Default::default(),
    )
    .await?;
    client.list_tools().await?;
    let before = vm_hwm_kib()?;
    let t = Instant::now();
    let mut args = Map::new();
    args.insert("text".to_owned(), "hi".into());
    let outcome = client.call_tool("echo", args).await;
    let secs = t.elapsed().as_secs_f64();
    let after = vm_hwm_kib()?;
    let error = match &outcome {
        Ok(_) => "answered (no flood?)".to_owned(),
        Err(e) => e.to_string(),
    };
    let peak_line = client.stats().peak_line_bytes;
    client.close().await;
    emit(&json!({"peer": "maven", "kind": "flood", "bytes": o.bytes,
                 "hwm_before_kib": before, "hwm_after_kib": after,
                 "growth_kib": after.saturating_sub(before), "frame_cap_kib": cap / 1024,
                 "peak_line_bytes": peak_line, "secs": secs, "outcome": error}));
    Ok(())
}

// ---- P-5: isolation through the manager ------------------------------------------------------

#[expect(
    clippy::disallowed_methods,
    reason = "a benchmark measures wall time and calls tools through the manager"
)]
async fn isolate(o: &Opts) -> Res<()> {
    use tokio_util::sync::CancellationToken;
    use tokio_util::task::TaskTracker;
    let healthy = stdio_config("healthy", &o.healthy, o.protocol)?;
    let mute = stdio_config("mute", &o.mute, o.protocol)?;
    let opts = mcp::ManagerOptions::default();
    let alone = vec![mcp::Managed {
        config: healthy.clone(),
        enabled: true,
    }];
    let mut beside = alone.clone();
    beside.push(mcp::Managed {
        config: mute,
        enabled: true,
    });
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    let (m_alone, _rx_a) = mcp::Manager::new(alone, opts.clone());
    let (m_beside, _rx_b) = mcp::Manager::new(beside, opts);
    m_alone.spawn(&cancel, &tracker);
    m_beside.spawn(&cancel, &tracker);
    let m_alone = Arc::new(m_alone);
    let m_beside = Arc::new(m_beside);
    let args = || {
        let mut a = Map::new();
        a.insert("text".to_owned(), Value::from("hi"));
        a
    };
    for m in [&m_alone, &m_beside] {
        let deadline = Instant::now() + Duration::from_secs(20);
        while m.call("healthy", "echo", args()).await.is_err() {
            if Instant::now() > deadline {
                return Err("the healthy server never answered".into());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // Calls hanging on the mute server for the whole run (they fail at once if it is not
    // connected; either way the healthy server must not notice).
    for _ in 0..8 {
        let m = m_beside.clone();
        tokio::spawn(async move {
            let mut a = Map::new();
            a.insert("text".to_owned(), Value::from("hi"));
            let _ = m.call("mute", "echo", a).await;
        });
    }
    let mut lat_alone = Vec::with_capacity(o.seq);
    let mut lat_beside = Vec::with_capacity(o.seq);
    // Interleaved blocks of 100 so both see the same machine.
    let block = 100;
    let mut done = 0;
    while done < o.seq {
        for (m, lat) in [(&m_alone, &mut lat_alone), (&m_beside, &mut lat_beside)] {
            for _ in 0..block {
                let t = Instant::now();
                m.call("healthy", "echo", args()).await?;
                lat.push(t.elapsed());
            }
        }
        done += block;
    }
    let mute_state = m_beside
        .status()
        .into_iter()
        .find(|s| s.name == "mute")
        .map(|s| s.state.as_str().to_owned())
        .unwrap_or_default();
    let (a50, a99) = percentiles(lat_alone);
    let (b50, b99) = percentiles(lat_beside);
    emit(&json!({"peer": "maven", "kind": "isolate", "n": done,
                 "alone_p50_us": a50, "alone_p99_us": a99,
                 "beside_p50_us": b50, "beside_p99_us": b99,
                 "mute_state": mute_state}));
    cancel.cancel();
    tracker.close();
    let _ = tokio::time::timeout(Duration::from_secs(10), tracker.wait()).await;
    Ok(())
}

// ---- P-2: a black hole ------------------------------------------------------------------------

#[expect(
    clippy::disallowed_methods,
    reason = "a benchmark's server, not a door of Maven's"
)]
fn blackhole() -> Res<()> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    println!("{}", l.local_addr()?.port());
    std::io::stdout().flush()?;
    let mut held = Vec::new();
    for s in l.incoming() {
        // Accept and never answer; keep the socket open so the peer waits.
        held.push(s?);
    }
    Ok(())
}
