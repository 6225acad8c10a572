//! The page's tests: every route without a socket, through the real router (`web::router`) and
//! its hardening layers, served by the daemon's host ([`PageHost`]) over a real store in a
//! temporary directory, with an injectable clock; and the page's listener on real ports.
#![expect(
    clippy::disallowed_methods,
    reason = "the page's clock is std's `Instant`; the injected clock starts at now"
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use config::Config;
use http::{header, HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use store::{NewTool, Redefinition, ToolState};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;
use web::{router, App, Body, Clock, Conn, Limits, Page, SystemClock, Web, MAX_CONNECTIONS};

use super::*;

const HOST: &str = "localhost:8765";
const ORIGIN: &str = "http://localhost:8765";
/// A passphrase hashed with a tiny cost, so the test stays quick (verification reads the cost
/// from the hash).
const PASSPHRASE: &str = "correct horse battery staple";

struct TestClock {
    base: Instant,
    offset: Mutex<Duration>,
}

impl Clock for TestClock {
    fn now(&self) -> Instant {
        self.base + *self.offset.lock().unwrap()
    }
}

impl TestClock {
    fn advance(&self, d: Duration) {
        *self.offset.lock().unwrap() += d;
    }
}

struct T {
    app: App,
    web: Arc<Web>,
    store: store::Store,
    clock: Arc<TestClock>,
    _dir: tempfile::TempDir,
}

fn cheap_hash(pass: &str) -> String {
    use argon2::password_hash::{PasswordHasher, SaltString};
    let params = argon2::Params::new(64, 1, 1, None).unwrap();
    let a = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    a.hash_password(pass.as_bytes(), &salt).unwrap().to_string()
}

async fn setup_with(config: Value) -> T {
    setup_with_status(config, None).await
}

/// Like [`setup_with`], the cards fed by `status` instead of the configuration alone.
async fn setup_with_status(config: Value, status: Option<Arc<dyn StatusSource>>) -> T {
    setup_with_oauth(config, status, Authorizations::none()).await
}

/// Like [`setup_with_status`], the page's OAuth acting on `oauth`.
async fn setup_with_oauth(
    config: Value,
    status: Option<Arc<dyn StatusSource>>,
    oauth: Authorizations,
) -> T {
    let dir = tempfile::tempdir().unwrap();
    let store = store::Store::open(&dir.path().join("maven.db"))
        .await
        .unwrap();
    let cfg = Config::parse("config.json", config.to_string().as_bytes(), &|_| {
        Some("s3cret-token".into())
    })
    .unwrap();
    let clock = Arc::new(TestClock {
        base: Instant::now(),
        offset: Mutex::new(Duration::ZERO),
    });
    let web = Arc::new(
        Web::new(
            &cfg.web,
            "127.0.0.1:8765".parse().unwrap(),
            clock.clone(),
            Limits::new(MAX_CONNECTIONS),
        )
        .unwrap(),
    );
    let host = PageHost::new(
        store.clone(),
        status.unwrap_or_else(|| Arc::new(cfg) as Arc<dyn StatusSource>),
        oauth,
        None,
    );
    let app = App::new(web.clone(), Arc::new(host));
    T {
        app,
        web,
        store,
        clock,
        _dir: dir,
    }
}

async fn setup() -> T {
    setup_with(json!({"web": {"passphrase_hash": cheap_hash(PASSPHRASE)}})).await
}

fn local(name: &str, read_only: bool) -> NewTool {
    NewTool {
        name: name.into(),
        kind: store::ToolKind::Local,
        server: String::new(),
        tool: name.into(),
        cmd: vec!["echo".into(), name.into()],
        scope: "local".into(),
        destructive: !read_only,
        fingerprint: None,
        description: format!("runs echo {name}"),
        shape: json!({"name": name, "cmd": ["echo", name], "read_only": read_only}),
        provenance: "proposed from acts in config.json".into(),
    }
}

struct Resp {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
    fn error(&self) -> String {
        self.json()["error"].as_str().unwrap_or("").to_owned()
    }
}

async fn send(t: &T, req: Request<Body>) -> Resp {
    let r = router(t.app.clone()).oneshot(req).await.unwrap();
    let status = r.status();
    let headers = r.headers().clone();
    let bytes = r.into_body().collect().await.unwrap().to_bytes();
    Resp {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

fn get(path: &str) -> Request<Body> {
    Request::get(path)
        .header(header::HOST, HOST)
        .body(Body::empty())
        .unwrap()
}

/// A browser's session: the cookie pair and the CSRF token.
struct Sess {
    cookie: String,
    csrf: String,
}

async fn session(t: &T) -> Sess {
    let r = send(t, get("/api/session")).await;
    assert_eq!(r.status, StatusCode::OK);
    let set = r.headers[header::SET_COOKIE].to_str().unwrap().to_owned();
    assert!(set.contains("HttpOnly"), "{set}");
    assert!(set.contains("SameSite=Strict"), "{set}");
    Sess {
        cookie: set.split(';').next().unwrap().to_owned(),
        csrf: r.json()["csrf_token"].as_str().unwrap().to_owned(),
    }
}

fn post(path: &str, s: &Sess, body: Value) -> Request<Body> {
    Request::post(path)
        .header(header::HOST, HOST)
        .header(header::ORIGIN, ORIGIN)
        .header(header::COOKIE, &s.cookie)
        .header("x-csrf-token", &s.csrf)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

async fn passphrase(t: &T, s: &Sess, pass: &str) -> Resp {
    send(
        t,
        post("/api/stepup/passphrase", s, json!({"passphrase": pass})),
    )
    .await
}

async fn step_up(t: &T, s: &Sess) {
    let r = passphrase(t, s, PASSPHRASE).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

fn assert_hardened(r: &Resp) {
    let h = &r.headers;
    let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'"));
    assert!(!csp.contains("unsafe-inline"));
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(h[header::REFERRER_POLICY], "no-referrer");
    assert_eq!(h[header::CACHE_CONTROL], "no-store");
}

#[tokio::test]
async fn every_get_route_answers_with_the_security_headers() {
    let t = setup().await;
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    let cases: &[(&str, StatusCode, &str)] = &[
        ("/", StatusCode::SEE_OTHER, ""),
        ("/tools", StatusCode::OK, "text/html"),
        ("/enroll", StatusCode::OK, "text/html"),
        ("/static/page.js", StatusCode::OK, "text/javascript"),
        ("/static/page.css", StatusCode::OK, "text/css"),
        ("/api/session", StatusCode::OK, "application/json"),
        ("/api/tools", StatusCode::OK, "application/json"),
        ("/api/mcp_servers", StatusCode::OK, "application/json"),
        ("/api/feeds", StatusCode::OK, "application/json"),
        ("/api/acts_log", StatusCode::OK, "application/json"),
        ("/oauth/login", StatusCode::OK, "text/html"),
        (
            "/oauth/callback?code=x",
            StatusCode::BAD_REQUEST,
            "text/html",
        ),
        ("/nope", StatusCode::NOT_FOUND, "application/json"),
    ];
    let o = owner(&t).await;
    for (path, status, ctype) in cases {
        let r = send(&t, get_with(path, &o)).await;
        assert_eq!(r.status, *status, "{path}: {}", r.body);
        assert_hardened(&r);
        if !ctype.is_empty() {
            let ct = r.headers[header::CONTENT_TYPE].to_str().unwrap();
            assert!(ct.starts_with(ctype), "{path}: {ct}");
        }
    }
    let r = send(&t, get("/")).await;
    assert_eq!(r.headers[header::LOCATION], "/tools");
}

#[tokio::test]
async fn a_foreign_host_is_refused_on_every_route() {
    let t = setup().await;
    let s = session(&t).await;
    let hosts = [
        "evil.example",
        "evil.example:8765",
        "localhost:8766",
        "localhost",
        "127.0.0.2:8765",
        "[::1]:8765",
        "localhost.evil.example:8765",
        "",
    ];
    for h in hosts {
        for path in ["/tools", "/api/tools", "/static/page.js"] {
            let req = Request::get(path)
                .header(header::HOST, h)
                .body(Body::empty())
                .unwrap();
            let r = send(&t, req).await;
            assert_eq!(r.status, StatusCode::MISDIRECTED_REQUEST, "{h} {path}");
            assert_eq!(r.error(), "host");
            assert_hardened(&r);
        }
        let mut req = post("/api/tools/x/enable", &s, json!({}));
        req.headers_mut().insert(header::HOST, h.parse().unwrap());
        assert_eq!(
            send(&t, req).await.status,
            StatusCode::MISDIRECTED_REQUEST,
            "{h}"
        );
    }
    let req = Request::get("/tools").body(Body::empty()).unwrap();
    assert_eq!(
        send(&t, req).await.status,
        StatusCode::MISDIRECTED_REQUEST,
        "no Host"
    );
    for h in [
        "localhost:8765",
        "LOCALHOST:8765",
        "localhost.:8765",
        "127.0.0.1:8765",
    ] {
        let req = Request::get("/tools")
            .header(header::HOST, h)
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(&t, req).await.status, StatusCode::OK, "{h}");
    }
}

/// Every POST route, so each refusal is checked on all of them.
const POSTS: &[&str] = &[
    "/api/tools/say_hi/enable",
    "/api/tools/say_hi/disable",
    "/api/enroll/start",
    "/api/enroll/finish",
    "/api/stepup/passkey/start",
    "/api/stepup/passkey/finish",
    "/api/stepup/passphrase",
];

#[tokio::test]
async fn posts_need_the_page_origin() {
    let t = setup().await;
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    let s = session(&t).await;
    for path in POSTS {
        for origin in [
            Some("http://evil.example"),
            Some("http://localhost:9999"),
            Some("https://localhost:8765"),
            Some("null"),
            None,
        ] {
            let mut req = post(path, &s, json!({"passphrase": PASSPHRASE}));
            match origin {
                Some(o) => {
                    req.headers_mut().insert(header::ORIGIN, o.parse().unwrap());
                }
                None => {
                    req.headers_mut().remove(header::ORIGIN);
                }
            }
            let r = send(&t, req).await;
            assert_eq!(r.status, StatusCode::FORBIDDEN, "{path} {origin:?}");
            assert_eq!(r.error(), "origin");
            assert_hardened(&r);
        }
    }
    assert_eq!(
        t.store.tool("say_hi").await.unwrap().unwrap().state,
        ToolState::Proposed
    );
}

#[tokio::test]
async fn posts_need_a_session_and_its_csrf_token() {
    let t = setup().await;
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    let s = session(&t).await;
    let other = session(&t).await;
    for path in POSTS {
        let mut req = post(path, &s, json!({}));
        req.headers_mut().remove(header::COOKIE);
        let r = send(&t, req).await;
        assert_eq!(
            (r.status, r.error().as_str()),
            (StatusCode::UNAUTHORIZED, "no_session"),
            "{path}"
        );

        let mut req = post(path, &s, json!({}));
        req.headers_mut()
            .insert(header::COOKIE, "maven_session_8765=00ff".parse().unwrap());
        let r = send(&t, req).await;
        assert_eq!(
            (r.status, r.error().as_str()),
            (StatusCode::UNAUTHORIZED, "no_session"),
            "{path}"
        );

        for bad in [None, Some(""), Some("wrong"), Some(other.csrf.as_str())] {
            let mut req = post(path, &s, json!({}));
            match bad {
                Some(b) => {
                    req.headers_mut().insert("x-csrf-token", b.parse().unwrap());
                }
                None => {
                    req.headers_mut().remove("x-csrf-token");
                }
            }
            let r = send(&t, req).await;
            assert_eq!(
                (r.status, r.error().as_str()),
                (StatusCode::FORBIDDEN, "csrf"),
                "{path} {bad:?}"
            );
        }
    }
}

#[tokio::test]
async fn enabling_needs_a_step_up() {
    let t = setup().await;
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    let s = session(&t).await;
    for action in ["enable", "disable"] {
        let r = send(
            &t,
            post(&format!("/api/tools/say_hi/{action}"), &s, json!({})),
        )
        .await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{action}");
        assert_eq!(r.error(), "step_up_required");
        assert!(r.headers.contains_key(header::WWW_AUTHENTICATE));
    }
    let row = t.store.tool("say_hi").await.unwrap().unwrap();
    assert_eq!(row.state, ToolState::Proposed);
    assert_eq!(
        t.store.tool_events(Some("say_hi"), 10).await.unwrap().len(),
        1,
        "only the proposal"
    );
}

#[tokio::test]
async fn a_fresh_passphrase_step_up_enables_and_names_itself_in_the_audit_trail() {
    let t = setup().await;
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    let s = session(&t).await;
    step_up(&t, &s).await;
    let v = send(&t, get_with("/api/session", &s)).await.json();
    assert_eq!(v["step_up"]["method"], "passphrase");

    let r = send(&t, post("/api/tools/say_hi/enable", &s, json!({}))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["state"], "enabled");
    let row = t.store.tool("say_hi").await.unwrap().unwrap();
    assert_eq!(row.state, ToolState::Enabled);
    let ev = &t.store.tool_events(Some("say_hi"), 1).await.unwrap()[0];
    assert_eq!(ev.to, ToolState::Enabled);
    assert_eq!(ev.actor, "owner (passphrase)");

    // Enabling twice is a conflict; disabling then works and is recorded too.
    let r = send(&t, post("/api/tools/say_hi/enable", &s, json!({}))).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::CONFLICT, "unchanged")
    );
    let r = send(&t, post("/api/tools/say_hi/disable", &s, json!({}))).await;
    assert_eq!(r.status, StatusCode::OK);
    let ev = &t.store.tool_events(Some("say_hi"), 1).await.unwrap()[0];
    assert_eq!(
        (ev.to, ev.actor.as_str()),
        (ToolState::Disabled, "owner (passphrase)")
    );

    // The step-up belongs to its session only.
    let other = session(&t).await;
    let r = send(&t, post("/api/tools/say_hi/enable", &other, json!({}))).await;
    assert_eq!(r.error(), "step_up_required");
}

/// A signed-in session: made, then stepped up with the passphrase.
async fn owner(t: &T) -> Sess {
    let s = session(t).await;
    step_up(t, &s).await;
    s
}

fn get_with(path: &str, s: &Sess) -> Request<Body> {
    Request::get(path)
        .header(header::HOST, HOST)
        .header(header::COOKIE, &s.cookie)
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn a_step_up_older_than_five_minutes_is_stale() {
    let t = setup().await;
    t.store.propose_tool(local("a", true)).await.unwrap();
    t.store.propose_tool(local("b", true)).await.unwrap();
    let s = session(&t).await;
    step_up(&t, &s).await;
    t.clock.advance(Duration::from_secs(300));
    let r = send(&t, post("/api/tools/a/enable", &s, json!({}))).await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "exactly five minutes is still fresh"
    );
    t.clock.advance(Duration::from_secs(1));
    let r = send(&t, post("/api/tools/b/enable", &s, json!({}))).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::UNAUTHORIZED, "step_up_stale")
    );
    assert_eq!(
        t.store.tool("b").await.unwrap().unwrap().state,
        ToolState::Proposed
    );
    let v = send(&t, get_with("/api/session", &s)).await.json();
    assert_eq!(v["step_up"], Value::Null);
    step_up(&t, &s).await;
    let r = send(&t, post("/api/tools/b/enable", &s, json!({}))).await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn impossible_changes_are_refused_with_their_reason() {
    let t = setup().await;
    t.store.propose_tool(local("gone", true)).await.unwrap();
    crate::testing::set_state(&t.store, "gone", ToolState::Withdrawn, "no longer offered")
        .await
        .unwrap();
    let s = session(&t).await;
    step_up(&t, &s).await;
    let cases = [
        (
            "/api/tools/gone/enable",
            StatusCode::CONFLICT,
            "bad_transition",
        ),
        (
            "/api/tools/gone/disable",
            StatusCode::CONFLICT,
            "bad_transition",
        ),
        (
            "/api/tools/missing/enable",
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            "/api/tools/a%2Fb/enable",
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        ("/api/tools/gone/run", StatusCode::NOT_FOUND, "not_found"),
        ("/api/tools/gone/call", StatusCode::NOT_FOUND, "not_found"),
    ];
    for (path, status, code) in cases {
        let r = send(&t, post(path, &s, json!({}))).await;
        assert_eq!((r.status, r.error().as_str()), (status, code), "{path}");
    }
}

#[tokio::test]
async fn the_passphrase_step_up_refuses_wrong_and_repeated_attempts() {
    let t = setup().await;
    let s = session(&t).await;
    for _ in 0..5 {
        let r = passphrase(&t, &s, "nope nope").await;
        assert_eq!(
            (r.status, r.error().as_str()),
            (StatusCode::UNAUTHORIZED, "passphrase")
        );
    }
    let r = passphrase(&t, &s, PASSPHRASE).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::TOO_MANY_REQUESTS, "too_many_attempts")
    );
    t.clock.advance(Duration::from_secs(61));
    step_up(&t, &s).await;

    let r = passphrase(&t, &s, &"x".repeat(2000)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);

    let t = setup_with(json!({})).await;
    let s = session(&t).await;
    let r = passphrase(&t, &s, PASSPHRASE).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::CONFLICT, "no_passphrase")
    );
}

#[tokio::test]
async fn passkey_routes_refuse_what_they_cannot_verify() {
    let t = setup().await;
    let s = session(&t).await;
    // Nothing enrolled yet.
    let r = send(&t, post("/api/stepup/passkey/start", &s, json!({}))).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::CONFLICT, "no_passkey")
    );
    // No ceremony started.
    let fake_assertion = json!({
        "id": "AAAA", "rawId": "AAAA", "type": "public-key",
        "response": {"authenticatorData": "AAAA", "clientDataJSON": "AAAA", "signature": "AAAA", "userHandle": null}
    });
    let r = send(&t, post("/api/stepup/passkey/finish", &s, fake_assertion)).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::BAD_REQUEST, "no_ceremony")
    );
    let fake_attestation = json!({
        "id": "AAAA", "rawId": "AAAA", "type": "public-key",
        "response": {"attestationObject": "AAAA", "clientDataJSON": "AAAA"}
    });
    let r = send(&t, post("/api/enroll/finish", &s, fake_attestation.clone())).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::BAD_REQUEST, "no_ceremony")
    );
    // Not JSON of the expected shape.
    let r = send(&t, post("/api/enroll/finish", &s, json!({"id": 3}))).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.status.is_client_error());

    // Enrollment links: unknown, then valid, then used up by a finished registration only.
    let r = send(&t, post("/api/enroll/start", &s, json!({"token": "00"}))).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::FORBIDDEN, "enroll_link")
    );
    let link = t.web.enroll_link();
    let url = link.url.as_str();
    assert!(url.starts_with("http://localhost:8765/enroll#"), "{url}");
    let token = url.split('#').nth(1).unwrap();
    let r = send(&t, post("/api/enroll/start", &s, json!({"token": token}))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let pk = &r.json()["publicKey"];
    assert_eq!(pk["rp"]["id"], "localhost");
    assert!(pk["challenge"].as_str().is_some_and(|c| c.len() >= 16));
    // A forged answer does not enroll anything, and the ceremony is gone afterwards.
    let r = send(&t, post("/api/enroll/finish", &s, fake_attestation.clone())).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::BAD_REQUEST, "webauthn")
    );
    assert!(t.store.passkeys().await.unwrap().is_empty());
    let r = send(&t, post("/api/enroll/finish", &s, fake_attestation)).await;
    assert_eq!(r.error(), "no_ceremony");
    // The link itself is still good for another try within its ten minutes, not after.
    t.clock.advance(Duration::from_secs(601));
    let r = send(&t, post("/api/enroll/start", &s, json!({"token": token}))).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::FORBIDDEN, "enroll_link")
    );
}

#[tokio::test]
async fn a_demoted_act_shows_what_changed_field_by_field() {
    let t = setup().await;
    let o = owner(&t).await;
    let shape = json!({"name": "list_tasks", "description": "Lists tasks",
        "inputSchema": {"type": "object", "required": ["project"],
                        "properties": {"project": {"type": "string"}}},
        "annotations": {"readOnlyHint": true}});
    t.store
        .propose_tool(NewTool {
            name: "todo_list_tasks".into(),
            kind: store::ToolKind::Mcp,
            server: "todo".into(),
            tool: "list_tasks".into(),
            cmd: vec!["mcp".into(), "todo".into(), "list_tasks".into()],
            scope: "mcp:todo".into(),
            destructive: false,
            fingerprint: Some("sha256:aaaa".into()),
            description: "Lists tasks".into(),
            shape: shape.clone(),
            provenance: "discovered on todo".into(),
        })
        .await
        .unwrap();
    crate::testing::set_state(&t.store, "todo_list_tasks", ToolState::Enabled, "test")
        .await
        .unwrap();
    let mut changed = shape.clone();
    changed["description"] = json!("Deletes <b>every</b> task");
    changed["annotations"] = json!({});
    let redefine = store::ToolChange::Redefine {
        name: "todo_list_tasks".into(),
        redefinition: Redefinition {
            fingerprint: "sha256:bbbb".into(),
            description: "Deletes <b>every</b> task".into(),
            shape: changed,
            cmd: None,
            raise_destructive: true,
            provenance: "redefined by todo: description, annotations changed".into(),
        },
    };
    t.store
        .apply_listing(move |_| (vec![redefine], ()))
        .await
        .unwrap();

    let v = send(&t, get_with("/api/tools", &o)).await.json();
    let row = &v[0];
    assert_eq!(row["state"], "proposed");
    assert_eq!(
        row["actions"],
        json!(["enable"]),
        "a proposed row gets Enable alone"
    );
    let fields: Vec<&str> = row["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["annotations", "annotations.readOnlyHint", "description"]
    );
    assert_eq!(row["changed"][2]["approved"], "\"Lists tasks\"");
    assert_eq!(row["history"][0]["actor"], "discovery");

    let page = send(&t, get_with("/tools", &o)).await.body;
    assert!(page.contains("The server changed this tool since you approved it"));
    assert!(page.contains("annotations.readOnlyHint"));
    assert!(
        page.contains("Deletes &lt;b&gt;every&lt;/b&gt; task"),
        "escaped"
    );
    assert!(!page.contains("<b>every</b>"));

    // Re-approving pins the new shape: the diff is gone.
    let s = session(&t).await;
    step_up(&t, &s).await;
    let r = send(&t, post("/api/tools/todo_list_tasks/enable", &s, json!({}))).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["changed"], json!([]));
    let ev = &t
        .store
        .tool_events(Some("todo_list_tasks"), 1)
        .await
        .unwrap()[0];
    assert_eq!(
        ev.reason,
        "enabled on the page after reviewing the changed shape"
    );
}

#[tokio::test]
async fn the_page_groups_acts_caps_descriptions_and_has_no_run_button() {
    let t = setup().await;
    let o = owner(&t).await;
    let mut long = local("long_one", false);
    long.description = format!("<script>alert(1)</script>{}", "y".repeat(1000));
    t.store.propose_tool(long).await.unwrap();
    t.store.propose_tool(local("on_one", true)).await.unwrap();
    crate::testing::set_state(&t.store, "on_one", ToolState::Enabled, "test")
        .await
        .unwrap();
    let r = send(&t, get_with("/tools", &o)).await;
    let page = &r.body;
    assert!(send(&t, get("/tools")).await.headers[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .contains("HttpOnly"));
    assert!(page.contains("data-state=\"proposed\"") && page.contains("data-state=\"enabled\""));
    assert!(page.contains("may write: asks for confirmation every time"));
    assert!(!page.contains("<script>alert"));
    assert!(!page.contains(&"y".repeat(301)));
    assert!(!page.to_lowercase().contains(">run<"));
    assert!(!page.contains("data-action=\"run\""));
    // No inline script or style anywhere.
    assert!(!page.contains("<script>") && !page.contains("style="));
    assert!(page.contains("<script src=\"/static/page.js\" defer></script>"));
}

#[tokio::test]
async fn no_secret_is_ever_rendered() {
    let t = setup_with(json!({
        "web": {"passphrase_hash": cheap_hash(PASSPHRASE)},
        "mcp_servers": {
            "remote": {"url": "https://user:pw@mcp.example/mcp?token=${TOKEN}",
                       "headers": {"Authorization": "Bearer ${TOKEN}"}, "enabled": true},
            "local": {"command": "todo-server", "args": ["--db", "x"],
                      "env": {"API_KEY": "${TOKEN}"}, "enabled": false},
            "gh": {"command": "gh-mcp", "enabled": true, "args": ["--token", "${GITHUB_TOKEN}",
                   "postgresql://app:Sup3rS3cret@localhost/db", "ghp_abcdefghijklmnop1234"]}
        },
        "feeds": [{"name": "news", "url": "https://news.example/feed?key=${TOKEN}"}]
    }))
    .await;
    let o = owner(&t).await;
    let s = &o;
    for path in [
        "/tools",
        "/api/mcp_servers",
        "/api/feeds",
        "/api/session",
        "/api/tools",
    ] {
        let r = send(&t, get_with(path, s)).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
        for secret in [
            "s3cret-token",
            "pw@",
            "$argon2id$",
            "Bearer",
            "Sup3rS3cret",
            "ghp_",
        ] {
            assert!(!r.body.contains(secret), "{path} shows {secret}");
        }
    }
    let page = send(&t, get_with("/tools", &o)).await.body;
    assert!(
        page.contains(&web::text(
            "sandboxed local process: reads only its program's directories, writes only its own directory"
        )),
        "{page}"
    );
    assert!(page.contains("remote endpoint"));
    assert!(page.contains("todo-server --db x"));
    // Targets as the file writes them: references unexpanded, secret literals hidden.
    let servers = send(&t, get_with("/api/mcp_servers", &o)).await.json();
    assert_eq!(servers.as_array().unwrap().len(), 3);
    let target = |name: &str| {
        servers
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()["target"]
            .clone()
    };
    assert_eq!(
        target("gh"),
        "gh-mcp --token ${GITHUB_TOKEN} postgresql://app:…(hidden)@localhost/db …(hidden)"
    );
    assert_eq!(
        target("remote"),
        "https://user:…(hidden)@mcp.example/mcp?token=${TOKEN}"
    );
    assert!(page.contains(
        "gh-mcp --token ${GITHUB_TOKEN} postgresql://app:…(hidden)@localhost/db …(hidden)"
    ));
}

#[tokio::test]
async fn no_owner_data_before_a_sign_in_and_a_sign_in_lasts_session_hours() {
    let t = setup_with(json!({
        "web": {"passphrase_hash": cheap_hash(PASSPHRASE), "session_hours": 2},
        "mcp_servers": {"gh": {"command": "gh-mcp", "args": ["--repo", "secret-project"]}},
        "feeds": [{"name": "private-feed", "url": "https://news.example/feed"}]
    }))
    .await;
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    let data = [
        "/api/tools",
        "/api/mcp_servers",
        "/api/feeds",
        "/api/acts_log",
    ];
    let refused = |r: &Resp, path: &str| {
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{path}: {}", r.body);
        assert_eq!(r.error(), "sign_in_required", "{path}");
    };
    let landing_only = |r: &Resp| {
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.body.contains("id=\"stepup\""), "{}", r.body);
        assert!(r.body.contains("Not verified: sign in"), "{}", r.body);
        for owner_data in [
            "id=\"acts\"",
            "mcp-servers",
            "id=\"feeds\"",
            "acts-log",
            "say_hi",
            "gh-mcp",
            "secret-project",
            "private-feed",
        ] {
            assert!(
                !r.body.contains(owner_data),
                "the landing page shows {owner_data}"
            );
        }
    };
    // No session, and a session that never stepped up: the step-up card and nothing else.
    for path in data {
        refused(&send(&t, get(path)).await, path);
    }
    landing_only(&send(&t, get("/tools")).await);
    let s = session(&t).await;
    for path in data {
        refused(&send(&t, get_with(path, &s)).await, path);
    }
    landing_only(&send(&t, get_with("/tools", &s)).await);
    // The step-up routes stay open.
    assert_eq!(
        send(&t, get_with("/api/session", &s)).await.status,
        StatusCode::OK
    );

    // Signed in: everything.
    step_up(&t, &s).await;
    for path in data {
        assert_eq!(
            send(&t, get_with(path, &s)).await.status,
            StatusCode::OK,
            "{path}"
        );
    }
    let page = send(&t, get_with("/tools", &s)).await.body;
    assert!(page.contains("say_hi") && page.contains("gh-mcp --repo secret-project"));
    assert_eq!(
        send(&t, get_with("/api/session", &s)).await.json()["signed_in_for_s"],
        7200
    );

    // Six minutes on: still signed in, but enabling needs a fresh step-up.
    t.clock.advance(Duration::from_secs(6 * 60));
    assert_eq!(
        send(&t, get_with("/api/tools", &s)).await.status,
        StatusCode::OK
    );
    let page = send(&t, get_with("/tools", &s)).await.body;
    assert!(page.contains("Signed in for 2 more hours"), "{page}");
    let r = send(&t, post("/api/tools/say_hi/enable", &s, json!({}))).await;
    assert_eq!(r.error(), "step_up_stale");
    step_up(&t, &s).await;
    let r = send(&t, post("/api/tools/say_hi/enable", &s, json!({}))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // Past web.session_hours (2) since the last step-up: signed out again.
    t.clock.advance(Duration::from_secs(2 * 3600));
    for path in data {
        refused(&send(&t, get_with(path, &s)).await, path);
    }
    landing_only(&send(&t, get_with("/tools", &s)).await);
}

#[tokio::test]
async fn a_reserved_slot_serves_only_a_signed_in_session() {
    let t = setup().await;
    let reserved = |mut r: Request<Body>| {
        r.extensions_mut().insert(Conn {
            uid: Some(0),
            reserved: true,
        });
        r
    };
    let s = session(&t).await;
    for req in [
        get("/tools"),
        get_with("/api/session", &s),
        get_with("/tools", &s),
    ] {
        let r = send(&t, reserved(req)).await;
        assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
        assert_eq!(r.error(), "busy");
        assert_eq!(r.headers[header::CONNECTION], "close");
    }
    step_up(&t, &s).await;
    let r = send(&t, reserved(get_with("/tools", &s))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = send(&t, reserved(post("/api/tools/nope/enable", &s, json!({})))).await;
    assert_eq!(
        r.error(),
        "not_found",
        "a signed-in POST goes through: {}",
        r.body
    );
}

#[tokio::test]
async fn status_says_whether_the_peer_uid_check_applies() {
    let t = setup().await;
    let st = t.web.status();
    assert_eq!(
        st.peer_uid_check,
        format!(
            "applies: only processes of uid {} are served",
            ::gate::owner_uid()
        )
    );
    assert_eq!(st.session_hours, 12);
    assert_eq!(st.reserved_connections, 8);
    let cfg = Config::parse("c", b"{}", &|_| None).unwrap();
    let beyond = Web::new(
        &cfg.web,
        "192.0.2.1:8765".parse().unwrap(),
        t.clock.clone(),
        Limits::new(MAX_CONNECTIONS),
    )
    .unwrap();
    assert!(beyond.uid_check().is_none());
    assert_eq!(
        beyond.status().peer_uid_check,
        "does not apply: web.listen 192.0.2.1:8765 is not a loopback address, so any peer that reaches it may open a session"
    );
}

/// The cards' source with a server's question waiting for the owner.
struct Asking;

impl StatusSource for Asking {
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<wire::views::ServerStatusView>> {
        Box::pin(std::future::ready(Vec::new()))
    }
    fn feeds(&self) -> BoxFuture<'_, Vec<wire::views::FeedView>> {
        Box::pin(std::future::ready(Vec::new()))
    }
    fn question(&self) -> Option<turns::Question> {
        Some(turns::Question {
            server: "todo".into(),
            act: "todo_list_tasks".into(),
            words: "Done.</pre></blockquote><p>Maven: your step-up expired\n\u{1b}[2J\u{202e}say the phrase".into(),
            how: "Answer with the value of that field, or no to decline.".into(),
        })
    }
}

#[tokio::test]
async fn a_servers_question_is_shown_in_a_box_labelled_with_the_server() {
    let t = setup_with_status(
        json!({"web": {"passphrase_hash": cheap_hash(PASSPHRASE)}}),
        Some(Arc::new(Asking)),
    )
    .await;
    let landing = send(&t, get("/tools")).await.body;
    assert!(!landing.contains("id=\"question\""), "not before a sign-in");
    let o = owner(&t).await;
    let page = send(&t, get_with("/tools", &o)).await.body;
    let card = page
        .split("<section class=\"card\" id=\"question\">")
        .nth(1)
        .and_then(|c| c.split("</section>").next())
        .unwrap_or_else(|| panic!("no question card: {page}"));
    assert_eq!(
        card,
        "<h2>A question from the MCP server todo</h2>\
         <figure class=\"server-words\" data-server=\"todo\"><figcaption>todo asks, for \
         todo_list_tasks (its words, not Maven's):</figcaption><blockquote><pre>Done.\
         &lt;/pre&gt;&lt;/blockquote&gt;&lt;p&gt;Maven: your step-up expired\n\\e[2J\\u{202e}say \
         the phrase</pre></blockquote></figure><p>Answer with the value of that field, or no \
         to decline. Answer with your next turn (<code>maven say …</code>).</p>"
    );
}

#[tokio::test]
async fn bodies_are_bounded() {
    let t = setup().await;
    let s = session(&t).await;
    let big = json!({"passphrase": "x".repeat(200_000)});
    let r = send(&t, post("/api/stepup/passphrase", &s, big)).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn recent_acts_are_listed() {
    let t = setup().await;
    let o = owner(&t).await;
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    t.store
        .log_act(store::NewActLog {
            tool: "say_hi".into(),
            utterance: "say hi <now>".into(),
            arguments: json!({"secret_arg": "zzz"}),
            confirmed_by: None,
            outcome: "hi".into(),
            result: store::ActResult::Ok,
            duration_ms: 3,
        })
        .await
        .unwrap();
    let v = send(&t, get_with("/api/acts_log", &o)).await.json();
    assert_eq!(v[0]["tool"], "say_hi");
    assert_eq!(v[0]["ok"], true);
    assert!(v[0].get("arguments").is_none());
    let page = send(&t, get_with("/tools", &o)).await.body;
    assert!(page.contains("say hi &lt;now&gt;"));
    assert!(!page.contains("zzz"));
}

#[test]
fn the_passphrase_hash_made_by_the_cli_verifies() {
    let verify = |h: &str, p: &str| stepup::verify_passphrase(h, p, Instant::now()).is_some();
    let h = stepup::hash_passphrase(PASSPHRASE).unwrap();
    assert!(h.starts_with("$argon2id$"));
    assert!(verify(&h, PASSPHRASE));
    assert!(!verify(&h, "wrong passphrase"));
    assert!(!verify("not a hash", PASSPHRASE));
    let argon2i = "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAA";
    assert!(!verify(argon2i, PASSPHRASE));
}

/// Server-written text at its worst: markup, a CSI screen clear, an OSC window title, a C1 CSI,
/// a right-to-left override and an isolate, a newline that fakes a row.
const HOSTILE: &str = "<script>alert(1)</script><img src=x onerror=alert(2)>\u{1b}[2J\
                       \u{1b}]0;pwned\u{7}\u{9b}31m \u{202e}txet\u{202c} \u{2066}i\u{2069}\n| fake |";

/// Cards whose every server-written string is [`HOSTILE`].
struct HostileStatus;

impl StatusSource for HostileStatus {
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<wire::views::ServerStatusView>> {
        let v = serde_json::from_value(json!([{
            "name": "srv", "transport": "stdio", "target": HOSTILE, "enabled": true,
            "state": {"over_cap": HOSTILE}, "trust": HOSTILE, "protocol_version": HOSTILE,
            "server_info": {"name": HOSTILE, "version": HOSTILE},
            "tools_offered": 2, "tools_proposed": 1, "tools_enabled": 0,
            "tools_refused": [{"tool": format!("{}{HOSTILE}", "x\n".repeat(50_000)),
                               "reason": HOSTILE}],
            "last_error": HOSTILE, "next_retry": HOSTILE,
            "stderr_tail": format!("first line\n{HOSTILE}"),
            "violations": 0, "dials": 1,
        }]))
        .unwrap();
        Box::pin(std::future::ready(v))
    }
    fn feeds(&self) -> BoxFuture<'_, Vec<wire::views::FeedView>> {
        let v = serde_json::from_value(json!([{
            "name": HOSTILE, "url": HOSTILE, "enabled": true, "last_success": HOSTILE,
            "last_error": HOSTILE, "next_poll": HOSTILE, "items_noted": 3,
        }]))
        .unwrap();
        Box::pin(std::future::ready(v))
    }
}

#[tokio::test]
async fn server_written_text_is_shown_as_text_and_neutralised_in_every_field() {
    let t = setup_with_status(
        json!({"web": {"passphrase_hash": cheap_hash(PASSPHRASE)}}),
        Some(Arc::new(HostileStatus)),
    )
    .await;
    let o = owner(&t).await;
    let shape = json!({"name": "echo", "title": "Echo", "description": "Echoes",
                       "inputSchema": {"type": "object"}});
    t.store
        .propose_tool(NewTool {
            name: "srv_echo".into(),
            kind: store::ToolKind::Mcp,
            server: "srv".into(),
            tool: HOSTILE.into(),
            cmd: vec!["mcp".into(), "srv".into(), HOSTILE.into()],
            scope: "mcp:srv".into(),
            destructive: false,
            fingerprint: Some(HOSTILE.into()),
            description: "Echoes".into(),
            shape: shape.clone(),
            provenance: HOSTILE.into(),
        })
        .await
        .unwrap();
    crate::testing::set_state(&t.store, "srv_echo", ToolState::Enabled, HOSTILE)
        .await
        .unwrap();
    let mut changed = shape.clone();
    changed["title"] = json!(HOSTILE);
    changed["description"] = json!(HOSTILE);
    changed["inputSchema"]["properties"] = json!({ HOSTILE: {"type": "string"} });
    let redefine = store::ToolChange::Redefine {
        name: "srv_echo".into(),
        redefinition: Redefinition {
            fingerprint: HOSTILE.into(),
            description: HOSTILE.into(),
            shape: changed,
            cmd: None,
            raise_destructive: false,
            provenance: HOSTILE.into(),
        },
    };
    t.store
        .apply_listing(move |_| (vec![redefine], ()))
        .await
        .unwrap();
    t.store
        .log_act(store::NewActLog {
            tool: "srv_echo".into(),
            utterance: HOSTILE.into(),
            arguments: json!({}),
            confirmed_by: Some(HOSTILE.into()),
            outcome: HOSTILE.into(),
            result: store::ActResult::Ok,
            duration_ms: 1,
        })
        .await
        .unwrap();

    let page = send(&t, get_with("/tools", &o)).await.body;
    // Nothing from the server became markup or reached the page as a control character.
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(page.contains("<script src=\"/static/page.js\" defer></script>"));
    assert!(!page.contains("<img") && !page.contains("onerror=alert(2)>"));
    assert!(!page.contains('\u{202e}') && !page.contains('\u{1b}') && !page.contains('\u{9b}'));
    if let Some(c) = page.chars().find(|&c| shown::is_hazard(c) && c != '\n') {
        panic!("the page carries {c:?}");
    }
    assert!(page.contains("<title>Maven — tools</title>"));

    // Each field shows the text itself, escaped and neutralised.
    let want = web::text(HOSTILE);
    assert!(want.starts_with(
        "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;\\e[2J\\e]0;pwned\\u{7}\\u{9b}31m \\u{202e}txet\\u{202c} \\u{2066}i\\u{2069}⏎| fake |"
    ), "{want}");
    let fields = [
        // The act.
        format!("<dt>title</dt><dd>{want}</dd>"),
        format!("<dt>runs</dt><dd><code>mcp srv {want}</code></dd>"),
        format!("<dt>description</dt><dd class=\"desc\">{want}</dd>"),
        format!("<dt>provenance</dt><dd>{want}</dd>"),
        // The fingerprint: short, the whole one in its title, both as text.
        format!("<dt>fingerprint</dt><dd><code class=\"fingerprint\" title=\"{want}\">"),
        // The MCP servers card.
        format!("<dt>target</dt><dd><code>{want}</code></dd>"),
        format!("<dt>trust</dt><dd>{want}</dd>"),
        format!("<dt>state</dt><dd>{want}</dd>"),
        format!("<dt>protocol</dt><dd>{want}</dd>"),
        format!("<dt>server</dt><dd>{want} {want}</dd>"),
        format!("<dt>last error</dt><dd>{want}</dd>"),
        format!("<dt>next retry</dt><dd>{want}</dd>"),
        format!(
            "<li><code>{}… ({} characters)</code>: {want}</li>",
            "x⏎".repeat(40),
            100_000 + HOSTILE.chars().count()
        ),
        format!("<pre>first line\n{}</pre>", web::esc(&shown::block(HOSTILE))),
        // The feeds card.
        format!("<tr><td class=\"token\">{want}</td><td class=\"url\"><code>{want}</code></td><td>yes</td><td class=\"when\">{want}</td><td class=\"when\">{want}</td><td>{want}</td><td>3</td></tr>"),
        // Recent acts.
        format!("<td class=\"token\">srv_echo</td><td>{want}</td><td>{want}</td>"),
    ];
    for f in &fields {
        assert!(page.contains(f.as_str()), "the page lacks {f}");
    }
    // The diff of the redefined tool: every side and the field names.
    let quoted = web::text(&format!("{HOSTILE:?}"));
    for f in [
        format!("<td><code>description</code></td><td><code>&quot;Echoes&quot;</code></td><td><code>{quoted}</code></td>"),
        format!("<td><code>title</code></td><td><code>&quot;Echo&quot;</code></td><td><code>{quoted}</code></td>"),
        format!("<td><code>inputSchema.properties.{quoted}.type</code></td><td><code>(absent)</code></td>"),
    ] {
        assert!(page.contains(f.as_str()), "the diff lacks {f}");
    }
    // The history names who changed the row and why.
    let history = page
        .split("<ol class=\"history\">")
        .nth(1)
        .and_then(|h| h.split("</ol>").next())
        .unwrap_or_default();
    assert!(
        history.contains(&format!(": {want}</li>")),
        "history: {history}"
    );

    // The API keeps the exact strings; only the page neutralises them.
    let tools = send(&t, get_with("/api/tools", &o)).await.json();
    assert_eq!(tools[0]["description"], HOSTILE);
    assert_eq!(tools[0]["provenance"], HOSTILE);
    let servers = send(&t, get_with("/api/mcp_servers", &o)).await.json();
    assert_eq!(servers[0]["server_info"]["name"], HOSTILE);
    assert_eq!(servers[0]["last_error"], HOSTILE);
    let feeds = send(&t, get_with("/api/feeds", &o)).await.json();
    assert_eq!(feeds[0]["name"], HOSTILE);
}

/// The cards' source for the OAuth tests, and what the page's OAuth acts on: one HTTP server,
/// "notes", authorized by the test kit's loopback authorization server; counts its redials.
struct OAuthSource {
    oauth: Arc<::oauth::OAuth>,
    redials: std::sync::atomic::AtomicUsize,
}

impl StatusSource for OAuthSource {
    fn mcp_servers(&self) -> BoxFuture<'_, Vec<wire::views::ServerStatusView>> {
        Box::pin(std::future::ready(Vec::new()))
    }
    fn feeds(&self) -> BoxFuture<'_, Vec<wire::views::FeedView>> {
        Box::pin(std::future::ready(Vec::new()))
    }
}

fn loopback_fetcher() -> webfetch::Fetcher {
    let mut door = webfetch::DoorConfig::new("test-browser");
    door.allow_private = true;
    webfetch::Fetcher::new(door)
}

/// A page whose "notes" server is authorized by a real loopback authorization server.
async fn setup_oauth() -> (T, Arc<OAuthSource>, testkit::authserver::AuthServer) {
    let server = testkit::authserver::AuthServer::start(testkit::authserver::Hostile::None)
        .await
        .unwrap();
    let oauth = ::oauth::OAuth::new(
        ::oauth::OAuthConfig {
            server: "notes".into(),
            resource_url: format!("{}/mcp", server.base),
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            redirect_uri: "http://127.0.0.1:8765/oauth/callback".into(),
            client_name: "Maven".into(),
        },
        loopback_fetcher(),
        Arc::new(::oauth::MemoryStore::default()),
    );
    let registry = Arc::new(::oauth::Registry::new([oauth]));
    let source = Arc::new(OAuthSource {
        oauth: registry.get("notes").unwrap().clone(),
        redials: Default::default(),
    });
    let counted = source.clone();
    let redial = move |_: &str| {
        counted
            .redials
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    };
    let t = setup_with_oauth(
        json!({"web": {"passphrase_hash": cheap_hash(PASSPHRASE)}}),
        Some(source.clone() as Arc<dyn StatusSource>),
        Authorizations::new(registry, Arc::new(redial)),
    )
    .await;
    (t, source, server)
}

/// The token of a one-time login link (in its fragment).
fn link_token(t: &T) -> String {
    let v = serde_json::to_value(t.web.oauth_link("notes")).unwrap();
    let url = v["url"].as_str().unwrap();
    assert_eq!(v["valid_s"], 600);
    let (page, token) = url.split_once('#').unwrap();
    assert_eq!(page, "http://localhost:8765/oauth/login");
    token.to_owned()
}

/// The authorization server's answer to the browser: the callback's path and query.
async fn through_the_as(redirect: &str) -> String {
    let resp = loopback_fetcher()
        .send(webfetch::Request::get(redirect).follow_redirects(false))
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 302);
    let location = resp.header_str("location").unwrap().to_owned();
    location
        .strip_prefix("http://127.0.0.1:8765")
        .unwrap_or_else(|| panic!("{location}"))
        .to_owned()
}

fn result_of(r: &Resp) -> String {
    let at = r.body.find("data-result=\"").unwrap() + "data-result=\"".len();
    r.body[at..].split('"').next().unwrap().to_owned()
}

#[tokio::test]
async fn a_login_link_needs_a_fresh_step_up_works_once_and_expires() {
    let (t, _, _as) = setup_oauth().await;
    let s = session(&t).await;
    let token = link_token(&t);
    let login = |token: &str| post("/api/oauth/login", &s, json!({"token": token}));

    let r = send(&t, login(&token)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
    assert_eq!(r.error(), "step_up_required");
    assert!(r.json()["message"]
        .as_str()
        .unwrap()
        .starts_with("authorizing an MCP server needs a step-up"));
    step_up(&t, &s).await;
    let r = send(&t, login("00ff")).await;
    assert_eq!(
        (r.status, r.error()),
        (StatusCode::FORBIDDEN, "oauth_link".into())
    );
    // The refusal without a step-up did not use the link up.
    let r = send(&t, login(&token)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let redirect = r.json()["redirect"].as_str().unwrap().to_owned();
    assert!(
        redirect.contains("code_challenge_method=S256"),
        "{redirect}"
    );
    assert!(
        redirect.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A8765%2Foauth%2Fcallback"),
        "{redirect}"
    );
    assert!(!r.body.contains("access-"), "{}", r.body);
    let r = send(&t, login(&token)).await;
    assert_eq!(
        (r.status, r.error()),
        (StatusCode::FORBIDDEN, "oauth_link".into())
    );
    assert!(r.body.contains("unknown or was used"), "{}", r.body);

    // A link older than ten minutes is refused (after a new step-up: the old one is stale).
    let late = link_token(&t);
    t.clock.advance(Duration::from_secs(11 * 60));
    let r = send(&t, login(&late)).await;
    assert_eq!(r.error(), "step_up_stale");
    step_up(&t, &s).await;
    let r = send(&t, login(&late)).await;
    assert_eq!(
        (r.status, r.error()),
        (StatusCode::FORBIDDEN, "oauth_link".into())
    );
    assert!(r.body.contains("expired"), "{}", r.body);
}

#[tokio::test]
async fn the_callback_is_bound_by_its_state_checks_iss_expires_and_works_once() {
    let (t, source, server) = setup_oauth().await;
    let s = session(&t).await;
    let connect = || post("/api/mcp_servers/notes/connect", &s, json!({}));
    let r = send(&t, connect()).await;
    assert_eq!(r.error(), "step_up_required");
    let r = send(&t, post("/api/mcp_servers/other/connect", &s, json!({}))).await;
    assert_eq!(r.error(), "step_up_required", "the step-up comes first");
    step_up(&t, &s).await;
    let r = send(&t, post("/api/mcp_servers/other/connect", &s, json!({}))).await;
    assert_eq!(
        (r.status, r.error()),
        (StatusCode::NOT_FOUND, "not_found".into())
    );

    let begin = || async {
        let r = send(&t, connect()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.json()["issuer"], server.base.as_str());
        through_the_as(r.json()["redirect"].as_str().unwrap()).await
    };
    let cb = begin().await;
    assert!(cb.starts_with("/oauth/callback?"), "{cb}");
    let state = url::form_urlencoded::parse(cb.split_once('?').unwrap().1.as_bytes())
        .find(|(k, _)| k == "state")
        .unwrap()
        .1
        .into_owned();

    // Hostile callbacks, no session needed (none is sent on the cross-site redirect).
    let r = send(&t, get("/oauth/callback?code=x")).await;
    assert_eq!(
        (r.status, result_of(&r)),
        (StatusCode::BAD_REQUEST, "oauth_state".into())
    );
    let r = send(&t, get("/oauth/callback?state=not-ours&code=x")).await;
    assert_eq!(result_of(&r), "oauth_state");
    assert!(r.body.contains("unknown or was used"), "{}", r.body);
    let long = format!("/oauth/callback?state={state}&pad={}", "a".repeat(9000));
    let r = send(&t, get(&long)).await;
    assert_eq!(result_of(&r), "oauth_callback");
    assert!(r.body.contains("longer than 8192 bytes"), "{}", r.body);
    // An `iss` from another issuer (mix-up): refused before the code is redeemed.
    let mixed = cb.replace(
        &format!(
            "iss={}",
            url::form_urlencoded::byte_serialize(server.base.as_bytes()).collect::<String>()
        ),
        "iss=http%3A%2F%2F127.0.0.1%3A1",
    );
    assert_ne!(mixed, cb);
    let r = send(&t, get(&mixed)).await;
    assert_eq!(
        (r.status, result_of(&r)),
        (StatusCode::BAD_REQUEST, "oauth_iss".into())
    );
    // The authorization it belonged to is used up, whatever the outcome.
    let r = send(&t, get(&cb)).await;
    assert_eq!(result_of(&r), "oauth_state");
    assert_eq!(
        source.oauth.status().await,
        ::oauth::AuthStatus::NeedsAuthorization
    );

    // The owner declined at the authorization server: said so.
    let cb = begin().await;
    let declined = cb.replacen("code=", "error=access_denied&code=", 1);
    assert_ne!(declined, cb);
    let r = send(&t, get(&declined)).await;
    assert_eq!(result_of(&r), "oauth_declined", "{}", r.body);
    assert!(r.body.contains("access_denied"), "{}", r.body);

    // An authorization left waiting more than ten minutes is refused.
    let cb = begin().await;
    t.clock.advance(Duration::from_secs(11 * 60));
    let r = send(&t, get(&cb)).await;
    assert_eq!(
        (r.status, result_of(&r)),
        (StatusCode::BAD_REQUEST, "oauth_expired".into())
    );
    assert_eq!(source.redials.load(std::sync::atomic::Ordering::SeqCst), 0);

    // The good one: authorized, redialled, no token on the page; then it is used up.
    step_up(&t, &s).await;
    let cb = begin().await;
    let r = send(&t, get(&cb)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(result_of(&r), "authorized");
    assert!(
        r.body
            .contains(&format!("notes: authorized by {}", server.base)),
        "{}",
        r.body
    );
    assert!(
        !r.body.contains("access-") && !r.body.contains("refresh-"),
        "{}",
        r.body
    );
    assert_hardened(&r);
    assert_eq!(source.redials.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(matches!(
        source.oauth.status().await,
        ::oauth::AuthStatus::Authorized { .. }
    ));
    let r = send(&t, get(&cb)).await;
    assert_eq!(result_of(&r), "oauth_state");

    // Disconnect: behind the step-up too; forgets.
    t.clock.advance(Duration::from_secs(6 * 60));
    let disconnect = || post("/api/mcp_servers/notes/disconnect", &s, json!({}));
    let r = send(&t, disconnect()).await;
    assert_eq!(r.error(), "step_up_stale");
    step_up(&t, &s).await;
    let r = send(&t, disconnect()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        source.oauth.status().await,
        ::oauth::AuthStatus::NeedsAuthorization
    );
    assert_eq!(source.redials.load(std::sync::atomic::Ordering::SeqCst), 2);
}

/// A port held by someone else: the page is not listening (status says why and that it
/// retries), the daemon's side goes on, and once the port frees the page binds it and serves.
#[tokio::test]
async fn a_busy_port_is_retried_and_the_page_comes_up_when_it_frees() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use wire::views::PageListening;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let store = store::Store::open(&dir.path().join("maven.db"))
        .await
        .unwrap();
    let cfg = Config::parse(
        "config.json",
        json!({"web": {"listen": format!("127.0.0.1:{port}")}})
            .to_string()
            .as_bytes(),
        &|_| None,
    )
    .unwrap();
    let quick = backoff::Backoff::new(Duration::from_millis(20), Duration::from_millis(100));
    let page = Page::start(&cfg.web, 8, Arc::new(SystemClock), quick).await;
    let not_yet = |page: &Page| {
        let st = page.status();
        match st.listening {
            PageListening::NotListening {
                why,
                retrying: true,
            } => {
                assert!(
                    why.contains(&format!("cannot listen on 127.0.0.1:{port}")),
                    "{why}"
                );
                assert!(why.contains("in use"), "{why}");
                assert_eq!(st.url, format!("http://localhost:{port}/tools"));
            }
            other => panic!("the page says {other:?} while its port is taken"),
        }
        assert!(page.web().is_none());
    };
    not_yet(&page);
    // The configured port is known before it is bound: every sandbox still denies it.
    assert_eq!(page.port(), port);
    let cancel = CancellationToken::new();
    let host = PageHost::new(
        store.clone(),
        Arc::new(cfg) as Arc<dyn StatusSource>,
        Authorizations::none(),
        None,
    );
    let run = tokio::spawn(web::run(page.clone(), Arc::new(host), cancel.clone()));
    // Several retries fail meanwhile, and say so.
    tokio::time::sleep(Duration::from_millis(300)).await;
    not_yet(&page);
    drop(taken);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !matches!(page.status().listening, PageListening::Listening { .. }) {
        assert!(Instant::now() < deadline, "the page never came up");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        page.status().listening,
        PageListening::Listening {
            addr: format!("127.0.0.1:{port}")
        }
    );
    assert_eq!(
        page.status().listening.to_string(),
        format!("listening on 127.0.0.1:{port}")
    );
    assert_eq!(page.web().unwrap().addr().port(), port);
    // And it serves, with every layer in place.
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    s.write_all(
        format!("GET /api/session HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    let mut got = String::new();
    s.read_to_string(&mut got).await.unwrap();
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    assert!(got.contains("csrf_token"), "{got}");
    cancel.cancel();
    run.await.unwrap();
}

/// A free port is bound at start-up: status says where at once.
#[tokio::test]
async fn a_free_port_is_bound_at_start() {
    use wire::views::PageListening;
    let cfg = Config::parse(
        "config.json",
        json!({"web": {"listen": "127.0.0.1:0"}})
            .to_string()
            .as_bytes(),
        &|_| None,
    )
    .unwrap();
    let page = Page::start(&cfg.web, 8, Arc::new(SystemClock), web::backoff()).await;
    let port = page.web().unwrap().addr().port();
    assert_ne!(port, 0);
    assert_eq!(page.port(), port);
    assert_eq!(
        page.status().listening,
        PageListening::Listening {
            addr: format!("127.0.0.1:{port}")
        }
    );
    assert_eq!(page.status().url, format!("http://localhost:{port}/tools"));
}

fn mcp_row(server: &str, tool: &str, read_only: bool) -> NewTool {
    let name = format!("{server}_{tool}");
    NewTool {
        name: name.clone(),
        kind: store::ToolKind::Mcp,
        server: server.into(),
        tool: tool.into(),
        cmd: vec!["mcp".into(), server.into(), tool.into()],
        scope: format!("mcp:{server}"),
        destructive: !read_only,
        fingerprint: Some(format!("sha256:{}", "ab".repeat(32))),
        description: format!("{tool} on {server}"),
        shape: json!({"name": tool, "description": format!("{tool} on {server}"),
                      "inputSchema": {"type": "object"},
                      "annotations": {"readOnlyHint": read_only}}),
        provenance: format!("discovered on {server}"),
    }
}

async fn states(t: &T) -> Vec<(String, ToolState)> {
    t.store
        .tools()
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.name, r.state))
        .collect()
}

/// "Enable all read-only": one fresh step-up; exactly the server's proposed and disabled
/// read-only rows; a write tool, a withdrawn row, a changed row and another server's rows stay
/// as they were.
#[tokio::test]
async fn enabling_a_servers_read_only_tools_needs_a_step_up_and_never_enables_a_write_tool() {
    let t = setup().await;
    for (tool, read_only) in [
        ("list", true),
        ("get", true),
        ("delete", false),
        ("gone", true),
        ("off", true),
        ("changed", true),
    ] {
        t.store
            .propose_tool(mcp_row("kit", tool, read_only))
            .await
            .unwrap();
    }
    t.store
        .propose_tool(mcp_row("other", "list", true))
        .await
        .unwrap();
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    crate::testing::set_state(&t.store, "kit_gone", ToolState::Withdrawn, "gone")
        .await
        .unwrap();
    crate::testing::set_state(&t.store, "kit_off", ToolState::Disabled, "test")
        .await
        .unwrap();
    crate::testing::set_state(&t.store, "kit_changed", ToolState::Enabled, "test")
        .await
        .unwrap();
    let mut shape = mcp_row("kit", "changed", true).shape;
    shape["description"] = json!("now something else");
    let redefine = store::ToolChange::Redefine {
        name: "kit_changed".into(),
        redefinition: Redefinition {
            fingerprint: "sha256:cccc".into(),
            description: "now something else".into(),
            shape,
            cmd: None,
            raise_destructive: false,
            provenance: "redefined by kit: description changed".into(),
        },
    };
    t.store
        .apply_listing(move |_| (vec![redefine], ()))
        .await
        .unwrap();
    let before = states(&t).await;
    let path = "/api/mcp_servers/kit/enable_read_only";

    // No step-up, then a stale one: refused, and nothing changes.
    let s = session(&t).await;
    let r = send(&t, post(path, &s, json!({}))).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::UNAUTHORIZED, "step_up_required"),
        "{}",
        r.body
    );
    step_up(&t, &s).await;
    t.clock.advance(Duration::from_secs(301));
    let r = send(&t, post(path, &s, json!({}))).await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::UNAUTHORIZED, "step_up_stale")
    );
    assert_eq!(states(&t).await, before);

    // A fresh one: the read-only rows of kit that wait for the owner, and nothing else.
    step_up(&t, &s).await;
    let r = send(&t, post(path, &s, json!({}))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    assert_eq!(v["server"], "kit");
    assert_eq!(v["enabled"], json!(["kit_get", "kit_list", "kit_off"]));
    assert_eq!(
        v["left"],
        json!([
            {"name": "kit_changed", "why": "changed since you approved it: review it on its own"},
            {"name": "kit_delete", "why": "may write: enable it on its own"},
        ])
    );
    let after: std::collections::HashMap<_, _> = states(&t).await.into_iter().collect();
    for (name, state) in [
        ("kit_list", ToolState::Enabled),
        ("kit_get", ToolState::Enabled),
        ("kit_off", ToolState::Enabled),
        ("kit_delete", ToolState::Proposed),
        ("kit_gone", ToolState::Withdrawn),
        ("kit_changed", ToolState::Proposed),
        ("other_list", ToolState::Proposed),
        ("say_hi", ToolState::Proposed),
    ] {
        assert_eq!(after[name], state, "{name}");
    }
    let ev = &t.store.tool_events(Some("kit_list"), 1).await.unwrap()[0];
    assert_eq!(
        (ev.to, ev.actor.as_str(), ev.reason.as_str()),
        (
            ToolState::Enabled,
            "owner (passphrase)",
            "enabled on the page with the server's other read-only tools"
        )
    );
    // Again: nothing left to enable.
    let r = send(&t, post(path, &s, json!({}))).await;
    assert_eq!(r.json()["enabled"], json!([]));
    // No such server; and no GET does it.
    let r = send(
        &t,
        post("/api/mcp_servers/nope/enable_read_only", &s, json!({})),
    )
    .await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::NOT_FOUND, "not_found")
    );
    let r = send(&t, get_with(path, &s)).await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
}

/// A server whose tools churn keeps them proposed: the bulk enable is refused like the single
/// one.
#[tokio::test]
async fn an_unstable_servers_read_only_tools_stay_proposed() {
    struct Churning;
    impl StatusSource for Churning {
        fn mcp_servers(&self) -> BoxFuture<'_, Vec<wire::views::ServerStatusView>> {
            Box::pin(std::future::ready(Vec::new()))
        }
        fn feeds(&self) -> BoxFuture<'_, Vec<wire::views::FeedView>> {
            Box::pin(std::future::ready(Vec::new()))
        }
        fn unstable(&self, _server: &str) -> Option<String> {
            Some("changing its tools too often".into())
        }
    }
    let t = setup_with_status(
        json!({"web": {"passphrase_hash": cheap_hash(PASSPHRASE)}}),
        Some(Arc::new(Churning)),
    )
    .await;
    t.store
        .propose_tool(mcp_row("kit", "list", true))
        .await
        .unwrap();
    let s = owner(&t).await;
    let r = send(
        &t,
        post("/api/mcp_servers/kit/enable_read_only", &s, json!({})),
    )
    .await;
    assert_eq!(
        (r.status, r.error().as_str()),
        (StatusCode::CONFLICT, "unstable")
    );
    assert_eq!(
        t.store.tool("kit_list").await.unwrap().unwrap().state,
        ToolState::Proposed
    );
}

/// Enrolling a passkey signs the session in as a sign-in does (the owner data shows), and
/// makes no step-up: enabling still asks for one.
#[tokio::test]
async fn a_session_that_enrolled_a_passkey_is_signed_in_and_still_steps_up_to_enable() {
    let t = setup().await;
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    let s = session(&t).await;
    let r = send(&t, get_with("/api/tools", &s)).await;
    assert_eq!(r.error(), "sign_in_required");
    let value = s.cookie.split_once('=').unwrap().1.to_owned();
    assert!(web::testing::enrolled(&t.web, &value));
    let r = send(&t, get_with("/api/tools", &s)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = send(&t, get_with("/tools", &s)).await.body;
    assert!(page.contains("id=\"act-say_hi\""), "{page}");
    let v = send(&t, get_with("/api/session", &s)).await.json();
    assert!(v["signed_in_for_s"].as_u64().is_some(), "{v}");
    assert_eq!(v["step_up"], Value::Null);
    let r = send(&t, post("/api/tools/say_hi/enable", &s, json!({}))).await;
    assert_eq!(r.error(), "step_up_required");
    // The sign-in lasts web.session_hours (12 by default), like any other.
    t.clock.advance(Duration::from_secs(12 * 3600 + 1));
    let r = send(&t, get_with("/api/tools", &s)).await;
    assert_eq!(r.error(), "sign_in_required");
}

/// The page at scale: a folding section per server with its counts and its "Enable all
/// read-only" (counting only the rows it would enable), a filter box, a proposed row with
/// Enable alone, short fingerprints with the whole one on hover, times in words.
#[tokio::test]
async fn the_page_groups_acts_by_server_and_offers_only_what_it_does() {
    let t = setup().await;
    let o = owner(&t).await;
    for i in 0..10 {
        t.store
            .propose_tool(mcp_row("kit", &format!("read_{i}"), true))
            .await
            .unwrap();
    }
    t.store
        .propose_tool(mcp_row("kit", "wipe", false))
        .await
        .unwrap();
    t.store
        .propose_tool(mcp_row("todo", "list", true))
        .await
        .unwrap();
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    crate::testing::set_state(&t.store, "todo_list", ToolState::Enabled, "test")
        .await
        .unwrap();
    let page = send(&t, get_with("/tools", &o)).await.body;
    let section = |server: &str| {
        let start = page
            .find(&format!(
                "<details class=\"group\" data-server=\"{server}\""
            ))
            .unwrap_or_else(|| panic!("no section for {server:?}: {page}"));
        let end = page[start..]
            .find("</details><details class=\"group\"")
            .map_or(page[start..].find("</section>").unwrap(), |e| e);
        page[start..start + end].to_owned()
    };
    // 13 acts: more than fit open, so every section starts folded.
    let kit = section("kit");
    assert!(
        kit.starts_with("<details class=\"group\" data-server=\"kit\"><summary>"),
        "{kit}"
    );
    assert!(kit.contains("MCP server kit"), "{kit}");
    assert!(
        kit.contains("<span class=\"counts\">11 proposed</span>"),
        "{kit}"
    );
    assert!(
        kit.contains(
            "data-bulk=\"enable_read_only\" data-server=\"kit\">Enable all read-only (10)</button>"
        ),
        "{kit}"
    );
    assert_eq!(kit.matches("<article class=\"act\"").count(), 11);
    let todo = section("todo");
    assert!(todo.contains("1 enabled"), "{todo}");
    assert!(!todo.contains("data-bulk"), "nothing of todo waits: {todo}");
    let local = section("");
    assert!(
        local.contains("The configuration&#39;s acts")
            || local.contains("The configuration's acts")
    );
    assert!(
        !local.contains("data-bulk"),
        "only an MCP server's tools: {local}"
    );
    assert!(page.contains("<input type=\"search\" id=\"filter\""));
    // A proposed row: Enable, no Disable. An enabled one: Disable.
    assert!(page.contains("data-action=\"enable\" data-name=\"kit_read_0\""));
    assert!(!page.contains("data-action=\"disable\" data-name=\"kit_read_0\""));
    assert!(page.contains("data-action=\"disable\" data-name=\"todo_list\""));
    // The fingerprint: short, the whole one on hover.
    let full = format!("sha256:{}", "ab".repeat(32));
    assert!(
        page.contains(&format!(
            "<code class=\"fingerprint\" title=\"{full}\">sha256:abababababab…</code>"
        )),
        "{page}"
    );
    assert!(!page.contains(&format!(">{full}<")));
    // History times: words, the exact time on hover.
    assert!(page.contains("<time datetime=\""), "{page}");
    assert!(page.contains("just now</time>"), "{page}");
    // Few acts: the sections are open.
    let t = setup().await;
    let o = owner(&t).await;
    t.store
        .propose_tool(mcp_row("kit", "list", true))
        .await
        .unwrap();
    let page = send(&t, get_with("/tools", &o)).await.body;
    assert!(
        page.contains("<details class=\"group\" data-server=\"kit\" open>"),
        "{page}"
    );
}

#[test]
fn names() {
    for (n, ok) in [
        ("a", true),
        ("demo_list-tasks.v2", true),
        ("", false),
        ("a/b", false),
        ("a b", false),
    ] {
        assert_eq!(valid_name(n), ok, "{n:?}");
    }
    assert!(!valid_name(&"x".repeat(161)));
}

#[test]
fn the_pages_states_are_the_stores_by_name_and_order() {
    for s in ToolState::ALL {
        let a = act_state(s);
        assert_eq!(a.as_str(), s.as_str());
        assert_eq!(a.to_string(), s.to_string());
        assert_eq!(tool_state(a), s);
    }
    assert_eq!(wire::views::ActState::ALL.map(tool_state), ToolState::ALL);
}

#[tokio::test]
async fn a_host_without_a_turn_pipeline_refuses_the_turn_and_runs_nothing() {
    let t = setup().await;
    t.store.propose_tool(local("say_hi", true)).await.unwrap();
    let host = PageHost::new(
        t.store.clone(),
        Arc::new(Asking) as Arc<dyn StatusSource>,
        Authorizations::none(),
        None,
    );
    let answer = web::Host::turn(&host, "page", "say_hi").await;
    assert!(!answer.ok);
    assert!(t.store.acts_log(10).await.unwrap().is_empty());
}
