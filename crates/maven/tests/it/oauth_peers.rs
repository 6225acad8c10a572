//! OAuth through the real daemon and the page against authorization and resource servers
//! written by others, installed by `scripts/install-test-peers.sh` into `testenv/`: panva's
//! `oidc-provider` (OpenID Certified; its defaults: DPoP on, refresh tokens only for
//! `offline_access` with `prompt=consent`, rotation with reuse detection;
//! `testenv/oidc_provider.mjs`) as the authorization server, and MCP servers whose auth is their
//! SDK's resource-server auth as it ships, Bearer only: the official Python SDK's
//! (`testenv/python_auth_server.py`, 2025-11-25) and the TypeScript SDK 2.x's
//! (`testenv/ts_auth_server.mjs`, 2026-07-28); and a plain OAuth 2.1 server, the Python SDK's
//! own authorization server handlers (`testenv/python_as_server.py`); and Cloudflare's
//! `workers-oauth-provider` under workerd through Miniflare, an MCP endpoint behind it on one
//! origin (`testenv/cloudflare_worker.mjs`). Dynamic registration (public and confidential)
//! and a pre-registered confidential client, refresh with rotation, logout with revocation;
//! the `client_credentials` grant with a secret and with a private key.
//!
//! A missing peer is a failure naming the install script, never a silent pass.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{by_name, eventually, free_port, stderr, Home};
use crate::web::{get as page_get, http, passphrase_hash, post, signed_in, PASSPHRASE};

fn testenv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testenv")
}

fn installed(p: PathBuf) -> PathBuf {
    assert!(
        p.exists(),
        "test peer missing: {} does not exist; run scripts/install-test-peers.sh",
        p.display()
    );
    p
}

/// A peer process, killed when dropped; its stderr lines are kept.
struct Peer {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    url: String,
}

impl Peer {
    /// Starts `program args…` and waits (60 s at most) for the stderr line starting with
    /// `marker`; the rest of that line is the peer's URL.
    fn start(program: &Path, args: &[&str], marker: &str) -> Peer {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e}", program.display()));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let err = child.stderr.take().unwrap();
        let kept = lines.clone();
        let marker = marker.to_owned();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix(&marker) {
                    let _ = tx.send(url.trim().to_owned());
                }
                kept.lock().unwrap().push(line);
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                panic!(
                    "{} {args:?} did not start; stderr:\n{}",
                    program.display(),
                    lines.lock().unwrap().join("\n")
                )
            });
        Peer { child, lines, url }
    }

    fn count(&self, prefix: &str) -> usize {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with(prefix))
            .count()
    }

    fn said(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }
}

impl Drop for Peer {
    /// SIGTERM first, so a peer with children of its own ends them (Miniflare its workerd),
    /// then SIGKILL after 5 s.
    #[expect(
        clippy::disallowed_methods,
        reason = "a test's peer is given real seconds to end"
    )]
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The OpenID provider, its access tokens living `ttl` seconds.
fn openid_provider(ttl: u64) -> Peer {
    openid_provider_with(ttl, None)
}

/// The OpenID provider, with the machine client `maven-m2m-jwt` of this public JWK when given.
fn openid_provider_with(ttl: u64, m2m_jwk: Option<&str>) -> Peer {
    let env = testenv();
    let node = installed(env.join("node_modules/.bin/node"));
    installed(env.join("node_modules/oidc-provider/lib/index.js"));
    let script = env.join("oidc_provider.mjs");
    let ttl = ttl.to_string();
    let mut args = vec![script.to_str().unwrap(), "0", ttl.as_str()];
    args.extend(m2m_jwk);
    Peer::start(&node, &args, "OIDC_PROVIDER_LISTENING ")
}

/// An MCP server on the Python SDK, protected by its resource-server auth, trusting `issuer`.
fn python_resource_server(issuer: &str) -> Peer {
    let env = testenv();
    let python = installed(env.join(".venv/bin/python"));
    let script = env.join("python_auth_server.py");
    Peer::start(
        &python,
        &[script.to_str().unwrap(), issuer, "0"],
        "MCP_PEER_LISTENING ",
    )
}

/// An MCP server on the TypeScript SDK 2.x, protected by its resource-server auth, trusting
/// `issuer`.
fn ts_resource_server(issuer: &str) -> Peer {
    let env = testenv();
    let node = installed(env.join("node_modules/.bin/node"));
    installed(env.join("node_modules/@modelcontextprotocol/server/dist/index.mjs"));
    installed(env.join("node_modules/jose/package.json"));
    let script = env.join("ts_auth_server.mjs");
    Peer::start(
        &node,
        &[script.to_str().unwrap(), issuer],
        "MCP_PEER_LISTENING ",
    )
}

/// A browser on this machine: follows redirects (keeping cookies, whatever their path) until
/// one leads to `stop` (the page's callback), and returns that URL. Nothing but loopback.
fn browse(start: &str, stop: &str) -> String {
    let mut jar: BTreeMap<String, String> = BTreeMap::new();
    let mut url = url::Url::parse(start).unwrap();
    for _ in 0..20 {
        if url.as_str().starts_with(stop) {
            return url.to_string();
        }
        assert_eq!(url.host_str(), Some("127.0.0.1"), "{url}");
        let port = url.port().unwrap();
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        let cookies: Vec<String> = jar.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let (status, head, body) = http(
            port,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {}\r\nConnection: close\r\n\r\n",
                cookies.join("; ")
            ),
        );
        let mut location = None;
        for l in head.lines() {
            let Some((name, value)) = l.split_once(':') else {
                continue;
            };
            match name.to_ascii_lowercase().as_str() {
                "set-cookie" => {
                    let pair = value.trim().split(';').next().unwrap_or("");
                    if let Some((k, v)) = pair.split_once('=') {
                        jar.insert(k.to_owned(), v.to_owned());
                    }
                }
                "location" => location = Some(value.trim().to_owned()),
                _ => {}
            }
        }
        assert!(
            (300..400).contains(&status),
            "HTTP {status} at {url}: {body}"
        );
        url = url.join(&location.unwrap()).unwrap();
    }
    panic!("too many redirects, last {url}")
}

struct Page {
    port: u16,
    cookie: String,
    csrf: String,
}

/// A page session with a fresh passphrase step-up (its port from a login link).
fn page(home: &Home, name: &str) -> Page {
    let out = home.run(&["mcp", "login", name]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let link = text.lines().find(|l| l.starts_with("http://")).unwrap();
    let port: u16 = link
        .strip_prefix("http://localhost:")
        .and_then(|r| r.split_once('/'))
        .and_then(|(p, _)| p.parse().ok())
        .unwrap();
    let (cookie, csrf) = signed_in(port);
    Page { port, cookie, csrf }
}

/// Connect on the card, through the provider (login and consent answered by it), back to the
/// page's callback; returns the callback page.
fn connect(p: &Page, name: &str) -> String {
    let (status, _, body) = post(
        p.port,
        &format!("/api/mcp_servers/{name}/connect"),
        &p.cookie,
        &p.csrf,
        &json!({}),
    );
    assert_eq!(status, 200, "{body}");
    let redirect = serde_json::from_str::<Value>(&body).unwrap()["redirect"]
        .as_str()
        .unwrap()
        .to_owned();
    let stop = format!("http://127.0.0.1:{}/oauth/callback", p.port);
    let callback = browse(&redirect, &stop);
    let path = callback
        .strip_prefix(&format!("http://127.0.0.1:{}", p.port))
        .unwrap()
        .to_owned();
    let (status, _, body) = page_get(p.port, &path, &format!("127.0.0.1:{}", p.port), "");
    assert_eq!(status, 200, "{body}");
    body
}

/// Waits for `server`'s `whoami` tool to be proposed, then enables it through the page.
fn enable_whoami(home: &Home, p: &Page, server: &str) {
    let tool = format!("{server}_whoami");
    eventually(&format!("{tool} proposed"), || {
        let t = home.json(&["tools", "--json"]);
        t.as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == tool.as_str())
            .then_some(())
    });
    let (status, _, body) = post(
        p.port,
        &format!("/api/tools/{tool}/enable"),
        &p.cookie,
        &p.csrf,
        &json!({}),
    );
    assert_eq!(status, 200, "{body}");
}

/// Waits until `server` is ready; returns that status.
fn ready(home: &Home, server: &str) -> Value {
    eventually(&format!("{server} ready"), || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, server)["state"] == "ready").then_some(st)
    })
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn an_openid_certified_provider_and_the_python_sdk_resource_server_through_the_daemon() {
    // 8 s access tokens: each is refreshed in its last 4 s.
    let op = openid_provider(8);
    let issuer = op.url.clone();
    let dynamic = python_resource_server(&issuer);
    let pre = python_resource_server(&issuer);
    let ts = ts_resource_server(&issuer);
    let out = passphrase_hash(&format!("{PASSPHRASE}\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    let hash = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let home = Home::new();
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0", "passphrase_hash": hash},
            "mcp_servers": {
                "py": {"url": dynamic.url, "allow_private": true, "enabled": true},
                "ts": {"url": ts.url, "allow_private": true, "enabled": true},
                "strict": {"url": pre.url, "allow_private": true, "enabled": true, "oauth": {"dpop": "required"}},
                "pre": {
                    "url": pre.url, "allow_private": true, "enabled": true,
                    "oauth": {"client_id": "maven-pre", "client_secret": "${MAVEN_TEST_PRE_SECRET}"}
                }
            }
        })
        .to_string(),
    );
    let _d = home.start_with_env("MAVEN_TEST_PRE_SECRET", "maven-pre-secret");
    eventually("both need authorization", || {
        let st = home.json(&["mcp", "status", "--json"]);
        ["py", "pre", "ts", "strict"]
            .iter()
            .all(|n| by_name(&st, n)["state"] == "needs_authorization")
            .then_some(())
    });
    let p = page(&home, "py");

    // Dynamic registration; the provider is an OpenID provider, so offline_access is asked
    // with prompt=consent, and a refresh token comes. Its DPoP is not used: the Python SDK's
    // resource server reads only Bearer.
    let body = connect(&p, "py");
    assert!(
        body.contains(&format!("py: authorized by {issuer}")),
        "{body}"
    );
    assert_eq!(
        op.count("EVENT registration_create.success"),
        1,
        "{}",
        op.said()
    );
    assert!(
        op.said()
            .contains("EVENT authorization.success prompt=consent scope=mcp offline_access"),
        "{}",
        op.said()
    );
    let st = ready(&home, "py");
    let auth = &by_name(&st, "py")["auth"];
    assert_eq!(auth["issuer"], issuer.as_str(), "{auth}");
    let terms = auth["terms"].as_str().unwrap();
    // The token's scope is the resource's (`offline_access` is the grant's).
    assert!(terms.starts_with("scopes: mcp;"), "{auth}");
    assert!(terms.ends_with("refresh yes"), "{auth}");

    // A call through it; then, after the token was due, the daemon's refresh (rotated by the
    // provider) and another call.
    enable_whoami(&home, &p, "py");
    let said = home.say_confirming("py whoami");
    assert!(said.contains("the owner"), "{said}");
    let started = Instant::now();
    std::thread::sleep(Duration::from_millis(4500));
    let said = home.say_confirming("py whoami");
    assert!(said.contains("the owner"), "{said}");
    assert!(
        op.count("EVENT grant.success refresh_token") >= 1,
        "refreshed: {}",
        op.said()
    );
    assert_eq!(op.count("EVENT grant.error"), 0, "{}", op.said());
    assert!(started.elapsed() < Duration::from_secs(30));
    // inspect next to the daemon asks it, and never touches the provider's grant.
    let grants = op.count("EVENT grant.");
    // (inspect loads the whole configuration, so this shell needs the variable.)
    let out = home
        .command_for(&["mcp", "inspect", "py", "--json"])
        .env("MAVEN_TEST_PRE_SECRET", "unused")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["auth"]["state"], "authorized", "{v}");
    assert_eq!(v["auth"]["issuer"], issuer.as_str(), "{v}");
    assert_eq!(op.count("EVENT grant."), grants, "{}", op.said());

    // The pre-registered confidential client: no registration, its secret only in the
    // daemon's environment.
    let body = connect(&p, "pre");
    assert!(
        body.contains(&format!("pre: authorized by {issuer}")),
        "{body}"
    );
    assert_eq!(
        op.count("EVENT registration_create.success"),
        1,
        "no second registration"
    );
    ready(&home, "pre");

    // The TypeScript SDK 2.x's resource server (2026-07-28), dynamically registered too.
    let body = connect(&p, "ts");
    assert!(
        body.contains(&format!("ts: authorized by {issuer}")),
        "{body}"
    );
    assert_eq!(
        op.count("EVENT registration_create.success"),
        2,
        "{}",
        op.said()
    );
    let st = ready(&home, "ts");
    assert_eq!(by_name(&st, "ts")["protocol_version"], "2026-07-28", "{st}");
    enable_whoami(&home, &p, "ts");
    let said = home.say_confirming("ts whoami");
    assert!(said.contains("the owner"), "{said} {}", ts.said());

    // oauth.dpop "required" for a server that reads only Bearer: refused before anything is
    // shown, naming the end that cannot.
    let (status, _, body) = post(
        p.port,
        "/api/mcp_servers/strict/connect",
        &p.cookie,
        &p.csrf,
        &json!({}),
    );
    assert_eq!(status, 502, "{body}");
    assert!(
        body.contains(&format!(
            "oauth.dpop is \\\"required\\\", but the MCP server {} does not say it takes DPoP-bound tokens",
            pre.url
        )),
        "{body}"
    );

    // Logout revokes at the provider and the server asks again.
    let out = home.run(&["mcp", "logout", "py"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Revoking the refresh token revokes the grant at the provider.
    assert_eq!(op.count("EVENT grant.revoked"), 1, "{}", op.said());
    // Its JWT access token is not revocable (RFC 7009 `unsupported_token_type`), and need not
    // be: the grant is gone.
    eventually("py needs authorization again", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "py")["state"] == "needs_authorization").then_some(())
    });
}

/// A plain OAuth 2.1 authorization server (no OpenID): the Python SDK's own authorization
/// server handlers, with an in-memory provider, on the MCP server they protect.
fn python_authorization_server(ttl: u64) -> Peer {
    let env = testenv();
    let python = installed(env.join(".venv/bin/python"));
    let script = env.join("python_as_server.py");
    Peer::start(
        &python,
        &[script.to_str().unwrap(), "0", &ttl.to_string()],
        "MCP_PEER_LISTENING ",
    )
}

#[test]
fn a_plain_oauth_server_the_python_sdk_s_own_through_the_daemon() {
    let server = python_authorization_server(8);
    let issuer = server.url.trim_end_matches("/mcp").to_owned();
    let out = passphrase_hash(&format!("{PASSPHRASE}\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    let hash = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let home = Home::new();
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0", "passphrase_hash": hash},
            "mcp_servers": {"plain": {"url": server.url, "allow_private": true, "enabled": true}}
        })
        .to_string(),
    );
    let _d = home.start();
    eventually("needs authorization", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "plain")["state"] == "needs_authorization").then_some(())
    });
    let p = page(&home, "plain");
    // Dynamic registration (a confidential client: the server takes no public one); no
    // OpenID, so no prompt=consent and no offline_access.
    let body = connect(&p, "plain");
    assert!(
        body.contains(&format!("plain: authorized by {issuer}")),
        "{body}"
    );
    assert_eq!(server.count("EVENT register"), 1, "{}", server.said());
    assert_eq!(
        server.count("EVENT authorize scope=mcp"),
        1,
        "{}",
        server.said()
    );
    let st = ready(&home, "plain");
    let auth = &by_name(&st, "plain")["auth"];
    assert_eq!(auth["issuer"], issuer.as_str(), "{auth}");
    let terms = auth["terms"].as_str().unwrap();
    assert!(
        terms.starts_with("scopes: mcp;") && terms.ends_with("refresh yes"),
        "{auth}"
    );
    enable_whoami(&home, &p, "plain");
    let said = home.say_confirming("plain whoami");
    assert!(said.contains("the owner"), "{said}");
    // Due after 4 s: refreshed (rotated) by the daemon, and the call still works.
    std::thread::sleep(Duration::from_millis(4500));
    let said = home.say_confirming("plain whoami");
    assert!(said.contains("the owner"), "{said}");
    assert!(
        server.count("EVENT grant refresh_token") >= 1,
        "{}",
        server.said()
    );
    let out = home.run(&["mcp", "logout", "plain"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(server.count("EVENT revoke") >= 1, "{}", server.said());
    eventually("needs authorization again", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "plain")["state"] == "needs_authorization").then_some(())
    });
}

/// An ES256 key pair made by testenv's node: the private key as PKCS#8 PEM, the public one as
/// a JWK.
fn es256_key_pair() -> (String, String) {
    let node = installed(testenv().join("node_modules/.bin/node"));
    let out = Command::new(node)
        .args([
            "-e",
            "const c = require('crypto'); \
             const { privateKey, publicKey } = c.generateKeyPairSync('ec', { namedCurve: 'P-256' }); \
             process.stdout.write(JSON.stringify({ \
               pem: privateKey.export({ type: 'pkcs8', format: 'pem' }), \
               jwk: { ...publicKey.export({ format: 'jwk' }), kid: 'm2m-1', alg: 'ES256', use: 'sig' } }));",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (v["pem"].as_str().unwrap().to_owned(), v["jwk"].to_string())
}

/// The client_credentials grant against the OpenID provider, through the daemon and with no
/// person: one client with its secret (Basic), one with a private_key_jwt assertion signed by
/// its key file. Both connect by themselves, say their grant in status, and make the grant
/// again when the token (8 s, no refresh token) expired; no secret, assertion or token is
/// logged.
#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn the_client_credentials_grant_with_a_secret_and_with_a_key_through_the_daemon() {
    let (pem, jwk) = es256_key_pair();
    let op = openid_provider_with(8, Some(&jwk));
    let issuer = op.url.clone();
    let basic = python_resource_server(&issuer);
    let keyed = ts_resource_server(&issuer);
    let out = passphrase_hash(&format!("{PASSPHRASE}\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    let hash = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let home = Home::new();
    let key_file = home.dir.path().join("m2m-key.pem");
    std::fs::write(&key_file, &pem).unwrap();
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0", "passphrase_hash": hash},
            "mcp_servers": {
                "basic": {
                    "url": basic.url, "allow_private": true, "enabled": true,
                    "oauth": {
                        "grant": "client_credentials", "client_id": "maven-m2m",
                        "client_secret": "${MAVEN_TEST_M2M_SECRET}"
                    }
                },
                "keyed": {
                    "url": keyed.url, "allow_private": true, "enabled": true,
                    "oauth": {
                        "grant": "client_credentials", "client_id": "maven-m2m-jwt",
                        "private_key_file": key_file.to_str().unwrap(), "key_id": "m2m-1"
                    }
                }
            }
        })
        .to_string(),
    );
    let d = home.start_with_env("MAVEN_TEST_M2M_SECRET", "maven-m2m-secret");
    // No one authorizes: both are ready, by their grant.
    let st = ready(&home, "basic");
    let auth = auth_words(&by_name(&st, "basic")["auth"]);
    assert!(
        auth.starts_with(&format!(
            "authorized by {issuer} (grant client_credentials; scopes: mcp;"
        )),
        "{auth}"
    );
    assert!(
        auth.ends_with("no refresh token: the grant is made again when it expires)"),
        "{auth}"
    );
    let st = ready(&home, "keyed");
    let auth = auth_words(&by_name(&st, "keyed")["auth"]);
    assert!(
        auth.starts_with(&format!(
            "authorized by {issuer} (grant client_credentials; scopes: mcp;"
        )),
        "{auth}"
    );
    assert_eq!(
        op.count("EVENT grant.success client_credentials"),
        2,
        "{}",
        op.said()
    );
    assert_eq!(op.count("EVENT grant.error"), 0, "{}", op.said());
    assert_eq!(op.count("EVENT registration_create"), 0, "pre-registered");
    // inspect next to the daemon says the grant too, and makes none.
    let out = home
        .command_for(&["mcp", "inspect", "keyed", "--json"])
        .env("MAVEN_TEST_M2M_SECRET", "unused")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["auth"]["state"], "authorized", "{v}");
    assert_eq!(v["auth"]["grant"], "client_credentials", "{v}");
    assert_eq!(op.count("EVENT grant.success client_credentials"), 2);

    // A call through each; after the 8 s tokens expired, the grant is made again by the call
    // that met the refusal, and the call goes through.
    let p = page(&home, "basic");
    enable_whoami(&home, &p, "basic");
    enable_whoami(&home, &p, "keyed");
    let said = home.say_confirming("basic whoami");
    assert!(said.contains("the owner"), "{said}");
    let said = home.say_confirming("keyed whoami");
    assert!(said.contains("the owner"), "{said} {}", keyed.said());
    let started = Instant::now();
    std::thread::sleep(Duration::from_millis(8500));
    let said = home.say_confirming("basic whoami");
    assert!(said.contains("the owner"), "{said}");
    let said = home.say_confirming("keyed whoami");
    assert!(said.contains("the owner"), "{said}");
    assert!(
        op.count("EVENT grant.success client_credentials") >= 4,
        "made again: {}",
        op.said()
    );
    assert_eq!(op.count("EVENT grant.error"), 0, "{}", op.said());
    assert!(started.elapsed() < Duration::from_secs(40));

    let log = stderr(&d.signal("-TERM"));
    for secret in ["maven-m2m-secret", "eyJ", "PRIVATE KEY"] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
    }
}

/// Cloudflare's workers-oauth-provider (the authorization server library behind most remote
/// MCP servers deployed on Cloudflare) under workerd through Miniflare, offline, with the MCP
/// endpoint behind it: on one origin (`testenv/cloudflare_worker.mjs`), or `split` on two
/// (`cloudflare_as_worker.mjs`, `cloudflare_rs_worker.mjs`); its pre-registered confidential
/// client made for the page's callback at `redirect_uri`. The peer, its issuer, and that
/// client's id and secret.
fn cloudflare_provider(redirect_uri: &str, split: bool) -> (Peer, String, String, String) {
    let env = testenv();
    let node = installed(env.join("node_modules/.bin/node"));
    installed(env.join("node_modules/miniflare/dist/src/index.js"));
    installed(env.join("node_modules/@cloudflare/workers-oauth-provider/dist/oauth-provider.js"));
    let script = env.join("cloudflare_peer.mjs");
    let mut args = vec![script.to_str().unwrap(), redirect_uri];
    if split {
        args.push("split");
    }
    let peer = Peer::start(&node, &args, "CLOUDFLARE_PEER_LISTENING ");
    let said = peer.said();
    let line = |prefix: &str| {
        said.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix}: {said}"))
            .to_owned()
    };
    let client = line("CLOUDFLARE_CLIENT ");
    let issuer = line("CLOUDFLARE_ISSUER ");
    let (id, secret) = client.split_once(' ').unwrap();
    (peer, issuer, id.to_owned(), secret.to_owned())
}

/// Waits (the provider's lines come through workerd and Miniflare) until `peer` said `n`
/// lines starting with `prefix`, and never more.
fn seen(peer: &Peer, prefix: &str, n: usize) {
    eventually(&format!("{n} × {prefix}"), || {
        (peer.count(prefix) >= n).then_some(())
    });
    assert_eq!(peer.count(prefix), n, "{prefix}: {}", peer.said());
}

#[test]
fn cloudflare_s_workers_oauth_provider_through_the_daemon() {
    cloudflare_through_the_daemon(false);
}

#[test]
fn cloudflare_s_split_authorization_and_resource_servers_through_the_daemon() {
    cloudflare_through_the_daemon(true);
}

/// The daemon against Cloudflare's provider (plain OAuth 2.1, RFC 8414 metadata, 60 s tokens
/// at least, refusing a client that authenticates two ways at once), on one origin or `split`:
/// dynamic registration and a pre-registered confidential client (Basic alone) authorized
/// through the page, calls, the refresh of a due token (rotated), and logout revoking at the
/// token endpoint.
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn cloudflare_through_the_daemon(split: bool) {
    let port = free_port();
    let (cf, issuer, client_id, client_secret) =
        cloudflare_provider(&format!("http://127.0.0.1:{port}/oauth/callback"), split);
    assert_eq!(
        cf.url.starts_with(&format!("{issuer}/")),
        !split,
        "{issuer} {}",
        cf.url
    );
    let out = passphrase_hash(&format!("{PASSPHRASE}\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    let hash = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let home = Home::new();
    home.write_config(
        &json!({
            "web": {"listen": format!("127.0.0.1:{port}"), "passphrase_hash": hash},
            "mcp_servers": {
                "cf": {"url": cf.url, "allow_private": true, "enabled": true},
                "cfpre": {
                    "url": cf.url, "allow_private": true, "enabled": true,
                    "oauth": {"client_id": client_id, "client_secret": "${MAVEN_TEST_CF_SECRET}"}
                }
            }
        })
        .to_string(),
    );
    let _d = home.start_with_env("MAVEN_TEST_CF_SECRET", &client_secret);
    eventually("both need authorization", || {
        let st = home.json(&["mcp", "status", "--json"]);
        ["cf", "cfpre"]
            .iter()
            .all(|n| by_name(&st, n)["state"] == "needs_authorization")
            .then_some(())
    });
    let p = page(&home, "cf");

    // Dynamic registration (a public client: the provider takes one), then a call.
    let body = connect(&p, "cf");
    assert!(
        body.contains(&format!("cf: authorized by {issuer}")),
        "{body}"
    );
    seen(&cf, "EVENT register status=201", 1);
    seen(
        &cf,
        "EVENT token grant_type=authorization_code auth=none status=200",
        1,
    );
    let st = ready(&home, "cf");
    let auth = auth_words(&by_name(&st, "cf")["auth"]);
    assert!(
        auth.starts_with(&format!("authorized by {issuer} (")) && auth.ends_with("refresh yes)"),
        "{auth}"
    );
    enable_whoami(&home, &p, "cf");
    let said = home.say_confirming("cf whoami");
    assert!(said.contains("the owner"), "{said}");

    // The pre-registered confidential client: Basic alone, which the provider takes (it
    // refuses a client_id in the body beside it); no registration.
    let body = connect(&p, "cfpre");
    assert!(
        body.contains(&format!("cfpre: authorized by {issuer}")),
        "{body}"
    );
    seen(
        &cf,
        "EVENT token grant_type=authorization_code auth=Basic status=200",
        1,
    );
    assert_eq!(cf.count("EVENT register"), 1, "no second registration");
    ready(&home, "cfpre");

    // 60 s tokens (the provider's least): due in their last 6 s, refreshed by the next call
    // (rotated: a new refresh token each time), which goes through.
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs(55));
    let said = home.say_confirming("cf whoami");
    assert!(said.contains("the owner"), "{said}");
    seen(
        &cf,
        "EVENT token grant_type=refresh_token auth=none status=200",
        1,
    );
    assert_eq!(
        cf.count("EVENT token grant_type=refresh_token auth=none status=4"),
        0
    );
    assert!(started.elapsed() < Duration::from_secs(90));

    // Logout revokes at the token endpoint (the provider's revocation endpoint), and the
    // server asks again.
    let out = home.run(&["mcp", "logout", "cf"]);
    assert!(out.status.success(), "{}", stderr(&out));
    seen(
        &cf,
        "EVENT revoke hint=refresh_token auth=none status=200",
        1,
    );
    eventually("cf needs authorization again", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "cf")["state"] == "needs_authorization").then_some(())
    });
    assert_eq!(
        cf.count("EVENT token grant_type=refresh_token auth=none status=4"),
        0
    );
}

/// A server's authorization as the owner reads it ("authorized by ISSUER (TERMS)"), from
/// status's tagged JSON.
fn auth_words(v: &Value) -> String {
    match v["state"].as_str() {
        Some("authorized") => format!(
            "authorized by {} ({})",
            v["issuer"].as_str().unwrap_or(""),
            v["terms"].as_str().unwrap_or("")
        ),
        Some("needs_authorization") => "needs authorization".to_owned(),
        _ => v.to_string(),
    }
}
