//! The OAuth flow of the mcp client against the test kit's loopback authorization server,
//! well-behaved and hostile: each hostile one gets its specific error, and nothing is dialled
//! but loopback 127.0.0.1 (the recording dialer says so).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp::{Client, Error, McpTimeouts, ServerConfig, Transport};
use oauth::{
    AuthError, AuthStatus, Challenge, CredentialStore, DpopMode, MemoryStore, OAuth, OAuthConfig,
};
use serde_json::json;
use testkit::authserver::{AuthServer, Headless, Hostile};

use crate::support::{bounded, options};

type Dialled = Arc<Mutex<Vec<SocketAddr>>>;

fn door(allow_private: bool) -> webfetch::DoorConfig {
    let mut door = webfetch::DoorConfig::new("mcp:authserver");
    door.allow_private = allow_private;
    door.host_interval = Duration::ZERO;
    door
}

fn fetcher(allow_private: bool, dialled: &Dialled) -> webfetch::Fetcher {
    let seen = dialled.clone();
    webfetch::Fetcher::builder(door(allow_private))
        .on_dial(move |a| seen.lock().unwrap().push(a))
        .build()
}

struct Setup {
    oauth: Arc<OAuth>,
    store: Arc<MemoryStore>,
    fetcher: webfetch::Fetcher,
    dialled: Dialled,
}

fn setup(server: &AuthServer, allow_private: bool, agent: bool) -> Setup {
    setup_dpop(server, allow_private, agent, DpopMode::Auto)
}

fn setup_dpop(server: &AuthServer, allow_private: bool, agent: bool, mode: DpopMode) -> Setup {
    let dialled: Dialled = Arc::default();
    let fetcher = fetcher(allow_private, &dialled);
    let store = Arc::new(MemoryStore::default());
    let mut oauth = OAuth::new(
        OAuthConfig {
            server: "hostile".to_owned(),
            resource_url: server.resource_url(),
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            redirect_uri: "http://127.0.0.1:9/oauth/callback".to_owned(),
            client_name: "maven-test".to_owned(),
        },
        fetcher.clone(),
        store.clone(),
    )
    .with_dpop(mode);
    if agent {
        oauth = oauth.with_user_agent(Arc::new(Headless {
            fetcher: fetcher.clone(),
            dial: str::to_owned,
            deadline: Duration::from_secs(5),
        }));
    }
    Setup {
        oauth: Arc::new(oauth),
        store,
        fetcher,
        dialled,
    }
}

fn config(server: &AuthServer) -> ServerConfig {
    config_era(server, mcp::Protocol::Legacy)
}

fn config_era(server: &AuthServer, protocol: mcp::Protocol) -> ServerConfig {
    ServerConfig {
        protocol,
        name: "hostile".to_owned(),
        transport: Transport::Http {
            url: server.resource_url(),
            headers: Default::default(),
            door: door(true),
        },
        timeouts: McpTimeouts {
            init: Duration::from_secs(20),
            list: Duration::from_secs(20),
            call: Duration::from_secs(20),
        },
    }
}

async fn connect(server: &AuthServer, s: &Setup) -> Result<Client, Error> {
    let mut opts = options();
    opts.oauth = Some(s.oauth.clone());
    opts.http_fetcher = Some(s.fetcher.clone());
    Client::connect(&config(server), opts).await
}

/// A server of this kind, its authorization through the headless user agent, and the
/// connection's error (the authorization refused it).
async fn refused(hostile: Hostile) -> (AuthServer, Setup, AuthError) {
    let server = AuthServer::start(hostile).await.unwrap();
    let s = setup(&server, true, true);
    let e = auth_error(connect(&server, &s).await.unwrap_err());
    (server, s, e)
}

/// A server of this kind, its authorization through the headless user agent, and the
/// connection it authorized.
async fn connected(hostile: Hostile) -> (AuthServer, Setup, Client) {
    let server = AuthServer::start(hostile).await.unwrap();
    let s = setup(&server, true, true);
    let c = connect(&server, &s).await.unwrap();
    (server, s, c)
}

fn auth_error(e: Error) -> AuthError {
    match e {
        Error::Auth(a) => a,
        other => panic!("not an authorization error: {other:?}"),
    }
}

fn only_loopback(d: &Dialled) {
    let d = d.lock().unwrap().clone();
    assert!(!d.is_empty());
    assert!(
        d.iter().all(|a| a.ip() == IpAddr::V4(Ipv4Addr::LOCALHOST)),
        "dialled {d:?}"
    );
}

#[tokio::test]
async fn a_well_behaved_server_is_authorized_refreshed_and_forgotten() {
    bounded(async {
        let (server, s, c) = connected(Hostile::None).await;
        let tools = c.list_tools().await.unwrap();
        assert_eq!(tools.tools.len(), 1);
        let out = c.call_tool("whoami", Default::default()).await.unwrap();
        assert_eq!(out.text, "access-0");
        let AuthStatus::Authorized {
            issuer,
            scopes,
            refresh,
            expires_at,
        } = s.oauth.status().await
        else {
            panic!("not authorized")
        };
        assert_eq!(issuer, server.base);
        // The challenge's scope, and offline_access since the AS offers it.
        assert_eq!(scopes, ["s0", "offline_access"]);
        assert!(refresh && expires_at.is_some());
        assert_eq!(server.count("POST /register"), 1);
        assert_eq!(server.count("GET /authorize"), 1);

        // Refresh with rotation: the new tokens are used and kept.
        s.oauth.refresh_now().await.unwrap();
        let out = c.call_tool("whoami", Default::default()).await.unwrap();
        assert_eq!(out.text, "access-1");
        let kept = s.store.load("hostile").await.unwrap();
        assert_eq!(kept.len(), 1, "one row per (server, issuer)");
        let t = kept[0].tokens.as_ref().unwrap();
        assert_eq!(t.refresh_token.as_deref(), Some("refresh-1"));
        // Debug never shows a secret.
        let shown = format!("{kept:?}");
        assert!(
            !shown.contains("access-1") && !shown.contains("refresh-1"),
            "{shown}"
        );

        s.oauth.logout().await.unwrap();
        assert_eq!(s.oauth.status().await, AuthStatus::NeedsAuthorization);
        assert!(s.store.load("hostile").await.unwrap().is_empty());
        assert_eq!(
            server.count("POST /revoke"),
            2,
            "refresh and access token revoked"
        );
        c.close().await;
        only_loopback(&s.dialled);
    })
    .await;
}

#[tokio::test]
async fn without_a_user_agent_the_server_needs_authorization_and_discovery_is_kept() {
    bounded(async {
        let server = AuthServer::start(Hostile::None).await.unwrap();
        let s = setup(&server, true, false);
        let e = auth_error(connect(&server, &s).await.unwrap_err());
        assert_eq!(e, AuthError::NeedsAuthorization);
        // The dial ends at the 401, and nothing else is fetched.
        assert_eq!(server.hits(), ["POST /mcp"], "one request, one 401");
        assert!(s.oauth.last_discovery().await.is_none());
        assert_eq!(
            s.oauth.needs_authorization().as_deref(),
            Some("the server asks for authorization")
        );
        // Discovery where the owner asks for it (inspect, Connect): from the kept challenge.
        let challenge = s.oauth.last_challenge().await.unwrap();
        s.oauth.discover(&challenge).await.unwrap();
        let d = s.oauth.last_discovery().await.unwrap().unwrap();
        assert_eq!(d.server.issuer, server.base);
        assert_eq!(
            d.resource.unwrap().url,
            server.resource_metadata_url(),
            "from the challenge"
        );
        assert_eq!(d.challenge_scope, Some(vec!["s0".to_owned()]));
        assert_eq!(server.count("GET /authorize"), 0, "never an authorization");
        assert_eq!(server.count("POST /register"), 0);
    })
    .await;
}

#[tokio::test]
async fn a_link_local_authorization_server_is_refused_without_a_connection() {
    bounded(async {
        let (_server, s, e) = refused(Hostile::AuthorizationServer(
            "http://169.254.169.254/".to_owned(),
        ))
        .await;
        assert!(
            matches!(&e, AuthError::Endpoint { what: "authorization server metadata", reason, .. }
                if reason.contains("169.254.169.254")),
            "{e:?}"
        );
        only_loopback(&s.dialled);
    })
    .await;
}

#[tokio::test]
async fn a_token_endpoint_at_the_metadata_address_is_refused_before_anything_is_shown() {
    bounded(async {
        let (server, s, e) = refused(Hostile::TokenEndpoint(
            "https://169.254.169.254/token".to_owned(),
        ))
        .await;
        assert!(
            matches!(
                &e,
                AuthError::Endpoint {
                    what: "token endpoint",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(server.count("GET /authorize"), 0);
        only_loopback(&s.dialled);
    })
    .await;
}

#[tokio::test]
async fn a_javascript_authorization_endpoint_is_refused_before_anything_is_shown() {
    bounded(async {
        let (server, _s, e) = refused(Hostile::AuthorizationEndpoint(
            "javascript:alert(document.cookie)".to_owned(),
        ))
        .await;
        assert!(
            matches!(&e, AuthError::Endpoint { what: "authorization endpoint", reason, .. }
                if reason.contains("javascript")),
            "{e:?}"
        );
        assert_eq!(server.count("POST /register"), 0);
    })
    .await;
}

#[tokio::test]
async fn an_issuer_that_does_not_match_is_refused() {
    bounded(async {
        let (server, _s, e) = refused(Hostile::WrongIssuer).await;
        assert_eq!(
            e,
            AuthError::IssuerMismatch {
                expected: server.base.clone(),
                found: "https://attacker.example".to_owned()
            }
        );
        assert_eq!(server.count("GET /authorize"), 0);
    })
    .await;
}

#[tokio::test]
async fn an_iss_from_another_server_in_the_callback_is_refused_before_the_code_is_redeemed() {
    bounded(async {
        let (server, _s, e) = refused(Hostile::MixUp).await;
        assert_eq!(
            e,
            AuthError::IssMismatch {
                expected: server.base.clone(),
                found: Some("https://other-as.example".to_owned())
            }
        );
        assert_eq!(server.count("POST /token"), 0, "the code was not redeemed");
    })
    .await;
}

#[tokio::test]
async fn a_redirect_on_a_metadata_fetch_is_not_followed() {
    bounded(async {
        let (server, s, e) = refused(Hostile::RedirectMetadata(
            "http://127.0.0.3:9/elsewhere".to_owned(),
        ))
        .await;
        assert_eq!(
            e,
            AuthError::Redirect {
                what: "protected resource metadata",
                url: server.resource_metadata_url(),
                status: 302
            }
        );
        only_loopback(&s.dialled);
    })
    .await;
}

/// A protected resource metadata endpoint that drips one byte a second, met by a first
/// authorization that runs inside `initialize`: when `initialize`'s own deadline passes first,
/// the error names the discovery step and its URL, not `initialize`.
#[tokio::test]
async fn a_dripping_metadata_endpoint_is_named_when_initialize_times_out_first() {
    bounded(async {
        let server = AuthServer::start(Hostile::DripMetadata).await.unwrap();
        let s = setup(&server, true, true);
        for (protocol, init) in [
            (mcp::Protocol::Legacy, Duration::from_secs(3)),
            (mcp::Protocol::Modern, Duration::from_secs(3)),
        ] {
            let mut cfg = config_era(&server, protocol);
            cfg.timeouts.init = init;
            let mut opts = options();
            opts.oauth = Some(s.oauth.clone());
            opts.http_fetcher = Some(s.fetcher.clone());
            let t = tokio::time::Instant::now();
            let e = Client::connect(&cfg, opts).await.unwrap_err();
            assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
            let e = auth_error(e);
            assert_eq!(
                e,
                AuthError::Timeout {
                    what: "protected resource metadata",
                    url: server.resource_metadata_url(),
                    secs: 3
                },
                "{protocol:?}"
            );
            assert_eq!(
                e.to_string(),
                format!(
                    "protected resource metadata at {}: no answer within 3 s",
                    server.resource_metadata_url()
                )
            );
        }
        assert!(
            s.oauth.stalled().is_none(),
            "a dropped request of the flow is waited on no more"
        );
    })
    .await;
}

/// A grant that needs no person, with a user agent at hand: a refused jwt-bearer grant is the
/// error, asked once, never followed by another grant (no authorization page, no second token
/// request).
#[tokio::test]
async fn a_refused_jwt_bearer_grant_is_the_error_and_never_falls_back() {
    bounded(async {
        let server = AuthServer::start(Hostile::RefusesGrant).await.unwrap();
        let mut s = setup(&server, true, true);
        s.oauth = Arc::new(
            OAuth::new(
                OAuthConfig {
                    server: "hostile".to_owned(),
                    resource_url: server.resource_url(),
                    client_id: Some("workload".to_owned()),
                    client_secret: None,
                    client_metadata_url: None,
                    redirect_uri: "http://127.0.0.1:9/oauth/callback".to_owned(),
                    client_name: "maven-test".to_owned(),
                },
                s.fetcher.clone(),
                s.store.clone(),
            )
            .with_user_agent(Arc::new(Headless {
                fetcher: s.fetcher.clone(),
                dial: str::to_owned,
                deadline: Duration::from_secs(5),
            }))
            .with_grant(oauth::Grant::JwtBearer(oauth::TokenSource::Value(
                "a.workload.jwt".to_owned(),
            ))),
        );
        let e = auth_error(connect(&server, &s).await.unwrap_err());
        assert_eq!(
            e,
            AuthError::Refused {
                what: "token request",
                error: "invalid_grant".to_owned(),
                description: Some("the assertion expired".to_owned()),
            }
        );
        let hits = server.hits();
        assert_eq!(
            hits.iter().filter(|h| *h == "POST /token").count(),
            1,
            "{hits:?}"
        );
        assert!(
            !hits
                .iter()
                .any(|h| h.contains("/authorize") || h.contains("/register")),
            "no fallback to another grant: {hits:?}"
        );
        assert_eq!(s.oauth.status().await, AuthStatus::NeedsAuthorization);
        // No authorization page for it either (the card's Connect, `maven mcp login`).
        let begun = s.oauth.begin(&Challenge::default()).await;
        assert_eq!(
            begun.err().map(|e| e.to_string()).unwrap_or_default(),
            "oauth.grant is \"jwt_bearer\": this server needs no one to authorize it; Maven obtains its tokens by itself when it connects"
        );
        assert!(
            s.oauth
                .needs_authorization()
                .is_some_and(|w| w.starts_with("the jwt_bearer grant failed: ")),
            "{:?}",
            s.oauth.needs_authorization()
        );
        only_loopback(&s.dialled);
    })
    .await;
}

/// The enterprise grant's token exchange at an identity provider that answers with an
/// ordinary access token, not an ID-JAG: refused by name before anything reaches the
/// authorization server's token endpoint.
#[tokio::test]
async fn an_identity_provider_that_issues_no_id_jag_is_refused() {
    bounded(async {
        let idp = AuthServer::start(Hostile::None).await.unwrap();
        let server = AuthServer::start(Hostile::None).await.unwrap();
        let mut s = setup(&server, true, false);
        s.oauth = Arc::new(
            OAuth::new(
                OAuthConfig {
                    server: "hostile".to_owned(),
                    resource_url: server.resource_url(),
                    client_id: Some("maven".to_owned()),
                    client_secret: Some("s3cret".to_owned()),
                    client_metadata_url: None,
                    redirect_uri: "http://127.0.0.1:9/oauth/callback".to_owned(),
                    client_name: "maven-test".to_owned(),
                },
                s.fetcher.clone(),
                s.store.clone(),
            )
            .with_grant(oauth::Grant::Enterprise(oauth::Enterprise {
                token_endpoint: format!("{}/token", idp.base),
                client_id: "maven-at-idp".to_owned(),
                client_secret: None,
                id_token: oauth::TokenSource::Value("an.id.token".to_owned()),
            })),
        );
        let e = auth_error(connect(&server, &s).await.unwrap_err());
        assert_eq!(
            e.to_string(),
            "token exchange: issued_token_type is \"\", not urn:ietf:params:oauth:token-type:id-jag"
        );
        assert_eq!(idp.count("POST /token"), 1, "{:?}", idp.hits());
        assert_eq!(server.count("POST /token"), 0, "{:?}", server.hits());
    })
    .await;
}

#[tokio::test]
async fn a_16_mib_metadata_body_is_cut_at_64_kib() {
    bounded(async {
        let (server, _s, e) = refused(Hostile::HugeMetadata(16 * 1024 * 1024)).await;
        assert_eq!(
            e,
            AuthError::TooLarge {
                what: "authorization server metadata",
                url: format!("{}/.well-known/oauth-authorization-server", server.base),
                cap: 64 * 1024
            }
        );
        assert_eq!(
            e.to_string(),
            format!(
                "authorization server metadata at {}/.well-known/oauth-authorization-server: larger than 64 KiB",
                server.base
            )
        );
    })
    .await;
}

#[tokio::test]
async fn an_authorization_server_without_s256_is_refused() {
    bounded(async {
        let (server, _s, e) = refused(Hostile::NoS256).await;
        assert_eq!(
            e,
            AuthError::NoPkceS256 {
                issuer: server.base.clone()
            }
        );
        assert_eq!(server.count("GET /authorize"), 0);
    })
    .await;
}

#[tokio::test]
async fn token_answers_with_an_unknown_type_or_an_absurd_lifetime_are_refused() {
    bounded(async {
        for (hostile, want) in [
            (
                Hostile::TokenType("mac".to_owned()),
                "unknown token_type \"mac\"",
            ),
            (Hostile::ExpiresIn(json!(1e15)), "absurd expires_in"),
            (Hostile::ExpiresIn(json!(-5)), "absurd expires_in"),
            (Hostile::ExpiresIn(json!("soon")), "absurd expires_in"),
        ] {
            let server = AuthServer::start(hostile.clone()).await.unwrap();
            let s = setup(&server, true, true);
            let e = auth_error(connect(&server, &s).await.unwrap_err());
            assert!(
                matches!(&e, AuthError::BadToken(r) if r.contains(want)),
                "{hostile:?}: {e:?}"
            );
            assert_eq!(s.oauth.status().await, AuthStatus::NeedsAuthorization);
            assert!(
                s.store.load("hostile").await.unwrap().is_empty(),
                "nothing kept"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn a_refused_refresh_means_needs_authorization_never_a_loop() {
    bounded(async {
        let (server, s, c) = connected(Hostile::RefreshReplayed).await;
        c.close().await;
        let e = s.oauth.refresh_now().await.unwrap_err();
        assert!(
            matches!(&e, AuthError::Refused { what: "token refresh", error, .. } if error == "invalid_grant"),
            "{e:?}"
        );
        assert_eq!(s.oauth.status().await, AuthStatus::NeedsAuthorization);
        assert_eq!(server.count("POST /token"), 2, "one code, one refresh");
        // The kept row has no tokens left (the registration stays, bound to its issuer).
        let kept = s.store.load("hostile").await.unwrap();
        assert!(kept.iter().all(|c| c.tokens.is_none()));
    })
    .await;
}

#[tokio::test]
async fn a_scope_challenge_that_never_ends_stops_after_the_step_up_limit() {
    bounded(async {
        let (server, _s, e) = refused(Hostile::EndlessScope).await;
        assert_eq!(
            e,
            AuthError::TooManyStepUps {
                count: oauth::MAX_STEP_UPS
            }
        );
        assert_eq!(
            server.count("GET /authorize"),
            1 + oauth::MAX_STEP_UPS as usize
        );
    })
    .await;
}

#[tokio::test]
async fn a_challenge_pointing_discovery_at_forbidden_addresses_is_an_error_not_a_fallback() {
    bounded(async {
        let server = AuthServer::start(Hostile::None).await.unwrap();
        for (allow_private, url, want) in [
            (true, "http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
            (false, "https://10.0.0.1/.well-known/oauth-protected-resource", "10.0.0.1"),
            (false, "http://127.0.0.1:9/prm", "loopback"),
            (false, "http://8.8.8.8/prm", "plain http"),
            (true, "file:///etc/passwd", "file"),
            (true, "not a url", "relative URL"),
        ] {
            let s = setup(&server, allow_private, false);
            let challenge = Challenge {
                resource_metadata: Some(url.to_owned()),
                ..Challenge::default()
            };
            let e = s.oauth.discover(&challenge).await.unwrap_err();
            assert!(
                matches!(&e, AuthError::BadResourceMetadataUrl { reason, .. } if reason.contains(want)),
                "{url}: {e:?}"
            );
            assert!(s.dialled.lock().unwrap().is_empty(), "{url}: nothing dialled");
        }
        assert!(
            server.hits().is_empty(),
            "no well-known location tried instead: {:?}",
            server.hits()
        );
    })
    .await;
}

/// The token type of the kept tokens.
async fn kept_type(s: &Setup) -> String {
    let kept = s.store.load("hostile").await.unwrap();
    kept[0].tokens.as_ref().unwrap().token_type.clone()
}

#[tokio::test]
async fn dpop_is_used_only_when_both_ends_speak_it() {
    bounded(async {
        for (hostile, mode, want) in [
            // The authorization server offers DPoP, the MCP server reads only Bearer (the
            // Python SDK's resource server as it ships): Bearer.
            (Hostile::DpopAsOnly, DpopMode::Auto, "Bearer"),
            (Hostile::DpopBoth, DpopMode::Auto, "DPoP"),
            (Hostile::DpopBoth, DpopMode::Never, "Bearer"),
            (Hostile::DpopBoth, DpopMode::Required, "DPoP"),
        ] {
            let server = AuthServer::start(hostile.clone()).await.unwrap();
            let s = setup_dpop(&server, true, true, mode);
            let c = connect(&server, &s).await.unwrap();
            let out = c.call_tool("whoami", Default::default()).await.unwrap();
            assert_eq!(out.text, "access-0", "{hostile:?} {mode:?}");
            assert_eq!(kept_type(&s).await, want, "{hostile:?} {mode:?}");
            assert_eq!(server.count("POST /token"), 1, "{hostile:?} {mode:?}");
            c.close().await;
        }
    })
    .await;
}

/// The client_credentials grant, with no user agent: its tokens are bound to a DPoP key
/// where both ends speak it, as the code flow's are, and refused as "required" would be.
#[tokio::test]
async fn a_grant_that_needs_no_person_uses_dpop_as_the_code_flow_does() {
    bounded(async {
        for (hostile, mode, want) in [
            (Hostile::DpopAsOnly, DpopMode::Auto, Ok("Bearer")),
            (Hostile::DpopBoth, DpopMode::Auto, Ok("DPoP")),
            (Hostile::DpopBoth, DpopMode::Never, Ok("Bearer")),
            (Hostile::DpopBoth, DpopMode::Required, Ok("DPoP")),
            (
                Hostile::None,
                DpopMode::Required,
                Err("oauth.dpop is \"required\", but the authorization server"),
            ),
        ] {
            let server = AuthServer::start(hostile.clone()).await.unwrap();
            let mut s = setup_dpop(&server, true, false, mode);
            s.oauth = Arc::new(
                OAuth::new(
                    OAuthConfig {
                        server: "hostile".to_owned(),
                        resource_url: server.resource_url(),
                        client_id: Some("machine".to_owned()),
                        client_secret: Some("s3cret".to_owned()),
                        client_metadata_url: None,
                        redirect_uri: "http://127.0.0.1:9/oauth/callback".to_owned(),
                        client_name: "maven-test".to_owned(),
                    },
                    s.fetcher.clone(),
                    s.store.clone(),
                )
                .with_dpop(mode)
                .with_grant(oauth::Grant::ClientCredentials),
            );
            match (connect(&server, &s).await, want) {
                (Ok(c), Ok(want)) => {
                    let out = c.call_tool("whoami", Default::default()).await.unwrap();
                    assert_eq!(out.text, "access-0", "{hostile:?} {mode:?}");
                    assert_eq!(kept_type(&s).await, want, "{hostile:?} {mode:?}");
                    assert_eq!(server.count("POST /token"), 1, "{hostile:?} {mode:?}");
                    assert_eq!(server.count("GET /authorize"), 0, "no person asked");
                    c.close().await;
                }
                (Err(e), Err(want)) => {
                    let e = auth_error(e);
                    assert!(e.to_string().starts_with(want), "{e}");
                    assert_eq!(server.count("POST /token"), 0, "{:?}", server.hits());
                }
                (got, want) => panic!("{hostile:?} {mode:?}: got {:?}, want {want:?}", got.err()),
            }
        }
    })
    .await;
}

#[tokio::test]
async fn dpop_required_refuses_an_end_that_cannot_before_anything_is_shown() {
    bounded(async {
        for (hostile, want) in [
            (
                Hostile::DpopAsOnly,
                "the MCP server {rs} does not say it takes DPoP-bound tokens",
            ),
            (
                Hostile::None,
                "the authorization server {as} does not offer DPoP with ES256",
            ),
        ] {
            let server = AuthServer::start(hostile.clone()).await.unwrap();
            let s = setup_dpop(&server, true, true, DpopMode::Required);
            let e = auth_error(connect(&server, &s).await.unwrap_err());
            let want = want
                .replace("{rs}", &server.resource_url())
                .replace("{as}", &server.base);
            assert!(
                matches!(&e, AuthError::DpopUnavailable(m) if m.starts_with(&want)),
                "{hostile:?}: {e}"
            );
            assert!(e
                .to_string()
                .starts_with("oauth.dpop is \"required\", but "));
            assert_eq!(server.count("GET /authorize"), 0, "{hostile:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_dpop_token_refused_with_a_bearer_only_challenge_names_both_ends_and_never_loops() {
    bounded(async {
        let (server, s, e) = refused(Hostile::DpopClaimed).await;
        let AuthError::DpopRefused {
            issuer,
            server: rs,
            schemes,
            reason,
        } = &e
        else {
            panic!("{e:?}")
        };
        assert_eq!(issuer, &server.base);
        assert_eq!(rs, &server.resource_url());
        assert_eq!(schemes, "bearer");
        assert_eq!(reason, "invalid_token (Authentication required)");
        assert!(e.to_string().contains("set oauth.dpop to \"never\""), "{e}");
        // One code redeemed, no refresh, no second authorization.
        assert_eq!(server.count("POST /token"), 1);
        assert_eq!(server.count("GET /authorize"), 1);
        assert_eq!(s.oauth.status().await, AuthStatus::NeedsAuthorization);
        let why = s.oauth.needs_authorization().unwrap();
        assert!(why.contains("DPoP"), "{why}");
    })
    .await;
}

#[tokio::test]
async fn an_openid_provider_is_asked_for_consent_so_offline_access_brings_a_refresh_token() {
    bounded(async {
        let (server, s, c) = connected(Hostile::OpenId).await;
        let AuthStatus::Authorized {
            scopes, refresh, ..
        } = s.oauth.status().await
        else {
            panic!("not authorized")
        };
        assert_eq!(scopes, ["s0", "offline_access"]);
        assert!(refresh, "no refresh token: prompt=consent was not asked");
        assert_eq!(server.count("GET /.well-known/openid-configuration"), 1);
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_short_lived_token_is_refreshed_when_due_not_right_after_the_exchange() {
    bounded(async {
        // 4 s of lifetime: refreshed in its last 2 s (half of it), never at once.
        let (server, _s, c) = connected(Hostile::ExpiresIn(json!(4))).await;
        c.list_tools().await.unwrap();
        let out = c.call_tool("whoami", Default::default()).await.unwrap();
        assert_eq!(out.text, "access-0");
        assert_eq!(
            server.count("POST /token"),
            1,
            "no refresh after the exchange"
        );
        tokio::time::sleep(Duration::from_millis(2300)).await;
        let out = c.call_tool("whoami", Default::default()).await.unwrap();
        assert_eq!(out.text, "access-1", "refreshed once due");
        assert_eq!(server.count("POST /token"), 2);
        // The manager's health check (a ping, every minute) is a request too: it refreshes
        // a token it finds due, as a call does (this server answers ping -32601: an answer).
        tokio::time::sleep(Duration::from_millis(2300)).await;
        let pinged = c.ping().await;
        assert!(
            pinged.as_ref().is_err_and(|e| e.rpc_code() == Some(-32601)),
            "{pinged:?}"
        );
        assert_eq!(server.count("POST /token"), 3, "refreshed by the ping");
        let out = c.call_tool("whoami", Default::default()).await.unwrap();
        assert_eq!(out.text, "access-2");
        assert!(!server.revoked());
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_token_that_expires_without_a_refresh_token_is_no_authorization() {
    bounded(async {
        let (_server, s, c) = connected(Hostile::NoRefreshToken).await;
        assert!(matches!(
            s.oauth.status().await,
            AuthStatus::Authorized { refresh: false, .. }
        ));
        assert_eq!(s.oauth.needs_authorization(), None);
        tokio::time::sleep(Duration::from_millis(4100)).await;
        assert_eq!(s.oauth.status_now(), AuthStatus::NeedsAuthorization);
        let why = s.oauth.needs_authorization().unwrap();
        assert!(why.contains("expired"), "{why}");
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_replayed_refresh_token_revokes_the_grant_at_the_test_server() {
    bounded(async {
        // The test server's rotation is real: a refresh token works once. (The daemon tests
        // rely on it to show that no other process rotated the daemon's tokens.)
        let (server, s, c) = connected(Hostile::None).await;
        let before = s.store.load("hostile").await.unwrap();
        s.oauth.refresh_now().await.unwrap();
        assert!(!server.revoked());
        // The old refresh token again (what a second process holding a stale copy would send).
        s.store.save("hostile", &before[0]).await.unwrap();
        s.oauth.reload().await;
        let e = s.oauth.refresh_now().await.unwrap_err();
        assert!(
            matches!(&e, AuthError::Refused { error, .. } if error == "invalid_grant"),
            "{e:?}"
        );
        assert!(server.revoked());
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_401_to_server_discover_is_an_authorization_challenge_not_an_era_answer() {
    bounded(async {
        let server = AuthServer::start(Hostile::None).await.unwrap();
        let s = setup(&server, true, false);
        let mut opts = options();
        opts.oauth = Some(s.oauth.clone());
        opts.http_fetcher = Some(s.fetcher.clone());
        let e = Client::connect(&config_era(&server, mcp::Protocol::Auto), opts)
            .await
            .unwrap_err();
        assert_eq!(auth_error(e), AuthError::NeedsAuthorization);
        // No `initialize` after the refused `server/discover`: one request, one 401.
        assert_eq!(server.hits(), ["POST /mcp"]);
    })
    .await;
}

#[tokio::test]
async fn without_a_user_agent_a_wider_scope_waits_for_the_owner_with_the_union_kept() {
    bounded(async {
        let server = AuthServer::start(Hostile::EndlessScope).await.unwrap();
        // Tokens kept by an earlier authorization (the step-ups after it gave up).
        let s = setup(&server, true, true);
        let _ = connect(&server, &s).await.unwrap_err();
        let authorizations = server.count("GET /authorize");
        // The daemon's kind of authorization: no user agent, the same store.
        let daemon = Setup {
            oauth: Arc::new(OAuth::new(
                OAuthConfig {
                    server: "hostile".to_owned(),
                    resource_url: server.resource_url(),
                    client_id: None,
                    client_secret: None,
                    client_metadata_url: None,
                    redirect_uri: "http://127.0.0.1:9/oauth/callback".to_owned(),
                    client_name: "maven-test".to_owned(),
                },
                s.fetcher.clone(),
                s.store.clone(),
            )),
            store: s.store.clone(),
            fetcher: s.fetcher.clone(),
            dialled: s.dialled.clone(),
        };
        let e = auth_error(connect(&server, &daemon).await.unwrap_err());
        assert_eq!(e, AuthError::NeedsAuthorization);
        assert_eq!(
            server.count("GET /authorize"),
            authorizations,
            "no authorization"
        );
        let kept = daemon.oauth.last_challenge().await.unwrap();
        let scopes = kept.scopes();
        assert!(
            scopes.len() >= 2,
            "the union of what was granted and what is asked: {scopes:?}"
        );
        assert!(scopes.contains(&"s0".to_owned()), "{scopes:?}");
    })
    .await;
}
