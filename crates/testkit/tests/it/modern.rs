//! The modern era (MCP 2026-07-28) against `testkit-mcp --modern`, well-behaved and hostile,
//! over stdio and Streamable HTTP.

// The manager's own tests call its servers' tools (in the daemon only the executor does).
#![allow(clippy::disallowed_methods)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp::{
    AskKind, CallStep, Client, CloseReason, Era, Error, McpTimeouts, Protocol, ServerConfig,
    ServerRequestHandler, MODERN_VERSION,
};
use serde_json::{json, Map, Value};

use crate::support::{args, bounded, options, short, stdio, HttpServer, Record};

/// Over which transport a case runs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Over {
    Stdio,
    Http,
}

const BOTH: [Over; 2] = [Over::Stdio, Over::Http];

/// A running test server and the config reaching it (the HTTP one is killed when dropped).
struct Kit {
    config: ServerConfig,
    _http: Option<HttpServer>,
}

impl Kit {
    async fn start(over: Over, protocol: Protocol, flags: &[&str]) -> Kit {
        let mut all = vec!["--modern"];
        all.extend_from_slice(flags);
        Kit::start_raw(over, protocol, &all).await
    }

    /// Without the implied `--modern`.
    async fn start_raw(over: Over, protocol: Protocol, flags: &[&str]) -> Kit {
        match over {
            Over::Stdio => Kit {
                config: ServerConfig {
                    protocol,
                    ..stdio(flags, short())
                },
                _http: None,
            },
            Over::Http => {
                let server = HttpServer::start(flags).await;
                let config = ServerConfig {
                    protocol,
                    ..server.config(short())
                };
                Kit {
                    config,
                    _http: Some(server),
                }
            }
        }
    }

    async fn connect(&self) -> Client {
        Client::connect(&self.config, options())
            .await
            .expect("the test server connects")
    }

    async fn connect_with(&self, opts: mcp::ClientOptions) -> Client {
        Client::connect(&self.config, opts)
            .await
            .expect("the test server connects")
    }

    async fn refused(&self) -> Error {
        Client::connect(&self.config, options())
            .await
            .expect_err("the connection must be refused")
    }
}

fn count(lines: &[String], what: &str) -> usize {
    lines.iter().filter(|l| *l == what).count()
}

/// Lines the server records when the client broke the modern wire rules.
fn wire_faults(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|l| {
            l.starts_with("no _meta")
                || l.starts_with("header mismatch")
                || l.starts_with("session header")
        })
        .collect()
}

#[tokio::test]
async fn a_modern_server_end_to_end() {
    for over in BOTH {
        bounded(async {
            let rec = Record::new();
            let kit = Kit::start(over, Protocol::Auto, &[&rec.arg()]).await;
            let c = kit.connect().await;
            assert_eq!(c.era(), Era::Modern, "{over:?}");
            let info = c.server_info();
            assert_eq!(info.protocol_version, MODERN_VERSION);
            assert_eq!(info.chosen, "server/discover lists 2026-07-28");
            assert_eq!(info.supported, [MODERN_VERSION]);
            assert_eq!(
                (info.name.as_str(), info.version.as_str()),
                ("testkit-mcp", "1.0.0")
            );
            let l = c.list_tools().await.unwrap();
            let names: Vec<_> = l.tools.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["echo", "delete_item"]);
            assert!(l.rejected.is_empty());
            let out = c.call_tool("echo", args("modern hello")).await.unwrap();
            assert_eq!(out.text, "modern hello");
            assert!(!out.is_error);
            let unknown = c.call_tool("nope", Map::new()).await.unwrap_err();
            assert_eq!(unknown.rpc_code(), Some(-32602), "{unknown:?}");
            assert_eq!(c.list_resources().await.unwrap().len(), 1);
            assert_eq!(c.read_resource("mem://note").await.unwrap(), "a note");
            // A URI that is not plain header text goes into Mcp-Name as the Base64 sentinel.
            assert_eq!(
                c.read_resource("mem://nöte\u{1f4dd}").await.unwrap(),
                "a note"
            );
            // The modern health check is server/discover.
            c.ping().await.unwrap();
            assert_eq!(c.stats().violations, 0);
            c.close().await;
            let lines = rec.lines();
            assert_eq!(lines[0], "server/discover", "{over:?}: {lines:?}");
            assert_eq!(count(&lines, "server/discover"), 2, "{lines:?}");
            assert_eq!(count(&lines, "initialize"), 0, "{lines:?}");
            assert_eq!(count(&lines, "ping"), 0, "{lines:?}");
            // Every request carried the _meta envelope, and over HTTP headers that agree.
            assert!(wire_faults(&lines).is_empty(), "{over:?}: {lines:?}");
        })
        .await;
    }
}

#[tokio::test]
async fn pinned_eras_against_a_server_speaking_both() {
    for over in BOTH {
        bounded(async {
            let both = "--discover-versions=2026-07-28,2025-11-25";
            for (protocol, era) in [
                (Protocol::Auto, Era::Modern),
                (Protocol::Modern, Era::Modern),
                (Protocol::Legacy, Era::Legacy),
            ] {
                let rec = Record::new();
                let kit = Kit::start(over, protocol, &[both, &rec.arg()]).await;
                let c = kit.connect().await;
                assert_eq!(c.era(), era, "{over:?} {protocol:?}");
                assert_eq!(c.call_tool("echo", args("x")).await.unwrap().text, "x");
                c.close().await;
                let lines = rec.lines();
                let first = if era == Era::Legacy {
                    "initialize"
                } else {
                    "server/discover"
                };
                assert_eq!(lines[0], first, "{over:?} {protocol:?}: {lines:?}");
                if protocol == Protocol::Legacy {
                    assert_eq!(c.server_info().protocol_version, mcp::PROTOCOL_VERSION);
                    assert_eq!(
                        c.server_info().chosen,
                        "pinned to 2025-11-25 by the configuration"
                    );
                    assert_eq!(count(&lines, "server/discover"), 0, "{lines:?}");
                } else {
                    assert!(wire_faults(&lines).is_empty(), "{lines:?}");
                }
            }
        })
        .await;
    }
}

#[tokio::test]
async fn modern_results_without_result_type_are_complete() {
    for over in BOTH {
        bounded(async {
            let kit = Kit::start(over, Protocol::Modern, &["--no-result-type"]).await;
            let c = kit.connect().await;
            assert_eq!(c.era(), Era::Modern);
            assert_eq!(c.list_tools().await.unwrap().tools.len(), 2);
            let out = c.call_tool("echo", args("no type")).await.unwrap();
            assert_eq!(out.text, "no type");
            assert_eq!(c.read_resource("mem://note").await.unwrap(), "a note");
            c.close().await;
        })
        .await;
    }
}

#[tokio::test]
async fn discover_offering_no_common_version() {
    for over in BOTH {
        bounded(async {
            let rec = Record::new();
            let kit = Kit::start(
                over,
                Protocol::Auto,
                &["--discover-versions=2099-01-01", &rec.arg()],
            )
            .await;
            let e = kit.refused().await;
            let Error::NoCommonVersion { ours, theirs } = &e else {
                panic!("{over:?}: {e:?}");
            };
            assert_eq!(theirs, &["2099-01-01"]);
            assert_eq!(ours[0], MODERN_VERSION);
            assert!(ours.iter().any(|v| v == mcp::PROTOCOL_VERSION), "{ours:?}");
            let shown = e.to_string();
            assert!(
                shown.contains("2099-01-01") && shown.contains(MODERN_VERSION),
                "{shown}"
            );
            // Nothing but the probe: no initialize with a version the server did not list.
            assert_eq!(rec.lines(), ["server/discover"]);

            let kit = Kit::start(over, Protocol::Modern, &["--discover-versions=2099-01-01"]).await;
            let e = kit.refused().await;
            assert!(
                matches!(&e, Error::NoCommonVersion { ours, theirs }
                    if ours == &[MODERN_VERSION] && theirs == &["2099-01-01"]),
                "{over:?}: {e:?}"
            );

            // A discover listing only a legacy version: `auto` falls back to initialize.
            let rec = Record::new();
            let kit = Kit::start(
                over,
                Protocol::Auto,
                &["--discover-versions=2025-11-25", &rec.arg()],
            )
            .await;
            let c = kit.connect().await;
            assert_eq!(c.era(), Era::Legacy);
            assert!(
                c.server_info()
                    .chosen
                    .starts_with("server/discover lists only"),
                "{}",
                c.server_info().chosen
            );
            assert_eq!(c.call_tool("echo", args("old")).await.unwrap().text, "old");
            c.close().await;
            let lines = rec.lines();
            assert_eq!(lines[..2], ["server/discover", "initialize"], "{lines:?}");
        })
        .await;
    }
}

#[tokio::test]
async fn unsupported_version_ping_pong_is_retried_once() {
    for over in BOTH {
        for protocol in [Protocol::Auto, Protocol::Modern] {
            bounded(async {
                let rec = Record::new();
                let kit = Kit::start(over, protocol, &["--unsupported-always", &rec.arg()]).await;
                let e = kit.refused().await;
                assert!(
                    matches!(&e, Error::EraRefused { pinned, reason }
                        if pinned == MODERN_VERSION && reason.contains("again")),
                    "{over:?} {protocol:?}: {e:?}"
                );
                // One retry, never a loop, and no fallback to a handshake the server refuses.
                assert_eq!(
                    rec.lines(),
                    ["server/discover", "server/discover"],
                    "{over:?} {protocol:?}"
                );
            })
            .await;
        }
    }
}

#[tokio::test]
async fn a_modern_only_server_refuses_a_pinned_legacy_client() {
    for over in BOTH {
        bounded(async {
            let kit = Kit::start(over, Protocol::Legacy, &[]).await;
            let e = kit.refused().await;
            // The server answers initialize with -32022 listing only 2026-07-28.
            assert!(
                matches!(&e, Error::UnsupportedVersion { supported, .. } if supported == &[MODERN_VERSION]),
                "{over:?}: {e:?}"
            );
        })
        .await;
    }
}

#[tokio::test]
async fn a_header_mismatch_is_a_clear_error() {
    bounded(async {
        let rec = Record::new();
        let kit = Kit::start(
            Over::Http,
            Protocol::Modern,
            &["--header-mismatch", &rec.arg()],
        )
        .await;
        let c = kit.connect().await;
        assert_eq!(c.list_tools().await.unwrap().tools.len(), 2);
        let e = c.call_tool("echo", args("x")).await.unwrap_err();
        assert!(
            matches!(&e, Error::HeaderMismatch { message } if message.contains("disagree")),
            "{e:?}"
        );
        assert_eq!(e.rpc_code(), Some(-32020));
        assert!(e.to_string().contains("headers do not match"), "{e}");
        // The answer was the server's refusal of one request: the connection stays usable.
        assert!(c.closed().is_none());
        assert_eq!(c.list_tools().await.unwrap().tools.len(), 2);
        c.close().await;
        let lines = rec.lines();
        assert_eq!(
            count(
                &lines,
                "header mismatch: this server disagrees with every tools/call"
            ),
            1,
            "{lines:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn invalid_x_mcp_header_tools_are_dropped_with_a_reason() {
    bounded(async {
        let rec = Record::new();
        let kit = Kit::start(
            Over::Http,
            Protocol::Modern,
            &["--header-tools", &rec.arg()],
        )
        .await;
        let c = kit.connect().await;
        let l = c.list_tools().await.unwrap();
        let names: Vec<_> = l.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["get_weather"]);
        let why = |tool: &str| -> String {
            l.rejected
                .iter()
                .find(|(n, _)| n == tool)
                .map(|(_, r)| r.clone())
                .unwrap_or_else(|| panic!("{tool} not rejected: {:?}", l.rejected))
        };
        assert_eq!(l.rejected.len(), 5, "{:?}", l.rejected);
        assert!(
            why("bad_type").contains("type is not string, integer or boolean"),
            "{}",
            why("bad_type")
        );
        assert!(
            why("bad_token").contains("not an HTTP header name token"),
            "{}",
            why("bad_token")
        );
        assert!(
            why("bad_duplicate").contains("declared twice"),
            "{}",
            why("bad_duplicate")
        );
        assert!(
            why("bad_nested").contains("reached through `properties` alone"),
            "{}",
            why("bad_nested")
        );
        assert!(why("bad_empty").contains("empty"), "{}", why("bad_empty"));

        // The valid declarations become Mcp-Param-* headers the server checks against the body
        // (a non-ASCII value as the Base64 sentinel).
        let mut a = Map::new();
        a.insert("region".into(), json!("eu-west"));
        a.insert("days".into(), json!(3));
        let out = c.call_tool("get_weather", a).await.unwrap();
        assert_eq!(out.text, "weather for eu-west over 3 days");
        let mut a = Map::new();
        a.insert("region".into(), json!(" Zürich\n"));
        let out = c.call_tool("get_weather", a).await.unwrap();
        assert_eq!(out.text, "weather for  Zürich\n over 1 days");
        // An argument that cannot be its declared header is refused before anything is sent.
        let mut a = Map::new();
        a.insert("region".into(), json!({"not": "a string"}));
        let e = c.call_tool("get_weather", a).await.unwrap_err();
        assert!(
            matches!(&e, Error::BadInputRequest { reason, .. } if reason.contains("Mcp-Param-Region")),
            "{e:?}"
        );
        c.close().await;
        let lines = rec.lines();
        assert_eq!(count(&lines, "tools/call"), 2, "{lines:?}");
        assert!(wire_faults(&lines).is_empty(), "{lines:?}");
    })
    .await;
}

#[tokio::test]
async fn x_mcp_header_declarations_do_not_matter_over_stdio() {
    bounded(async {
        // Headers exist only over HTTP: over stdio nothing is mirrored and nothing is dropped.
        let kit = Kit::start(Over::Stdio, Protocol::Modern, &["--header-tools"]).await;
        let c = kit.connect().await;
        let l = c.list_tools().await.unwrap();
        assert_eq!(l.tools.len(), 6);
        assert!(l.rejected.is_empty());
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn input_required_forever_gives_up_after_the_round_cap() {
    for over in BOTH {
        bounded(async {
            let rec = Record::new();
            let kit = Kit::start(over, Protocol::Modern, &["--input-forever", &rec.arg()]).await;
            let c = kit.connect().await;
            let e = c.call_tool("echo", args("x")).await.unwrap_err();
            assert!(
                matches!(&e, Error::TooManyRounds { method, rounds: 8 } if method == "tools/call"),
                "{over:?}: {e:?}"
            );
            assert!(e.to_string().contains("given up"), "{e}");
            assert!(c.closed().is_none());
            let lines = rec.lines();
            assert_eq!(count(&lines, "tools/call"), 8, "{lines:?}");
            // Each retry echoed the previous round's requestState exactly, under a new id.
            for n in 1..8 {
                assert_eq!(count(&lines, &format!("state ok {n}")), 1, "{lines:?}");
            }
            assert_eq!(count(&lines, "state bad"), 0, "{lines:?}");
            let mut ids: Vec<&String> =
                lines.iter().filter(|l| l.starts_with("call id ")).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), 8, "{lines:?}");
            c.close().await;
        })
        .await;
    }
}

#[tokio::test]
async fn a_giant_request_state_is_refused_and_never_echoed() {
    let ten_mib = 10 * 1024 * 1024;
    let flag = format!("--giant-request-state={ten_mib}");
    for over in BOTH {
        bounded(async {
            // With the default bounds the answer is never assembled: over stdio the frame cap
            // (4 MiB) drops the connection, over HTTP the door's body limit (2 MiB) refuses it.
            let rec = Record::new();
            let mut kit = Kit::start(over, Protocol::Modern, &[&flag, &rec.arg()]).await;
            let c = kit.connect().await;
            let e = c.call_tool("echo", args("x")).await.unwrap_err();
            match over {
                Over::Stdio => assert_eq!(
                    e.close_reason(),
                    Some(&CloseReason::FrameTooLarge {
                        cap: mcp::Limits::default().frame_cap
                    }),
                    "{e:?}"
                ),
                Over::Http => assert!(
                    matches!(e.http_error(), Some(webfetch::Error::TooLarge { limit })
                        if *limit == webfetch::DEFAULT_MAX_BODY),
                    "{e:?}"
                ),
            }
            c.close().await;

            // Under bounds that let it in, the state is refused by its own cap.
            let mut opts = options();
            opts.limits.frame_cap = 32 * 1024 * 1024;
            if let mcp::Transport::Http { door, .. } = &mut kit.config.transport {
                door.max_body = 32 * 1024 * 1024;
            }
            let c = kit.connect_with(opts).await;
            let e = c.call_tool("echo", args("x")).await.unwrap_err();
            assert!(
                matches!(&e, Error::BadInputRequest { method, reason }
                    if method == "tools/call"
                        && reason.contains(&format!("requestState is {ten_mib} bytes"))),
                "{over:?}: {e:?}"
            );
            // Refused, not fatal: the connection serves the next request.
            assert!(c.closed().is_none());
            assert_eq!(c.list_tools().await.unwrap().tools.len(), 2);
            c.close().await;
            assert_eq!(count(&rec.lines(), "giant requestState echoed"), 0);
        })
        .await;
    }
}

/// A handler that would accept any elicitation with a made-up password, and records what it
/// was shown.
#[derive(Default)]
struct Eager {
    seen: Mutex<Vec<Value>>,
}

impl ServerRequestHandler for Eager {
    fn handle(&self, method: &str, params: &Value) -> Option<Result<Value, (i64, String)>> {
        self.seen.lock().unwrap().push(json!([method, params]));
        Some(Ok(
            json!({"action": "accept", "content": {"password": "hunter2"}}),
        ))
    }
}

#[tokio::test]
async fn an_elicitation_for_a_password_is_declined_unseen() {
    for over in BOTH {
        bounded(async {
            let rec = Record::new();
            let kit = Kit::start(over, Protocol::Modern, &["--elicit-password", &rec.arg()]).await;
            let eager = Arc::new(Eager::default());
            let mut opts = options();
            opts.handler = Some(eager.clone());
            let c = kit.connect_with(opts).await;
            // Through call_tool: declined even though a handler would accept.
            let out = c.call_tool("echo", args("x")).await.unwrap();
            assert_eq!(out.text, r#"{"login":{"action":"decline"}}"#, "{over:?}");
            assert!(
                eager.seen.lock().unwrap().is_empty(),
                "the handler was shown {:?}",
                eager.seen.lock().unwrap()
            );

            // Through start_call, as a turn does: the ask is a secret, and any reply declines.
            let CallStep::Input(needed) = c.start_call("echo", args("x")).await.unwrap() else {
                panic!("{over:?}: no input asked");
            };
            assert_eq!(needed.asks.len(), 1);
            let ask = &needed.asks[0];
            assert_eq!(ask.message, "Sign in to continue");
            assert_eq!(
                ask.kind,
                AskKind::Secret {
                    field: "password".to_owned()
                }
            );
            let answer = ask.answer("hunter2").unwrap();
            assert_eq!(answer, mcp::Ask::decline());
            let mut replies = Map::new();
            replies.insert(ask.key.clone(), answer);
            let CallStep::Done(out) = c.resume_call(needed, replies).await.unwrap() else {
                panic!("{over:?}: asked again");
            };
            assert_eq!(out.text, r#"{"login":{"action":"decline"}}"#);
            c.close().await;
            assert_eq!(count(&rec.lines(), "state pw"), 2, "{:?}", rec.lines());
        })
        .await;
    }
}

#[tokio::test]
async fn list_changed_arrives_on_subscriptions_listen() {
    for over in BOTH {
        bounded(async {
            let rec = Record::new();
            let kit = Kit::start(over, Protocol::Modern, &["--list-changed", &rec.arg()]).await;
            let c = kit.connect().await;
            let mut rx = c.list_changed();
            tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|n| *n >= 1))
                .await
                .expect("no list_changed on the listen stream")
                .unwrap();
            assert_eq!(count(&rec.lines(), "subscriptions/listen"), 1);
            assert_eq!(c.call_tool("echo", args("x")).await.unwrap().text, "x");
            c.close().await;
            assert!(wire_faults(&rec.lines()).is_empty(), "{:?}", rec.lines());
        })
        .await;
    }
}

#[tokio::test]
async fn a_listen_flood_is_rate_limited_and_coalesced() {
    const FLOOD: u64 = 2000;
    for over in BOTH {
        bounded(async {
            let kit = Kit::start(
                over,
                Protocol::Modern,
                &[&format!("--listen-flood={FLOOD}")],
            )
            .await;
            let c = kit.connect().await;
            let rx = c.list_changed();
            for _ in 0..400 {
                if c.stats().notifications >= FLOOD {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            let s = c.stats();
            assert_eq!(s.notifications, FLOOD, "{over:?}: {s:?}");
            assert!(s.rate_limited > 0, "{over:?}: {s:?}");
            // Every notification was either let through (one signal each) or dropped by the
            // rate limit; the watch channel coalesces what was let through into one wake.
            let signalled = *rx.borrow();
            assert_eq!(signalled + s.rate_limited, FLOOD, "{over:?}: {s:?}");
            assert!((1..FLOOD / 2).contains(&signalled), "{signalled}");
            // The connection is unharmed.
            assert_eq!(c.call_tool("echo", args("ok")).await.unwrap().text, "ok");
            assert_eq!(s.violations, 0);
            c.close().await;
        })
        .await;
    }
}

#[tokio::test]
async fn a_giant_frame_on_the_listen_stream_is_never_assembled() {
    for over in BOTH {
        bounded(async {
            let cap = 256 * 1024;
            let mut kit = Kit::start(over, Protocol::Modern, &["--listen-giant=20000000"]).await;
            let mut opts = options();
            opts.limits.frame_cap = cap;
            if let mcp::Transport::Http { door, .. } = &mut kit.config.transport {
                // Past the door's body limit, so the frame cap is what stops it.
                door.max_body = 64 * 1024 * 1024;
            }
            let c = kit.connect_with(opts).await;
            for _ in 0..400 {
                if c.closed().is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            assert_eq!(
                c.closed(),
                Some(CloseReason::FrameTooLarge { cap }),
                "{over:?}"
            );
            let e = c.call_tool("echo", args("x")).await.unwrap_err();
            assert_eq!(
                e.close_reason(),
                Some(&CloseReason::FrameTooLarge { cap }),
                "{over:?}: {e:?}"
            );
            assert_eq!(c.stats().violations, 1, "{over:?}");
            c.close().await;
        })
        .await;
    }
}

#[tokio::test]
async fn ttl_hints_are_clamped() {
    let refresh = Duration::from_secs(600);
    for (flag, ttl, next) in [
        ("--ttl-ms=0", Duration::ZERO, mcp::MIN_TTL),
        (
            "--ttl-ms=1e15",
            Duration::from_millis(1_000_000_000_000_000),
            refresh,
        ),
        (
            "--ttl-ms=300000",
            Duration::from_secs(300),
            Duration::from_secs(300),
        ),
    ] {
        bounded(async {
            let kit = Kit::start(Over::Stdio, Protocol::Modern, &[flag]).await;
            let c = kit.connect().await;
            let l = c.list_tools().await.unwrap();
            assert_eq!(l.ttl, Some(ttl), "{flag}");
            assert_eq!(l.next_listing(refresh), next, "{flag}");
            // A refresh setting below the minimum wins over both.
            assert_eq!(
                l.next_listing(Duration::from_secs(30)),
                Duration::from_secs(30),
                "{flag}"
            );
            c.close().await;
        })
        .await;
    }
}

#[tokio::test]
async fn a_mute_discover_is_an_era_refusal_when_pinned_and_a_fallback_otherwise() {
    for over in BOTH {
        bounded(async {
            let t = McpTimeouts {
                init: Duration::from_millis(300),
                ..short()
            };
            let mut kit = Kit::start(over, Protocol::Modern, &["--mute-on-initialize"]).await;
            kit.config.timeouts = t;
            let e = kit.refused().await;
            assert!(
                matches!(&e, Error::EraRefused { reason, .. } if reason.contains("server/discover")),
                "{over:?}: {e:?}"
            );
            kit.config.protocol = Protocol::Auto;
            let e = kit.refused().await;
            assert!(
                matches!(&e, Error::Timeout { method, .. } if method == "initialize"),
                "{over:?}: {e:?}"
            );
        })
        .await;
    }
}
