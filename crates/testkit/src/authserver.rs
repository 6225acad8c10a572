//! A loopback OAuth authorization server that is also the MCP server it protects, well-behaved
//! or hostile in one chosen way, for the tests of the `mcp` crate's OAuth flow (and the
//! daemon's). It listens on 127.0.0.1 only, issues fixed tokens, and records every request
//! it receives (`METHOD path`).

use std::convert::Infallible;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::{json, Value};

/// How the server misbehaves.
#[derive(Debug, Clone, PartialEq)]
pub enum Hostile {
    /// Not at all.
    None,
    /// The protected resource metadata names this authorization server (a private or
    /// link-local URL).
    AuthorizationServer(String),
    /// The AS metadata names this token endpoint.
    TokenEndpoint(String),
    /// The AS metadata names this authorization endpoint (`javascript:…`).
    AuthorizationEndpoint(String),
    /// The AS metadata's issuer is another.
    WrongIssuer,
    /// The callback carries the `iss` of another AS (mix-up).
    MixUp,
    /// The protected resource metadata answers with a redirect to this URL.
    RedirectMetadata(String),
    /// The AS metadata is this many bytes.
    HugeMetadata(usize),
    /// The token answer's `token_type`.
    TokenType(String),
    /// The token answer's `expires_in`.
    ExpiresIn(Value),
    /// Every refresh is refused as a replay (`invalid_grant`).
    RefreshReplayed,
    /// Every authorized MCP request is answered 403 `insufficient_scope`, with a new scope
    /// each time.
    EndlessScope,
    /// No PKCE S256 in the metadata.
    NoS256,
    /// The AS offers DPoP (ES256) and binds tokens when a proof comes; the MCP server reads
    /// only `Bearer` and says nothing of DPoP (the Python SDK's resource server as it ships).
    DpopAsOnly,
    /// Both ends speak DPoP: the protected resource metadata lists
    /// `dpop_signing_alg_values_supported`, and the MCP server takes a `DPoP` token with a
    /// proof (and a `Bearer` one).
    DpopBoth,
    /// The protected resource metadata claims DPoP, but the MCP server reads only `Bearer`
    /// and refuses anything else with a `Bearer`-only challenge.
    DpopClaimed,
    /// An OpenID provider's offline rule (OpenID Connect Core §11): metadata only at the
    /// OpenID configuration location, and a refresh token only when `offline_access` was
    /// asked with `prompt=consent`.
    OpenId,
    /// The token answers carry no refresh token, and their tokens live 4 s.
    NoRefreshToken,
    /// The protected resource metadata drips one byte a second.
    DripMetadata,
    /// The token endpoint refuses every grant but the authorization code and refresh
    /// (`invalid_grant`, "the assertion expired"), as a server refuses a stale workload token.
    RefusesGrant,
    /// The token endpoint refuses a client that authenticates two ways at once (Basic and a
    /// `client_id` in the body), as Cloudflare's workers-oauth-provider does:
    /// `invalid_request` "Client must not use multiple authentication methods".
    OneAuthMethod,
    /// The token endpoint refuses Basic without a `client_id` in the body, as the Python
    /// SDK's authorization server does: 401 `invalid_client` "Missing client_id".
    ClientIdInBody,
}

impl Hostile {
    fn as_dpop(&self) -> bool {
        matches!(
            self,
            Hostile::DpopAsOnly | Hostile::DpopBoth | Hostile::DpopClaimed
        )
    }
}

struct State {
    hostile: Hostile,
    base: String,
    hits: Mutex<Vec<String>>,
    tokens: AtomicU32,
    step: AtomicU32,
    /// The last authorization request asked `prompt=consent` with `offline_access`.
    consent: std::sync::atomic::AtomicBool,
    /// Refresh tokens not used yet (rotation: each works once; a replay revokes the grant,
    /// as a provider that detects reuse does).
    refresh: Mutex<std::collections::HashSet<String>>,
    /// The grant was revoked (a refresh token replayed, or revoked): every token is refused.
    revoked: std::sync::atomic::AtomicBool,
    /// When each access token issued expires (an expired one is refused).
    expiry: Mutex<std::collections::HashMap<String, std::time::Instant>>,
}

/// The running server (it stops with the runtime).
pub struct AuthServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    state: Arc<State>,
}

impl AuthServer {
    /// Start one on 127.0.0.1.
    #[expect(
        clippy::disallowed_methods,
        reason = "a test server, not a door of Maven's"
    )]
    pub async fn start(hostile: Hostile) -> std::io::Result<AuthServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let base = format!("http://{}", listener.local_addr()?);
        let state = Arc::new(State {
            hostile,
            base: base.clone(),
            hits: Mutex::new(Vec::new()),
            tokens: AtomicU32::new(0),
            step: AtomicU32::new(0),
            consent: Default::default(),
            refresh: Default::default(),
            revoked: Default::default(),
            expiry: Default::default(),
        });
        let s = state.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let s = s.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let s = s.clone();
                        async move {
                            let dripping = s.hostile == Hostile::DripMetadata
                                && req.uri().path() == "/.well-known/oauth-protected-resource/mcp";
                            if dripping {
                                s.hits
                                    .lock()
                                    .unwrap_or_else(|p| p.into_inner())
                                    .push(format!("{} {}", req.method(), req.uri().path()));
                                return Ok::<_, Infallible>(drip(&s.base));
                            }
                            Ok::<_, Infallible>(handle(s, req).await.map(BodyExt::boxed_unsync))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Ok(AuthServer { base, state })
    }

    /// The MCP endpoint (the protected resource).
    pub fn resource_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// The protected resource metadata URL.
    pub fn resource_metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.base)
    }

    /// Every request received so far (`METHOD path`).
    pub fn hits(&self) -> Vec<String> {
        self.state
            .hits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether the grant was revoked (a refresh token replayed, or a token revoked).
    pub fn revoked(&self) -> bool {
        self.state.revoked.load(Ordering::SeqCst)
    }

    /// How many requests matched `METHOD path`.
    pub fn count(&self, what: &str) -> usize {
        self.hits().iter().filter(|h| *h == what).count()
    }
}

fn reply(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

fn json_reply(v: Value) -> Response<Full<Bytes>> {
    reply(StatusCode::OK, v.to_string())
}

fn with_header(
    mut r: Response<Full<Bytes>>,
    name: &'static str,
    value: &str,
) -> Response<Full<Bytes>> {
    if let Ok(v) = hyper::header::HeaderValue::from_str(value) {
        r.headers_mut().insert(name, v);
    }
    r
}

fn query(uri: &hyper::Uri) -> Vec<(String, String)> {
    uri.query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

#[expect(
    clippy::disallowed_methods,
    reason = "the test authorization server's token lifetimes are wall-clock time"
)]
async fn handle(s: Arc<State>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let method = req.method().clone();
    let uri = req.uri().clone();
    let path = uri.path().to_owned();
    let auth = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let proof = req.headers().contains_key("dpop");
    s.hits
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(format!("{method} {path}"));
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let base = &s.base;
    match (method.as_str(), path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => {
            if let Hostile::RedirectMetadata(to) = &s.hostile {
                return with_header(reply(StatusCode::FOUND, ""), "location", to);
            }
            let issuer = match &s.hostile {
                Hostile::AuthorizationServer(u) => u.clone(),
                _ => base.clone(),
            };
            let mut doc = json!({
                "resource": format!("{base}/mcp"),
                "authorization_servers": [issuer],
            });
            if matches!(s.hostile, Hostile::DpopBoth | Hostile::DpopClaimed) {
                doc["dpop_signing_alg_values_supported"] = json!(["ES256"]);
            }
            json_reply(doc)
        }
        ("GET", "/.well-known/oauth-authorization-server") if s.hostile == Hostile::OpenId => {
            reply(StatusCode::NOT_FOUND, "{}")
        }
        ("GET", "/.well-known/oauth-authorization-server")
        | ("GET", "/.well-known/openid-configuration") => {
            if let Hostile::HugeMetadata(n) = &s.hostile {
                let mut doc = format!("{{\"issuer\":\"{base}\",\"pad\":\"");
                doc.push_str(&"x".repeat(*n));
                doc.push_str("\"}");
                return reply(StatusCode::OK, doc);
            }
            let issuer = match &s.hostile {
                Hostile::WrongIssuer => "https://attacker.example".to_owned(),
                _ => base.clone(),
            };
            let authorization_endpoint = match &s.hostile {
                Hostile::AuthorizationEndpoint(u) => u.clone(),
                _ => format!("{base}/authorize"),
            };
            let token_endpoint = match &s.hostile {
                Hostile::TokenEndpoint(u) => u.clone(),
                _ => format!("{base}/token"),
            };
            let pkce = if s.hostile == Hostile::NoS256 {
                json!(["plain"])
            } else {
                json!(["S256"])
            };
            let mut doc = json!({
                "issuer": issuer,
                "authorization_endpoint": authorization_endpoint,
                "token_endpoint": token_endpoint,
                "registration_endpoint": format!("{base}/register"),
                "revocation_endpoint": format!("{base}/revoke"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": pkce,
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": true,
                "scopes_supported": ["s0", "offline_access"],
            });
            if s.hostile.as_dpop() {
                doc["dpop_signing_alg_values_supported"] = json!(["ES256"]);
            }
            if s.hostile == Hostile::OpenId {
                doc["prompt_values_supported"] = json!(["none", "login", "consent"]);
            }
            json_reply(doc)
        }
        ("POST", "/register") => reply(
            StatusCode::CREATED,
            json!({"client_id": "hostile-client", "token_endpoint_auth_method": "none"})
                .to_string(),
        ),
        ("GET", "/authorize") => {
            let q = query(&uri);
            let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            let Some(redirect) = get("redirect_uri") else {
                return reply(StatusCode::BAD_REQUEST, "{}");
            };
            let offline = get("scope").is_some_and(|x| x.split(' ').any(|w| w == "offline_access"));
            s.consent.store(
                offline && get("prompt").as_deref() == Some("consent"),
                Ordering::SeqCst,
            );
            let iss = if s.hostile == Hostile::MixUp {
                "https://other-as.example".to_owned()
            } else {
                base.clone()
            };
            let mut to = format!(
                "{redirect}?code=the-code&state={}&iss={}",
                url::form_urlencoded::byte_serialize(get("state").unwrap_or_default().as_bytes())
                    .collect::<String>(),
                url::form_urlencoded::byte_serialize(iss.as_bytes()).collect::<String>()
            );
            if redirect.contains('?') {
                to = to.replacen('?', "&", 1);
            }
            with_header(reply(StatusCode::FOUND, ""), "location", &to)
        }
        ("POST", "/token") => {
            let form: Vec<(String, String)> = url::form_urlencoded::parse(&body)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            let basic = auth.as_deref().is_some_and(|a| a.starts_with("Basic "));
            let id_in_body = form.iter().any(|(k, _)| k == "client_id");
            if s.hostile == Hostile::OneAuthMethod && basic && id_in_body {
                return reply(
                    StatusCode::BAD_REQUEST,
                    json!({"error": "invalid_request", "error_description": "Client must not use multiple authentication methods"})
                        .to_string(),
                );
            }
            if s.hostile == Hostile::ClientIdInBody && basic && !id_in_body {
                return reply(
                    StatusCode::UNAUTHORIZED,
                    json!({"error": "invalid_client", "error_description": "Missing client_id"})
                        .to_string(),
                );
            }
            let grant = form
                .iter()
                .find(|(k, _)| k == "grant_type")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            if s.hostile == Hostile::RefusesGrant
                && grant != "authorization_code"
                && grant != "refresh_token"
            {
                return reply(
                    StatusCode::BAD_REQUEST,
                    json!({"error": "invalid_grant", "error_description": "the assertion expired"})
                        .to_string(),
                );
            }
            let replayed = || {
                reply(
                    StatusCode::BAD_REQUEST,
                    json!({"error": "invalid_grant", "error_description": "refresh token replayed"})
                        .to_string(),
                )
            };
            if grant == "refresh_token" && s.hostile == Hostile::RefreshReplayed {
                return replayed();
            }
            if grant == "refresh_token" {
                let used = form
                    .iter()
                    .find(|(k, _)| k == "refresh_token")
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                let fresh = s
                    .refresh
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&used);
                if !fresh {
                    // Reuse detected: the whole grant is revoked.
                    s.revoked.store(true, Ordering::SeqCst);
                    return replayed();
                }
            }
            let n = s.tokens.fetch_add(1, Ordering::Relaxed);
            let token_type = match &s.hostile {
                Hostile::TokenType(t) => t.clone(),
                h if h.as_dpop() && proof => "DPoP".to_owned(),
                _ => "Bearer".to_owned(),
            };
            let expires_in = match &s.hostile {
                Hostile::ExpiresIn(v) => v.clone(),
                Hostile::NoRefreshToken => json!(4),
                _ => json!(3600),
            };
            if let Some(secs) = expires_in.as_u64() {
                s.expiry.lock().unwrap_or_else(|p| p.into_inner()).insert(
                    format!("access-{n}"),
                    std::time::Instant::now() + std::time::Duration::from_secs(secs),
                );
            }
            let mut answer = json!({
                "access_token": format!("access-{n}"),
                "token_type": token_type,
                "expires_in": expires_in,
            });
            let refresh = match s.hostile {
                Hostile::NoRefreshToken => false,
                Hostile::OpenId => s.consent.load(Ordering::SeqCst),
                _ => true,
            };
            if refresh {
                let r = format!("refresh-{n}");
                s.refresh
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(r.clone());
                answer["refresh_token"] = r.into();
            }
            json_reply(answer)
        }
        ("POST", "/revoke") => reply(StatusCode::OK, ""),
        ("POST", "/mcp") => mcp(&s, auth.as_deref(), proof, &body),
        _ => reply(StatusCode::NOT_FOUND, "{}"),
    }
}

/// The protected MCP endpoint: 401 without a token; with one, a minimal server (initialize,
/// tools/list with one tool, tools/call echoing), or an endless scope challenge.
#[expect(
    clippy::disallowed_methods,
    reason = "the test authorization server's token lifetimes are wall-clock time"
)]
fn mcp(s: &State, auth: Option<&str>, proof: bool, body: &[u8]) -> Response<Full<Bytes>> {
    let prm = format!("{}/.well-known/oauth-protected-resource/mcp", s.base);
    let dpop_rs = s.hostile == Hostile::DpopBoth;
    let token = match auth {
        Some(a) if a.starts_with("Bearer ") => a.strip_prefix("Bearer "),
        Some(a) if dpop_rs && proof => a.strip_prefix("DPoP "),
        _ => None,
    };
    let Some(token) = token else {
        let (status, challenge) = match auth {
            // A token in a scheme this server does not read.
            Some(_) => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer error=\"invalid_token\", error_description=\"Authentication required\", resource_metadata=\"{prm}\""),
            ),
            None if dpop_rs => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer resource_metadata=\"{prm}\", scope=\"s0\", DPoP algs=\"ES256\""),
            ),
            None => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer resource_metadata=\"{prm}\", scope=\"s0\""),
            ),
        };
        return with_header(
            reply(status, "{\"error\":\"invalid_token\"}"),
            "www-authenticate",
            &challenge,
        );
    };
    let expired = s
        .expiry
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(token)
        .is_some_and(|e| *e <= std::time::Instant::now());
    if !token.starts_with("access-") || s.revoked.load(Ordering::SeqCst) || expired {
        return with_header(
            reply(StatusCode::UNAUTHORIZED, "{\"error\":\"invalid_token\"}"),
            "www-authenticate",
            &format!("Bearer resource_metadata=\"{prm}\", error=\"invalid_token\""),
        );
    }
    if s.hostile == Hostile::EndlessScope {
        let n = s.step.fetch_add(1, Ordering::Relaxed) + 1;
        return with_header(
            reply(StatusCode::FORBIDDEN, "{\"error\":\"insufficient_scope\"}"),
            "www-authenticate",
            &format!(
                "Bearer error=\"insufficient_scope\", scope=\"s{n}\", resource_metadata=\"{prm}\""
            ),
        );
    }
    let msg: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let Some(id) = msg.get("id").cloned() else {
        return reply(StatusCode::ACCEPTED, "");
    };
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let result = match method {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "authserver", "version": "1"},
        }),
        "tools/list" => json!({"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": token}]}),
        _ => {
            return json_reply(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
            )
        }
    };
    json_reply(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

type BoxBody = http_body_util::combinators::UnsyncBoxBody<Bytes, Infallible>;

/// A body fed by a channel.
struct ChannelBody(tokio::sync::mpsc::Receiver<Bytes>);

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|o| o.map(|b| Ok(hyper::body::Frame::data(b))))
    }
}

/// The protected resource metadata, a 200 whose body comes one byte a second (a hostile,
/// slow metadata endpoint: it never finishes within any deadline of the flow).
fn drip(base: &str) -> Response<BoxBody> {
    let doc = json!({
        "resource": format!("{base}/mcp"),
        "authorization_servers": [base],
    })
    .to_string();
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tokio::spawn(async move {
        for b in doc.into_bytes() {
            if tx.send(Bytes::from(vec![b])).await.is_err() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
    });
    let mut r = Response::new(BodyExt::boxed_unsync(ChannelBody(rx)));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

/// A headless user agent: GETs the authorization URL through a door (its own policy holds)
/// without following the redirect, and hands back the redirect's `Location` (the callback
/// with `code`, `state`, `iss`), as the page's `/oauth/callback` would receive it. Loopback
/// URLs only; `dial` maps a URL before it is fetched (the conformance suite's `localhost`).
pub struct Headless {
    /// The door it fetches through.
    pub fetcher: webfetch::Fetcher,
    /// Rewrites the URL before it is fetched.
    pub dial: fn(&str) -> String,
    /// Deadline of the request.
    pub deadline: std::time::Duration,
}

impl oauth::UserAgent for Headless {
    fn authorize(
        &self,
        url: String,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<String, oauth::AuthError>> + Send + '_>,
    > {
        Box::pin(async move {
            let refuse = |reason: String| oauth::AuthError::Fetch {
                what: "authorization request",
                url: String::new(),
                reason,
            };
            let dialled = (self.dial)(&url);
            let loopback = url::Url::parse(&dialled)
                .ok()
                .is_some_and(|u| match u.host() {
                    Some(url::Host::Ipv4(a)) => a.is_loopback(),
                    Some(url::Host::Ipv6(a)) => a.is_loopback(),
                    _ => false,
                });
            if !loopback {
                return Err(refuse(format!("not a loopback URL: {url}")));
            }
            let req = webfetch::Request::get(dialled)
                .follow_redirects(false)
                .timeout(self.deadline);
            let resp = self
                .fetcher
                .send(req)
                .await
                .map_err(|e| refuse(e.to_string()))?;
            if !resp.status().is_redirection() {
                return Err(refuse(format!(
                    "HTTP {} instead of a redirect",
                    resp.status()
                )));
            }
            resp.header_str(webfetch::header::LOCATION)
                .map(str::to_owned)
                .ok_or_else(|| refuse("a redirect without Location".to_owned()))
        })
    }
}
