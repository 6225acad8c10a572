//! The Streamable HTTP transport against `testkit-mcp --http`.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp::{Client, CloseReason, Error, McpTimeouts, Violation};

use crate::support::{args, bounded, options, short, HttpServer, Record, ERAS};

async fn connect(server: &HttpServer, timeouts: McpTimeouts) -> Client {
    Client::connect(&server.config(timeouts), options())
        .await
        .expect("the test server connects")
}

fn count(lines: &[String], what: &str) -> usize {
    lines.iter().filter(|l| *l == what).count()
}

#[tokio::test]
async fn json_and_sse_answers_end_to_end() {
    for sse in [false, true] {
        bounded(async {
            let rec = Record::new();
            let mut flags = vec![rec.arg()];
            if sse {
                flags.push("--sse".to_owned());
            }
            let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
            let server = HttpServer::start(&flags).await;
            let c = connect(&server, short()).await;
            assert_eq!(c.transport_name(), "http");
            assert_eq!(c.server_info().protocol_version, mcp::PROTOCOL_VERSION);
            let l = c.list_tools().await.unwrap();
            assert_eq!(l.tools.len(), 2);
            assert_eq!(
                c.call_tool("echo", args("over http")).await.unwrap().text,
                "over http"
            );
            assert_eq!(c.read_resource("mem://note").await.unwrap(), "a note");
            c.ping().await.unwrap();
            assert_eq!(c.stats().violations, 0);
            c.close().await;
            let lines = rec.wait_for(|l| l == "DELETE").await;
            // One session for everything: the session id was echoed, the version header sent.
            assert_eq!(count(&lines, "initialize"), 1, "sse={sse}: {lines:?}");
            assert_eq!(count(&lines, "DELETE"), 1, "sse={sse}: {lines:?}");
            assert_eq!(
                count(&lines, "missing MCP-Protocol-Version"),
                0,
                "{lines:?}"
            );
        })
        .await;
    }
}

#[tokio::test]
async fn server_requests_mid_stream_are_refused_and_the_call_completes() {
    bounded(async {
        let server = HttpServer::start(&["--server-requests"]).await;
        let c = connect(&server, short()).await;
        let out = c.call_tool("echo", args("x")).await.unwrap();
        assert_eq!(
            out.text,
            "sampling/createMessage:-32601 roots/list:-32601 elicitation/create:no-error"
        );
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_ping_flood_mid_stream_is_rate_limited() {
    bounded(async {
        let server = HttpServer::start(&["--ping-flood=300"]).await;
        let c = connect(&server, short()).await;
        assert_eq!(c.call_tool("echo", args("ok")).await.unwrap().text, "ok");
        assert!(c.stats().rate_limited > 0);
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn session_loss_costs_one_initialize_and_one_retry() {
    for code in ["404", "400"] {
        bounded(async {
            let rec = Record::new();
            let flag = format!("--session-loss={code}");
            let server = HttpServer::start(&[&flag, &rec.arg()]).await;
            let c = connect(&server, short()).await;
            assert_eq!(
                c.call_tool("echo", args("again")).await.unwrap().text,
                "again"
            );
            let lines = rec.lines();
            assert_eq!(count(&lines, "initialize"), 2, "{code}: {lines:?}");
            assert_eq!(count(&lines, "tools/call"), 1, "{code}: {lines:?}");
            assert_eq!(count(&lines, &format!("session lost {code}")), 1);
            // And the new session is the one in use afterwards.
            c.ping().await.unwrap();
            assert_eq!(count(&rec.lines(), "initialize"), 2);
            c.close().await;
        })
        .await;
    }
}

#[tokio::test]
async fn a_dropped_sse_stream_is_resumed_after_retry() {
    bounded(async {
        let rec = Record::new();
        let server = HttpServer::start(&["--sse", "--sse-drop-first", &rec.arg()]).await;
        let c = connect(&server, short()).await;
        assert_eq!(
            c.call_tool("echo", args("resumed")).await.unwrap().text,
            "resumed"
        );
        assert!(rec
            .lines()
            .iter()
            .any(|l| l.starts_with("GET ") && l != "GET -"));
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn mute_mid_call_cancels_and_drops() {
    for era in ERAS {
        bounded(async {
            let rec = Record::new();
            let server = HttpServer::start_in(era, &["--mute-mid-call", &rec.arg()]).await;
            let t = McpTimeouts {
                call: Duration::from_millis(500),
                ..short()
            };
            let c = connect(&server, t).await;
            assert_eq!(c.era(), era);
            let e = c.call_tool("echo", args("x")).await.unwrap_err();
            assert!(e.is_timeout(), "{era:?}: {e:?}");
            if era == mcp::Era::Legacy {
                let lines = rec.wait_for(|l| l == "notifications/cancelled").await;
                assert_eq!(count(&lines, "notifications/cancelled"), 1, "{lines:?}");
            } else {
                // Modern: closing the request's stream is the cancellation; nothing is sent.
                let lines = rec.lines();
                assert_eq!(count(&lines, "notifications/cancelled"), 0, "{lines:?}");
            }
            assert!(c.ping().await.unwrap_err().is_closed());
            c.close().await;
        })
        .await;
    }
}

#[tokio::test]
async fn malformed_answers() {
    for (flag, sse) in [
        ("--neither", false),
        ("--result-and-error", true),
        ("--wrong-id", false),
        ("--wrong-id", true),
        ("--string-id", false),
    ] {
        for era in ERAS {
            malformed_answer(era, flag, sse).await;
        }
    }
}

async fn malformed_answer(era: mcp::Era, flag: &str, sse: bool) {
    bounded(async {
        let flags: Vec<&str> = if sse { vec![flag, "--sse"] } else { vec![flag] };
        let server = HttpServer::start_in(era, &flags).await;
        let c = connect(&server, short()).await;
        assert_eq!(c.era(), era);
        let e = c.call_tool("echo", args("x")).await.unwrap_err();
        let want = match flag {
            "--neither" => Violation::NeitherResultNorError,
            "--result-and-error" => Violation::ResultAndError,
            _ => Violation::Unanswered,
        };
        assert!(
            matches!(e, Error::Violation(v) if v == want),
            "{era:?} {flag} sse={sse}: {e:?}"
        );
        assert!(c.stats().violations >= 1);
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_giant_sse_event_is_never_assembled() {
    for era in ERAS {
        bounded(async {
            let server = HttpServer::start_in(era, &["--giant-line=20000000"]).await;
            let mut opts = options();
            opts.limits.frame_cap = 256 * 1024;
            let c = Client::connect(&server.config(short()), opts)
                .await
                .unwrap();
            assert_eq!(c.era(), era);
            let e = c.call_tool("echo", args("x")).await.unwrap_err();
            assert_eq!(
                e.close_reason(),
                Some(&CloseReason::FrameTooLarge { cap: 256 * 1024 }),
                "{era:?}: {e:?}"
            );
            c.close().await;
        })
        .await;
    }
}

#[tokio::test]
async fn any_redirect_is_refused_on_a_private_door() {
    bounded(async {
        for (era, target) in ERAS.into_iter().flat_map(|era| {
            [
                (era, "http://169.254.169.254/latest/meta-data/"),
                (era, "http://127.0.0.1:9/mcp"),
            ]
        }) {
            let flag = format!("--redirect={target}");
            // The first POST (server/discover or initialize) is the one redirected.
            let server = HttpServer::start_in(era, &[&flag]).await;
            let e = Client::connect(&server.config(short()), options())
                .await
                .unwrap_err();
            assert!(e.is_refused(), "{era:?} {target}: {e:?}");
            assert!(
                matches!(
                    e.http_error(),
                    Some(webfetch::Error::Refused(
                        webfetch::Refusal::RedirectOnPrivateDoor
                    ))
                ),
                "{target}: {e:?}"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn a_redirect_to_the_metadata_address_is_refused_on_a_public_door() {
    for era in ERAS {
        a_redirect_to_the_metadata_address_is_refused_on_a_public_door_in(era).await;
    }
}

async fn a_redirect_to_the_metadata_address_is_refused_on_a_public_door_in(era: mcp::Era) {
    bounded(async {
        let mut flags: Vec<&str> = crate::support::era_flag(era).into_iter().collect();
        flags.push("--redirect=http://169.254.169.254/latest/meta-data/");
        let server = HttpServer::start_on("127.0.0.2", &flags).await;
        let mut cfg = server.config(short());
        cfg.protocol = crate::support::pin(era);
        let mcp::Transport::Http { door, .. } = &mut cfg.transport else {
            unreachable!()
        };
        door.allow_private = false;
        let dialled: Arc<Mutex<Vec<SocketAddr>>> = Arc::default();
        let seen = dialled.clone();
        let pretend =
            webfetch::testing::PretendPublic::loopback(Ipv4Addr::new(127, 0, 0, 2)).unwrap();
        let fetcher = webfetch::Fetcher::builder(door.clone())
            .pretend_public(pretend)
            .on_dial(move |a| seen.lock().unwrap().push(a))
            .build();
        let mut opts = options();
        opts.http_fetcher = Some(fetcher);
        let e = Client::connect(&cfg, opts).await.unwrap_err();
        assert!(e.is_refused(), "{e:?}");
        let refusal = e.http_error().and_then(webfetch::Error::refusal);
        assert!(
            matches!(refusal, Some(webfetch::Refusal::Address { verdict })
                if verdict.addr == std::net::IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254))),
            "{e:?}"
        );
        let dialled = dialled.lock().unwrap().clone();
        assert!(
            dialled
                .iter()
                .all(|a| a.ip() == Ipv4Addr::new(127, 0, 0, 2)),
            "dialled {dialled:?}"
        );
        assert!(!dialled.is_empty());
    })
    .await;
}
