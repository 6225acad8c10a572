//! The page on a real daemon, over a real loopback socket: enrollment links, the Host and
//! Origin checks, a passphrase step-up that enables an act end to end, and a daemon that keeps
//! running when the page's port is taken.

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{maven, stderr, Home};

pub(crate) const PASSPHRASE: &str = "correct horse battery staple";

/// One HTTP/1.1 exchange on a fresh loopback connection; returns (status, headers, body).
pub(crate) fn http(port: u16, req: &str) -> (u16, String, String) {
    #[expect(
        clippy::disallowed_methods,
        reason = "a test client of the daemon's own loopback page"
    )]
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

pub(crate) fn get(port: u16, path: &str, host: &str, cookie: &str) -> (u16, String, String) {
    let cookie = if cookie.is_empty() {
        String::new()
    } else {
        format!("Cookie: {cookie}\r\n")
    };
    http(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{cookie}Connection: close\r\n\r\n"),
    )
}

pub(crate) fn post(
    port: u16,
    path: &str,
    cookie: &str,
    csrf: &str,
    body: &Value,
) -> (u16, String, String) {
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

/// The enrollment link the CLI prints, and the page's port taken from it.
fn enroll(home: &Home) -> (String, u16) {
    let out = home.run(&["web", "enroll"]);
    assert!(out.status.success(), "web enroll: {}", stderr(&out));
    let url = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let rest = url
        .strip_prefix("http://localhost:")
        .unwrap_or_else(|| panic!("{url}"));
    let (port, frag) = rest.split_once("/enroll#").unwrap();
    assert_eq!(frag.len(), 64, "a 32-byte token in the fragment: {url}");
    assert!(frag.bytes().all(|b| b.is_ascii_hexdigit()));
    (url.clone(), port.parse().unwrap())
}

pub(crate) fn passphrase_hash(input: &str) -> std::process::Output {
    let mut c = maven()
        .args(["web", "passphrase"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    c.wait_with_output().unwrap()
}

#[test]
fn enroll_prints_a_fresh_one_time_link_for_the_bound_port() {
    let home = Home::new();
    home.write_config(&json!({"web": {"listen": "127.0.0.1:0"}}).to_string());
    let _d = home.start();
    let (a, port) = enroll(&home);
    let (b, port2) = enroll(&home);
    assert_eq!(port, port2);
    assert_ne!(a, b, "every link is new");
    let (status, head, body) = get(port, "/tools", &format!("localhost:{port}"), "");
    assert_eq!(status, 200, "{head}");
    assert!(
        head.contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    assert!(head.contains("set-cookie: maven_session_"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("httponly; samesite=strict"),
        "{head}"
    );
    assert!(body.contains("No passkey is enrolled yet"), "{body}");
}

#[test]
fn the_page_refuses_a_foreign_host_over_the_socket() {
    let home = Home::new();
    home.write_config(&json!({"web": {"listen": "127.0.0.1:0"}}).to_string());
    let _d = home.start();
    let (_, port) = enroll(&home);
    for host in [
        "evil.example",
        &format!("evil.example:{port}"),
        "localhost:1",
    ] {
        let (status, _, body) = get(port, "/tools", host, "");
        assert_eq!(status, 421, "{host}: {body}");
    }
}

#[test]
fn a_passphrase_step_up_enables_an_act_end_to_end() {
    let out = passphrase_hash(&format!("{PASSPHRASE}\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    let hash = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(hash.starts_with("$argon2id$"), "{hash}");

    let home = Home::new();
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0", "passphrase_hash": hash},
            "acts": [{"name": "say_hello", "cmd": ["echo", "hello"], "read_only": true}]
        })
        .to_string(),
    );
    let check = home.run(&["config", "check"]);
    assert!(check.status.success(), "{}", stderr(&check));
    let _d = home.start();
    let (_, port) = enroll(&home);

    let (status, head, body) = get(port, "/api/session", &format!("localhost:{port}"), "");
    assert_eq!(status, 200, "{body}");
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_owned();
    let csrf = serde_json::from_str::<Value>(&body).unwrap()["csrf_token"]
        .as_str()
        .unwrap()
        .to_owned();

    let api = |path: &str, body: &Value| post(port, path, &cookie, &csrf, body);
    let (status, _, body) = api("/api/tools/say_hello/enable", &json!({}));
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("step_up_required"));
    let (status, _, body) = api(
        "/api/stepup/passphrase",
        &json!({"passphrase": "wrong one!"}),
    );
    assert_eq!(status, 401, "{body}");
    let (status, _, body) = api("/api/stepup/passphrase", &json!({"passphrase": PASSPHRASE}));
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = api("/api/tools/say_hello/enable", &json!({}));
    assert_eq!(status, 200, "{body}");

    let tools = home.json(&["tools", "--json"]);
    assert_eq!(tools[0]["name"], "say_hello");
    assert_eq!(tools[0]["state"], "enabled");
    let (_, _, body) = get(port, "/api/tools", &format!("localhost:{port}"), &cookie);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v[0]["history"][0]["actor"], "owner (passphrase)");
}

#[test]
fn the_daemon_runs_without_the_page_when_its_port_is_taken() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let home = Home::new();
    home.write_config(&json!({"web": {"listen": format!("127.0.0.1:{port}")}}).to_string());
    let d = home.start();
    let status = home.json(&["status", "--json"]);
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"));
    let out = home.run(&["web", "enroll"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the page is not running"),
        "{}",
        stderr(&out)
    );
    let out = d.signal("-TERM");
    assert!(out.status.success());
    let log = stderr(&out);
    assert!(log.contains("cannot listen on 127.0.0.1:"), "{log}");
    assert!(log.contains("the daemon runs without the page"), "{log}");
}

#[test]
fn web_passphrase_refuses_a_short_passphrase_and_enroll_needs_a_daemon() {
    let out = passphrase_hash("short\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("at least 8 characters"));
    let home = Home::new();
    let out = home.run(&["web", "enroll"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no maven daemon is running"));
}
