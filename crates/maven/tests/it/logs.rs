//! The log sink never stalls the daemon: a daemon whose stderr is a pipe nobody reads, logging
//! at `trace` while a client floods its socket (each request is one trace line), keeps
//! answering `status` and turns; `status` counts the dropped lines; once stderr is read again
//! the daemon says how many it dropped, and its shutdown sequence reaches the log.
//!
//! `MAVEN_SOAK_SECS` (default 20) sets how long the flood lasts.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::invariants::env_or;
use crate::support::{maven, Daemon, Home};

/// Runs a CLI command against `home` and fails the test when it does not finish in `within`.
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn run_within(home: &Home, args: &[&str], within: Duration) -> Output {
    let mut child = maven()
        .arg("--data")
        .arg(home.data())
        .env("XDG_CONFIG_HOME", home.dir.path().join("xdg"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + within;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("maven {args:?} did not answer within {within:?}: the daemon stalled");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

fn status(home: &Home) -> serde_json::Value {
    let out = run_within(home, &["status", "--json"], Duration::from_secs(10));
    assert!(out.status.success(), "status failed: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Sends requests as fast as the daemon answers them, 64 at a time, until `stop`.
fn flood(home: &Home, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    let sock = home.data().join("maven.sock");
    std::thread::spawn(move || {
        let s = UnixStream::connect(&sock).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut w = s.try_clone().unwrap();
        let mut r = BufReader::new(s);
        let batch = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"flood\"}\n".repeat(64);
        let (mut sent, mut line) = (0u64, String::new());
        while !stop.load(Ordering::Relaxed) {
            w.write_all(batch.as_bytes()).unwrap();
            for _ in 0..64 {
                line.clear();
                r.read_line(&mut line).unwrap();
                assert!(line.contains("\"error\""), "unexpected answer {line}");
            }
            sent += 64;
        }
        sent
    })
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn a_stderr_nobody_reads_never_stalls_the_daemon() {
    let secs: u64 = env_or("MAVEN_SOAK_SECS", 20);
    let home = Home::new();
    // stderr is a pipe, and nobody reads it until the daemon is told to stop.
    let child = maven()
        .arg("--data")
        .arg(home.data())
        .env("XDG_CONFIG_HOME", home.dir.path().join("xdg"))
        .env("RUST_LOG", "trace")
        .arg("daemon")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let daemon = Daemon { child: Some(child) };
    crate::support::eventually("the daemon answers", || {
        let ok = home.data().join("maven.sock").exists()
            && run_within(&home, &["status", "--json"], Duration::from_secs(10))
                .status
                .success();
        ok.then_some(())
    });

    let stop = Arc::new(AtomicBool::new(false));
    let flooder = flood(&home, stop.clone());
    let (start, mut statuses, mut turns) = (Instant::now(), 0u32, 0u32);
    while start.elapsed() < Duration::from_secs(secs) {
        status(&home);
        statuses += 1;
        let out = run_within(&home, &["say", "hello"], Duration::from_secs(10));
        assert!(!out.stdout.is_empty(), "a turn answered nothing: {out:?}");
        turns += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    stop.store(true, Ordering::Relaxed);
    let sent = flooder.join().unwrap();

    let v = status(&home);
    let dropped = v["log_lines_dropped"].as_u64().unwrap();
    println!("{sent} flood requests, {statuses} statuses, {turns} turns, {dropped} lines dropped");
    assert!(dropped > 0, "nothing was dropped: {v}");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "version",
            "uptime_s",
            "data_dir",
            "config",
            "mcp_servers",
            "feeds",
            "acts",
            "log_lines_dropped",
            "web",
            "limits",
            "router"
        ]
    );
    let human = run_within(&home, &["status"], Duration::from_secs(10));
    assert!(String::from_utf8_lossy(&human.stdout).contains("log lines dropped: "));

    // Stopping reads the pipe at last: the writer catches up, reports the drops, and the
    // shutdown sequence is written before the process exits.
    let t0 = Instant::now();
    let out = daemon.signal("-TERM");
    assert!(out.status.success(), "daemon exit: {:?}", out.status);
    assert!(t0.elapsed() < Duration::from_secs(20));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("log lines were dropped: the log sink did not keep up"),
        "no report of the drops in the log's tail: {}",
        &log[log.len().saturating_sub(2000)..]
    );
    assert!(log.contains("shutting down"));
    assert!(
        log.trim_end().ends_with("stopped"),
        "{}",
        &log[log.len().saturating_sub(500)..]
    );
    assert!(
        !log.contains('\u{1b}'),
        "colour codes in a log that is not a terminal"
    );
}

/// `NO_COLOR` and a non-terminal stderr both keep the human log plain; `--log-format json`
/// writes one JSON object per line, as before.
#[test]
fn log_formats_stay_as_they_were() {
    let home = Home::new();
    for (format, no_color) in [("human", true), ("json", false)] {
        let mut c: Command = maven();
        c.arg("--data")
            .arg(home.data())
            .env("XDG_CONFIG_HOME", home.dir.path().join("xdg"))
            .args(["daemon", "--log-format", format])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if no_color {
            c.env("NO_COLOR", "1");
        }
        let d = Daemon {
            child: Some(c.spawn().unwrap()),
        };
        crate::support::eventually("the daemon answers", || {
            let ok = home.data().join("maven.sock").exists()
                && run_within(&home, &["status", "--json"], Duration::from_secs(10))
                    .status
                    .success();
            ok.then_some(())
        });
        let out = d.signal("-TERM");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(!log.contains('\u{1b}'), "{log}");
        if format == "json" {
            for l in log.lines() {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                assert!(v["message"].is_string() && v["level"].is_string(), "{l}");
            }
            assert!(log.lines().last().unwrap().contains("\"stopped\""));
        } else {
            assert!(log.trim_end().ends_with("stopped"), "{log}");
        }
    }
}
