//! The daemon under hostile load, each defect reproduced against the real daemon: the page
//! flooded under a low descriptor limit, parallel passphrase guesses, anonymous sessions
//! against a stepped-up one, idle IPC connections, a feed that floods, a server that churns
//! its tools, a destructive call that is never answered, a huge result, a server that dies
//! during the dial, and a closed pipe.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{by_name, eventually, maven, stderr, testkit_mcp, wait_exit, Daemon, Home};

const PASSPHRASE: &str = "correct horse battery staple";

#[expect(
    clippy::disallowed_methods,
    reason = "a test client of the daemon's own loopback page"
)]
fn connect(port: u16) -> std::net::TcpStream {
    std::net::TcpStream::connect(("127.0.0.1", port)).unwrap()
}

/// One HTTP/1.1 exchange on a fresh connection: (status, head, body).
fn http(port: u16, req: &str) -> (u16, String, String) {
    let mut s = connect(port);
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

fn get(port: u16, path: &str, cookie: &str) -> (u16, String, String) {
    let cookie = if cookie.is_empty() {
        String::new()
    } else {
        format!("Cookie: {cookie}\r\n")
    };
    http(
        port,
        &format!(
            "GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\n{cookie}Connection: close\r\n\r\n"
        ),
    )
}

fn post(port: u16, path: &str, cookie: &str, csrf: &str, body: &Value) -> (u16, String, String) {
    let body = body.to_string();
    http(
        port,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: http://localhost:{port}\r\n\
             Cookie: {cookie}\r\nx-csrf-token: {csrf}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// The argon2id hash `maven web passphrase` prints.
fn passphrase_hash() -> String {
    let mut c = maven()
        .args(["web", "passphrase"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin
        .take()
        .unwrap()
        .write_all(format!("{PASSPHRASE}\n").as_bytes())
        .unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Runs a CLI command of `home` that must end within `within` (a daemon that cannot answer
/// would otherwise hold the test for the CLI's own 15-minute deadline).
fn run_within(home: &Home, args: &[&str], within: Duration) -> Output {
    let mut c = maven();
    c.arg("--data").arg(home.data());
    if home.config().exists() {
        c.arg("--config").arg(home.config());
    }
    let child = c
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_exit(Daemon { child: Some(child) }, within)
}

/// The page's port, from `maven status --json`.
fn page_port(home: &Home) -> u16 {
    let st = home.json(&["status", "--json"]);
    let url = st["web"]["url"].as_str().unwrap().to_owned();
    url.strip_prefix("http://localhost:")
        .and_then(|r| r.strip_suffix("/tools"))
        .unwrap()
        .parse()
        .unwrap()
}

/// Kilobytes of a /proc/PID/status field (VmRSS, VmHWM).
fn proc_kb(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap()
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn a_flood_of_half_requests_under_a_low_descriptor_limit_leaves_the_daemon_working() {
    let polls = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = polls.clone();
    let url = crate::support::serve_feed(move || {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let item = format!("<item><guid>g{n}</guid><title>t{n}</title></item>");
        (
            200,
            format!("<rss version=\"2.0\"><channel>{item}</channel></rss>"),
        )
    });
    let home = Home::new();
    home.write_config(
        &json!({"web": {"listen": "127.0.0.1:0"}, "feed_min_interval": "1s",
                "feeds": [{"name": "f", "url": url, "interval": "1s", "allow_private": true}]})
        .to_string(),
    );
    let log = home.dir.path().join("daemon.log");
    let file = std::fs::File::create(&log).unwrap();
    // The daemon under a 512-descriptor limit (soft and hard: it cannot raise it).
    let child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 512 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_maven"))
        .arg("--data")
        .arg(home.data())
        .arg("--config")
        .arg(home.config())
        .arg("daemon")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(file))
        .spawn()
        .unwrap();
    let d = Daemon { child: Some(child) };
    eventually("the daemon to answer", || {
        home.run(&["status", "--json"])
            .status
            .success()
            .then_some(())
    });
    let st = home.json(&["status", "--json"]);
    assert_eq!(st["limits"]["descriptors"], 512, "{st}");
    assert_eq!(st["limits"]["descriptors_reserved"], 256);
    assert_eq!(st["web"]["max_connections"], 64, "{st}");
    let port = page_port(&home);

    let polls_before = polls.load(std::sync::atomic::Ordering::Relaxed);
    // 1,100 connections that each send half a request and wait.
    let half = format!("GET /tools HTTP/1.1\r\nHost: localhost:{port}\r\n");
    let mut flood = Vec::new();
    for _ in 0..1100 {
        let mut s = connect(port);
        let _ = s.write_all(half.as_bytes());
        flood.push(s);
    }
    // The daemon still answers at once, and never came near its limit.
    let started = Instant::now();
    let out = run_within(&home, &["status", "--json"], Duration::from_secs(20));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(10));
    let st: Value = serde_json::from_slice(&out.stdout).unwrap();
    let fds = open_fds(d.pid());
    println!(
        "under the flood: {fds} descriptors open, status answered in {:?}",
        started.elapsed()
    );
    assert!(fds < 200, "{fds} descriptors open under the flood");
    assert!(
        st["web"]["connections"].as_u64().unwrap() <= 64,
        "{}",
        st["web"]
    );
    // The connections beyond the bound were answered 503 at once and closed.
    let mut refused = 0;
    let mut held = Vec::new();
    for mut s in flood {
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut buf = Vec::new();
        match s.read_to_end(&mut buf) {
            Ok(_) => {
                assert!(
                    buf.is_empty() || buf.starts_with(b"HTTP/1.1 503 Service Unavailable"),
                    "{}",
                    String::from_utf8_lossy(&buf)
                );
                refused += 1;
            }
            // Closed with the half request unread: the kernel resets the connection.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => refused += 1,
            Err(_) => held.push(s),
        }
    }
    assert!(refused >= 1100 - 64, "only {refused} refused at once");
    assert!(held.len() <= 64, "{} held", held.len());
    let st = home.json(&["status", "--json"]);
    assert!(
        st["web"]["connections_refused"].as_u64().unwrap() >= 1100 - 64,
        "{}",
        st["web"]
    );
    // The held ones are closed by the header deadline (10 s), and the page serves again.
    let deadline = Instant::now() + Duration::from_secs(30);
    for mut s in held {
        let left = deadline.saturating_duration_since(Instant::now());
        s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        let mut buf = [0u8; 1024];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) => panic!("a half request was still open after 30 s: {e}"),
            }
        }
    }
    let (status, head, _) = get(port, "/tools", "");
    assert_eq!(status, 200, "{head}");
    // Feed polls went on through the flood.
    let feeds = home.json(&["feeds", "status", "--json"]);
    assert!(feeds[0]["last_error"].is_null(), "{}", feeds[0]);
    let polls_after = polls.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        polls_after > polls_before,
        "{polls_before} polls before the flood, {polls_after} after"
    );
    drop(d);
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("the page refused a connection: every connection slot is in use"),
        "{log}"
    );
}

#[test]
fn parallel_wrong_passphrases_are_verified_one_at_a_time_within_the_budget() {
    let hash = passphrase_hash();
    let home = Home::new();
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0", "passphrase_hash": hash},
            "acts": [{"name": "say_hello", "cmd": ["echo", "hello"], "read_only": true}]
        })
        .to_string(),
    );
    let log = home.dir.path().join("daemon.log");
    let d = home.start_logging_to(&log);
    let port = page_port(&home);
    let (cookie, csrf) = crate::web::session(port);
    let rss_before = proc_kb(d.pid(), "VmRSS");

    let guesses: Vec<_> = (0..100)
        .map(|i| {
            let (cookie, csrf) = (cookie.clone(), csrf.clone());
            std::thread::spawn(move || {
                post(
                    port,
                    "/api/stepup/passphrase",
                    &cookie,
                    &csrf,
                    &json!({"passphrase": format!("wrong guess {i}")}),
                )
            })
        })
        .collect();
    let answers: Vec<(u16, String, String)> =
        guesses.into_iter().map(|g| g.join().unwrap()).collect();
    let wrong = answers.iter().filter(|a| a.0 == 401).count();
    let refused: Vec<_> = answers.iter().filter(|a| a.0 == 429).collect();
    // Connections beyond the page's bound (64) are answered 503 before any check.
    let busy = answers.iter().filter(|a| a.0 == 503).count();
    assert_eq!(wrong, 5, "exactly the budget was verified: {answers:?}");
    assert_eq!(wrong + refused.len() + busy, 100, "{answers:?}");
    for (_, _, body) in &refused {
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"], "too_many_attempts");
        let m = v["message"].as_str().unwrap();
        assert!(
            m.contains("a passkey still works")
                && (m.contains("the passphrase is locked for")
                    || m.contains("passphrase attempts are already being checked")),
            "{m}"
        );
    }
    let st = home.json(&["status", "--json"]);
    assert_eq!(st["web"]["passphrase_verifications"], 5, "{}", st["web"]);
    assert_eq!(
        st["web"]["passphrase_attempts_refused"].as_u64(),
        Some(refused.len() as u64)
    );
    assert!(st["web"]["passphrase_locked_for_s"].as_u64().unwrap() > 0);
    // One argon2 at a time: the peak stays near the daemon's resting size (the issue saw
    // 1.7 GB with every guess verified at once).
    let peak = proc_kb(d.pid(), "VmHWM");
    println!("100 parallel guesses: {wrong} verified, {} refused, {busy} busy; RSS {rss_before} kB before, peak {peak} kB", refused.len());
    assert!(
        peak < rss_before + 150 * 1024,
        "peak RSS {peak} kB (before: {rss_before} kB)"
    );

    // The owner's right passphrase is refused while the lock holds, saying when it lifts…
    let (status, _, body) = post(
        port,
        "/api/stepup/passphrase",
        &cookie,
        &csrf,
        &json!({"passphrase": PASSPHRASE}),
    );
    assert_eq!(status, 429, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let m = v["message"].as_str().unwrap();
    assert!(m.starts_with("the passphrase is locked for "), "{m}");
    assert!(m.contains("more s after 5 wrong passphrases"), "{m}");
    // …and the lock is the passphrase's only: the passkey ceremony still starts (here it says
    // that no passkey is enrolled, not that attempts are paused).
    let (status, _, body) = post(
        port,
        "/api/stepup/passkey/start",
        &cookie,
        &csrf,
        &json!({}),
    );
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("no_passkey"), "{body}");
    let out = d.signal("-TERM");
    assert!(out.status.success());
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("5 wrong passphrases in a row: the passphrase is locked for 60 s"),
        "{log}"
    );
}

#[test]
fn anonymous_sessions_never_push_out_a_stepped_up_one() {
    let hash = passphrase_hash();
    let home = Home::new();
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0", "passphrase_hash": hash},
            "acts": [{"name": "say_hello", "cmd": ["echo", "hello"], "read_only": true}]
        })
        .to_string(),
    );
    let _d = home.start();
    let port = page_port(&home);
    let (cookie, csrf) = crate::web::signed_in(port);

    // 300 cookieless requests: new sessions are rate-limited, and none evicts the owner's.
    let mut made = 0;
    let mut limited = 0;
    for _ in 0..300 {
        let (status, _, body) = get(port, "/api/session", "");
        match status {
            200 => made += 1,
            429 => {
                limited += 1;
                let v: Value = serde_json::from_str(&body).unwrap();
                assert_eq!(v["error"], "too_many_sessions");
                assert!(
                    v["message"]
                        .as_str()
                        .unwrap()
                        .starts_with("too many new sessions: at most 30 a minute; try again in "),
                    "{v}"
                );
            }
            s => panic!("{s}: {body}"),
        }
    }
    assert_eq!(made, 29, "30 a minute, the owner's included");
    assert_eq!(limited, 271);
    // The owner's session and its fresh step-up survived.
    let (status, _, body) = post(
        port,
        "/api/tools/say_hello/enable",
        &cookie,
        &csrf,
        &json!({}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(home.json(&["tools", "--json"])[0]["state"], "enabled");
}

#[test]
fn idle_ipc_connections_do_not_lock_out_the_cli() {
    let home = Home::new();
    let _d = home.start();
    let sock = home.data().join("maven.sock");
    // Every slot taken by a connection that sends nothing.
    let idle: Vec<UnixStream> = (0..128)
        .map(|_| UnixStream::connect(&sock).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // One more gets the busy line at once.
    let extra = UnixStream::connect(&sock).unwrap();
    extra
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut line = String::new();
    BufReader::new(&extra).read_line(&mut line).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["error"]["code"], -32001, "{v}");
    assert_eq!(v["error"]["message"], "all 128 IPC connections are in use");
    // The CLI says busy, never "not running", and does not hang.
    let out = run_within(&home, &["status"], Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("is running but busy"), "{err}");
    assert!(!err.contains("no maven daemon is running"), "{err}");
    // The idle connections are closed after the first-line deadline (5 s): the CLI works.
    for mut s in idle {
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut buf = [0u8; 64];
        assert_eq!(s.read(&mut buf).unwrap(), 0, "closed by the daemon");
    }
    let st = home.json(&["status", "--json"]);
    assert_eq!(st["limits"]["ipc_max_connections"], 128);
    assert!(st["limits"]["ipc_connections_refused"].as_u64().unwrap() >= 2);
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn a_feed_that_floods_is_bounded_per_day_and_in_seen_keys() {
    let poll = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = poll.clone();
    let url = crate::support::serve_feed(move || {
        let p = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut body = String::from("<rss version=\"2.0\"><channel><title>flood</title>");
        for i in 0..20_000 {
            body.push_str(&format!(
                "<item><guid>p{p}-{i}</guid><title>item {p}/{i}</title></item>"
            ));
        }
        body.push_str("</channel></rss>");
        (200, body)
    });
    let home = Home::new();
    home.write_config(
        &json!({"feed_min_interval": "1s", "feeds": [
            {"name": "flood", "url": url, "interval": "1s", "allow_private": true, "max_body": 16_777_216}
        ]})
        .to_string(),
    );
    let d = home.start();
    // Polled for most of a minute, every poll 20,000 fresh items.
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(45) {
        std::thread::sleep(Duration::from_secs(1));
    }
    let polls = poll.load(std::sync::atomic::Ordering::Relaxed);
    assert!(polls >= 8, "only {polls} polls");
    let notes = home.json(&[
        "notes",
        "--source",
        "rss:flood",
        "--limit",
        "10000",
        "--json",
    ]);
    let n = notes.as_array().unwrap().len();
    assert_eq!(n, 500, "the daily cap, after {polls} polls");
    let feeds = home.json(&["feeds", "status", "--json"]);
    let w = feeds[0]["warning"].as_str().unwrap_or("");
    assert!(
        w.contains("daily cap reached: at most 500 notes a day from this feed"),
        "{}",
        feeds[0]
    );
    assert!(d.signal("-TERM").status.success());
    let size: u64 = ["maven.db", "maven.db-wal"]
        .iter()
        .filter_map(|f| std::fs::metadata(home.data().join(f)).ok())
        .map(|m| m.len())
        .sum();
    println!("{polls} polls of 20,000 fresh items: {n} notes, database {size} bytes");
    assert!(size < 32 << 20, "the database grew to {size} bytes");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let seen = rt.block_on(async {
        let s = store::Store::open(&home.data().join("maven.db"))
            .await
            .unwrap();
        let n = s.seen_count("flood").await.unwrap();
        s.close().await.unwrap();
        n
    });
    println!("{seen} seen keys after {polls} polls");
    // The bound is twice what the feed serves (40,000), pruned right after each poll's commit;
    // a daemon stopped between a commit and its prune leaves one fetch more, which the next
    // poll prunes. Unbounded, 20,000 fresh keys a poll would be hundreds of thousands.
    assert!(
        seen <= 60_000,
        "{seen} seen keys after {polls} polls (bound: 40,000, plus one fetch)"
    );
}

#[test]
fn a_server_that_churns_its_tools_is_marked_unstable_and_its_events_stay_bounded() {
    let home = Home::new();
    let bin = testkit_mcp();
    home.write_config(
        &json!({"mcp_servers": {"churn": {
            "command": bin.to_str().unwrap(),
            "args": ["--tools", "12", "--churn", "200"],
            "enabled": true
        }}})
        .to_string(),
    );
    let d = home.start();
    let st = eventually("the server to be marked unstable", || {
        let st = home.json(&["mcp", "status", "--json"]);
        st[0]["unstable"].is_string().then_some(st)
    });
    let why = st[0]["unstable"].as_str().unwrap();
    assert!(
        why.starts_with("unstable: its tools changed 7 times in the last hour (more than 6)"),
        "{why}"
    );
    // It keeps churning (a listing every couple of seconds), and nothing more is applied.
    std::thread::sleep(Duration::from_secs(20));
    let st = home.json(&["mcp", "status", "--json"]);
    let why = st[0]["unstable"].as_str().unwrap().to_owned();
    let human = home.run(&["mcp", "status"]);
    assert!(
        String::from_utf8_lossy(&human.stdout).contains("warning:  unstable: its tools changed"),
        "{}",
        String::from_utf8_lossy(&human.stdout)
    );
    assert!(d.signal("-TERM").status.success());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (events, rows) = rt.block_on(async {
        #[expect(
            clippy::disallowed_methods,
            reason = "a test reads the database of a daemon that has stopped"
        )]
        let s = store::Store::open(&home.data().join("maven.db"))
            .await
            .unwrap();
        let e = s.tool_events(None, 100_000).await.unwrap();
        let r = s.tools().await.unwrap();
        s.close().await.unwrap();
        (e, r)
    });
    let coalesced: u64 = why
        .rsplit_once('(')
        .and_then(|(_, r)| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    println!("{} tool_events; {why}", events.len());
    assert!(coalesced >= 5, "{why}");
    // 12 proposals and at most 12 redefinitions per applied change (6 changes before it
    // became unstable), whatever the number of listings since.
    assert!(
        events.len() <= 12 + 12 * 6,
        "{} events: {why}",
        events.len()
    );
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().all(|r| r.state == store::ToolState::Proposed));
}

/// A daemon with one stdio server `todo` whose only tool, `clear_done`, writes (no arguments),
/// its row enabled; the server runs with `flags` and records what it receives.
fn destructive_setup(flags: &[&str], call_timeout: &str) -> (Home, std::path::PathBuf) {
    let home = Home::new();
    let bin = testkit_mcp();
    let tools = home.dir.path().join("tools.json");
    let record = home.dir.path().join("record.txt");
    std::fs::write(
        &tools,
        json!([{"name": "clear_done", "description": "Deletes every done task.",
                "inputSchema": {"type": "object"}}])
        .to_string(),
    )
    .unwrap();
    let mut args = vec![
        format!("--tools-file={}", tools.display()),
        format!("--record={}", record.display()),
    ];
    args.extend(flags.iter().map(|f| f.to_string()));
    std::fs::write(&record, "").unwrap();
    crate::support::writable_by_root_servers(&record);
    home.write_config(
        // A connection that dies counts as a failed dial (a minute's backoff), so what
        // follows a lost connection is deterministic.
        &json!({"mcp_timing": {"min_uptime": "1h"},
                "mcp_servers": {"todo": {
            "command": bin.to_str().unwrap(), "args": args, "enabled": true,
            "timeouts": {"call": call_timeout},
            // Sandboxed: it reads its tool list and appends to the record, nothing else.
            "sandbox": {"read": [tools], "write": [record]}
        }}})
        .to_string(),
    );
    let d = home.start();
    eventually("discovery", || {
        (home.json(&["tools", "--json"]).as_array().unwrap().len() == 1).then_some(())
    });
    assert!(d.signal("-TERM").status.success());
    home.enable(&["todo_clear_done"]);
    (home, record)
}

fn wait_ready(home: &Home) {
    eventually("the server to be ready", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (st[0]["state"] == "ready").then_some(())
    });
}

fn say(home: &Home, text: &str) -> (i32, String) {
    let mut args = vec!["say"];
    args.extend(text.split(' '));
    let out = home.run(&args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
    )
}

pub(crate) fn acts_log(home: &Home) -> Vec<store::ActLogRow> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        #[expect(
            clippy::disallowed_methods,
            reason = "a test reads the database of a daemon that has stopped"
        )]
        let s = store::Store::open(&home.data().join("maven.db"))
            .await
            .unwrap();
        let rows = s.acts_log(10).await.unwrap();
        s.close().await.unwrap();
        rows
    })
}

fn calls_received(record: &std::path::Path) -> usize {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.trim() == "tools/call")
        .count()
}

#[test]
fn a_destructive_call_sent_and_never_answered_is_outcome_unknown() {
    let (home, record) = destructive_setup(&["--mute-mid-call"], "3s");
    let d = home.start();
    wait_ready(&home);
    let (code, answer) = say(&home, "todo clear done");
    assert_eq!(code, 0, "{answer}");
    assert!(answer.contains("Run it? (yes/no)"), "{answer}");
    let (code, answer) = say(&home, "yes");
    assert_eq!(code, 1);
    assert_eq!(
        answer,
        "todo_clear_done: outcome unknown: `todo` may have run it (MCP server \"todo\": `tools/call` got no answer within 3s). \
         Check with the service itself before asking for it again; Maven does not retry it."
    );
    assert!(!answer.contains("did not run"));
    assert_eq!(calls_received(&record), 1, "the server received it, once");
    assert!(d.signal("-TERM").status.success());
    assert_eq!(calls_received(&record), 1, "never retried");
    let log = acts_log(&home);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].result(), store::ActResult::Unknown);
    assert!(!log[0].ok);
    assert!(
        log[0]
            .outcome
            .starts_with("unknown: outcome unknown: `todo` may have run it"),
        "{}",
        log[0].outcome
    );
    assert_eq!(
        log[0].confirmed_by.as_deref(),
        Some("owner (terminal: \"yes\")")
    );
}

#[test]
fn a_server_killed_mid_call_is_outcome_unknown_and_one_never_reached_did_not_run() {
    let (home, record) = destructive_setup(&["--crash-mid-call"], "30s");
    let d = home.start();
    wait_ready(&home);
    say(&home, "todo clear done");
    let (code, answer) = say(&home, "yes");
    assert_eq!(code, 1);
    assert!(
        answer.starts_with("todo_clear_done: outcome unknown: `todo` may have run it (MCP server \"todo\": the connection is closed: the server exited with code 3)"),
        "{answer}"
    );
    assert_eq!(calls_received(&record), 1);
    // Right after the crash the server is not connected: nothing is sent, and only then is
    // it "did not run".
    say(&home, "todo clear done");
    let (code, answer) = say(&home, "yes");
    assert_eq!(code, 1);
    assert!(
        answer.starts_with("todo_clear_done did not run: MCP server \"todo\" is not connected"),
        "{answer}"
    );
    assert_eq!(calls_received(&record), 1, "the second was never sent");
    assert!(d.signal("-TERM").status.success());
    let log = acts_log(&home);
    assert_eq!(log.len(), 2);
    assert_eq!(
        log[0].result(),
        store::ActResult::Failed,
        "{}",
        log[0].outcome
    );
    assert_eq!(
        log[1].result(),
        store::ActResult::Unknown,
        "{}",
        log[1].outcome
    );
}

#[test]
fn a_daemon_killed_mid_call_leaves_the_act_as_outcome_unknown() {
    let (home, record) = destructive_setup(&["--mute-mid-call"], "60s");
    let d = home.start();
    wait_ready(&home);
    say(&home, "todo clear done");
    let mut yes = maven();
    yes.arg("--data").arg(home.data());
    yes.arg("--config").arg(home.config());
    let yes = yes
        .args(["say", "yes"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    eventually("the call to reach the server", || {
        (calls_received(&record) == 1).then_some(())
    });
    drop(d.signal("-KILL"));
    let out = wait_exit(Daemon { child: Some(yes) }, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let log = acts_log(&home);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].result(), store::ActResult::Unknown);
    assert_eq!(log[0].outcome, "unknown: sent; no answer yet");
}

#[test]
fn a_cut_result_says_it_was_cut_and_by_how_much() {
    let home = Home::new();
    let bin = testkit_mcp();
    home.write_config(
        &json!({"mcp_servers": {"big": {
            "command": bin.to_str().unwrap(), "args": ["--result-bytes", "3900000"],
            "enabled": true, "allow_tools": ["echo"]
        }}})
        .to_string(),
    );
    let d = home.start();
    eventually("discovery", || {
        (home.json(&["tools", "--json"]).as_array().unwrap().len() == 1).then_some(())
    });
    assert!(d.signal("-TERM").status.success());
    home.enable(&["big_echo"]);
    let _d = home.start();
    wait_ready(&home);
    let out = home.run(&["say", "--json", "big", "echo", "hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let answer = v["answer"].as_str().unwrap();
    assert!(
        answer.ends_with("\n[cut: the result had 3900000 bytes; the first 65536 are shown]"),
        "{}",
        &answer[answer.len().saturating_sub(200)..]
    );
    assert!(answer.len() < 70_000);
}

#[test]
fn a_server_that_dies_during_the_dial_keeps_its_stderr() {
    let home = Home::new();
    home.write_config(
        &json!({"mcp_servers": {"keyless": {
            "command": "sh", "args": ["-c", "echo 'error: missing API_KEY' >&2; exit 1"],
            "enabled": true
        }}})
        .to_string(),
    );
    let _d = home.start();
    let st = eventually("the dial to fail", || {
        let st = home.json(&["mcp", "status", "--json"]);
        st[0]["last_error"]
            .as_str()
            .is_some_and(|e| e.starts_with("dial: "))
            .then_some(st)
    });
    let s = by_name(&st, "keyless");
    assert_eq!(s["stderr_tail"], "error: missing API_KEY\n", "{s}");
    let out = home.run(&["mcp", "status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("  stderr:   error: missing API_KEY"),
        "{text}"
    );
}

/// Which of the command's output streams is a pipe nobody reads.
enum Closed {
    Stdout,
    Stderr,
}

/// Runs `maven ARGS` on `home`'s data directory with one output stream a pipe whose reader is
/// gone; the other is captured.
fn with_a_closed_pipe(home: &Home, args: &[&str], closed: Closed) -> Output {
    let mut c = maven();
    c.arg("--data").arg(home.data());
    c.env("XDG_CONFIG_HOME", home.dir.path().join("xdg"));
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    c.args(args).stdin(Stdio::null());
    match closed {
        Closed::Stdout => c.stdout(writer).stderr(Stdio::piped()),
        Closed::Stderr => c.stdout(Stdio::piped()).stderr(writer),
    };
    c.output().unwrap()
}

#[test]
fn the_cli_exits_quietly_on_a_closed_pipe() {
    let home = Home::new();
    let _d = home.start();
    for args in [
        &["notes", "--limit", "2000"][..],
        &["status"],
        &["tools", "--json"],
        &["completions", "bash"],
        &["man"],
    ] {
        let out = with_a_closed_pipe(&home, args, Closed::Stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}: quiet");
    }
}

/// A command whose stderr is a pipe nobody reads says its failure into it and ends with its
/// own exit code: a closed stderr never turns into a panic (101).
#[test]
fn the_cli_keeps_its_exit_code_on_a_closed_stderr() {
    let home = Home::new();
    let bad_config = home.dir.path().join("bad.json");
    std::fs::write(&bad_config, "{ not json").unwrap();
    for (args, code) in [
        // No daemon runs: "not running" on stderr, exit 2.
        (&["status"][..], 2),
        (&["mcp", "status", "--json"], 2),
        // A configuration that does not parse: its problems on stderr, exit 1.
        (&["config", "check", bad_config.to_str().unwrap()], 1),
        // A usage error of its own: exit 2.
        (&["web", "passphrase"], 2),
    ] {
        let out = with_a_closed_pipe(&home, args, Closed::Stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
    }
}
