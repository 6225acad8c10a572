//! OAuth under the real daemon, against the test kit's loopback authorization server: a server
//! that asks for authorization is parked (not dialled in a loop), `maven mcp inspect` shows the
//! discovery, `maven mcp login` prints a one-time page link, which needs a fresh step-up and
//! sends the browser (a stand-in: plain HTTP GETs that follow nothing) to the authorization
//! server, which sends it back to the page's `/oauth/callback`; the daemon dials again, its
//! tool is proposed, enabled on the page and called through the authorized server; the card
//! shows the authorization, and Disconnect forgets it.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{by_name, eventually, stderr, Home};
use crate::web::{get as page_get, passphrase_hash, post, session, signed_in, PASSPHRASE};

/// The test kit's authorization server, in a runtime of its own for the test's length.
fn authserver() -> String {
    authserver_with(testkit::authserver::Hostile::None).base
}

/// The same, hostile in one way; the handle reads what it received.
fn authserver_with(hostile: testkit::authserver::Hostile) -> testkit::authserver::AuthServer {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let s = testkit::authserver::AuthServer::start(hostile)
                .await
                .unwrap();
            tx.send(s).unwrap();
            std::future::pending::<()>().await;
        });
    });
    rx.recv().unwrap()
}

/// One GET of a loopback URL through a loopback door, following nothing: (status, Location).
fn get(url: &str) -> (u16, Option<String>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut door = webfetch::DoorConfig::new("test-browser");
        door.allow_private = true;
        let f = webfetch::Fetcher::new(door);
        let resp = f
            .send(webfetch::Request::get(url).follow_redirects(false))
            .await
            .unwrap();
        (
            resp.status().as_u16(),
            resp.header_str("location").map(str::to_owned),
        )
    })
}

/// The port and token of the page link `maven mcp login NAME` prints.
fn login_link(home: &Home, name: &str) -> (u16, String) {
    let out = home.run(&["mcp", "login", name]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let link = text
        .lines()
        .find(|l| l.starts_with("http://"))
        .unwrap_or_else(|| panic!("no link: {text}"));
    let rest = link.strip_prefix("http://localhost:").unwrap();
    let (port, token) = rest.split_once("/oauth/login#").unwrap();
    assert_eq!(token.len(), 64, "{link}");
    (port.parse().unwrap(), token.to_owned())
}

fn body_json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[test]
fn a_server_that_asks_is_parked_inspected_and_authorized_through_the_page() {
    let out = passphrase_hash(&format!("{PASSPHRASE}\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    let hash = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let home = Home::new();
    let base = authserver();
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0", "passphrase_hash": hash},
            "mcp_servers": {
                "notes": {"url": format!("{base}/mcp"), "allow_private": true, "enabled": true}
            }
        })
        .to_string(),
    );
    let _d = home.start();

    let st = eventually("needs authorization", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "notes")["state"] == "needs_authorization").then_some(st)
    });
    let notes = by_name(&st, "notes");
    assert_eq!(notes["auth"]["state"], "needs_authorization");
    assert_eq!(
        notes["last_error"],
        "needs authorization: run `maven mcp login notes`"
    );
    // Parked: not dialled again.
    std::thread::sleep(Duration::from_millis(500));
    let st = home.json(&["mcp", "status", "--json"]);
    assert_eq!(by_name(&st, "notes")["dials"], 1);

    // inspect: discovery only, exit 1, the findings on stdout.
    let out = home.run(&["mcp", "inspect", "notes", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("needs authorization: run `maven mcp login notes`"),
        "{}",
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["auth"]["state"], "needs authorization");
    assert_eq!(v["auth"]["issuer"], base.as_str());
    assert_eq!(
        v["auth"]["resource_metadata_url"],
        format!("{base}/.well-known/oauth-protected-resource/mcp")
    );
    assert_eq!(v["auth"]["registration"], "dynamic");
    assert_eq!(v["auth"]["scopes"], json!(["s0"]));

    // login: a one-time page link. The page's session (a browser on this machine).
    let (port, token) = login_link(&home, "notes");
    let host = format!("localhost:{port}");
    let (cookie, csrf) = session(port);
    let api = |path: &str, body: &Value| post(port, path, &cookie, &csrf, body);
    let (status, _, body) = page_get(port, "/oauth/login", &host, &cookie);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("id=\"oauth-login-button\""), "{body}");
    assert!(body.contains("id=\"stepup-passphrase\""), "{body}");

    // No step-up: refused, and the link is not used up by it.
    let (status, _, body) = api("/api/oauth/login", &json!({"token": token}));
    assert_eq!(status, 401, "{body}");
    assert_eq!(body_json(&body)["error"], "step_up_required");
    let (status, _, body) = api("/api/stepup/passphrase", &json!({"passphrase": PASSPHRASE}));
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = api("/api/oauth/login", &json!({"token": token}));
    assert_eq!(status, 200, "{body}");
    let v = body_json(&body);
    assert_eq!(v["issuer"], base.as_str());
    let redirect = v["redirect"].as_str().unwrap().to_owned();
    assert!(
        redirect.starts_with(&format!("{base}/authorize?")),
        "{redirect}"
    );
    assert!(
        redirect.contains("code_challenge_method=S256"),
        "{redirect}"
    );
    assert!(
        redirect.contains(&format!(
            "redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Foauth%2Fcallback"
        )),
        "{redirect}"
    );
    // The link works once.
    let (status, _, body) = api("/api/oauth/login", &json!({"token": token}));
    assert_eq!(status, 403, "{body}");
    assert_eq!(body_json(&body)["error"], "oauth_link");

    // The authorization server sends the browser back to the page's callback.
    let (status, callback) = get(&redirect);
    assert_eq!(status, 302);
    let callback = callback.unwrap();
    let prefix = format!("http://127.0.0.1:{port}/oauth/callback?");
    assert!(callback.starts_with(&prefix), "{callback}");
    let query = callback.strip_prefix(&prefix).unwrap().to_owned();
    let cb = |q: &str| {
        page_get(
            port,
            &format!("/oauth/callback?{q}"),
            &format!("127.0.0.1:{port}"),
            "",
        )
    };
    // A wrong state, then an `iss` from another issuer: each its refusal.
    let wrong: String = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| match k.as_ref() {
            "state" => format!("state={}x", v),
            _ => format!(
                "{k}={}",
                url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
            ),
        })
        .collect::<Vec<_>>()
        .join("&");
    let (status, _, body) = cb(&wrong);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("data-result=\"oauth_state\""), "{body}");
    let (status, _, body) = cb(&query);
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(&format!("notes: authorized by {base}")),
        "{body}"
    );
    assert!(
        !body.contains("access-") && !body.contains("refresh-"),
        "{body}"
    );
    // Replayed: used up.
    let (status, _, body) = cb(&query);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("data-result=\"oauth_state\""), "{body}");

    // The daemon dialled again: ready, its tool proposed.
    let st = eventually("authorized and ready", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "notes")["state"] == "ready").then_some(st)
    });
    let auth = &by_name(&st, "notes")["auth"];
    assert_eq!(auth["state"], "authorized", "{auth}");
    assert_eq!(auth["issuer"], base.as_str(), "{auth}");
    let terms = auth["terms"].as_str().unwrap();
    assert!(terms.starts_with("scopes: s0 offline_access;"), "{auth}");
    assert!(terms.ends_with("refresh yes"), "{auth}");
    assert!(
        !st.to_string().contains("access-"),
        "no token in status: {st}"
    );
    eventually("the tool proposed", || {
        let t = home.json(&["tools", "--json"]);
        t.as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "notes_whoami" && r["state"] == "proposed")
            .then_some(())
    });
    // The card shows it, with Connect and Disconnect; no token.
    let (status, _, page) = page_get(port, "/tools", &host, &cookie);
    assert_eq!(status, 200);
    assert!(
        page.contains(&format!("authorized by {base} (scopes: s0 offline_access;")),
        "{page}"
    );
    assert!(
        page.contains("data-oauth=\"connect\" data-name=\"notes\""),
        "{page}"
    );
    assert!(
        page.contains("data-oauth=\"disconnect\" data-name=\"notes\""),
        "{page}"
    );
    assert!(!page.contains("access-"), "{page}");

    // A tool call through the authorized server (enabled on the page, the step-up fresh).
    let (status, _, body) = api("/api/tools/notes_whoami/enable", &json!({}));
    assert_eq!(status, 200, "{body}");
    let said = home.say_confirming("notes whoami");
    assert!(
        said.starts_with("notes_whoami ran; the MCP server \"notes\" returned:"),
        "{said}"
    );

    // Connect again, and an `iss` from another issuer in the callback (mix-up): refused,
    // the authorization kept.
    let (status, _, body) = api("/api/mcp_servers/notes/connect", &json!({}));
    assert_eq!(status, 200, "{body}");
    let (_, callback) = get(body_json(&body)["redirect"].as_str().unwrap());
    let query = callback.unwrap().strip_prefix(&prefix).unwrap().to_owned();
    let mixed: String = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| match k.as_ref() {
            "iss" => "iss=http%3A%2F%2F127.0.0.1%3A1".to_owned(),
            _ => format!(
                "{k}={}",
                url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
            ),
        })
        .collect::<Vec<_>>()
        .join("&");
    let (status, _, body) = cb(&mixed);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("data-result=\"oauth_iss\""), "{body}");
    let st = home.json(&["mcp", "status", "--json"]);
    assert_eq!(by_name(&st, "notes")["auth"]["state"], "authorized");

    // Disconnect on the card: forgotten (and revoked); the server asks again.
    let (status, _, body) = api("/api/mcp_servers/notes/disconnect", &json!({}));
    assert_eq!(status, 200, "{body}");
    eventually("needs authorization again", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "notes")["auth"]["state"] == "needs_authorization").then_some(())
    });
    // `maven mcp logout` still works (nothing left to forget).
    let out = home.run(&["mcp", "logout", "notes"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn login_needs_the_daemon_and_an_http_server() {
    let home = Home::new();
    home.write_config(
        &json!({"mcp_servers": {"local": {"command": "true"}, "web": {"url": "https://example.invalid/mcp"}}})
            .to_string(),
    );
    let out = home.run(&["mcp", "login", "local"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no HTTP server named \"local\""),
        "{}",
        stderr(&out)
    );
    let out = home.run(&["mcp", "login", "web"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the daemon is not running"),
        "{}",
        stderr(&out)
    );
}

/// The page, with a session that has a fresh step-up.
struct Page {
    port: u16,
    cookie: String,
    csrf: String,
}

impl Page {
    fn post(&self, path: &str, body: &Value) -> (u16, String, String) {
        post(self.port, path, &self.cookie, &self.csrf, body)
    }
}

/// A daemon with one HTTP server `notes` at `base` (and the page), started.
fn daemon_with(home: &Home, base: &str) -> crate::support::Daemon {
    daemon_logging(home, base, None)
}

/// The same, its log into `log` when given.
fn daemon_logging(
    home: &Home,
    base: &str,
    log: Option<&std::path::Path>,
) -> crate::support::Daemon {
    let out = passphrase_hash(&format!("{PASSPHRASE}\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    let hash = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0", "passphrase_hash": hash},
            "mcp_servers": {
                "notes": {"url": format!("{base}/mcp"), "allow_private": true, "enabled": true}
            }
        })
        .to_string(),
    );
    let d = match log {
        Some(l) => home.start_logging_to(l),
        None => home.start(),
    };
    eventually("needs authorization", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "notes")["state"] == "needs_authorization").then_some(())
    });
    d
}

/// A daemon whose one server, at `base`, has a pre-registered confidential client
/// (`maven-pre`) whose secret only the daemon's environment has.
fn pre_registered(home: &Home, base: &str) -> crate::support::Daemon {
    let out = passphrase_hash(&format!("{PASSPHRASE}\n"));
    let hash = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0", "passphrase_hash": hash},
            "mcp_servers": {"notes": {
                "url": format!("{base}/mcp"), "allow_private": true, "enabled": true,
                "oauth": {"client_id": "maven-pre", "client_secret": "${MAVEN_TEST_CLIENT_SECRET}"}
            }}
        })
        .to_string(),
    );
    home.start_with_env("MAVEN_TEST_CLIENT_SECRET", "s3cret")
}

/// A page session stepped up with the passphrase (its port from a login link).
fn page(home: &Home) -> Page {
    let (port, _) = login_link(home, "notes");
    let (cookie, csrf) = signed_in(port);
    Page { port, cookie, csrf }
}

/// Connect on the card, through the authorization server and back to the callback; then the
/// server is ready.
fn authorize(home: &Home, p: &Page) {
    let (status, _, body) = p.post("/api/mcp_servers/notes/connect", &json!({}));
    assert_eq!(status, 200, "{body}");
    let (status, callback) = get(body_json(&body)["redirect"].as_str().unwrap());
    assert_eq!(status, 302);
    let callback = callback.unwrap();
    let path = callback
        .strip_prefix(&format!("http://127.0.0.1:{}", p.port))
        .unwrap()
        .to_owned();
    let (status, _, body) = page_get(p.port, &path, &format!("127.0.0.1:{}", p.port), "");
    assert_eq!(status, 200, "{body}");
    eventually("authorized and ready", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "notes")["state"] == "ready").then_some(())
    });
}

#[test]
fn logout_drops_the_connection_and_the_server_asks_again() {
    let home = Home::new();
    let server = authserver_with(testkit::authserver::Hostile::None);
    let log = home.data().with_extension("log");
    let _d = daemon_logging(&home, &server.base, Some(&log));
    let p = page(&home);
    authorize(&home, &p);
    let dials = by_name(&home.json(&["mcp", "status", "--json"]), "notes")["dials"]
        .as_u64()
        .unwrap();

    let out = home.run(&["mcp", "logout", "notes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Never `ready` once the credentials are gone: at once (redialling, or already asking
    // again), and after the redial.
    let st = home.json(&["mcp", "status", "--json"]);
    let state = by_name(&st, "notes")["state"].as_str().unwrap().to_owned();
    assert!(
        state == "needs_authorization" || state == "connecting",
        "{st}"
    );
    assert_eq!(
        by_name(&st, "notes")["auth"]["state"],
        "needs_authorization",
        "{st}"
    );
    let st = eventually("dialled again, and parked", || {
        let st = home.json(&["mcp", "status", "--json"]);
        let n = by_name(&st, "notes");
        (n["dials"].as_u64().unwrap() > dials && n["state"] == "needs_authorization").then_some(st)
    });
    assert_eq!(
        by_name(&st, "notes")["last_error"],
        "needs authorization: run `maven mcp login notes`"
    );
    assert_eq!(
        server.count("POST /revoke"),
        2,
        "refresh and access token revoked"
    );
    // The page's card says the same.
    let (_, _, page) = page_get(
        p.port,
        "/tools",
        &format!("localhost:{}", p.port),
        &p.cookie,
    );
    assert!(!page.contains("authorized by"), "{page}");
    // The log says what happened, and never holds a token.
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("token revoked"), "{log}");
    // Begun and completed behind the owner's step-up, which the log names.
    for step in ["begun", "completed"] {
        let line = log
            .lines()
            .find(|l| l.contains(&format!("OAuth authorization {step} on the page")))
            .unwrap_or_else(|| panic!("no {step} line in {log}"));
        assert!(line.contains("owner (passphrase)"), "{line}");
    }
    assert!(
        log.contains("dropping the connection to dial again"),
        "{log}"
    );
    assert!(
        !log.contains("access-") && !log.contains("refresh-"),
        "{log}"
    );
}

#[test]
fn an_authorization_without_a_refresh_token_says_when_it_ends_and_then_needs_authorization() {
    let home = Home::new();
    // 4 s tokens, never a refresh token.
    let server = authserver_with(testkit::authserver::Hostile::NoRefreshToken);
    let _d = daemon_with(&home, &server.base);
    let p = page(&home);
    authorize(&home, &p);
    let st = home.json(&["mcp", "status", "--json"]);
    let auth = by_name(&st, "notes")["auth"]["terms"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        auth.contains("; no refresh token: you will be asked again at ") && auth.ends_with(" UTC"),
        "{auth}"
    );
    let (_, _, page) = page_get(
        p.port,
        "/tools",
        &format!("localhost:{}", p.port),
        &p.cookie,
    );
    assert!(
        page.contains("no refresh token: you will be asked again at "),
        "{page}"
    );
    // Once it expired: needs authorization, never ready, and why.
    let st = eventually("needs authorization once expired", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "notes")["state"] == "needs_authorization").then_some(st)
    });
    assert_eq!(
        by_name(&st, "notes")["auth"]["state"],
        "needs_authorization",
        "{st}"
    );
    let why = by_name(&st, "notes")["last_error"].as_str().unwrap();
    assert!(
        why.contains("expired") || why == "needs authorization: run `maven mcp login notes`",
        "{why}"
    );
}

#[test]
fn inspect_next_to_the_daemon_never_touches_its_tokens_and_calls_still_work() {
    let home = Home::new();
    // 6 s tokens: the daemon refreshes each in its last 3 s. Inspect used to refresh the
    // shared token itself; the test server revokes the grant when a refresh token is replayed.
    let server = authserver_with(testkit::authserver::Hostile::ExpiresIn(json!(6)));
    let d = daemon_with(&home, &server.base);
    let p = page(&home);
    authorize(&home, &p);
    eventually("the tool proposed", || {
        let t = home.json(&["tools", "--json"]);
        t.as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "notes_whoami")
            .then_some(())
    });
    let (status, _, body) = p.post("/api/tools/notes_whoami/enable", &json!({}));
    assert_eq!(status, 200, "{body}");
    // Near expiry now.
    std::thread::sleep(Duration::from_millis(3500));
    let tokens = server.count("POST /token");
    let out = home.run(&["mcp", "inspect", "notes", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("authorized by the running daemon, whose token never leaves it"),
        "{}",
        stderr(&out)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["auth"]["state"], "authorized", "{v}");
    assert_eq!(v["auth"]["held_by"], "the running daemon", "{v}");
    assert_eq!(v["auth"]["issuer"], server.base.as_str(), "{v}");
    assert_eq!(v["listed"], false, "{v}");
    assert!(!v.to_string().contains("access-"), "no token: {v}");
    assert_eq!(
        server.count("POST /token"),
        tokens,
        "inspect refreshed nothing"
    );
    // The daemon's own refresh and a call through it still work.
    let said = home.say_confirming("notes whoami");
    assert!(
        said.starts_with("notes_whoami ran; the MCP server \"notes\" returned:"),
        "{said}"
    );
    assert!(!server.revoked(), "no refresh token was replayed");
    let st = home.json(&["mcp", "status", "--json"]);
    assert_eq!(by_name(&st, "notes")["state"], "ready", "{st}");

    // Offline, once the kept token expired: read as it is, never refreshed.
    drop(d);
    std::thread::sleep(Duration::from_millis(6500));
    let tokens = server.count("POST /token");
    let out = home.run(&["mcp", "inspect", "notes", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["auth"]["state"], "expired: the daemon refreshes it",
        "{v}"
    );
    assert!(
        stderr(&out).contains("the access token expired: the daemon refreshes it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        server.count("POST /token"),
        tokens,
        "inspect refreshed nothing"
    );
    assert!(!server.revoked());
}

#[test]
fn login_needs_nothing_the_daemon_already_has() {
    // A pre-registered confidential client whose secret only the daemon's environment has.
    let home = Home::new();
    let server = authserver_with(testkit::authserver::Hostile::None);
    let _d = pre_registered(&home, &server.base);
    // This shell cannot load the configuration (the variable is unset here) …
    let out = home.run(&["config", "check"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("MAVEN_TEST_CLIENT_SECRET is not set"),
        "{}",
        stderr(&out)
    );
    // … and `maven mcp login` needs none of it: the daemon has it.
    let p = page(&home);
    let (status, _, body) = p.post("/api/mcp_servers/notes/connect", &json!({}));
    assert_eq!(status, 200, "{body}");
    let redirect = body_json(&body)["redirect"].as_str().unwrap().to_owned();
    assert!(redirect.contains("client_id=maven-pre"), "{redirect}");
    assert_eq!(server.count("POST /register"), 0, "pre-registered");
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn a_dripping_metadata_endpoint_holds_up_neither_status_nor_the_card() {
    let home = Home::new();
    let server = authserver_with(testkit::authserver::Hostile::DripMetadata);
    let _d = daemon_with(&home, &server.base);
    let p = page(&home);
    // Connect on the card: its discovery meets the dripping metadata (10 s per request).
    let (port, cookie, csrf) = (p.port, p.cookie.clone(), p.csrf.clone());
    let connect = std::thread::spawn(move || {
        post(
            port,
            "/api/mcp_servers/notes/connect",
            &cookie,
            &csrf,
            &json!({}),
        )
    });
    // inspect meets it too, in a process of its own.
    let inspect = std::thread::spawn({
        let mut cmd = home.command_for(&["mcp", "inspect", "notes", "--json"]);
        move || cmd.output().unwrap()
    });
    std::thread::sleep(Duration::from_millis(300));
    for i in 0..20 {
        let t = std::time::Instant::now();
        let out = home.run(&["status", "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "status {i} took {:?}",
            t.elapsed()
        );
    }
    let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", server.base);
    let want = format!("protected resource metadata at {metadata}: no answer within 10 s");
    let (status, _, body) = connect.join().unwrap();
    assert_eq!(status, 502, "{body}");
    assert!(body.contains(&want), "{body}");
    let out = inspect.join().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["auth"]["state"], "refused", "{v}");
    assert!(v["auth"]["error"].as_str().unwrap().contains(&want), "{v}");
    // stderr says what the JSON says.
    assert!(
        stderr(&out).contains(&format!(
            "authorization refused: {}",
            v["auth"]["error"].as_str().unwrap()
        )),
        "{}",
        stderr(&out)
    );
}

/// A grant that needs no person runs inside the daemon's own `initialize`: when it meets a
/// protected resource metadata endpoint that drips one byte a second, `mcp status` names that
/// step and its URL, not `initialize`.
#[test]
fn a_dripping_metadata_endpoint_met_by_a_grant_is_named_in_status() {
    let home = Home::new();
    let server = authserver_with(testkit::authserver::Hostile::DripMetadata);
    home.write_config(
        &json!({
            "mcp_servers": {"notes": {
                "url": format!("{}/mcp", server.base), "allow_private": true, "enabled": true,
                "timeouts": {"init": "4s"},
                "oauth": {
                    "grant": "client_credentials", "client_id": "maven-pre",
                    "client_secret": "${MAVEN_TEST_CLIENT_SECRET}"
                }
            }}
        })
        .to_string(),
    );
    let _d = home.start_with_env("MAVEN_TEST_CLIENT_SECRET", "s3cret");
    let metadata = server.resource_metadata_url();
    let want = format!("protected resource metadata at {metadata}: no answer within 4 s");
    let st = eventually("the dial failed", || {
        let st = home.json(&["mcp", "status", "--json"]);
        by_name(&st, "notes")["last_error"]
            .as_str()
            .is_some()
            .then_some(st)
    });
    let error = by_name(&st, "notes")["last_error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(error.contains(&want), "{error}");
    assert!(!error.contains("initialize"), "{error}");
    assert_eq!(server.count("POST /token"), 0, "{:?}", server.hits());
}

/// A confidential client authenticates one way per request (RFC 6749 §2.3.1): Basic alone,
/// which a server that refuses two methods at once (as Cloudflare's provider does) takes; a
/// server that wants `client_id` in the body beside Basic (as the Python SDK's does) is asked
/// again once with it, and the log says so.
#[test]
fn a_confidential_client_authenticates_one_way_and_adds_its_id_only_when_asked() {
    use testkit::authserver::Hostile;
    for (hostile, token_posts) in [(Hostile::OneAuthMethod, 1), (Hostile::ClientIdInBody, 2)] {
        let home = Home::new();
        let server = authserver_with(hostile.clone());
        let d = pre_registered(&home, &server.base);
        eventually("needs authorization", || {
            let st = home.json(&["mcp", "status", "--json"]);
            (by_name(&st, "notes")["state"] == "needs_authorization").then_some(())
        });
        let p = page(&home);
        authorize(&home, &p);
        assert_eq!(
            server.count("POST /token"),
            token_posts,
            "{hostile:?}: {:?}",
            server.hits()
        );
        let log = stderr(&d.signal("-TERM"));
        let asked = log
            .matches("the authorization server wants client_id in the body beside Basic")
            .count();
        assert_eq!(asked, token_posts - 1, "{hostile:?}: {log}");
    }
}

#[test]
fn after_a_reload_moves_the_page_the_authorization_server_sends_the_owner_to_its_new_port() {
    let home = Home::new();
    let server = authserver_with(testkit::authserver::Hostile::None);
    let _d = daemon_with(&home, &server.base);
    let old = crate::support::page_port(&home);
    let moved = crate::support::free_port();
    let mut cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(home.config()).unwrap()).unwrap();
    cfg["web"]["listen"] = json!(format!("127.0.0.1:{moved}"));
    home.write_config(&cfg.to_string());
    let out = home.run(&["reload"]);
    assert!(out.status.success(), "{}", stderr(&out));
    eventually("the page on its new port", || {
        (crate::support::page_port(&home) == moved).then_some(())
    });
    assert_ne!(old, moved);
    // The callback the authorization server sends the owner back to is the moved page's.
    let p = page(&home);
    assert_eq!(p.port, moved);
    authorize(&home, &p);
}
