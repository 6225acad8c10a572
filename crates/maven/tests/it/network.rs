//! The sandbox's network: a server whose sandbox says `"network": true` (the default) lives in
//! a network namespace of its own with only loopback and goes out only through Maven's proxy,
//! which reaches public addresses only; a `connect` grant reaches one local endpoint; UDP,
//! sock_diag and the host's abstract sockets are out of reach. Real programs behind the proxy:
//! Python's urllib and httpx2, Node's own fetch. "Public" here is 127.0.0.2, which the
//! daemon's test hook (`MAVEN_TEST_PRETEND_PUBLIC`, compiled only into test builds) judges
//! public; nothing leaves loopback.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::support::{by_name, eventually, installed, reported, testenv, testkit_mcp, Home};

/// The address the daemon's test hook judges public.
const PUBLIC: &str = "127.0.0.2";

/// A loopback service at `ip` that answers every connection with `body` (as HTTP when it is
/// asked in HTTP, raw otherwise), counting connections.
#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
fn serve(ip: &str, body: &'static str) -> (SocketAddr, Arc<AtomicUsize>) {
    let l = TcpListener::bind((ip, 0)).unwrap();
    let addr = l.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            seen.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                let mut head = Vec::new();
                let mut b = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16384 {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&b[..n]),
                    }
                }
                let reply = if head.starts_with(b"GET ") {
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                } else {
                    body.to_owned()
                };
                let _ = s.write_all(reply.as_bytes());
            });
        }
    });
    (addr, count)
}

/// Python (urllib, httpx2) and Node (fetch) servers reach a public service through Maven's
/// proxy; a loopback address other than 127.0.0.1 (which `NO_PROXY` sends to the proxy) is
/// refused with Maven's words, and 127.0.0.1 itself (which `NO_PROXY` keeps direct) is not
/// there in the server's namespace. Neither loopback service ever sees a connection.
#[test]
fn real_programs_go_out_through_maven_and_only_to_public_addresses() {
    let (public, public_seen) = serve(PUBLIC, "public hello");
    let (proxied, proxied_seen) = serve("127.0.0.3", "the secret");
    let (direct, direct_seen) = serve("127.0.0.1", "the secret");
    let public_url = format!("http://{public}/page");
    let proxied_url = format!("http://{proxied}/secret");
    let direct_url = format!("http://{direct}/secret");
    // The venv's own python (not the interpreter its link points to, which has no httpx2).
    let python = installed(&testenv()).join(".venv/bin/python");
    let py_script = installed(&testenv().join("net_probe.py"));
    let node = installed(&testenv().join("node_modules/.bin/node"));
    let node_script = installed(&testenv().join("net_probe.mjs"));
    let testenv = installed(&testenv());
    let args = |script: &Path| {
        let mut a = vec![script.display().to_string()];
        a.extend([&public_url, &proxied_url, &direct_url].map(String::clone));
        a
    };
    let home = Home::new();
    home.write_config(
        &json!({
            "mcp_servers": {
                "py": {"command": python, "args": args(&py_script),
                    "enabled": true, "sandbox": {"read": [testenv]}},
                "js": {"command": node, "args": args(&node_script),
                    "enabled": true, "sandbox": {"read": [testenv]}}
            }
        })
        .to_string(),
    );
    let d = home.start_with_env("MAVEN_TEST_PRETEND_PUBLIC", PUBLIC);
    let py = reported(&home, "py", "NETPROBE ");
    let js = reported(&home, "js", "NETPROBE ");
    for (server, got, clients) in [
        ("py", &py, &["urllib", "httpx"][..]),
        ("js", &js, &["fetch"]),
    ] {
        for client in clients {
            let at = |url: &str| {
                got[format!("{client} {url}")]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            };
            assert_eq!(
                at(&public_url),
                "200 public hello",
                "{server} {client}: {got}"
            );
            let refused = at(&proxied_url);
            assert!(
                refused.starts_with("403 ") || client == &"fetch",
                "{server} {client}: {got}"
            );
            assert!(!refused.starts_with("200"), "{server} {client}: {got}");
            assert!(
                at(&direct_url).starts_with("error "),
                "{server} {client}: {got}"
            );
        }
    }
    // Python's clients read the refusal's body: Maven's words.
    for client in ["urllib", "httpx"] {
        let refused = py[format!("{client} {proxied_url}")]
            .as_str()
            .unwrap_or_default();
        assert!(refused.contains("public addresses only"), "{client}: {py}");
    }
    assert!(public_seen.load(Ordering::SeqCst) >= 3);
    assert_eq!(
        proxied_seen.load(Ordering::SeqCst),
        0,
        "a loopback service was reached"
    );
    assert_eq!(
        direct_seen.load(Ordering::SeqCst),
        0,
        "a loopback service was reached"
    );
    let v = home.json(&["mcp", "status", "--json"]);
    let net = &by_name(&v, "py")["network"];
    assert!(net["connections"].as_u64().unwrap() >= 4, "{net}");
    assert!(net["refused"].as_u64().unwrap() >= 2, "{net}");
    assert!(net["bytes_in"].as_u64().unwrap() > 0, "{net}");
    assert!(
        by_name(&v, "py")["trust"]
            .as_str()
            .unwrap()
            .contains("network through Maven: public addresses only, memory"),
        "{v}"
    );
    // Each connection is in the log: the server, where, the bytes, the outcome.
    let log = crate::support::stderr(&d.signal("-TERM"));
    let refused = format!(
        "network: connection refused server=py host=127.0.0.3 port={}",
        proxied.port()
    );
    assert!(log.contains(&refused), "{log}");
    assert!(
        log.contains("sandboxed servers reach public addresses only"),
        "{log}"
    );
    let closed = format!(
        "network: connection closed server=py host={PUBLIC} port={}",
        public.port()
    );
    assert!(log.contains(&closed), "{log}");
}

/// From inside: a granted endpoint is reached at its own address and port, and nothing else
/// on loopback is (another port, the host's services); UDP and sock_diag are refused; the
/// host's abstract sockets are not there, and one the server binds is not the host's; the
/// proxy's environment is set and the door's token is not in it; a public host outside its
/// `hosts` is refused by the proxy, naming the key.
#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test's own canary, not a door of Maven's"
)]
fn a_proxied_server_reaches_a_granted_endpoint_and_nothing_else_local() {
    let (public, public_seen) = serve(PUBLIC, "public hello");
    let (granted, granted_seen) = serve("127.0.0.1", "granted db");
    let (other, other_seen) = serve("127.0.0.1", "other db");
    #[expect(clippy::disallowed_methods, reason = "the test's own loopback canary")]
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let host_name = format!("maven-test-host-{}", std::process::id());
    let inside_name = format!("maven-test-inside-{}", std::process::id());
    let host_abstract = {
        use std::os::linux::net::SocketAddrExt as _;
        let a = std::os::unix::net::SocketAddr::from_abstract_name(host_name.as_bytes()).unwrap();
        std::os::unix::net::UnixListener::bind_addr(&a).unwrap()
    };
    host_abstract.set_nonblocking(true).unwrap();
    let spec = json!({
        "connect_tcp": [granted.to_string(), other.to_string()],
        "udp": udp.local_addr().unwrap().port(),
        "sock_diag": true,
        "abstract_connect": host_name,
        "abstract_bind": inside_name,
        "proxy_env": true,
        "proxy_get": format!("http://{public}/page"),
    });
    let home = Home::new();
    home.write_config(
        &json!({
            "mcp_servers": {"probe": {"command": testkit_mcp(),
                "args": ["--attacks", spec.to_string()], "enabled": true,
                "sandbox": {"connect": [granted.to_string()], "hosts": ["example.org"]}}}
        })
        .to_string(),
    );
    let _d = home.start_with_env("MAVEN_TEST_PRETEND_PUBLIC", PUBLIC);
    let got = reported(&home, "probe", "ATTACKS ");
    let tcp = &got["connect_tcp"];
    assert_eq!(tcp[granted.to_string()], "ok", "{got}");
    assert_eq!(tcp[other.to_string()], "ECONNREFUSED", "{got}");
    assert_eq!(got["udp"], "EACCES", "{got}");
    assert_eq!(got["sock_diag"], "EACCES", "{got}");
    assert_ne!(got["abstract_connect"], "ok", "{got}");
    assert_eq!(got["abstract_bind"], "ok", "{got}");
    let env = &got["proxy_env"];
    assert_eq!(env["HTTPS_PROXY"], "http://127.0.0.1:3128", "{got}");
    assert_eq!(env["NODE_USE_ENV_PROXY"], "1", "{got}");
    assert_eq!(env["NO_PROXY"], "localhost,127.0.0.1,::1", "{got}");
    assert_eq!(env["MAVEN_SANDBOX_DOOR"], false, "{got}");
    let get = &got["proxy_get"];
    assert!(
        get["status"].as_str().unwrap_or_default().contains(" 403 "),
        "{got}"
    );
    assert!(
        get["body"]
            .as_str()
            .unwrap_or_default()
            .contains("is not in sandbox.hosts"),
        "{got}"
    );
    assert_eq!(public_seen.load(Ordering::SeqCst), 0);
    // The host saw nothing but the granted connection.
    eventually("the granted endpoint to be reached", || {
        (granted_seen.load(Ordering::SeqCst) >= 1).then_some(())
    });
    assert_eq!(other_seen.load(Ordering::SeqCst), 0);
    let mut b = [0u8; 16];
    assert!(udp.recv(&mut b).is_err(), "a datagram reached the host");
    assert!(
        host_abstract.accept().is_err(),
        "the host's abstract socket was reached"
    );
    {
        use std::os::linux::net::SocketAddrExt as _;
        let a = std::os::unix::net::SocketAddr::from_abstract_name(inside_name.as_bytes()).unwrap();
        assert!(
            std::os::unix::net::UnixStream::connect_addr(&a).is_err(),
            "the server's abstract socket is the host's"
        );
    }
    let v = home.json(&["mcp", "status", "--json"]);
    let probe = by_name(&v, "probe");
    assert!(
        probe["trust"].as_str().unwrap().contains(&format!(
            "network through Maven: public addresses of example.org only; {granted} granted"
        )),
        "{probe}"
    );
}

/// `"network": "direct"` keeps this machine's network (the page's port denied) and says so.
#[test]
fn the_direct_mode_says_it_reaches_this_machine() {
    let (service, seen) = serve("127.0.0.1", "local service");
    let spec = json!({"connect_tcp": [service.to_string()], "proxy_env": true});
    let home = Home::new();
    home.write_config(
        &json!({
            "mcp_servers": {"direct": {"command": testkit_mcp(),
                "args": ["--attacks", spec.to_string()], "enabled": true,
                "sandbox": {"network": "direct"}}}
        })
        .to_string(),
    );
    let _d = home.start();
    let got = reported(&home, "direct", "ATTACKS ");
    assert_eq!(got["connect_tcp"][service.to_string()], "ok", "{got}");
    assert_eq!(got["proxy_env"]["HTTPS_PROXY"], Value::Null, "{got}");
    assert!(seen.load(Ordering::SeqCst) >= 1);
    let v = home.json(&["mcp", "status", "--json"]);
    let d = by_name(&v, "direct");
    assert!(
        d["trust"]
            .as_str()
            .unwrap()
            .contains("reaches every address of this machine and beyond but the page"),
        "{d}"
    );
    assert_eq!(d["network"], Value::Null, "{d}");
}

/// A `connect` entry that names a host, and `hosts` beside `"network": false`, are refused by
/// `maven config check`, naming the field.
#[test]
fn config_check_names_a_bad_network_grant() {
    let home = Home::new();
    home.write_config(
        &json!({
            "mcp_servers": {
                "a": {"command": "/bin/true", "sandbox": {"connect": ["db.lan:5432"]}},
                "b": {"command": "/bin/true", "sandbox": {"network": false, "hosts": ["example.org"]}},
                "c": {"command": "/bin/true", "sandbox": {"network": "yes"}}
            }
        })
        .to_string(),
    );
    let out = home.run(&["config", "check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("mcp_servers.a.sandbox.connect[0]")
            && err.contains("names are not resolved for connect"),
        "{err}"
    );
    assert!(err.contains("mcp_servers.b.sandbox.hosts"), "{err}");
    assert!(
        err.contains("mcp_servers.c.sandbox.network: expected true, false or \"direct\""),
        "{err}"
    );
}

/// The door is a Unix socket of the owner's: what comes to it is checked before anything is
/// served — garbage and a hand-over without descriptors are refused with a reason, and the
/// daemon goes on serving the servers it admitted.
#[test]
fn the_door_refuses_what_no_launcher_of_its_own_sends() {
    use std::os::unix::fs::PermissionsExt as _;
    let spec = json!({"proxy_env": true});
    let home = Home::new();
    home.write_config(
        &json!({
            "mcp_servers": {"probe": {"command": testkit_mcp(),
                "args": ["--attacks", spec.to_string()], "enabled": true}}
        })
        .to_string(),
    );
    let _d = home.start();
    let door = home.data().join("door.sock");
    let mode = std::fs::metadata(&door).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the door is its owner's alone");
    for sent in [
        &b"garbage\n"[..],
        br#"{"token": "0000", "listeners": ["proxy"]}
"#,
    ] {
        let mut s = std::os::unix::net::UnixStream::connect(&door).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        s.write_all(sent).unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        assert!(answer.starts_with("refused: "), "{answer:?}");
    }
    let got = reported(&home, "probe", "ATTACKS ");
    assert_eq!(
        got["proxy_env"]["HTTPS_PROXY"], "http://127.0.0.1:3128",
        "{got}"
    );
}

/// `maven mcp inspect` starts a server whose network goes through Maven with a door of its
/// own (no daemon needed), lists its tools, and leaves no socket behind.
#[test]
fn inspect_serves_a_door_of_its_own() {
    let spec = json!({"proxy_env": true});
    let home = Home::new();
    home.write_config(
        &json!({
            "mcp_servers": {"probe": {"command": testkit_mcp(),
                "args": ["--attacks", spec.to_string()]}}
        })
        .to_string(),
    );
    let out = home.run(&["mcp", "inspect", "probe", "--json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(!v["tools"].as_array().unwrap().is_empty(), "{v}");
    assert!(
        v["sandbox"]["trust"]
            .as_str()
            .unwrap()
            .contains("network through Maven: public addresses only"),
        "{v}"
    );
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("maven-inspect-") && n.ends_with(".sock")
        })
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The proxy's refusals are in `mcp status` and its `--json`: host, port, when, and why (the
/// words the server got, which name the address), not only in the log.
#[test]
fn the_proxys_last_refusals_are_in_mcp_status() {
    let (proxied, proxied_seen) = serve("127.0.0.3", "the secret");
    let url = format!("http://{proxied}/secret");
    let python = installed(&testenv()).join(".venv/bin/python");
    let script = installed(&testenv().join("net_probe.py"));
    let testenv = installed(&testenv());
    let home = Home::new();
    home.write_config(
        &json!({"mcp_servers": {"py": {"command": python, "args": [script, url],
            "enabled": true, "sandbox": {"read": [testenv]}}}})
        .to_string(),
    );
    let _d = home.start();
    reported(&home, "py", "NETPROBE ");
    let net = eventually("the refusals counted", || {
        let v = home.json(&["mcp", "status", "--json"]);
        let n = by_name(&v, "py")["network"].clone();
        (n["refused"].as_u64() >= Some(1)).then_some(n)
    });
    let last = net["last_refused"].as_array().unwrap();
    assert!(!last.is_empty() && last.len() <= 5, "{net}");
    assert_eq!(last.len() as u64, net["refused"].as_u64().unwrap().min(5));
    let first = &last[0];
    assert_eq!(first["host"], "127.0.0.3");
    assert_eq!(first["port"], proxied.port());
    assert!(first["at"].as_str().unwrap().ends_with('Z'), "{first}");
    let why = first["why"].as_str().unwrap();
    assert!(why.contains("public addresses only"), "{why}");
    assert_eq!(proxied_seen.load(Ordering::SeqCst), 0);

    let text = String::from_utf8(home.run(&["mcp", "status"]).stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("  network:  "))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        lines[at],
        format!(
            "  network:  {} connections through Maven, {} refused; the last:",
            net["connections"], net["refused"]
        )
    );
    assert!(
        lines[at + 1].starts_with("            ")
            && lines[at + 1].contains(&format!(" 127.0.0.3:{} — ", proxied.port()))
            && lines[at + 1].contains("public addresses only"),
        "{text}"
    );
}
