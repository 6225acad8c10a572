//! The page on a real daemon, over a real loopback socket: enrollment links, the Host and
//! Origin checks, a passphrase step-up that enables an act end to end, and a daemon that keeps
//! running when the page's port is taken and serves the page once it frees.

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{eventually, maven, stderr, Home};

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

/// A new page session on the daemon's page at `port`: (cookie, csrf token).
pub(crate) fn session(port: u16) -> (String, String) {
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
    (cookie, csrf)
}

/// A page session signed in with [`PASSPHRASE`] (the daemon's config must hold its hash):
/// (cookie, csrf token).
pub(crate) fn signed_in(port: u16) -> (String, String) {
    let (cookie, csrf) = session(port);
    let (status, _, body) = post(
        port,
        "/api/stepup/passphrase",
        &cookie,
        &csrf,
        &json!({"passphrase": PASSPHRASE}),
    );
    assert_eq!(status, 200, "{body}");
    (cookie, csrf)
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

    let (cookie, csrf) = session(port);

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
fn a_daemon_started_while_the_page_port_is_taken_serves_the_page_once_it_frees() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let home = Home::new();
    home.write_config(&json!({"web": {"listen": format!("127.0.0.1:{port}")}}).to_string());
    let d = home.start();
    // The daemon runs without its page meanwhile, and says so.
    let status = home.json(&["status", "--json"]);
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"));
    let listening = &status["web"]["listening"]["not_listening"];
    assert_eq!(listening["retrying"], true, "{status}");
    let why = listening["why"].as_str().unwrap();
    assert!(
        why.contains(&format!("cannot listen on 127.0.0.1:{port} (web.listen)")),
        "{why}"
    );
    let out = home.run(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.starts_with("page: "))
        .unwrap_or_else(|| panic!("no page line: {text}"));
    assert!(
        line.starts_with(&format!(
            "page: not listening: cannot listen on 127.0.0.1:{port} (web.listen)"
        )) && line.contains("(retrying)"),
        "{line}"
    );
    let out = home.run(&["web", "enroll"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the page is not running"),
        "{}",
        stderr(&out)
    );
    // The port frees: the page comes up by itself, on that port.
    drop(taken);
    eventually("the page to listen", || {
        let s = home.json(&["status", "--json"]);
        (s["web"]["listening"]["listening"]["addr"] == format!("127.0.0.1:{port}")).then_some(())
    });
    let out = home.run(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.lines().any(|l| l.starts_with(&format!(
            "page: listening on 127.0.0.1:{port} — http://localhost:{port}/tools"
        ))),
        "{text}"
    );
    let (url, enrolled_port) = enroll(&home);
    assert_eq!(enrolled_port, port, "{url}");
    let (status, _, body) = get(port, "/tools", &format!("localhost:{port}"), "");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("No passkey is enrolled yet"), "{body}");
    let out = d.signal("-TERM");
    assert!(out.status.success());
    let log = stderr(&out);
    assert!(log.contains("cannot listen on 127.0.0.1:"), "{log}");
    assert!(
        log.contains("the daemon runs without the page for now"),
        "{log}"
    );
    assert!(log.contains("the page's port is free again"), "{log}");
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

/// A bash script run as `nobody` (uid 65534): another local user. `None` (with the reason
/// printed) when this test does not run as root and so cannot be another user.
fn as_nobody(script: &str, port: u16) -> Option<std::process::Child> {
    use std::os::unix::process::CommandExt;
    if rustix::process::geteuid().as_raw() != 0 {
        println!("skipped: only root can run a process as another user (uid 65534) here");
        return None;
    }
    let child = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("PORT", port.to_string())
        .current_dir("/")
        .uid(65534)
        .gid(65534)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Some(child)
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn another_users_process_is_closed_at_accept_and_the_owner_is_served_through_its_flood() {
    let home = Home::new();
    home.write_config(&json!({"web": {"listen": "127.0.0.1:0"}}).to_string());
    let log = home.dir.path().join("daemon.log");
    let d = home.start_logging_to(&log);
    let (_, port) = enroll(&home);
    let st = home.json(&["status", "--json"]);
    assert_eq!(
        st["web"]["peer_uid_check"],
        format!(
            "applies: only processes of uid {} are served",
            rustix::process::geteuid().as_raw()
        )
    );

    // One request from another user: closed at once, before any answer.
    let one = r#"trap '' PIPE
exec 3<>/dev/tcp/127.0.0.1/$PORT || exit 3
printf 'GET /api/session HTTP/1.1\r\nHost: localhost:%s\r\nConnection: close\r\n\r\n' "$PORT" >&3 2>/dev/null
start=$(date +%s%N)
timeout 10 cat <&3
echo "closed after $(( ($(date +%s%N) - start) / 1000000 )) ms"
"#;
    let Some(child) = as_nobody(one, port) else {
        return;
    };
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !said.contains("HTTP/1.1"),
        "another user got an answer: {said}"
    );
    let ms: u64 = said
        .trim()
        .rsplit_once("closed after ")
        .and_then(|(_, t)| t.strip_suffix(" ms"))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{said} {}", String::from_utf8_lossy(&out.stderr)));
    assert!(ms < 2000, "closed only after {ms} ms");

    // A flood from that user (connections opened as fast as bash can, each holding its
    // socket) takes no slot and no session from the owner, who is served throughout.
    let flood = r#"trap '' PIPE
end=$((SECONDS + 2))
while [ $SECONDS -lt $end ]; do
  fds=()
  for i in $(seq 100); do
    exec {fd}<>/dev/tcp/127.0.0.1/$PORT 2>/dev/null && fds+=($fd)
    printf 'GET /api/session HTTP/1.1\r\nHost: localhost:%s\r\n\r\n' "$PORT" >&$fd 2>/dev/null
  done
  for fd in "${fds[@]}"; do exec {fd}>&-; done
done
echo done"#;
    let attacker = as_nobody(flood, port).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let host = format!("localhost:{port}");
    let mut served = 0;
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        // A new session every time: the owner's budget is the owner's own.
        let (status, head, body) = get(port, "/api/session", &host, "");
        assert_eq!(
            status, 200,
            "the owner was refused during the flood: {head}{body}"
        );
        served += 1;
        if served == 15 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = attacker.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("done"));
    let st = home.json(&["status", "--json"]);
    let refused = st["web"]["connections_refused_other_uid"].as_u64().unwrap();
    println!(
        "owner served {served} times during the flood; {refused} connections of uid 65534 closed"
    );
    assert!(refused > 100, "{}", st["web"]);
    assert_eq!(
        st["web"]["connections_refused"], 0,
        "no slot ran out: {}",
        st["web"]
    );
    drop(d);
    let log = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("the page closed a connection from another user's process"))
        .collect();
    assert_eq!(lines.len(), 1, "once a minute at most: {lines:?}");
    assert!(lines[0].contains("uid=65534"), "{}", lines[0]);
}
